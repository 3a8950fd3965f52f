//! Python semantics that leak into observations, in one place: whitespace (`str.isspace`,
//! `strip`, `lstrip`, `rstrip`), `str.splitlines`, and `repr()`/`str()` of strings, floats and
//! JSON values. Each function is named after the Python it reproduces.

use serde_json::Value;

/// `str.isspace()` for one character (the same set in Python 3.9–3.13): Rust's
/// `char::is_whitespace` plus the four information separators U+001C..U+001F.
#[inline]
pub fn isspace(c: char) -> bool {
    matches!(c, '\u{1c}'..='\u{1f}') || c.is_whitespace()
}

/// `s.strip()` (no argument).
pub fn strip(s: &str) -> &str {
    s.trim_matches(isspace)
}

/// `s.lstrip()` (no argument).
pub fn lstrip(s: &str) -> &str {
    s.trim_start_matches(isspace)
}

/// `s.rstrip()` (no argument).
pub fn rstrip(s: &str) -> &str {
    s.trim_end_matches(isspace)
}

/// The characters `str.splitlines` breaks on (`\r\n` counts as one break).
#[inline]
pub fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// `str.splitlines()` (no keepends) as an iterator; a final break does not open an empty last line.
pub fn splitlines(s: &str) -> SplitLines<'_> {
    SplitLines { s, pos: 0 }
}

/// `len(s.splitlines())` without collecting.
pub fn splitlines_count(s: &str) -> usize {
    splitlines(s).count()
}

/// Iterator of [`splitlines`].
#[derive(Clone, Debug)]
pub struct SplitLines<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Iterator for SplitLines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = &self.s[self.pos..];
        if rest.is_empty() {
            return None;
        }
        let start = self.pos;
        match rest.char_indices().find(|&(_, c)| is_line_break(c)) {
            Some((i, c)) => {
                let mut next = start + i + c.len_utf8();
                if c == '\r' && self.s.as_bytes().get(next) == Some(&b'\n') {
                    next += 1;
                }
                self.pos = next;
                Some(&self.s[start..start + i])
            }
            None => {
                self.pos = self.s.len();
                Some(rest)
            }
        }
    }
}

/// Rough `str.isprintable()` for one character (what `repr` escapes).
fn isprintable(c: char) -> bool {
    let u = c as u32;
    if u < 0x20 || (0x7f..=0xa0).contains(&u) || u == 0xad {
        return false;
    }
    if c != ' ' && isspace(c) {
        return false;
    }
    !matches!(u,
        0x034f | 0x061c | 0x115f | 0x1160 | 0x17b4 | 0x17b5 | 0x180b..=0x180f | 0x200b..=0x200f | 0x202a..=0x202e
        | 0x2060..=0x206f | 0x3164 | 0xd800..=0xf8ff | 0xfe00..=0xfe0f | 0xfeff | 0xffa0 | 0xfff0..=0xfffb
        | 0xe0000..=0xe0fff | 0xf0000..=0x10ffff)
}

/// `repr(str)`.
pub fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if isprintable(c) => out.push(c),
            c => {
                let u = c as u32;
                if u < 0x100 {
                    out.push_str(&format!("\\x{u:02x}"));
                } else if u < 0x10000 {
                    out.push_str(&format!("\\u{u:04x}"));
                } else {
                    out.push_str(&format!("\\U{u:08x}"));
                }
            }
        }
    }
    out.push(quote);
    out
}

/// `repr(float)`, which is also `str(float)` in Python 3 (`120.0`, `2.5`, `1e-05`, `1e+16`).
/// Rust's shortest round-trip digits agree with Python's; the notation differs: Python adds `.0`
/// to integral values and switches to exponent form outside [1e-4, 1e16).
pub fn repr_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let abs = v.abs();
    if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
        let s = format!("{v:e}");
        let (mant, exp) = s.split_once('e').expect("exponent form");
        let exp: i32 = exp.parse().expect("exponent");
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    let s = format!("{v}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

/// `repr()` of a JSON value as Python holds it after `json.loads`.
pub fn repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                repr_float(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => repr_str(s),
        Value::Array(a) => format!("[{}]", a.iter().map(repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter().map(|(k, v)| format!("{}: {}", repr_str(k), repr(v))).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// `str()` of a JSON value as Python holds it (strings unquoted, everything else as `repr`).
pub fn str_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => repr(other),
    }
}

/// `type(v).__name__` of a JSON value as Python holds it.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// `str(list_of_ints)`.
pub fn int_list(v: &[i64]) -> String {
    format!("[{}]", v.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "))
}

/// Python slicing bounds: the start or stop index `lst[i:]` / `lst[:i]` uses for length `n`.
pub fn slice_index(i: i64, n: usize) -> usize {
    let n = n as i64;
    let j = if i < 0 { (i + n).max(0) } else { i.min(n) };
    j as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_is_pythons() {
        for c in [' ', '\t', '\n', '\x0b', '\x0c', '\r', '\x1c', '\x1f', '\u{85}', '\u{a0}', '\u{2028}', '\u{3000}'] {
            assert!(isspace(c), "{c:?}");
        }
        for c in ['a', '\0', '\u{200b}', '\u{feff}'] {
            assert!(!isspace(c), "{c:?}");
        }
        assert_eq!(strip("\x1c a \u{85}"), "a");
        assert_eq!(lstrip("  a "), "a ");
        assert_eq!(rstrip("  a \x1f"), "  a");
    }

    #[test]
    fn splitlines_is_pythons() {
        let v = |s| splitlines(s).collect::<Vec<_>>();
        assert_eq!(v("a\n"), vec!["a"]);
        assert!(v("").is_empty());
        assert_eq!(v("a\n\nb"), vec!["a", "", "b"]);
        assert_eq!(v("a\x0cb\r\nc"), vec!["a", "b", "c"]);
        assert_eq!(v("a\r\rb\u{2029}"), vec!["a", "", "b"]);
        assert_eq!(splitlines_count("x\r\n\n"), 2);
        assert_eq!(splitlines_count("\n"), 1);
    }

    #[test]
    fn reprs() {
        assert_eq!(repr_str("a'b"), "\"a'b\"");
        assert_eq!(repr_str("a\nb\x01\u{200b}"), "'a\\nb\\x01\\u200b'");
        assert_eq!(
            repr(&serde_json::json!([1, "2", 1.0, true, null, {"k": 2.5}])),
            "[1, '2', 1.0, True, None, {'k': 2.5}]"
        );
        assert_eq!(str_of(&serde_json::json!("s")), "s");
        assert_eq!(type_name(&serde_json::json!(1.5)), "float");
        assert_eq!(int_list(&[1, -2]), "[1, -2]");
        assert_eq!((slice_index(-2, 5), slice_index(9, 5), slice_index(-9, 5)), (3, 5, 0));
    }

    #[test]
    fn floats_print_like_python() {
        assert_eq!(repr_float(120.0), "120.0");
        assert_eq!(repr_float(2.5), "2.5");
        assert_eq!(repr_float(1.0), "1.0");
        assert_eq!(repr_float(0.1), "0.1");
        assert_eq!(repr_float(0.00001), "1e-05");
        assert_eq!(repr_float(1e16), "1e+16");
        assert_eq!(repr_float(-3.0), "-3.0");
        assert_eq!(repr_float(f64::NAN), "nan");
    }
}
