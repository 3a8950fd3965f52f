//! Session binding (protocol 3, docs/protocol.md "Session binding"): after the proofs, a message
//! that was injected, forged, changed, replayed, skipped or reordered ends the session as `EAUTH`
//! and never runs; the server's test peer (support/server.py) sends each the way a party between
//! the two ends could.

mod support;

use std::time::Duration;

use oh_transport::{ErrorCode, Transport, TransportConfig, TransportError};
use serde_json::json;
use support::*;

const T: Duration = Duration::from_secs(10);

fn config(server: &PyServer) -> TransportConfig {
    let mut c = TransportConfig::new(server.url(), "conv1", "/tmp/ws");
    c.session_api_key = Some("test-key".into());
    c.backoff_min = Duration::from_millis(100);
    c.initial_connect_timeout = Duration::from_secs(5);
    c
}

async fn wait_closed(t: &Transport) -> TransportError {
    for _ in 0..100 {
        if let Some(e) = t.close_error() {
            return e;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the session was not closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampering_ends_the_session_as_eauth() {
    init_tracing();
    for (how, says) in [
        ("unsealed", "an unauthenticated oh_event"),
        ("forged", "bad MAC on oh_event"),
        ("changed", "bad MAC on oh_event"),
        ("replay", "replayed oh_event"),
        ("skip", "out of order oh_event"),
        ("swap", "out of order oh_event"),
        ("binary", "an unauthenticated oh_event"),
    ] {
        let Some(mut server) = PyServer::start(&[]) else { return };
        let h = MockHandler::new();
        let t = Transport::connect(config(&server), h.clone(), None).await.expect("connect");
        let (server, t) = tokio::task::spawn_blocking(move || {
            server.expect("registered", T, |_| true);
            // A real action first: the session works, and "replay" has a message to repeat.
            server.send(run_action(1, "echo real"));
            assert_eq!(server.reply(1, T)["content"], "echo real");
            if how == "binary" {
                server.cmd(json!({"cmd": "send_binary"}));
            } else {
                server.cmd(json!({"cmd": "tamper", "how": how, "payload": run_action(2, "echo injected")}));
            }
            (server, t)
        })
        .await
        .unwrap();
        let err = wait_closed(&t).await;
        assert_eq!(err.code(), ErrorCode::Auth, "{how}: {err:?}");
        let text = err.to_string();
        assert!(text.contains(says) && text.contains("was tampered with"), "{how}: {text}");
        assert_eq!(h.count(2), 0, "{how}: the injected action ran");
        assert_eq!(h.count(999_998) + h.count(999_999), 0, "{how}: a tampered message ran");
        // Ended for good: no new registration.
        let server = tokio::task::spawn_blocking(move || {
            let mut server = server;
            assert!(
                server.try_expect("registered", Duration::from_millis(800), |_| true).is_none(),
                "{how}: it came back"
            );
            server
        })
        .await
        .unwrap();
        t.shutdown().await;
        drop(server);
    }
}

/// A reply changed on its way to the server is refused there; the server ends the session and
/// says why (sealed), and the executor reports it as `EAUTH`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_ends_a_session_whose_reply_fails_its_check() {
    init_tracing();
    let Some(mut server) = PyServer::start(&["--break-next-reply"]) else { return };
    let h = MockHandler::new();
    let t = Transport::connect(config(&server), h.clone(), None).await.expect("connect");
    let server = tokio::task::spawn_blocking(move || {
        server.expect("registered", T, |_| true);
        server.send(run_action(1, "echo real"));
        let broken = server.expect("session_broken", T, |_| true);
        assert!(broken["reason"].as_str().unwrap().starts_with("bad MAC on oh_event"), "{broken}");
        server
    })
    .await
    .unwrap();
    let err = wait_closed(&t).await;
    assert_eq!(err.code(), ErrorCode::Auth, "{err:?}");
    assert!(err.to_string().contains("the server ended this session: bad MAC"), "{err}");
    t.shutdown().await;
    drop(server);
}

/// A reconnect handshakes again: new nonces, new keys, sequences from 0; the exactly-once ledger
/// carries on across it (a re-sent action is not run twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_binds_a_fresh_session() {
    init_tracing();
    let Some(mut server) = PyServer::start(&[]) else { return };
    let h = MockHandler::new();
    let t = Transport::connect(config(&server), h.clone(), None).await.expect("connect");
    let server = tokio::task::spawn_blocking(move || {
        server.expect("registered", T, |_| true);
        server.send(run_action(1, "echo one"));
        assert_eq!(server.reply(1, T)["content"], "echo one");
        server.cmd(json!({"cmd": "drop"}));
        server.expect("registered", T, |_| true);
        server.send(run_action(1, "echo one"));
        server.send(run_action(2, "echo two"));
        assert_eq!(server.reply(2, T)["content"], "echo two");
        server
    })
    .await
    .unwrap();
    assert_eq!((h.count(1), h.count(2)), (1, 1));
    assert!(t.close_error().is_none());
    t.shutdown().await;
    drop(server);
}
