//! Matched pairs: the text from an opening quote or bracket to its close (`'...'`, `"..."`,
//! `` `...` ``, `${...}`, `$[...]`), nested pairs included, bounded by `MAX_DEPTH`
//! (`parse_matched_pair`; `depth_guard` is the bound the command substitutions share).

use super::*;
use crate::{Err, ErrKind, R};

impl Tokenizer {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn parse_matched_pair(
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

    pub(super) fn depth_guard(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > crate::MAX_DEPTH {
            return Err(Err::new(ErrKind::Other));
        }
        Ok(())
    }
    pub(super) fn depth_release(&mut self) {
        self.depth -= 1;
    }
}
