//! Python's `difflib.unified_diff` and its hunk-range formatting.

use std::hash::Hash;

use crate::matcher::{Opcode, SequenceMatcher, Tag};

/// All arguments of Python's `unified_diff` besides the two sequences.
#[derive(Clone, Copy, Debug)]
pub struct UnifiedDiffOptions<'s> {
    /// `fromfile` (default `''`).
    pub fromfile: &'s str,
    /// `tofile` (default `''`).
    pub tofile: &'s str,
    /// `fromfiledate`; when non-empty it follows the name after a tab (default `''`).
    pub fromfiledate: &'s str,
    /// `tofiledate` (default `''`).
    pub tofiledate: &'s str,
    /// Lines of context, `n` (default 3).
    pub n: usize,
    /// `lineterm`, appended to the `---`, `+++` and `@@` lines only (default `"\n"`). Content
    /// lines are emitted as `prefix + line`, so their terminator is whatever the line holds.
    pub lineterm: &'s str,
}

impl Default for UnifiedDiffOptions<'_> {
    fn default() -> Self {
        UnifiedDiffOptions { fromfile: "", tofile: "", fromfiledate: "", tofiledate: "", n: 3, lineterm: "\n" }
    }
}

/// Python's `_format_range_unified(start, stop)`: `"{start+1}"` for a single line,
/// otherwise `"{beginning},{length}"`, where an empty range names the line before it.
pub fn format_range_unified(start: usize, stop: usize) -> String {
    let beginning = start + 1;
    let length = stop - start;
    if length == 1 {
        return beginning.to_string();
    }
    let beginning = if length == 0 { beginning - 1 } else { beginning };
    format!("{beginning},{length}")
}

/// `difflib.unified_diff(a, b, fromfile, tofile, n=n)` with the default `lineterm='\n'`: the
/// list of generated lines. Header and `@@` lines end in `"\n"`; content lines are
/// `' '`/`'-'`/`'+'` followed by the element unchanged. Empty when the sequences are equal.
///
/// ```
/// let a = ["one", "two", "three"];
/// let b = ["one", "2", "three"];
/// let d = oh_difflib::unified_diff(&a, &b, "x", "y", 0);
/// assert_eq!(d, ["--- x\n", "+++ y\n", "@@ -2 +2 @@\n", "-two", "+2"]);
/// ```
pub fn unified_diff<S: AsRef<str> + Hash + Eq>(
    a: &[S],
    b: &[S],
    fromfile: &str,
    tofile: &str,
    n: usize,
) -> Vec<String> {
    unified_diff_with(a, b, &UnifiedDiffOptions { fromfile, tofile, n, ..Default::default() })
}

/// `difflib.unified_diff` with every argument given explicitly.
pub fn unified_diff_with<S: AsRef<str> + Hash + Eq>(a: &[S], b: &[S], opts: &UnifiedDiffOptions<'_>) -> Vec<String> {
    let mut out = Vec::new();
    emit_unified(a, b, opts, |pieces| out.push(pieces.concat()));
    out
}

/// Drives `unified_diff`, handing each output line to `sink` as the pieces it concatenates.
pub(crate) fn emit_unified<S: AsRef<str> + Hash + Eq>(
    a: &[S],
    b: &[S],
    opts: &UnifiedDiffOptions<'_>,
    sink: impl FnMut(&[&str]),
) {
    let sm = SequenceMatcher::new(a, b);
    let groups = sm.get_grouped_opcodes(opts.n);
    emit_groups(&groups, |i| a[i].as_ref(), |j| b[j].as_ref(), opts, sink);
}

/// The output of `unified_diff` for already grouped opcodes; `a_at(i)` / `b_at(j)` give the
/// elements.
pub(crate) fn emit_groups<'x>(
    groups: &[Vec<Opcode>],
    a_at: impl Fn(usize) -> &'x str,
    b_at: impl Fn(usize) -> &'x str,
    opts: &UnifiedDiffOptions<'_>,
    mut sink: impl FnMut(&[&str]),
) {
    if groups.is_empty() {
        return;
    }
    let fromdate = if opts.fromfiledate.is_empty() { "" } else { "\t" };
    let todate = if opts.tofiledate.is_empty() { "" } else { "\t" };
    sink(&["--- ", opts.fromfile, fromdate, opts.fromfiledate, opts.lineterm]);
    sink(&["+++ ", opts.tofile, todate, opts.tofiledate, opts.lineterm]);
    for group in groups {
        let (first, last) = (group[0], group[group.len() - 1]);
        let r1 = format_range_unified(first.i1, last.i2);
        let r2 = format_range_unified(first.j1, last.j2);
        sink(&["@@ -", &r1, " +", &r2, " @@", opts.lineterm]);
        for op in group {
            match op.tag {
                Tag::Equal => {
                    for i in op.i1..op.i2 {
                        sink(&[" ", a_at(i)]);
                    }
                }
                Tag::Replace | Tag::Delete | Tag::Insert => {
                    if op.tag != Tag::Insert {
                        for i in op.i1..op.i2 {
                            sink(&["-", a_at(i)]);
                        }
                    }
                    if op.tag != Tag::Delete {
                        for j in op.j1..op.j2 {
                            sink(&["+", b_at(j)]);
                        }
                    }
                }
            }
        }
    }
}
