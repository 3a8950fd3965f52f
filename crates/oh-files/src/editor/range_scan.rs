//! A `view_range` read in one streamed pass: the line count, the bytes of the lines asked for,
//! the head for the binary check and whether the whole file is UTF-8, without holding or
//! decoding the whole file.
//!
//! This is exact only for files without CR and without a UTF-8 BOM: their lines are then the
//! same bytes in every encoding the editor reads (UTF-8, Latin-1). For any other file the scan
//! gives up and [`RangeScan::whole`] holds the bytes for the usual whole-file path.

use crate::file_text::{self, UTF8_BOM};

const HEAD: usize = 1024;

pub(crate) struct RangeScan {
    /// First line to keep (1-based); `usize::MAX` keeps nothing.
    first: usize,
    /// Last line to keep; `None`: to the end of the file.
    last: Option<usize>,
    newlines: usize,
    ends_with_newline: bool,
    empty: bool,
    kept_all: bool,
    /// The bytes of lines `first..=last` (as many as the file has).
    span: Vec<u8>,
    /// The first 1,024 bytes (binary check).
    head: Vec<u8>,
    utf8: Utf8Check,
    /// Set when the file has a CR or a BOM.
    gave_up: bool,
    pieces: usize,
    /// When the scan gave up on the first piece: every byte of the file, for the usual path.
    whole: Option<Vec<u8>>,
}

impl RangeScan {
    /// A scan keeping lines `start..=end` of a `view_range` (`end == -1`: to the end).
    pub fn new(start: i64, end: i64) -> Self {
        let (first, last) = if start < 1 {
            (usize::MAX, None)
        } else if end == -1 {
            (start as usize, None)
        } else if end < start {
            (usize::MAX, None)
        } else {
            (start as usize, Some(end as usize))
        };
        RangeScan {
            first,
            last,
            newlines: 0,
            ends_with_newline: false,
            empty: true,
            kept_all: first == usize::MAX,
            span: Vec::new(),
            head: Vec::new(),
            utf8: Utf8Check::default(),
            gave_up: false,
            pieces: 0,
            whole: None,
        }
    }

    /// Takes the next piece of the file; `false` once there is no point in reading on.
    pub fn feed(&mut self, piece: &[u8]) -> bool {
        self.pieces += 1;
        if let Some(w) = &mut self.whole {
            w.extend_from_slice(piece);
            return true;
        }
        if self.gave_up {
            return false;
        }
        if self.head.len() < HEAD {
            let k = (HEAD - self.head.len()).min(piece.len());
            self.head.extend_from_slice(&piece[..k]);
        }
        let census = crate::byte_scan::census(piece);
        if census.has_cr
            || (self.head.len() >= UTF8_BOM.len() && self.head.starts_with(UTF8_BOM))
            || UTF8_BOM.starts_with(&self.head) && !self.head.is_empty() && self.head.len() < UTF8_BOM.len()
        {
            self.gave_up = true;
            if self.pieces == 1 {
                self.whole = Some(piece.to_vec());
                return true;
            }
            return false;
        }
        if piece.is_empty() {
            return true;
        }
        self.empty = false;
        self.ends_with_newline = piece.last() == Some(&b'\n');
        if !census.ascii || self.utf8.pending() {
            self.utf8.feed(piece);
        }
        if !self.kept_all {
            let line0 = self.newlines + 1;
            let begin = if line0 >= self.first { Some(0) } else { file_text::after_newline(piece, self.first - line0) };
            if let Some(a) = begin {
                let line_a = self.first.max(line0);
                let stop = self.last.and_then(|e| file_text::after_newline(&piece[a..], e + 1 - line_a)).map(|p| a + p);
                match stop {
                    Some(b) => {
                        self.span.extend_from_slice(&piece[a..b]);
                        self.kept_all = true;
                    }
                    None => self.span.extend_from_slice(&piece[a..]),
                }
            }
        }
        self.newlines += census.newlines;
        true
    }

    /// What the scan found, once the file was read to the end (or the scan stopped).
    pub fn outcome(mut self) -> ScanOutcome {
        if let Some(w) = self.whole.take() {
            return ScanOutcome::Whole(w);
        }
        if self.gave_up {
            return ScanOutcome::Incomplete;
        }
        let num_lines = self.newlines + usize::from(!self.empty && !self.ends_with_newline);
        let text = if self.utf8.valid() {
            match String::from_utf8(self.span) {
                Ok(t) => t,
                Err(_) => return ScanOutcome::Incomplete,
            }
        } else {
            self.span.iter().map(|&b| b as char).collect()
        };
        ScanOutcome::Lines(ScannedLines { num_lines, text, head: self.head })
    }
}

