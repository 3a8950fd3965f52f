//! The one entry point from JSON to an action event with its id: [`decode_delegated`] for an
//! `oh_event` payload (execute, refuse or drop) and [`decode_action_json`] for one action as text
//! (the replay binary and the binding's `execute`). Both parse the action once: the typed
//! [`Action`] travels with the event to the executor. Pure and panic-free (fuzzed by
//! `oh-transport/tests/decode_prop.rs` and `fuzz_execute.rs`).

use serde_json::{Map, Value};

use crate::{Action, ActionEvent, Observation, ObservationEvent};

/// A delegated action ready to run: its id, the raw event (kept for the reply's
/// `tool_call_metadata` and for observers) and its typed form.
#[derive(Debug, Clone, PartialEq)]
pub struct Delegated {
    pub id: i64,
    pub event: ActionEvent,
    pub action: Action,
}

/// What to do with one `oh_event` payload.
// One value per received event, matched and moved on at once: the size of `Execute` costs a copy
// per action, and a Box would only add an allocation and a deref to every consumer's pattern.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A delegated action of a kind this executor runs.
    Execute(Delegated),
    /// A payload with an id that is not run: reply with an ErrorObservation (`cause` = id).
    Refuse { id: i64, reason: String },
    /// No usable id: log and drop.
    Drop { reason: String },
}

