//! Observations: typed, serialised in the reference's key order with derived `message`/`success`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::v1::{V1FileEditorObservation, V1InterruptObservation, V1TerminalObservation};
use crate::{ImplSource, ProtocolError};

/// `MAX_CMD_OUTPUT_SIZE` of `CmdOutputObservation`.
pub const MAX_CMD_OUTPUT_SIZE: usize = 30_000;
const TRUNCATION_MARK: &str = "\n[... Observation truncated due to length ...]\n";

/// `CmdOutputMetadata`: what the PS1 prompt reports, plus the prefix/suffix the session adds.
/// Field order is the wire order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdOutputMetadata {
    #[serde(default = "minus_one")]
    pub exit_code: i64,
    #[serde(default = "minus_one")]
    pub pid: i64,
    #[serde(default)]
    pub username: Option<String>,
    #[serde(default)]
    pub hostname: Option<String>,
    #[serde(default)]
    pub working_dir: Option<String>,
    #[serde(default)]
    pub py_interpreter_path: Option<String>,
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub suffix: String,
}

fn minus_one() -> i64 {
    -1
}

impl Default for CmdOutputMetadata {
    fn default() -> Self {
        CmdOutputMetadata {
            exit_code: -1,
            pid: -1,
            username: None,
            hostname: None,
            working_dir: None,
            py_interpreter_path: None,
            prefix: String::new(),
            suffix: String::new(),
        }
    }
}

/// The observation-specific part of an observation (its `extras`, plus which class it is).
#[derive(Debug, Clone, PartialEq)]
pub enum Extras {
    Run {
        command: String,
        metadata: CmdOutputMetadata,
        hidden: bool,
    },
    Read {
        path: String,
        impl_source: ImplSource,
    },
    Write {
        path: String,
    },
    Edit {
        path: String,
        prev_exist: bool,
        old_content: Option<String>,
        new_content: Option<String>,
        impl_source: ImplSource,
        diff: Option<String>,
    },
    Error {
        error_id: String,
    },
    /// OpenHands V1's `TerminalObservation` (`v1_terminal`; the types are in `v1.rs`, beside the
    /// V1 actions).
    V1Terminal(V1TerminalObservation),
    /// OpenHands V1's `FileEditorObservation` (`v1_file_editor`).
    V1FileEditor(V1FileEditorObservation),
    /// The answer to `v1_interrupt`.
    V1Interrupt(V1InterruptObservation),
    /// OpenHands' `MCPObservation` (`mcp`): `content` is the tool's MCP `CallToolResult` as JSON.
    Mcp {
        name: String,
        arguments: Map<String, Value>,
    },
    /// The answer to a `checkpoint_*` action (`checkpoint`): `op` is `take`, `list`, ...,
    /// `result` its JSON result (docs/checkpoints.md).
    Checkpoint {
        op: String,
        result: Value,
    },
}

/// An observation without its event envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub content: String,
    pub extras: Extras,
}

/// Middle-truncate command output the way `CmdOutputObservation.__init__` does
/// (code points, not bytes): first 15,000 + marker + last 15,000.
pub fn truncate_cmd_output(content: String) -> String {
    let count = content.chars().count();
    if count <= MAX_CMD_OUTPUT_SIZE {
        return content;
    }
    let half = MAX_CMD_OUTPUT_SIZE / 2;
    let head_end = content.char_indices().nth(half).map(|(i, _)| i).unwrap_or(content.len());
    let tail_start = content.char_indices().nth(count - half).map(|(i, _)| i).unwrap_or(content.len());
    let mut out = String::with_capacity(head_end + TRUNCATION_MARK.len() + content.len() - tail_start);
    out.push_str(&content[..head_end]);
    out.push_str(TRUNCATION_MARK);
    out.push_str(&content[tail_start..]);
    out
}

