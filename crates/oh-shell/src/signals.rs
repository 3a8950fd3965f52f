//! Signals for the special keys (`C-c`, `C-z`, `C-\\`): delivering them to the foreground
//! process group the way a terminal does, and waiting until they have been acted on.

use super::*;

/// The signal the terminal raises for a key (bash's default termios: `VINTR` `^C`, `VQUIT`
/// `^\`, `VSUSP` `^Z`).
pub(crate) fn signal_of(byte: u8) -> Option<i32> {
    match byte {
        0x03 => Some(libc::SIGINT),
        0x1c => Some(libc::SIGQUIT),
        0x1a => Some(libc::SIGTSTP),
        _ => None,
    }
}

/// How long a signal key may be held back while the foreground process group changes hands.
pub(crate) const SIGNAL_KEY_WAIT: Duration = Duration::from_millis(250);

/// How long a signal key may wait for bash at its prompt to block reading the terminal.
pub(crate) const PROMPT_READ_WAIT: Duration = Duration::from_millis(100);

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
pub(crate) fn send_signal_key(
    fd: i32,
    shell_pid: i32,
    sig: i32,
    write: impl FnOnce() -> std::io::Result<()>,
) -> std::io::Result<()> {
    let shell_comm = proc_stat(shell_pid).map(|s| s.comm);
    // Its own bound: bash also holds the terminal between the jobs of a running loop, where it
    // never reads it; that wait ends when the next job takes the terminal and must not use up
    // the time the foreground checks below have.
    wait_for_prompt_read(fd, shell_pid, Instant::now() + PROMPT_READ_WAIT);
    let deadline = Instant::now() + SIGNAL_KEY_WAIT;
    // Find a settled foreground with bash stopped, so that it stays settled until the key is
    // processed. Bash must run to reap a dead child or take the terminal back: resume it and
    // look again until the deadline; then type the key anyway.
    let mut stopped = false;
    let mut members = Vec::new();
    while Instant::now() < deadline {
        let Some(pgrp) =
            wait_for_settled_foreground(fd, shell_pid, shell_comm.as_deref(), deadline)
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
        if let Some(next) = wait_for_settled_foreground(fd, shell_pid, shell_comm.as_deref(), again)
        {
            unsafe {
                libc::kill(-next, sig);
            }
        }
    }
    result
}

/// When the shell itself has the terminal (it is at its prompt): wait (until `deadline`) until
/// it is blocked waiting for terminal input. Readline acts on a SIGINT fully only when the signal
/// interrupts that wait: one that arrives while it is still drawing the prompt is echoed (`^C`)
/// and handed to bash, but bash's "start a fresh line" hook runs at the next interrupted wait,
/// so no new prompt follows until another key arrives. Stopping bash with `SIGSTOP` in that
/// window (as `send_signal_key` does) made this reachable: a `C-c` right after a command's reply
/// then answered with a no-output timeout instead of exit code 130.
fn wait_for_prompt_read(fd: i32, shell_pid: i32, deadline: Instant) {
    loop {
        let fg = unsafe { libc::tcgetpgrp(fd) };
        let shell_pgrp = unsafe { libc::getpgid(shell_pid) };
        if fg <= 0 || fg != shell_pgrp || waits_for_terminal_input(shell_pid) {
            return;
        }
        if Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_micros(300));
    }
}

/// The process is blocked in a system call that waits for input (`/proc/PID/syscall` names the
/// call a sleeping process is in; "running" otherwise). When that file cannot be read, this
/// answers true: not knowing must not delay the key.
#[cfg(target_os = "linux")]
pub(crate) fn waits_for_terminal_input(pid: i32) -> bool {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/syscall")) else {
        return true;
    };
    let Some(nr) = text
        .split_whitespace()
        .next()
        .and_then(|n| n.parse::<libc::c_long>().ok())
    else {
        return false; // "running"
    };
    let mut waits = [libc::SYS_read, libc::SYS_pselect6, libc::SYS_ppoll].contains(&nr);
    #[cfg(target_arch = "x86_64")]
    {
        waits |= nr == libc::SYS_select || nr == libc::SYS_poll;
    }
    waits
}

/// Without `/proc` (macOS) there is no way to see the system call a process waits in (and the
/// system call numbers above are Linux's): not knowing must not delay the key.
#[cfg(not(target_os = "linux"))]
pub(crate) fn waits_for_terminal_input(_pid: i32) -> bool {
    true
}

/// `SIGSTOP` a process and wait until it is stopped (bounded); false if it could not be.
pub(crate) fn stop_process(pid: i32) -> bool {
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
pub(crate) fn live_members(pgrp: i32) -> Vec<i32> {
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
pub(crate) fn wait_for_delivery(members: &[i32], sig: i32) -> bool {
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

pub(crate) fn signal_pending(pid: i32, bit: u64) -> bool {
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
pub(crate) fn wait_for_settled_foreground(
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

pub(crate) struct ProcStat {
    pub(crate) comm: String,
    pub(crate) state: String,
    pub(crate) ppid: i32,
    pub(crate) pgrp: i32,
    /// The wait status of a zombie (`/proc/PID/stat` field 52), 0 while alive.
    pub(crate) exit_code: i32,
}

pub(crate) fn proc_stat(pid: i32) -> Option<ProcStat> {
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
pub(crate) fn foreground_settled(pgrp: i32, shell_pid: i32, shell_comm: Option<&str>) -> bool {
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
