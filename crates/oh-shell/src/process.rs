//! The bash process on a PTY: spawning it with the PS1 hook, the reader thread that renders its
//! output into the pane, typing into it, waiting for prompts, and killing it with its children.

use super::*;

/// The `PROMPT_COMMAND` function: sets PS1 to the reference's JSON block, with the values the
/// reference's `export PS1="…$!…$?…$(pwd)…$(which python …)…"` gives, without forking.
/// `which` (debianutils) is re-stated: PATH split on `:`, an empty element is `.`, a trailing
/// `:` adds an empty element, first regular executable file wins.
/// While bash has children (jobs): first, a child with a signal still pending (`kill %1` was just
/// sent, the job has not run yet on a loaded machine) is given up to ~0.1 s to act on it; then the
/// reference's two command substitutions run (results discarded), whose waits reap the jobs that
/// died. So the job notifications printed before the prompt ("Terminated", "Killed", "Done") are
/// the ones the reference prints, without depending on the scheduler.
/// The markers are written in two quoted pieces (`'###PS1'$'END###'`): the function is exported,
/// and `env` or `declare -f` would otherwise print them whole, a prompt end in the middle of a
/// command's output.
/// Written for bash 3.2 too (macOS' `/bin/bash`): globbing is turned off for the hook's own
/// unquoted expansions and back on before it returns, where bash >= 4.4 would use `local -`
/// (bash 3.2 rejects it, prints an error before every prompt and leaves globbing off for the
/// agent's commands).
pub(crate) const PS1_FUNCTION: &str = r#"() {  local __oh_e=$? __oh_p=$! __oh_py= __oh_d __oh_path=$PATH IFS=:;
 local __oh_o=$-; set -f;
 [[ -n $__oh_rl ]] || { __oh_rl=1; bind 'set disable-completion on' 2>/dev/null; };
 local __oh_k=; { read -r __oh_k < /proc/$$/task/$$/children; } 2>/dev/null; [[ -n $__oh_k ]] && { local __oh_n __oh_c __oh_l __oh_w;
  for __oh_n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do __oh_w=;
   for __oh_c in ${__oh_k// /:}; do while read -r __oh_l; do case $__oh_l in (SigPnd:*[1-9a-f]*|ShdPnd:*[1-9a-f]*) __oh_w=1 ;; esac; done 2>/dev/null < /proc/$__oh_c/status; done;
   [[ -z $__oh_w ]] && break; sleep 0.005; done;
  : "$(pwd)" "$(which python 2>/dev/null || echo)"; };
 case $__oh_path in (*[!:]:) __oh_path="$__oh_path:" ;; esac;
 for __oh_d in $__oh_path; do [ -z "$__oh_d" ] && __oh_d=.; if [ -f "$__oh_d/python" ] && [ -x "$__oh_d/python" ]; then __oh_py=$__oh_d/python; break; fi; done;
 PS1=$'\n###PS1'$'JSON###\n{\n  "pid": "'"$__oh_p"$'",\n  "exit_code": "'"$__oh_e"$'",\n  "username": "\\u",\n  "hostname": "\\h",\n  "working_dir": "'"$PWD"$'",\n  "py_interpreter_path": "'"$__oh_py"$'"\n}\n###PS1'$'END###\n';
 [[ $__oh_o == *f* ]] || set +f;
 return $__oh_e
}"#;

/// What the reader thread shares with the session.
pub(crate) struct Pane {
    pub(crate) term: Term,
    pub(crate) last_output: Instant,
    pub(crate) exited: bool,
}

/// One running bash on a PTY.
pub(crate) struct Proc {
    pub(crate) pane: Arc<StdMutex<Pane>>,
    pub(crate) notify: watch::Receiver<u64>,
    /// Bytes to type, and who to tell once they are written.
    pub(crate) input: std::sync::mpsc::Sender<(Vec<u8>, Option<tokio::sync::oneshot::Sender<()>>)>,
    pub(crate) child: Box<dyn Child + Send + Sync>,
    pub(crate) _master: Box<dyn MasterPty + Send>,
    pub(crate) pid: u32,
}

