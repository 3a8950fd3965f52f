//! The OpenHands V1 mode (software-agent-sdk `openhands-tools` 1.58.0): the `terminal` and
//! `file_editor` tools' actions, answered with V1's observations.
//!
//! V1's terminal session and file editor are descendants of V0's `BashSession` and `OHEditor`, so
//! the same session and editor run the action; this module maps the V1 action onto them and turns
//! the V0 observation into the V1 one. Every rule below was checked against openhands-tools
//! 1.58.0 (`tests/v1` runs both side by side); what does not map is listed in docs/v1.md.
//!
//! Wire format (docs/protocol.md, "OpenHands V1 actions"):
//! * `{"id": N, "action": "v1_terminal", "args": {"command", "is_input", "timeout", "reset"}}`
//! * `{"id": N, "action": "v1_file_editor", "args": {"command", "path", "file_text", "old_str",
//!   "new_str", "insert_line", "view_range"}}`
//!
//! and the reply `{"cause": N, "observation": "v1_terminal" | "v1_file_editor", "content": text,
//! "extras": {...V1 fields...}}`.

use oh_files::{TextRule, WholeFileEdit};
use oh_protocol::{
    v1_truncate, CmdOutputMetadata, CmdRunAction, Extras, FileEditAction, ImplSource, Observation, V1FileEditorAction,
    V1FileEditorObservation, V1InterruptObservation, V1TerminalAction, V1TerminalObservation,
};
use oh_pysem::{lstrip, repr_str, strip};
use oh_shell::SplitRule;
use serde_json::Value;

use crate::Executor;

/// How V0's timeout hint ends, and how V1's does (it names the V1 tool).
const V0_HINT_END: &str = "use the timeout parameter in execute_bash for future commands.";
const V1_HINT_END: &str = "use the timeout parameter in terminal for future commands.";
const RESET_TEXT: &str =
    "Terminal session has been reset. All previous environment variables and session state have been cleared.";
const LITERAL_HINT: &str = "[Tool-argument error] The `command` argument looks like a Python/JSON {kind}, not a shell command. It starts with: {head}\n\nThe `terminal` tool runs exactly ONE shell command at a time. To pass structured data or multi-line code:\n  - Write a script first with `file_editor` (command=\"create\", path=\"/tmp/run.py\", ...), then invoke it: `python /tmp/run.py`.\n  - Or use a heredoc inline, e.g.:\n        python - <<'EOF'\n        DATABASES = {'default': {...}}\n        # your code here\n        EOF\n\nDo not put a Python list/dict literal into the `command` field; the shell cannot interpret it.";

/// `looks_like_python_literal_argument`: a list/dict literal packed into `command`.
fn literal_kind(command: &str) -> Option<&'static str> {
    let s = lstrip(command);
    let mut it = s.chars();
    let (a, b) = (it.next()?, it.next()?);
    match (a, b) {
        ('[', '{' | '"' | '\'') => Some("list literal"),
        ('[', '[') => match it.next() {
            Some(c) if c != ' ' && c != '\t' => Some("nested list literal"),
            _ => None,
        },
        ('{', '"' | '\'') => Some("dict literal"),
        _ => None,
    }
}

/// A `TerminalObservation` reply.
fn terminal_obs(
    text: String,
    is_error: bool,
    command: &str,
    exit_code: Option<i64>,
    md: &CmdOutputMetadata,
) -> Observation {
    let fields =
        V1TerminalObservation { is_error, command: command.into(), exit_code, timeout: false, metadata: md.clone() };
    Observation { content: text, extras: Extras::V1Terminal(fields) }
}

fn terminal_error(text: impl Into<String>, command: &str) -> Observation {
    terminal_obs(text.into(), true, command, None, &CmdOutputMetadata::default())
}

/// V0's observation for a session command, in V1's terms.
fn terminal_from_v0(obs: Observation, command: &str) -> Observation {
    match obs.extras {
        Extras::Run { command: run_command, mut metadata, .. } => {
            // Session-state refusals: V0 puts an `ERROR: ` text in a normal command output,
            // V1 returns the bare text as an error.
            if run_command.is_empty() {
                if let Some(rest) = obs.content.strip_prefix("ERROR: ") {
                    if rest.starts_with("No previous running command to ") {
                        // V1 names the (stripped) command it refused; V0's observation has "".
                        return terminal_error(rest, command);
                    }
                }
            }
            metadata.suffix = metadata.suffix.replace(V0_HINT_END, V1_HINT_END);
            // The command was refused because another one is still running: V1 marks it an error.
            let is_error = metadata.suffix.contains("is NOT executed. The previous command is still running");
            let exit_code = Some(metadata.exit_code);
            terminal_obs(v1_truncate(obs.content), is_error, &run_command, exit_code, &metadata)
        }
        Extras::Error { .. } => {
            let text = obs.content.strip_prefix("ERROR: ").unwrap_or(&obs.content).to_string();
            terminal_error(text, command)
        }
        _ => terminal_error(obs.content, command),
    }
}

