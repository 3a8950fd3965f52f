//! Small re-implementations of the Python behaviours that leak into observations: `pathlib`
//! normalisation, `str()`/`repr()` of values, `str.strip`, `str.splitlines`, `OSError.__str__`.

use serde_json::Value;

use crate::fs::FsError;

/// `str(pathlib.PurePosixPath(s))`: drops empty and `.` components and a trailing slash, keeps
/// `..`, keeps exactly two leading slashes (POSIX implementation-defined), collapses three or
/// more to one. An empty path becomes `.`.
pub fn norm_path(s: &str) -> String {
    let lead = s.bytes().take_while(|&b| b == b'/').count();
    let prefix = match lead {
        0 => "",
        2 => "//",
        _ => "/",
    };
    let parts: Vec<&str> = s
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() {
        return if prefix.is_empty() {
            ".".to_string()
        } else {
            prefix.to_string()
        };
    }
    let mut out = String::with_capacity(s.len());
    out.push_str(prefix);
    out.push_str(&parts.join("/"));
    out
}

/// `str(Path(base) / rel)` for a relative `rel`.
pub fn join_path(base: &str, rel: &str) -> String {
    if rel.starts_with('/') {
        return norm_path(rel);
    }
    norm_path(&format!("{base}/{rel}"))
}

/// `os.path.dirname` of a normalised absolute path.
pub fn dirname(p: &str) -> String {
    match p.rfind('/') {
        Some(i) => {
            let head = &p[..=i];
            let trimmed = head.trim_end_matches('/');
            if trimmed.is_empty() {
                head.to_string()
            } else {
                trimmed.to_string()
            }
        }
        None => String::new(),
    }
}

/// Last path component.
pub fn basename(p: &str) -> &str {
    match p.rfind('/') {
        Some(i) => &p[i + 1..],
        None => p,
    }
}

/// `PurePath.suffix`.
pub fn suffix(p: &str) -> &str {
    let name = basename(p);
    match name.rfind('.') {
        Some(i) if i > 0 && i < name.len() - 1 => &name[i..],
        _ => "",
    }
}

/// The extension `os.path.splitext` finds (leading dots of the name do not count).
pub fn splitext_ext(p: &str) -> &str {
    let name = basename(p);
    match name.rfind('.') {
        Some(i) if name[..i].bytes().any(|b| b != b'.') => &name[i..],
        _ => "",
    }
}

