//! `SequenceMatcher`: the Ratcliff/Obershelp-style matcher of Python's `difflib`, reproduced so that
//! matching blocks, opcodes and grouped opcodes are identical to CPython's for `isjunk=None`.
//!
//! Algorithm summary (what has to match Python exactly):
//!
//! * `b` is indexed: for every distinct element, the ascending list of its positions in `b`.
//!   With `autojunk` (the default) and `len(b) >= 200`, an element occurring more than
//!   `len(b) / 100 + 1` times is *popular* and gets no index entry, so it can never seed a
//!   match. Popular elements still compare equal when a match is extended.
//! * `find_longest_match` scans `a[alo..ahi]` in order; for every `i` and every indexed position
//!   `j` of `a[i]` inside `[blo, bhi)`, the run length ending at `(i, j)` is one more than the run
//!   ending at `(i-1, j-1)`. The first run (in scan order) that is strictly longer than every
//!   earlier one wins. The winner is then grown backwards and forwards over equal elements
//!   (popular ones included). When no seed exists the "winner" is the empty match at
//!   `(alo, blo)`, which the forward extension may still grow.
//! * `get_matching_blocks` applies that recursively to the pieces left and right of each match,
//!   sorts the matches and fuses adjacent ones, and appends the `(len(a), len(b), 0)` sentinel.
//!
//! Internally every element is mapped to a dense integer id (elements of `a` that never occur in
//! `b` share one id that matches nothing), so the hot loops compare and index integers only.
//! Python's per-row dictionaries `j2len` become one dense array indexed by `j` whose entries are
//! stamped with the row that wrote them; each row is scanned with descending `j` so the previous
//! row's entry `j - 1` is still intact when read, and the row's winner is chosen exactly as
//! Python's ascending scan would (longest run, smallest `j`). None of this changes a result.

use std::cell::OnceCell;
use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;

/// Id given to elements of `a` that do not occur in `b` at all.
pub(crate) const ABSENT: u32 = u32::MAX;

/// A matching block: `a[a..a+size] == b[b..b+size]` (Python's `Match(a, b, size)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Match {
    /// Start in `a`.
    pub a: usize,
    /// Start in `b`.
    pub b: usize,
    /// Length of the block.
    pub size: usize,
}

/// The kind of an opcode, as in Python's `get_opcodes` tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tag {
    /// `a[i1..i2]` should be replaced by `b[j1..j2]`.
    Replace,
    /// `a[i1..i2]` should be deleted (`j1 == j2`).
    Delete,
    /// `b[j1..j2]` should be inserted at `a[i1..i1]` (`i1 == i2`).
    Insert,
    /// `a[i1..i2] == b[j1..j2]`.
    Equal,
}

impl Tag {
    /// The Python spelling: `"replace"`, `"delete"`, `"insert"` or `"equal"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tag::Replace => "replace",
            Tag::Delete => "delete",
            Tag::Insert => "insert",
            Tag::Equal => "equal",
        }
    }
}

/// One edit operation `(tag, i1, i2, j1, j2)`, as returned by Python's `get_opcodes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Opcode {
    pub tag: Tag,
    pub i1: usize,
    pub i2: usize,
    pub j1: usize,
    pub j2: usize,
}

impl Opcode {
    fn new(tag: Tag, i1: usize, i2: usize, j1: usize, j2: usize) -> Self {
        Opcode { tag, i1, i2, j1, j2 }
    }
}

/// The integer form of the two sequences plus the index of `b`.
pub(crate) struct Index {
    a: Vec<u32>,
    b: Vec<u32>,
    /// For id `k`: the positions of `k` in `b` are `b2j_pos[b2j_range[k].0..b2j_range[k].1]`
    /// (empty for popular elements).
    b2j_range: Vec<(u32, u32)>,
    b2j_pos: Vec<u32>,
    /// Number of popular ids.
    popular: usize,
}

/// Reusable buffers for [`Index::find_longest_match`].
struct Scratch {
    /// `(stamp << 32) | run_length` of the run ending at `(i, j)`, indexed by `j`; the stamp
    /// tells which row `i` wrote it.
    runs: Vec<u64>,
    /// Last stamp handed out.
    stamp: u32,
}

