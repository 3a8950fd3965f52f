//! Actions: kept raw on the wire, parsed into typed structs for execution.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::v1::{V1FileEditorAction, V1TerminalAction, V1_FILE_EDITOR, V1_INTERRUPT, V1_TERMINAL};
use crate::ProtocolError;

/// One action event as it travels in `oh_event` (the output of `event_to_dict(action)`).
///
/// Every field except `action` and `args` is optional, because an action that was never added to
/// an event stream (tests, direct `run_action`) has no `id`, `timestamp` or `source`. Unknown
/// top-level keys are kept in `rest` so that a decode/encode round trip is lossless.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionEvent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<i64>,
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_metrics: Option<Value>,
    #[serde(default)]
    pub args: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// Which implementation a read or edit asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImplSource {
    Default,
    OhAci,
}

impl ImplSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ImplSource::Default => "default",
            ImplSource::OhAci => "oh_aci",
        }
    }
}

/// `CmdRunAction` (`"action": "run"`).
#[derive(Debug, Clone, PartialEq)]
pub struct CmdRunAction {
    pub command: String,
    pub is_input: bool,
    pub thought: String,
    pub blocking: bool,
    pub is_static: bool,
    pub cwd: Option<String>,
    pub hidden: bool,
    /// Hard timeout in seconds; `None` (or 0, which Python treats as falsy) means none.
    pub timeout: Option<f64>,
}

impl CmdRunAction {
    /// A plain command, as `CmdRunAction(command=...)` builds it.
    pub fn new(command: impl Into<String>) -> Self {
        CmdRunAction {
            command: command.into(),
            is_input: false,
            thought: String::new(),
            blocking: false,
            is_static: false,
            cwd: None,
            hidden: false,
            timeout: None,
        }
    }
}

/// `FileReadAction` (`"action": "read"`). `start`/`end` are 0-based line indices.
#[derive(Debug, Clone, PartialEq)]
pub struct FileReadAction {
    pub path: String,
    pub start: i64,
    pub end: i64,
    pub impl_source: ImplSource,
    /// Kept as raw JSON: invalid ranges are echoed back in error messages as Python prints them.
    pub view_range: Option<Value>,
}

/// `FileWriteAction` (`"action": "write"`).
#[derive(Debug, Clone, PartialEq)]
pub struct FileWriteAction {
    pub path: String,
    pub content: String,
    pub start: i64,
    pub end: i64,
}

/// `FileEditAction` (`"action": "edit"`), OH_ACI or LLM-based.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEditAction {
    pub path: String,
    pub command: String,
    pub file_text: Option<String>,
    pub old_str: Option<String>,
    pub new_str: Option<String>,
    /// Raw JSON: the server accepts an int or a numeric string and reports anything else.
    pub insert_line: Option<Value>,
    pub content: String,
    pub start: i64,
    pub end: i64,
    pub impl_source: ImplSource,
}

impl FileEditAction {
    /// An OH_ACI editor command on `path` with OpenHands' defaults for every other field
    /// (no arguments yet, `start` 1, `end` -1); set the command's arguments on the result.
    pub fn oh_aci(path: impl Into<String>, command: impl Into<String>) -> Self {
        FileEditAction {
            path: path.into(),
            command: command.into(),
            file_text: None,
            old_str: None,
            new_str: None,
            insert_line: None,
            content: String::new(),
            start: 1,
            end: -1,
            impl_source: ImplSource::OhAci,
        }
    }
}

/// `MCPAction` (`"action": "call_tool_mcp"`): a call of one of the IDE tools the executor's host
/// announced at registration (docs/ide-tools.md). The executor hands it to that host; an executor
/// without IDE tools (headless) answers with an ErrorObservation.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolAction {
    pub name: String,
    pub arguments: Map<String, Value>,
}

/// The `action` value of OpenHands' `MCPAction`.
pub const MCP_TOOL: &str = "call_tool_mcp";

/// A typed action the executor can run.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Run(CmdRunAction),
    Read(FileReadAction),
    Write(FileWriteAction),
    Edit(FileEditAction),
    /// OpenHands V1's `terminal` tool (`v1_terminal`, see v1.rs).
    V1Terminal(V1TerminalAction),
    /// OpenHands V1's `file_editor` tool (`v1_file_editor`, see v1.rs).
    V1FileEditor(V1FileEditorAction),
    /// C-c to the running V1 terminal command (`v1_interrupt`, no arguments).
    V1Interrupt,
    /// OpenHands' `MCPAction` for an IDE tool (`call_tool_mcp`).
    McpTool(McpToolAction),
    /// This project's workspace checkpoints (`checkpoint_*`, see checkpoint.rs).
    Checkpoint(crate::checkpoint::CheckpointAction),
}