/// `str.isspace()` for one character.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `str.strip()` without arguments.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// `str.splitlines()` (no keepends): breaks on `\n`, `\r`, `\r\n`, `\v`, `\f`, `\x1c`-`\x1e`,
/// `\x85`, U+2028 and U+2029; a final break does not open an empty last line.
pub fn py_splitlines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let brk = matches!(
            c,
            '\n' | '\r'
                | '\u{0b}'
                | '\u{0c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if brk {
            out.push(&s[start..i]);
            let mut next = i + c.len_utf8();
            if c == '\r' {
                if let Some(&(_, '\n')) = it.peek() {
                    it.next();
                    next += 1;
                }
            }
            start = next;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Rough `str.isprintable()` for one character (used by `repr`).
fn is_printable(c: char) -> bool {
    let u = c as u32;
    if u < 0x20 || (0x7f..=0xa0).contains(&u) || u == 0xad {
        return false;
    }
    if c != ' ' && is_py_space(c) {
        return false;
    }
    !matches!(u,
        0x034f | 0x061c | 0x115f | 0x1160 | 0x17b4 | 0x17b5 | 0x180b..=0x180f | 0x200b..=0x200f | 0x202a..=0x202e
        | 0x2060..=0x206f | 0x3164 | 0xd800..=0xf8ff | 0xfe00..=0xfe0f | 0xfeff | 0xffa0 | 0xfff0..=0xfffb
        | 0xe0000..=0xe0fff | 0xf0000..=0x10ffff)
}

/// `repr(str)`.
pub fn py_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
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
            c if is_printable(c) => out.push(c),
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

/// `repr(float)` (the same digits as `str(float)` in Python 3).
pub fn py_float(f: f64) -> String {
    oh_protocol::python_float_str(f)
}

/// `repr()` of a JSON value as Python holds it after `json.loads`.
pub fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                py_float(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => py_repr_str(s),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", py_repr_str(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `str()` of a JSON value as Python holds it (strings unquoted, containers as `repr`).
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python type name of a JSON value.
pub fn py_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) => {
            if n.is_f64() {
                "float"
            } else {
                "int"
            }
        }
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// `(errno, strerror)` of a POSIX error name, as on Linux.
pub fn errno_of(code: &str) -> (i32, &'static str) {
    match code {
        "EPERM" => (1, "Operation not permitted"),
        "ENOENT" => (2, "No such file or directory"),
        "EIO" => (5, "Input/output error"),
        "EACCES" => (13, "Permission denied"),
        "EBUSY" => (16, "Device or resource busy"),
        "EEXIST" => (17, "File exists"),
        "EXDEV" => (18, "Invalid cross-device link"),
        "ENOTDIR" => (20, "Not a directory"),
        "EISDIR" => (21, "Is a directory"),
        "EINVAL" => (22, "Invalid argument"),
        "ETXTBSY" => (26, "Text file busy"),
        "EFBIG" => (27, "File too large"),
        "ENOSPC" => (28, "No space left on device"),
        "EROFS" => (30, "Read-only file system"),
        "ENAMETOOLONG" => (36, "File name too long"),
        "ENOTEMPTY" => (39, "Directory not empty"),
        "ELOOP" => (40, "Too many levels of symbolic links"),
        "EDQUOT" => (122, "Disk quota exceeded"),
        _ => (5, "Input/output error"),
    }
}

/// `str(OSError)` for an error on `path`: `[Errno 2] No such file or directory: '/p'`.
pub fn os_error_str(e: &FsError, path: &str) -> String {
    let (n, msg) = errno_of(&e.code);
    format!("[Errno {n}] {msg}: {}", py_repr_str(path))
}

/// `list.__str__` of ints.
pub fn py_int_list(v: &[i64]) -> String {
    format!(
        "[{}]",
        v.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Python slicing bounds: `lst[a:]` / `lst[:b]` start or stop index for length `n`.
pub fn py_slice_index(i: i64, n: usize) -> usize {
    let n = n as i64;
    let j = if i < 0 { (i + n).max(0) } else { i.min(n) };
    j as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(norm_path("//a/b"), "//a/b");
        assert_eq!(norm_path("///a"), "/a");
        assert_eq!(norm_path("/a/./b/"), "/a/b");
        assert_eq!(norm_path("a//b/."), "a/b");
        assert_eq!(norm_path(""), ".");
        assert_eq!(norm_path("/"), "/");
        assert_eq!(norm_path("a/../b"), "a/../b");
        assert_eq!(norm_path("//"), "//");
        assert_eq!(dirname("/a/b"), "/a");
        assert_eq!(dirname("/a"), "/");
        assert_eq!(suffix("/x/.pdf"), "");
        assert_eq!(suffix("/x/a.PDF"), ".PDF");
        assert_eq!(splitext_ext("/x/.png"), "");
        assert_eq!(splitext_ext("/x/a.b.png"), ".png");
    }

    #[test]
    fn splitlines() {
        assert_eq!(py_splitlines("a\n"), vec!["a"]);
        assert!(py_splitlines("").is_empty());
        assert_eq!(py_splitlines("a\n\nb"), vec!["a", "", "b"]);
        assert_eq!(py_splitlines("a\x0cb\r\nc"), vec!["a", "b", "c"]);
    }

    #[test]
    fn reprs() {
        assert_eq!(py_repr_str("a'b"), "\"a'b\"");
        assert_eq!(py_repr_str("a\nb"), "'a\\nb'");
        assert_eq!(
            py_repr(&serde_json::json!([1, "2", 1.0, true, null])),
            "[1, '2', 1.0, True, None]"
        );
    }
}
