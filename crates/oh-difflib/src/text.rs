//! `get_diff` specialised for two texts split on `'\n'`.
//!
//! Same algorithm as the generic path ([`crate::SequenceMatcher`] + `unified_diff`), with two
//! shortcuts that change no result:
//!
//! * Lines are found with `memchr` and the lines of `new` are numbered through one hash table.
//! * Lines of `old` that lie in the byte-wise common prefix or suffix of the two texts are
//!   equal to the line of `new` at the same index (from the start, respectively from the end),
//!   so they take that line's id without being hashed; only the lines in between are looked up.
//!   This only skips hashing: every line still takes part in the matcher, so the autojunk
//!   counts and all of `SequenceMatcher`'s choices are untouched.

use memchr::{memchr, memchr_iter, memrchr};

use crate::matcher::{group_opcodes, opcodes_from_blocks, BInterner, Index, ABSENT};
use crate::unified::{emit_groups, UnifiedDiffOptions};

/// `text.split('\n')` as slices.
fn split_lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    for nl in memchr_iter(b'\n', bytes) {
        lines.push(&text[start..nl]);
        start = nl + 1;
    }
    lines.push(&text[start..]);
    lines
}

const CHUNK: usize = 256;

/// Length of the longest common prefix of two byte strings.
fn common_prefix(x: &[u8], y: &[u8]) -> usize {
    let n = x.len().min(y.len());
    let mut i = 0;
    while i + CHUNK <= n && x[i..i + CHUNK] == y[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < n && x[i] == y[i] {
        i += 1;
    }
    i
}

/// Length of the longest common suffix of two byte strings.
fn common_suffix(x: &[u8], y: &[u8]) -> usize {
    let n = x.len().min(y.len());
    let (lx, ly) = (x.len(), y.len());
    let mut k = 0;
    while k + CHUNK <= n && x[lx - k - CHUNK..lx - k] == y[ly - k - CHUNK..ly - k] {
        k += CHUNK;
    }
    while k < n && x[lx - k - 1] == y[ly - k - 1] {
        k += 1;
    }
    k
}

/// `get_diff` (see the crate root).
pub(crate) fn get_diff_text(old: &str, new: &str, path: &str) -> String {
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let pre_bytes = common_prefix(ob, nb);
    if pre_bytes == ob.len() && pre_bytes == nb.len() {
        // Equal texts: all opcodes are `equal`, so `unified_diff` yields nothing.
        return String::new();
    }

    // `new.split('\n')`, numbering every line as soon as it is found.
    let mut b: Vec<&str> = Vec::with_capacity(nb.len() / 32 + 1);
    let mut interner = BInterner::with_capacity(nb.len() / 32 + 1);
    let mut start = 0;
    for nl in memchr_iter(b'\n', nb) {
        b.push(&new[start..nl]);
        interner.add_last(&b);
        start = nl + 1;
    }
    b.push(&new[start..]);
    interner.add_last(&b);
    let lb = b.len();

    // Line-level common prefix: every '\n' inside the common byte prefix ends a line that is
    // the same in both texts, at the same index. `off` is where the next line starts.
    let (pre, off) = match memrchr(b'\n', &ob[..pre_bytes]) {
        Some(last) => (memchr_iter(b'\n', &ob[..pre_bytes]).count(), last + 1),
        None => (0, 0),
    };
    // Line-level common suffix, over what follows the prefix lines: every '\n' inside the
    // common byte suffix starts a line that is the same in both texts, at the same distance
    // from the end. `mid_end` is the '\n' before the first such line.
    let suf_bytes = common_suffix(&ob[off..], &nb[off..]);
    let tail = &ob[ob.len() - suf_bytes..];
    let (suf, mid_end) = match memchr(b'\n', tail) {
        Some(first) => (
            memchr_iter(b'\n', tail).count(),
            ob.len() - suf_bytes + first,
        ),
        None => (0, ob.len()),
    };
    let a_mid = split_lines(&old[off..mid_end]);
    let la = pre + a_mid.len() + suf;

    let mut a_ids = Vec::with_capacity(la);
    a_ids.extend_from_slice(&interner.b_ids[..pre]);
    a_ids.extend(a_mid.iter().map(|line| interner.id_of(&b, *line)));
    a_ids.extend_from_slice(&interner.b_ids[lb - suf..]);
    debug_assert_eq!(a_ids.len(), la);
    debug_assert!(a_ids
        .iter()
        .all(|&id| id == ABSENT || (id as usize) < interner.counts.len()));

    let BInterner { b_ids, counts, .. } = interner;
    let index = Index::from_ids(a_ids, b_ids, &counts, true);
    let groups = group_opcodes(opcodes_from_blocks(&index.matching_blocks()), 0);

    let a_at = |i: usize| -> &str {
        if i < pre {
            b[i]
        } else if i >= la - suf {
            b[i + lb - la]
        } else {
            a_mid[i - pre]
        }
    };
    let opts = UnifiedDiffOptions {
        fromfile: path,
        tofile: path,
        n: 0,
        ..Default::default()
    };
    let mut out = String::new();
    emit_groups(&groups, a_at, |j| b[j], &opts, rstrip_joiner(&mut out));
    out
}

/// A sink for `emit_groups` that appends each line right-stripped (Python `str.rstrip()`),
/// separated by `'\n'`.
pub(crate) fn rstrip_joiner(out: &mut String) -> impl FnMut(&[&str]) + '_ {
    let mut first = true;
    move |pieces: &[&str]| {
        if !first {
            out.push('\n');
        }
        first = false;
        let start = out.len();
        for p in pieces {
            out.push_str(p);
        }
        let kept = crate::py_rstrip(&out[start..]).len();
        out.truncate(start + kept);
    }
}
