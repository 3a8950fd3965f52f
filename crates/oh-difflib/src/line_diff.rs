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

use memchr::{memchr, memrchr};

use crate::matcher::{group_opcodes, opcodes_from_blocks, BInterner, Index, ABSENT};
use crate::unified::{emit_groups, UnifiedDiffOptions};

/// `text.split('\n')` as slices.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    for_each_newline(text.as_bytes(), |nl| {
        lines.push(&text[start..nl]);
        start = nl + 1;
    });
    lines.push(&text[start..]);
    lines
}

/// Number of `'\n'` bytes.
fn count_newlines(bytes: &[u8]) -> usize {
    let mut count = 0;
    for_each_newline(bytes, |_| count += 1);
    count
}

/// Calls `f` with the offset of every `'\n'`, in order. On x86_64 this tests 16 bytes at a
/// time with SSE2 (part of the x86_64 baseline), which beats restarting `memchr` for every
/// short line.
#[cfg(target_arch = "x86_64")]
fn for_each_newline(bytes: &[u8], mut f: impl FnMut(usize)) {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let n = bytes.len();
    let mut base = 0;
    // SAFETY: SSE2 is always available on x86_64, and every load reads the 16 bytes
    // `bytes[base..base + 16]`, which are in bounds.
    unsafe {
        let nl = _mm_set1_epi8(b'\n' as i8);
        while base + 16 <= n {
            let chunk = _mm_loadu_si128(bytes.as_ptr().add(base) as *const _);
            let mut mask = _mm_movemask_epi8(_mm_cmpeq_epi8(chunk, nl)) as u32;
            while mask != 0 {
                f(base + mask.trailing_zeros() as usize);
                mask &= mask - 1;
            }
            base += 16;
        }
    }
    for (k, &c) in bytes[base..].iter().enumerate() {
        if c == b'\n' {
            f(base + k);
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn for_each_newline(bytes: &[u8], mut f: impl FnMut(usize)) {
    for nl in memchr::memchr_iter(b'\n', bytes) {
        f(nl);
    }
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
    for_each_newline(nb, |nl| {
        b.push(&new[start..nl]);
        interner.add_last(&b);
        start = nl + 1;
    });
    b.push(&new[start..]);
    interner.add_last(&b);
    let lb = b.len();

    // Line-level common prefix: every '\n' inside the common byte prefix ends a line that is
    // the same in both texts, at the same index. `off` is where the next line starts.
    let (pre, off) = match memrchr(b'\n', &ob[..pre_bytes]) {
        Some(last) => (count_newlines(&ob[..pre_bytes]), last + 1),
        None => (0, 0),
    };
    // Line-level common suffix, over what follows the prefix lines: every '\n' inside the
    // common byte suffix starts a line that is the same in both texts, at the same distance
    // from the end. `mid_end` is the '\n' before the first such line.
    let suf_bytes = common_suffix(&ob[off..], &nb[off..]);
    let tail = &ob[ob.len() - suf_bytes..];
    let (suf, mid_end) = match memchr(b'\n', tail) {
        Some(first) => (count_newlines(tail), ob.len() - suf_bytes + first),
        None => (0, ob.len()),
    };
    let a_mid = split_lines(&old[off..mid_end]);
    let la = pre + a_mid.len() + suf;

    let mut a_ids = Vec::with_capacity(la);
    a_ids.extend_from_slice(&interner.b_ids[..pre]);
    a_ids.extend(a_mid.iter().map(|line| interner.id_of(&b, *line)));
    a_ids.extend_from_slice(&interner.b_ids[lb - suf..]);
    debug_assert_eq!(a_ids.len(), la);
    debug_assert!(a_ids.iter().all(|&id| id == ABSENT || (id as usize) < interner.counts.len()));

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
    let mut out = String::new();
    emit_groups(&groups, a_at, |j| b[j], &get_diff_options(path), rstrip_joiner(&mut out));
    out
}

/// `unified_diff(..., fromfile=path, tofile=path, n=0)`, as `get_diff` calls it.
pub(crate) fn get_diff_options(path: &str) -> UnifiedDiffOptions<'_> {
    UnifiedDiffOptions { fromfile: path, tofile: path, n: 0, ..Default::default() }
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
        let kept = oh_pysem::rstrip(&out[start..]).len();
        out.truncate(start + kept);
    }
}
