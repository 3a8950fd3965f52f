//! Unit tests: the pane renderer on byte input, and the session internals on a real bash.
use super::term::{Term, COLS, HISTORY_LIMIT, ROWS};
use super::*;

fn render(bytes: &[u8]) -> String {
    let mut t = Term::new();
    t.feed(bytes);
    t.capture()
}

#[test]
fn renders_the_spec_table() {
    assert_eq!(render(b"\x1b[31mred\x1b[0m plain\r\n"), "red plain");
    assert_eq!(render(b"a\tb\r\n"), "a       b");
    assert_eq!(render(b"aaa\rbb\r\n"), "bba");
    assert_eq!(render(b"x   \r\ny  \r\n"), "x\ny");
    assert_eq!(render("\u{e9}\u{2713}\r\n".as_bytes()), "\u{e9}\u{2713}");
    assert_eq!(render(b"\r\n\r\nz\r\n"), "\n\nz");
}

#[test]
fn long_lines_wrap_and_join() {
    let line = "x".repeat(2500);
    let mut t = Term::new();
    t.feed(line.as_bytes());
    t.feed(b"\r\nnext\r\n");
    assert_eq!(t.capture(), format!("{line}\nnext"));
    // A CR on a wrapped row goes back to the start of the *row*, as in tmux.
    let mut t = Term::new();
    t.feed("y".repeat(COLS + 5).as_bytes());
    t.feed(b"\rAB\r\n");
    assert_eq!(t.capture(), format!("{}AByyy", "y".repeat(COLS)));
}

#[test]
fn utf8_split_across_chunks_and_wide_chars() {
    let mut t = Term::new();
    let s = "日本\u{e9}".as_bytes();
    for b in s {
        t.feed(&[*b]);
    }
    t.feed(b"|\r\n");
    assert_eq!(t.capture(), "日本\u{e9}|");
    // Combining mark stays attached.
    assert_eq!(render("e\u{301}x\r\n".as_bytes()), "e\u{301}x");
}

#[test]
fn erase_and_cursor_sequences() {
    assert_eq!(render(b"hello world\r\x1b[Kbye\r\n"), "bye");
    assert_eq!(render(b"abcdef\x1b[3D\x1b[K!\r\n"), "abc!");
    assert_eq!(render(b"abc\x1b[5Gx\r\n"), "abc x");
    assert_eq!(render(b"12345\x1b[2G\x1b[2P\r\n"), "145");
    assert_eq!(render(b"line1\r\nline2\x1b[A\rL\r\n\r\n"), "Line1\nline2");
    // OSC title and charset designations vanish.
    assert_eq!(render(b"\x1b]0;title\x07a\x1b(Bb\x1bkname\x1b\\c\r\n"), "abc");
    // Backspace.
    assert_eq!(render(b"abc\x08\x08X\r\n"), "aXc");
}

#[test]
fn alternate_screen_is_restored() {
    assert_eq!(render(b"before\r\n\x1b[?1049hfull screen\x1b[?1049lafter\r\n"), "before\nafter");
}

#[test]
fn clear_moves_screen_into_history() {
    let mut t = Term::new();
    t.feed(b"old\r\n\x1b[H\x1b[2Jnew\r\n");
    assert_eq!(t.history_len(), 1);
    assert_eq!(t.capture(), "old\nnew");
}

#[test]
fn history_drops_a_tenth_when_full() {
    let mut t = Term::new();
    let n = HISTORY_LIMIT + ROWS + 1;
    let mut buf = String::new();
    for i in 0..n {
        buf.push_str(&format!("{i}\r\n"));
    }
    t.feed(buf.as_bytes());
    // n + 1 rows written (the cursor row), the screen holds ROWS: n+1-ROWS scrolled out; at the
    // limit tmux frees HISTORY_LIMIT/10 at once before adding the next row.
    let scrolled = n + 1 - ROWS;
    let expect = if scrolled > HISTORY_LIMIT { scrolled - HISTORY_LIMIT / 10 } else { scrolled };
    assert_eq!(t.history_len(), expect);
}

#[test]
fn marker_counting_across_chunks() {
    let mut t = Term::new();
    t.feed(b"####PS1E");
    t.feed(b"ND###");
    assert_eq!(t.markers_seen, 1);
    t.feed(b"PS1END###");
    assert_eq!(t.markers_seen, 2, "the trailing ### starts a new marker");
    t.feed(b"###PS1END##");
    assert_eq!(t.markers_seen, 2);
}

