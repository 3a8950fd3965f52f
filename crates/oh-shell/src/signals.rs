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
///
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
    let shell_comm = proc_table::info(shell_pid).map(|s| s.comm);
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
        let Some(pgrp) = wait_for_settled_foreground(fd, shell_pid, shell_comm.as_deref(), deadline) else {
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
    let lost = if result.is_ok() && !members.is_empty() { wait_for_delivery(&members, sig) } else { false };
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

/// The process is blocked in a system call that waits for input. When the process table cannot
/// tell (the process is gone, or macOS, which shows no thread's system call), this answers true:
/// not knowing must not delay the key.
pub(crate) fn waits_for_terminal_input(pid: i32) -> bool {
    proc_table::waits_for_input(pid).unwrap_or(true)
}

/// `SIGSTOP` a process and wait until it is stopped (bounded); false if it could not be.
pub(crate) fn stop_process(pid: i32) -> bool {
    if unsafe { libc::kill(pid, libc::SIGSTOP) } != 0 {
        return false;
    }
    let deadline = Instant::now() + Duration::from_millis(100);
    loop {
        match proc_table::info(pid).map(|s| s.state) {
            Some(ProcState::Stopped) => return true,
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
    proc_table::live_group_members(pgrp)
}

/// After the key was typed: wait (bounded) until every member has the signal pending, or
/// died. Returns true when the signal was lost: every member exited, none of them by it.
pub(crate) fn wait_for_delivery(members: &[i32], sig: i32) -> bool {
    let deadline = Instant::now() + Duration::from_millis(50);
    loop {
        let mut all_done = true;
        let mut all_dead_without_it = true;
        for &pid in members {
            // None: gone (reaped, so nobody can say how it ended), or alive. A dead process
            // whose wait status is unknown counts as killed by the signal: the signal is
            // sent again only when every member is known to have died without it.
            let dead_by = match proc_table::info(pid) {
                Some(p) if p.dead() => Some(p.exit_status.map(|w| w & 0x7f)),
                Some(_) => None,
                None => Some(None),
            };
            if let Some(exit_signal) = dead_by {
                if exit_signal.is_none_or(|s| s == sig) {
                    all_dead_without_it = false;
                }
                continue;
            }
            all_dead_without_it = false;
            if !proc_table::signal_pending(pid, sig).unwrap_or(true) {
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

/// The foreground group has a live process, the shell has no child that still carries the
/// shell's name (forked, not yet exec'd: it is about to take the terminal, or already has it)
/// and no child that died and is not reaped yet (bash is about to collect it; a SIGINT that
/// reaches bash itself while it waits for a command substitution that then exits normally is
/// dropped by bash, which assumes the child handled it).
pub(crate) fn foreground_settled(pgrp: i32, shell_pid: i32, shell_comm: Option<&str>) -> bool {
    let Some(pids) = proc_table::all_pids() else {
        return true;
    };
    let mut live = false;
    for pid in pids {
        let Some(st) = proc_table::info(pid) else {
            continue;
        };
        let dead = st.dead();
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
