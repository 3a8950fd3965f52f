//! Reading what rust_socketio hands us: ack payloads (refusals: `refusal.rs`). Pure and panic-free
//! (fuzzed by `tests/decode_prop.rs`).

use serde_json::{Map, Value};

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
    fn ack_shapes() {
        let v = vec![json!([{"ok": true}])];
        assert_eq!(ack_object(&v).unwrap().get("ok"), Some(&json!(true)));
        let v = vec![json!({"ok": false})];
        assert_eq!(ack_object(&v).unwrap().get("ok"), Some(&json!(false)));
    }
}