impl Scratch {
    fn new(lb: usize) -> Self {
        Scratch { runs: vec![0; lb], stamp: 0 }
    }
}

/// The distinct elements of `b`, each represented by its first position.
pub(crate) struct BInterner {
    state: foldhash::fast::RandomState,
    /// Entries are first positions `j` in `b`; the element is `b[j]`, its id `b_ids[j]`.
    table: HashTable<u32>,
    /// Id of every element of `b` (ids numbered in order of first appearance).
    pub(crate) b_ids: Vec<u32>,
    /// Occurrences of every id in `b`.
    pub(crate) counts: Vec<u32>,
}

impl BInterner {
    /// Numbers the elements of `b` (`b.len()` must fit in `u32`).
    pub(crate) fn new<T: Hash + Eq + ?Sized>(b: &[&T]) -> Self {
        let mut this = Self::with_capacity(b.len());
        for j in 0..b.len() {
            this.add_last(&b[..=j]);
        }
        this
    }

    /// An empty interner expecting about `n` elements.
    pub(crate) fn with_capacity(n: usize) -> Self {
        BInterner {
            state: foldhash::fast::RandomState::default(),
            table: HashTable::with_capacity(n),
            b_ids: Vec::with_capacity(n),
            counts: Vec::new(),
        }
    }

    /// Numbers the last element of `b`; the earlier ones must have been added already.
    #[inline]
    pub(crate) fn add_last<T: Hash + Eq + ?Sized>(&mut self, b: &[&T]) {
        let j = b.len() - 1;
        assert!(j < u32::MAX as usize - 1, "sequence too long");
        let x = b[j];
        let state = &self.state;
        let hash = state.hash_one(x);
        let entry = self.table.entry(hash, |&first| b[first as usize] == x, |&first| state.hash_one(b[first as usize]));
        match entry {
            hashbrown::hash_table::Entry::Occupied(o) => {
                let id = self.b_ids[*o.get() as usize];
                self.counts[id as usize] += 1;
                self.b_ids.push(id);
            }
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert(j as u32);
                let id = self.counts.len() as u32;
                self.counts.push(1);
                self.b_ids.push(id);
            }
        }
    }

    /// The id of `x` in `b`, or [`ABSENT`].
    #[inline]
    pub(crate) fn id_of<T: Hash + Eq + ?Sized>(&self, b: &[&T], x: &T) -> u32 {
        let hash = self.state.hash_one(x);
        match self.table.find(hash, |&first| b[first as usize] == x) {
            Some(&first) => self.b_ids[first as usize],
            None => ABSENT,
        }
    }
}

impl Index {
    fn build<T: Hash + Eq>(a: &[T], b: &[T], autojunk: bool) -> Index {
        let la = a.len();
        let lb = b.len();
        assert!(la < u32::MAX as usize, "sequence too long");
        let b_refs: Vec<&T> = b.iter().collect();
        let interner = BInterner::new(&b_refs);

        // `a`: where `a[i] == b[i]` (common prefix) or `a[la-k] == b[lb-k]` (common suffix) the id
        // is copied, which is cheaper than hashing; everything else is looked up.
        let b_ids = &interner.b_ids;
        let mut a_ids = vec![ABSENT; la];
        let common = la.min(lb);
        let mut pre = 0;
        while pre < common && a[pre] == b[pre] {
            a_ids[pre] = b_ids[pre];
            pre += 1;
        }
        let mut suf = 0;
        while suf < common - pre && a[la - 1 - suf] == b[lb - 1 - suf] {
            a_ids[la - 1 - suf] = b_ids[lb - 1 - suf];
            suf += 1;
        }
        for i in pre..la - suf {
            a_ids[i] = interner.id_of(&b_refs, &a[i]);
        }
        let BInterner { b_ids, counts, .. } = interner;
        Index::from_ids(a_ids, b_ids, &counts, autojunk)
    }

