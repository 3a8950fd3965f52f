//! This crate's answers to difflib questions, one JSON line per JSON line on stdin, for the
//! random differential `tests/parity/test_difflib_random.py` (the questions and Python's answers
//! come from the reference venv at test time). Each input line is one of
//!
//! * `{"get_diff": [old, new, path]}` → `{"fast": ..., "generic": ...}` (`get_diff` and
//!   `get_diff_reference`, which must agree with Python and with each other);
//! * `{"unified": [a, b, kw]}` (`kw` as in `difflib.unified_diff`) → the list of lines;
//! * `{"opcodes": [a, b, autojunk, n]}` (`SequenceMatcher` over the characters of two strings) →
//!   `{"blocks", "opcodes", "grouped", "ratio"}`.
//!
//! An example, not a test: it cannot skip, the driver counts one answer per question.

use std::io::{BufRead, Write};

use oh_difflib::{get_diff, get_diff_reference, unified_diff_with, Opcode, SequenceMatcher, UnifiedDiffOptions};
use serde_json::{json, Value};

fn text(v: &Value) -> &str {
    v.as_str().expect("a string")
}

fn lines(v: &Value) -> Vec<&str> {
    v.as_array().expect("a list of strings").iter().map(text).collect()
}

fn opcode(o: &Opcode) -> Value {
    json!([o.tag.as_str(), o.i1, o.i2, o.j1, o.j2])
}

fn answer(question: &Value) -> Value {
    if let Some(q) = question.get("get_diff") {
        let (old, new, path) = (text(&q[0]), text(&q[1]), text(&q[2]));
        return json!({"fast": get_diff(old, new, path), "generic": get_diff_reference(old, new, path)});
    }
    if let Some(q) = question.get("unified") {
        let (a, b, kw) = (lines(&q[0]), lines(&q[1]), &q[2]);
        let arg = |k: &str, default: &'static str| kw.get(k).map_or(default, text);
        let opts = UnifiedDiffOptions {
            fromfile: arg("fromfile", ""),
            tofile: arg("tofile", ""),
            fromfiledate: arg("fromfiledate", ""),
            tofiledate: arg("tofiledate", ""),
            n: kw.get("n").and_then(Value::as_u64).unwrap_or(3) as usize,
            lineterm: arg("lineterm", "\n"),
        };
        return json!(unified_diff_with(&a, &b, &opts));
    }
    if let Some(q) = question.get("opcodes") {
        let a: Vec<char> = text(&q[0]).chars().collect();
        let b: Vec<char> = text(&q[1]).chars().collect();
        let sm = SequenceMatcher::with_autojunk(&a, &b, q[2].as_bool().expect("autojunk"));
        let n = q[3].as_u64().expect("n") as usize;
        let blocks: Vec<Value> = sm.get_matching_blocks().iter().map(|m| json!([m.a, m.b, m.size])).collect();
        let grouped: Vec<Vec<Value>> =
            sm.get_grouped_opcodes(n).iter().map(|g| g.iter().map(opcode).collect()).collect();
        return json!({
            "blocks": blocks,
            "opcodes": sm.get_opcodes().iter().map(opcode).collect::<Vec<_>>(),
            "grouped": grouped,
            "ratio": sm.ratio(),
        });
    }
    panic!("unknown question: {question}");
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let question: Value = serde_json::from_str(&line.expect("stdin")).expect("a JSON line");
        serde_json::to_writer(&mut out, &answer(&question)).expect("stdout");
        out.write_all(b"\n").expect("stdout");
    }
    out.flush().expect("stdout");
}
