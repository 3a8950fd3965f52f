//! The process table as the session needs it: which processes exist, and per process its parent,
//! process group, session, state and name. One API over two backends: Linux reads `/proc`,
//! macOS asks the kernel through libproc (`proc_listallpids`, `proc_pidinfo`) and `getsid`.
//! What a backend cannot tell (macOS shows neither a thread's pending signals nor the system
//! call it waits in) is `None`, and each caller decides what not knowing means for it.
//!
//! The queries built on the table (the members of a session, the live members of a group) sit
//! above the backends, so the Linux tests exercise the logic the macOS build runs too.

/// A process' scheduling state, as far as the session cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProcState {
    /// Stopped by a signal or a tracer (Linux `T`/`t`, macOS `SSTOP`).
    Stopped,
    /// Exited and not reaped yet, or exiting (Linux `Z`/`X`, macOS `SZOMB`).
    Dead,
    /// Anything else: running, sleeping, being created.
    Alive,
}

/// One process as [`info`] sees it.
pub(crate) struct ProcInfo {
    /// The command name (Linux `comm`, 15 bytes at most; macOS `pbi_comm`, 16).
    pub(crate) comm: String,
    pub(crate) state: ProcState,
    pub(crate) ppid: i32,
    pub(crate) pgrp: i32,
    /// The session id; None when the kernel does not say (macOS, for a zombie).
    pub(crate) sid: Option<i32>,
    /// The wait status of a dead process (0 while alive); None when unknown.
    pub(crate) exit_status: Option<i32>,
}

impl ProcInfo {
    pub(crate) fn dead(&self) -> bool {
        self.state == ProcState::Dead
    }
}

#[cfg(target_os = "linux")]
use linux as backend;
#[cfg(target_os = "macos")]
use macos as backend;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
use unknown as backend;

/// Every process id the table lists; None when the table cannot be read at all.
pub(crate) fn all_pids() -> Option<Vec<i32>> {
    backend::all_pids()
}

/// One process; None when it is gone (or was never there, or may not be looked at).
pub(crate) fn info(pid: i32) -> Option<ProcInfo> {
    backend::info(pid)
}

/// Whether the process has signal `sig` pending (not yet acted on); None when unknown.
pub(crate) fn signal_pending(pid: i32, sig: i32) -> Option<bool> {
    backend::signal_pending(pid, sig)
}

/// Whether the process is blocked in a system call that waits for input; None when unknown.
pub(crate) fn waits_for_input(pid: i32) -> Option<bool> {
    backend::waits_for_input(pid)
}

/// The processes of session `sid` other than its leader, zombies included (a SIGKILL to one is
/// harmless). Background jobs of an interactive shell run in process groups of their own, but
/// in the shell's session; a process that called `setsid` has left it.
pub(crate) fn session_members(sid: i32) -> Vec<i32> {
    all_pids()
        .unwrap_or_default()
        .into_iter()
        .filter(|&pid| pid != sid && info(pid).is_some_and(|p| p.sid == Some(sid)))
        .collect()
}

/// The live (not dead) processes of process group `pgrp`.
pub(crate) fn live_group_members(pgrp: i32) -> Vec<i32> {
    all_pids()
        .unwrap_or_default()
        .into_iter()
        .filter(|&pid| info(pid).is_some_and(|p| p.pgrp == pgrp && !p.dead()))
        .collect()
}

#[cfg(target_os = "linux")]
mod linux {
    use super::{ProcInfo, ProcState};

