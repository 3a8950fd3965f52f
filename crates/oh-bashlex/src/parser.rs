//! Recursive-descent parser accepting the language of bashlex 0.18's yacc grammar (bash's
//! `parse.y` subset), building only the node attributes OpenHands looks at, plus word
//! expansion (`subst.py`), which recursively parses command and process substitutions.

use crate::ast::{collect, Arena, Kind, Node};
use crate::lexer::{Tok, Tokenizer, Tt, P_CMDSUBST, P_EOFTOKEN, W_QUOTED};
use crate::{Err, ErrKind, R};

// The grammar in parts, each an `impl Parser` block: compound commands (`if`, `while`, `for`,
// `case`, functions, `{ }`, `( )`) and word expansion (command and process substitutions).
mod compound;
mod expansion;

pub(crate) struct Parser<'a> {
    pub arena: &'a mut Arena,
    pub tok: Tokenizer,
    la: Option<Tok>,
    src: Vec<char>,
    /// Past the leading newlines of `inputunit`: from here on the end token is an error.
    started: bool,
}

fn perr() -> Err {
    Err::new(ErrKind::Parsing)
}

fn starts_command(t: &Tok) -> bool {
    use Tt::*;
    matches!(
        t.tt,
        Some(
            Word | AssignmentWord
                | Number
                | RedirWord
                | Greater
                | Less
                | GreaterGreater
                | GreaterBar
                | LessGreater
                | LessLess
                | LessLessMinus
                | LessLessLess
                | LessAnd
                | GreaterAnd
                | AndGreater
                | AndGreaterGreater
                | For
                | Case
                | While
                | Until
                | Select
                | If
                | LeftParen
                | LeftCurly
                | CondStart
                | Function
                | Coproc
        )
    )
}

fn starts_pipeline(t: &Tok) -> bool {
    t.is(Tt::Bang) || t.is(Tt::Time) || starts_command(t)
}

fn starts_redirection(t: &Tok) -> bool {
    use Tt::*;
    matches!(
        t.tt,
        Some(
            Number
                | RedirWord
                | Greater
                | Less
                | GreaterGreater
                | GreaterBar
                | LessGreater
                | LessLess
                | LessLessMinus
                | LessLessLess
                | LessAnd
                | GreaterAnd
                | AndGreater
                | AndGreaterGreater
        )
    )
}

fn starts_shell_command(t: &Tok) -> bool {
    use Tt::*;
    matches!(t.tt, Some(For | Case | While | Until | Select | If | LeftParen | LeftCurly | CondStart))
}

