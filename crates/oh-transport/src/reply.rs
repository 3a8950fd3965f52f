//! A reply on the wire: serialised once, measured once, and shrunk only when it would not fit
//! through the runtime's Socket.IO server.

use std::sync::Arc;

use oh_protocol::ObservationEvent;
use serde_json::Value;

/// The JSON text sent for the reply to delegated action `id`: `cause` is that id, and `id`,
/// `timestamp` and `source` are left out (the runtime's event stream assigns them). Longer than
/// `max` bytes, the reply is shrunk with [`shrink_reply`].
pub fn encode_reply(mut reply: ObservationEvent, id: i64, max: usize) -> Arc<str> {
    reply.id = None;
    reply.timestamp = None;
    reply.source = None;
    reply.cause = Some(id);
    drop_contents_that_cannot_fit(&mut reply, max);
    let json = reply.to_json();
    if sealed_len(&json) <= max {
        return Arc::from(json);
    }
    let mut value = reply.to_value();
    shrink_reply(&mut value, max);
    Arc::from(value.to_string())
}

/// The size of a reply's JSON text once sealed (`session.rs`): it travels as a JSON string, in
/// which every `"` and `\\` of the text takes one byte more (the text has no raw control
/// characters). The envelope's other fields add under 200 bytes, which the server's 4 MiB
/// message limit leaves room for above `max`.
pub fn sealed_len(json: &str) -> usize {
    json.len() + json.bytes().filter(|b| *b == b'"' || *b == b'\\').count()
}

/// A V1 edit whose whole-file `old_content` and `new_content` alone exceed `max` loses both
/// before anything is serialised: `shrink_reply` would drop them anyway, after serialising the
/// whole reply twice and copying it into a `Value` (a 6 MB edit: three passes over 12 MB).
fn drop_contents_that_cannot_fit(reply: &mut ObservationEvent, max: usize) {
    if let oh_protocol::Extras::V1FileEditor(edit) = &mut reply.observation.extras {
        let len = |text: &Option<String>| text.as_deref().map_or(0, str::len);
        if len(&edit.old_content) + len(&edit.new_content) > max {
            edit.old_content = None;
            edit.new_content = None;
            tracing::warn!(max, "reply too large for the socket: dropped old_content/new_content");
        }
    }
}

/// An edit's `old_content`/`new_content` become null (both are optional in the observation).
fn null_edit_contents(extras: &mut serde_json::Map<String, Value>) {
    for key in ["old_content", "new_content"] {
        if extras.get(key).is_some_and(|v| !v.is_null()) {
            extras.insert(key.into(), Value::Null);
        }
    }
}

/// Keep a reply under `max` serialized bytes: first drop an edit's `old_content`/`new_content`
/// (optional in FileEditObservation), then middle-truncate `content` with a note.
pub fn shrink_reply(value: &mut Value, max: usize) {
    let size = |v: &Value| serde_json::to_string(v).map(|s| sealed_len(&s)).unwrap_or(0);
    let total = size(value);
    if total <= max {
        return;
    }
    if let Some(extras) = value.get_mut("extras").and_then(Value::as_object_mut) {
        null_edit_contents(extras);
    }
    let now = size(value);
    if now <= max {
        tracing::warn!(total, "reply too large for the socket: dropped old_content/new_content");
        return;
    }
    let Some(content) = value.get("content").and_then(Value::as_str).map(str::to_string) else { return };
    let excess = now - max;
    let note = format!(
        "\n[... {} bytes of this observation were cut: it was {total} bytes, over the executor's {max}-byte reply limit ...]\n",
        excess + 200
    );
    // JSON escaping can expand text: aim at half the budget the content may still use.
    let keep = content.len().saturating_sub(excess + note.len() + 200) / 2;
    let mut head = keep.min(content.len());
    while !content.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = content.len().saturating_sub(keep).max(head);
    while !content.is_char_boundary(tail) {
        tail += 1;
    }
    let mut cut = String::with_capacity(head + note.len() + content.len() - tail);
    cut.push_str(&content[..head]);
    cut.push_str(&note);
    cut.push_str(&content[tail..]);
    tracing::warn!(total, "reply too large for the socket: content cut");
    if let Some(m) = value.as_object_mut() {
        m.insert("content".into(), Value::String(cut.clone()));
        if m.get("observation").and_then(Value::as_str) == Some("error") {
            m.insert("message".into(), Value::String(cut));
        }
    }
    if size(value) > max {
        // Pathological escaping (e.g. all control characters): halve until it fits.
        let c = value.get("content").and_then(Value::as_str).unwrap_or("").to_string();
        let mut n = c.len() / 2;
        while !c.is_char_boundary(n) {
            n -= 1;
        }
        if let Some(m) = value.as_object_mut() {
            m.insert("content".into(), Value::String(format!("{}{note}", &c[..n])));
        }
        if size(value) > max {
            if let Some(m) = value.as_object_mut() {
                m.insert("content".into(), Value::String(note.trim().to_string()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oh_protocol::Observation;

    #[test]
    fn replies_carry_the_delegated_id_as_cause_and_no_envelope() {
        let mut r = ObservationEvent::reply(Some(99), Observation::error("x"));
        r.id = Some(5);
        r.timestamp = Some("t".into());
        r.source = Some("environment".into());
        let v: Value = serde_json::from_str(&encode_reply(r, 7, 1000)).unwrap();
        assert_eq!(v["cause"], 7);
        assert!(v.get("id").is_none() && v.get("timestamp").is_none() && v.get("source").is_none(), "{v}");
    }

    #[test]
    fn a_v1_edit_over_the_limit_loses_its_whole_file_contents_first() {
        use oh_protocol::{Extras, V1FileEditorObservation};
        let fields = V1FileEditorObservation {
            is_error: false,
            command: "str_replace".into(),
            path: Some("/w/f".into()),
            prev_exist: true,
            old_content: Some("a".repeat(3000)),
            new_content: Some("b".repeat(3000)),
        };
        let obs =
            Observation { content: "The file /w/f has been edited.".into(), extras: Extras::V1FileEditor(fields) };
        let v: Value = serde_json::from_str(&encode_reply(ObservationEvent::reply(Some(1), obs), 1, 2000)).unwrap();
        assert_eq!(v["observation"], "v1_file_editor");
        assert!(v["extras"]["old_content"].is_null() && v["extras"]["new_content"].is_null(), "{v}");
        // The text the LLM sees is whole.
        assert_eq!(v["content"], "The file /w/f has been edited.");
    }

    #[test]
    fn big_replies_are_shrunk_to_the_limit() {
        let r = ObservationEvent::reply(Some(1), Observation::error("y".repeat(10_000)));
        let json = encode_reply(r, 1, 2000);
        assert!(json.len() <= 2000, "{}", json.len());
        assert!(json.contains("bytes of this observation were cut"));
    }
}
