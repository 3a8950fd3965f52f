//! Recursive-descent parser accepting the language of bashlex 0.18's yacc grammar (bash's
//! `parse.y` subset), building only the node attributes OpenHands looks at, plus word
//! expansion (`subst.py`), which recursively parses command and process substitutions.

use crate::lexer::{shellblank, Tok, Tokenizer, Tt, P_CMDSUBST, P_EOFTOKEN, W_QUOTED};
use crate::{Err, ErrKind, R};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    List,
    Pipeline,
    Command,
    Compound,
    If,
    For,
    While,
    Until,
    Function,
    Word,
    Assignment,
    Redirect,
    Heredoc,
    Operator,
    ReservedWord,
    Pipe,
    CommandSubst,
    ProcessSubst,
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub kind: Kind,
    pub pos: (usize, usize),
    /// `parts` (list, pipeline, command, function, if/for/while/until, word), or `list` for
    /// compounds.
    pub parts: Vec<usize>,
    pub redirects: Vec<usize>,
    /// redirect output word node, if it is a node
    pub output: Option<usize>,
    pub heredoc: Option<usize>,
    /// substitution command
    pub command: Option<usize>,
    /// operator text (for `;` detection in `for`)
    pub op: String,
}

impl Node {
    fn new(kind: Kind, pos: (usize, usize)) -> Node {
        Node {
            kind,
            pos,
            parts: vec![],
            redirects: vec![],
            output: None,
            heredoc: None,
            command: None,
            op: String::new(),
        }
    }
    /// Whether the Python node has a `parts` attribute.
    pub fn has_parts(&self) -> bool {
        matches!(
            self.kind,
            Kind::List
                | Kind::Pipeline
                | Kind::Command
                | Kind::Function
                | Kind::If
                | Kind::For
                | Kind::While
                | Kind::Until
                | Kind::Word
                | Kind::Assignment
        )
    }
}

pub(crate) type Arena = Vec<Node>;

/// Visit `id` and its descendants in bashlex `nodevisitor` order.
pub(crate) fn walk(arena: &Arena, id: usize, f: &mut dyn FnMut(usize)) {
    f(id);
    let n = &arena[id];
    match n.kind {
        Kind::Compound => {
            for &c in &n.parts {
                walk(arena, c, f);
            }
            for &c in &n.redirects {
                walk(arena, c, f);
            }
        }
        Kind::Redirect => {
            if let Some(o) = n.output {
                walk(arena, o, f);
            }
            if let Some(h) = n.heredoc {
                walk(arena, h, f);
            }
        }
        Kind::CommandSubst | Kind::ProcessSubst => {
            if let Some(c) = n.command {
                walk(arena, c, f);
            }
        }
        _ => {
            for &c in &n.parts {
                walk(arena, c, f);
            }
        }
    }
}

fn collect(arena: &Arena, id: usize) -> Vec<usize> {
    let mut v = Vec::new();
    walk(arena, id, &mut |i| v.push(i));
    v
}

pub(crate) fn shift(arena: &mut Arena, id: usize, by: usize) {
    for i in collect(arena, id) {
        arena[i].pos.0 += by;
        arena[i].pos.1 += by;
    }
}

/// The end of the last here-document visited under `id` (bashlex `_endfinder`), or None.
pub(crate) fn heredoc_end(arena: &Arena, id: usize) -> Option<usize> {
    let mut end = None;
    walk(arena, id, &mut |i| {
        if arena[i].kind == Kind::Heredoc {
            end = Some(arena[i].pos.1);
        }
    });
    end
}

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

    fn shell_command(&mut self) -> R<usize> {
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

    fn function_def(&mut self) -> R<usize> {
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

    fn function_def_named(&mut self, name: Tok) -> R<usize> {
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

    // ------------------------------------------------------------------ word expansion

    fn prev_tokens(&self) -> (Tok, Tok, Tok) {
        (self.tok.two_ago.clone(), self.tok.before_that.clone(), self.tok.last_read.clone())
    }

    /// `_expandword` followed by the position shift of the substitution nodes.
    fn expand_word(&mut self, t: &Tok, kind: Kind) -> R<usize> {
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

#[allow(dead_code)]
fn _unused(c: char) -> bool {
    shellblank(c)
}