    /// Builds the index from integer ids: `b_ids[j] < counts.len()`, `counts[k]` = occurrences of
    /// `k` in `b_ids`; `a_ids[i]` is an id of `b` or [`ABSENT`].
    pub(crate) fn from_ids(a_ids: Vec<u32>, b_ids: Vec<u32>, counts: &[u32], autojunk: bool) -> Index {
        let lb = b_ids.len();

        // Positions of every id in `b`, as one flat array (CSR layout).
        let nids = counts.len();
        let mut b2j_range = Vec::with_capacity(nids);
        let mut start = 0u32;
        for &c in counts {
            b2j_range.push((start, start));
            start += c;
        }
        let mut b2j_pos = vec![0u32; lb];
        for (j, &id) in b_ids.iter().enumerate() {
            let r = &mut b2j_range[id as usize];
            b2j_pos[r.1 as usize] = j as u32;
            r.1 += 1;
        }

        // Python: `if self.autojunk and n >= 200: ntest = n // 100 + 1` and every element with
        // more than `ntest` positions is dropped from `b2j`.
        let mut popular = 0;
        if autojunk && lb >= 200 {
            let ntest = (lb / 100 + 1) as u32;
            for (r, &c) in b2j_range.iter_mut().zip(counts) {
                if c > ntest {
                    r.1 = r.0;
                    popular += 1;
                }
            }
        }

        Index { a: a_ids, b: b_ids, b2j_range, b2j_pos, popular }
    }

    #[inline]
    fn positions(&self, id: u32) -> &[u32] {
        if id == ABSENT {
            return &[];
        }
        let (s, e) = self.b2j_range[id as usize];
        &self.b2j_pos[s as usize..e as usize]
    }

    fn find_longest_match(&self, scratch: &mut Scratch, alo: usize, ahi: usize, blo: usize, bhi: usize) -> Match {
        let a = &self.a;
        let b = &self.b;
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0usize);

        if alo < ahi && blo < bhi {
            let rows_needed = (ahi - alo) as u64 + 2;
            if scratch.stamp as u64 + rows_needed >= u32::MAX as u64 {
                scratch.runs.iter_mut().for_each(|x| *x = 0);
                scratch.stamp = 0;
            }
            // Leave a gap of one stamp so that nothing written by an earlier call can pass for
            // the row before `alo`.
            let mut stamp = scratch.stamp + 1;
            let runs = &mut scratch.runs[..];
            let (blo32, bhi32) = (blo as u32, bhi as u32);
            for (i, &ai) in (alo..ahi).zip(&a[alo..ahi]) {
                stamp += 1;
                let pos = self.positions(ai);
                if pos.is_empty() {
                    continue;
                }
                // Positions inside [blo, bhi).
                let first = if blo32 <= pos[0] { 0 } else { pos.partition_point(|&j| j < blo32) };
                let end = if pos[pos.len() - 1] < bhi32 { pos.len() } else { pos.partition_point(|&j| j < bhi32) };
                let want = ((stamp - 1) as u64) << 32;
                let tag = (stamp as u64) << 32;
                // Descending `j`, so `runs[j - 1]` still holds row `i - 1` when it is read. The
                // row's winner is its longest run, the smallest `j` among equals: exactly what
                // Python's ascending scan with `k > bestsize` keeps.
                let (mut row_k, mut row_j) = (0u32, 0usize);
                for &j in pos[first..end].iter().rev() {
                    let j = j as usize;
                    let k = match j.checked_sub(1).map(|p| runs[p]) {
                        Some(p) if p & 0xffff_ffff_0000_0000 == want => (p as u32) + 1,
                        _ => 1,
                    };
                    runs[j] = tag | k as u64;
                    if k >= row_k {
                        row_k = k;
                        row_j = j;
                    }
                }
                let k = row_k as usize;
                if k > bestsize {
                    besti = i + 1 - k;
                    bestj = row_j + 1 - k;
                    bestsize = k;
                }
            }
            scratch.stamp = stamp;
        }

