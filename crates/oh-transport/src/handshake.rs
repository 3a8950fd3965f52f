//! The mutual proof of protocol 3 (docs/protocol.md, "Handshake"): the server proves it holds the
//! session key before the executor sends anything derived from it or runs anything, then the
//! executor proves it, over the auth it registers with. The key never crosses the wire; each
//! proof is an HMAC-SHA256 over both nonces, so a recorded proof is worthless on another
//! connection. What follows the proofs is bound to them (`session.rs`).

use ring::hmac;
use serde_json::Value;

pub(crate) const SERVER_LABEL: &str = "oh-executor/3 server";
pub(crate) const EXECUTOR_LABEL: &str = "oh-executor/3 executor";

/// 32 random bytes, lowercase hex (64 characters).
pub fn new_nonce() -> Result<String, String> {
    let mut b = [0u8; 32];
    getrandom::getrandom(&mut b).map_err(|e| format!("no randomness for the handshake nonce: {e}"))?;
    Ok(hex(&b))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|x| format!("{x:02x}")).collect()
}

pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

pub fn is_nonce(s: &str) -> bool {
    s.len() == 64 && unhex(s).is_some()
}

/// `label \n conversation_id \n first \n second [\n signed auth]`: the nonces are fixed-length
/// hex and the auth text comes last, so the message reads back one way only.
fn message(label: &str, conversation_id: &str, first: &str, second: &str, signed_auth: Option<&str>) -> Vec<u8> {
    let mut parts = vec![label, conversation_id, first, second];
    parts.extend(signed_auth);
    parts.join("\n").into_bytes()
}

/// HMAC-SHA256(key, message), lowercase hex.
pub fn proof(key: &str, label: &str, conversation_id: &str, first: &str, second: &str) -> String {
    let k = hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes());
    hex(hmac::sign(&k, &message(label, conversation_id, first, second, None)).as_ref())
}

/// The executor's proof: over both nonces (the server's first) and the auth text it registers
/// with, which the server then reads from this signed copy, never from the connect's `auth`.
pub fn executor_proof(
    key: &str,
    conversation_id: &str,
    server_nonce: &str,
    client_nonce: &str,
    signed_auth: &str,
) -> String {
    let k = hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes());
    hex(hmac::sign(&k, &message(EXECUTOR_LABEL, conversation_id, server_nonce, client_nonce, Some(signed_auth)))
        .as_ref())
}

/// Check the server's `oh_executor_challenge`: one of its `server_proofs` must be
/// HMAC(key, server label | conversation | client nonce | server nonce). Every proof is checked
/// in constant time (ring's `verify`) and none is skipped after a match. Returns the server
/// nonce, or why the challenge does not prove anything.
pub fn check_challenge(
    key: &str,
    conversation_id: &str,
    client_nonce: &str,
    challenge: &Value,
) -> Result<String, &'static str> {
    let server_nonce = challenge
        .get("server_nonce")
        .and_then(Value::as_str)
        .filter(|n| is_nonce(n))
        .ok_or("the challenge has no valid server_nonce")?;
    let proofs =
        challenge.get("server_proofs").and_then(Value::as_array).ok_or("the challenge has no server_proofs")?;
    let k = hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes());
    let msg = message(SERVER_LABEL, conversation_id, client_nonce, server_nonce, None);
    let mut matched = false;
    for p in proofs.iter().take(16) {
        if let Some(tag) = p.as_str().and_then(unhex) {
            matched |= hmac::verify(&k, &msg, &tag).is_ok();
        }
    }
    if matched {
        Ok(server_nonce.to_string())
    } else {
        Err("no server proof matches the session key")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The same values as protocol.py's `handshake_proof` computes, so the two ends agree byte
    /// for byte.
    #[test]
    fn proofs_match_the_python_side() {
        let (c, s) = ("a".repeat(64), "b".repeat(64));
        // python: protocol.handshake_proof('k', 'oh-executor/3 server', 'conv', c, s)
        assert_eq!(
            proof("k", SERVER_LABEL, "conv", &c, &s),
            "19b6ee0956a6e93c66026f8bcfaebafb1ac45f0b4fcac40f3e2af02d908ee7b3"
        );
        // python: protocol.handshake_proof('k', 'oh-executor/3 executor', 'conv', s, c, '{"protocol":3}')
        assert_eq!(
            executor_proof("k", "conv", &s, &c, "{\"protocol\":3}"),
            "82c02370a6a3640c9cbd6bfb3dd747eca30919d17f78a2905e66771c8e1e903f"
        );
    }

    #[test]
    fn a_challenge_proves_only_with_the_key() {
        let cn = new_nonce().unwrap();
        let sn = new_nonce().unwrap();
        assert!(is_nonce(&cn) && cn != sn);
        let good = proof("key", SERVER_LABEL, "c1", &cn, &sn);
        let other = proof("other", SERVER_LABEL, "c1", &cn, &sn);
        let ch = json!({"server_nonce": sn, "server_proofs": [other, good]});
        assert_eq!(check_challenge("key", "c1", &cn, &ch).unwrap(), sn);
        assert!(check_challenge("key", "c2", &cn, &ch).is_err(), "bound to the conversation");
        assert!(check_challenge("key", "c1", &sn, &ch).is_err(), "bound to the client nonce");
        let swapped = json!({"server_nonce": sn, "server_proofs": [proof("key", EXECUTOR_LABEL, "c1", &cn, &sn)]});
        assert!(check_challenge("key", "c1", &cn, &swapped).is_err(), "an executor proof is no server proof");
        assert!(check_challenge("key", "c1", &cn, &json!({"server_nonce": "x", "server_proofs": [good]})).is_err());
        assert!(check_challenge("key", "c1", &cn, &json!({})).is_err());
    }
}
