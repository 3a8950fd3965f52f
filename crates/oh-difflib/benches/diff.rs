//! `get_diff` on the editor benchmark's inputs: its 100,000-line, 5.9 MB file after the
//! `str_replace` near the end and after the two-line insert at line 50000, plus a source-like
//! file with many repeated lines; against baselines measured in the same run:
//!
//! * `similar` (Myers) line diff rendered as a zero-context unified diff;
//! * a plain scan: split both texts into lines and compare them pairwise (the cost of merely
//!   reading both texts line by line; not a diff);
//! * Python's difflib-based `get_diff` on the same texts, when `python3` is on PATH.
//!
//! Criterion reports each; afterwards a same-run table prints the minimum wall-clock and
//! thread-CPU time of each (thread CPU is the fairer figure on a busy machine) and the ratios.
//!
//!     CARGO_TARGET_DIR=/tmp/tgt-difflib cargo bench -p oh-difflib --bench diff

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;

/// Deterministic source-like text: mostly unique lines, with blank lines and a few very common
/// lines (popular under autojunk), padded to ~59 bytes a line on average.
fn make_file(lines: usize) -> String {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = String::with_capacity(lines * 60);
    for i in 0..lines {
        match next() % 16 {
            0 => out.push('\n'),
            1 => out.push_str("        }\n"),
            2 => out.push_str("        return result;\n"),
            _ => {
                let width = 40 + (next() % 40) as usize;
                let mut line = format!("    let value_{i} = compute(\"");
                while line.len() < width {
                    line.push((b'a' + (next() % 26) as u8) as char);
                }
                line.push_str("\");\n");
                out.push_str(&line);
            }
        }
    }
    out
}

fn replace_line(text: &str, index: usize, with: &str) -> String {
    let mut lines: Vec<&str> = text.split('\n').collect();
    lines[index] = with;
    lines.join("\n")
}

fn similar_diff(old: &str, new: &str, path: &str) -> String {
    similar::TextDiff::from_lines(old, new).unified_diff().context_radius(0).header(path, path).to_string()
}

fn scan(old: &str, new: &str) -> usize {
    old.split('\n').zip(new.split('\n')).filter(|(a, b)| a != b).count()
}

/// Thread CPU time (immune to waiting for a core on a busy machine).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// (min wall, min thread-CPU) per call over `iters` calls, after one warm-up call.
fn measure(iters: u32, mut f: impl FnMut()) -> (Duration, Duration) {
    f();
    let (mut wall, mut cpu) = (Duration::MAX, Duration::MAX);
    for _ in 0..iters {
        let (w0, c0) = (Instant::now(), thread_cpu());
        f();
        cpu = cpu.min(thread_cpu() - c0);
        wall = wall.min(w0.elapsed());
    }
    (wall, cpu)
}

