//! Session binding of protocol 3 (docs/protocol.md, "Session binding"): after the mutual proof,
//! every message in both directions travels sealed, `{"seq", "body", "mac"}`, where `body` is the
//! payload's JSON text and `mac` = HMAC(direction key, direction | seq | event | body). Each
//! direction has its own key, derived from the proven key, both nonces and the conversation, so
//! a connection's keys are new every time; each direction counts its messages from 0, and a
//! receiver takes exactly the next one. Whoever sits between the two ends can forward, but not
//! inject, change, replay, reorder or drop a message without the session ending.

use ring::hmac;
use serde_json::{json, Value};

use crate::handshake::{hex, unhex};

pub(crate) const SESSION_KEY_LABEL: &str = "oh-executor/3 session key";
/// The direction of the server's messages.
pub const TO_EXECUTOR: &str = "server->executor";
/// The direction of the executor's messages.
pub const TO_SERVER: &str = "executor->server";

/// One direction's key: HMAC(proven key, label | direction | conversation | client nonce |
/// server nonce), used as an HMAC key in turn.
fn direction_key(
    key: &str,
    direction: &str,
    conversation_id: &str,
    client_nonce: &str,
    server_nonce: &str,
) -> hmac::Key {
    let k = hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes());
    let msg = [SESSION_KEY_LABEL, direction, conversation_id, client_nonce, server_nonce].join("\n");
    hmac::Key::new(hmac::HMAC_SHA256, hmac::sign(&k, msg.as_bytes()).as_ref())
}

fn mac_message(direction: &str, seq: u64, event: &str, body: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(direction.len() + event.len() + body.len() + 24);
    m.extend_from_slice(direction.as_bytes());
    m.push(b'\n');
    m.extend_from_slice(seq.to_string().as_bytes());
    m.push(b'\n');
    m.extend_from_slice(event.as_bytes());
    m.push(b'\n');
    m.extend_from_slice(body.as_bytes());
    m
}

/// The executor's side of one proven connection: seals what it sends, opens what it receives.
pub struct SessionBinding {
    send_key: hmac::Key,
    recv_key: hmac::Key,
    send_seq: u64,
    recv_seq: u64,
}

impl SessionBinding {
    /// The executor's binding, from the key both sides proved and the handshake's nonces.
    pub fn executor(key: &str, conversation_id: &str, client_nonce: &str, server_nonce: &str) -> Self {
        SessionBinding {
            send_key: direction_key(key, TO_SERVER, conversation_id, client_nonce, server_nonce),
            recv_key: direction_key(key, TO_EXECUTOR, conversation_id, client_nonce, server_nonce),
            send_seq: 0,
            recv_seq: 0,
        }
    }

    /// The envelope of a payload given as JSON text: the MAC covers that text itself, so the
    /// two ends need no common canonical form of the JSON.
    pub fn seal(&mut self, event: &str, body: &str) -> Value {
        let seq = self.send_seq;
        self.send_seq += 1;
        let mac = hmac::sign(&self.send_key, &mac_message(TO_SERVER, seq, event, body));
        json!({"seq": seq, "body": body, "mac": hex(mac.as_ref())})
    }

    /// The payload of a received envelope, or what was wrong with it (the session must end).
    pub fn open(&mut self, event: &str, envelope: &Value) -> Result<Value, String> {
        let Some(body) = envelope.get("body").and_then(Value::as_str) else {
            return Err(format!(
                "an unauthenticated {event} (no sealed envelope) arrived in a proven session: injected by a party between the two ends"
            ));
        };
        let seq = envelope.get("seq").and_then(Value::as_u64);
        let tag = envelope.get("mac").and_then(Value::as_str).filter(|m| m.len() == 64).and_then(unhex);
        let (Some(seq), Some(tag)) = (seq, tag) else {
            return Err(format!("a {event} with a malformed seq or MAC arrived: tampered with"));
        };
        if hmac::verify(&self.recv_key, &mac_message(TO_EXECUTOR, seq, event, body), &tag).is_err() {
            return Err(format!(
                "bad MAC on {event} seq {seq}: the message was forged or changed on its way (not made with this session's key)"
            ));
        }
        if seq < self.recv_seq {
            return Err(format!("replayed {event}: seq {seq} was already received (next expected {})", self.recv_seq));
        }
        if seq > self.recv_seq {
            return Err(format!(
                "out of order {event}: seq {seq} arrived while {} was expected ({} message(s) missing: dropped or held back)",
                self.recv_seq,
                seq - self.recv_seq
            ));
        }
        self.recv_seq += 1;
        // Authentic but unreadable (nested deeper than serde_json's limit): what the server sent,
        // so not an attack; the payload is dropped like any other that cannot be decoded.
        Ok(serde_json::from_str(body).unwrap_or_else(|e| {
            tracing::warn!("the body of {event} seq {seq} could not be decoded: {e}");
            Value::Null
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server-side binding, written here from the same rule, to exercise `open`.
    fn server_seal(key: &str, seq: u64, event: &str, body: &str) -> Value {
        let k = direction_key(key, TO_EXECUTOR, "c", &"a".repeat(64), &"b".repeat(64));
        json!({"seq": seq, "body": body, "mac": hex(hmac::sign(&k, &mac_message(TO_EXECUTOR, seq, event, body)).as_ref())})
    }

    fn binding(key: &str) -> SessionBinding {
        SessionBinding::executor(key, "c", &"a".repeat(64), &"b".repeat(64))
    }

    /// The same bytes as protocol.py's `message_mac(session_key(...))` (pinned there too).
    #[test]
    fn macs_match_the_python_side() {
        let mut b = binding("k");
        let sealed = b.seal("oh_event", "{\"cause\":1}");
        // python: protocol.message_mac(protocol.session_key('k', 'executor->server', 'c', 'a'*64, 'b'*64),
        //                              'executor->server', 0, 'oh_event', '{"cause":1}')
        assert_eq!(sealed["mac"], "ce555b78d4e87b6bbeece38351eaded42fa7350be174017e112989c87e3b7877");
    }

    #[test]
    fn open_takes_exactly_the_next_message_made_with_the_key() {
        let mut b = binding("k");
        assert_eq!(b.open("oh_event", &server_seal("k", 0, "oh_event", "{\"id\":1}")).unwrap(), json!({"id": 1}));
        let err = |b: &mut SessionBinding, v: Value| b.open("oh_event", &v).unwrap_err();
        assert!(err(&mut b, json!({"id": 2})).contains("unauthenticated"));
        assert!(err(&mut b, server_seal("other", 1, "oh_event", "{}")).starts_with("bad MAC"));
        assert!(
            err(&mut b, server_seal("k", 1, "oh_executor_cancel", "{}")).starts_with("bad MAC"),
            "bound to the event"
        );
        let mut forged = server_seal("k", 1, "oh_event", "{\"id\":2}");
        forged["body"] = json!("{\"id\":3}");
        assert!(err(&mut b, forged).starts_with("bad MAC"));
        assert!(err(&mut b, server_seal("k", 0, "oh_event", "{\"id\":1}")).starts_with("replayed"));
        assert!(err(&mut b, server_seal("k", 2, "oh_event", "{}")).starts_with("out of order"));
        assert!(b.open("oh_event", &server_seal("k", 1, "oh_event", "{}")).is_ok());
    }

    #[test]
    fn each_connection_has_its_own_keys() {
        let mut other = SessionBinding::executor("k", "c", &"a".repeat(64), &"c".repeat(64));
        assert!(other.open("oh_event", &server_seal("k", 0, "oh_event", "{}")).unwrap_err().starts_with("bad MAC"));
    }
}