impl<'a> Parser<'a> {
    pub fn new(
        arena: &'a mut Arena,
        src: &[char],
        pstate: u32,
        prev: Option<(Tok, Tok, Tok)>,
        depth: usize,
    ) -> Parser<'a> {
        Parser { arena, tok: Tokenizer::new(src, pstate, prev, depth), la: None, src: src.to_vec(), started: false }
    }

    fn add(&mut self, n: Node) -> usize {
        self.arena.push(n);
        self.arena.len() - 1
    }

    fn sync_heredocs(&mut self) {
        for (node, start, end) in std::mem::take(&mut self.tok.heredocs_done) {
            let h = self.add(Node::new(Kind::Heredoc, (start, end)));
            let r = &mut self.arena[node];
            r.heredoc = Some(h);
            if r.pos.1 + 1 == start {
                r.pos.1 = end;
            }
        }
    }

    fn peek(&mut self) -> R<&Tok> {
        if self.la.is_none() {
            let t = self.tok.token();
            self.sync_heredocs();
            let t = t?;
            // The end token is yacc's `$end`, valid only in the initial state (and after a
            // complete `inputunit`, which never reads it). No reduction happens on it, so
            // seeing it anywhere else is an immediate ParsingError ("unexpected EOF").
            if self.started && t.is(Tt::Eof) {
                return Err(perr());
            }
            self.la = Some(t);
        }
        Ok(self.la.as_ref().unwrap())
    }

    fn peek_tt(&mut self) -> R<Option<Tt>> {
        Ok(self.peek()?.tt)
    }

    fn next(&mut self) -> R<Tok> {
        self.peek()?;
        Ok(self.la.take().unwrap())
    }

    fn expect(&mut self, tt: Tt) -> R<Tok> {
        if self.peek_tt()? == Some(tt) {
            self.next()
        } else {
            Err(perr())
        }
    }

    fn gather(&mut self) -> R<()> {
        let r = self.tok.gather_heredocs();
        self.sync_heredocs();
        r
    }

    fn skip_newlines(&mut self) -> R<()> {
        while self.peek_tt()? == Some(Tt::Newline) {
            self.next()?;
        }
        Ok(())
    }

    fn span(&self, parts: &[usize]) -> (usize, usize) {
        (self.arena[parts[0]].pos.0, self.arena[*parts.last().unwrap()].pos.1)
    }

    fn reserved(&mut self, t: &Tok) -> usize {
        let mut n = Node::new(Kind::ReservedWord, t.pos);
        n.op = t.val().to_string();
        self.add(n)
    }

    fn operator(&mut self, t: &Tok) -> usize {
        let mut n = Node::new(Kind::Operator, t.pos);
        n.op = t.val().to_string();
        self.add(n)
    }

    /// `inputunit`. Returns None for input holding only newlines/comments.
    pub fn parse_unit(&mut self) -> R<Option<usize>> {
        loop {
            match self.peek_tt()? {
                Some(Tt::Newline) => {
                    self.next()?;
                }
                Some(Tt::Eof) => return Ok(None),
                _ => break,
            }
        }
        self.started = true;
        let (node, accepted) = self.simple_list()?;
        if accepted {
            return Ok(Some(node));
        }
        // The grammar's `EOF` terminal never matches: the tokenizer's end token is yacc's own
        // `$end`, which is only accepted once `inputunit` is complete. So a simple list must end
        // with a NEWLINE token (e.g. `echo a\\` + newline at the very end fails to parse).
        match self.peek_tt()? {
            Some(Tt::Newline) => {
                if self.tok.pstate & P_CMDSUBST != 0 {
                    self.tok.pstate |= P_EOFTOKEN;
                }
                Ok(Some(node))
            }
            _ => Err(perr()),
        }
    }

    /// `simple_list`; the flag says whether a command substitution accepted at `)`.
    fn simple_list(&mut self) -> R<(usize, bool)> {
        let mut parts = vec![self.pipeline_command()?];
        let mut last_ok = true; // no operator yet, or the last one was `;`
        let mut trailing = false;
        loop {
            let t = self.peek()?.clone();
            match t.tt {
                Some(Tt::AndAnd) | Some(Tt::OrOr) => {
                    self.next()?;
                    let op = self.operator(&t);
                    self.skip_newlines()?;
                    if !starts_pipeline(self.peek()?) {
                        return Err(perr());
                    }
                    let pc = self.pipeline_command()?;
                    parts.push(op);
                    parts.push(pc);
                    last_ok = false;
                }
                Some(Tt::Ampersand) | Some(Tt::Semicolon) => {
                    self.next()?;
                    let op = self.operator(&t);
                    parts.push(op);
                    if starts_pipeline(self.peek()?) {
                        let pc = self.pipeline_command()?;
                        parts.push(pc);
                        last_ok = t.is(Tt::Semicolon);
                    } else {
                        trailing = true;
                        break;
                    }
                }
                _ => break,
            }
        }
        self.gather()?;
        let node = if trailing || parts.len() > 1 {
            let mut n = Node::new(Kind::List, self.span(&parts));
            n.parts = parts;
            self.add(n)
        } else {
            parts[0]
        };
        if !trailing && self.tok.pstate & P_CMDSUBST != 0 && self.peek_tt()? == Some(Tt::RightParen) {
            if last_ok {
                return Ok((node, true));
            }
            return Err(perr());
        }
        Ok((node, false))
    }

    fn pipeline_command(&mut self) -> R<usize> {
        let t = self.peek()?.clone();
        match t.tt {
            Some(Tt::Bang) => {
                self.next()?;
                let bang = self.add(Node::new(Kind::ReservedWord, t.pos));
                let nt = self.peek()?.clone();
                if starts_pipeline(&nt) {
                    let inner = self.pipeline_command()?;
                    if self.arena[inner].kind == Kind::Pipeline {
                        self.arena[inner].parts.insert(0, bang);
                        let sp = self.span(&self.arena[inner].parts.clone());
                        self.arena[inner].pos = sp;
                        Ok(inner)
                    } else {
                        let mut n = Node::new(Kind::Pipeline, (t.pos.0, self.arena[inner].pos.1));
                        n.parts = vec![bang, inner];
                        Ok(self.add(n))
                    }
                } else if nt.is(Tt::Semicolon) {
                    self.next()?;
                    let op = self.operator(&nt);
                    let mut n = Node::new(Kind::Pipeline, (t.pos.0, nt.pos.1));
                    n.parts = vec![bang, op];
                    Ok(self.add(n))
                } else if nt.is(Tt::Newline) {
                    // `BANG list_terminator` with NEWLINE: the reduction (AttributeError on
                    // None.kind) needs a lookahead that may follow a pipeline_command.
                    self.next()?;
                    use Tt::*;
                    let follows = matches!(
                        self.peek_tt()?,
                        Some(
                            Newline
                                | Semicolon
                                | Ampersand
                                | AndAnd
                                | OrOr
                                | RightParen
                                | RightCurly
                                | Then
                                | Do
                                | Done
                                | Fi
                                | Else
                                | Elif
                                | Esac
                                | SemiSemi
                                | SemiAnd
                                | SemiSemiAnd
                        )
                    );
                    if follows {
                        Err(Err::new(ErrKind::Attribute))
                    } else {
                        Err(perr())
                    }
                } else {
                    Err(perr())
                }
            }
            Some(Tt::Time) => {
                self.next()?;
                if self.peek_tt()? == Some(Tt::TimeOpt) {
                    self.next()?;
                    if self.peek_tt()? == Some(Tt::TimeIgn) {
                        self.next()?;
                    }
                }
                let nt = self.peek()?.clone();
                if starts_pipeline(&nt) || matches!(nt.tt, Some(Tt::Newline | Tt::Semicolon | Tt::Eof)) {
                    Err(Err::new(ErrKind::NotImplemented))
                } else {
                    Err(perr())
                }
            }
            _ => self.pipeline(),
        }
    }

    fn pipeline(&mut self) -> R<usize> {
        let mut parts = vec![self.command()?];
        loop {
            let t = self.peek()?.clone();
            if t.is(Tt::Bar) || t.is(Tt::BarAnd) {
                self.next()?;
                let mut p = Node::new(Kind::Pipe, t.pos);
                p.op = t.val().to_string();
                let p = self.add(p);
                self.skip_newlines()?;
                if !starts_command(self.peek()?) {
                    return Err(perr());
                }
                let c = self.command()?;
                parts.push(p);
                parts.push(c);
            } else {
                break;
            }
        }
        if parts.len() == 1 {
            return Ok(parts[0]);
        }
        let mut n = Node::new(Kind::Pipeline, self.span(&parts));
        n.parts = parts;
        Ok(self.add(n))
    }

    fn command(&mut self) -> R<usize> {
        let t = self.peek()?.clone();
        match t.tt {
            Some(Tt::Function) => return self.function_def(),
            Some(Tt::Coproc) => {
                self.next()?;
                // every coproc form ends in NotImplementedError once it parses
                if starts_shell_command(self.peek()?) {
                    self.shell_command()?;
                } else if self.peek_tt()? == Some(Tt::Word) {
                    self.simple_command()?;
                } else {
                    return Err(perr());
                }
                return Err(Err::new(ErrKind::NotImplemented));
            }
            _ => {}
        }
        if starts_shell_command(&t) {
            let sc = self.shell_command()?;
            if starts_redirection(self.peek()?) {
                let mut reds = Vec::new();
                while starts_redirection(self.peek()?) {
                    reds.push(self.redirection()?);
                }
                self.attach_redirects(sc, reds)?;
            }
            return Ok(sc);
        }
        if t.is(Tt::Word) {
            // `WORD ( ) ...` is a function definition
            self.next()?;
            if self.peek_tt()? == Some(Tt::LeftParen) {
                return self.function_def_named(t);
            }
            let first = self.expand_word(&t, Kind::Word)?;
            return self.simple_command_from(vec![first]);
        }
        if starts_command(&t) {
            return self.simple_command();
        }
        Err(perr())
    }

    fn attach_redirects(&mut self, sc: usize, reds: Vec<usize>) -> R<()> {
        self.arena[sc].redirects.extend(reds);
        let last_end = self.arena[*self.arena[sc].redirects.last().unwrap()].pos.1;
        if self.arena[sc].pos.0 >= last_end {
            return Err(Err::new(ErrKind::Assertion));
        }
        self.arena[sc].pos.1 = last_end;
        Ok(())
    }

    fn simple_command(&mut self) -> R<usize> {
        self.simple_command_from(vec![])
    }

    fn simple_command_from(&mut self, mut parts: Vec<usize>) -> R<usize> {
        loop {
            let t = self.peek()?.clone();
            match t.tt {
                Some(Tt::Word) | Some(Tt::AssignmentWord) => {
                    self.next()?;
                    self.peek()?;
                    let kind = if t.is(Tt::AssignmentWord) { Kind::Assignment } else { Kind::Word };
                    let w = self.expand_word(&t, kind)?;
                    parts.push(w);
                }
                _ if starts_redirection(&t) => {
                    let r = self.redirection()?;
                    parts.push(r);
                }
                _ => break,
            }
        }
        if parts.is_empty() {
            return Err(perr());
        }
        let mut n = Node::new(Kind::Command, self.span(&parts));
        n.parts = parts;
        Ok(self.add(n))
    }

    fn redirection(&mut self) -> R<usize> {
        let first = self.next()?;
        let op = if first.is(Tt::Number) || first.is(Tt::RedirWord) { self.next()? } else { first.clone() };
        let with_input = first.is(Tt::Number) || first.is(Tt::RedirWord);
        use Tt::*;
        let optt = op.tt.ok_or_else(perr)?;
        match optt {
            LessLess | LessLessMinus => {
                let w = self.expect(Word)?;
                let out = self.add(Node::new(Kind::Word, w.pos));
                let mut n = Node::new(Kind::Redirect, (first.pos.0, w.pos.1));
                n.output = Some(out);
                let id = self.add(n);
                self.peek()?;
                self.tok.heredoc_words.push((id, w.val().to_string()));
                self.tok.redirstack.push((id, optt == LessLessMinus));
                Ok(id)
            }
            Greater | Less | GreaterGreater | GreaterBar | LessGreater | LessLessLess | AndGreater
            | AndGreaterGreater => {
                if with_input && matches!(optt, AndGreater | AndGreaterGreater) {
                    return Err(perr());
                }
                let w = self.expect(Word)?;
                self.peek()?;
                let out = self.expand_word(&w, Kind::Word)?;
                let mut n = Node::new(Kind::Redirect, (first.pos.0, w.pos.1));
                n.output = Some(out);
                Ok(self.add(n))
            }
            LessAnd | GreaterAnd => {
                let w = self.next()?;
                let out = match w.tt {
                    Some(Number) | Some(Dash) => None,
                    Some(Word) => {
                        self.peek()?;
                        Some(self.expand_word(&w, Kind::Word)?)
                    }
                    _ => return Err(perr()),
                };
                let mut n = Node::new(Kind::Redirect, (first.pos.0, w.pos.1));
                n.output = out;
                Ok(self.add(n))
            }
            _ => Err(perr()),
        }
    }
}
