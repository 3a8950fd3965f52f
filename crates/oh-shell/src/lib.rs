//! A persistent bash session on a PTY that answers `CmdRunAction`s with the observations
//! OpenHands 1.6.0's tmux `BashSession` (`openhands/runtime/utils/bash.py`) produces.
//!
//! # Design
//!
//! * **The same shell, a different terminal.** The reference types keys into an interactive
//!   `/bin/bash` (readline on) inside a 1000×1000 tmux pane and reads the pane back with
//!   `capture-pane`. We run the same interactive bash, with readline, on a portable-pty PTY of the
//!   same size, and replace tmux with [`term::Term`], a small emulator that keeps what a tmux 3.3
//!   pane keeps (1000 columns, 1000 rows, `history-limit` 10 000 with tmux's "drop a tenth when
//!   full" rule, autowrap with joined wrapped lines, TAB stops, CR overwrite, cursor movement and
//!   erase sequences, `scroll-on-clear`, the alternate screen) and renders it the way
//!   `capture-pane -J -pS -` + libtmux + the reference's per-line `rstrip` do. All the echo
//!   (readline's for commands, the tty's for `is_input` text), `^C`, job-control messages and
//!   prompt text therefore come from real programs, and the reference's own extraction algorithm
//!   (PS1 regex, `_combine_outputs_between_matches`, prefix removal of the echo, `prev_output`
//!   stripping) is applied to that pane text. This is what reproduces quirks such as "a new
//!   command after a finished timed-out one keeps the old tail and its own echo", the
//!   `[Previous command outputs are truncated. Showing the last N lines…]` count (10013 for
//!   `seq 1 100000`, as in the reference) and the escaped-`\;` echo.
//! * **Completion detection.** The prompt is the reference's PS1 JSON block
//!   (`###PS1JSON###` … `###PS1END###`) with the same values (`$?`, `$!`, `\u`, `\h`, the logical
//!   cwd, `which python`), produced by a `PROMPT_COMMAND` function that needs no fork (the
//!   reference's `$(pwd)` and `$(which python)` cost two forks and a `/bin/sh` per prompt). A
//!   reader thread feeds PTY output to the emulator as it arrives and counts occurrences of
//!   `###PS1END###` in the byte stream (a KMP automaton over new bytes only); only when that
//!   count moves does the session capture the pane and apply the reference's test (more valid
//!   PS1 blocks than before the command, or the pane ends with the marker). No polling: waiting
//!   is a `tokio::sync::watch` notification or a timer for the soft/hard timeout.
//! * **Memory bound.** Output is rendered as it arrives; only the pane (≤ 11 000 rows) is kept,
//!   history rows frozen into compact strings. A command printing 100 MB keeps the process at a
//!   few MB plus at most ~11 MB for a pane full of 1000-column rows.
//! * **State machine.** `execute` is a straight re-statement of the reference's `execute`
//!   (§2.4 of the spec): no-previous-command replies, multi-command rejection through
//!   `oh_bashlex`, NOT-executed, keys (`C-x` without Enter, tmux key names such as `Up`), soft
//!   timeout (per session, off for `blocking`), hard timeout (`str(float)` seconds), completion
//!   (metadata of the last block, cwd update, `C-l` + `clear-history` emulated by resetting the
//!   pane to the last prompt). A timed-out command keeps running; the next action interacts.
//!
//! # Deviations from the reference (and why)
//!
//! * The reference's first poll can report "completed" before the echo appears (stale metadata,
//!   empty content); we only test for completion once a new prompt marker has been printed
//!   (spec [N]).
//! * Commands are typed as-is: the `\;` doubling of `escape_bash_special_chars` only shows in
//!   `obs.command` and in the (then unremoved) echo, never in what bash runs (spec §2.9).
//! * readline completion is disabled, so a TAB in a command is inserted instead of being eaten
//!   (spec [F]); the echo then shows the TAB expanded by the terminal.
//! * Timing: completion is reported as soon as the prompt arrives instead of at the next 0.5 s
//!   poll, and the soft/hard timeouts fire at their exact deadlines.
//! * A signal key (`C-c`, `C-\`, `C-z`) is typed only once the terminal's foreground process
//!   group is settled, with bash stopped meanwhile, and its signal is re-sent with `kill` if the
//!   job ended before the kernel processed the key (`send_signal_key`): tmux types it at once,
//!   and a `^C` landing while bash hands the terminal from one job to the next is lost.
//! * If bash itself exits (`exit`, `C-d` at the prompt), the reply carries the output and bash's
//!   exit status, and the next command starts a fresh bash in the last known cwd; the reference
//!   loses its tmux pane and fails every later command.
//! * The prompt hook is an exported function (`__oh_ps1`, visible in `declare -f` and as
//!   `BASH_FUNC___oh_ps1%%` in children's environment, so nested interactive bashes keep the
//!   protocol); `PROMPT_COMMAND` is `__oh_ps1` instead of the reference's `export PS1="…"` text.
//!   `working_dir` is `$PWD` (the reference's `$(pwd)` differs only if `PWD` is assigned by
//!   hand); `py_interpreter_path` re-states debianutils `which` in the shell. While bash has
//!   children, the hook waits (bounded) for children with a pending signal to act on it, then runs
//!   the reference's two command substitutions (`$(pwd)`, `$(which python)`) and discards them:
//!   that lets a job that was just killed die and be reaped before the prompt's job
//!   notifications, so "Terminated"/"Killed" lines appear in the same reply as in the reference.
//! * tmux key names are looked up for the common keys (`Enter`, `Escape`, `Tab`, `BTab`, `Space`,
//!   `BSpace`, arrows, `Home`/`End`, `IC`/`DC`, page keys, `F1`–`F12`, `C-`/`M-`/`S-`/`^`
//!   modifiers, single characters); keypad and mouse names and `0x…` codes are sent as text.
//!   tmux's trailing-`;` argument rule is reproduced (`echo hi;` types `echo hi`).
//! * The emulator is not a full terminal: insert mode, tab-stop setting, origin mode and a few
//!   rarer sequences are ignored, and character widths follow a built-in table close to glibc's
//!   `wcwidth`. Full-screen programs are rendered approximately (the reference leaves them
//!   uncharacterised).
//! * No `~/.bashrc`/profile is read (`--norc --noprofile`), `LANG`/`LC_ALL` are `C.UTF-8`,
//!   `TERM=tmux-256color` (what the reference's panes have), `VSCODE_*`/`ELECTRON_RUN_AS_NODE` are removed; tmux's own
//!   `TMUX`/`TMUX_PANE` variables are not set.

