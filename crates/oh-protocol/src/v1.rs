//! The OpenHands V1 actions and observations (software-agent-sdk `openhands-tools` 1.58.0): the
//! `terminal` and `file_editor` tools' arguments, as `v1_terminal` / `v1_file_editor` action events
//! carry them, and the fields of their observations, as the replies carry them (docs/protocol.md,
//! "OpenHands V1 actions"). The actions are parsed here, with the V0 kinds, so that the one decode
//! entry point refuses bad arguments for every kind; `oh-executor`'s v1 module runs them and
//! builds the observations.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{CmdOutputMetadata, ProtocolError, MAX_CMD_OUTPUT_SIZE};

/// The wire kinds of the V1 actions.
pub const V1_TERMINAL: &str = "v1_terminal";
pub const V1_FILE_EDITOR: &str = "v1_file_editor";
/// Interrupt the running `v1_terminal` call (V1's `TerminalExecutor.interrupt()`, C-c): not a
/// command, so it runs beside the command it interrupts.
pub const V1_INTERRUPT: &str = "v1_interrupt";

/// V1's `TerminalAction` (`"action": "v1_terminal"`).
#[derive(Debug, Clone, PartialEq)]
pub struct V1TerminalAction {
    pub command: String,
    pub is_input: bool,
    /// Hard timeout in seconds (`None`: only the soft no-change timeout applies).
    pub timeout: Option<f64>,
    pub reset: bool,
}

/// V1's `FileEditorAction` (`"action": "v1_file_editor"`).
#[derive(Debug, Clone, PartialEq)]
pub struct V1FileEditorAction {
    /// One of `view`, `create`, `str_replace`, `insert`, `undo_edit`.
    pub command: String,
    pub path: String,
    pub file_text: Option<String>,
    pub old_str: Option<String>,
    pub new_str: Option<String>,
    pub insert_line: Option<i64>,
    /// Raw JSON: invalid ranges are echoed back in the editor's messages as Python prints them.
    pub view_range: Option<Value>,
}

/// V1's `TerminalObservation` (`"observation": "v1_terminal"`): its fields, in wire order (the
/// text is the observation's `content`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct V1TerminalObservation {
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub command: String,
    /// `None` when the command did not finish (or never ran).
    #[serde(default)]
    pub exit_code: Option<i64>,
    /// Always false: V1 1.58 marks neither of its timeouts here (its metadata's suffix says so).
    #[serde(default)]
    pub timeout: bool,
    /// V1's `CmdOutputMetadata` has V0's fields in V0's order.
    #[serde(default)]
    pub metadata: CmdOutputMetadata,
}

/// V1's `FileEditorObservation` (`"observation": "v1_file_editor"`), in wire order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct V1FileEditorObservation {
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub command: String,
    /// `str(Path(path))`; `None` on an error.
    #[serde(default)]
    pub path: Option<String>,
    /// False only after `create`.
    #[serde(default = "yes")]
    pub prev_exist: bool,
    /// The whole file before and after an edit (`None` for `view`, before a `create`, and when a
    /// transport leaves them out because they would not fit).
    #[serde(default)]
    pub old_content: Option<String>,
    #[serde(default)]
    pub new_content: Option<String>,
}

fn yes() -> bool {
    true
}

/// The answer to `v1_interrupt` (`"observation": "v1_interrupt"`): whether a command was running
/// (the interrupted call answers with its own observation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct V1InterruptObservation {
    #[serde(default)]
    pub interrupted: bool,
}

/// V1's `DEFAULT_TRUNCATE_NOTICE` (`openhands.sdk.utils.truncate`).
pub const V1_TRUNCATE_NOTICE: &str =
    "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>";

/// V1's `maybe_truncate(content, truncate_after=MAX_CMD_OUTPUT_SIZE)` with its default notice
/// (code points; V1's limit is V0's, [`MAX_CMD_OUTPUT_SIZE`]).
pub fn v1_truncate(content: String) -> String {
    let count = content.chars().count();
    if count <= MAX_CMD_OUTPUT_SIZE {
        return content;
    }
    let notice_len = V1_TRUNCATE_NOTICE.chars().count();
    let available = MAX_CMD_OUTPUT_SIZE - notice_len;
    let head = available / 2 + available % 2;
    let tail = MAX_CMD_OUTPUT_SIZE - notice_len - head;
    let head_end = content.char_indices().nth(head).map(|(i, _)| i).unwrap_or(content.len());
    let tail_start = content.char_indices().nth(count - tail).map(|(i, _)| i).unwrap_or(content.len());
    format!("{}{}{}", &content[..head_end], V1_TRUNCATE_NOTICE, &content[tail_start..])
}

