//! Words: `readtokenword` (one word with its quotes and expansions, which it hands to the
//! matched-pair and command-substitution scanners) and the rules that make a word a reserved
//! word or an assignment (`special_case_tokens`, `is_assignment`).

use super::*;
use crate::{Err, ErrKind, R};

impl Tokenizer {
    pub(super) fn readtokenword(&mut self, c0: char) -> R<Tok> {
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
