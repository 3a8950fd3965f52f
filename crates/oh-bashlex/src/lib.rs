//! Multi-command detection and `\;` escaping compatible with OpenHands' `split_bash_commands`
//! and `escape_bash_special_chars` (`openhands/runtime/utils/bash.py`, openhands-ai 1.6.0),
//! which are thin wrappers around **bashlex 0.18**.
//!
//! # Approach: a model of bashlex, not a real bash parser
//!
//! The observable behaviour is bashlex's, bugs included, not bash's:
//!
//! * which inputs *fail* to parse (an unparsable command counts as one part, and escaping
//!   returns the input unchanged): arrays `a=(1 2 3)`, `[[ … ]]`, `for ((…))`, `$((…))`,
//!   `$[…]`, `case`, `select`, `time`, `coproc` and quoted here-doc delimiters (`<<'EOF'`)
//!   all fail in bashlex, while bash accepts them;
//! * the exact node spans, which decide where a multi-line command is cut, and the word spans
//!   that escaping walks (only words reachable through `parts`: the contents of `{ }`, `( )`,
//!   `if`, `for` and `while` are not visited, redirect targets are not visited, text between
//!   words is);
//! * quirks such as: a top-level parse stops at the first unquoted newline and restarts on the
//!   rest; leading newlines are dropped; a here-document is read when its *reduction* happens,
//!   so inside compound commands the body is first tokenized as commands; `$(a && b)` fails
//!   but `$(a; b)` parses; `'…$(…)…'` in the middle of a word is still expanded.
//!
//! A real Rust parser (tree-sitter-bash, brush-parser) parses bash, which is a different
//! language from the one bashlex accepts, and it reports different spans (e.g. for heredocs
//! and comments); wrapping one in "compatibility rules" would mean re-deriving all of the above
//! as exceptions, case by case, with no guarantee of completeness. Instead this crate is a
//! hand-written model of bashlex's pipeline, written from its behaviour and structure:
//!
//! * [`lexer`]: bash's context-sensitive tokenizer as bashlex ports it (reserved words depend
//!   on the previous tokens, matched-pair scanning of quotes, `$( )`, `${ }`, comments and
//!   here-docs inside command substitutions, here-document reading at newlines).
//! * [`parser`]: a recursive-descent parser that accepts the same language as bashlex's LALR
//!   grammar, including its command-substitution hack (a `$( … )` ends at `)` only after a
//!   single pipeline or a `;`-chain), its `NotImplementedError` productions, the assertion in
//!   `while`/`until`, and the timing of reductions relative to token reads (which matters for
//!   here-documents). Word expansion recursively parses `$( )`, `` ` ` `` and `<( )`.
//!
//! Positions are counted in Unicode scalar values, like Python string indices.
//!
//! # Exceptions
//!
//! bashlex can also raise exceptions OpenHands does not catch (e.g. `AssertionError` for
//! `while true\ndo …`, or `AttributeError` from escaping a comment-only line). The reference
//! then crashes the action. [`try_split_bash_commands`] and [`try_escape_bash_special_chars`]
//! report those as [`ReferenceException`]; the infallible functions fall back to the
//! "unparsable" behaviour instead (one part / input unchanged).

mod lexer;
mod parser;
mod pyunicode;

use parser::{heredoc_end, shift, Arena, Kind, Parser};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ErrKind {
    /// bashlex.errors.ParsingError
    Parsing,
    NotImplemented,
    Type,
    Attribute,
    Assertion,
    Index,
    /// anything else (e.g. recursion limits)
    Other,
}

#[derive(Debug)]
pub(crate) struct Err {
    pub kind: ErrKind,
}

impl Err {
    pub fn new(kind: ErrKind) -> Err {
        Err { kind }
    }
}

pub(crate) type R<T> = Result<T, Err>;

/// Nesting budget (compound commands, quotes and substitutions together). Deeper input is
/// reported as Python's `RecursionError`; the reference's own limit depends on its stack use
/// (it fails somewhere between 100 and 150 nested `$(`, and between 400 and 1000 nested
/// `(`), so inputs nested deeper than this are a documented, deliberate deviation.
pub(crate) const MAX_DEPTH: usize = 100;

/// An exception the Python reference lets escape (so the reference action fails).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceException {
    /// Python exception class name, e.g. `AttributeError`.
    pub exception: &'static str,
}

fn exception_name(k: ErrKind) -> &'static str {
    match k {
        ErrKind::Parsing => "ParsingError",
        ErrKind::NotImplemented => "NotImplementedError",
        ErrKind::Type => "TypeError",
        ErrKind::Attribute => "AttributeError",
        ErrKind::Assertion => "AssertionError",
        ErrKind::Index => "IndexError",
        ErrKind::Other => "RecursionError",
    }
}

/// Python `str.isspace` for one character.
fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn is_blank(s: &[char]) -> bool {
    s.iter().all(|&c| py_isspace(c))
}

