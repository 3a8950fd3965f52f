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
//!   `TERM=tmux-256color` (what the reference's panes have), `VSCODE_*`/`ELECTRON_RUN_AS_NODE` and the executor's credentials (`OH_SESSION_API_KEY`,
//!   `SESSION_API_KEY`, `OH_SESSION_API_KEYS_*`) are removed; tmux's own
//!   `TMUX`/`TMUX_PANE` variables are not set.
//! * `HISTFILE` is exported empty, so neither this bash nor one it starts reads or writes a
//!   history file (the reference's bash appends the agent's commands to `~/.bash_history` on
//!   exit). History is kept in memory as usual (`history`, `!!` work).

mod command;
mod keys;
mod proc_table;
mod process;
pub mod ps1;
mod signals;
pub mod term;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use oh_protocol::{CmdOutputMetadata, CmdRunAction, Observation};
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};
use tokio::sync::{watch, Mutex};

use command::*;
use oh_pysem::{
    repr_float as python_float_str, rstrip as py_rstrip, splitlines_count as py_splitlines_count, strip as py_strip,
};
use proc_table::ProcState;
use process::Proc;
use ps1::{combine_outputs, find_ps1, metadata_from, strip_command_echo, Ps1Match, PS1_END};
use signals::*;
use term::Term;

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
        ShellConfig { work_dir: work_dir.into(), no_change_timeout_secs: 10, env: Vec::new(), output_sink: None }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// `None` or COMPLETED: nothing is running.
    Idle,
    NoChangeTimeout,
    HardTimeout,
}

fn io_err(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// Which generation's rule decides that a command line holds several commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitRule {
    /// V0's (bashlex): every top-level statement on its own line is a separate command, refused.
    V0,
    /// OpenHands V1's (openhands-tools 1.58): a statement that follows a completed heredoc stays
    /// with it and runs, and the command ends when all of it has run
    /// (`oh_bashlex::split_bash_commands_v1`).
    V1,
}

/// The end mark of a V1 command whose prompts do not tell when it has ended (a heredoc followed
/// by more statements): a line typed after the command prints `{token}{exit status}__` to the
/// terminal and exits with the same status, as V1's own session does.
struct Boundary {
    /// `__OHB<id>_`: never in the typed line itself (its printf format splits it).
    token: String,
    /// The typed line, removed from the output with the mark.
    line: String,
}

impl Boundary {
    fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let id = format!("{:08x}{:x}", nanos, NEXT.fetch_add(1, Ordering::Relaxed));
        Boundary {
            token: format!("__OHB{id}_"),
            line: format!("(__oh_s=$?; printf '\\n__OHB%s_%s__\\n' {id} \"$__oh_s\" > /dev/tty; exit \"$__oh_s\")"),
        }
    }

    /// Where the mark (the token followed by the exit status) is on the screen, if it is.
    fn mark_at(&self, screen: &str) -> Option<usize> {
        screen
            .match_indices(&self.token)
            .map(|(i, _)| i)
            .find(|&i| screen[i + self.token.len()..].starts_with(|c: char| c.is_ascii_digit()))
    }

    /// The screen without the typed line and the mark.
    fn strip(&self, screen: &str) -> String {
        let line = self.line.trim();
        screen.split_inclusive('\n').filter(|l| l.trim() != line && !l.contains(&self.token)).collect()
    }
}

struct Inner {
    proc: Option<Proc>,
    status: Status,
    prev_output: String,
    /// Where a respawned shell starts.
    cwd: String,
    /// The end mark of the running (or last) V1 heredoc command.
    boundary: Option<Boundary>,
}

/// One persistent bash.
pub struct BashSession {
    cfg: ShellConfig,
    no_change_timeout: AtomicU64,
    cwd: StdMutex<String>,
    inner: Mutex<Inner>,
    /// Run the server's init command (`alias git="git --no-pager"`) on every (re)start.
    init_commands: bool,
    /// The running shell's key input, outside `inner`'s lock (which a running command holds),
    /// for `interrupt`.
    keys: StdMutex<Option<KeySender>>,
}

type KeySender = std::sync::mpsc::Sender<(Vec<u8>, Option<tokio::sync::oneshot::Sender<()>>)>;

impl BashSession {
    /// Start a session the way the action execution server does: initialise, then run
    /// `alias git="git --no-pager"`.
    pub async fn start(cfg: ShellConfig) -> std::io::Result<Self> {
        Self::start_with(cfg, true).await
    }

    async fn start_with(cfg: ShellConfig, init_commands: bool) -> std::io::Result<Self> {
        let cwd = std::path::absolute(&cfg.work_dir).unwrap_or_else(|_| cfg.work_dir.clone()).display().to_string();
        let session = BashSession {
            no_change_timeout: AtomicU64::new(cfg.no_change_timeout_secs),
            cwd: StdMutex::new(cwd.clone()),
            inner: Mutex::new(Inner {
                proc: None,
                status: Status::Idle,
                prev_output: String::new(),
                cwd: cwd.clone(),
                boundary: None,
            }),
            init_commands,
            keys: StdMutex::new(None),
            cfg,
        };
        {
            let mut inner = session.inner.lock().await;
            let proc = session.boot(Path::new(&cwd)).await?;
            *session.keys.lock().expect("keys lock") = Some(proc.input.clone());
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
        self.execute_session(action, SplitRule::V0).await
    }

    /// Run one session command (not `is_static`) under `rule`'s multi-command rule.
    pub async fn execute_with(&self, action: &CmdRunAction, rule: SplitRule) -> Observation {
        self.execute_session(action, rule).await
    }

    async fn execute_session(&self, action: &CmdRunAction, rule: SplitRule) -> Observation {
        let mut inner = self.inner.lock().await;
        if inner.proc.is_none() {
            let dir = inner.cwd.clone();
            match self.boot(Path::new(&dir)).await {
                Ok(p) => {
                    *self.keys.lock().expect("keys lock") = Some(p.input.clone());
                    inner.proc = Some(p);
                    inner.status = Status::Idle;
                    inner.prev_output.clear();
                }
                Err(e) => return Observation::error(format!("Failed to restart the bash session: {e}")),
            }
        }
        let nct = self.no_change_timeout.load(Ordering::Relaxed);
        let obs = inner.execute(action, nct, rule).await;
        let alive = match inner.proc.as_mut() {
            Some(p) => !p.pane.lock().expect("pane lock").exited && matches!(p.child.try_wait(), Ok(None)),
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
                let obs = s.execute_session(action, SplitRule::V0).await;
                s.close().await;
                obs
            }
            Err(e) => Observation::error(e.to_string()),
        }
    }

    /// Type `C-c` (SIGINT to the terminal's foreground job, as a terminal does) while a command
    /// runs, without waiting for it: the running `execute` then sees the command end and returns
    /// as usual. Returns false, and types nothing, when no command is running (a `C-c` at the
    /// prompt would only leave a stray prompt for the next command to read).
    pub fn interrupt(&self) -> bool {
        if self.inner.try_lock().is_ok() {
            return false;
        }
        match self.keys.lock().expect("keys lock").as_ref() {
            Some(keys) => keys.send((vec![0x03], None)).is_ok(),
            None => false,
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
        *self.keys.lock().expect("keys lock") = None;
    }
}

#[cfg(test)]
mod tests;
