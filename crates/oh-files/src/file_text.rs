//! Text handling shared by the server's read/write and the editor: encodings, universal
//! newlines, line slicing, `cat -n` framing, truncation, and binaryornot's text/binary test.

use std::borrow::Cow;

pub const MAX_RESPONSE_LEN_CHAR: usize = 16_000;
pub const SNIPPET_CONTEXT_WINDOW: i64 = 4;

pub const TEXT_NOTICE: &str = "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";
pub const DIRECTORY_NOTICE: &str = "<response clipped><NOTE>Due to the max output limit, only part of this directory has been shown to you. You should use `ls -la` instead to view large directories incrementally.</NOTE>";
pub const GENERIC_NOTICE: &str =
    "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>";

pub(crate) const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// The encoding the editor reads and writes a file in.
///
/// The reference asks `charset_normalizer` (confidence > 0.9, `ascii` mapped to `utf-8`).
/// For UTF-8 and ASCII files that answer is `utf-8`, and `UTF-8-SIG` for a file that starts with a
/// UTF-8 BOM; both are reproduced exactly. For anything that is not valid UTF-8 the reference's
/// answer is unpredictable (cp1252, cp775, ... with mojibake); we use Latin-1 instead, which
/// round-trips every byte of the parts of the file an edit does not touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf8Sig,
    Latin1,
}

impl Encoding {
    /// Encode, with Python's `UnicodeEncodeError` text on failure. UTF-8 is borrowed: a 6 MB
    /// file is written from the text itself, not from a copy.
    pub fn encode(self, text: &str) -> Result<Cow<'_, [u8]>, String> {
        match self {
            Encoding::Utf8 => Ok(Cow::Borrowed(text.as_bytes())),
            Encoding::Utf8Sig => {
                let mut v = Vec::with_capacity(text.len() + 3);
                v.extend_from_slice(UTF8_BOM);
                v.extend_from_slice(text.as_bytes());
                Ok(Cow::Owned(v))
            }
            Encoding::Latin1 => {
                let chars: Vec<char> = text.chars().collect();
                if let Some(pos) = chars.iter().position(|&c| c as u32 > 0xff) {
                    let mut end = pos;
                    while end + 1 < chars.len() && chars[end + 1] as u32 > 0xff {
                        end += 1;
                    }
                    let ord = |c: char| {
                        let u = c as u32;
                        if u < 0x10000 {
                            format!("\\u{u:04x}")
                        } else {
                            format!("\\U{u:08x}")
                        }
                    };
                    return Err(if end == pos {
                        format!(
                            "'latin-1' codec can't encode character '{}' in position {pos}: ordinal not in range(256)",
                            ord(chars[pos])
                        )
                    } else {
                        format!("'latin-1' codec can't encode characters in position {pos}-{end}: ordinal not in range(256)")
                    });
                }
                Ok(Cow::Owned(chars.iter().map(|&c| c as u8).collect()))
            }
        }
    }
}

/// Python's universal newlines on input: `\r\n` and a lone `\r` become `\n`.
pub fn universal_newlines(s: &str) -> Cow<'_, str> {
    if memchr::memchr(b'\r', s.as_bytes()).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut last = 0;
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'\r', &b[i..]) {
        let p = i + off;
        out.push_str(&s[last..p]);
        out.push('\n');
        i = if b.get(p + 1) == Some(&b'\n') { p + 2 } else { p + 1 };
        last = i;
    }
    out.push_str(&s[last..]);
    Cow::Owned(out)
}

/// Decode a file the way the editor reads it: detected encoding, universal newlines. Takes the
/// bytes by value so that a UTF-8 file without CRs is not copied.
#[cfg(test)]
pub fn read_text(bytes: Vec<u8>) -> (Encoding, String) {
    let (enc, text, _) = read_text_verbatim(bytes);
    (enc, text)
}

/// [`read_text`], and whether encoding the text again gives the file's bytes exactly (UTF-8 or
/// UTF-8 with BOM, no CR): then a common prefix of the text is a common prefix on disk.
pub fn read_text_verbatim(bytes: Vec<u8>) -> (Encoding, String, bool) {
    // The common case, ASCII without CR, in one pass instead of a decode and a CR search.
    let census = crate::byte_scan::census(&bytes);
    if census.ascii && !census.has_cr {
        // SAFETY: ASCII bytes are valid UTF-8.
        return (Encoding::Utf8, unsafe { String::from_utf8_unchecked(bytes) }, true);
    }
    let (enc, decoded) = match String::from_utf8(bytes) {
        Ok(mut s) => {
            if s.starts_with('\u{feff}') {
                s.drain(..3);
                (Encoding::Utf8Sig, s)
            } else {
                (Encoding::Utf8, s)
            }
        }
        Err(e) => (Encoding::Latin1, e.into_bytes().iter().map(|&b| b as char).collect()),
    };
    let (text, verbatim) = match universal_newlines(&decoded) {
        Cow::Borrowed(_) => (decoded, enc != Encoding::Latin1),
        Cow::Owned(s) => (s, false),
    };
    (enc, text, verbatim)
}