fn rstrip(s: &[char]) -> &[char] {
    let mut e = s.len();
    while e > 0 && py_isspace(s[e - 1]) {
        e -= 1;
    }
    &s[..e]
}

/// Python slice `s[a:b]` (clamped, empty when `a >= b`).
fn slice(s: &[char], a: usize, b: usize) -> &[char] {
    let b = b.min(s.len());
    if a >= b {
        &[]
    } else {
        &s[a..b]
    }
}

/// `bashlex.parse(s)`: the top-level nodes (ids into the arena), positions in `s`.
fn bashlex_parse(s: &[char], arena: &mut Arena) -> R<Vec<usize>> {
    let first = Parser::new(arena, s, 0, None, 0).parse_unit()?;
    let first = first.ok_or_else(|| Err::new(ErrKind::Attribute))?;
    let mut nodes = vec![first];
    let end_of = |arena: &Arena, id: usize| {
        let e = arena[id].pos.1;
        match heredoc_end(arena, id) {
            Some(h) if h > e => h,
            _ => e,
        }
    };
    let mut index = end_of(arena, first) + 1;
    while index < s.len() {
        let part = Parser::new(arena, &s[index..], 0, None, 0).parse_unit()?;
        let part = match part {
            None => break,
            Some(p) => p,
        };
        shift(arena, part, index);
        nodes.push(part);
        index = end_of(arena, part) + 1;
    }
    Ok(nodes)
}

/// Like [`split_bash_commands`], but reports the exceptions the reference does not catch.
pub fn try_split_bash_commands(command: &str) -> Result<Vec<String>, ReferenceException> {
    let s: Vec<char> = command.chars().collect();
    if is_blank(&s) {
        return Ok(vec![String::new()]);
    }
    let mut arena = Arena::new();
    let nodes = match bashlex_parse(&s, &mut arena) {
        Ok(n) => n,
        Err(e) => {
            return match e.kind {
                ErrKind::Parsing | ErrKind::NotImplemented | ErrKind::Type | ErrKind::Attribute => {
                    Ok(vec![command.to_string()])
                }
                k => Err(ReferenceException {
                    exception: exception_name(k),
                }),
            }
        }
    };
    let mut result: Vec<String> = Vec::new();
    let mut last_end = 0usize;
    for id in nodes {
        let (start, end) = arena[id].pos;
        if start > last_end {
            let between = slice(&s, last_end, start);
            if let Some(last) = result.last_mut() {
                last.extend(rstrip(between).iter());
            } else if !is_blank(between) {
                result.push(rstrip(between).iter().collect());
            }
        }
        result.push(rstrip(slice(&s, start, end)).iter().collect());
        last_end = end;
    }
    let remaining: String = rstrip(slice(&s, last_end, s.len())).iter().collect();
    if last_end < s.len() {
        if let Some(last) = result.last_mut() {
            last.push_str(&remaining);
        } else if !remaining.is_empty() {
            result.push(remaining);
        }
    }
    Ok(result)
}

/// Split a command line into top-level commands; more than one part means the command is
/// rejected. Mirrors OpenHands' `split_bash_commands` (bashlex 0.18), including the rule that
/// an unparsable command is one part.
pub fn split_bash_commands(command: &str) -> Vec<String> {
    try_split_bash_commands(command).unwrap_or_else(|_| vec![command.to_string()])
}

/// `re.sub(r'\\([;&|><])', r'\\\\\1', text)`
fn escape_text(out: &mut String, text: &[char]) {
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c == '\\' && i + 1 < text.len() && ";&|><".contains(text[i + 1]) {
            out.push('\\');
            out.push('\\');
            out.push(text[i + 1]);
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
}

struct Escaper<'a> {
    s: &'a [char],
    arena: &'a Arena,
    out: String,
    last_pos: usize,
}

impl Escaper<'_> {
    fn visit(&mut self, id: usize) {
        let n = &self.arena[id];
        if n.kind == Kind::Redirect {
            if let Some(h) = n.heredoc {
                let hp = self.arena[h].pos;
                self.out
                    .extend(slice(self.s, self.last_pos, n.pos.0).iter());
                self.out.extend(slice(self.s, n.pos.0, hp.0).iter());
                self.out.extend(slice(self.s, hp.0, hp.1).iter());
                self.last_pos = n.pos.1;
                return;
            }
        }
        if n.kind == Kind::Word {
            let between = slice(self.s, self.last_pos, n.pos.0);
            escape_text(&mut self.out, between);
            let w = slice(self.s, n.pos.0, n.pos.1);
            let starts = |p: &[char]| w.len() >= p.len() && &w[..p.len()] == p;
            let ends = |p: &[char]| w.len() >= p.len() && &w[w.len() - p.len()..] == p;
            let keep = (starts(&['"']) && ends(&['"']))
                || (starts(&['\'']) && ends(&['\'']))
                || (starts(&['$', '(']) && ends(&[')']))
                || (starts(&['`']) && ends(&['`']));
            if keep {
                self.out.extend(w.iter());
            } else {
                escape_text(&mut self.out, w);
            }
            self.last_pos = n.pos.1;
            return;
        }
        if n.has_parts() {
            for &p in &n.parts {
                self.visit(p);
            }
        }
    }
}

