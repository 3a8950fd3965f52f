//! Editor benchmark on a 100,000-line (~5.9 MB) file, through `FileActions` (server wrapper and
//! diff included) on `LocalFs`.
//!
//! `cargo bench -p oh-files --bench editor` prints one `name median_ms min_ms` line per operation
//! and the peak RSS; `bench/editor.sh` runs it next to `bench/editor_reference.py`.
//! Env: `EDITOR_BENCH_ITERS` (default 15), `EDITOR_BENCH_DIR` (default a fresh temp dir).

use std::sync::Arc;
use std::time::Instant;

use oh_files::{FileActions, LocalFs};
use oh_protocol::{FileEditAction, FileReadAction, ImplSource, Observation};
use serde_json::json;

fn edit(path: &str, command: &str) -> FileEditAction {
    FileEditAction {
        path: path.to_string(),
        command: command.to_string(),
        file_text: None,
        old_str: None,
        new_str: None,
        insert_line: None,
        content: String::new(),
        start: 1,
        end: -1,
        impl_source: ImplSource::OhAci,
        view_range: None,
    }
}

fn view(path: &str, range: Option<serde_json::Value>) -> FileReadAction {
    FileReadAction {
        path: path.to_string(),
        start: 0,
        end: -1,
        impl_source: ImplSource::OhAci,
        view_range: range,
    }
}

fn check(obs: &Observation, what: &str) {
    assert!(
        !obs.content.starts_with("ERROR"),
        "{what}: {}",
        &obs.content[..obs.content.len().min(300)]
    );
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[v.len() / 2], v[0])
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let iters: usize = std::env::var("EDITOR_BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let dir = std::env::var("EDITOR_BENCH_DIR").unwrap_or_else(|_| {
        let d = std::env::temp_dir().join(format!("oh-files-bench-{}", std::process::id()));
        d.to_string_lossy().into_owned()
    });
    std::fs::create_dir_all(&dir).unwrap();
    let path = format!("{dir}/big.py");
    let mut text = String::with_capacity(6_000_000);
    for i in 0..100_000 {
        text.push_str(&format!(
            "value_{i:06} = compute_something(alpha, beta, gamma) + {i:06}\n"
        ));
    }
    std::fs::write(&path, &text).unwrap();
    eprintln!(
        "file: {path}, {} bytes, 100000 lines, {iters} iterations",
        text.len()
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let fa = FileActions::new(Arc::new(LocalFs), dir.clone());
    let mut t = std::collections::BTreeMap::<&str, Vec<f64>>::new();
    rt.block_on(async {
        for i in 0..iters {
            let s = Instant::now();
            let o = fa.read(&view(&path, None), &dir).await;
            t.entry("view")
                .or_default()
                .push(s.elapsed().as_secs_f64() * 1e3);
            check(&o, "view");

            let s = Instant::now();
            let o = fa
                .read(&view(&path, Some(json!([50000, 50100]))), &dir)
                .await;
            t.entry("view_range")
                .or_default()
                .push(s.elapsed().as_secs_f64() * 1e3);
            check(&o, "view_range");

            let mut a = edit(&path, "str_replace");
            a.old_str = Some("value_099990 = compute_something(alpha".into());
            a.new_str = Some(format!("value_099990 = compute_something(ALPHA{i}"));
            let s = Instant::now();
            let o = fa.edit(&a).await;
            t.entry("str_replace")
                .or_default()
                .push(s.elapsed().as_secs_f64() * 1e3);
            check(&o, "str_replace");

            let s = Instant::now();
            let o = fa.edit(&edit(&path, "undo_edit")).await;
            t.entry("undo")
                .or_default()
                .push(s.elapsed().as_secs_f64() * 1e3);
            check(&o, "undo");

            let mut a = edit(&path, "insert");
            a.insert_line = Some(json!(50000));
            a.new_str = Some(format!("inserted_line_{i} = 1\ninserted_again = 2"));
            let s = Instant::now();
            let o = fa.edit(&a).await;
            t.entry("insert")
                .or_default()
                .push(s.elapsed().as_secs_f64() * 1e3);
            check(&o, "insert");
            // restore (not timed)
            let o = fa.edit(&edit(&path, "undo_edit")).await;
            check(&o, "undo after insert");
        }
    });
    for name in ["view", "view_range", "str_replace", "insert", "undo"] {
        let (med, min) = stats(t.remove(name).unwrap());
        println!("{name} {med:.3} {min:.3}");
    }
    println!("peak_rss_kb {}", peak_rss_kb());
    if std::env::var("EDITOR_BENCH_DIR").is_err() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