impl Action {
    /// The `action` values this executor runs; any other kind is refused as unsupported.
    pub const KINDS: &'static [&'static str] = &[
        "run",
        "read",
        "write",
        "edit",
        V1_TERMINAL,
        V1_FILE_EDITOR,
        V1_INTERRUPT,
        MCP_TOOL,
        "checkpoint_take",
        "checkpoint_list",
        "checkpoint_plan",
        "checkpoint_restore",
        "checkpoint_blob",
    ];

    /// A shell command: commands share one bash session and run one at a time, in arrival
    /// order; file actions may run concurrently.
    pub fn is_command(&self) -> bool {
        matches!(self, Action::Run(_) | Action::V1Terminal(_))
    }
}

/// Arguments every action dataclass accepts besides its own.
const COMMON_ARGS: &[&str] = &["thought", "security_risk", "confirmation_state"];
/// Legacy arguments `event_from_dict` drops silently.
const LEGACY_DROPPED: &[&str] =
    &["timestamp", "keep_prompt", "task_completed", "translated_ipython_code", "is_confirmed"];

struct Args<'a> {
    action: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    fn bad(&self, detail: impl Into<String>) -> ProtocolError {
        ProtocolError::BadArguments { action: self.action.to_string(), detail: detail.into() }
    }

    fn check_known(&self, own: &[&str]) -> Result<(), ProtocolError> {
        for key in self.map.keys() {
            let k = key.as_str();
            if !own.contains(&k) && !COMMON_ARGS.contains(&k) && !LEGACY_DROPPED.contains(&k) {
                return Err(self.bad(format!("unexpected keyword argument '{k}'")));
            }
        }
        Ok(())
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn required_str(&self, key: &str) -> Result<String, ProtocolError> {
        match self.map.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Null) | None => Err(self.bad(format!("missing 1 required positional argument: '{key}'"))),
            Some(other) => Err(self.bad(format!("argument '{key}' must be a string, not {other}"))),
        }
    }

    fn opt_str(&self, key: &str) -> Result<Option<String>, ProtocolError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.bad(format!("argument '{key}' must be a string, not {other}"))),
        }
    }

    fn str_or(&self, key: &str, default: &str) -> Result<String, ProtocolError> {
        Ok(self.opt_str(key)?.unwrap_or_else(|| default.to_string()))
    }

    /// Booleans also arrive as the strings `"true"`/`"false"` from LLM tool calls.
    fn bool_or(&self, key: &str, default: bool) -> Result<bool, ProtocolError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
            Some(other) => Err(self.bad(format!("argument '{key}' must be a boolean, not {other}"))),
        }
    }

    fn int_or(&self, key: &str, default: i64) -> Result<i64, ProtocolError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Number(n)) if n.is_i64() => Ok(n.as_i64().unwrap_or(default)),
            Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => {
                Ok(n.as_f64().unwrap_or(0.0) as i64)
            }
            Some(other) => Err(self.bad(format!("argument '{key}' must be an integer, not {other}"))),
        }
    }

    fn impl_source(&self, default: ImplSource) -> Result<ImplSource, ProtocolError> {
        match self.get("impl_source") {
            None => Ok(default),
            Some(Value::String(s)) if s == "default" => Ok(ImplSource::Default),
            Some(Value::String(s)) if s == "oh_aci" => Ok(ImplSource::OhAci),
            Some(other) => {
                Err(self
                    .bad(format!("'{}' is not a valid FileReadSource", other.as_str().unwrap_or(&other.to_string()))))
            }
        }
    }
}

impl ActionEvent {
    /// Build an event for a typed-free action kind and its raw arguments.
    pub fn new(action: impl Into<String>, args: Map<String, Value>) -> Self {
        ActionEvent {
            id: None,
            timestamp: None,
            source: None,
            message: None,
            cause: None,
            action: action.into(),
            args,
            tool_call_metadata: None,
            llm_metrics: None,
            timeout: None,
            rest: Map::new(),
        }
    }

