//! `cargo bench -p oh-shell --bench session` (custom harness).
//!
//! Measures through a real `BashSession`: `echo hi` round trip (p50/p90), session start,
//! `seq 1 1000000` wall time, and the peak RSS while a command prints 100 MB; and, in the same
//! run, a floor: a persistent bash over plain pipes (`true; echo MARK$?`, read until MARK). Prints
//! ratios against the floor. `SESSION_BENCH_ECHO_LOOP=N` runs only N `echo hi` (for `perf`).
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use oh_protocol::CmdRunAction;
use oh_shell::{BashSession, ShellConfig};

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn status_kb(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Reset VmHWM to the current RSS (Linux >= 4.0).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

struct PipeBash {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl PipeBash {
    fn start() -> PipeBash {
        let mut child = Command::new("/bin/bash")
            .args(["--norc", "--noprofile"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        PipeBash { child, out }
    }

    fn run(&mut self, cmd: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{cmd}; echo MARK$?").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        loop {
            line.clear();
            if self.out.read_line(&mut line).unwrap() == 0 || line.starts_with("MARK") {
                break;
            }
        }
    }
}

impl Drop for PipeBash {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn main() {
    let iters: usize = std::env::var("BENCH_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = std::env::temp_dir();
    if let Some(n) = std::env::var("SESSION_BENCH_ECHO_LOOP").ok().and_then(|v| v.parse().ok()) {
        // For `perf`: only `echo hi` in one session, n times, then the p50.
        let s = rt.block_on(BashSession::start(ShellConfig::new(&dir))).unwrap();
        let echo = CmdRunAction::new("echo hi");
        let mut v: Vec<Duration> = (0..n)
            .map(|_| {
                let t = Instant::now();
                rt.block_on(s.execute(&echo));
                t.elapsed()
            })
            .collect();
        eprintln!("echo hi p50 {:?} over {n}", pct(&mut v, 0.5));
        return;
    }

    // ---- floor: persistent bash over pipes ----
    let mut floor_start = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let mut b = PipeBash::start();
        b.run("true");
        floor_start.push(t.elapsed());
    }
    let mut b = PipeBash::start();
    for _ in 0..50 {
        b.run("true");
    }
    let mut floor_rt = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        b.run("true");
        floor_rt.push(t.elapsed());
    }
    let t = Instant::now();
    b.run("seq 1 1000000");
    let floor_seq = t.elapsed();
    drop(b);

    // ---- raw PTY throughput (no rendering) and the renderer alone ----
    let pty_seq = {
        use portable_pty::{native_pty_system, CommandBuilder, PtySize};
        use std::io::Read;
        let pair =
            native_pty_system().openpty(PtySize { rows: 1000, cols: 1000, pixel_width: 0, pixel_height: 0 }).unwrap();
        let mut cmd = CommandBuilder::new("seq");
        cmd.args(["1", "1000000"]);
        let t = Instant::now();
        let mut child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut r = pair.master.try_clone_reader().unwrap();
        let mut buf = vec![0u8; 65536];
        let mut n = 0usize;
        while let Ok(k) = r.read(&mut buf) {
            if k == 0 {
                break;
            }
            n += k;
        }
        let _ = child.wait();
        assert!(n > 6_000_000);
        t.elapsed()
    };
    let seq_bytes: Vec<u8> = (1..=1_000_000).flat_map(|i| format!("{i}\r\n").into_bytes()).collect();
    let t = Instant::now();
    let mut term = oh_shell::term::Term::new();
    for chunk in seq_bytes.chunks(4096) {
        term.feed(chunk);
    }
    let render_seq = t.elapsed();
    drop(term);
    drop(seq_bytes);
    let chunk: Vec<u8> = "a line of output\r\n".repeat(4000).into_bytes();
    reset_peak();
    let base = status_kb("VmRSS:");
    let mut term = oh_shell::term::Term::new();
    for _ in 0..(100_000_000 / chunk.len()) {
        term.feed(&chunk);
    }
    let cap = term.capture();
    let render_mem = status_kb("VmHWM:").saturating_sub(base);
    drop(cap);
    drop(term);

    // ---- oh-shell ----
    let mut start = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let s = rt.block_on(BashSession::start(ShellConfig::new(&dir))).unwrap();
        start.push(t.elapsed());
        rt.block_on(s.close());
    }
    let s = rt.block_on(BashSession::start(ShellConfig::new(&dir))).unwrap();
    let echo = CmdRunAction::new("echo hi");
    for _ in 0..50 {
        rt.block_on(s.execute(&echo));
    }
    let mut rtt = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        let o = rt.block_on(s.execute(&echo));
        rtt.push(t.elapsed());
        assert_eq!(o.content, "hi");
    }

    let rss0 = status_kb("VmRSS:");
    reset_peak();
    let t = Instant::now();
    let o = rt.block_on(s.execute(&CmdRunAction::new("seq 1 1000000")));
    let seq = t.elapsed();
    assert!(o.content.ends_with("1000000"), "{}", &o.content[o.content.len().saturating_sub(50)..]);
    let seq_peak = status_kb("VmHWM:");

    reset_peak();
    let t = Instant::now();
    let mut big = CmdRunAction::new("head -c 100000000 /dev/zero | tr '\\0' 'x'; echo");
    big.blocking = true;
    let o = rt.block_on(s.execute(&big));
    let big_t = t.elapsed();
    assert!(o.content.len() > 30_000);
    let big_peak = status_kb("VmHWM:");
    reset_peak();
    let t = Instant::now();
    let mut big2 = CmdRunAction::new("yes 'a line of output' | head -c 100000000");
    big2.blocking = true;
    rt.block_on(s.execute(&big2));
    let big2_t = t.elapsed();
    let big2_peak = status_kb("VmHWM:");
    rt.block_on(s.close());

    let (f50, f90) = (pct(&mut floor_rt, 0.5), pct(&mut floor_rt, 0.9));
    let (e50, e90) = (pct(&mut rtt, 0.5), pct(&mut rtt, 0.9));
    let (fs50, s50) = (pct(&mut floor_start, 0.5), pct(&mut start, 0.5));
    let r = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!("oh-shell session bench ({iters} iterations)");
    println!("  floor  bash over pipes `true; echo MARK$?`: p50 {f50:?}  p90 {f90:?}");
    println!(
        "  echo hi round trip:                      p50 {e50:?}  p90 {e90:?}   (x{:.2} / x{:.2} the floor)",
        r(e50, f50),
        r(e90, f90)
    );
    println!(
        "  session start (incl. alias init):        p50 {s50:?}   floor (pipe bash + 1 cmd) p50 {fs50:?}   (x{:.2})",
        r(s50, fs50)
    );
    println!("  seq 1 1000000: {seq:?}   floor {floor_seq:?}   (x{:.2})", r(seq, floor_seq));
    println!("  seq 1 1000000 on a bare PTY (read to EOF, no rendering): {pty_seq:?};  renderer alone on the same bytes: {render_seq:?}");
    println!("  renderer alone, 100 MB of short lines: peak RSS growth {} MB", render_mem / 1024);
    println!("  RSS before big outputs: {} MB", rss0 / 1024);
    println!("  peak RSS during seq 1 1000000: {} MB", seq_peak / 1024);
    println!("  100 MB in one line (wraps to 100 000 rows): {big_t:?}, peak RSS {} MB", big_peak / 1024);
    println!("  100 MB of short lines (yes | head -c 100M): {big2_t:?}, peak RSS {} MB", big2_peak / 1024);
}