fn editor_obs(
    text: String,
    is_error: bool,
    command: &str,
    path: Option<&str>,
    prev_exist: bool,
    old: Option<String>,
    new: Option<String>,
) -> Observation {
    let fields = V1FileEditorObservation {
        is_error,
        command: command.into(),
        path: path.map(str::to_string),
        prev_exist,
        old_content: old,
        new_content: new,
    };
    Observation { content: text, extras: Extras::V1FileEditor(fields) }
}

/// V0's error text for an editor error, in V1's words.
fn v1_editor_error_text(content: &str) -> String {
    let text = content.strip_prefix("ERROR:\n").unwrap_or(content);
    // V1 dropped ", starting with `/`" from the relative-path message.
    text.replacen("The path should be an absolute path, starting with `/`.", "The path should be an absolute path.", 1)
}

impl Executor {
    /// Run one `v1_terminal` action in the V0 session.
    pub(crate) async fn v1_terminal(&self, a: &V1TerminalAction) -> Observation {
        if a.reset && a.is_input {
            return terminal_error("Cannot use reset=True with is_input=True", &a.command);
        }
        if !a.is_input {
            if let Some(kind) = literal_kind(&a.command) {
                let head: String = lstrip(&a.command).chars().take(60).collect();
                let text = LITERAL_HINT.replace("{kind}", kind).replace("{head}", &repr_str(&head));
                return terminal_obs(text, true, &a.command, None, &CmdOutputMetadata::default());
            }
        }
        let run = |command: String, is_input: bool, timeout: Option<f64>| CmdRunAction {
            command,
            is_input,
            thought: String::new(),
            // V1: a command with a timeout waits for it (no soft no-change timeout); one without
            // has only the soft timeout.
            blocking: timeout.is_some(),
            is_static: false,
            cwd: None,
            // `hidden` only skips V0's truncation; V1's own is applied instead.
            hidden: true,
            timeout,
        };
        if a.reset {
            self.v1_reset_shell().await;
            if strip(&a.command).is_empty() {
                return terminal_obs(RESET_TEXT.into(), false, "[RESET]", Some(0), &CmdOutputMetadata::default());
            }
            let obs = terminal_from_v0(
                self.shell.execute_with(&run(a.command.clone(), false, a.timeout), SplitRule::V1).await,
                &a.command,
            );
            let Extras::V1Terminal(mut fields) = obs.extras else {
                unreachable!("terminal_from_v0 builds V1 observations")
            };
            fields.command = format!("[RESET] {}", a.command);
            return Observation {
                content: format!("{RESET_TEXT}\n\n{}", obs.content),
                extras: Extras::V1Terminal(fields),
            };
        }
        terminal_from_v0(
            self.shell.execute_with(&run(a.command.clone(), a.is_input, a.timeout), SplitRule::V1).await,
            strip(&a.command),
        )
    }

    /// A fresh shell in the workspace (V1's reset starts the new session in the original
    /// working directory, not the current one).
    async fn v1_reset_shell(&self) {
        self.shell.close().await;
        let cd = CmdRunAction {
            command: format!("cd {}", shell_quote(&self.workspace.display().to_string())),
            is_input: false,
            thought: String::new(),
            blocking: true,
            is_static: false,
            cwd: None,
            hidden: true,
            timeout: Some(30.0),
        };
        let _ = self.shell.execute(&cd).await;
    }

    /// `v1_interrupt`: C-c to the running terminal command (V1's `TerminalExecutor.interrupt()`).
    /// The interrupted call returns its own observation; this one only says whether a command
    /// was running.
    pub(crate) fn v1_interrupt(&self) -> Observation {
        let interrupted = self.shell.interrupt();
        let text = if interrupted { "C-c sent to the running command" } else { "no command was running" };
        Observation { content: text.into(), extras: Extras::V1Interrupt(V1InterruptObservation { interrupted }) }
    }

