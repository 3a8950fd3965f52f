//! `get_diff` on the editor benchmark's shape: a 100,000-line, ~5.9 MB file with one line
//! changed near the end (a `str_replace`), against two baselines measured in the same run:
//!
//! * `similar` (Myers) line diff rendered as a zero-context unified diff;
//! * a plain scan: split both texts into lines and compare them pairwise (a lower bound for any
//!   line diff).
//!
//! Criterion reports each; afterwards a short fixed-iteration timing prints the ratios.
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
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(0)
        .header(path, path)
        .to_string()
}

fn scan(old: &str, new: &str) -> usize {
    old.split('\n')
        .zip(new.split('\n'))
        .filter(|(a, b)| a != b)
        .count()
}

fn time_per_iter(iters: u32, mut f: impl FnMut()) -> Duration {
    f();
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed() / iters
}

fn main() {
    let old = make_file(100_000);
    let new = replace_line(&old, 99_000, "    let value_99000 = compute(\"CHANGED\");");
    let path = "/workspace/big.rs";
    eprintln!(
        "input: {} lines, {} bytes; diff:\n{}",
        old.split('\n').count(),
        old.len(),
        oh_difflib::get_diff(&old, &new, path)
    );

    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(30)
        .measurement_time(Duration::from_secs(4));
    let mut g = c.benchmark_group("diff_100k_lines_one_change");
    g.bench_function("oh_difflib::get_diff", |b| {
        b.iter(|| oh_difflib::get_diff(black_box(&old), black_box(&new), path))
    });
    g.bench_function("similar unified (baseline)", |b| {
        b.iter(|| similar_diff(black_box(&old), black_box(&new), path))
    });
    g.bench_function("line equality scan (baseline)", |b| {
        b.iter(|| scan(black_box(&old), black_box(&new)))
    });
    g.finish();
    c.final_summary();

    // Same-run ratios.
    let ours = time_per_iter(30, || {
        black_box(oh_difflib::get_diff(black_box(&old), black_box(&new), path));
    });
    let sim = time_per_iter(30, || {
        black_box(similar_diff(black_box(&old), black_box(&new), path));
    });
    let plain = time_per_iter(30, || {
        black_box(scan(black_box(&old), black_box(&new)));
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "get_diff {:.2} ms | similar {:.2} ms (ours is {:.2}x its time) | scan {:.2} ms (ours is {:.2}x)",
        ms(ours),
        ms(sim),
        ours.as_secs_f64() / sim.as_secs_f64(),
        ms(plain),
        ours.as_secs_f64() / plain.as_secs_f64(),
    );
}
