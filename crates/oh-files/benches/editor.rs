//! Editor benchmark on a 100,000-line (~6 MB) file, through `FileActions` on `LocalFs`.
//!
//! Two figures per operation: "editor" (editor + server wrapper, what `OHEditor` does) and
//! "full" (plus `get_diff`, what the action execution server does). Output lines:
//! `name editor_median editor_min full_median full_min` (ms), then `peak_rss_kb N`.
//! `bench/editor.sh` runs it next to `bench/editor_reference.py`.
//! Env: `EDITOR_BENCH_ITERS` (default 15), `EDITOR_BENCH_DIR` (default a fresh temp dir),
//! `EDITOR_BENCH_PROFILE=view_range` (or another operation: loop on that one alone, for `perf`;
//! prints nothing `bench/editor.sh` reads).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use oh_files::{FileActions, LocalFs};
use oh_protocol::{FileEditAction, FileReadAction, ImplSource};
use serde_json::json;

fn edit(path: &str, command: &str) -> FileEditAction {
    FileEditAction::oh_aci(path, command)
}

fn view(path: &str, range: Option<serde_json::Value>) -> FileReadAction {
    FileReadAction { path: path.to_string(), start: 0, end: -1, impl_source: ImplSource::OhAci, view_range: range }
}

fn check(content: &str, what: &str) {
    assert!(!content.starts_with("ERROR"), "{what}: {}", &content[..content.len().min(300)]);
}

fn stats(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[v.len() / 2], v[0])
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let iters: usize = std::env::var("EDITOR_BENCH_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(15);
    let dir = std::env::var("EDITOR_BENCH_DIR").unwrap_or_else(|_| {
        let d = std::env::temp_dir().join(format!("oh-files-bench-{}", std::process::id()));
        d.to_string_lossy().into_owned()
    });
    std::fs::create_dir_all(&dir).unwrap();
    let path = format!("{dir}/big.py");
    let mut text = String::with_capacity(6_300_000);
    for i in 0..100_000 {
        text.push_str(&format!("value_{i:06} = compute_something(alpha, beta, gamma) + {i:06}\n"));
    }
    std::fs::write(&path, &text).unwrap();
    eprintln!("file: {path}, {} bytes, 100000 lines, {iters} iterations", text.len());

    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let fa = FileActions::new(Arc::new(LocalFs), dir.clone());
    if let Ok(op) = std::env::var("EDITOR_BENCH_PROFILE") {
        rt.block_on(profile_one(&fa, &dir, &path, &op, iters));
        return;
    }
    // (name, full?) -> samples
    let mut t = BTreeMap::<(&str, bool), Vec<f64>>::new();
    rt.block_on(async {
        for i in 0..iters {
            let s = Instant::now();
            let o = fa.read(&view(&path, None), &dir).await;
            let ms = s.elapsed().as_secs_f64() * 1e3;
            check(&o.content, "view");
            t.entry(("view", false)).or_default().push(ms);
            t.entry(("view", true)).or_default().push(ms);

            let s = Instant::now();
            let o = fa.read(&view(&path, Some(json!([50000, 50100]))), &dir).await;
            let ms = s.elapsed().as_secs_f64() * 1e3;
            check(&o.content, "view_range");
            t.entry(("view_range", false)).or_default().push(ms);
            t.entry(("view_range", true)).or_default().push(ms);

            for full in [false, true] {
                let run = |a: FileEditAction| {
                    let fa = &fa;
                    async move {
                        let s = Instant::now();
                        let c = if full { fa.edit(&a).await.content } else { fa.edit_without_diff(&a).await };
                        (s.elapsed().as_secs_f64() * 1e3, c)
                    }
                };
                let mut a = edit(&path, "str_replace");
                a.old_str = Some("value_099990 = compute_something(alpha".into());
                a.new_str = Some(format!("value_099990 = compute_something(ALPHA{i}"));
                let (ms, c) = run(a).await;
                check(&c, "str_replace");
                t.entry(("str_replace", full)).or_default().push(ms);

                let (ms, c) = run(edit(&path, "undo_edit")).await;
                check(&c, "undo");
                t.entry(("undo", full)).or_default().push(ms);

                let mut a = edit(&path, "insert");
                a.insert_line = Some(json!(50000));
                a.new_str = Some(format!("inserted_line_{i} = 1\ninserted_again = 2"));
                let (ms, c) = run(a).await;
                check(&c, "insert");
                t.entry(("insert", full)).or_default().push(ms);

                let c = fa.edit_without_diff(&edit(&path, "undo_edit")).await; // restore, not timed
                check(&c, "undo after insert");
            }
        }
    });
    for name in ["view", "view_range", "str_replace", "insert", "undo"] {
        let (em, en) = stats(&t[&(name, false)]);
        let (fm, fne) = stats(&t[&(name, true)]);
        println!("{name} {em:.3} {en:.3} {fm:.3} {fne:.3}");
    }
    println!("peak_rss_kb {}", peak_rss_kb());
    if std::env::var("EDITOR_BENCH_DIR").is_err() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `EDITOR_BENCH_PROFILE`: one operation in a loop (with its untimed undo), median printed.
async fn profile_one(fa: &FileActions, dir: &str, path: &str, op: &str, iters: usize) {
    let mut samples = Vec::new();
    for i in 0..iters {
        let s = Instant::now();
        let c = match op {
            "view" => fa.read(&view(path, None), dir).await.content,
            "view_range" => fa.read(&view(path, Some(json!([50000, 50100]))), dir).await.content,
            "str_replace" | "undo" => {
                let mut a = edit(path, "str_replace");
                a.old_str = Some("value_099990 = compute_something(alpha".into());
                a.new_str = Some(format!("value_099990 = compute_something(ALPHA{i}"));
                let s = Instant::now();
                let c = fa.edit_without_diff(&a).await;
                let replaced = s.elapsed();
                check(&c, "str_replace");
                let s = Instant::now();
                let c = fa.edit_without_diff(&edit(path, "undo_edit")).await;
                let t = if op == "undo" { s.elapsed() } else { replaced };
                samples.push(t.as_secs_f64() * 1e3);
                check(&c, op);
                continue;
            }
            "insert" => {
                let mut a = edit(path, "insert");
                a.insert_line = Some(json!(50000));
                a.new_str = Some(format!("inserted_line_{i} = 1"));
                let c = fa.edit_without_diff(&a).await;
                samples.push(s.elapsed().as_secs_f64() * 1e3);
                check(&c, "insert");
                check(&fa.edit_without_diff(&edit(path, "undo_edit")).await, "undo");
                continue;
            }
            other => panic!("EDITOR_BENCH_PROFILE: unknown operation {other}"),
        };
        samples.push(s.elapsed().as_secs_f64() * 1e3);
        check(&c, op);
    }
    let (median, min) = stats(&samples);
    eprintln!("{op}: median {median:.3} ms, min {min:.3} ms over {iters}");
}