    /// Run one `v1_file_editor` action with the V0 editor (OH_ACI) under V1's rule: its binary
    /// check and its `cat -n` views (`oh_files::TextRule::V1`).
    pub(crate) async fn v1_file_editor(&self, a: &V1FileEditorAction) -> Observation {
        let command = a.command.clone();
        let error = |content: &str| editor_obs(v1_editor_error_text(content), true, &command, None, true, None, None);
        // V1 reports the path as `str(Path(path))`; `prev_exist` is false only for `create`.
        let v1_path = py_path_str(&a.path);
        if let (Some(range), "view") = (&a.view_range, command.as_str()) {
            // A ranged `view` streams the file (the editor's read path), as V0's agent sends it.
            let read = oh_protocol::FileReadAction {
                path: a.path.clone(),
                start: 0,
                end: -1,
                impl_source: ImplSource::OhAci,
                view_range: Some(range.clone()),
            };
            let obs = self.files.v1_view_range(&read).await;
            return match obs.extras {
                Extras::Error { .. } => error(&obs.content),
                _ if obs.content.starts_with("ERROR:\n") => error(&obs.content),
                _ => editor_obs(obs.content, false, &command, Some(&v1_path), true, None, None),
            };
        }
        let edit = FileEditAction {
            file_text: a.file_text.clone(),
            old_str: a.old_str.clone(),
            new_str: a.new_str.clone(),
            insert_line: a.insert_line.map(Value::from),
            ..FileEditAction::oh_aci(a.path.clone(), a.command.clone())
        };
        let WholeFileEdit { content, old_content, new_content } =
            self.files.edit_whole_file(&edit, TextRule::V1, self.v1_contents_limit).await;
        if content.starts_with("ERROR:\n") {
            return error(&content);
        }
        // V1's FileEditorObservation carries the whole file before and after the edit: `create`
        // the new text only, `view` neither (the editor gives none for it).
        let (prev_exist, old, new) =
            if command == "create" { (false, None, new_content) } else { (true, old_content, new_content) };
        editor_obs(content, false, &command, Some(&v1_path), prev_exist, old, new)
    }
}

/// Python's `str(pathlib.PurePosixPath(p))`: repeated and trailing slashes and `.` components
/// go; a leading `//` (exactly two) stays.
fn py_path_str(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let lead = if p.starts_with("//") && !p.starts_with("///") {
        "//"
    } else if p.starts_with('/') {
        "/"
    } else {
        ""
    };
    let parts: Vec<&str> = p.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    let joined = parts.join("/");
    if lead.is_empty() && joined.is_empty() {
        ".".into()
    } else {
        format!("{lead}{joined}")
    }
}

/// Single-quote a path for bash.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_like_pathlib() {
        assert_eq!(py_path_str("/a/b/"), "/a/b");
        assert_eq!(py_path_str("/a//./b"), "/a/b");
        assert_eq!(py_path_str("//a"), "//a");
        assert_eq!(py_path_str("///a"), "/a");
        assert_eq!(py_path_str("rel/"), "rel");
        assert_eq!(py_path_str("./"), ".");
    }

    #[test]
    fn literal_detection_matches_v1() {
        assert_eq!(literal_kind("[{\"a\": 1}]"), Some("list literal"));
        assert_eq!(literal_kind("[[x]]"), Some("nested list literal"));
        assert_eq!(literal_kind("[[ -f x ]]"), None);
        assert_eq!(literal_kind("{\"k\": 1}"), Some("dict literal"));
        assert_eq!(literal_kind("{ ls; }"), None);
        assert_eq!(literal_kind("["), None);
    }
}

#[cfg(test)]
mod executor_tests {
    use std::sync::Arc;

    use oh_protocol::{ActionEvent, Extras, ObservationEvent};
    use serde_json::{json, Value};

    use crate::{Executor, ExecutorConfig, LocalFs};

    async fn run(ex: &Executor, action: &str, args: Value) -> (String, serde_json::Map<String, Value>) {
        let event = ActionEvent::from_value(json!({"id": 1, "action": action, "args": args})).unwrap();
        let obs = ex.observe(&event.parse().unwrap()).await;
        match obs.extras {
            Extras::V1Terminal(_) | Extras::V1FileEditor(_) => {
                // The fields as the reply carries them.
                let content = obs.content.clone();
                let Value::Object(fields) = ObservationEvent::reply(None, obs).to_value()["extras"].take() else {
                    panic!("extras are an object")
                };
                (content, fields)
            }
            Extras::Edit { old_content, new_content, .. } => {
                let mut f = serde_json::Map::new();
                f.insert("old_content".into(), old_content.map_or(Value::Null, Value::from));
                f.insert("new_content".into(), new_content.map_or(Value::Null, Value::from));
                (obs.content, f)
            }
            Extras::Read { .. } => (obs.content, serde_json::Map::new()),
            other => panic!("unexpected extras {other:?}"),
        }
    }

