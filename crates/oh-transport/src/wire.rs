//! Reading what rust_socketio hands us: refusal messages and ack payloads. Pure and panic-free
//! (fuzzed by `tests/decode_prop.rs`).

use serde_json::{Map, Value};

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
pub fn ack_object(values: &[Value]) -> Option<&Map<String, Value>> {
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
    fn connect_errors_are_parsed() {
        assert_eq!(
            connect_error_message(
                r#"Received an ConnectError frame: {"message":"oh-executor: invalid session_api_key"}"#
            )
            .as_deref(),
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