/// Length of the longest common prefix of `a` and `b` (whole blocks compared with `memcmp`).
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n].iter().zip(&b[i..n]).position(|(x, y)| x != y).unwrap_or(n - i)
}

/// Drops an incomplete UTF-8 sequence at the end of a file head.
pub fn trim_partial_utf8(mut head: Vec<u8>) -> Vec<u8> {
    if let Err(e) = std::str::from_utf8(&head) {
        if e.error_len().is_none() {
            head.truncate(e.valid_up_to());
        }
    }
    head
}

/// Number of `\n`.
pub fn count_newlines(s: &str) -> usize {
    count_newlines_in(s.as_bytes())
}

pub(crate) use crate::byte_scan::count_newlines as count_newlines_in;

/// How many lines iterating the text yields (`sum(1 for _ in f)`).
pub fn count_lines(s: &str) -> usize {
    count_lines_in(s.as_bytes())
}

/// [`count_lines`] on bytes whose only line breaks are `\n`.
pub fn count_lines_in(b: &[u8]) -> usize {
    count_newlines_in(b) + usize::from(!b.is_empty() && !b.ends_with(b"\n"))
}

/// Byte offset just after the `k`-th `\n` (`k >= 1`), `None` if there are fewer. Counts whole
/// blocks with the vectorised count and walks matches only inside the block that holds it: on
/// a file of short lines this is several times faster than stepping through every match.
pub(crate) fn after_newline(b: &[u8], k: usize) -> Option<usize> {
    const BLOCK: usize = 4096;
    let mut seen = 0;
    for (i, block) in b.chunks(BLOCK).enumerate() {
        let n = count_newlines_in(block);
        if seen + n >= k {
            let p = memchr::memchr_iter(b'\n', block).nth(k - seen - 1)?;
            return Some(i * BLOCK + p + 1);
        }
        seen += n;
    }
    None
}

/// Byte offset where line `n` (1-based) starts; `s.len()` if there are fewer lines.
pub fn line_start(s: &str, n: usize) -> usize {
    line_start_in(s.as_bytes(), n)
}

fn line_start_in(b: &[u8], n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    after_newline(b, n - 1).unwrap_or(b.len())
}

/// Lines `start..=end` (1-based, each with its `\n`), as the editor's ranged `read_file`
/// returns them.
pub fn lines_range(s: &str, start: i64, end: i64) -> &str {
    let (a, b) = lines_span(s.as_bytes(), start, end);
    &s[a..b]
}

/// The byte span of [`lines_range`], on bytes whose only line breaks are `\n`.
pub fn lines_span(s: &[u8], start: i64, end: i64) -> (usize, usize) {
    let start = start.max(1);
    if end < start {
        return (0, 0);
    }
    let a = line_start_in(s, start as usize);
    if a >= s.len() {
        return (0, 0);
    }
    let count = (end - start + 1) as usize;
    let b = after_newline(&s[a..], count).map_or(s.len(), |p| a + p);
    (a, b)
}

/// Lines with their terminators (`readlines()`).
pub fn readlines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for p in memchr::memchr_iter(b'\n', s.as_bytes()) {
        out.push(&s[start..=p]);
        start = p + 1;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Byte index of the `n`-th character, or `None` if the text has at most `n` characters.
fn char_boundary_after(s: &str, n: usize) -> Option<usize> {
    if s.len() <= n {
        return None;
    }
    s.char_indices().nth(n).map(|(i, _)| i)
}

/// `maybe_truncate(text, 16000, notice)` (code points).
pub fn maybe_truncate<'a>(s: &'a str, notice: &str) -> Cow<'a, str> {
    match char_boundary_after(s, MAX_RESPONSE_LEN_CHAR) {
        None => Cow::Borrowed(s),
        Some(i) => Cow::Owned(format!("{}{}", &s[..i], notice)),
    }
}