impl Observation {
    /// `CmdOutputObservation(content, command, metadata, hidden)`; truncates unless hidden.
    pub fn cmd_output(
        content: impl Into<String>,
        command: impl Into<String>,
        metadata: CmdOutputMetadata,
        hidden: bool,
    ) -> Self {
        let content = content.into();
        let content = if hidden { content } else { truncate_cmd_output(content) };
        Observation { content, extras: Extras::Run { command: command.into(), metadata, hidden } }
    }

    /// `ErrorObservation(content)` with the default empty `error_id`.
    pub fn error(content: impl Into<String>) -> Self {
        Observation { content: content.into(), extras: Extras::Error { error_id: String::new() } }
    }

    /// `ErrorObservation(content, error_id=...)`.
    pub fn error_with_id(content: impl Into<String>, error_id: impl Into<String>) -> Self {
        Observation { content: content.into(), extras: Extras::Error { error_id: error_id.into() } }
    }

    /// The `observation` discriminator string.
    pub fn kind(&self) -> &'static str {
        match self.extras {
            Extras::Run { .. } => "run",
            Extras::Read { .. } => "read",
            Extras::Write { .. } => "write",
            Extras::Edit { .. } => "edit",
            Extras::Error { .. } => "error",
            Extras::V1Terminal(_) => crate::v1::V1_TERMINAL,
            Extras::V1FileEditor(_) => crate::v1::V1_FILE_EDITOR,
            Extras::V1Interrupt(_) => crate::v1::V1_INTERRUPT,
            Extras::Mcp { .. } => "mcp",
            Extras::Checkpoint { .. } => crate::checkpoint::CHECKPOINT_OBSERVATION,
        }
    }

    /// The exit code of a command observation.
    pub fn exit_code(&self) -> Option<i64> {
        match &self.extras {
            Extras::Run { metadata, .. } => Some(metadata.exit_code),
            _ => None,
        }
    }

    /// The computed `message` property of each class.
    pub fn message(&self) -> String {
        match &self.extras {
            Extras::Run { command, metadata, .. } => {
                format!("Command `{command}` executed with exit code {}.", metadata.exit_code)
            }
            Extras::Read { path, .. } => format!("I read the file {path}."),
            Extras::Write { path } => format!("I wrote to the file {path}."),
            Extras::Edit { path, .. } => format!("I edited the file {path}."),
            Extras::Error { .. }
            | Extras::V1Terminal(_)
            | Extras::V1FileEditor(_)
            | Extras::V1Interrupt(_)
            | Extras::Mcp { .. }
            | Extras::Checkpoint { .. } => self.content.clone(),
        }
    }

    /// The text an LLM sees for a command (`CmdOutputObservation.to_agent_observation()`);
    /// for other observations, the content.
    pub fn to_agent_text(&self) -> String {
        match &self.extras {
            Extras::Run { metadata, .. } => {
                let mut s = format!("{}{}{}", metadata.prefix, self.content, metadata.suffix);
                if let Some(wd) = metadata.working_dir.as_deref().filter(|w| !w.is_empty()) {
                    s.push_str(&format!("\n[Current working directory: {wd}]"));
                }
                if let Some(py) = metadata.py_interpreter_path.as_deref().filter(|p| !p.is_empty()) {
                    s.push_str(&format!("\n[Python interpreter: {py}]"));
                }
                if metadata.exit_code != -1 {
                    s.push_str(&format!("\n[Command finished with exit code {}]", metadata.exit_code));
                }
                s
            }
            _ => self.content.clone(),
        }
    }

    fn extras_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        match &self.extras {
            Extras::Run { command, metadata, hidden } => {
                m.insert("command".into(), command.clone().into());
                m.insert("metadata".into(), serde_json::to_value(metadata).expect("metadata serialises"));
                m.insert("hidden".into(), (*hidden).into());
            }
            Extras::Read { path, impl_source } => {
                m.insert("path".into(), path.clone().into());
                m.insert("impl_source".into(), impl_source.as_str().into());
            }
            Extras::Write { path } => {
                m.insert("path".into(), path.clone().into());
            }
            Extras::Edit { path, prev_exist, old_content, new_content, impl_source, diff } => {
                m.insert("path".into(), path.clone().into());
                m.insert("prev_exist".into(), (*prev_exist).into());
                m.insert("old_content".into(), old_content.clone().into());
                m.insert("new_content".into(), new_content.clone().into());
                m.insert("impl_source".into(), impl_source.as_str().into());
                m.insert("diff".into(), diff.clone().into());
                m.insert("_diff_cache".into(), Value::Null);
            }
            Extras::Error { error_id } => {
                m.insert("error_id".into(), error_id.clone().into());
            }
            Extras::V1Terminal(o) => m.extend(fields_of(o)),
            Extras::V1FileEditor(o) => m.extend(fields_of(o)),
            Extras::V1Interrupt(o) => m.extend(fields_of(o)),
            Extras::Mcp { name, arguments } => {
                m.insert("name".into(), name.clone().into());
                m.insert("arguments".into(), Value::Object(arguments.clone()));
            }
            Extras::Checkpoint { op, result } => {
                m.insert("op".into(), op.clone().into());
                m.insert("result".into(), result.clone());
            }
        }
        m
    }

    /// Decode the `observation`/`content`/`extras` part of an observation dict.
    /// Missing extras take the dataclass defaults; `message` and `success` are ignored (derived).
    pub fn from_value(v: &Value) -> Result<Self, ProtocolError> {
        let obj = v.as_object().ok_or_else(|| ProtocolError::UnknownEventType(v.to_string()))?;
        let kind = obj
            .get("observation")
            .and_then(Value::as_str)
            .ok_or_else(|| ProtocolError::UnknownEventType(v.to_string()))?;
        let content = obj.get("content").and_then(Value::as_str).unwrap_or("").to_string();
        let empty = Map::new();
        let ex = obj.get("extras").and_then(Value::as_object).unwrap_or(&empty);
        let s = |k: &str| ex.get(k).and_then(Value::as_str).map(str::to_string);
        let b = |k: &str| ex.get(k).and_then(Value::as_bool).unwrap_or(false);
        let src = |k: &str, d: ImplSource| match ex.get(k).and_then(Value::as_str) {
            Some("oh_aci") => ImplSource::OhAci,
            Some("default") => ImplSource::Default,
            _ => d,
        };
        let extras = match kind {
            "run" => {
                let mut metadata: CmdOutputMetadata = match ex.get("metadata") {
                    Some(m @ Value::Object(_)) => serde_json::from_value(m.clone())
                        .map_err(|e| ProtocolError::BadArguments { action: "run".into(), detail: e.to_string() })?,
                    _ => CmdOutputMetadata::default(),
                };
                // Legacy top-level extras.
                if let Some(code) = ex.get("exit_code").and_then(Value::as_i64) {
                    metadata.exit_code = code;
                }
                if let Some(pid) = ex.get("command_id").and_then(Value::as_i64) {
                    metadata.pid = pid;
                }
                // Built directly (not via cmd_output): the content was already truncated by the sender.
                return Ok(Observation {
                    content,
                    extras: Extras::Run { command: s("command").unwrap_or_default(), metadata, hidden: b("hidden") },
                });
            }
            "read" => Extras::Read {
                path: s("path").unwrap_or_default(),
                impl_source: src("impl_source", ImplSource::Default),
            },
            "write" => Extras::Write { path: s("path").unwrap_or_default() },
            "edit" => Extras::Edit {
                path: s("path").unwrap_or_default(),
                prev_exist: b("prev_exist"),
                old_content: s("old_content"),
                new_content: s("new_content"),
                impl_source: src("impl_source", ImplSource::Default),
                diff: s("diff"),
            },
            "error" => Extras::Error { error_id: s("error_id").unwrap_or_default() },
            crate::v1::V1_TERMINAL => Extras::V1Terminal(typed_extras(kind, ex)?),
            crate::v1::V1_FILE_EDITOR => Extras::V1FileEditor(typed_extras(kind, ex)?),
            crate::v1::V1_INTERRUPT => Extras::V1Interrupt(typed_extras(kind, ex)?),
            "mcp" => Extras::Mcp {
                name: s("name").unwrap_or_default(),
                arguments: ex.get("arguments").and_then(Value::as_object).cloned().unwrap_or_default(),
            },
            "checkpoint" => Extras::Checkpoint {
                op: s("op").unwrap_or_default(),
                result: ex.get("result").cloned().unwrap_or(Value::Null),
            },
            other => return Err(ProtocolError::UnknownEventType(format!("observation {other}"))),
        };
        Ok(Observation { content, extras })
    }
}

