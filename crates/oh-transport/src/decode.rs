//! Classifying an incoming `oh_event` payload: execute it, refuse it with an ErrorObservation, or
//! drop it. Pure and panic-free (fuzzed by `tests/decode_prop.rs`).

use oh_protocol::{ActionEvent, Observation, ObservationEvent};
use serde_json::Value;

/// The action kinds this executor runs.
pub const RUNNABLE: &[&str] = &["run", "read", "write", "edit", "v1_terminal", "v1_file_editor"];

/// What to do with one `oh_event` payload.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A delegated action of a kind we run.
    Execute { id: i64, event: ActionEvent },
    /// A payload with an id that we do not run: reply with an ErrorObservation (`cause` = id).
    Refuse { id: i64, reason: String },
    /// No usable id: log and drop.
    Drop { reason: String },
}

impl Incoming {
    pub fn id(&self) -> Option<i64> {
        match self {
            Incoming::Execute { id, .. } | Incoming::Refuse { id, .. } => Some(*id),
            Incoming::Drop { .. } => None,
        }
    }
}

/// A short, char-boundary-safe excerpt of a payload for log lines and messages.
pub fn excerpt(v: &Value, max: usize) -> String {
    let s = v.to_string();
    if s.len() <= max {
        return s;
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &s[..cut])
}

/// The delegated id: an int, or a numeric string (Python reads ids through `int()`).
pub fn extract_id(obj: &serde_json::Map<String, Value>) -> Option<i64> {
    match obj.get("id")? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.is_finite() && f.abs() < 9.0e15).map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Classify one payload (the first argument of an `oh_event`).
pub fn classify(payload: &Value) -> Incoming {
    // A sender that double-encodes gives a JSON string: accept it once.
    if let Value::String(s) = payload {
        return match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => classify(&v),
            _ => Incoming::Drop { reason: format!("payload is a string, not a JSON object: {}", excerpt(payload, 120)) },
        };
    }
    let Value::Object(obj) = payload else {
        return Incoming::Drop { reason: format!("payload is not a JSON object: {}", excerpt(payload, 120)) };
    };
    let Some(id) = extract_id(obj) else {
        return Incoming::Drop { reason: format!("payload without a delegated id: {}", excerpt(payload, 200)) };
    };
    let kind = match obj.get("action") {
        Some(Value::String(k)) => k.clone(),
        Some(other) => {
            return Incoming::Refuse { id, reason: format!("Unknown event type: action must be a string, got {}", excerpt(other, 80)) }
        }
        None => return Incoming::Refuse { id, reason: format!("Unknown event type: {}", excerpt(payload, 200)) },
    };
    if !RUNNABLE.contains(&kind.as_str()) {
        return Incoming::Refuse { id, reason: format!("Action {kind} is not supported in the current runtime.") };
    }
    match ActionEvent::from_value(payload.clone()) {
        Ok(mut event) => {
            event.id = Some(id);
            // OpenHands V1 actions are checked by the executor (oh-executor's v1 module).
            if kind.starts_with("v1_") {
                return Incoming::Execute { id, event };
            }
            // Refuse bad arguments here, whatever the handler: same text as the executor's.
            match event.parse() {
                Ok(_) => Incoming::Execute { id, event },
                Err(e) => Incoming::Refuse { id, reason: e.to_string() },
            }
        }
        Err(e) => Incoming::Refuse { id, reason: e.to_string() },
    }
}

/// Decode the argument of the addon's `Executor.execute(actionJson)` (no server): the event to
/// run, or the ErrorObservation reply for text that is not an action (`cause` = its id when one
/// can be read). Pure and panic-free (fuzzed with `classify` by `tests/decode_prop.rs`).
pub fn decode_direct(action_json: &str) -> Result<ActionEvent, ObservationEvent> {
    let value: Value = match serde_json::from_str(action_json) {
        Ok(v) => v,
        Err(e) => return Err(ObservationEvent::reply(None, Observation::error(format!("Invalid action JSON: {e}")))),
    };
    let cause = value.as_object().and_then(extract_id);
    ActionEvent::from_value(value).map_err(|e| ObservationEvent::reply(cause, Observation::error(e.to_string())))
}

/// Pull the refusal message out of rust_socketio's error callback text
/// (`Received an ConnectError frame: {"message":"..."}`). `None` if it is not a refusal.
pub fn connect_error_message(text: &str) -> Option<String> {
    let rest = text.split_once("ConnectError frame:")?.1.trim();
    Some(match serde_json::from_str::<Value>(rest) {
        Ok(Value::Object(m)) => match m.get("message") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => rest.to_string(),
        },
        Ok(Value::String(s)) => s,
        _ => rest.to_string(),
    })
}

/// The first JSON object of an ack payload (`Text([Array([{...}])])` or `Text([{...}])`).
pub fn ack_object(values: &[Value]) -> Option<&serde_json::Map<String, Value>> {
    let first = values.first()?;
    match first {
        Value::Object(m) => Some(m),
        Value::Array(inner) => inner.first().and_then(Value::as_object),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn runnable_action_with_id_executes() {
        let p = json!({"id": 5, "action": "run", "args": {"command": "ls"}, "timeout": 120.0});
        assert!(matches!(classify(&p), Incoming::Execute { id: 5, .. }));
    }

    #[test]
    fn string_ids_are_accepted() {
        let p = json!({"id": "7", "action": "read", "args": {"path": "/x"}});
        assert_eq!(classify(&p).id(), Some(7));
    }

    #[test]
    fn unsupported_kinds_are_refused() {
        let p = json!({"id": 3, "action": "browse", "args": {"url": "x"}});
        assert_eq!(classify(&p), Incoming::Refuse { id: 3, reason: "Action browse is not supported in the current runtime.".into() });
        let p = json!({"id": 4, "observation": "run", "content": ""});
        assert!(matches!(classify(&p), Incoming::Refuse { id: 4, .. }));
    }

    #[test]
    fn no_id_is_dropped() {
        assert!(matches!(classify(&json!({"action": "run", "args": {"command": "ls"}})), Incoming::Drop { .. }));
        assert!(matches!(classify(&json!([1, 2])), Incoming::Drop { .. }));
        assert!(matches!(classify(&json!("nope")), Incoming::Drop { .. }));
    }

    #[test]
    fn bad_shapes_with_id_are_refused() {
        assert!(matches!(classify(&json!({"id": 1, "action": 5})), Incoming::Refuse { id: 1, .. }));
        assert!(matches!(classify(&json!({"id": 1, "action": "run", "args": 5})), Incoming::Refuse { id: 1, .. }));
    }

    #[test]
    fn connect_errors_are_parsed() {
        assert_eq!(
            connect_error_message(r#"Received an ConnectError frame: {"message":"oh-executor: invalid session_api_key"}"#).as_deref(),
            Some("oh-executor: invalid session_api_key")
        );
        assert_eq!(connect_error_message("EngineIO Error"), None);
    }

    #[test]
    fn ack_shapes() {
        let v = vec![json!([{"ok": true}])];
        assert_eq!(ack_object(&v).unwrap().get("ok"), Some(&json!(true)));
        let v = vec![json!({"ok": false})];
        assert_eq!(ack_object(&v).unwrap().get("ok"), Some(&json!(false)));
    }
}