/// openhands-sdk's `maybe_truncate(text, 16000, notice)` (V1): the middle of a long text is
/// replaced by the notice, the head getting the odd code point (code points, as Python counts).
pub fn maybe_truncate_middle<'a>(s: &'a str, notice: &str) -> Cow<'a, str> {
    let count = s.chars().count();
    if count <= MAX_RESPONSE_LEN_CHAR {
        return Cow::Borrowed(s);
    }
    let notice_len = notice.chars().count();
    if notice_len >= MAX_RESPONSE_LEN_CHAR {
        return Cow::Owned(notice.chars().take(MAX_RESPONSE_LEN_CHAR).collect());
    }
    let available = MAX_RESPONSE_LEN_CHAR - notice_len;
    let head = available / 2 + available % 2;
    let tail = available - head;
    let head_end = s.char_indices().nth(head).map_or(s.len(), |(i, _)| i);
    let tail_start = if tail == 0 { s.len() } else { s.char_indices().nth(count - tail).map_or(s.len(), |(i, _)| i) };
    Cow::Owned(format!("{}{}{}", &s[..head_end], notice, &s[tail_start..]))
}

/// openhands-tools 1.58's `FileEditor._make_output` (V1): the middle of a long text clipped
/// ([`maybe_truncate_middle`]), lines split at `\n` only, a terminating newline ending the last
/// line rather than adding an empty numbered one.
pub fn make_output_v1(content: &str, description: &str, start_line: i64) -> String {
    let content = maybe_truncate_middle(content, TEXT_NOTICE);
    let body = content.strip_suffix('\n').unwrap_or(&content);
    let mut out = String::with_capacity(content.len() + content.len() / 4 + 128);
    out.push_str("Here's the result of running `cat -n` on ");
    out.push_str(description);
    out.push_str(":\n");
    if content.is_empty() {
        return out;
    }
    for (i, line) in body.split('\n').enumerate() {
        use std::fmt::Write;
        let _ = write!(out, "{:6}\t", i as i64 + start_line);
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `OHEditor._make_output`.
pub fn make_output(content: &str, description: &str, start_line: i64) -> String {
    let content = maybe_truncate(content, TEXT_NOTICE);
    let mut out = String::with_capacity(content.len() + content.len() / 4 + 128);
    out.push_str("Here's the result of running `cat -n` on ");
    out.push_str(description);
    out.push_str(":\n");
    for (i, line) in content.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        use std::fmt::Write;
        let _ = write!(out, "{:6}\t", i as i64 + start_line);
        out.push_str(line);
    }
    out.push('\n');
    out
}

/// binaryornot 0.4.4 `is_binary_string` on the first 1024 bytes of a file.
///
/// Steps 1-4 and 6 are exact. Step 5 (`chardet.detect` with confidence > 0.9, not `ascii`,
/// and the chunk decodes) is approximated by what chardet 5.2.0 answers for Unicode text:
/// * a UTF-8 BOM → `UTF-8-SIG`; UTF-32 BOMs → `UTF-32`; UTF-16 BOMs → `UTF-16` (confidence 1.0);
/// * high bytes that form valid UTF-8 (an incomplete character at the end of the chunk is
///   allowed, as chardet's state machine allows it) with at least 4 multi-byte characters →
///   `utf-8` (chardet's UTF-8 prober gives `1 - 0.99 * 0.5^n`, 0.938 for n = 4);
/// * everything else (legacy 8-bit code pages, BOM-less UTF-16/32, ISO-2022 escapes) is treated
///   as "not detected", so steps 4 and 6 decide.
pub fn is_binary_chunk(chunk: &[u8]) -> bool {
    if chunk.is_empty() {
        return false;
    }
    let n = chunk.len() as f64;
    let textish = |b: u8| matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x08) || (0x20..0x7f).contains(&b);
    let r1 = chunk.iter().filter(|&&b| !textish(b)).count() as f64 / n;
    let r2 = chunk.iter().filter(|&&b| b < 0x7f).count() as f64 / n;
    let likely_binary = (r1 > 0.3 && r2 < 0.05) || (r1 > 0.8 && r2 > 0.8);
    if chardet_decodable(chunk) {
        return false;
    }
    if likely_binary {
        return true;
    }
    chunk.contains(&0x00) || chunk.contains(&0xff)
}