/// The editor commands V1's `file_editor` accepts.
pub const V1_EDITOR_COMMANDS: &[&str] = &["view", "create", "str_replace", "insert", "undo_edit"];

fn bad(action: &str, detail: impl Into<String>) -> ProtocolError {
    ProtocolError::BadArguments { action: action.to_string(), detail: detail.into() }
}

/// Arguments V1 sends besides the tool's own (`summary`, `security_risk`) are accepted and ignored.
fn check_known(action: &str, args: &Map<String, Value>, own: &[&str]) -> Result<(), ProtocolError> {
    for k in args.keys() {
        if !own.contains(&k.as_str()) && !matches!(k.as_str(), "summary" | "security_risk") {
            return Err(bad(action, format!("unexpected keyword argument '{k}'")));
        }
    }
    Ok(())
}

fn opt_str(action: &str, args: &Map<String, Value>, key: &str) -> Result<Option<String>, ProtocolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(bad(action, format!("argument '{key}' must be a string, not {v}"))),
    }
}

fn flag(action: &str, args: &Map<String, Value>, key: &str) -> Result<bool, ProtocolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(bad(action, format!("argument '{key}' must be a boolean, not {v}"))),
    }
}

/// Parse the arguments of a `v1_terminal` action.
pub fn parse_terminal(args: &Map<String, Value>) -> Result<V1TerminalAction, ProtocolError> {
    let a = V1_TERMINAL;
    check_known(a, args, &["command", "is_input", "timeout", "reset"])?;
    let command = opt_str(a, args, "command")?.ok_or_else(|| bad(a, "missing 1 required argument: 'command'"))?;
    let timeout = match args.get("timeout") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(t) if t >= 0.0 && t.is_finite() => Some(t),
            _ => return Err(bad(a, format!("argument 'timeout' must be a number >= 0, not {v}"))),
        },
    };
    Ok(V1TerminalAction { command, is_input: flag(a, args, "is_input")?, timeout, reset: flag(a, args, "reset")? })
}