        // Grow the match over equal neighbours. There is no junk (isjunk=None), so Python's two
        // junk-extension loops never run; popular elements are not junk and are included here.
        while besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1] {
            besti -= 1;
            bestj -= 1;
            bestsize += 1;
        }
        while besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] == b[bestj + bestsize] {
            bestsize += 1;
        }
        Match { a: besti, b: bestj, size: bestsize }
    }

    pub(crate) fn matching_blocks(&self) -> Vec<Match> {
        let la = self.a.len();
        let lb = self.b.len();
        let mut scratch = Scratch::new(lb);
        let mut queue = vec![(0usize, la, 0usize, lb)];
        let mut blocks = Vec::new();
        while let Some((alo, ahi, blo, bhi)) = queue.pop() {
            let m = self.find_longest_match(&mut scratch, alo, ahi, blo, bhi);
            if m.size > 0 {
                blocks.push(m);
                if alo < m.a && blo < m.b {
                    queue.push((alo, m.a, blo, m.b));
                }
                if m.a + m.size < ahi && m.b + m.size < bhi {
                    queue.push((m.a + m.size, ahi, m.b + m.size, bhi));
                }
            }
        }
        blocks.sort_unstable();

        // Fuse blocks that touch.
        let mut out = Vec::with_capacity(blocks.len() + 1);
        let (mut i1, mut j1, mut k1) = (0usize, 0usize, 0usize);
        for m in blocks {
            if i1 + k1 == m.a && j1 + k1 == m.b {
                k1 += m.size;
            } else {
                if k1 > 0 {
                    out.push(Match { a: i1, b: j1, size: k1 });
                }
                (i1, j1, k1) = (m.a, m.b, m.size);
            }
        }
        if k1 > 0 {
            out.push(Match { a: i1, b: j1, size: k1 });
        }
        out.push(Match { a: la, b: lb, size: 0 });
        out
    }
}

/// Python's `difflib.SequenceMatcher(None, a, b, autojunk)` over slices of any `Hash + Eq` type.
///
/// Results are identical to CPython's (3.9 through 3.13 share this algorithm): same matching
/// blocks, opcodes and grouped opcodes, including the *autojunk* heuristic. `isjunk` is always
/// `None`. Matching blocks are computed once and cached.
///
/// ```
/// use oh_difflib::{SequenceMatcher, Tag};
/// let a: Vec<char> = "qabxcd".chars().collect();
/// let b: Vec<char> = "abycdf".chars().collect();
/// let sm = SequenceMatcher::new(&a, &b);
/// let tags: Vec<&str> = sm.get_opcodes().iter().map(|o| o.tag.as_str()).collect();
/// assert_eq!(tags, ["delete", "equal", "replace", "equal", "insert"]);
/// ```
pub struct SequenceMatcher<'a, T> {
    a: &'a [T],
    b: &'a [T],
    index: Index,
    blocks: OnceCell<Vec<Match>>,
}

impl<'a, T: Hash + Eq> SequenceMatcher<'a, T> {
    /// `SequenceMatcher(None, a, b)`: autojunk on (Python's default).
    pub fn new(a: &'a [T], b: &'a [T]) -> Self {
        Self::with_autojunk(a, b, true)
    }

    /// `SequenceMatcher(None, a, b, autojunk=autojunk)`.
    pub fn with_autojunk(a: &'a [T], b: &'a [T], autojunk: bool) -> Self {
        SequenceMatcher { a, b, index: Index::build(a, b, autojunk), blocks: OnceCell::new() }
    }