/// The lines of a `view_range`, decoded as the editor decodes the file.
pub(crate) struct ScannedLines {
    pub num_lines: usize,
    /// Lines `start..=end` (fewer at the end of the file), with their `\n`.
    pub text: String,
    /// The file's first 1,024 bytes.
    pub head: Vec<u8>,
}

pub(crate) enum ScanOutcome {
    Lines(ScannedLines),
    /// The file has a CR or a BOM: all of its bytes, for the whole-file path.
    Whole(Vec<u8>),
    /// The scan stopped without the whole file: read it again.
    Incomplete,
}

/// UTF-8 validity of a byte stream cut anywhere.
#[derive(Default)]
struct Utf8Check {
    /// An incomplete character at the end of the last piece.
    pending: Vec<u8>,
    invalid: bool,
}

impl Utf8Check {
    fn feed(&mut self, mut piece: &[u8]) {
        if self.invalid {
            return;
        }
        if !self.pending.is_empty() {
            let width = match self.pending[0] {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                _ => 4,
            };
            let need = (width - self.pending.len()).min(piece.len());
            self.pending.extend_from_slice(&piece[..need]);
            piece = &piece[need..];
            if self.pending.len() < width {
                return;
            }
            if std::str::from_utf8(&self.pending).is_err() {
                self.invalid = true;
                return;
            }
            self.pending.clear();
        }
        match std::str::from_utf8(piece) {
            Ok(_) => {}
            Err(e) if e.error_len().is_none() => {
                self.pending = piece[e.valid_up_to()..].to_vec();
            }
            Err(_) => self.invalid = true,
        }
    }

    /// An incomplete character waits for the next piece (whose first bytes must then be
    /// checked even if they are ASCII).
    fn pending(&self) -> bool {
        !self.pending.is_empty()
    }

    fn valid(&self) -> bool {
        !self.invalid && self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(data: &[u8], piece: usize, start: i64, end: i64) -> Option<(usize, String)> {
        let mut s = RangeScan::new(start, end);
        for p in data.chunks(piece.max(1)) {
            if !s.feed(p) {
                break;
            }
        }
        match s.outcome() {
            ScanOutcome::Lines(l) => Some((l.num_lines, l.text)),
            _ => None,
        }
    }

    /// The scan agrees with decoding the whole file and cutting the lines, for every piece size.
    #[test]
    fn matches_whole_file_path() {
        let utf8: String = (0..200).map(|i| format!("línea {i} ✓\n")).collect();
        let ascii: String = (0..200).map(|i| format!("line {i}\n")).collect::<String>() + "tail";
        let mut latin1 = ascii.clone().into_bytes();
        latin1[30] = 0xe9;
        for data in [utf8.as_bytes(), ascii.as_bytes(), &latin1[..], b"", b"x", b"\n\n"] {
            let (_, text) = file_text::read_text(data.to_vec());
            let n = file_text::count_lines(&text) as i64;
            for piece in [1, 2, 3, 7, 64, 4096, 1 << 20] {
                for (a, b) in [(1, -1), (1, 1), (2, 5), (150, 160), (199, 400), (n, n), (5, 2), (0, 3)] {
                    let got = scan(data, piece, a, b).expect("no CR, no BOM");
                    assert_eq!(got.0 as i64, n, "piece {piece}");
                    let want = if a < 1 || (b != -1 && b < a) {
                        ""
                    } else {
                        file_text::lines_range(&text, a, if b == -1 { n } else { b })
                    };
                    assert_eq!(got.1, want, "piece {piece} range {a}..{b}");
                }
            }
        }
    }

    #[test]
    fn gives_up_on_cr_and_bom() {
        assert!(scan(b"a\r\nb\n", 1 << 20, 1, 1).is_none());
        assert!(scan(b"a\nb\rc\n", 2, 1, 1).is_none());
        let mut s = RangeScan::new(1, 1);
        assert!(s.feed(b"a\n"));
        assert!(!s.feed(b"b\r\n"));
        assert!(matches!(s.outcome(), ScanOutcome::Incomplete));
        assert!(scan(b"\xef\xbb\xbfa\n", 1, 1, 1).is_none());
        assert!(scan(b"\xef\xbb\xbf", 1 << 20, 1, 1).is_none());
        // Given up on the first piece: the whole file is kept for the usual path.
        let mut s = RangeScan::new(1, 1);
        assert!(s.feed(b"a\r\n"));
        assert!(s.feed(b"b\n"));
        assert!(matches!(s.outcome(), ScanOutcome::Whole(w) if w == b"a\r\nb\n"));
    }
}
