//! One command in the session: typing it, waiting for the prompt, a no-change or hard timeout,
//! and building the observation as the reference's `BashSession.execute` does.

use super::*;

/// The pane after `C-l` + `clear-history`: readline redraws the prompt at the top.
pub(crate) fn reset_to_prompt(term: &mut Term, block: &str) {
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
pub(crate) fn tmux_arg(s: &str) -> String {
    match s.strip_suffix(';') {
        Some(rest) => match rest.strip_suffix('\\') {
            Some(r) => format!("{r};"),
            None => rest.to_string(),
        },
        None => s.to_string(),
    }
}

/// What is actually typed for `original` (sent as `escaped` to tmux by the reference).
pub(crate) fn typed_text(original: &str, escaped: &str, is_input: bool) -> String {
    if !is_input && escaped.ends_with("\\\\;") && original.ends_with("\\;") && !original.ends_with("\\\\;") {
        original.to_string()
    } else {
        tmux_arg(original)
    }
}

pub(crate) fn is_special_key(command: &str) -> bool {
    let c = py_strip(command);
    c.starts_with("C-") && c.chars().count() == 3
}

impl Inner {
    /// `_get_command_output`. `keep` stores `raw` as `prev_output` (timeouts and NOT-executed
    /// replies); a completed reply clears it anyway.
    pub(crate) fn get_command_output(
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

    pub(crate) async fn execute(&mut self, action: &CmdRunAction, nct: u64, rule: SplitRule) -> Observation {
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
        let (parts, heredoc_boundary) = match rule {
            SplitRule::V0 => (oh_bashlex::split_bash_commands(&command), false),
            SplitRule::V1 => {
                let split = oh_bashlex::split_bash_commands_v1(&command);
                (split.parts, split.heredoc_boundary)
            }
        };
        if parts.len() > 1 {
            let list: Vec<String> = parts.iter().enumerate().map(|(i, c)| format!("({}) {}", i + 1, c)).collect();
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
        // A new command forgets the last one's end mark (an input or a poll keeps it).
        let mut boundary_line = None;
        if sent && !is_input {
            self.boundary = heredoc_boundary.then(Boundary::new);
            boundary_line = self.boundary.as_ref().map(|b| b.line.clone());
        }
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
            if let Some(line) = boundary_line {
                bytes.extend_from_slice(line.as_bytes());
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
                // With an end mark, the prompt that counts is the one after the mark (the
                // boundary line's own): one before it would leave that prompt to arrive later,
                // into the next command's screen.
                // A control key (C-c, C-d, C-z) makes the terminal flush the input bash has not
                // read yet, the boundary line with it: the prompt alone ends that call.
                let marked = match &self.boundary {
                    None => true,
                    Some(_) if is_input && is_special_key(&command) => true,
                    Some(b) => b.mark_at(&cap).is_some_and(|at| m.last().is_some_and(|p| p.start > at)),
                };
                if marked && (m.len() > initial_count || py_rstrip(&cap).ends_with(PS1_END)) {
                    let (cap, m) = match self.boundary.take() {
                        Some(b) => {
                            let cap = b.strip(&cap);
                            let m = find_ps1(&cap);
                            (cap, m)
                        }
                        None => (cap, m),
                    };
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
                let suffix =
                    format!("\n[The command has no new output after {nct} seconds. {TIMEOUT_MESSAGE_TEMPLATE}]");
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
                // A NaN (which `clamp` keeps) reads as no time left, as a negative timeout does.
                let d = start + Duration::try_from_secs_f64(t.clamp(0.0, 1e9)).unwrap_or(Duration::ZERO);
                deadline = Some(deadline.map_or(d, |x| x.min(d)));
            }
            // Also wake up now and then to notice a shell that exited while a background job
            // keeps the terminal open (no EOF then).
            let tick = Instant::now() + Duration::from_millis(250);
            let deadline = Some(deadline.map_or(tick, |d| d.min(tick)));
            let proc = self.proc.as_mut().expect("a running shell");
            match deadline {
                Some(d) => {
                    let _ = tokio::time::timeout_at(tokio::time::Instant::from_std(d), proc.notify.changed()).await;
                }
                None => {
                    let _ = proc.notify.changed().await;
                }
            }
        }
    }

    pub(crate) fn completed(&mut self, command: &str, cap: String, m: Vec<Ps1Match>, hidden: bool) -> Observation {
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
            let k: String = command.chars().last().map(|c| c.to_uppercase().collect()).unwrap_or_default();
            format!("\n[The command completed with exit code {}. CTRL+{k} was sent.]", md.exit_code)
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

    pub(crate) fn timed_out(&mut self, command: &str, suffix: String) -> Observation {
        let cap = self.proc.as_ref().expect("a running shell").pane.lock().expect("pane lock").term.capture();
        let cap = match &self.boundary {
            Some(b) => b.strip(&cap),
            None => cap,
        };
        let m = find_ps1(&cap);
        let raw = combine_outputs(&cap, &m, false);
        let mut md = CmdOutputMetadata { suffix, ..CmdOutputMetadata::default() };
        let content = self.get_command_output(command, &raw, &mut md, CONTINUE_PREFIX, true);
        Observation::cmd_output(content, command, md, false)
    }

    /// bash itself ended (`exit`, `C-d` at the prompt, killed): report what it printed and its
    /// exit status; the session restarts a shell for the next command.
    pub(crate) async fn shell_exited(&mut self, command: &str, hidden: bool) -> Observation {
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
            suffix: format!(
                "\n[The command completed with exit code {code}. The shell exited; a new one will be started.]"
            ),
            ..CmdOutputMetadata::default()
        };
        let content = self.get_command_output(command, &raw, &mut md, "", false);
        self.status = Status::Idle;
        self.prev_output.clear();
        Observation::cmd_output(content, command, md, hidden)
    }
}