    /// The first sequence.
    pub fn a(&self) -> &'a [T] {
        self.a
    }

    /// The second sequence.
    pub fn b(&self) -> &'a [T] {
        self.b
    }

    /// How many distinct elements of `b` autojunk marked popular (Python's `len(bpopular)`).
    pub fn popular_count(&self) -> usize {
        self.index.popular
    }

    /// `find_longest_match(alo, ahi, blo, bhi)`: the longest matching block in
    /// `a[alo..ahi]` and `b[blo..bhi]`, with Python's tie-breaking.
    ///
    /// # Panics
    /// If a range is out of bounds.
    pub fn find_longest_match(&self, alo: usize, ahi: usize, blo: usize, bhi: usize) -> Match {
        assert!(alo <= ahi && ahi <= self.a.len(), "a range out of bounds");
        assert!(blo <= bhi && bhi <= self.b.len(), "b range out of bounds");
        let mut scratch = Scratch::new(self.b.len());
        self.index.find_longest_match(&mut scratch, alo, ahi, blo, bhi)
    }

    /// `get_matching_blocks()`: non-adjacent matching blocks in increasing order, ending with the
    /// sentinel `Match { a: len(a), b: len(b), size: 0 }`.
    pub fn get_matching_blocks(&self) -> &[Match] {
        self.blocks.get_or_init(|| self.index.matching_blocks())
    }

    /// `get_opcodes()`: the edit script turning `a` into `b`.
    pub fn get_opcodes(&self) -> Vec<Opcode> {
        opcodes_from_blocks(self.get_matching_blocks())
    }

    /// `get_grouped_opcodes(n)`: the opcodes split into hunks with at most `n` lines of context.
    /// Groups may start and end with empty `Equal` opcodes exactly as in Python (this matters for
    /// hunk ranges when `n == 0`).
    pub fn get_grouped_opcodes(&self, n: usize) -> Vec<Vec<Opcode>> {
        group_opcodes(self.get_opcodes(), n)
    }

    /// `ratio()`: `2.0 * M / T`, `M` matched elements, `T` total elements (1.0 if both empty).
    pub fn ratio(&self) -> f64 {
        let matches: usize = self.get_matching_blocks().iter().map(|m| m.size).sum();
        let total = self.a.len() + self.b.len();
        if total == 0 {
            1.0
        } else {
            2.0 * matches as f64 / total as f64
        }
    }
}

/// Python's `get_opcodes` from the matching blocks (sentinel included).
pub(crate) fn opcodes_from_blocks(blocks: &[Match]) -> Vec<Opcode> {
    let mut out = Vec::with_capacity(2 * blocks.len());
    let (mut i, mut j) = (0usize, 0usize);
    for m in blocks {
        let tag = if i < m.a && j < m.b {
            Some(Tag::Replace)
        } else if i < m.a {
            Some(Tag::Delete)
        } else if j < m.b {
            Some(Tag::Insert)
        } else {
            None
        };
        if let Some(tag) = tag {
            out.push(Opcode::new(tag, i, m.a, j, m.b));
        }
        i = m.a + m.size;
        j = m.b + m.size;
        if m.size > 0 {
            out.push(Opcode::new(Tag::Equal, m.a, i, m.b, j));
        }
    }
    out
}

/// Python's `get_grouped_opcodes` on an opcode list.
pub(crate) fn group_opcodes(mut codes: Vec<Opcode>, n: usize) -> Vec<Vec<Opcode>> {
    if codes.is_empty() {
        codes.push(Opcode::new(Tag::Equal, 0, 1, 0, 1));
    }
    if let Some(first) = codes.first_mut() {
        if first.tag == Tag::Equal {
            first.i1 = first.i1.max(first.i2.saturating_sub(n));
            first.j1 = first.j1.max(first.j2.saturating_sub(n));
        }
    }
    if let Some(last) = codes.last_mut() {
        if last.tag == Tag::Equal {
            last.i2 = last.i2.min(last.i1 + n);
            last.j2 = last.j2.min(last.j1 + n);
        }
    }
    let nn = n + n;
    let mut groups = Vec::new();
    let mut group: Vec<Opcode> = Vec::new();
    for c in codes {
        let Opcode { tag, mut i1, i2, mut j1, j2 } = c;
        if tag == Tag::Equal && i2 - i1 > nn {
            group.push(Opcode::new(tag, i1, i2.min(i1 + n), j1, j2.min(j1 + n)));
            groups.push(std::mem::take(&mut group));
            i1 = i1.max(i2.saturating_sub(n));
            j1 = j1.max(j2.saturating_sub(n));
        }
        group.push(Opcode::new(tag, i1, i2, j1, j2));
    }
    let only_equal = group.len() == 1 && group[0].tag == Tag::Equal;
    if !group.is_empty() && !only_equal {
        groups.push(group);
    }
    groups
}
