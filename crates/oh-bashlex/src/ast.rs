//! The parse tree: bashlex's nodes, kept in an arena (`Arena`, indices for ids), with only the
//! attributes OpenHands looks at, and the walks over it that the splitting and escaping use.

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
    pub(crate) fn new(kind: Kind, pos: (usize, usize)) -> Node {
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

pub(crate) fn collect(arena: &Arena, id: usize) -> Vec<usize> {
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