    pub(super) fn all_pids() -> Option<Vec<i32>> {
        let dir = std::fs::read_dir("/proc").ok()?;
        Some(dir.flatten().filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()).collect())
    }

    /// `/proc/PID/stat`: the name is in parentheses and may itself contain `)` and spaces, so
    /// the fields are counted after the last `)`: state, ppid, pgrp, session, … exit_code (52nd).
    pub(super) fn info(pid: i32) -> Option<ProcInfo> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (head, rest) = stat.rsplit_once(')')?;
        let comm = head.split_once('(')?.1.to_string();
        let f: Vec<&str> = rest.split_whitespace().collect();
        let state = match *f.first()? {
            "Z" | "X" => ProcState::Dead,
            "T" | "t" => ProcState::Stopped,
            _ => ProcState::Alive,
        };
        Some(ProcInfo {
            comm,
            state,
            ppid: f.get(1)?.parse().ok()?,
            pgrp: f.get(2)?.parse().ok()?,
            sid: f.get(3).and_then(|s| s.parse().ok()),
            exit_status: Some(f.get(49).and_then(|x| x.parse().ok()).unwrap_or(0)),
        })
    }

    /// `SigPnd` (the thread's) or `ShdPnd` (the process') in `/proc/PID/status`.
    pub(super) fn signal_pending(pid: i32, sig: i32) -> Option<bool> {
        let bit = 1u64 << (sig - 1);
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        Some(status.lines().any(|l| {
            (l.starts_with("SigPnd:") || l.starts_with("ShdPnd:"))
                && u64::from_str_radix(l[7..].trim(), 16).is_ok_and(|m| m & bit != 0)
        }))
    }

    /// `/proc/PID/syscall` names the call a sleeping process is in ("running" otherwise).
    pub(super) fn waits_for_input(pid: i32) -> Option<bool> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/syscall")).ok()?;
        let Some(nr) = text.split_whitespace().next().and_then(|n| n.parse::<libc::c_long>().ok()) else {
            return Some(false); // "running"
        };
        let mut waits = [libc::SYS_read, libc::SYS_pselect6, libc::SYS_ppoll].contains(&nr);
        #[cfg(target_arch = "x86_64")]
        {
            waits |= nr == libc::SYS_select || nr == libc::SYS_poll;
        }
        Some(waits)
    }
}

/// libproc (part of libSystem). `proc_pidinfo(PROC_PIDTBSDINFO)` answers for zombies too, and
/// for the caller's own user's processes without privileges, which is all a session holds.
#[cfg(target_os = "macos")]
mod macos {
    use super::{ProcInfo, ProcState};

    pub(super) fn all_pids() -> Option<Vec<i32>> {
        // The table may grow between the two calls: leave room, and retry once if it filled up.
        for _ in 0..2 {
            let n = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
            if n <= 0 {
                return None;
            }
            let cap = n as usize + 64;
            let mut pids = vec![0 as libc::pid_t; cap];
            let bytes = (cap * std::mem::size_of::<libc::pid_t>()) as libc::c_int;
            let got = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
            if got <= 0 {
                return None;
            }
            let got = got as usize;
            if got < cap {
                pids.truncate(got);
                pids.retain(|&p| p > 0);
                return Some(pids);
            }
        }
        None
    }

    pub(super) fn info(pid: i32) -> Option<ProcInfo> {
        if pid <= 0 {
            return None;
        }
        let mut bsd: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
        let got = unsafe {
            libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, (&mut bsd as *mut libc::proc_bsdinfo).cast(), size)
        };
        if got != size {
            return None;
        }
        let comm: Vec<u8> = bsd.pbi_comm.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        let state = match bsd.pbi_status {
            libc::SZOMB => ProcState::Dead,
            libc::SSTOP => ProcState::Stopped,
            _ => ProcState::Alive,
        };
        // getsid finds live processes only; a zombie has no session to report.
        let sid = match unsafe { libc::getsid(pid) } {
            s if s > 0 => Some(s),
            _ => None,
        };
        Some(ProcInfo {
            comm: String::from_utf8_lossy(&comm).into_owned(),
            state,
            ppid: bsd.pbi_ppid as i32,
            pgrp: bsd.pbi_pgid as i32,
            sid,
            exit_status: Some(if state == ProcState::Dead { bsd.pbi_xstatus as i32 } else { 0 }),
        })
    }

    /// Pending signals are per thread on macOS and not reported (`kinfo_proc`'s `p_siglist` is
    /// always 0).
    pub(super) fn signal_pending(_pid: i32, _sig: i32) -> Option<bool> {
        None
    }

    /// No interface shows the system call a thread waits in.
    pub(super) fn waits_for_input(_pid: i32) -> Option<bool> {
        None
    }
}

/// Any other system: an empty table, nothing known.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod unknown {
    use super::ProcInfo;

    pub(super) fn all_pids() -> Option<Vec<i32>> {
        None
    }
    pub(super) fn info(_pid: i32) -> Option<ProcInfo> {
        None
    }
    pub(super) fn signal_pending(_pid: i32, _sig: i32) -> Option<bool> {
        None
    }
    pub(super) fn waits_for_input(_pid: i32) -> Option<bool> {
        None
    }
}
