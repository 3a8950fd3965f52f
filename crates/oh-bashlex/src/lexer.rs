//! Character-level tokenizer modelled on bashlex 0.18's `tokenizer.py` (itself a port of bash's
//! `parse.y` lexer). Positions are indices into the input in Unicode scalar values, like Python
//! string indices.

#![allow(clippy::if_same_then_else)]

use crate::{Err, ErrKind, R};

// The tokenizer in parts, each an `impl Tokenizer` block: words and reserved words, the
// here-documents, matched pairs (quotes, brackets, `${...}`), command substitutions (`$(...)`).
mod comsub;
mod heredoc;
mod matched_pair;
mod word;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Tt {
    If,
    Then,
    Else,
    Elif,
    Fi,
    Case,
    Esac,
    For,
    Select,
    While,
    Until,
    Do,
    Done,
    Function,
    Coproc,
    CondStart,
    CondEnd,
    In,
    Bang,
    Time,
    TimeOpt,
    TimeIgn,
    Word,
    AssignmentWord,
    RedirWord,
    Number,
    AndAnd,
    OrOr,
    GreaterGreater,
    LessLess,
    LessAnd,
    LessLessLess,
    GreaterAnd,
    SemiSemi,
    SemiAnd,
    SemiSemiAnd,
    LessLessMinus,
    AndGreater,
    AndGreaterGreater,
    LessGreater,
    GreaterBar,
    BarAnd,
    LeftCurly,
    RightCurly,
    Eof,
    LeftParen,
    RightParen,
    Bar,
    Semicolon,
    Dash,
    Newline,
    Less,
    Greater,
    Ampersand,
}

// word flags
pub(crate) const W_HASDOLLAR: u32 = 1;
pub(crate) const W_QUOTED: u32 = 2;
pub(crate) const W_ASSIGNMENT: u32 = 4;
pub(crate) const W_NOSPLIT: u32 = 8;
pub(crate) const W_NOGLOB: u32 = 16;

// parser-state flags
pub(crate) const P_CASEPAT: u32 = 1;
pub(crate) const P_ALLOWOPNBRC: u32 = 2;
pub(crate) const P_SUBSHELL: u32 = 4;
pub(crate) const P_CMDSUBST: u32 = 8;
pub(crate) const P_CASESTMT: u32 = 16;
pub(crate) const P_CONDCMD: u32 = 32;
pub(crate) const P_CONDEXPR: u32 = 64;
pub(crate) const P_COMPASSIGN: u32 = 128;
pub(crate) const P_ASSIGNOK: u32 = 256;
pub(crate) const P_EOFTOKEN: u32 = 512;

#[derive(Clone, Debug, Default)]
pub(crate) struct Tok {
    pub tt: Option<Tt>,
    pub value: Option<String>,
    pub pos: (usize, usize),
    pub flags: u32,
}

impl Tok {
    fn empty() -> Tok {
        Tok::default()
    }
    fn truthy(&self) -> bool {
        !(self.tt.is_none() && self.value.is_none())
    }
    pub fn is(&self, t: Tt) -> bool {
        self.tt == Some(t)
    }
    pub fn val(&self) -> &str {
        self.value.as_deref().unwrap_or("")
    }
}

fn op_value(t: Tt) -> &'static str {
    use Tt::*;
    match t {
        AndAnd => "&&",
        OrOr => "||",
        GreaterGreater => ">>",
        LessLess => "<<",
        LessAnd => "<&",
        LessLessLess => "<<<",
        GreaterAnd => ">&",
        SemiSemi => ";;",
        SemiAnd => ";&",
        SemiSemiAnd => ";;&",
        LessLessMinus => "<<-",
        AndGreater => "&>",
        AndGreaterGreater => "&>>",
        LessGreater => "<>",
        GreaterBar => ">|",
        BarAnd => "|&",
        LeftParen => "(",
        RightParen => ")",
        Bar => "|",
        Semicolon => ";",
        Dash => "-",
        Newline => "\n",
        Less => "<",
        Greater => ">",
        Ampersand => "&",
        _ => "",
    }
}

fn char_tt(c: char) -> Tt {
    match c {
        '(' => Tt::LeftParen,
        ')' => Tt::RightParen,
        '|' => Tt::Bar,
        ';' => Tt::Semicolon,
        '-' => Tt::Dash,
        '\n' => Tt::Newline,
        '<' => Tt::Less,
        '>' => Tt::Greater,
        '&' => Tt::Ampersand,
        _ => unreachable!(),
    }
}