fn chardet_decodable(chunk: &[u8]) -> bool {
    if let Some(rest) = chunk.strip_prefix(UTF8_BOM) {
        return std::str::from_utf8(rest).is_ok();
    }
    if chunk.starts_with(b"\xff\xfe\x00\x00") || chunk.starts_with(b"\x00\x00\xfe\xff") {
        return decodes_utf32(chunk);
    }
    if chunk.starts_with(b"\xfe\xff\x00\x00") || chunk.starts_with(b"\x00\x00\xff\xfe") {
        return false; // X-ISO-10646-UCS-4-*: LookupError in Python
    }
    if chunk.starts_with(b"\xff\xfe") || chunk.starts_with(b"\xfe\xff") {
        return decodes_utf16(chunk);
    }
    if !chunk.iter().any(|&b| b >= 0x80) {
        return false; // ascii (or an escape encoding): not counted
    }
    // chardet's UTF-8 prober; then Python must decode the chunk.
    match chardet_utf8_mb_chars(chunk) {
        Some(mb) if mb >= 4 => std::str::from_utf8(chunk).is_ok(),
        _ => false,
    }
}

/// chardet 5.2.0's UTF-8 coding state machine (`mbcssm.py`): the number of multi-byte characters,
/// or `None` when the machine errors. It is stricter than UTF-8 in places (`\x0e`, `\x0f`, ESC
/// and `F0 80..9F`, i.e. U+10000..U+1FFFF such as emoji, are errors) and laxer in others (5- and
/// 6-byte forms).
fn chardet_utf8_mb_chars(chunk: &[u8]) -> Option<usize> {
    const ERR: u8 = 1;
    const START: u8 = 0;
    fn class(b: u8) -> usize {
        match b {
            0x0e | 0x0f | 0x1b => 0,
            0x00..=0x7f => 1,
            0x80..=0x83 => 2,
            0x84..=0x87 => 3,
            0x88..=0x9f => 4,
            0xa0..=0xbf => 5,
            0xc0 | 0xc1 => 0,
            0xc2..=0xdf => 6,
            0xe0 => 7,
            0xed => 9,
            0xe1..=0xef => 8,
            0xf0 => 10,
            0xf1..=0xf7 => 11,
            0xf8 => 12,
            0xf9..=0xfb => 13,
            0xfc => 14,
            0xfd => 15,
            _ => 0,
        }
    }
    const CHAR_LEN: [u8; 16] = [0, 1, 0, 0, 0, 0, 2, 3, 3, 3, 4, 4, 5, 5, 6, 6];
    // next state for (state, class); states 3..=12 wait for continuation bytes.
    fn next(state: u8, c: usize) -> u8 {
        let cont = (2..=5).contains(&c);
        match state {
            0 => [ERR, START, ERR, ERR, ERR, ERR, 12, 10, 9, 11, 8, 7, 6, 5, 4, 3][c],
            3 if cont => 5,
            4 if (3..=5).contains(&c) => 5,
            5 if cont => 7,
            6 if c == 4 || c == 5 => 7,
            7 if cont => 9,
            8 if c == 5 => 9,
            9 if cont => 12,
            10 if c == 5 => 12,
            11 if (2..=4).contains(&c) => 12,
            12 if cont => START,
            _ => ERR,
        }
    }
    let mut state = START;
    let mut char_len = 0u8;
    let mut mb = 0usize;
    for &b in chunk {
        let c = class(b);
        if state == START {
            char_len = CHAR_LEN[c];
        }
        state = next(state, c);
        if state == ERR {
            return None;
        }
        if state == START && char_len >= 2 {
            mb += 1;
        }
    }
    Some(mb)
}

fn decodes_utf16(chunk: &[u8]) -> bool {
    if !chunk.len().is_multiple_of(2) {
        return false;
    }
    let be = chunk[0] == 0xfe;
    let units =
        chunk[2..].chunks(2).map(
            |p| {
                if be {
                    u16::from_be_bytes([p[0], p[1]])
                } else {
                    u16::from_le_bytes([p[0], p[1]])
                }
            },
        );
    char::decode_utf16(units).all(|r| r.is_ok())
}

fn decodes_utf32(chunk: &[u8]) -> bool {
    if !chunk.len().is_multiple_of(4) {
        return false;
    }
    let be = chunk[0] == 0;
    chunk[4..].chunks(4).all(|q| {
        let u = if be {
            u32::from_be_bytes([q[0], q[1], q[2], q[3]])
        } else {
            u32::from_le_bytes([q[0], q[1], q[2], q[3]])
        };
        char::from_u32(u).is_some()
    })
}