impl Incoming {
    pub fn id(&self) -> Option<i64> {
        match self {
            Incoming::Execute(d) => Some(d.id),
            Incoming::Refuse { id, .. } => Some(*id),
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

/// The delegated id: an int, an integral float, or a numeric string (Python reads ids through `int()`).
pub fn extract_id(obj: &Map<String, Value>) -> Option<i64> {
    match obj.get("id")? {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.is_finite() && f.abs() < 9.0e15).map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Classify one `oh_event` payload (the first argument of the event). A JSON string holding an
/// object (a sender that double-encodes) is accepted once.
pub fn decode_delegated(payload: &Value) -> Incoming {
    if let Value::String(s) = payload {
        return match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => decode_delegated(&v),
            _ => {
                Incoming::Drop { reason: format!("payload is a string, not a JSON object: {}", excerpt(payload, 120)) }
            }
        };
    }
    let Value::Object(obj) = payload else {
        return Incoming::Drop { reason: format!("payload is not a JSON object: {}", excerpt(payload, 120)) };
    };
    let Some(id) = extract_id(obj) else {
        return Incoming::Drop { reason: format!("payload without a delegated id: {}", excerpt(payload, 200)) };
    };
    let kind = match obj.get("action") {
        Some(Value::String(k)) => k,
        Some(other) => {
            return Incoming::Refuse {
                id,
                reason: format!("Unknown event type: action must be a string, got {}", excerpt(other, 80)),
            }
        }
        None => return Incoming::Refuse { id, reason: format!("Unknown event type: {}", excerpt(payload, 200)) },
    };
    // The kind first: an unsupported action is refused as such, whatever its arguments.
    if !Action::KINDS.contains(&kind.as_str()) {
        return Incoming::Refuse { id, reason: crate::ProtocolError::UnsupportedAction(kind.clone()).to_string() };
    }
    match ActionEvent::from_value(payload.clone()) {
        Ok(mut event) => {
            event.id = Some(id);
            match event.parse() {
                Ok(action) => Incoming::Execute(Delegated { id, event, action }),
                Err(e) => Incoming::Refuse { id, reason: e.to_string() },
            }
        }
        Err(e) => Incoming::Refuse { id, reason: e.to_string() },
    }
}

/// One action decoded from JSON text: the raw event (its `id` is the reply's `cause`, its
/// `tool_call_metadata` goes back with the reply) and its typed form.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedAction {
    pub event: ActionEvent,
    pub action: Action,
}

/// Decode one action given as JSON text (event_to_dict form, with an `id`; no server involved):
/// the typed action to run, or the ErrorObservation reply for text that is not a runnable action
/// (`cause` = its id when one can be read, the event's `tool_call_metadata` kept as the action
/// server keeps it).
// The refusal is the reply itself, built once per bad action and sent as is: boxing it would only
// add an unboxing step to every caller (the replay binary, the binding).
#[allow(clippy::result_large_err)]
pub fn decode_action_json(action_json: &str) -> Result<DecodedAction, ObservationEvent> {
    let value: Value = match serde_json::from_str(action_json) {
        Ok(v) => v,
        Err(e) => return Err(ObservationEvent::reply(None, Observation::error(format!("Invalid action JSON: {e}")))),
    };
    let cause = value.as_object().and_then(extract_id);
    let event = ActionEvent::from_value(value)
        .map_err(|e| ObservationEvent::reply(cause, Observation::error(e.to_string())))?;
    match event.parse() {
        Ok(action) => Ok(DecodedAction { event, action }),
        Err(e) => {
            let mut refusal = ObservationEvent::reply(event.id, Observation::error(e.to_string()));
            refusal.tool_call_metadata = event.tool_call_metadata;
            Err(refusal)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn runnable_action_with_id_executes_with_its_typed_form() {
        let p = json!({"id": 5, "action": "run", "args": {"command": "ls"}, "timeout": 120.0});
        let Incoming::Execute(d) = decode_delegated(&p) else { panic!("not executed") };
        assert_eq!((d.id, d.event.id), (5, Some(5)));
        assert!(d.action.is_command());
    }

    #[test]
    fn string_ids_are_accepted() {
        let p = json!({"id": "7", "action": "read", "args": {"path": "/x"}});
        assert_eq!(decode_delegated(&p).id(), Some(7));
    }

    #[test]
    fn unsupported_kinds_are_refused() {
        let p = json!({"id": 3, "action": "browse", "args": {"url": "x"}});
        assert_eq!(
            decode_delegated(&p),
            Incoming::Refuse { id: 3, reason: "Action browse is not supported in the current runtime.".into() }
        );
        let p = json!({"id": 4, "observation": "run", "content": ""});
        assert!(matches!(decode_delegated(&p), Incoming::Refuse { id: 4, .. }));
    }

    #[test]
    fn no_id_is_dropped() {
        assert!(matches!(
            decode_delegated(&json!({"action": "run", "args": {"command": "ls"}})),
            Incoming::Drop { .. }
        ));
        assert!(matches!(decode_delegated(&json!([1, 2])), Incoming::Drop { .. }));
        assert!(matches!(decode_delegated(&json!("nope")), Incoming::Drop { .. }));
    }

    #[test]
    fn bad_shapes_with_id_are_refused() {
        assert!(matches!(decode_delegated(&json!({"id": 1, "action": 5})), Incoming::Refuse { id: 1, .. }));
        assert!(matches!(
            decode_delegated(&json!({"id": 1, "action": "run", "args": 5})),
            Incoming::Refuse { id: 1, .. }
        ));
        assert!(matches!(
            decode_delegated(&json!({"id": 1, "action": "run", "args": {}})),
            Incoming::Refuse { id: 1, .. }
        ));
    }

    #[test]
    fn action_text_keeps_its_id_or_explains() {
        let ev = decode_action_json(r#"{"id": "9", "action": "run", "args": {"command": "ls"}}"#).unwrap().event;
        assert_eq!(ev.id, Some(9));
        let err = decode_action_json(r#"{"id": 4.0, "observation": "run"}"#).unwrap_err();
        assert_eq!(err.cause, Some(4));
        let err = decode_action_json("{").unwrap_err();
        assert!(err.observation.content.starts_with("Invalid action JSON"), "{:?}", err.observation.content);
    }

    #[test]
    fn action_text_is_typed_once_and_bad_arguments_are_refused_with_the_metadata() {
        let ok = decode_action_json(r#"{"id": 2, "action": "read", "args": {"path": "/x"}}"#).unwrap();
        assert!(matches!(ok.action, Action::Read(_)));
        let meta = r#"{"function_name": "f", "tool_call_id": "t", "model_response": {}, "total_calls_in_response": 1}"#;
        let text = format!(r#"{{"id": 3, "action": "run", "args": {{"command": 5}}, "tool_call_metadata": {meta}}}"#);
        let err = decode_action_json(&text).unwrap_err();
        assert_eq!(err.cause, Some(3));
        assert!(err.observation.content.contains("wrong arguments"), "{:?}", err.observation.content);
        assert_eq!(err.tool_call_metadata, Some(serde_json::from_str::<Value>(meta).unwrap()));
    }
}
