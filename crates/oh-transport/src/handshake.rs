//! The mutual proof of protocol 2 (docs/protocol.md, "Handshake"): the server proves it holds the
//! session key before the executor sends anything derived from it or runs anything, then the
//! executor proves it. The key never crosses the wire; each proof is an HMAC-SHA256 over both
//! nonces, so a recorded proof is worthless on another connection.

use ring::hmac;
use serde_json::Value;

pub(crate) const SERVER_LABEL: &str = "oh-executor/2 server";
pub(crate) const EXECUTOR_LABEL: &str = "oh-executor/2 executor";

/// 32 random bytes, lowercase hex (64 characters).
pub fn new_nonce() -> Result<String, String> {
    let mut b = [0u8; 32];
    getrandom::getrandom(&mut b).map_err(|e| format!("no randomness for the handshake nonce: {e}"))?;
    Ok(hex(&b))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

pub fn is_nonce(s: &str) -> bool {
    s.len() == 64 && unhex(s).is_some()
}

/// `label \n conversation_id \n first \n second`: the nonces are fixed-length hex, so the message
/// reads back one way only.
fn message(label: &str, conversation_id: &str, first: &str, second: &str) -> Vec<u8> {
    [label, conversation_id, first, second].join("\n").into_bytes()
}

/// HMAC-SHA256(key, message), lowercase hex.
pub fn proof(key: &str, label: &str, conversation_id: &str, first: &str, second: &str) -> String {
    let k = hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes());
    hex(hmac::sign(&k, &message(label, conversation_id, first, second)).as_ref())
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
    let msg = message(SERVER_LABEL, conversation_id, client_nonce, server_nonce);
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

    /// The same value as the Python hub's `handshake_proof` (channel.py) computes, so the two
    /// ends agree byte for byte.
    #[test]
    fn proof_matches_the_python_side() {
        let (c, s) = ("a".repeat(64), "b".repeat(64));
        // python: hmac.new(b'k', '\n'.join(('oh-executor/2 server','conv',c,s)).encode(), 'sha256').hexdigest()
        assert_eq!(
            proof("k", SERVER_LABEL, "conv", &c, &s),
            "42926a7c5111e78799e83d14f443c3fc2c989116effaad351b5628d3f1eb0e5c"
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
