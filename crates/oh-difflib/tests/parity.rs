//! Differential tests against CPython's difflib / openhands_aci's get_diff, using the fixture
//! written by `tests/gen_cases.py` (see that script for the format).

use oh_difflib::{get_diff, unified_diff, unified_diff_with, Match, SequenceMatcher, UnifiedDiffOptions};
use serde_json::Value;

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cases.json");
    let text = std::fs::read_to_string(path).expect("read fixture");
    serde_json::from_str(&text).expect("parse fixture")
}

fn s(v: &Value) -> &str {
    v.as_str().expect("string")
}

fn u(v: &Value) -> usize {
    v.as_u64().expect("integer") as usize
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array().expect("array").iter().map(s).collect()
}

/// `new` of a get_diff case: given, or `old.split('\n')` with the edits applied.
fn new_text(case: &Value) -> String {
    if let Some(new) = case.get("new") {
        return s(new).to_string();
    }
    let mut lines: Vec<&str> = s(&case["old"]).split('\n').collect();
    for e in case["edits"].as_array().unwrap().iter().rev() {
        let (i1, i2) = (u(&e[0]), u(&e[1]));
        lines.splice(i1..i2, strings(&e[2]));
    }
    lines.join("\n")
}

fn show(s: &str) -> String {
    format!("{s:?}")
}

#[test]
fn get_diff_parity() {
    let fx = fixture();
    let cases = fx["get_diff"].as_array().unwrap();
    let mut ok = 0;
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let old = s(&case["old"]);
        let new = new_text(case);
        let path = s(&case["path"]);
        let got = get_diff(old, &new, path);
        let want = s(&case["expected"]);
        assert_eq!(oh_difflib::get_diff_reference(old, &new, path), want, "case {n}: generic path");
        if got == want {
            ok += 1;
        } else if failures.len() < 5 {
            failures.push(format!(
                "case {n}: old={} new={}\n  want={}\n  got ={}",
                show(old),
                show(&new),
                show(want),
                show(&got)
            ));
        }
    }
    println!("difflib parity: {ok}/{}", cases.len());
    assert!(cases.len() >= 2000);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unified_diff_parity() {
    let fx = fixture();
    let cases = fx["unified"].as_array().unwrap();
    let mut ok = 0;
    for (n, case) in cases.iter().enumerate() {
        let a = strings(&case["a"]);
        let b = strings(&case["b"]);
        let kw = &case["kw"];
        let get = |k: &str, d: &'static str| kw.get(k).map(s).unwrap_or(d).to_string();
        let (ff, tf, fd, td, lt) = (
            get("fromfile", ""),
            get("tofile", ""),
            get("fromfiledate", ""),
            get("tofiledate", ""),
            get("lineterm", "\n"),
        );
        let opts = UnifiedDiffOptions {
            fromfile: &ff,
            tofile: &tf,
            fromfiledate: &fd,
            tofiledate: &td,
            n: u(&kw["n"]),
            lineterm: &lt,
        };
        let got = unified_diff_with(&a, &b, &opts);
        let want = strings(&case["expected"]);
        assert_eq!(got, want, "unified case {n}");
        if fd.is_empty() && td.is_empty() && lt == "\n" {
            assert_eq!(unified_diff(&a, &b, &ff, &tf, opts.n), want, "unified case {n}");
        }
        ok += 1;
    }
    println!("unified_diff parity: {ok}/{}", cases.len());
}

