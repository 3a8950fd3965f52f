//! A byte-exact port of Python's `difflib.SequenceMatcher` and `difflib.unified_diff`, plus
//! `openhands_aci.utils.diff.get_diff`, so that the diffs in OHEditor observations are identical
//! to the Python reference.
//!
//! * [`get_diff`]: what the runtime calls.
//! * [`SequenceMatcher`]: the generic matcher (`isjunk=None`, autojunk on by default) over any
//!   `Hash + Eq` elements: matching blocks, opcodes, grouped opcodes.
//! * [`unified_diff`] / [`unified_diff_with`]: Python's `unified_diff` generator as a `Vec`.
//! * Python's `str.rstrip()` with no argument comes from `oh-pysem`.
//!
//! Parity is checked differentially (`tests/parity.rs`) against a fixture generated from the
//! real Python code by `tests/gen_cases.py` (openhands-aci's `get_diff`, CPython's `difflib`).
//!
//! Performance: the matcher does the same search as difflib (its worst cases stay
//! quadratic-ish, like Python's), but on integer ids with dense arrays. [`get_diff`] additionally
//! avoids hashing the lines of `old` that lie in the common prefix/suffix of the two texts (it
//! copies their ids from `new`); it never *skips* those lines in the matcher, because trimming
//! them would change difflib's answer (the autojunk counts and the longest-match choice both
//! depend on them). `benches/diff.rs` measures a 100,000-line file with one changed line.

mod line_diff;
mod matcher;
mod unified;

pub use matcher::{Match, Opcode, SequenceMatcher, Tag};
pub use unified::{format_range_unified, unified_diff, unified_diff_with, UnifiedDiffOptions};

/// `openhands_aci.utils.diff.get_diff(old, new, path)`: unified diff with zero context of
/// `old.split('\n')` against `new.split('\n')`, every line right-stripped, joined with `\n`.
///
/// In Python:
/// ```python
/// diff = list(difflib.unified_diff(old.split('\n'), new.split('\n'),
///                                  fromfile=path, tofile=path, n=0))
/// return '\n'.join(map(lambda x: x.rstrip(), diff))
/// ```
///
/// ```
/// assert_eq!(
///     oh_difflib::get_diff("x\ny", "x\nyNEW\n", "/workspace/n.txt"),
///     "--- /workspace/n.txt\n+++ /workspace/n.txt\n@@ -2 +2,2 @@\n-y\n+yNEW\n+"
/// );
/// assert_eq!(oh_difflib::get_diff("same", "same", "f"), "");
/// ```
pub fn get_diff(old: &str, new: &str, path: &str) -> String {
    line_diff::get_diff_text(old, new, path)
}

/// [`get_diff`] computed the plain way (split, generic [`SequenceMatcher`], `unified_diff`),
/// without the text-specific shortcuts; for cross-checking.
#[doc(hidden)]
pub fn get_diff_reference(old: &str, new: &str, path: &str) -> String {
    let a: Vec<&str> = old.split('\n').collect();
    let b: Vec<&str> = new.split('\n').collect();
    let mut out = String::new();
    let opts = line_diff::get_diff_options(path);
    unified::emit_unified(&a, &b, &opts, line_diff::rstrip_joiner(&mut out));
    out
}
