//! Word expansion (bashlex `subst.py`): the substitution nodes inside a word, found by parsing
//! each `$( )`, `` ` ` ``, `<( )` and `>( )` recursively with a parser of its own.

use super::*;

impl Parser<'_> {
    fn prev_tokens(&self) -> (Tok, Tok, Tok) {
        (self.tok.two_ago.clone(), self.tok.before_that.clone(), self.tok.last_read.clone())
    }

    /// `_expandword` followed by the position shift of the substitution nodes.
    pub(super) fn expand_word(&mut self, t: &Tok, kind: Kind) -> R<usize> {
        let value: Vec<char> = t.val().chars().collect();
        let qdq = t.flags & W_QUOTED != 0 && value.first() == Some(&'"');
        let parts = self.expand_internal(&value, qdq)?;
        for &p in &parts {
            for i in collect(self.arena, p) {
                if self.arena[i].pos.1 + t.pos.0 > t.pos.1 {
                    return Err(Err::new(ErrKind::Assertion));
                }
                self.arena[i].pos.0 += t.pos.0;
                self.arena[i].pos.1 += t.pos.0;
            }
        }
        let mut n = Node::new(kind, t.pos);
        n.parts = parts;
        Ok(self.add(n))
    }

    fn expand_internal(&mut self, s: &[char], qdq: bool) -> R<Vec<usize>> {
        let mut parts = Vec::new();
        let mut i = 0usize;
        let n = s.len();
        while i < n {
            let c = s[i];
            match c {
                '<' | '>' => {
                    if i + 1 >= n || s[i + 1] != '(' || qdq {
                        i += 1;
                    } else {
                        let t = i + 2;
                        let (node, si) = self.parse_dolparen(s, t)?;
                        let si = si + 1;
                        let mut ps = Node::new(Kind::ProcessSubst, (t - 2, si));
                        ps.command = Some(node);
                        parts.push(self.add(ps));
                        i = si;
                    }
                }
                '$' if n > 1 => {
                    let z = i + 1;
                    let nc = s.get(z).copied();
                    match nc {
                        Some(d) if "0123456789$#?-!*@".contains(d) => {
                            i = if z < n { z + 1 } else { z };
                        }
                        Some('{') => {
                            let f = s[z + 1..].iter().position(|&x| x == '}').map(|p| p + z + 1);
                            match f {
                                Some(f) => i = if f < n { f + 1 } else { f },
                                // str.find gives -1 and the reference restarts at 0 forever
                                None => return Err(Err::new(ErrKind::Hang)),
                            }
                        }
                        Some('(') => {
                            let si = z + 1;
                            if si >= n {
                                return Err(Err::new(ErrKind::Index));
                            }
                            if s[si] == '(' {
                                return Err(Err::new(ErrKind::NotImplemented));
                            }
                            let (node, e) = self.parse_dolparen(s, si)?;
                            let e = e + 1;
                            let mut cs = Node::new(Kind::CommandSubst, (si - 2, e));
                            cs.command = Some(node);
                            parts.push(self.add(cs));
                            i = e;
                        }
                        Some('[') => return Err(Err::new(ErrKind::NotImplemented)),
                        _ => {
                            let mut e = z;
                            while e < n && (crate::pyunicode::isalnum(s[e]) || s[e] == '_') {
                                e += 1;
                            }
                            i = e;
                        }
                    }
                }
                '`' => {
                    let t = i;
                    i += 1;
                    if i < n && s[i] == '`' {
                        i += 1;
                    } else {
                        // _stringextract: a backslash makes the loop look at the next char
                        let mut j = i;
                        let mut found = None;
                        while j < n {
                            let ch = s[j];
                            if ch == '\\' {
                                if j + 1 < n {
                                    j += 1;
                                } else {
                                    break;
                                }
                            } else if ch == '`' {
                                found = Some(j);
                                break;
                            } else {
                                j += 1;
                            }
                        }
                        let x = found.ok_or_else(perr)?;
                        let word: Vec<char> = s[t + 1..x].to_vec();
                        let (cmd, _) = self.recursive_parse(&word, 0, None)?;
                        for k in collect(self.arena, cmd) {
                            if self.arena[k].pos.1 + t + 1 > n {
                                return Err(Err::new(ErrKind::Assertion));
                            }
                            self.arena[k].pos.0 += t + 1;
                            self.arena[k].pos.1 += t + 1;
                        }
                        i = x + 1;
                        let mut cs = Node::new(Kind::CommandSubst, (t, i));
                        cs.command = Some(cmd);
                        parts.push(self.add(cs));
                    }
                }
                '~' if i == 0 && !qdq => {
                    // tilde prefix: skipped up to the first `/` or quoting character
                    let mut j = i;
                    while j < n && !"/\\'\"".contains(s[j]) {
                        j += 1;
                    }
                    i = j;
                }
                '\\' => i += 2,
                '\'' => {
                    if i == 0 && *s.last().unwrap() == '\'' {
                        return Ok(vec![]);
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
        Ok(parts)
    }

    /// `_recursiveparse`: parse `base[sindex..]` with a fresh parser sharing the arena.
    fn recursive_parse(
        &mut self,
        base: &[char],
        sindex: usize,
        args: Option<(u32, (Tok, Tok, Tok))>,
    ) -> R<(usize, usize)> {
        let (pstate, prev) = args.unwrap_or_else(|| (self.tok.pstate, self.prev_tokens()));
        let depth = self.tok.depth + 1;
        if depth > crate::MAX_DEPTH {
            return Err(Err::new(ErrKind::Other));
        }
        let sub: Vec<char> = base[sindex..].to_vec();
        let node = {
            let mut p = Parser::new(&mut *self.arena, &sub, pstate, Some(prev), depth);
            p.parse_unit()?
        };
        let node = node.ok_or_else(|| Err::new(ErrKind::Attribute))?;
        let endp = self.arena[node].pos.1;
        for k in collect(self.arena, node) {
            if self.arena[k].pos.1 + sindex > base.len() {
                return Err(Err::new(ErrKind::Assertion));
            }
            self.arena[k].pos.0 += sindex;
            self.arena[k].pos.1 += sindex;
        }
        Ok((node, endp))
    }

    /// `_parsedolparen`: returns the node and the index of the closing paren in `base`.
    fn parse_dolparen(&mut self, base: &[char], sindex: usize) -> R<(usize, usize)> {
        let ps = self.tok.pstate | P_CMDSUBST | P_EOFTOKEN;
        let prev = self.prev_tokens();
        let (node, mut endp) = self.recursive_parse(base, sindex, Some((ps, prev)))?;
        let string = &base[sindex..];
        match string.get(endp) {
            None => return Err(Err::new(ErrKind::Index)),
            Some(')') => {}
            Some(_) => {
                while endp > 0 && string[endp - 1] == '\n' {
                    endp -= 1;
                }
            }
        }
        Ok((node, sindex + endp))
    }

    #[allow(dead_code)]
    fn src_len(&self) -> usize {
        self.src.len()
    }
}