    async fn executor(dir: &std::path::Path) -> Executor {
        Executor::start(ExecutorConfig::new(dir), Arc::new(LocalFs)).await.unwrap()
    }

    #[tokio::test]
    async fn v1_edits_carry_the_whole_file_before_and_after_and_v0_edits_the_edited_strings() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "one\r\ntwo\nthree\n").unwrap();
        let path = p.to_str().unwrap();
        let ex = executor(dir.path()).await;
        let (_, f) = run(
            &ex,
            "v1_file_editor",
            json!({"command": "str_replace", "path": path, "old_str": "two", "new_str": "2"}),
        )
        .await;
        // V1 reads with universal newlines: the CRLF is gone from the text before, too.
        assert_eq!(f["old_content"], "one\ntwo\nthree\n");
        assert_eq!(f["new_content"], "one\n2\nthree\n");
        let (_, f) =
            run(&ex, "v1_file_editor", json!({"command": "insert", "path": path, "insert_line": 1, "new_str": "1.5"}))
                .await;
        assert_eq!(f["old_content"], "one\n2\nthree\n");
        assert_eq!(f["new_content"], "one\n1.5\n2\nthree\n");
        let (_, f) = run(&ex, "v1_file_editor", json!({"command": "undo_edit", "path": path})).await;
        assert_eq!(f["old_content"], "one\n1.5\n2\nthree\n");
        assert_eq!(f["new_content"], "one\n2\nthree\n");
        let (_, f) = run(&ex, "v1_file_editor", json!({"command": "view", "path": path})).await;
        assert!(f["old_content"].is_null() && f["new_content"].is_null());
        // V0 (OH_ACI through the action server) keeps its edited strings.
        let (_, f) = run(&ex, "edit", json!({"command": "str_replace", "path": path, "old_str": "three", "new_str": "3", "impl_source": "oh_aci"})).await;
        assert_eq!(f["old_content"], "three");
        assert_eq!(f["new_content"], "3");
        ex.shutdown().await;
    }

    #[tokio::test]
    async fn short_non_ascii_text_is_text_for_v1_and_binary_for_v0() {
        let dir = tempfile::tempdir().unwrap();
        // binaryornot calls a lone two-byte character binary (chardet: not confident).
        let p = dir.path().join("u.txt");
        std::fs::write(&p, "é").unwrap();
        let path = p.to_str().unwrap();
        let nul = dir.path().join("n.txt");
        std::fs::write(&nul, b"\xe9\x00\x01").unwrap();
        let ex = executor(dir.path()).await;
        let (text, f) = run(&ex, "v1_file_editor", json!({"command": "view", "path": path})).await;
        assert_eq!(f["is_error"], false, "{text}");
        assert!(text.contains("1\té"), "{text}");
        let (text, f) =
            run(&ex, "v1_file_editor", json!({"command": "view", "path": path, "view_range": [1, 1]})).await;
        assert_eq!(f["is_error"], false, "{text}");
        let (_, f) =
            run(&ex, "v1_file_editor", json!({"command": "str_replace", "path": path, "old_str": "é", "new_str": "è"}))
                .await;
        assert_eq!((&f["old_content"], &f["new_content"]), (&json!("é"), &json!("è")));
        // Control bytes keep a file binary in V1 too, with the editor's message.
        let (text, f) =
            run(&ex, "v1_file_editor", json!({"command": "view", "path": nul.to_str().unwrap(), "view_range": [1, 1]}))
                .await;
        assert_eq!(f["is_error"], true);
        assert!(text.starts_with("File validation failed for "), "{text}");
        // V0 keeps OHEditor's verdict.
        let (text, _) = run(&ex, "edit", json!({"command": "view", "path": path, "impl_source": "oh_aci"})).await;
        assert!(text.contains("File appears to be binary"), "{text}");
        ex.shutdown().await;
    }
    #[tokio::test]
    async fn v1_views_follow_openhands_tools_and_v0_views_keep_oheditor() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("x")).unwrap();
        std::fs::write(dir.path().join("x/child"), "").unwrap();
        std::fs::write(dir.path().join("x.txt"), "").unwrap();
        std::fs::write(dir.path().join("nl.txt"), "\n").unwrap();
        std::fs::write(dir.path().join("ff.txt"), "a\x0cb\nc\n").unwrap();
        let root = dir.path().to_str().unwrap().to_string();
        let ex = executor(dir.path()).await;
        let listing = |text: &str| text.lines().skip(1).map(|l| l.replace(&root, "")).collect::<Vec<_>>();
        // V1: a directory's children right after it; V0 (OHEditor): `find | sort` order.
        let (text, _) = run(&ex, "v1_file_editor", json!({"command": "view", "path": root})).await;
        assert_eq!(listing(&text)[..4], ["/", "/ff.txt", "/nl.txt", "/x/"]);
        assert_eq!(listing(&text)[4..], ["/x/child", "/x.txt"]);
        let (text, _) = run(&ex, "edit", json!({"command": "view", "path": root, "impl_source": "oh_aci"})).await;
        assert_eq!(listing(&text)[4..], ["/x.txt", "/x/child"]);
        // V1: a one-newline file is one empty line; lines split at `\n` only (a form feed stays).
        let nl = format!("{root}/nl.txt");
        let (text, _) = run(&ex, "v1_file_editor", json!({"command": "view", "path": nl})).await;
        assert!(text.ends_with(":\n     1\t\n"), "{text:?}");
        let ff = format!("{root}/ff.txt");
        let (text, _) = run(&ex, "v1_file_editor", json!({"command": "view", "path": ff, "view_range": [1, 2]})).await;
        assert!(text.ends_with(":\n     1\ta\x0cb\n     2\tc\n"), "{text:?}");
        let (text, _) = run(&ex, "read", json!({"path": ff, "view_range": [1, 2], "impl_source": "oh_aci"})).await;
        assert!(text.contains("     1\ta\n     2\tb\n"), "{text:?}");
        ex.shutdown().await;
    }
}