impl Proc {
    pub(crate) fn spawn(work_dir: &Path, cfg: &ShellConfig) -> std::io::Result<Proc> {
        if !work_dir.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("working directory {} does not exist", work_dir.display()),
            ));
        }
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize { rows: term::ROWS as u16, cols: term::COLS as u16, pixel_width: 0, pixel_height: 0 })
            .map_err(io_err)?;
        let mut cmd = CommandBuilder::new("/bin/bash");
        cmd.args(["--norc", "--noprofile", "-i"]);
        cmd.cwd(work_dir);
        for (k, _) in std::env::vars_os() {
            let ks = k.to_string_lossy();
            // The executor's own credential (and OpenHands' keys, should the executor's process
            // have them) is for the executor's connection, not for the agent's commands.
            let credential =
                ks == "OH_SESSION_API_KEY" || ks == "SESSION_API_KEY" || ks.starts_with("OH_SESSION_API_KEYS_");
            if ks.starts_with("VSCODE_") || ks == "ELECTRON_RUN_AS_NODE" || credential {
                cmd.env_remove(&k);
            }
        }
        cmd.env("LANG", "C.UTF-8");
        cmd.env("LC_ALL", "C.UTF-8");
        cmd.env("TERM", "tmux-256color");
        cmd.env("PWD", work_dir);
        // Not exported: the hook's value is a whole, valid prompt block (real newlines, the JSON
        // expanded), and `env`/`printenv` would print it in the middle of their output; the
        // session would take it for the prompt and end the command there, the rest of the output
        // spilling into the next one. (The reference exports its PS1 unexpanded, on one line.)
        cmd.env_remove("PS1");
        cmd.env("PS2", "");
        cmd.env("PROMPT_COMMAND", "__oh_ps1");
        cmd.env("BASH_FUNC___oh_ps1%%", PS1_FUNCTION);
        // No history file: an interactive bash appends its history to `$HISTFILE`
        // (`~/.bash_history` by default, or whatever the user's own environment names) on `exit`
        // and SIGHUP, and truncates it to `HISTFILESIZE` lines: the agent's commands, secret
        // exports included, would land in the user's own history. An empty value (not unset:
        // bash sets the default when the variable is missing) keeps history in memory only,
        // and being exported it also covers the interactive bashes the agent starts itself.
        cmd.env("HISTFILE", "");
        for (k, v) in &cfg.env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).map_err(io_err)?;
        drop(pair.slave);
        let pid = child.process_id().unwrap_or(0);
        let mut reader = pair.master.try_clone_reader().map_err(io_err)?;
        let mut writer = pair.master.take_writer().map_err(io_err)?;

        let pane = Arc::new(StdMutex::new(Pane { term: Term::new(), last_output: Instant::now(), exited: false }));
        let (tx, rx) = watch::channel(0u64);
        let sink = cfg.output_sink.clone();
        let pane2 = pane.clone();
        std::thread::Builder::new().name("oh-shell-reader".into()).spawn(move || {
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
        let (in_tx, in_rx) = std::sync::mpsc::channel::<(Vec<u8>, Option<tokio::sync::oneshot::Sender<()>>)>();
        // The writer thread owns a duplicate of the master fd to ask for the terminal's
        // foreground process group (closed when the thread ends).
        let fg_fd = pair.master.as_raw_fd().map(|fd| unsafe { libc::dup(fd) }).filter(|fd| *fd >= 0);
        std::thread::Builder::new().name("oh-shell-writer".into()).spawn(move || {
            while let Ok((bytes, written)) = in_rx.recv() {
                let mut write = |b: &[u8]| writer.write_all(b).and_then(|_| writer.flush());
                let signal = bytes.iter().find_map(|b| signal_of(*b));
                let ok = match (fg_fd, signal) {
                    (Some(fd), Some(sig)) if pid > 0 => send_signal_key(fd, pid as i32, sig, || write(&bytes)),
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
        Ok(Proc { pane, notify: rx, input: in_tx, child, _master: pair.master, pid })
    }

    pub(crate) fn send(&self, bytes: Vec<u8>) {
        let _ = self.input.send((bytes, None));
    }

    /// Send, and resolve once the bytes are written (a signal key may be held back a moment
    /// under load; the action's clocks start when it is typed, as tmux's send-keys returns).
    pub(crate) fn send_written(&self, bytes: Vec<u8>) -> tokio::sync::oneshot::Receiver<()> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let _ = self.input.send((bytes, Some(tx)));
        rx
    }

    pub(crate) fn markers(&self) -> u64 {
        self.pane.lock().expect("pane lock").term.markers_seen
    }

    /// Wait until a prompt marker beyond `seen` has been printed (or bash exits / the time is up).
    pub(crate) async fn wait_marker(&mut self, seen: u64, limit: Duration) -> bool {
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
            if tokio::time::timeout_at(deadline, self.notify.changed()).await.is_err() {
                return false;
            }
        }
    }

    /// Kill every process of the shell's session: with job control on, each background job
    /// (`sleep 1000 &`, `nohup server &`) runs in a process group of its own, so killing the
    /// shell's group alone would leave them running into the next conversation.
    pub(crate) fn kill_all(&mut self) {
        if self.pid > 0 {
            let sid = self.pid as i32;
            for pid in proc_table::session_members(sid) {
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
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