fn reserved_lookup(w: &str) -> Option<Tt> {
    use Tt::*;
    Some(match w {
        "if" => If,
        "then" => Then,
        "else" => Else,
        "elif" => Elif,
        "fi" => Fi,
        "case" => Case,
        "esac" => Esac,
        "for" => For,
        "select" => Select,
        "while" => While,
        "until" => Until,
        "do" => Do,
        "done" => Done,
        "in" => In,
        "function" => Function,
        "time" => Time,
        "{" => LeftCurly,
        "}" => RightCurly,
        "!" => Bang,
        "[[" => CondStart,
        "]]" => CondEnd,
        "coproc" => Coproc,
        _ => return None,
    })
}

fn in_reserved_set(t: &Tok) -> bool {
    use Tt::*;
    if let Some(tt) = t.tt {
        if matches!(
            tt,
            AndAnd
                | Bang
                | BarAnd
                | Do
                | Done
                | Elif
                | Else
                | Esac
                | Fi
                | If
                | OrOr
                | SemiSemi
                | SemiAnd
                | SemiSemiAnd
                | Then
                | Time
                | TimeOpt
                | TimeIgn
                | Coproc
                | Until
                | While
        ) {
            return true;
        }
    }
    if t.tt == Some(Number) {
        return false; // value is an int in the reference
    }
    matches!(t.value.as_deref(), Some("\n" | ";" | "(" | ")" | "|" | "&" | "{" | "}"))
}

pub(crate) fn shellblank(c: char) -> bool {
    c == ' ' || c == '\t'
}
pub(crate) fn shellmeta(c: char) -> bool {
    "()<>;&|".contains(c)
}
pub(crate) fn shellquote(c: char) -> bool {
    "\"`'".contains(c)
}
fn shellexp(c: char) -> bool {
    "$<>".contains(c)
}
pub(crate) fn shellbreak(c: char) -> bool {
    "()<>;&| \t\n".contains(c)
}
fn dquote_char(c: char) -> bool {
    "\\`$\"\n".contains(c)
}

/// Python's `str.isdigit` for one character.
pub(crate) fn py_isdigit(c: char) -> bool {
    crate::pyunicode::isdigit(c)
}

pub(crate) struct Tokenizer {
    pub s: Vec<char>,
    pub idx: usize,
    pub two_ago: Tok,
    pub before_that: Tok,
    pub last_read: Tok,
    pub current: Tok,
    eol_lookahead: Option<char>,
    pub pstate: u32,
    open_brace_count: usize,
    esacs_needed: usize,
    dstack: Vec<char>,
    positions: Vec<usize>,
    /// Pending here-documents: (redirect node id, strip leading tabs).
    pub redirstack: Vec<(usize, bool)>,
    /// Here-documents read: (redirect node id, start, end); the parser links them.
    pub heredocs_done: Vec<(usize, usize, usize)>,
    /// Delimiter word per pending redirect node (raw token text).
    pub heredoc_words: Vec<(usize, String)>,
    pub depth: usize,
}

impl Tokenizer {
    pub fn new(src: &[char], pstate: u32, prev: Option<(Tok, Tok, Tok)>, depth: usize) -> Tokenizer {
        let mut s = src.to_vec();
        if !s.is_empty() && *s.last().unwrap() != '\n' {
            s.push('\n');
        }
        let (two_ago, before_that, last_read) = prev.unwrap_or_default();
        Tokenizer {
            s,
            idx: 0,
            two_ago,
            before_that,
            last_read,
            current: Tok::empty(),
            eol_lookahead: None,
            pstate,
            open_brace_count: 0,
            esacs_needed: 0,
            dstack: Vec::new(),
            positions: Vec::new(),
            redirstack: Vec::new(),
            heredocs_done: Vec::new(),
            heredoc_words: Vec::new(),
            depth,
        }
    }

    fn mk(&mut self, tt: Tt, value: Option<String>, flags: u32) -> R<Tok> {
        let p2 = self.positions.pop().ok_or_else(|| Err::new(ErrKind::Assertion))?;
        let p1 = self.positions.pop().ok_or_else(|| Err::new(ErrKind::Assertion))?;
        if p1 >= p2 {
            return Err(Err::new(ErrKind::Assertion));
        }
        Ok(Tok { tt: Some(tt), value, pos: (p1, p2), flags })
    }

    pub fn token(&mut self) -> R<Tok> {
        self.two_ago = std::mem::take(&mut self.before_that);
        self.before_that = std::mem::take(&mut self.last_read);
        self.last_read = std::mem::take(&mut self.current);
        let t = match self.readtoken()? {
            RT::Tok(t) => t,
            RT::Op(tt) => {
                self.recordpos(0);
                self.mk(tt, Some(op_value(tt).to_string()), 0)?
            }
        };
        self.current = t;
        self.pstate &= !P_EOFTOKEN;
        Ok(self.current.clone())
    }

