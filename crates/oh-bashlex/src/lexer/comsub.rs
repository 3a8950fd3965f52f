//! Command substitutions: `$(...)` read as bash reads it (`parse_comsub`), tracking case
//! patterns, comments and here-documents inside it so that a `)` there does not end it.

use super::*;
use crate::{Err, ErrKind, R};

impl Tokenizer {
    pub(super) fn parse_comsub(
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

/// Python `str.islower` for a single character.
fn py_islower(c: char) -> bool {
    crate::pyunicode::islower(c)
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