mod keys;
pub mod term;
pub mod ps1;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use oh_protocol::{CmdOutputMetadata, CmdRunAction, Observation};
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};
use tokio::sync::{watch, Mutex};

use term::Term;
use oh_pysem::{repr_float as python_float_str, rstrip as py_rstrip, splitlines_count as py_splitlines_count, strip as py_strip};
use ps1::{combine_outputs, find_ps1, metadata_from, strip_command_echo, Ps1Match, PS1_END};

/// A sink for the raw bytes the shell prints (the VS Code terminal mirror).
pub type OutputSink = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// `TIMEOUT_MESSAGE_TEMPLATE` (`openhands/runtime/utils/bash_constants.py`).
pub const TIMEOUT_MESSAGE_TEMPLATE: &str = "You may wait longer to see additional output by sending empty command '', send other commands to interact with the current process, send keys (\"C-c\", \"C-z\", \"C-d\") to interrupt/kill the previous command before sending your new command, or use the timeout parameter in execute_bash for future commands.";
const CONTINUE_PREFIX: &str = "[Below is the output of the previous command.]\n";

/// How to start a session.
#[derive(Clone)]
pub struct ShellConfig {
    /// Initial working directory.
    pub work_dir: PathBuf,
    /// Seconds without new output before a non-blocking command returns (`NO_CHANGE_TIMEOUT_SECONDS`).
    pub no_change_timeout_secs: u64,
    /// Extra environment for the shell.
    pub env: Vec<(String, String)>,
    /// Called with every chunk of raw PTY output.
    pub output_sink: Option<OutputSink>,
}

impl ShellConfig {
    pub fn new(work_dir: impl Into<PathBuf>) -> Self {
        ShellConfig {
            work_dir: work_dir.into(),
            no_change_timeout_secs: 10,
            env: Vec::new(),
            output_sink: None,
        }
    }
}

/// The `PROMPT_COMMAND` function: sets PS1 to the reference's JSON block, with the values the
/// reference's `export PS1="…$!…$?…$(pwd)…$(which python …)…"` gives, without forking.
/// `which` (debianutils) is re-stated: PATH split on `:`, an empty element is `.`, a trailing
/// `:` adds an empty element, first regular executable file wins.
/// While bash has children (jobs): first, a child with a signal still pending (`kill %1` was just
/// sent, the job has not run yet on a loaded machine) is given up to ~0.1 s to act on it; then the
/// reference's two command substitutions run (results discarded), whose waits reap the jobs that
/// died. So the job notifications printed before the prompt ("Terminated", "Killed", "Done") are
/// the ones the reference prints, without depending on the scheduler.
const PS1_FUNCTION: &str = r#"() {  local __oh_e=$? __oh_p=$! __oh_py= __oh_d __oh_path=$PATH IFS=:;
 local -; set -f;
 [[ -n $__oh_rl ]] || { __oh_rl=1; bind 'set disable-completion on' 2>/dev/null; };
 local __oh_k=; { read -r __oh_k < /proc/$$/task/$$/children; } 2>/dev/null; [[ -n $__oh_k ]] && { local __oh_n __oh_c __oh_l __oh_w;
  for __oh_n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do __oh_w=;
   for __oh_c in ${__oh_k// /:}; do while read -r __oh_l; do case $__oh_l in (SigPnd:*[1-9a-f]*|ShdPnd:*[1-9a-f]*) __oh_w=1 ;; esac; done 2>/dev/null < /proc/$__oh_c/status; done;
   [[ -z $__oh_w ]] && break; sleep 0.005; done;
  : "$(pwd)" "$(which python 2>/dev/null || echo)"; };
 case $__oh_path in (*[!:]:) __oh_path="$__oh_path:" ;; esac;
 for __oh_d in $__oh_path; do [ -z "$__oh_d" ] && __oh_d=.; if [ -f "$__oh_d/python" ] && [ -x "$__oh_d/python" ]; then __oh_py=$__oh_d/python; break; fi; done;
 PS1=$'\n###PS1JSON###\n{\n  "pid": "'"$__oh_p"$'",\n  "exit_code": "'"$__oh_e"$'",\n  "username": "\\u",\n  "hostname": "\\h",\n  "working_dir": "'"$PWD"$'",\n  "py_interpreter_path": "'"$__oh_py"$'"\n}\n###PS1END###\n';
 return $__oh_e
}"#;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// `None` or COMPLETED: nothing is running.
    Idle,
    NoChangeTimeout,
    HardTimeout,
}

