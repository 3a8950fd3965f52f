//! `cargo bench -p oh-checkpoint` (custom harness).
//!
//! A generated workspace of 10,000 files / 200 MB (100 folders of 100 files of 20 KiB). Measures
//! the first checkpoint, a checkpoint after changing 10 files (target ≤ 200 ms), a restore of 100
//! changed files (target ≤ 1 s; it includes the undo checkpoint a restore takes first), and, in the
//! same run, the anchor: a shadow git repository (`git --git-dir=<separate> --work-tree=<ws> add -A
//! && commit`, the way Cline checkpoints) for the same steps, restored with `reset --hard`.
//! Prints ratios against the anchor. `CHECKPOINT_BENCH_FILES=N` shrinks the workspace.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use oh_checkpoint::{Settings, Store};

const FILE_BYTES: usize = 20 * 1024;

/// Deterministic bytes that neither git nor anything else compresses much.
fn content(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

fn path_of(ws: &Path, i: usize) -> PathBuf {
    ws.join(format!("dir{:03}/file{:05}.dat", i / 100, i))
}

fn change(ws: &Path, files: usize, count: usize, round: u64) {
    for k in 0..count {
        let i = (k * 997 + round as usize * 31) % files;
        fs::write(path_of(ws, i), content(1_000_000 * round + i as u64, FILE_BYTES)).unwrap();
    }
}

fn git(git_dir: &Path, ws: &Path, args: &[&str]) {
    let status = Command::new("git")
        .arg(format!("--git-dir={}", git_dir.display()))
        .arg(format!("--work-tree={}", ws.display()))
        .args(["-c", "user.name=bench", "-c", "user.email=bench@invalid", "-c", "gc.auto=0", "-c", "core.fsync=none"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(std::process::Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn shadow_commit(git_dir: &Path, ws: &Path, message: &str) {
    git(git_dir, ws, &["add", "-A"]);
    git(git_dir, ws, &["commit", "-q", "--allow-empty", "-m", message]);
}

fn head(git_dir: &Path) -> String {
    let out = Command::new("git")
        .arg(format!("--git-dir={}", git_dir.display()))
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let v = f();
    (t.elapsed(), v)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let files: usize = std::env::var("CHECKPOINT_BENCH_FILES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    for i in 0..files {
        let p = path_of(&ws, i);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content(i as u64, FILE_BYTES)).unwrap();
    }
    let total_mb = (files * FILE_BYTES) as f64 / 1_048_576.0;
    // Files written less than 100 ms (2 s on a filesystem with whole-second stamps) before a
    // checkpoint are hashed again by the next one (the stat index's racy window); a real
    // workspace is older than that.
    std::thread::sleep(Duration::from_millis(2100));
    let roots = vec![ws.clone()];
    let mut store =
        Store::open(tmp.path().join("store"), Settings { max_store_bytes: None, ..Settings::default() }).unwrap();
    let git_dir = tmp.path().join("shadow.git");
    git(&git_dir, &ws, &["init", "-q"]);

    println!("workspace: {files} files, {total_mb:.0} MB");
    let (ours_first, first) = time(|| store.take(&roots, "first").unwrap());
    let (git_first, _) = time(|| shadow_commit(&git_dir, &ws, "first"));
    println!(
        "first checkpoint:        ours {:>10}   shadow git {:>10}   ratio {:.2}x  ({} files hashed)",
        ms(ours_first),
        ms(git_first),
        ours_first.as_secs_f64() / git_first.as_secs_f64(),
        first.hashed
    );

    let mut ours_ten = Vec::new();
    let mut git_ten = Vec::new();
    for round in 1..=5 {
        change(&ws, files, 10, round);
        // A user reads the reply before sending the next message: the files leave the stat
        // index's racy window (100 ms) in the meantime (a file changed within it is hashed now
        // and again next time).
        std::thread::sleep(Duration::from_millis(150));
        let (d, s) = time(|| store.take(&roots, "ten").unwrap());
        assert_eq!(s.hashed, 10, "only the changed files are hashed");
        ours_ten.push(d);
        git_ten.push(time(|| shadow_commit(&git_dir, &ws, "ten")).0);
    }
    let (o, g) = (median(ours_ten), median(git_ten));
    println!(
        "checkpoint, 10 changed:  ours {:>10}   shadow git {:>10}   ratio {:.3}x  (median of 5; target <= 200 ms)",
        ms(o),
        ms(g),
        o.as_secs_f64() / g.as_secs_f64()
    );

    // Restore: 100 files changed since the checkpoint. Ours takes its undo checkpoint first; the
    // anchor commits the current state first too (as a shadow-git revert must) and resets.
    std::thread::sleep(Duration::from_millis(2100));
    let target = store.take(&roots, "before 100").unwrap();
    shadow_commit(&git_dir, &ws, "before 100");
    let git_target = head(&git_dir);
    change(&ws, files, 100, 99);
    let (ours_restore, report) = time(|| store.restore(target.id, &[]).unwrap());
    assert_eq!(report.applied.len(), 100);
    assert!(report.left.is_empty());
    change(&ws, files, 100, 99);
    let (git_restore, _) = time(|| {
        shadow_commit(&git_dir, &ws, "undo");
        git(&git_dir, &ws, &["reset", "-q", "--hard", &git_target]);
    });
    println!(
        "restore, 100 changed:    ours {:>10}   shadow git {:>10}   ratio {:.3}x  (target <= 1 s)",
        ms(ours_restore),
        ms(git_restore),
        ours_restore.as_secs_f64() / git_restore.as_secs_f64()
    );
    println!("store size: {:.1} MB for {} checkpoints", store.size() as f64 / 1_048_576.0, store.list().len());
}