    fn readtoken(&mut self) -> R<RT> {
        let mut ch = self.getc(true)?;
        while matches!(ch, Some(c) if shellblank(c)) {
            ch = self.getc(true)?;
        }
        let mut c = match ch {
            None => return Ok(RT::Tok(Tok { tt: Some(Tt::Eof), value: None, pos: (0, 0), flags: 0 })),
            Some(c) => c,
        };
        if c == '#' {
            self.discard_until('\n')?;
            self.getc(false)?;
            c = '\n';
        }
        self.recordpos(1);
        if c == '\n' {
            self.gather_heredocs()?;
            self.pstate &= !P_ASSIGNOK;
            return Ok(RT::Op(Tt::Newline));
        }
        if shellmeta(c) {
            self.pstate &= !P_ASSIGNOK;
            let peek = self.getc(true)?;
            if peek == Some(c) {
                match c {
                    '<' => {
                        let p2 = self.getc(true)?;
                        if p2 == Some('-') {
                            return Ok(RT::Op(Tt::LessLessMinus));
                        } else if p2 == Some('<') {
                            return Ok(RT::Op(Tt::LessLessLess));
                        } else {
                            self.ungetc(p2);
                            return Ok(RT::Op(Tt::LessLess));
                        }
                    }
                    '>' => return Ok(RT::Op(Tt::GreaterGreater)),
                    ';' => {
                        self.pstate |= P_CASEPAT;
                        let p2 = self.getc(true)?;
                        if p2 == Some('&') {
                            return Ok(RT::Op(Tt::SemiSemiAnd));
                        }
                        self.ungetc(p2);
                        return Ok(RT::Op(Tt::SemiSemi));
                    }
                    '&' => return Ok(RT::Op(Tt::AndAnd)),
                    '|' => return Ok(RT::Op(Tt::OrOr)),
                    _ => {}
                }
            } else if let Some(p) = peek {
                match (c, p) {
                    ('<', '&') => return Ok(RT::Op(Tt::LessAnd)),
                    ('>', '&') => return Ok(RT::Op(Tt::GreaterAnd)),
                    ('<', '>') => return Ok(RT::Op(Tt::LessGreater)),
                    ('>', '|') => return Ok(RT::Op(Tt::GreaterBar)),
                    ('&', '>') => {
                        let p2 = self.getc(true)?;
                        if p2 == Some('>') {
                            return Ok(RT::Op(Tt::AndGreaterGreater));
                        }
                        self.ungetc(p2);
                        return Ok(RT::Op(Tt::AndGreater));
                    }
                    ('|', '&') => return Ok(RT::Op(Tt::BarAnd)),
                    (';', '&') => return Ok(RT::Op(Tt::SemiAnd)),
                    _ => {}
                }
            }
            self.ungetc(peek);
            if c == ')' && self.last_read.value.as_deref() == Some("(") && self.before_that.is(Tt::Word) {
                self.pstate |= P_ALLOWOPNBRC;
            }
            if c == '(' && self.pstate & P_CASEPAT == 0 {
                self.pstate |= P_SUBSHELL;
            } else if self.pstate & P_CASEPAT != 0 && c == ')' {
                self.pstate &= !P_CASEPAT;
            } else if self.pstate & P_SUBSHELL != 0 && c == ')' {
                self.pstate &= !P_SUBSHELL;
            }
            if !"<>".contains(c) || peek != Some('(') {
                return Ok(RT::Op(char_tt(c)));
            }
        }
        if c == '-' && (self.last_read.is(Tt::LessAnd) || self.last_read.is(Tt::GreaterAnd)) {
            return Ok(RT::Op(Tt::Dash));
        }
        Ok(RT::Tok(self.readtokenword(c)?))
    }

    // ---- character input ----

    pub fn getc(&mut self, remove_quoted_newline: bool) -> R<Option<char>> {
        if let Some(c) = self.eol_lookahead.take() {
            return Ok(Some(c));
        }
        loop {
            let c = if self.idx < self.s.len() {
                let c = self.s[self.idx];
                self.idx += 1;
                Some(c)
            } else {
                None
            };
            if c == Some('\\') && remove_quoted_newline {
                match self.s.get(self.idx) {
                    None => return Err(Err::new(ErrKind::Index)),
                    Some('\n') => {
                        self.idx += 1;
                        continue;
                    }
                    _ => {}
                }
            }
            return Ok(c);
        }
    }

    pub fn ungetc(&mut self, c: Option<char>) {
        if !self.s.is_empty() && self.idx > 0 && self.idx <= self.s.len() {
            self.idx -= 1;
        } else {
            self.eol_lookahead = c;
        }
    }

    fn discard_until(&mut self, ch: char) -> R<()> {
        let mut c = self.getc(false)?;
        while c.is_some() && c != Some(ch) {
            c = self.getc(false)?;
        }
        if c.is_some() {
            self.ungetc(c);
        }
        Ok(())
    }

    fn recordpos(&mut self, rel: usize) {
        self.positions.push(self.idx - rel);
    }
}

enum RT {
    Tok(Tok),
    Op(Tt),
}
