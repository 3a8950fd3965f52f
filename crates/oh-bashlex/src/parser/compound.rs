//! Compound commands: `( )`, `{ }`, `if`, `while`/`until`, `for`, `case`, `select` and function
//! definitions, and the compound lists inside them, in bashlex's grammar (including the
//! productions it does not implement, which fail as in the reference).

use super::*;

impl Parser<'_> {
    pub(super) fn shell_command(&mut self) -> R<usize> {
        self.tok.depth += 1;
        if self.tok.depth > crate::MAX_DEPTH {
            return Err(Err::new(ErrKind::Other));
        }
        let r = self.shell_command_inner();
        self.tok.depth -= 1;
        r
    }

    fn shell_command_inner(&mut self) -> R<usize> {
        let t = self.peek()?.clone();
        match t.tt {
            Some(Tt::For) => self.for_command(),
            Some(Tt::While) | Some(Tt::Until) => {
                self.next()?;
                let kw = self.reserved(&t);
                let cond = self.compound_list()?;
                let d = self.expect(Tt::Do)?;
                let body = self.compound_list()?;
                let done = self.expect(Tt::Done)?;
                self.peek()?;
                if self.arena[cond].kind != Kind::List {
                    return Err(Err::new(ErrKind::Assertion));
                }
                let d = self.reserved(&d);
                let done = self.reserved(&done);
                let parts = vec![kw, cond, d, body, done];
                let kind = if t.is(Tt::While) { Kind::While } else { Kind::Until };
                Ok(self.compound_of(kind, parts))
            }
            Some(Tt::If) => {
                self.next()?;
                let mut parts = vec![self.reserved(&t)];
                parts.push(self.compound_list()?);
                let th = self.expect(Tt::Then)?;
                parts.push(self.reserved(&th));
                parts.push(self.compound_list()?);
                loop {
                    let nt = self.next()?;
                    match nt.tt {
                        Some(Tt::Elif) => {
                            parts.push(self.reserved(&nt));
                            parts.push(self.compound_list()?);
                            let th = self.expect(Tt::Then)?;
                            parts.push(self.reserved(&th));
                            parts.push(self.compound_list()?);
                        }
                        Some(Tt::Else) => {
                            parts.push(self.reserved(&nt));
                            parts.push(self.compound_list()?);
                            let fi = self.expect(Tt::Fi)?;
                            parts.push(self.reserved(&fi));
                            break;
                        }
                        Some(Tt::Fi) => {
                            parts.push(self.reserved(&nt));
                            break;
                        }
                        _ => return Err(perr()),
                    }
                }
                self.peek()?;
                Ok(self.compound_of(Kind::If, parts))
            }
            Some(Tt::LeftParen) | Some(Tt::LeftCurly) => {
                self.next()?;
                let close = if t.is(Tt::LeftParen) { Tt::RightParen } else { Tt::RightCurly };
                let l = self.reserved(&t);
                let body = self.compound_list()?;
                let r = self.expect(close)?;
                self.peek()?;
                let r = self.reserved(&r);
                let parts = vec![l, body, r];
                let mut n = Node::new(Kind::Compound, self.span(&parts));
                n.parts = parts;
                Ok(self.add(n))
            }
            Some(Tt::Case) => self.case_command(),
            Some(Tt::Select) => {
                // select_command: always NotImplementedError once it parses
                self.next()?;
                self.expect(Tt::Word)?;
                if self.peek_tt()? == Some(Tt::Semicolon) {
                    self.next()?;
                }
                self.skip_newlines()?;
                if self.peek_tt()? == Some(Tt::In) {
                    self.next()?;
                    if self.peek_tt()? != Some(Tt::Word) {
                        return Err(perr());
                    }
                    while self.peek_tt()? == Some(Tt::Word) {
                        self.next()?;
                    }
                    match self.peek_tt()? {
                        Some(Tt::Newline) | Some(Tt::Semicolon) => {
                            self.next()?;
                        }
                        _ => return Err(perr()),
                    }
                    self.skip_newlines()?;
                }
                let close = match self.next()?.tt {
                    Some(Tt::Do) => Tt::Done,
                    Some(Tt::LeftCurly) => Tt::RightCurly,
                    _ => return Err(perr()),
                };
                self.skip_newlines()?;
                self.list0()?;
                self.expect(close)?;
                self.peek()?;
                Err(Err::new(ErrKind::NotImplemented))
            }
            _ => Err(perr()),
        }
    }

    fn case_command(&mut self) -> R<usize> {
        self.next()?;
        self.expect(Tt::Word)?;
        self.skip_newlines()?;
        self.expect(Tt::In)?;
        self.skip_newlines()?;
        let t = self.next()?;
        match t.tt {
            Some(Tt::Esac) => {
                self.peek()?;
                Err(Err::new(ErrKind::NotImplemented))
            }
            Some(Tt::Word) | Some(Tt::LeftParen) => {
                if t.is(Tt::LeftParen) {
                    self.expect(Tt::Word)?;
                }
                match self.peek_tt()? {
                    Some(Tt::RightParen) | Some(Tt::Bar) => Err(Err::new(ErrKind::NotImplemented)),
                    _ => Err(perr()),
                }
            }
            _ => Err(perr()),
        }
    }

    fn compound_of(&mut self, kind: Kind, parts: Vec<usize>) -> usize {
        let sp = self.span(&parts);
        let mut inner = Node::new(kind, sp);
        inner.parts = parts;
        let inner = self.add(inner);
        let mut n = Node::new(Kind::Compound, sp);
        n.parts = vec![inner];
        self.add(n)
    }

    fn for_command(&mut self) -> R<usize> {
        let f = self.next()?;
        let mut parts = vec![self.reserved(&f)];
        let var = self.expect(Tt::Word)?;
        let mut var_pending = Some(var);
        let mut words: Vec<usize> = Vec::new();
        let mut semi: Option<Tok> = None;
        let mut has_in = false;
        let mut in_tok = None;
        match self.peek_tt()? {
            Some(Tt::Semicolon) => {
                semi = Some(self.next()?);
                self.skip_newlines()?;
            }
            _ => {
                self.skip_newlines()?;
                if self.peek_tt()? == Some(Tt::In) {
                    has_in = true;
                    in_tok = Some(self.next()?);
                    while self.peek_tt()? == Some(Tt::Word) {
                        let w = self.next()?;
                        self.peek()?;
                        words.push(self.expand_word(&w, Kind::Word)?);
                    }
                    match self.peek_tt()? {
                        Some(Tt::Semicolon) => semi = Some(self.next()?),
                        Some(Tt::Newline) => {
                            self.next()?;
                        }
                        _ => return Err(perr()),
                    }
                    self.skip_newlines()?;
                }
            }
        }
        let open = self.next()?;
        let close = match open.tt {
            Some(Tt::Do) => Tt::Done,
            Some(Tt::LeftCurly) => Tt::RightCurly,
            _ => return Err(perr()),
        };
        let body = self.compound_list()?;
        let closetok = self.expect(close)?;
        self.peek()?;
        let var = var_pending.take().unwrap();
        parts.push(self.expand_word(&var, Kind::Word)?);
        if has_in {
            let it = in_tok.unwrap();
            parts.push(self.reserved(&it));
            parts.extend(words);
        }
        if let Some(s) = semi {
            parts.push(self.reserved(&s));
        }
        parts.push(self.reserved(&open));
        parts.push(body);
        parts.push(self.reserved(&closetok));
        Ok(self.compound_of(Kind::For, parts))
    }

    pub(super) fn function_def(&mut self) -> R<usize> {
        let f = self.next()?;
        let kw = self.reserved(&f);
        let name = self.expect(Tt::Word)?;
        let mut parts = vec![kw];
        let mut parens = vec![];
        if self.peek_tt()? == Some(Tt::LeftParen) {
            let l = self.next()?;
            let r = self.expect(Tt::RightParen)?;
            parens = vec![l, r];
        }
        self.skip_newlines()?;
        let body = self.function_body()?;
        parts.push(self.expand_word(&name, Kind::Word)?);
        for p in parens {
            parts.push(self.reserved(&p));
        }
        parts.push(body);
        let mut n = Node::new(Kind::Function, self.span(&parts));
        n.parts = parts;
        Ok(self.add(n))
    }

    pub(super) fn function_def_named(&mut self, name: Tok) -> R<usize> {
        let l = self.expect(Tt::LeftParen)?;
        let r = self.expect(Tt::RightParen)?;
        self.skip_newlines()?;
        let body = self.function_body()?;
        let mut parts = vec![self.expand_word(&name, Kind::Word)?];
        parts.push(self.reserved(&l));
        parts.push(self.reserved(&r));
        parts.push(body);
        let mut n = Node::new(Kind::Function, self.span(&parts));
        n.parts = parts;
        Ok(self.add(n))
    }

    fn function_body(&mut self) -> R<usize> {
        if !starts_shell_command(self.peek()?) {
            return Err(perr());
        }
        let sc = self.shell_command()?;
        if starts_redirection(self.peek()?) {
            let mut reds = Vec::new();
            while starts_redirection(self.peek()?) {
                reds.push(self.redirection()?);
            }
            self.attach_redirects(sc, reds)?;
        }
        Ok(sc)
    }

    /// `compound_list`: `list | newline_list list1`.
    fn compound_list(&mut self) -> R<usize> {
        self.skip_newlines()?;
        self.list0()
    }

    /// list1 with an optional terminator (`list0`), after leading newlines were skipped.
    fn list0(&mut self) -> R<usize> {
        if !starts_pipeline(self.peek()?) {
            return Err(perr());
        }
        let mut parts = vec![self.pipeline_command()?];
        loop {
            let t = self.peek()?.clone();
            use Tt::*;
            if matches!(t.tt, Some(AndAnd | OrOr | Ampersand | Semicolon | Newline)) {
                self.next()?;
                let op = self.operator(&t);
                self.skip_newlines()?;
                if starts_pipeline(self.peek()?) {
                    let pc = self.pipeline_command()?;
                    parts.push(op);
                    parts.push(pc);
                    continue;
                }
                if t.is(AndAnd) || t.is(OrOr) {
                    return Err(perr());
                }
                if parts.len() > 1 || !t.is(Newline) {
                    parts.push(op);
                    let mut n = Node::new(Kind::List, self.span(&parts));
                    n.parts = parts;
                    return Ok(self.add(n));
                }
                return Ok(parts[0]);
            }
            break;
        }
        if parts.len() > 1 {
            let mut n = Node::new(Kind::List, self.span(&parts));
            n.parts = parts;
            return Ok(self.add(n));
        }
        Ok(parts[0])
    }
}