#[test]
fn sequence_matcher_parity() {
    let fx = fixture();
    let cases = fx["opcodes"].as_array().unwrap();
    let mut ok = 0;
    for (n, case) in cases.iter().enumerate() {
        let a: Vec<char> = s(&case["a"]).chars().collect();
        let b: Vec<char> = s(&case["b"]).chars().collect();
        let sm = SequenceMatcher::with_autojunk(&a, &b, case["autojunk"].as_bool().unwrap());
        let blocks: Vec<Vec<usize>> = sm.get_matching_blocks().iter().map(|m: &Match| vec![m.a, m.b, m.size]).collect();
        let want_blocks: Vec<Vec<usize>> =
            case["blocks"].as_array().unwrap().iter().map(|m| m.as_array().unwrap().iter().map(u).collect()).collect();
        assert_eq!(blocks, want_blocks, "opcodes case {n}: blocks");

        let op = |o: &Value| {
            let o = o.as_array().unwrap();
            (s(&o[0]).to_string(), u(&o[1]), u(&o[2]), u(&o[3]), u(&o[4]))
        };
        let mine = |o: &oh_difflib::Opcode| (o.tag.as_str().to_string(), o.i1, o.i2, o.j1, o.j2);
        let want_ops: Vec<_> = case["opcodes"].as_array().unwrap().iter().map(op).collect();
        let got_ops: Vec<_> = sm.get_opcodes().iter().map(mine).collect();
        assert_eq!(got_ops, want_ops, "opcodes case {n}: opcodes");

        let want_groups: Vec<Vec<_>> = case["grouped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_array().unwrap().iter().map(op).collect())
            .collect();
        let got_groups: Vec<Vec<_>> =
            sm.get_grouped_opcodes(u(&case["n"])).iter().map(|g| g.iter().map(mine).collect()).collect();
        assert_eq!(got_groups, want_groups, "opcodes case {n}: grouped");

        // Stored as Python's repr: parsing it with Rust's (correctly rounded) parser gives the
        // exact double.
        let r: f64 = s(&case["ratio"]).parse().unwrap();
        assert_eq!(sm.ratio(), r, "opcodes case {n}: ratio");
        ok += 1;
    }
    println!("SequenceMatcher parity: {ok}/{}", cases.len());
}

/// The examples written out in the behaviour spec (§3.7 and §4.10 Example 9).
#[test]
fn spec_examples() {
    assert_eq!(
        get_diff("", "def f():\n    return 1\n\nprint(f())\n", "/workspace/f.py"),
        "--- /workspace/f.py\n+++ /workspace/f.py\n\
         @@ -0,0 +1,2 @@\n+def f():\n+    return 1\n@@ -1,0 +4,2 @@\n+print(f())\n+"
    );
    assert_eq!(
        get_diff("", "x\ny", "/workspace/n.txt"),
        "--- /workspace/n.txt\n+++ /workspace/n.txt\n@@ -1 +1,2 @@\n-\n+x\n+y"
    );
    // Example 9: insert glue, then undo.
    assert_eq!(
        get_diff("x\ny", "x\nyNEW\n", "/workspace/n.txt"),
        "--- /workspace/n.txt\n+++ /workspace/n.txt\n@@ -2 +2,2 @@\n-y\n+yNEW\n+"
    );
    assert_eq!(
        get_diff("x\nyNEW\n", "x\ny", "/workspace/n.txt"),
        "--- /workspace/n.txt\n+++ /workspace/n.txt\n@@ -2,2 +2 @@\n-yNEW\n-\n+y"
    );
    // Undo right after create: identical texts give ''.
    assert_eq!(get_diff("a\n", "a\n", "/workspace/n.txt"), "");
}

/// A large input shaped like the editor benchmark, checked against a known-good answer, and
/// a popular-line case where autojunk changes the alignment.
#[test]
fn large_inputs() {
    let lines: Vec<String> = (0..20_000).map(|i| format!("line {i}")).collect();
    let old = lines.join("\n") + "\n";
    let mut new_lines = lines.clone();
    new_lines[19_990] = "changed".into();
    let new = new_lines.join("\n") + "\n";
    assert_eq!(get_diff(&old, &new, "/f"), "--- /f\n+++ /f\n@@ -19991 +19991 @@\n-line 19990\n+changed");

    // 300 items, "x" is popular (more than 4 occurrences): Python gives these blocks.
    let a: Vec<&str> = std::iter::repeat_n("x", 150).chain(["u"]).chain(std::iter::repeat_n("x", 149)).collect();
    let b: Vec<&str> = std::iter::repeat_n("x", 300).collect();
    let sm = SequenceMatcher::new(&a, &b);
    assert_eq!(sm.popular_count(), 1);
    // No element of b can seed a match, so the empty match at (0, 0) grows forward over the
    // 150 leading x's; the right-hand remainder starts with `u`, which matches nothing, so
    // nothing more is found.
    assert_eq!(sm.get_matching_blocks(), &[Match { a: 0, b: 0, size: 150 }, Match { a: 300, b: 300, size: 0 }]);
}

/// The text-specialised `get_diff` (byte-level prefix/suffix shortcuts) against the plain
/// generic path, on many random edits of texts with repeated lines.
#[test]
fn fast_path_matches_generic_path() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let vocab = ["", "a", "b", "ab", "a ", "x\r", "é", "}", "  ", "\u{a0}"];
    let mut checked = 0;
    for _ in 0..3000 {
        let n = [0, 1, 2, 5, 20, 210][next(6) as usize];
        let mut lines: Vec<&str> = (0..n).map(|_| vocab[next(10) as usize]).collect();
        let old = lines.join(if next(4) == 0 { "\r\n" } else { "\n" });
        for _ in 0..=next(3) {
            let at = next(lines.len() as u64 + 1) as usize;
            let del = (next(3) as usize).min(lines.len() - at);
            let ins: Vec<&str> = (0..next(3)).map(|_| vocab[next(10) as usize]).collect();
            lines.splice(at..at + del, ins);
        }
        let mut new = lines.join("\n");
        if next(3) == 0 {
            new.push('\n');
        }
        assert_eq!(
            get_diff(&old, &new, "p"),
            oh_difflib::get_diff_reference(&old, &new, "p"),
            "old={old:?} new={new:?}"
        );
        checked += 1;
    }
    println!("fast path = generic path: {checked}/{checked}");
}
