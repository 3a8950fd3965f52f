//! Character-level tokenizer modelled on bashlex 0.18's `tokenizer.py` (itself a port of bash's
//! `parse.y` lexer). Positions are indices into the input in Unicode scalar values, like Python
//! string indices.

#![allow(clippy::if_same_then_else)]

use crate::{Err, ErrKind, R};

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

    fn readtokenword(&mut self, c0: char) -> R<Tok> {
        let mut c: Option<char> = Some(c0);
        let mut all_digit = py_isdigit(c0);
        let mut dollar_present = false;
        let mut quoted = false;
        let mut pass_next = false;
        let mut word: Vec<char> = Vec::new();

        loop {
            let ch = match c {
                None => break,
                Some(ch) => ch,
            };
            let mut escaped = false; // handleescapedchar
            if pass_next {
                pass_next = false;
                escaped = true;
            } else {
                let cd = self.dstack.last().copied();
                let mut gotonext = false;
                if ch == '\\' {
                    let peek = self.getc(false)?;
                    if peek == Some('\n') {
                        gotonext = true;
                    } else {
                        self.ungetc(peek);
                        if cd.is_none()
                            || cd == Some('`')
                            || (cd == Some('"') && matches!(peek, Some(p) if dquote_char(p)))
                        {
                            pass_next = true;
                            quoted = true;
                            word.push(ch);
                            all_digit &= py_isdigit(ch);
                            if !dollar_present {
                                dollar_present = ch == '$';
                            }
                            gotonext = true;
                        }
                    }
                } else if shellquote(ch) {
                    self.dstack.push(ch);
                    let r = self.parse_matched_pair(Some(ch), ch, ch, ch == '`', false, false, false, false);
                    self.dstack.pop();
                    let ttok = r?;
                    word.push(ch);
                    word.extend(ttok.chars());
                    all_digit = false;
                    quoted = true;
                    if !dollar_present {
                        dollar_present = ch == '"' && ttok.contains('$');
                    }
                    gotonext = true;
                } else if shellexp(ch) {
                    // handleshellexp
                    let cd = self.dstack.last().copied();
                    let peek = self.getc(true)?;
                    if ch == '$' && peek.is_none() {
                        return Err(Err::new(ErrKind::Type));
                    }
                    if peek == Some('(') || (ch == '$' && matches!(peek, Some('{') | Some('['))) {
                        let ttok = if peek == Some('{') {
                            self.parse_matched_pair(cd, '{', '}', false, false, false, true, true)?
                        } else if peek == Some('(') {
                            self.dstack.push('(');
                            let r = self.parse_comsub(cd, '(', ')', true, false, false);
                            self.dstack.pop();
                            r?
                        } else {
                            self.parse_matched_pair(cd, '[', ']', false, false, false, false, false)?
                        };
                        word.push(ch);
                        word.push(peek.unwrap());
                        word.extend(ttok.chars());
                        dollar_present = true;
                        all_digit = false;
                        gotonext = true;
                    } else if ch == '$' && matches!(peek, Some('\'') | Some('"')) {
                        let p = peek.unwrap();
                        self.dstack.push(p);
                        let r = self.parse_matched_pair(Some(p), p, p, false, p == '\'', false, false, false);
                        self.dstack.pop();
                        let ttok = r?;
                        word.push(ch);
                        word.push(p);
                        word.extend(ttok.chars());
                        quoted = true;
                        all_digit = false;
                        gotonext = true;
                    } else if ch == '$' && peek == Some('$') {
                        word.push('$');
                        word.push('$');
                        dollar_present = true;
                        all_digit = false;
                        gotonext = true;
                    } else {
                        self.ungetc(peek);
                    }
                }
                if !gotonext {
                    if shellbreak(ch) {
                        self.ungetc(Some(ch));
                        break;
                    }
                    escaped = true;
                }
            }
            if escaped {
                word.push(ch);
                all_digit &= py_isdigit(ch);
                if !dollar_present {
                    dollar_present = ch == '$';
                }
            }
            let cd = self.dstack.last().copied();
            c = self.getc(cd != Some('\'') && !pass_next)?;
        }

        self.recordpos(0);
        let w: String = word.iter().collect();

        if all_digit {
            let numberish = match c {
                None => return Err(Err::new(ErrKind::Type)),
                Some(ch) => "<>".contains(ch),
            } || self.last_read.is(Tt::LessAnd)
                || self.last_read.is(Tt::GreaterAnd);
            // shutils.legal_number: int() accepts (Unicode) decimal digits
            if numberish && !word.is_empty() && word.iter().all(|&c| crate::pyunicode::isdecimal(c)) {
                return self.mk(Tt::Number, Some(w), 0);
            }
        }

        if let Some(tt) = self.special_case_tokens(&w) {
            return self.mk(tt, Some(w), 0);
        }

        if !dollar_present && !quoted && self.reserved_word_acceptable(&self.last_read.clone()) {
            if let Some(tt) = reserved_lookup(&w) {
                let ps = self.pstate;
                if ps & P_CASEPAT != 0 && tt != Tt::Esac {
                } else if tt == Tt::Time {
                } else if tt == Tt::Esac {
                    self.pstate &= !(P_CASEPAT | P_CASESTMT);
                } else if tt == Tt::Case {
                    self.pstate |= P_CASESTMT;
                } else if tt == Tt::CondEnd {
                    self.pstate &= !(P_CONDCMD | P_CONDEXPR);
                } else if tt == Tt::CondStart {
                    self.pstate |= P_CONDCMD;
                } else if tt == Tt::LeftCurly {
                    self.open_brace_count += 1;
                } else if tt == Tt::RightCurly && self.open_brace_count > 0 {
                    self.open_brace_count -= 1;
                }
                return self.mk(tt, Some(w), 0);
            }
        }

        let mut flags = 0;
        if dollar_present {
            flags |= W_HASDOLLAR;
        }
        if quoted {
            flags |= W_QUOTED;
        }
        let mut t = self.mk(Tt::Word, Some(w.clone()), flags)?;
        if is_assignment(&word) {
            t.flags |= W_ASSIGNMENT;
            if self.assignment_acceptable(&self.last_read.clone()) {
                t.flags |= W_NOSPLIT;
                if self.pstate & P_COMPASSIGN != 0 {
                    t.flags |= W_NOGLOB;
                }
            }
        }
        if word.is_empty() {
            return Err(Err::new(ErrKind::Index));
        }
        if word[0] == '{' && *word.last().unwrap() == '}' {
            match c {
                None => return Err(Err::new(ErrKind::Type)),
                Some(ch) if "<>".contains(ch) => return Ok(t),
                _ => {}
            }
        }
        if t.flags & (W_ASSIGNMENT | W_NOSPLIT) == (W_ASSIGNMENT | W_NOSPLIT) {
            t.tt = Some(Tt::AssignmentWord);
        }
        if self.last_read.is(Tt::Function) {
            self.pstate |= P_ALLOWOPNBRC;
        }
        Ok(t)
    }

    fn special_case_tokens(&mut self, w: &str) -> Option<Tt> {
        let lr_word = self.last_read.is(Tt::Word);
        let bt = self.before_that.tt;
        if lr_word && matches!(bt, Some(Tt::For | Tt::Case | Tt::Select)) && w == "in" {
            if bt == Some(Tt::Case) {
                self.pstate |= P_CASEPAT;
                self.esacs_needed += 1;
            }
            return Some(Tt::In);
        }
        if lr_word && matches!(bt, Some(Tt::For | Tt::Select)) && w == "do" {
            return Some(Tt::Do);
        }
        if self.esacs_needed > 0 {
            self.esacs_needed -= 1;
            if w == "esac" {
                self.pstate &= !P_CASEPAT;
                return Some(Tt::Esac);
            }
        }
        if self.pstate & P_ALLOWOPNBRC != 0 {
            self.pstate &= !P_ALLOWOPNBRC;
            if w == "{" {
                self.open_brace_count += 1;
                return Some(Tt::LeftCurly);
            }
        }
        if self.open_brace_count > 0 && self.reserved_word_acceptable(&self.last_read.clone()) && w == "}" {
            self.open_brace_count -= 1;
            return Some(Tt::RightCurly);
        }
        if self.last_read.is(Tt::Time) && w == "-p" {
            return Some(Tt::TimeOpt);
        }
        if self.last_read.is(Tt::TimeOpt) && w == "--" {
            return Some(Tt::TimeIgn);
        }
        if self.pstate & P_CONDEXPR != 0 && w == "]]" {
            return Some(Tt::CondEnd);
        }
        None
    }

    fn reserved_word_acceptable(&self, t: &Tok) -> bool {
        if !t.truthy() || in_reserved_set(t) {
            return true;
        }
        self.last_read.is(Tt::Word) && self.before_that.is(Tt::Function)
    }

    fn command_token_position(&self, t: &Tok) -> bool {
        t.is(Tt::AssignmentWord)
            || (!matches!(t.tt, Some(Tt::SemiSemi | Tt::SemiAnd | Tt::SemiSemiAnd)) && self.reserved_word_acceptable(t))
    }

    fn assignment_acceptable(&self, t: &Tok) -> bool {
        self.command_token_position(t) && self.pstate & P_CASEPAT == 0
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

    fn readline(&mut self) -> R<Option<String>> {
        let mut buf = String::new();
        let mut n = 0;
        loop {
            let c = match self.getc(true)? {
                None => {
                    if n == 0 {
                        return Ok(None);
                    }
                    '\n'
                }
                Some(c) => c,
            };
            buf.push(c);
            n += 1;
            if c == '\n' {
                return Ok(Some(buf));
            }
        }
    }

    /// `gatherheredocuments` (strict mode).
    pub fn gather_heredocs(&mut self) -> R<()> {
        while !self.redirstack.is_empty() {
            let (node, kill) = self.redirstack.remove(0);
            let word = self.heredoc_words.iter().find(|(n, _)| *n == node).map(|(_, w)| w.clone()).unwrap_or_default();
            let wl = word.chars().count();
            let start = self.idx;
            let mut line = self.readline()?;
            let mut done = false;
            while let Some(mut l) = line.take() {
                if kill {
                    while l.starts_with('\t') {
                        l.remove(0);
                    }
                }
                let lc: Vec<char> = l.chars().collect();
                if lc.len() == wl + 1 && lc[..wl].iter().collect::<String>() == word && lc[wl] == '\n' {
                    done = true;
                    break;
                }
                line = self.readline()?;
            }
            if !done {
                return Err(Err::new(ErrKind::Parsing));
            }
            let end = self.idx - 1;
            self.heredocs_done.push((node, start, end));
        }
        Ok(())
    }

    // ---- matched pairs ----

    #[allow(clippy::too_many_arguments)]
    fn parse_matched_pair(
        &mut self,
        doublequotes: Option<char>,
        open: char,
        close: char,
        parsingcommand: bool,
        allowesc: bool,
        dquote: bool,
        firstclose: bool,
        dolbrace: bool,
    ) -> R<String> {
        self.depth_guard()?;
        let mut count = 1;
        #[derive(PartialEq, Clone, Copy)]
        enum Dol {
            None,
            Param,
            Op,
            Word,
            Quote,
            Quote2,
        }
        let mut dolstate = if dolbrace { Dol::Param } else { Dol::None };
        let mut insidecomment = false;
        let lookforcomments = parsingcommand && !matches!(doublequotes, Some('`' | '\'' | '"')) && dquote;
        // `doublequotes not in "`'\""` with None raises TypeError in the reference
        if parsingcommand && doublequotes.is_none() && dquote {
            return Err(Err::new(ErrKind::Type));
        }
        let rdquote = if doublequotes == Some('"') { true } else { dquote };
        let mut passnext = false;
        let mut sawdollar = false;
        let mut ret: Vec<char> = Vec::new();

        while count > 0 {
            let c = match self.getc(doublequotes != Some('\'') && !passnext)? {
                None => return Err(Err::new(ErrKind::Parsing)),
                Some(c) => c,
            };
            if insidecomment {
                ret.push(c);
                if c == '\n' {
                    insidecomment = false;
                }
                continue;
            } else if lookforcomments
                && c == '#'
                && (ret.is_empty() || *ret.last().unwrap() == '\n' || shellblank(*ret.last().unwrap()))
            {
                insidecomment = true;
            }
            if passnext {
                passnext = false;
                ret.push(c);
                continue;
            } else if c == close {
                count -= 1;
            } else if open != close && sawdollar && open == '{' && c == open {
                count += 1;
            } else if !firstclose && c == open {
                count += 1;
            }
            ret.push(c);
            if count == 0 {
                break;
            }
            if open == '\'' {
                if allowesc && c == '\\' {
                    passnext = true;
                }
                continue;
            }
            if c == '\\' {
                passnext = true;
            }
            if dolbrace {
                if dolstate == Dol::Param {
                    if ret.len() > 1 {
                        match c {
                            '%' | '#' | '^' | ',' => dolstate = Dol::Quote,
                            '/' => dolstate = Dol::Quote2,
                            _ => {}
                        }
                    } else if "#%^,~:-=?+/".contains(c) {
                        dolstate = Dol::Op;
                    }
                }
                if dolstate == Dol::Op && "#%^,~:-=?+/".contains(c) {
                    dolstate = Dol::Word;
                }
            }
            // `dolbracestate not in 'quote2'`: true for param/op/word
            let not_in_quote2 = matches!(dolstate, Dol::Param | Dol::Op | Dol::Word);
            if not_in_quote2 && dquote && dolbrace && c == '\'' {
                continue;
            }
            if open != close {
                if shellquote(c) {
                    self.dstack.push(c);
                    let r = if sawdollar {
                        self.parse_matched_pair(Some(c), c, c, parsingcommand, true, dquote, firstclose, dolbrace)
                    } else {
                        self.parse_matched_pair(Some(c), c, c, parsingcommand, allowesc, dquote, firstclose, dolbrace)
                    };
                    self.dstack.pop();
                    let nest = r?;
                    if sawdollar && c == '"' {
                        let n = ret.len();
                        ret.truncate(n.saturating_sub(2));
                    }
                    ret.extend(nest.chars());
                }
            } else if open == '"' && c == '`' {
                let nest =
                    self.parse_matched_pair(None, '`', '`', parsingcommand, allowesc, dquote, firstclose, dolbrace)?;
                ret.extend(nest.chars());
            } else if open != '`' && sawdollar && "({[".contains(c) {
                // handledollarword (open != c here)
                let nest = match c {
                    '(' => self.parse_comsub(None, '(', ')', true, false, false)?,
                    '{' => self.parse_matched_pair(None, '{', '}', false, false, rdquote, true, true)?,
                    _ => self.parse_matched_pair(None, '[', ']', false, false, rdquote, false, false)?,
                };
                ret.extend(nest.chars());
            }
            sawdollar = c == '$';
        }
        self.depth_release();
        Ok(ret.into_iter().collect())
    }

    fn depth_guard(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > crate::MAX_DEPTH {
            return Err(Err::new(ErrKind::Other));
        }
        Ok(())
    }
    fn depth_release(&mut self) {
        self.depth -= 1;
    }

    fn parse_comsub(
        &mut self,
        doublequotes: Option<char>,
        open: char,
        close: char,
        parsingcommand: bool,
        dquote: bool,
        firstclose: bool,
    ) -> R<String> {
        let peekc = self.getc(false)?;
        self.ungetc(peekc);
        if peekc == Some('(') {
            return self.parse_matched_pair(doublequotes, open, close, false, false, false, false, false);
        }
        self.depth_guard()?;
        let mut count = 1;
        let checkcase = parsingcommand && !matches!(doublequotes, Some('\'' | '"')) && !dquote;
        let checkcomment = checkcase;
        let mut heredelim: Vec<char> = Vec::new();
        let (mut stripdoc, mut insideheredoc, mut insidecomment, mut insideword, mut insidecase) =
            (false, false, false, false, false);
        let mut readingheredocdelim = false;
        let mut wasdollar = false;
        let mut passnext = false;
        let mut reservedwordok = true;
        let mut lexfirstind: isize = -1;
        let mut lexrwlen = 0usize;
        let mut lexwlen: Option<usize> = None;
        let mut ret: Vec<char> = Vec::new();

        let tail_eq = |ret: &Vec<char>, from: isize, stripdoc: bool, delim: &Vec<char>| -> R<bool> {
            let mut t = from;
            if t < 0 {
                // negative index in Python slices from the end
                let n = ret.len() as isize;
                t = (n + t).max(0);
            }
            let mut t = t as usize;
            if stripdoc {
                loop {
                    match ret.get(t) {
                        None => return Err(Err::new(ErrKind::Index)),
                        Some('\t') => t += 1,
                        _ => break,
                    }
                }
            }
            let tail: &[char] = if t <= ret.len() { &ret[t..] } else { &[] };
            Ok(tail == &delim[..])
        };

        while count > 0 {
            let c = match self.getc(doublequotes != Some('\'') && !insidecomment && !passnext)? {
                None => return Err(Err::new(ErrKind::Parsing)),
                Some(c) => c,
            };
            let mut c = c;
            if c == '\n' {
                if readingheredocdelim && !heredelim.is_empty() {
                    readingheredocdelim = false;
                    insideheredoc = true;
                    lexfirstind = ret.len() as isize + 1;
                } else if insideheredoc {
                    if tail_eq(&ret, lexfirstind, stripdoc, &heredelim)? {
                        stripdoc = false;
                        insideheredoc = false;
                        heredelim.clear();
                        lexfirstind = -1;
                    } else {
                        lexfirstind = ret.len() as isize + 1;
                    }
                }
            }
            if insideheredoc && c == close && count == 1 && tail_eq(&ret, lexfirstind, stripdoc, &heredelim)? {
                stripdoc = false;
                insideheredoc = false;
                heredelim.clear();
                lexfirstind = -1;
            }
            if insidecomment || insideheredoc {
                ret.push(c);
                if insidecomment && c == '\n' {
                    insidecomment = false;
                }
                continue;
            }
            if passnext {
                passnext = false;
                ret.push(c);
                continue;
            }
            if shellbreak(c) {
                insideword = false;
            } else if insideword {
                lexwlen = Some(lexwlen.unwrap_or(0) + 1);
            } else {
                insideword = true;
                lexwlen = Some(0);
            }
            if shellblank(c) && !readingheredocdelim && lexrwlen == 0 {
                ret.push(c);
                continue;
            }
            if readingheredocdelim {
                if lexfirstind == -1 && !shellbreak(c) {
                    lexfirstind = ret.len() as isize;
                } else if lexfirstind >= 0 && !passnext && shellbreak(c) {
                    if heredelim.is_empty() {
                        let from = (lexfirstind as usize).min(ret.len());
                        let nest: String = ret[from..].iter().collect();
                        heredelim = remove_quotes(&nest).chars().collect();
                    }
                    if c == '\n' {
                        insideheredoc = true;
                        readingheredocdelim = false;
                        lexfirstind = ret.len() as isize + 1;
                    } else {
                        lexfirstind = -1;
                    }
                }
            }
            if !reservedwordok && checkcase && !insidecomment && (shellmeta(c) || c == '\n') {
                ret.push(c);
                let peekc = self.getc(true)?;
                if peekc == Some(c) && "&|;".contains(c) {
                    ret.push(c);
                    reservedwordok = true;
                    lexrwlen = 0;
                    continue;
                } else if c == '\n' || "&|;".contains(c) {
                    self.ungetc(peekc);
                    reservedwordok = true;
                    lexrwlen = 0;
                    continue;
                } else {
                    ret.pop();
                    self.ungetc(peekc);
                }
            }
            if reservedwordok {
                if py_islower(c) {
                    ret.push(c);
                    lexrwlen += 1;
                    continue;
                } else if lexrwlen == 4 && shellbreak(c) {
                    let n = ret.len();
                    let last4: String = ret[n.saturating_sub(4)..].iter().collect();
                    if last4 == "case" {
                        insidecase = true;
                    } else if last4 == "esac" {
                        insidecase = false;
                    }
                    reservedwordok = false;
                } else if checkcomment && c == '#' && (lexrwlen == 0 || (insideword && lexwlen == Some(0))) {
                } else if !insidecase && (shellblank(c) || c == '\n') && lexrwlen == 2 && {
                    let n = ret.len();
                    ret[n.saturating_sub(2)..].iter().collect::<String>() == "do"
                } {
                    lexrwlen = 0;
                } else if insidecase && c != '\n' {
                    reservedwordok = false;
                } else if !shellbreak(c) {
                    reservedwordok = false;
                }
            }
            if !insidecomment && checkcase && c == '<' {
                ret.push(c);
                let peekc = match self.getc(true)? {
                    None => return Err(Err::new(ErrKind::Parsing)),
                    Some(p) => p,
                };
                if peekc == c {
                    ret.push(peekc);
                    let p2 = match self.getc(true)? {
                        None => return Err(Err::new(ErrKind::Parsing)),
                        Some(p) => p,
                    };
                    if p2 == '-' {
                        ret.push(p2);
                        stripdoc = true;
                    } else {
                        self.ungetc(Some(p2));
                    }
                    if p2 != '<' {
                        readingheredocdelim = true;
                        lexfirstind = -1;
                    }
                    continue;
                } else {
                    c = peekc;
                }
            } else if checkcomment
                && !insidecomment
                && c == '#'
                && ((reservedwordok && lexrwlen == 0) || insideword || {
                    match lexwlen {
                        Some(l) => l == 0,
                        None => return Err(Err::new(ErrKind::Other)),
                    }
                })
            {
                insidecomment = true;
            }
            if c == close && !insidecase {
                count -= 1;
            } else if !firstclose && !insidecase && c == open {
                count += 1;
            }
            ret.push(c);
            if count == 0 {
                break;
            }
            if c == '\\' {
                passnext = true;
            }
            if shellquote(c) {
                self.dstack.push(c);
                let r = if wasdollar && c == '\'' {
                    self.parse_matched_pair(Some(c), c, c, false, true, true, false, false)
                } else {
                    self.parse_matched_pair(Some(c), c, c, false, false, true, false, false)
                };
                self.dstack.pop();
                ret.extend(r?.chars());
            } else if wasdollar && "({[".contains(c) {
                if !insidecase && open == c {
                    count -= 1;
                }
                let nest = match c {
                    '(' => self.parse_comsub(None, '(', ')', true, false, false)?,
                    '{' => self.parse_matched_pair(None, '{', '}', false, false, true, true, true)?,
                    _ => self.parse_matched_pair(None, '[', ']', false, false, true, false, false)?,
                };
                ret.extend(nest.chars());
            }
            wasdollar = c == '$';
        }
        self.depth_release();
        Ok(ret.into_iter().collect())
    }
}