#[cfg(test)]
mod heredoc_tests {
    use std::sync::Arc;

    use oh_protocol::{ActionEvent, Extras, V1TerminalObservation};
    use serde_json::json;

    use crate::{Executor, ExecutorConfig, LocalFs};

    async fn terminal(ex: &Executor, command: &str) -> (String, V1TerminalObservation) {
        let event =
            ActionEvent::from_value(json!({"id": 1, "action": "v1_terminal", "args": {"command": command}})).unwrap();
        let obs = ex.observe(&event.parse().unwrap()).await;
        let Extras::V1Terminal(fields) = obs.extras else { panic!("not a V1 observation") };
        (obs.content, fields)
    }

    #[tokio::test]
    async fn a_heredoc_followed_by_commands_runs_whole_as_in_v1() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ExecutorConfig::new(dir.path());
        config.shell.no_change_timeout_secs = 5;
        let ex = Executor::start(config, Arc::new(LocalFs)).await.unwrap();
        // V0's rule refuses this as two commands; V1 runs both and shows both outputs.
        let (text, f) = terminal(&ex, "cat <<EOF\nx\nEOF\necho after").await;
        assert_eq!(text, "cat <<EOF\nx\nEOF\nx\n\n\necho after\nafter");
        assert_eq!(f.exit_code, Some(0));
        // A line the parser refuses is sent whole: it must not end at the first prompt.
        let (text, f) = terminal(&ex, "cat <<'EOF' > f.sh\necho from-script\nEOF\nbash f.sh; false").await;
        assert!(text.ends_with("bash f.sh; false\nfrom-script"), "{text:?}");
        assert_eq!(f.exit_code, Some(1));
        assert!(!text.contains("__OHB"), "{text:?}");
        // The end mark leaves the session as it was: `$?` is the last statement's.
        let (text, _) = terminal(&ex, "echo $?").await;
        assert_eq!(text, "1");
        // C-c to a heredoc command that timed out: the key flushes the unread boundary line, and
        // the call ends at the prompt (not at the no-change timeout).
        let event = ActionEvent::from_value(
            json!({"id": 2, "action": "v1_terminal", "args": {"command": "cat <<EOF\nx\nEOF\nsleep 30", "timeout": 1}}),
        )
        .unwrap();
        let obs = ex.observe(&event.parse().unwrap()).await;
        assert!(obs.content.contains("x"), "{:?}", obs.content);
        let t0 = std::time::Instant::now();
        let event = ActionEvent::from_value(
            json!({"id": 3, "action": "v1_terminal", "args": {"command": "C-c", "is_input": true}}),
        )
        .unwrap();
        let obs = ex.observe(&event.parse().unwrap()).await;
        let Extras::V1Terminal(fields) = obs.extras else { panic!("not a V1 observation") };
        assert_eq!(fields.exit_code, Some(130), "{:?}", obs.content);
        assert!(t0.elapsed() < std::time::Duration::from_secs(4), "{:?}", t0.elapsed());
        // Statements on separate lines without a heredoc are still refused, as in V1.
        let (text, f) = terminal(&ex, "echo a\necho b").await;
        assert!(f.is_error);
        assert!(text.starts_with("Cannot execute multiple commands at once."), "{text}");
        ex.shutdown().await;
    }
}