    /// Decode a JSON value; anything without an `action` key is refused.
    pub fn from_value(value: Value) -> Result<Self, ProtocolError> {
        match &value {
            Value::Object(m) if m.contains_key("action") => {}
            other => {
                let mut shown = other.to_string();
                if shown.len() > 200 {
                    let mut cut = 200;
                    while !shown.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    shown.truncate(cut);
                }
                return Err(ProtocolError::UnknownEventType(shown));
            }
        }
        // `id` and `cause` may arrive as numeric strings ("7"); Python reads them through int().
        let mut value = value;
        if let Value::Object(m) = &mut value {
            for key in ["id", "cause"] {
                if let Some(Value::String(s)) = m.get(key) {
                    match s.trim().parse::<i64>() {
                        Ok(n) => {
                            m.insert(key.into(), Value::from(n));
                        }
                        Err(_) => {
                            return Err(ProtocolError::BadArguments {
                                action: m.get("action").and_then(Value::as_str).unwrap_or("?").to_string(),
                                detail: format!("{key} must be an integer, got {s:?}"),
                            })
                        }
                    }
                }
            }
        }
        serde_json::from_value(value)
            .map_err(|e| ProtocolError::BadArguments { action: "?".into(), detail: e.to_string() })
    }

    /// The typed action, or why it cannot be run here.
    pub fn parse(&self) -> Result<Action, ProtocolError> {
        let a = Args { action: &self.action, map: &self.args };
        match self.action.as_str() {
            "run" => {
                a.check_known(&["command", "is_input", "blocking", "is_static", "cwd", "hidden"])?;
                Ok(Action::Run(CmdRunAction {
                    command: a.required_str("command")?,
                    is_input: a.bool_or("is_input", false)?,
                    thought: a.str_or("thought", "")?,
                    blocking: a.bool_or("blocking", false)?,
                    is_static: a.bool_or("is_static", false)?,
                    cwd: a.opt_str("cwd")?,
                    hidden: a.bool_or("hidden", false)?,
                    timeout: self.timeout,
                }))
            }
            "read" => {
                a.check_known(&["path", "start", "end", "impl_source", "view_range"])?;
                Ok(Action::Read(FileReadAction {
                    path: a.required_str("path")?,
                    start: a.int_or("start", 0)?,
                    end: a.int_or("end", -1)?,
                    impl_source: a.impl_source(ImplSource::Default)?,
                    view_range: a.get("view_range").cloned(),
                }))
            }
            "write" => {
                a.check_known(&["path", "content", "start", "end"])?;
                Ok(Action::Write(FileWriteAction {
                    path: a.required_str("path")?,
                    content: a.required_str("content")?,
                    start: a.int_or("start", 0)?,
                    end: a.int_or("end", -1)?,
                }))
            }
            "edit" => {
                a.check_known(&[
                    "path",
                    "command",
                    "file_text",
                    "old_str",
                    "new_str",
                    "insert_line",
                    "content",
                    "start",
                    "end",
                    "impl_source",
                ])?;
                Ok(Action::Edit(FileEditAction {
                    path: a.required_str("path")?,
                    command: a.str_or("command", "")?,
                    file_text: a.opt_str("file_text")?,
                    old_str: a.opt_str("old_str")?,
                    new_str: a.opt_str("new_str")?,
                    insert_line: a.get("insert_line").cloned(),
                    content: a.str_or("content", "")?,
                    start: a.int_or("start", 1)?,
                    end: a.int_or("end", -1)?,
                    impl_source: a.impl_source(ImplSource::OhAci)?,
                }))
            }
            V1_TERMINAL => Ok(Action::V1Terminal(crate::v1::parse_terminal(&self.args)?)),
            V1_FILE_EDITOR => Ok(Action::V1FileEditor(crate::v1::parse_file_editor(&self.args)?)),
            V1_INTERRUPT => Ok(Action::V1Interrupt),
            MCP_TOOL => {
                a.check_known(&["name", "arguments"])?;
                let arguments = match a.get("arguments") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(m)) => m.clone(),
                    Some(other) => return Err(a.bad(format!("arguments must be an object, got {other}"))),
                };
                Ok(Action::McpTool(McpToolAction { name: a.required_str("name")?, arguments }))
            }
            kind if crate::checkpoint::CHECKPOINT_KINDS.contains(&kind) => {
                Ok(Action::Checkpoint(crate::checkpoint::parse(kind, &self.args)?))
            }
            other => Err(ProtocolError::UnsupportedAction(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mcp_tool_action_parses_and_checks_its_arguments() {
        let ev = ActionEvent::from_value(json!({"id": 3, "action": "call_tool_mcp", "args": {"name": "hover", "arguments": {"path": "a.ts", "line": 2}, "thought": ""}})).unwrap();
        let Action::McpTool(t) = ev.parse().unwrap() else { panic!("not an MCP tool call") };
        assert_eq!((t.name.as_str(), t.arguments.get("line")), ("hover", Some(&json!(2))));
        let ev =
            ActionEvent::from_value(json!({"id": 3, "action": "call_tool_mcp", "args": {"name": "hover"}})).unwrap();
        assert!(matches!(ev.parse(), Ok(Action::McpTool(t)) if t.arguments.is_empty()));
        let ev = ActionEvent::from_value(
            json!({"id": 3, "action": "call_tool_mcp", "args": {"name": "hover", "arguments": [1]}}),
        )
        .unwrap();
        assert!(ev.parse().unwrap_err().to_string().contains("arguments must be an object"));
        let ev =
            ActionEvent::from_value(json!({"id": 3, "action": "call_tool_mcp", "args": {"arguments": {}}})).unwrap();
        assert!(ev.parse().is_err());
        let ev =
            ActionEvent::from_value(json!({"id": 3, "action": "call_tool_mcp", "args": {"name": "x", "url": "y"}}))
                .unwrap();
        assert!(ev.parse().unwrap_err().to_string().contains("unexpected keyword argument 'url'"));
    }

    #[test]
    fn run_action_parses_with_defaults_and_timeout() {
        let ev = ActionEvent::from_value(
            json!({"id": 7, "action": "run", "args": {"command": "ls", "is_input": "true"}, "timeout": 2.5}),
        )
        .unwrap();
        let Action::Run(run) = ev.parse().unwrap() else { panic!("not run") };
        assert_eq!(run.command, "ls");
        assert!(run.is_input);
        assert!(!run.blocking);
        assert_eq!(run.timeout, Some(2.5));
        assert_eq!(ev.id, Some(7));
    }

    #[test]
    fn unknown_argument_is_refused() {
        let ev = ActionEvent::from_value(json!({"action": "run", "args": {"command": "ls", "bogus": 1}})).unwrap();
        let err = ev.parse().unwrap_err();
        assert!(err.to_string().contains("unexpected keyword argument 'bogus'"), "{err}");
    }

    #[test]
    fn missing_command_is_refused() {
        let ev = ActionEvent::from_value(json!({"action": "run", "args": {}})).unwrap();
        assert!(ev.parse().unwrap_err().to_string().contains("'command'"));
    }

    #[test]
    fn edit_refuses_view_range_like_the_dataclass() {
        let ev = ActionEvent::from_value(
            json!({"action": "edit", "args": {"path": "/x", "command": "view", "view_range": [1, 2]}}),
        )
        .unwrap();
        assert!(ev.parse().unwrap_err().to_string().contains("'view_range'"));
    }

    #[test]
    fn non_runnable_kinds_are_unsupported() {
        let ev = ActionEvent::from_value(json!({"action": "browse", "args": {"url": "x"}})).unwrap();
        assert_eq!(ev.parse().unwrap_err(), ProtocolError::UnsupportedAction("browse".into()));
    }

    #[test]
    fn numeric_string_ids_are_read_as_ints() {
        let ev = ActionEvent::from_value(json!({"id": "12", "cause": "3", "action": "read", "args": {"path": "/x"}}))
            .unwrap();
        assert_eq!((ev.id, ev.cause), (Some(12), Some(3)));
    }

    #[test]
    fn observations_are_not_actions() {
        assert!(matches!(
            ActionEvent::from_value(json!({"observation": "run"})),
            Err(ProtocolError::UnknownEventType(_))
        ));
    }

    #[test]
    fn raw_round_trip_keeps_every_key_in_order() {
        let text = r#"{"id":3,"timestamp":"2025-11-21T23:55:38.764416","source":"agent","message":"Running command: ls","action":"run","args":{"command":"ls","is_input":false,"thought":"","blocking":false,"is_static":false,"cwd":null,"hidden":false,"confirmation_state":"confirmed","security_risk":-1},"timeout":120.0}"#;
        let ev: ActionEvent = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&ev).unwrap(), text);
    }
}
