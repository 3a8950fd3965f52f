//! The binary test of the server's read pre-check and the editor (binaryornot 0.4.4's
//! `is_binary(path)`), one verdict per file: reads paths from stdin, one a line, and prints `1`
//! (binary) or `0` (text) for each, in order.
//!
//! `tests/parity/test_binaryornot.py` feeds it thousands of generated files and compares every
//! verdict with binaryornot's own in the reference venv. It is an example, not a test, so that it
//! cannot skip: the driver counts one answer per file.

use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let path = line.expect("a path per line on stdin");
        let bytes = std::fs::read(&path).ok();
        let verdict = oh_files::is_binary(&path, bytes.as_deref());
        writeln!(out, "{}", u8::from(verdict)).expect("stdout");
    }
    out.flush().expect("stdout");
}