/// The fields of a typed observation struct, in its declaration (= wire) order.
fn fields_of<T: Serialize>(o: &T) -> Map<String, Value> {
    match serde_json::to_value(o).expect("observation fields serialise") {
        Value::Object(m) => m,
        other => unreachable!("a struct serialises to an object, not {other}"),
    }
}

/// A typed observation struct from an `extras` object (missing fields take their defaults).
fn typed_extras<T: serde::de::DeserializeOwned>(kind: &str, ex: &Map<String, Value>) -> Result<T, ProtocolError> {
    serde_json::from_value(Value::Object(ex.clone()))
        .map_err(|e| ProtocolError::BadArguments { action: kind.into(), detail: e.to_string() })
}

/// An observation with its event envelope, serialised exactly like `event_to_dict`.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservationEvent {
    pub id: Option<i64>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub cause: Option<i64>,
    pub tool_call_metadata: Option<Value>,
    pub observation: Observation,
}

impl ObservationEvent {
    /// A reply to the action with id `cause` (no id, timestamp or source: the backend assigns them).
    pub fn reply(cause: Option<i64>, observation: Observation) -> Self {
        ObservationEvent { id: None, timestamp: None, source: None, cause, tool_call_metadata: None, observation }
    }

    /// The ordered JSON object.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        if let Some(id) = self.id.filter(|i| *i != -1) {
            m.insert("id".into(), id.into());
        }
        if let Some(ts) = &self.timestamp {
            m.insert("timestamp".into(), ts.clone().into());
        }
        if let Some(src) = &self.source {
            m.insert("source".into(), src.clone().into());
        }
        m.insert("message".into(), self.observation.message().into());
        if let Some(cause) = self.cause {
            m.insert("cause".into(), cause.into());
        }
        m.insert("observation".into(), self.observation.kind().into());
        if let Some(tcm) = &self.tool_call_metadata {
            m.insert("tool_call_metadata".into(), tcm.clone());
        }
        m.insert("content".into(), self.observation.content.clone().into());
        m.insert("extras".into(), Value::Object(self.observation.extras_json()));
        if let Extras::Run { metadata, .. } = &self.observation.extras {
            m.insert("success".into(), (metadata.exit_code == 0).into());
        }
        Value::Object(m)
    }

    /// Compact JSON text (serde_json's encoding; key order as the reference).
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }

    /// Decode an observation dict, envelope included.
    pub fn from_value(v: &Value) -> Result<Self, ProtocolError> {
        let observation = Observation::from_value(v)?;
        let obj = v.as_object().expect("checked by Observation::from_value");
        let int = |k: &str| match obj.get(k) {
            Some(Value::Number(n)) => n.as_i64(),
            Some(Value::String(s)) => s.trim().parse().ok(),
            _ => None,
        };
        Ok(ObservationEvent {
            id: int("id"),
            timestamp: obj.get("timestamp").and_then(Value::as_str).map(str::to_string),
            source: obj.get("source").and_then(Value::as_str).map(str::to_string),
            cause: int("cause"),
            tool_call_metadata: obj.get("tool_call_metadata").filter(|v| !v.is_null()).cloned(),
            observation,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // The `/execute_action` reply for `echo hi` (spec example 1), with a cause added.
    const ECHO_HI: &str = r#"{"message":"Command `echo hi` executed with exit code 0.","cause":4,"observation":"run","content":"hi","extras":{"command":"echo hi","metadata":{"exit_code":0,"pid":-1,"username":"root","hostname":"sandbox","working_dir":"/workspace","py_interpreter_path":"/usr/bin/python","prefix":"","suffix":"\n[The command completed with exit code 0.]"},"hidden":false},"success":true}"#;

    #[test]
    fn run_observation_round_trips_byte_for_byte() {
        let v: Value = serde_json::from_str(ECHO_HI).unwrap();
        let ev = ObservationEvent::from_value(&v).unwrap();
        assert_eq!(ev.to_json(), ECHO_HI);
    }

    #[test]
    fn agent_text_of_a_completed_command() {
        let v: Value = serde_json::from_str(ECHO_HI).unwrap();
        let ev = ObservationEvent::from_value(&v).unwrap();
        assert_eq!(
            ev.observation.to_agent_text(),
            "hi\n[The command completed with exit code 0.]\n[Current working directory: /workspace]\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]"
        );
    }

    #[test]
    fn edit_observation_has_null_diff_cache_and_no_success() {
        let obs = Observation {
            content: "File created successfully at: /w/a".into(),
            extras: Extras::Edit {
                path: "/w/a".into(),
                prev_exist: false,
                old_content: None,
                new_content: None,
                impl_source: ImplSource::OhAci,
                diff: Some("".into()),
            },
        };
        let text = ObservationEvent::reply(Some(1), obs).to_json();
        assert_eq!(
            text,
            r#"{"message":"I edited the file /w/a.","cause":1,"observation":"edit","content":"File created successfully at: /w/a","extras":{"path":"/w/a","prev_exist":false,"old_content":null,"new_content":null,"impl_source":"oh_aci","diff":"","_diff_cache":null}}"#
        );
    }

    #[test]
    fn error_message_equals_content() {
        let text = ObservationEvent::reply(None, Observation::error("boom")).to_json();
        assert_eq!(text, r#"{"message":"boom","observation":"error","content":"boom","extras":{"error_id":""}}"#);
    }

    #[test]
    fn truncation_is_exactly_30047_code_points() {
        let long: String = "é".repeat(40_000);
        let out = truncate_cmd_output(long);
        assert_eq!(out.chars().count(), 30_047);
        assert!(out.contains(TRUNCATION_MARK));
    }

    #[test]
    fn hidden_output_is_not_truncated() {
        let obs = Observation::cmd_output("x".repeat(40_000), "c", CmdOutputMetadata::default(), true);
        assert_eq!(obs.content.len(), 40_000);
    }

    proptest! {
        #[test]
        fn truncation_keeps_head_and_tail(s in "\\PC{0,40}", n in 29_990usize..30_020) {
            let text: String = s.chars().cycle().take(n).collect();
            let count = text.chars().count();
            let out = truncate_cmd_output(text.clone());
            if count <= MAX_CMD_OUTPUT_SIZE {
                prop_assert_eq!(out, text);
            } else {
                let head: String = text.chars().take(15_000).collect();
                let tail: String = text.chars().skip(count - 15_000).collect();
                prop_assert_eq!(out, format!("{head}{TRUNCATION_MARK}{tail}"));
            }
        }

        #[test]
        fn decoding_arbitrary_json_never_panics(s in "\\PC{0,200}") {
            if let Ok(v) = serde_json::from_str::<Value>(&s) {
                let _ = ObservationEvent::from_value(&v);
                let _ = crate::ActionEvent::from_value(v).map(|a| a.parse());
            }
        }
    }
}