/// What the reader thread shares with the session.
struct Pane {
    term: Term,
    last_output: Instant,
    exited: bool,
}

/// One running bash on a PTY.
struct Proc {
    pane: Arc<StdMutex<Pane>>,
    notify: watch::Receiver<u64>,
    /// Bytes to type, and who to tell once they are written.
    input: std::sync::mpsc::Sender<(Vec<u8>, Option<tokio::sync::oneshot::Sender<()>>)>,
    child: Box<dyn Child + Send + Sync>,
    _master: Box<dyn MasterPty + Send>,
    pid: u32,
}

impl Proc {
    fn spawn(work_dir: &Path, cfg: &ShellConfig) -> std::io::Result<Proc> {
        if !work_dir.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("working directory {} does not exist", work_dir.display()),
            ));
        }
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize {
                rows: term::ROWS as u16,
                cols: term::COLS as u16,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(io_err)?;
        let mut cmd = CommandBuilder::new("/bin/bash");
        cmd.args(["--norc", "--noprofile", "-i"]);
        cmd.cwd(work_dir);
        for (k, _) in std::env::vars_os() {
            let ks = k.to_string_lossy();
            if ks.starts_with("VSCODE_") || ks == "ELECTRON_RUN_AS_NODE" {
                cmd.env_remove(&k);
            }
        }
        cmd.env("LANG", "C.UTF-8");
        cmd.env("LC_ALL", "C.UTF-8");
        cmd.env("TERM", "tmux-256color");
        cmd.env("PWD", work_dir);
        cmd.env("PS1", "");
        cmd.env("PS2", "");
        cmd.env("PROMPT_COMMAND", "__oh_ps1");
        cmd.env("BASH_FUNC___oh_ps1%%", PS1_FUNCTION);
        for (k, v) in &cfg.env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).map_err(io_err)?;
        drop(pair.slave);
        let pid = child.process_id().unwrap_or(0);
        let mut reader = pair.master.try_clone_reader().map_err(io_err)?;
        let mut writer = pair.master.take_writer().map_err(io_err)?;

        let pane = Arc::new(StdMutex::new(Pane {
            term: Term::new(),
            last_output: Instant::now(),
            exited: false,
        }));
        let (tx, rx) = watch::channel(0u64);
        let sink = cfg.output_sink.clone();
        let pane2 = pane.clone();
        std::thread::Builder::new()
            .name("oh-shell-reader".into())
            .spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if let Some(sink) = &sink {
                        sink(&buf[..n]);
                    }
                    // Only a new prompt marker wakes the session; the soft-timeout clock is
                    // read from `last_output` when its deadline comes.
                    let prompt = {
                        let mut p = pane2.lock().expect("pane lock");
                        let before = p.term.markers_seen;
                        p.term.feed(&buf[..n]);
                        p.last_output = Instant::now();
                        p.term.markers_seen != before
                    };
                    if prompt {
                        tx.send_modify(|g| *g += 1);
                    }
                }
                pane2.lock().expect("pane lock").exited = true;
                tx.send_modify(|g| *g += 1);
            })?;
        let (in_tx, in_rx) =
            std::sync::mpsc::channel::<(Vec<u8>, Option<tokio::sync::oneshot::Sender<()>>)>();
        // The writer thread owns a duplicate of the master fd to ask for the terminal's
        // foreground process group (closed when the thread ends).
        let fg_fd = pair
            .master
            .as_raw_fd()
            .map(|fd| unsafe { libc::dup(fd) })
            .filter(|fd| *fd >= 0);
        std::thread::Builder::new()
            .name("oh-shell-writer".into())
            .spawn(move || {
                while let Ok((bytes, written)) = in_rx.recv() {
                    let mut write = |b: &[u8]| writer.write_all(b).and_then(|_| writer.flush());
                    let signal = bytes.iter().find_map(|b| signal_of(*b));
                    let ok = match (fg_fd, signal) {
                        (Some(fd), Some(sig)) if pid > 0 => {
                            send_signal_key(fd, pid as i32, sig, || write(&bytes))
                        }
                        _ => write(&bytes),
                    };
                    if let Some(w) = written {
                        let _ = w.send(());
                    }
                    if ok.is_err() {
                        break;
                    }
                }
                if let Some(fd) = fg_fd {
                    unsafe {
                        libc::close(fd);
                    }
                }
            })?;
        Ok(Proc {
            pane,
            notify: rx,
            input: in_tx,
            child,
            _master: pair.master,
            pid,
        })
    }

    fn send(&self, bytes: Vec<u8>) {
        let _ = self.input.send((bytes, None));
    }

    /// Send, and resolve once the bytes are written (a signal key may be held back a moment
    /// under load; the action's clocks start when it is typed, as tmux's send-keys returns).
    fn send_written(&self, bytes: Vec<u8>) -> tokio::sync::oneshot::Receiver<()> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let _ = self.input.send((bytes, Some(tx)));
        rx
    }

    fn markers(&self) -> u64 {
        self.pane.lock().expect("pane lock").term.markers_seen
    }

    /// Wait until a prompt marker beyond `seen` has been printed (or bash exits / the time is up).
    async fn wait_marker(&mut self, seen: u64, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            {
                let p = self.pane.lock().expect("pane lock");
                if p.term.markers_seen > seen {
                    return true;
                }
                if p.exited {
                    return false;
                }
            }
            if tokio::time::timeout_at(deadline, self.notify.changed())
                .await
                .is_err()
            {
                return false;
            }
        }
    }

    /// Kill every process of the shell's session (its jobs live in their own process groups).
    fn kill_all(&mut self) {
        if self.pid > 0 {
            let sid = self.pid as i32;
            if let Ok(dir) = std::fs::read_dir("/proc") {
                for e in dir.flatten() {
                    let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok())
                    else {
                        continue;
                    };
                    if pid == sid {
                        continue;
                    }
                    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                        if let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) {
                            let f: Vec<&str> = rest.split_whitespace().collect();
                            if f.get(3).and_then(|s| s.parse::<i32>().ok()) == Some(sid) {
                                unsafe {
                                    libc::kill(pid, libc::SIGKILL);
                                }
                            }
                        }
                    }
                }
            }
            unsafe {
                libc::kill(-sid, libc::SIGKILL);
                libc::kill(sid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.try_wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// The signal the terminal raises for a key (bash's default termios: `VINTR` `^C`, `VQUIT`
/// `^\`, `VSUSP` `^Z`).
fn signal_of(byte: u8) -> Option<i32> {
    match byte {
        0x03 => Some(libc::SIGINT),
        0x1c => Some(libc::SIGQUIT),
        0x1a => Some(libc::SIGTSTP),
        _ => None,
    }
}

/// How long a signal key may be held back while the foreground process group changes hands.
const SIGNAL_KEY_WAIT: Duration = Duration::from_millis(250);

/// Type a signal key (`C-c`, `C-\`, `C-z`) so that its signal is not lost.
///
/// The kernel delivers `^C` to whatever process group is in the foreground *when the byte is
/// processed*, and short windows around every job's start and end lose it:
/// * a job's last process has exited but bash has not reaped it and taken the terminal back
///   (`tcsetpgrp`) yet: the foreground group holds only zombies, the `^C` is echoed and signals
///   nobody; the same when the job ends between our look and the kernel's delivery;
/// * bash has forked the job's process and handed it the terminal, but the child has not
///   exec'd yet: it still runs bash's own SIGINT handler, exits with status 130 instead of
///   dying by the signal, and bash (which only breaks a loop when a foreground job is *killed*
///   by SIGINT) goes on with the loop;
/// * bash itself has the terminal while it waits for a child that then exits normally: bash
///   assumes the child handled the SIGINT and drops it.
/// Either way `for …; do echo …; sleep 1; done` simply continues: the reply is `^CLine N …` and
/// a timeout instead of exit code 130. A human, or tmux polled every 0.5 s, rarely hits those
/// windows; an agent sending `C-c` right after a hard timeout that coincides with the loop's
/// period hits them often (about one `C-c` in eight in OpenHands' own stress test).
///
/// So: wait (bounded) until the foreground is settled (see [`foreground_settled`]); stop bash
/// (`SIGSTOP`) so that it can neither fork nor reap nor move the terminal while we look; type
/// the key; wait until the foreground members have the signal pending or died; resume bash.
/// If every member had already exited normally (the job ended just before the key was
/// processed: the signal reached nobody), the signal is sent to the next settled foreground
/// group with `kill`, which is what the key would have done a moment later. The key is typed
/// exactly once, so its echo is the one the reference shows.
fn send_signal_key(
    fd: i32,
    shell_pid: i32,
    sig: i32,
    write: impl FnOnce() -> std::io::Result<()>,
) -> std::io::Result<()> {
    let shell_comm = proc_stat(shell_pid).map(|s| s.comm);
    let deadline = Instant::now() + SIGNAL_KEY_WAIT;
    // Find a settled foreground with bash stopped, so that it stays settled until the key is
    // processed. Bash must run to reap a dead child or take the terminal back: resume it and
    // look again until the deadline; then type the key anyway.
    let mut stopped = false;
    let mut members = Vec::new();
    while Instant::now() < deadline {
        let Some(pgrp) = wait_for_settled_foreground(fd, shell_pid, shell_comm.as_deref(), deadline)
        else {
            break;
        };
        stopped = stop_process(shell_pid);
        if !stopped {
            break;
        }
        let now = unsafe { libc::tcgetpgrp(fd) };
        if now == pgrp && foreground_settled(now, shell_pid, shell_comm.as_deref()) {
            members = live_members(now);
            if !members.is_empty() {
                break;
            }
        }
        unsafe {
            libc::kill(shell_pid, libc::SIGCONT);
        }
        stopped = false;
        std::thread::sleep(Duration::from_micros(300));
    }
    let result = write();
    let lost = if result.is_ok() && !members.is_empty() {
        wait_for_delivery(&members, sig)
    } else {
        false
    };
    if stopped {
        unsafe {
            libc::kill(shell_pid, libc::SIGCONT);
        }
    }
    if lost {
        let again = Instant::now() + SIGNAL_KEY_WAIT;
        if let Some(next) = wait_for_settled_foreground(fd, shell_pid, shell_comm.as_deref(), again) {
            unsafe {
                libc::kill(-next, sig);
            }
        }
    }
    result
}

/// `SIGSTOP` a process and wait until it is stopped (bounded); false if it could not be.
fn stop_process(pid: i32) -> bool {
    if unsafe { libc::kill(pid, libc::SIGSTOP) } != 0 {
        return false;
    }
    let deadline = Instant::now() + Duration::from_millis(100);
    loop {
        match proc_stat(pid).map(|s| s.state) {
            Some(st) if st == "T" || st == "t" => return true,
            None => return true,
            _ => {}
        }
        if Instant::now() >= deadline {
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// The live (non-zombie) processes of a group.
fn live_members(pgrp: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            proc_stat(*pid).is_some_and(|s| s.pgrp == pgrp && s.state != "Z" && s.state != "X")
        })
        .collect()
}

/// After the key was typed: wait (bounded) until every member has the signal pending, or
/// died. Returns true when the signal was lost: every member exited, none of them by it.
fn wait_for_delivery(members: &[i32], sig: i32) -> bool {
    let bit = 1u64 << (sig - 1);
    let deadline = Instant::now() + Duration::from_millis(50);
    loop {
        let mut all_done = true;
        let mut all_dead_without_it = true;
        for &pid in members {
            let (state, exit_signal) = match proc_stat(pid) {
                Some(s) => (s.state, s.exit_code & 0x7f),
                None => ("gone".to_string(), -1),
            };
            if state == "Z" || state == "X" || state == "gone" {
                if exit_signal == sig || state == "gone" {
                    all_dead_without_it = false;
                }
                continue;
            }
            all_dead_without_it = false;
            if !signal_pending(pid, bit) {
                all_done = false;
            }
        }
        if all_done {
            return all_dead_without_it;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn signal_pending(pid: i32, bit: u64) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return true;
    };
    status.lines().any(|l| {
        (l.starts_with("SigPnd:") || l.starts_with("ShdPnd:"))
            && u64::from_str_radix(l[7..].trim(), 16).is_ok_and(|m| m & bit != 0)
    })
}

/// Wait (until `deadline`) until the terminal's foreground group is settled;
/// returns it (or the current one when the time is up), None if the terminal has none.
fn wait_for_settled_foreground(
    fd: i32,
    shell_pid: i32,
    shell_comm: Option<&str>,
    deadline: Instant,
) -> Option<i32> {
    loop {
        let pgrp = unsafe { libc::tcgetpgrp(fd) };
        if pgrp <= 0 {
            return None;
        }
        if Instant::now() >= deadline || foreground_settled(pgrp, shell_pid, shell_comm) {
            return Some(pgrp);
        }
        std::thread::sleep(Duration::from_micros(500));
    }
}

struct ProcStat {
    comm: String,
    state: String,
    ppid: i32,
    pgrp: i32,
    /// The wait status of a zombie (`/proc/PID/stat` field 52), 0 while alive.
    exit_code: i32,
}

fn proc_stat(pid: i32) -> Option<ProcStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, rest) = stat.rsplit_once(')')?;
    let comm = head.split_once('(')?.1.to_string();
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcStat {
        comm,
        state: f.first()?.to_string(),
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        exit_code: f.get(49).and_then(|x| x.parse().ok()).unwrap_or(0),
    })
}

/// The foreground group has a live process, the shell has no child that still carries the
/// shell's name (forked, not yet exec'd: it is about to take the terminal, or already has it)
/// and no child that died and is not reaped yet (bash is about to collect it; a SIGINT that
/// reaches bash itself while it waits for a command substitution that then exits normally is
/// dropped by bash, which assumes the child handled it).
fn foreground_settled(pgrp: i32, shell_pid: i32, shell_comm: Option<&str>) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    let mut live = false;
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Some(st) = proc_stat(pid) else { continue };
        let dead = st.state == "Z" || st.state == "X";
        if st.ppid == shell_pid && (dead || Some(st.comm.as_str()) == shell_comm) {
            return false;
        }
        if dead {
            continue;
        }
        if st.pgrp == pgrp {
            live = true;
        }
    }
    live
}