/// `binaryornot.check.is_binary(name)` given the file's bytes (`None`: could not be read).
pub fn is_binary(name: &str, bytes: Option<&[u8]>) -> bool {
    if name.ends_with(".pyc") {
        return true;
    }
    match bytes {
        None => false,
        Some(b) => is_binary_chunk(&b[..b.len().min(1024)]),
    }
}

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 { T[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if c.len() > 2 { T[n as usize & 63] as char } else { '=' });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines() {
        assert_eq!(universal_newlines("a\r\nb\rc\n"), "a\nb\nc\n");
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("a\nb\n"), 2);
        assert_eq!(count_lines(""), 0);
        assert_eq!(lines_range("a\nb\nc\n", 2, 3), "b\nc\n");
        assert_eq!(lines_range("a\nb\nc", 2, 9), "b\nc");
        assert_eq!(lines_range("a\nb\nc", 4, 9), "");
        assert_eq!(lines_range("a\nb\nc", 0, 1), "a\n");
        let long = "x".repeat(10_000);
        assert_eq!(common_prefix(long.as_bytes(), long.as_bytes()), 10_000);
        assert_eq!(common_prefix(long.as_bytes(), (long.clone() + "y").as_bytes()), 10_000);
        assert_eq!(common_prefix(long.as_bytes(), format!("{}y{}", &long[..9000], &long[9001..]).as_bytes()), 9000);
        assert_eq!(common_prefix(b"ab", b"b"), 0);
        assert!(read_text_verbatim(b"a\n".to_vec()).2);
        assert!(read_text_verbatim(b"\xef\xbb\xbfa\n".to_vec()).2);
        assert!(!read_text_verbatim(b"a\r\n".to_vec()).2);
        assert!(!read_text_verbatim(b"\xe9\n".to_vec()).2);
        // Across the counting blocks: every line start found, the last line unterminated.
        let big: String = (0..3000).map(|i| format!("line {i}\n")).collect::<String>() + "tail";
        let lines = readlines(&big);
        for n in [1usize, 2, 400, 455, 456, 457, 1000, 2999, 3000, 3001] {
            assert_eq!(line_start(&big, n), lines[..n - 1].concat().len(), "line {n}");
            assert_eq!(lines_range(&big, n as i64, n as i64), lines[n - 1], "line {n}");
        }
        assert_eq!(line_start(&big, 3002), big.len());
        assert_eq!(lines_range(&big, 2990, 5000), lines[2989..].concat());
    }

    #[test]
    fn output_v1() {
        let head = "Here's the result of running `cat -n` on p:\n";
        assert_eq!(make_output_v1("", "p", 1), head);
        // One newline is one empty line; a terminating newline adds no empty numbered line.
        assert_eq!(make_output_v1("\n", "p", 1), format!("{head}     1\t\n"));
        assert_eq!(make_output_v1("x\n\n", "p", 9), format!("{head}     9\tx\n    10\t\n"));
        assert_eq!(make_output_v1("a\x0cb\u{2028}c", "p", 1), format!("{head}     1\ta\x0cb\u{2028}c\n"));
        // The middle is clipped: head and tail kept, 16,000 code points in all.
        let long: String = (0..5000).map(|i| format!("{i}\n")).collect();
        let t = maybe_truncate_middle(&long, TEXT_NOTICE);
        assert_eq!(t.chars().count(), MAX_RESPONSE_LEN_CHAR);
        assert!(t.starts_with("0\n1\n") && t.ends_with("4998\n4999\n") && t.contains(TEXT_NOTICE));
    }

    #[test]
    fn output() {
        assert_eq!(make_output("", "p", 1), "Here's the result of running `cat -n` on p:\n     1\t\n");
        assert_eq!(make_output("x\n", "p", 9), "Here's the result of running `cat -n` on p:\n     9\tx\n    10\t\n");
    }

    #[test]
    fn binary() {
        assert!(!is_binary_chunk(b"x = 1\n"));
        assert!(is_binary_chunk("é".as_bytes()));
        assert!(is_binary_chunk("日本".as_bytes()));
        assert!(!is_binary_chunk("日本語の".as_bytes()));
        assert!(is_binary_chunk(b"a\x00b"));
        assert!(is_binary_chunk(&"日本語".repeat(200).as_bytes()[..1024]));
        assert!(!is_binary_chunk(&"日本語".repeat(200).as_bytes()[..1023]));
        assert_eq!(base64(b"hello"), "aGVsbG8=");
        assert_eq!(base64(b"hi!"), "aGkh");
    }
}