#[test]
fn splitlines_counts_like_python() {
    assert_eq!(py_splitlines_count(""), 0);
    assert_eq!(py_splitlines_count("a\n"), 1);
    assert_eq!(py_splitlines_count("a\n\nb"), 3);
    assert_eq!(py_splitlines_count("a\r\nb\rc"), 3);
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn content(o: &Observation) -> &str {
    &o.content
}

fn md(o: &Observation) -> &CmdOutputMetadata {
    match &o.extras {
        oh_protocol::Extras::Run { metadata, .. } => metadata,
        other => panic!("not a run observation: {other:?}"),
    }
}

#[test]
fn session_prompt_values_match_the_shell() {
    rt().block_on(async {
        let dir = std::env::temp_dir();
        let s = BashSession::start(ShellConfig::new(&dir)).await.unwrap();
        let o = s.execute(&CmdRunAction::new("echo $USER-$(hostname -s)")).await;
        let m = md(&o);
        assert_eq!(m.exit_code, 0);
        assert_eq!(m.pid, -1);
        assert_eq!(m.working_dir.as_deref(), Some(dir.to_str().unwrap().trim_end_matches('/')));
        let want_py =
            std::process::Command::new("sh").arg("-c").arg("which python 2>/dev/null || echo \"\"").output().unwrap();
        assert_eq!(m.py_interpreter_path.as_deref(), Some(String::from_utf8_lossy(&want_py.stdout).trim_end()));
        let host = std::process::Command::new("hostname").arg("-s").output().unwrap();
        assert_eq!(m.hostname.as_deref(), Some(String::from_utf8_lossy(&host.stdout).trim()));
        // The alias from the init command is there.
        let o = s.execute(&CmdRunAction::new("alias git")).await;
        assert_eq!(content(&o), "alias git='git --no-pager'");
        // $! shows up as pid.
        let o = s.execute(&CmdRunAction::new("sleep 0.1 &")).await;
        assert!(md(&o).pid > 0, "{o:?}");
        s.close().await;
    });
}

#[test]
fn pane_is_reset_to_one_prompt_after_completion() {
    rt().block_on(async {
        let s = BashSession::start(ShellConfig::new(std::env::temp_dir())).await.unwrap();
        s.execute(&CmdRunAction::new("seq 1 50")).await;
        let inner = s.inner.lock().await;
        let cap = inner.proc.as_ref().unwrap().pane.lock().unwrap().term.capture();
        assert!(cap.starts_with("\n###PS1JSON###\n{"), "{cap:?}");
        assert!(cap.ends_with("}\n###PS1END###"), "{cap:?}");
        assert_eq!(find_ps1(&cap).len(), 1);
    });
}

#[test]
fn tmux_argument_rules() {
    assert_eq!(typed_text("echo hi;", "echo hi;", false), "echo hi");
    assert_eq!(typed_text("typed;", "typed;", true), "typed");
    // The escaped trailing `\\;` is typed as the original `\;`.
    assert_eq!(typed_text(r"find . -exec echo {} \;", r"find . -exec echo {} \\;", false), r"find . -exec echo {} \;");
    // Not escaped (quoted context): tmux turns the trailing `\;` into `;`.
    assert_eq!(typed_text(r"x\;", r"x\;", true), "x;");
    assert_eq!(typed_text("echo a", "echo a", false), "echo a");
    assert!(is_special_key(" C-c ") && !is_special_key("C-cc"));
}

/// What counts as a settled foreground for a signal key (see `wait_for_settled_foreground`).
#[test]
fn foreground_settled_rules() {
    use std::os::unix::process::CommandExt;
    let me = std::process::id() as i32;
    let mut live = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
    let live_pg = live.id() as i32;
    let t = Instant::now();
    while proc_table::info(live_pg).map(|s| s.comm) != Some("sleep".into()) {
        assert!(t.elapsed() < Duration::from_secs(10), "sleep did not exec");
        std::thread::sleep(Duration::from_millis(2));
    }
    // A live, exec'd job in the foreground: settled (the "shell" here is the sleep itself,
    // which has no children; this test process has other tests' shells as children).
    assert!(foreground_settled(live_pg, live_pg, Some("no-such-comm")));
    // A child of the shell that still carries the shell's name (forked, not exec'd yet) runs
    // the shell's own SIGINT handler: not settled, whatever group is in the foreground.
    assert!(!foreground_settled(live_pg, me, Some("sleep")));
    // A group whose only member has exited (a zombie not reaped yet): the key would signal
    // nobody.
    let mut zombie = std::process::Command::new("/bin/true").process_group(0).spawn().unwrap();
    let zpg = zombie.id() as i32;
    let t = Instant::now();
    while proc_table::info(zpg).map(|s| s.state) != Some(ProcState::Dead) {
        assert!(t.elapsed() < Duration::from_secs(10), "true did not exit");
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(!foreground_settled(zpg, live_pg, Some("no-such-comm")));
    // A dead, unreaped child of the shell: bash is about to collect it (it may drop a SIGINT
    // it receives meanwhile), even with a live job in the foreground.
    assert!(!foreground_settled(live_pg, me, Some("no-such-comm")));
    zombie.wait().unwrap();
    // Other tests of this process spawn (and reap) shells too: wait for a moment without any
    // unreaped child rather than asserting on one instant.
    let t = Instant::now();
    while !foreground_settled(live_pg, me, Some("no-such-comm")) {
        assert!(t.elapsed() < Duration::from_secs(10), "never settled after the reap");
        std::thread::sleep(Duration::from_millis(5));
    }
    live.kill().unwrap();
    live.wait().unwrap();
}

/// macOS' `/bin/bash` is 3.2 (tests/bash32 runs the bash conformance cases on it): the prompt
/// hook must not use what bash added later. `local -` (bash 4.4) was there once: bash 3.2 refused
/// it before every prompt, so every observation carried the error, and globbing stayed off for
/// the agent's commands.
#[test]
fn the_prompt_hook_uses_nothing_newer_than_bash_3_2() {
    let newer = [
        "local -;",
        "local - ",
        "declare -A",
        "declare -n",
        "local -n",
        "mapfile",
        "readarray",
        "coproc",
        ",,}",
        "^^}",
        ";;&",
        "|&",
        "&>>",
        "BASHPID",
        "EPOCHREALTIME",
        "${var@",
    ];
    for construct in newer {
        assert!(!process::PS1_FUNCTION.contains(construct), "the prompt hook uses {construct:?}");
    }
}

/// The process table's view of known processes: this test process (its ids from the kernel
/// itself), a child stopped by SIGSTOP, and a child killed by SIGKILL and not reaped yet.
#[test]
fn process_table_reports_ids_states_and_wait_status() {
    let me = std::process::id() as i32;
    let p = proc_table::info(me).expect("this process is in the table");
    assert_eq!(p.ppid, unsafe { libc::getppid() });
    assert_eq!(p.pgrp, unsafe { libc::getpgrp() });
    assert_eq!(p.sid, Some(unsafe { libc::getsid(0) }));
    assert_eq!(p.state, ProcState::Alive);
    assert!(proc_table::all_pids().unwrap().contains(&me));

    let mut child = std::process::Command::new("sleep").arg("1000").spawn().unwrap();
    let pid = child.id() as i32;
    let settle = |want: ProcState| {
        let t = Instant::now();
        while proc_table::info(pid).map(|p| p.state) != Some(want) {
            assert!(t.elapsed() < Duration::from_secs(10), "{pid} never became {want:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    // Wait for the exec, so that the name is the program's.
    let t = Instant::now();
    while proc_table::info(pid).map(|p| p.comm) != Some("sleep".into()) {
        assert!(t.elapsed() < Duration::from_secs(10), "sleep never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(proc_table::info(pid).unwrap().ppid, me);
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    settle(ProcState::Stopped);
    unsafe { libc::kill(pid, libc::SIGKILL) };
    settle(ProcState::Dead);
    let dead = proc_table::info(pid).unwrap();
    assert_eq!(dead.exit_status.map(|w| w & 0x7f), Some(libc::SIGKILL));
    assert!(proc_table::live_group_members(dead.pgrp).iter().all(|&m| m != pid));
    child.wait().unwrap();
    assert!(proc_table::info(pid).is_none(), "a reaped process is gone");
}

/// Closing a session ends every process of the shell's session, although with job control
/// each background job runs in a process group of its own: a plain job, a `nohup` one, one
/// started from a subshell and a disowned one. A process that left the session (`setsid`) is
/// outside it, by the kernel's own definition, and out of `close`'s reach.
#[test]
fn close_kills_every_process_of_the_session() {
    rt().block_on(async {
        let s = BashSession::start(ShellConfig::new(std::env::temp_dir())).await.unwrap();
        let sid = s.inner.lock().await.proc.as_ref().unwrap().pid as i32;
        let mut jobs = Vec::new();
        for cmd in [
            "sleep 1000 & echo $!",
            "nohup sleep 1001 >/dev/null 2>&1 & echo $!",
            "(sleep 1002 & echo $!)",
            "sleep 1003 & disown; echo $!",
        ] {
            let o = s.execute(&CmdRunAction::new(cmd)).await;
            let pid: i32 = content(&o).lines().last().unwrap().trim().parse().unwrap();
            jobs.push(pid);
        }
        let o = s.execute(&CmdRunAction::new("(setsid sleep 1004 & echo $!)")).await;
        let escaped: i32 = content(&o).lines().last().unwrap().trim().parse().unwrap();

        let members = proc_table::session_members(sid);
        for &pid in &jobs {
            let p = proc_table::info(pid).unwrap();
            assert_eq!(p.sid, Some(sid), "job {pid} is in the shell's session");
            assert_ne!(p.pgrp, sid, "job {pid} runs outside the shell's process group");
            assert!(members.contains(&pid), "{pid} not among {members:?}");
        }
        assert!(!members.contains(&escaped));
        assert_eq!(proc_table::info(escaped).unwrap().sid, Some(escaped));

        s.close().await;
        // SIGKILL is asynchronous: wait (bounded) until no member of the session is alive.
        let live = || {
            proc_table::session_members(sid)
                .into_iter()
                .filter(|&pid| proc_table::info(pid).is_some_and(|p| !p.dead()))
                .collect::<Vec<_>>()
        };
        let t = Instant::now();
        while !live().is_empty() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        unsafe { libc::kill(escaped, libc::SIGKILL) };
        assert_eq!(live(), Vec::<i32>::new(), "jobs {jobs:?} survived close()");
        for pid in jobs {
            assert!(proc_table::info(pid).is_none_or(|p| p.dead()), "{pid} lives");
        }
    });
}