/// Like [`escape_bash_special_chars`], but reports the exceptions the reference does not catch.
pub fn try_escape_bash_special_chars(command: &str) -> Result<String, ReferenceException> {
    let s: Vec<char> = command.chars().collect();
    if is_blank(&s) {
        return Ok(String::new());
    }
    let mut arena = Arena::new();
    let nodes = match bashlex_parse(&s, &mut arena) {
        Ok(n) => n,
        Err(e) => {
            return match e.kind {
                ErrKind::Parsing | ErrKind::NotImplemented | ErrKind::Type => {
                    Ok(command.to_string())
                }
                k => Err(ReferenceException {
                    exception: exception_name(k),
                }),
            }
        }
    };
    let mut e = Escaper {
        s: &s,
        arena: &arena,
        out: String::new(),
        last_pos: 0,
    };
    for id in nodes {
        let start = arena[id].pos.0;
        let between = slice(&s, e.last_pos, start);
        let mut tmp = String::new();
        escape_text(&mut tmp, between);
        e.out.push_str(&tmp);
        e.last_pos = start;
        e.visit(id);
    }
    let rest = slice(&s, e.last_pos, s.len());
    e.out.extend(rest.iter());
    Ok(e.out)
}

/// Double a backslash before `; & | > <` in unquoted words and between words (what tmux
/// `send-keys` later undoes). Mirrors OpenHands' `escape_bash_special_chars` (bashlex 0.18):
/// blank input gives `""`, unparsable input is returned unchanged.
pub fn escape_bash_special_chars(command: &str) -> String {
    if is_blank(&command.chars().collect::<Vec<_>>()) {
        return String::new();
    }
    try_escape_bash_special_chars(command).unwrap_or_else(|_| command.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(s: &str) -> Vec<String> {
        split_bash_commands(s)
    }

    #[test]
    fn spec_examples_accepted() {
        for s in [
            "echo a; echo b",
            "ls\n\n",
            "for i in 1 2; do\n echo $i\ndone",
            "echo \"a\nb\"",
            "echo a \\\n  b",
            "a=(1 2 3)\necho ${a[0]}",
        ] {
            assert_eq!(sp(s).len(), 1, "{s:?}");
        }
    }

    #[test]
    fn spec_examples_rejected() {
        assert_eq!(sp("echo a\necho b"), ["echo a", "echo b"]);
        assert_eq!(
            sp("echo a && echo b\necho c"),
            ["echo a && echo b", "echo c"]
        );
        assert_eq!(
            sp("cat <<EOF\nx\nEOF\necho after"),
            ["cat <<EOF\nx\nEOF", "echo after"]
        );
        assert_eq!(
            sp("echo a # comment\necho b"),
            ["echo a # comment", "echo b"]
        );
        assert_eq!(
            sp("if true; then echo y; fi\nls"),
            ["if true; then echo y; fi", "ls"]
        );
        assert_eq!(
            sp("git commit -m 'x'\ngit push"),
            ["git commit -m 'x'", "git push"]
        );
    }

    #[test]
    fn blank_and_failures() {
        assert_eq!(sp(""), [""]);
        assert_eq!(sp("  \n"), [""]);
        assert_eq!(sp("echo $((1+2))\nls"), ["echo $((1+2))\nls"]);
        assert_eq!(sp("[[ -f x ]]\nls"), ["[[ -f x ]]\nls"]);
        assert_eq!(escape_bash_special_chars(""), "");
        assert_eq!(
            escape_bash_special_chars("a=(1 2)\nfind . -exec x \\;"),
            "a=(1 2)\nfind . -exec x \\;"
        );
    }

    #[test]
    fn escape_find_exec() {
        assert_eq!(
            escape_bash_special_chars("find /w -maxdepth 0 -exec echo {} \\;"),
            "find /w -maxdepth 0 -exec echo {} \\\\;"
        );
        assert_eq!(escape_bash_special_chars("echo '\\;'"), "echo '\\;'");
        assert_eq!(
            escape_bash_special_chars("cat <<EOF\nx\\;\nEOF"),
            "cat <<EOF\nx\\;\nEOF"
        );
    }

    #[test]
    fn reference_exceptions() {
        assert_eq!(
            try_escape_bash_special_chars("# only a comment")
                .unwrap_err()
                .exception,
            "AttributeError"
        );
        assert_eq!(sp("# only a comment"), ["# only a comment"]);
        assert_eq!(
            try_split_bash_commands("while true\ndo echo; done")
                .unwrap_err()
                .exception,
            "AssertionError"
        );
    }
}