fn io_err(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

struct Inner {
    proc: Option<Proc>,
    status: Status,
    prev_output: String,
    /// Where a respawned shell starts.
    cwd: String,
}

/// One persistent bash.
pub struct BashSession {
    cfg: ShellConfig,
    no_change_timeout: AtomicU64,
    cwd: StdMutex<String>,
    inner: Mutex<Inner>,
    /// Run the server's init command (`alias git="git --no-pager"`) on every (re)start.
    init_commands: bool,
}

impl BashSession {
    /// Start a session the way the action execution server does: initialise, then run
    /// `alias git="git --no-pager"`.
    pub async fn start(cfg: ShellConfig) -> std::io::Result<Self> {
        Self::start_with(cfg, true).await
    }

    async fn start_with(cfg: ShellConfig, init_commands: bool) -> std::io::Result<Self> {
        let cwd = std::path::absolute(&cfg.work_dir)
            .unwrap_or_else(|_| cfg.work_dir.clone())
            .display()
            .to_string();
        let session = BashSession {
            no_change_timeout: AtomicU64::new(cfg.no_change_timeout_secs),
            cwd: StdMutex::new(cwd.clone()),
            inner: Mutex::new(Inner {
                proc: None,
                status: Status::Idle,
                prev_output: String::new(),
                cwd: cwd.clone(),
            }),
            init_commands,
            cfg,
        };
        {
            let mut inner = session.inner.lock().await;
            let proc = session.boot(Path::new(&cwd)).await?;
            inner.proc = Some(proc);
        }
        Ok(session)
    }

    /// Spawn bash, wait for its first prompt, run the init commands, leave one prompt on the pane.
    async fn boot(&self, dir: &Path) -> std::io::Result<Proc> {
        let mut proc = Proc::spawn(dir, &self.cfg)?;
        if !proc.wait_marker(0, Duration::from_secs(30)).await {
            return Err(io_err("bash did not print its first prompt"));
        }
        if self.init_commands {
            let seen = proc.markers();
            proc.send(b"alias git=\"git --no-pager\"\r".to_vec());
            if !proc.wait_marker(seen, Duration::from_secs(300)).await {
                return Err(io_err("bash did not finish the init command"));
            }
        }
        // Let the prompt finish (it ends with the marker and a newline), then keep only it.
        let mut p = proc.pane.lock().expect("pane lock");
        let cap = p.term.capture();
        let m = find_ps1(&cap);
        if let Some(last) = m.last() {
            reset_to_prompt(&mut p.term, &cap[last.start..last.end]);
        }
        drop(p);
        Ok(proc)
    }

    /// Change the soft (no-change) timeout for later commands.
    pub fn set_no_change_timeout(&self, secs: u64) {
        self.no_change_timeout.store(secs, Ordering::Relaxed);
    }

    /// Run one `CmdRunAction`.
    pub async fn execute(&self, action: &CmdRunAction) -> Observation {
        if action.is_static {
            return self.execute_static(action).await;
        }
        self.execute_session(action).await
    }

    async fn execute_session(&self, action: &CmdRunAction) -> Observation {
        let mut inner = self.inner.lock().await;
        if inner.proc.is_none() {
            let dir = inner.cwd.clone();
            match self.boot(Path::new(&dir)).await {
                Ok(p) => {
                    inner.proc = Some(p);
                    inner.status = Status::Idle;
                    inner.prev_output.clear();
                }
                Err(e) => {
                    return Observation::error(format!("Failed to restart the bash session: {e}"))
                }
            }
        }
        let nct = self.no_change_timeout.load(Ordering::Relaxed);
        let obs = inner.execute(action, nct).await;
        let alive = match inner.proc.as_mut() {
            Some(p) => {
                !p.pane.lock().expect("pane lock").exited && matches!(p.child.try_wait(), Ok(None))
            }
            None => false,
        };
        if !alive {
            inner.proc = None;
            inner.status = Status::Idle;
            inner.prev_output.clear();
        }
        *self.cwd.lock().expect("cwd lock") = inner.cwd.clone();
        obs
    }

    /// `is_static`: a fresh, init-less session in `action.cwd` (else the session's start
    /// directory), discarded afterwards.
    async fn execute_static(&self, action: &CmdRunAction) -> Observation {
        let mut cfg = self.cfg.clone();
        if let Some(cwd) = action.cwd.as_deref().filter(|c| !c.is_empty()) {
            cfg.work_dir = PathBuf::from(cwd);
        }
        cfg.no_change_timeout_secs = self.no_change_timeout.load(Ordering::Relaxed);
        cfg.output_sink = None;
        match BashSession::start_with(cfg, false).await {
            Ok(s) => {
                let obs = s.execute_session(action).await;
                s.close().await;
                obs
            }
            Err(e) => Observation::error(e.to_string()),
        }
    }

    /// The current working directory (from the last prompt).
    pub fn cwd(&self) -> String {
        self.cwd.lock().expect("cwd lock").clone()
    }

    /// Kill the shell and every process of its session.
    pub async fn close(&self) {
        let mut inner = self.inner.lock().await;
        if let Some(mut p) = inner.proc.take() {
            p.kill_all();
        }
    }
}

/// The pane after `C-l` + `clear-history`: readline redraws the prompt at the top.
fn reset_to_prompt(term: &mut Term, block: &str) {
    let pending = term.prompt_newline_pending();
    term.reset_grid();
    let mut s = String::with_capacity(block.len() + 16);
    s.push_str("\r\n");
    s.push_str(&block.replace('\n', "\r\n"));
    s.push_str("\r\n");
    // Feed without counting the marker again.
    let seen = term.markers_seen;
    let bytes = term.bytes_seen;
    term.feed(s.as_bytes());
    term.markers_seen = seen;
    term.bytes_seen = bytes;
    if pending {
        term.swallow_next_newline();
    }
}

/// tmux's argument parser treats a trailing `;` as the end of the command (it is dropped) and a
/// trailing `\;` as a literal `;`, which undoes `escape_bash_special_chars` at the end of the
/// text. Elsewhere the doubling is never typed: bash runs the original command.
fn tmux_arg(s: &str) -> String {
    match s.strip_suffix(';') {
        Some(rest) => match rest.strip_suffix('\\') {
            Some(r) => format!("{r};"),
            None => rest.to_string(),
        },
        None => s.to_string(),
    }
}

/// What is actually typed for `original` (sent as `escaped` to tmux by the reference).
fn typed_text(original: &str, escaped: &str, is_input: bool) -> String {
    if !is_input
        && escaped.ends_with("\\\\;")
        && original.ends_with("\\;")
        && !original.ends_with("\\\\;")
    {
        original.to_string()
    } else {
        tmux_arg(original)
    }
}

fn is_special_key(command: &str) -> bool {
    let c = py_strip(command);
    c.starts_with("C-") && c.chars().count() == 3
}

impl Inner {
    /// `_get_command_output`. `keep` stores `raw` as `prev_output` (timeouts and NOT-executed
    /// replies); a completed reply clears it anyway.
    fn get_command_output(
        &mut self,
        command: &str,
        raw: &str,
        md: &mut CmdOutputMetadata,
        continue_prefix: &str,
        keep: bool,
    ) -> String {
        let out = if !self.prev_output.is_empty() {
            md.prefix = continue_prefix.to_string();
            raw.strip_prefix(self.prev_output.as_str()).unwrap_or(raw)
        } else {
            raw
        };
        let content = strip_command_echo(out, command).to_string();
        self.prev_output = if keep { raw.to_string() } else { String::new() };
        content
    }

    async fn execute(&mut self, action: &CmdRunAction, nct: u64) -> Observation {
        let mut command = py_strip(&action.command).to_string();
        let is_input = action.is_input;
        if self.status == Status::Idle {
            if command.is_empty() {
                return Observation::cmd_output(
                    "ERROR: No previous running command to retrieve logs from.",
                    "",
                    CmdOutputMetadata::default(),
                    false,
                );
            }
            if is_input {
                return Observation::cmd_output(
                    "ERROR: No previous running command to interact with.",
                    "",
                    CmdOutputMetadata::default(),
                    false,
                );
            }
        }
        let parts = oh_bashlex::split_bash_commands(&command);
        if parts.len() > 1 {
            let list: Vec<String> = parts
                .iter()
                .enumerate()
                .map(|(i, c)| format!("({}) {}", i + 1, c))
                .collect();
            return Observation::error(format!(
                "ERROR: Cannot execute multiple commands at once.\nPlease run each command separately OR chain them into a single command via && or ;\nProvided commands:\n{}",
                list.join("\n")
            ));
        }

        let proc = self.proc.as_mut().expect("a running shell");
        let (initial, initial_markers, app_cursor) = {
            let p = proc.pane.lock().expect("pane lock");
            (p.term.capture(), p.term.markers_seen, p.term.app_cursor)
        };
        let initial_matches = find_ps1(&initial);
        let initial_count = initial_matches.len();

        if matches!(self.status, Status::NoChangeTimeout | Status::HardTimeout)
            && !py_rstrip(&initial).ends_with(PS1_END)
            && !is_input
            && !command.is_empty()
        {
            let raw = combine_outputs(&initial, &initial_matches, false);
            let mut md = CmdOutputMetadata {
                suffix: format!(
                    "\n[Your command \"{command}\" is NOT executed. The previous command is still running - You CANNOT send new commands until the previous command is completed. By setting `is_input` to `true`, you can interact with the current process: {TIMEOUT_MESSAGE_TEMPLATE}]"
                ),
                ..CmdOutputMetadata::default()
            };
            let content = self.get_command_output(&command, &raw, &mut md, CONTINUE_PREFIX, true);
            return Observation::cmd_output(content, command, md, action.hidden);
        }

        let mut start = Instant::now();
        let sent = !command.is_empty();
        if sent {
            let special = is_special_key(&command);
            let original = command.clone();
            if !is_input {
                command = oh_bashlex::escape_bash_special_chars(&command);
            }
            let typed = typed_text(&original, &command, is_input);
            let mut bytes = keys::encode(&typed, app_cursor);
            if !special {
                bytes.push(b'\r');
            }
            let written = if bytes.iter().any(|b| signal_of(*b).is_some()) {
                Some(proc.send_written(bytes))
            } else {
                proc.send(bytes);
                None
            };
            // If this future is dropped before the reply (a cancelled request), the command is
            // still running: later actions must see it as such.
            if self.status == Status::Idle {
                self.status = Status::NoChangeTimeout;
            }
            if let Some(w) = written {
                let _ = tokio::time::timeout(Duration::from_secs(10), w).await;
                start = Instant::now();
            }
        }

        let hard = action.timeout.filter(|t| *t != 0.0 && !t.is_nan());
        let mut last_change = start;
        let mut seen_markers = initial_markers;
        let mut check_now = !sent;
        loop {
            let proc = self.proc.as_mut().expect("a running shell");
            let (markers, last_output, exited) = {
                let p = proc.pane.lock().expect("pane lock");
                (p.term.markers_seen, p.last_output, p.exited)
            };
            if last_output > last_change {
                last_change = last_output;
            }
            if check_now || markers != seen_markers {
                check_now = false;
                seen_markers = markers;
                let cap = proc.pane.lock().expect("pane lock").term.capture();
                let m = find_ps1(&cap);
                if m.len() > initial_count || py_rstrip(&cap).ends_with(PS1_END) {
                    return self.completed(&command, cap, m, action.hidden);
                }
            }
            let dead = exited || matches!(proc.child.try_wait(), Ok(Some(_)));
            if dead {
                return self.shell_exited(&command, action.hidden).await;
            }
            let now = Instant::now();
            if !action.blocking && now.duration_since(last_change) >= Duration::from_secs(nct) {
                self.status = Status::NoChangeTimeout;
                let suffix = format!("\n[The command has no new output after {nct} seconds. {TIMEOUT_MESSAGE_TEMPLATE}]");
                return self.timed_out(&command, suffix);
            }
            if let Some(t) = hard {
                if now.duration_since(start).as_secs_f64() >= t {
                    self.status = Status::HardTimeout;
                    let suffix = format!(
                        "\n[The command timed out after {} seconds. {TIMEOUT_MESSAGE_TEMPLATE}]",
                        python_float_str(t)
                    );
                    return self.timed_out(&command, suffix);
                }
            }
            let mut deadline: Option<Instant> = None;
            if !action.blocking {
                deadline = Some(last_change + Duration::from_secs(nct));
            }
            if let Some(t) = hard {
                let d = start + Duration::from_secs_f64(t.max(0.0).min(1e9));
                deadline = Some(deadline.map_or(d, |x| x.min(d)));
            }
            // Also wake up now and then to notice a shell that exited while a background job
            // keeps the terminal open (no EOF then).
            let tick = Instant::now() + Duration::from_millis(250);
            let deadline = Some(deadline.map_or(tick, |d| d.min(tick)));
            let proc = self.proc.as_mut().expect("a running shell");
            match deadline {
                Some(d) => {
                    let _ = tokio::time::timeout_at(
                        tokio::time::Instant::from_std(d),
                        proc.notify.changed(),
                    )
                    .await;
                }
                None => {
                    let _ = proc.notify.changed().await;
                }
            }
        }
    }

    fn completed(
        &mut self,
        command: &str,
        cap: String,
        m: Vec<Ps1Match>,
        hidden: bool,
    ) -> Observation {
        let Some(last) = m.last() else {
            self.status = Status::Idle;
            self.prev_output.clear();
            return Observation::error(format!(
                "Expected at least one PS1 metadata block, but got 0.\n---FULL OUTPUT---\n{cap:?}\n---END OF OUTPUT---"
            ));
        };
        let mut md = metadata_from(&cap, last);
        let before_last = m.len() == 1;
        if let Some(wd) = md.working_dir.as_deref() {
            if !wd.is_empty() && wd != self.cwd {
                self.cwd = wd.to_string();
            }
        }
        let raw = combine_outputs(&cap, &m, before_last);
        if before_last {
            md.prefix = format!(
                "[Previous command outputs are truncated. Showing the last {} lines of the output below.]\n",
                py_splitlines_count(&raw)
            );
        }
        md.suffix = if is_special_key(command) {
            let k: String = command
                .chars()
                .last()
                .map(|c| c.to_uppercase().collect())
                .unwrap_or_default();
            format!(
                "\n[The command completed with exit code {}. CTRL+{k} was sent.]",
                md.exit_code
            )
        } else {
            format!("\n[The command completed with exit code {}.]", md.exit_code)
        };
        let content = self.get_command_output(command, &raw, &mut md, "", false);
        self.status = Status::Idle;
        self.prev_output.clear();
        let block = cap[last.start..last.end].to_string();
        if let Some(proc) = self.proc.as_mut() {
            reset_to_prompt(&mut proc.pane.lock().expect("pane lock").term, &block);
        }
        Observation::cmd_output(content, command, md, hidden)
    }

    fn timed_out(&mut self, command: &str, suffix: String) -> Observation {
        let cap = self
            .proc
            .as_ref()
            .expect("a running shell")
            .pane
            .lock()
            .expect("pane lock")
            .term
            .capture();
        let m = find_ps1(&cap);
        let raw = combine_outputs(&cap, &m, false);
        let mut md = CmdOutputMetadata {
            suffix,
            ..CmdOutputMetadata::default()
        };
        let content = self.get_command_output(command, &raw, &mut md, CONTINUE_PREFIX, true);
        Observation::cmd_output(content, command, md, false)
    }

    /// bash itself ended (`exit`, `C-d` at the prompt, killed): report what it printed and its
    /// exit status; the session restarts a shell for the next command.
    async fn shell_exited(&mut self, command: &str, hidden: bool) -> Observation {
        let proc = self.proc.as_mut().expect("a running shell");
        let mut code = -1i64;
        for _ in 0..100 {
            if let Ok(Some(st)) = proc.child.try_wait() {
                code = st.exit_code() as i64;
                // Let the reader drain what is left (EOF, unless a job still holds the tty).
                for _ in 0..50 {
                    if proc.pane.lock().expect("pane lock").exited {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let cap = proc.pane.lock().expect("pane lock").term.capture();
        let m = find_ps1(&cap);
        let raw = combine_outputs(&cap, &m, false);
        let mut md = CmdOutputMetadata {
            exit_code: code,
            working_dir: Some(self.cwd.clone()),
            suffix: format!("\n[The command completed with exit code {code}. The shell exited; a new one will be started.]"),
            ..CmdOutputMetadata::default()
        };
        let content = self.get_command_output(command, &raw, &mut md, "", false);
        self.status = Status::Idle;
        self.prev_output.clear();
        Observation::cmd_output(content, command, md, hidden)
    }
}

#[cfg(test)]
mod tests;