enum RT {
    Tok(Tok),
    Op(Tt),
}

/// Python `str.islower` for a single character.
pub(crate) fn py_islower(c: char) -> bool {
    crate::pyunicode::islower(c)
}

fn is_assignment(w: &[char]) -> bool {
    let c0 = match w.first() {
        None => return false,
        Some(c) => *c,
    };
    if !crate::pyunicode::isalpha(c0) && c0 != '_' {
        return false;
    }
    for (i, &c) in w.iter().enumerate() {
        if c == '=' {
            return i != 0;
        }
        if c == '+' && w.get(i + 1) == Some(&'=') {
            return true;
        }
        if !(crate::pyunicode::isalnum(c) || c == '_') {
            return false;
        }
    }
    false
}

/// bashlex `shutils.removequotes` (defaults: not heredoc, not double quotes).
fn remove_quotes(s: &str) -> String {
    let s: Vec<char> = s.chars().collect();
    let mut r = String::new();
    let mut i = 0;
    let mut dq = false;
    while i < s.len() {
        let c = s[i];
        if c == '\\' {
            i += 1;
            if i == s.len() {
                r.push('\\');
                return r;
            }
            let c = s[i];
            if dq && !shellquote(c) {
                r.push('\\');
            }
            r.push(c);
            // like the reference, do not step past the escaped character: it is examined again
            continue;
        } else if c == '\'' {
            if dq {
                r.push(c);
                i += 1;
            } else {
                let t = s[i + 1..].iter().position(|&x| x == '\'').map(|p| p + i + 1);
                let t = match t {
                    None => s.len(),
                    Some(t) => t + 1,
                };
                let end = t.saturating_sub(1).max(i + 1);
                r.extend(s[(i + 1).min(s.len())..end.min(s.len())].iter());
                i = t;
            }
        } else if c == '"' {
            dq = !dq;
            i += 1;
        } else {
            r.push(c);
            i += 1;
        }
    }
    r
}