/// Parse the arguments of a `v1_file_editor` action.
pub fn parse_file_editor(args: &Map<String, Value>) -> Result<V1FileEditorAction, ProtocolError> {
    let a = V1_FILE_EDITOR;
    check_known(a, args, &["command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range"])?;
    let command = opt_str(a, args, "command")?.ok_or_else(|| bad(a, "missing 1 required argument: 'command'"))?;
    if !V1_EDITOR_COMMANDS.contains(&command.as_str()) {
        return Err(bad(a, format!("'command' must be one of {}; got {command:?}", V1_EDITOR_COMMANDS.join(", "))));
    }
    let path = opt_str(a, args, "path")?.ok_or_else(|| bad(a, "missing 1 required argument: 'path'"))?;
    let insert_line = match args.get("insert_line") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.is_i64() => n.as_i64(),
        Some(v) => return Err(bad(a, format!("argument 'insert_line' must be an integer, not {v}"))),
    };
    Ok(V1FileEditorAction {
        command,
        path,
        file_text: opt_str(a, args, "file_text")?,
        old_str: opt_str(a, args, "old_str")?,
        new_str: opt_str(a, args, "new_str")?,
        insert_line,
        view_range: args.get("view_range").filter(|v| !v.is_null()).cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn terminal_arguments() {
        let t = parse_terminal(&args(json!({"command": "ls", "timeout": 3, "summary": "x"}))).unwrap();
        assert_eq!(t, V1TerminalAction { command: "ls".into(), is_input: false, timeout: Some(3.0), reset: false });
        assert!(parse_terminal(&args(json!({"command": "ls", "timeout": -1}))).is_err());
        assert!(parse_terminal(&args(json!({"command": "ls", "bogus": 1})))
            .unwrap_err()
            .to_string()
            .contains("'bogus'"));
        assert!(parse_terminal(&args(json!({"is_input": true}))).unwrap_err().to_string().contains("'command'"));
    }

    #[test]
    fn editor_arguments() {
        let e = parse_file_editor(&args(json!({"command": "view", "path": "/a", "view_range": [1, 2]}))).unwrap();
        assert_eq!(e.view_range, Some(json!([1, 2])));
        assert!(parse_file_editor(&args(json!({"command": "delete", "path": "/a"}))).is_err());
        assert!(parse_file_editor(&args(json!({"command": "insert", "path": "/a", "insert_line": "3"}))).is_err());
        assert!(parse_file_editor(&args(json!({"command": "view"}))).unwrap_err().to_string().contains("'path'"));
    }

    #[test]
    fn truncation_keeps_30000_code_points() {
        let s = "é".repeat(40_000);
        let t = v1_truncate(s);
        assert_eq!(t.chars().count(), MAX_CMD_OUTPUT_SIZE);
        assert!(t.contains(V1_TRUNCATE_NOTICE));
        assert_eq!(v1_truncate("short".into()), "short");
    }

    /// The replies' extras, byte for byte as the untyped maps wrote them before (and as
    /// `v1/tools.py` reads them): the field order is the struct's.
    #[test]
    fn v1_observations_serialise_in_wire_order_and_read_back() {
        use crate::{Extras, Observation, ObservationEvent};
        let terminal = Observation {
            content: "hi".into(),
            extras: Extras::V1Terminal(V1TerminalObservation {
                is_error: false,
                command: "echo hi".into(),
                exit_code: Some(0),
                timeout: false,
                metadata: CmdOutputMetadata::default(),
            }),
        };
        let json = ObservationEvent::reply(Some(3), terminal.clone()).to_json();
        assert_eq!(
            json,
            r#"{"message":"hi","cause":3,"observation":"v1_terminal","content":"hi","extras":{"is_error":false,"command":"echo hi","exit_code":0,"timeout":false,"metadata":{"exit_code":-1,"pid":-1,"username":null,"hostname":null,"working_dir":null,"py_interpreter_path":null,"prefix":"","suffix":""}}}"#
        );
        let editor = Observation {
            content: "created".into(),
            extras: Extras::V1FileEditor(V1FileEditorObservation {
                is_error: false,
                command: "create".into(),
                path: Some("/w/a".into()),
                prev_exist: false,
                old_content: None,
                new_content: Some("x".into()),
            }),
        };
        let json = ObservationEvent::reply(Some(4), editor.clone()).to_json();
        assert_eq!(
            json,
            r#"{"message":"created","cause":4,"observation":"v1_file_editor","content":"created","extras":{"is_error":false,"command":"create","path":"/w/a","prev_exist":false,"old_content":null,"new_content":"x"}}"#
        );
        let interrupt = Observation {
            content: "no".into(),
            extras: Extras::V1Interrupt(V1InterruptObservation { interrupted: false }),
        };
        let json = ObservationEvent::reply(Some(5), interrupt.clone()).to_json();
        assert_eq!(
            json,
            r#"{"message":"no","cause":5,"observation":"v1_interrupt","content":"no","extras":{"interrupted":false}}"#
        );
        for obs in [terminal, editor, interrupt] {
            let back = ObservationEvent::from_value(&ObservationEvent::reply(Some(1), obs.clone()).to_value()).unwrap();
            assert_eq!(back.observation, obs);
        }
    }

    #[test]
    fn the_decode_entry_point_types_v1_actions() {
        use crate::{decode_delegated, Action, Incoming};
        let p = json!({"id": 3, "action": "v1_terminal", "args": {"command": "ls", "is_input": false, "timeout": null, "reset": false}});
        let Incoming::Execute(d) = decode_delegated(&p) else { panic!("not executed") };
        assert!(matches!(d.action, Action::V1Terminal(_)));
        // Queued with `run`: one command at a time, in arrival order.
        assert!(d.action.is_command());
        let p = json!({"id": 4, "action": "v1_file_editor", "args": {"command": "view", "path": "/a"}});
        let Incoming::Execute(d) = decode_delegated(&p) else { panic!("not executed") };
        assert!(matches!(d.action, Action::V1FileEditor(_)) && !d.action.is_command());
        // The interrupt must not queue behind the command it interrupts.
        let p = json!({"id": 6, "action": "v1_interrupt", "args": {}});
        let Incoming::Execute(d) = decode_delegated(&p) else { panic!("not executed") };
        assert!(matches!(d.action, Action::V1Interrupt) && !d.action.is_command());
        let p = json!({"id": 5, "action": "v1_file_editor", "args": {"command": "delete", "path": "/a"}});
        let Incoming::Refuse { id, reason } = decode_delegated(&p) else { panic!("not refused") };
        assert_eq!(id, 5);
        assert!(reason.starts_with("action=v1_file_editor has the wrong arguments"), "{reason}");
    }
}