/// The reference: `openhands_aci.utils.diff.get_diff` (inlined: difflib + rstrip), timed by
/// `python3` on the same texts. Returns (min wall, min thread-CPU) in ms, or None without python3.
fn python_reference(old: &str, new: &str, path: &str) -> Option<(f64, f64)> {
    let dir = std::env::temp_dir().join(format!("oh-difflib-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let (po, pn) = (dir.join("old"), dir.join("new"));
    std::fs::write(&po, old).ok()?;
    std::fs::write(&pn, new).ok()?;
    let script = r#"
import difflib, sys, time
old = open(sys.argv[1], encoding='utf-8', newline='').read()
new = open(sys.argv[2], encoding='utf-8', newline='').read()
def get_diff(o, n, p):
    d = list(difflib.unified_diff(o.split('\n'), n.split('\n'), fromfile=p, tofile=p, n=0))
    return '\n'.join(map(lambda x: x.rstrip(), d))
wall = cpu = 1e9
for _ in range(5):
    w, c = time.perf_counter(), time.thread_time()
    get_diff(old, new, sys.argv[3])
    cpu = min(cpu, time.thread_time() - c)
    wall = min(wall, time.perf_counter() - w)
print(wall * 1e3, cpu * 1e3)
"#;
    let out = std::process::Command::new("python3").args(["-c", script]).arg(&po).arg(&pn).arg(path).output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = match out {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            eprintln!("python3 failed: {}", String::from_utf8_lossy(&o.stderr));
            return None;
        }
        Err(e) => {
            eprintln!("python3 not run: {e}");
            return None;
        }
    };
    let text = String::from_utf8(out.stdout).ok()?;
    let mut it = text.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some((it.next()??, it.next()??))
}

/// The editor benchmark's file (`bench/editor_reference.py`): 100,000 unique ~59-byte lines.
fn editor_file() -> String {
    let mut out = String::with_capacity(6_000_000);
    for i in 0..100_000 {
        out.push_str(&format!("value_{i:06} = compute_something(alpha, beta, gamma) + {i:06}\n"));
    }
    out
}

fn main() {
    let path = "/workspace/big.py";
    let editor = editor_file();
    // The editor benchmark's str_replace near the end, and its two-line insert at line 50000.
    let replaced =
        editor.replacen("value_099990 = compute_something(alpha", "value_099990 = compute_something(ALPHA0", 1);
    let inserted = {
        let mut lines: Vec<&str> = editor.split('\n').collect();
        lines.splice(50_000..50_000, ["inserted_line_0 = 1", "inserted_again = 2"]);
        lines.join("\n")
    };
    // Source-like text with blank and very common lines (popular under autojunk).
    let source = make_file(100_000);
    let source_new = replace_line(&source, 99_000, "    let value_99000 = compute(\"CHANGED\");");
    let cases: [(&str, &str, &str); 3] = [
        ("editor_file_str_replace_near_end", &editor, &replaced),
        ("editor_file_insert_at_50000", &editor, &inserted),
        ("source_like_one_change_near_end", &source, &source_new),
    ];
    for (name, old, new) in cases {
        eprintln!(
            "{name}: {} lines, {} bytes; diff:\n{}\n",
            old.split('\n').count(),
            old.len(),
            oh_difflib::get_diff(old, new, path)
        );
    }

    let mut c = Criterion::default().configure_from_args().sample_size(30).measurement_time(Duration::from_secs(4));
    for (name, old, new) in cases {
        let mut g = c.benchmark_group(name);
        g.bench_function("oh_difflib::get_diff", |b| {
            b.iter(|| oh_difflib::get_diff(black_box(old), black_box(new), path))
        });
        g.bench_function("similar unified (baseline)", |b| {
            b.iter(|| similar_diff(black_box(old), black_box(new), path))
        });
        g.bench_function("line equality scan (baseline)", |b| b.iter(|| scan(black_box(old), black_box(new))));
        g.finish();
    }
    c.final_summary();

    // Same-run comparison: minimum over 40 calls each, wall clock and thread CPU time.
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("min of 40 calls, wall / thread CPU, ms");
    for (name, old, new) in cases {
        let ours = measure(40, || {
            black_box(oh_difflib::get_diff(black_box(old), black_box(new), path));
        });
        let sim = measure(40, || {
            black_box(similar_diff(black_box(old), black_box(new), path));
        });
        let plain = measure(40, || {
            black_box(scan(black_box(old), black_box(new)));
        });
        println!("{name}:");
        println!("  oh_difflib::get_diff      {:8.2} / {:8.2}", ms(ours.0), ms(ours.1));
        println!(
            "  similar unified (Myers)   {:8.2} / {:8.2}   ours/similar = {:.2} / {:.2}",
            ms(sim.0),
            ms(sim.1),
            ms(ours.0) / ms(sim.0),
            ms(ours.1) / ms(sim.1)
        );
        println!(
            "  split + line-equal scan   {:8.2} / {:8.2}   ours/scan    = {:.2} / {:.2}",
            ms(plain.0),
            ms(plain.1),
            ms(ours.0) / ms(plain.0),
            ms(ours.1) / ms(plain.1)
        );
        match python_reference(old, new, path) {
            Some((wall, cpu)) => println!(
                "  python difflib get_diff   {:8.2} / {:8.2}   python/ours  = {:.1}x / {:.1}x",
                wall,
                cpu,
                wall / ms(ours.0),
                cpu / ms(ours.1)
            ),
            None => println!("  python difflib get_diff   (python3 not available)"),
        }
    }
}
