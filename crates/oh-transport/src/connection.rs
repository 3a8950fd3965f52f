//! One Socket.IO connection: connect, check the server's proof of the key and prove ours (the
//! handshake of protocol 3), wait for the welcome, register, then serve (dispatch
//! actions, send replies one at a time until each is acked) in a single event loop until the
//! connection ends. After the proofs every message is sealed (`session.rs`): one that fails
//! its check ends the session (`EAUTH`).

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use rust_socketio::asynchronous::{Client, ClientBuilder, ReconnectSettings};
use rust_socketio::{Event, Payload, TransportType};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::dispatch::Shared;
use crate::handshake::{check_challenge, executor_proof, new_nonce};
use crate::link::{certificate_rejection, Link, LinkFailure};
use crate::refusal::{connect_refusal, Refusal};
use crate::session::SessionBinding;
use crate::{ConnectionState, ErrorCode, TransportError, NAMESPACE, PROTOCOL_VERSION};

/// How a connection ended.
pub(crate) enum Outcome {
    Shutdown,
    Lost { registered: bool, message: String },
    Refused(ErrorCode, String),
    Fatal(TransportError),
    Replaced(String),
}

/// Socket events, copied out of rust_socketio's handlers (which run under the client's lock).
enum ConnEvent {
    Challenge(Value),
    RefusedAfterConnect(Value),
    Waiting(Value),
    Welcome(Value),
    Action(Value),
    Cancel(Value),
    Ack(Value),
    Error(String),
    Closed,
    Lost,
    Replaced(Value),
}

fn forward(
    tx: mpsc::UnboundedSender<ConnEvent>,
    f: fn(Vec<Value>) -> ConnEvent,
) -> impl FnMut(Payload, Client) -> futures_util::future::BoxFuture<'static, ()> + Send + Sync + 'static {
    move |payload: Payload, _client: Client| {
        let values = match payload {
            Payload::Text(v) => v,
            #[allow(deprecated)]
            Payload::String(s) => vec![serde_json::from_str(&s).unwrap_or(Value::String(s))],
            Payload::Binary(_) => vec![Value::Null],
        };
        let _ = tx.send(f(values));
        async {}.boxed()
    }
}

fn first_value(mut v: Vec<Value>) -> Value {
    if v.is_empty() {
        Value::Null
    } else {
        v.swap_remove(0)
    }
}

async fn disconnect(client: &Client) {
    let _ = tokio::time::timeout(Duration::from_secs(2), client.disconnect()).await;
}

/// One connection: connect, register, serve until it ends. `on_registered` is called when the
/// welcome is accepted (the caller decides what a registration means to it: the supervisor
/// settles the first one that `Transport::connect` waits for).
pub(crate) async fn connection(
    shared: &Arc<Shared>,
    link: &mut Link,
    shutdown: &mut watch::Receiver<bool>,
    on_registered: &mut (dyn FnMut() + Send),
) -> Outcome {
    let cfg = &shared.config;
    // The URL and the certificate are checked before anything is sent.
    let tls = tokio::select! {
        r = link.prepare(&cfg.server_url) => match r {
            Ok(tls) => tls,
            Err(LinkFailure::Fatal(e)) => return Outcome::Fatal(e),
            Err(LinkFailure::Retry(message)) => return Outcome::Lost { registered: false, message },
        },
        _ = shutdown.changed() => return Outcome::Shutdown,
    };
    let (tx, rx) = mpsc::unbounded_channel::<ConnEvent>();
    let lost_tx = tx.clone();
    let err_tx = tx.clone();
    // A fresh nonce per connection: the server's proof covers it, so no recorded proof passes.
    let client_nonce = match cfg.session_api_key.as_deref().map(|_| new_nonce()).transpose() {
        Ok(n) => n,
        Err(e) => return Outcome::Fatal(TransportError::Unreachable(e)),
    };
    let mut builder = ClientBuilder::new(cfg.url(shared.latest_id()));
    if let Some(tls) = tls {
        builder = builder.tls_config(tls);
    }
    let builder = builder
        .namespace(NAMESPACE)
        .transport_type(TransportType::Websocket)
        .auth(cfg.auth(client_nonce.as_deref()))
        .reconnect(true)
        .reconnect_on_disconnect(true)
        .reconnect_delay(1, 1)
        .on("oh_event", forward(tx.clone(), |v| ConnEvent::Action(first_value(v))))
        .on("oh_executor_cancel", forward(tx.clone(), |v| ConnEvent::Cancel(first_value(v))))
        .on("oh_executor_challenge", forward(tx.clone(), |v| ConnEvent::Challenge(first_value(v))))
        .on("oh_executor_waiting", forward(tx.clone(), |v| ConnEvent::Waiting(first_value(v))))
        .on("oh_executor_refused", forward(tx.clone(), |v| ConnEvent::RefusedAfterConnect(first_value(v))))
        .on("oh_executor_welcome", forward(tx.clone(), |v| ConnEvent::Welcome(first_value(v))))
        .on("oh_executor_replaced", forward(tx.clone(), |v| ConnEvent::Replaced(first_value(v))))
        .on("oh_executor_ack", forward(tx.clone(), |v| ConnEvent::Ack(first_value(v))))
        .on(Event::Close, forward(tx.clone(), |_| ConnEvent::Closed))
        .on(Event::Error, move |payload: Payload, _c: Client| {
            let text = match payload {
                Payload::Text(v) => v
                    .iter()
                    .map(|x| x.as_str().map(str::to_string).unwrap_or_else(|| x.to_string()))
                    .collect::<Vec<_>>()
                    .join(" "),
                #[allow(deprecated)]
                Payload::String(s) => s,
                Payload::Binary(_) => "binary error payload".into(),
            };
            let _ = err_tx.send(ConnEvent::Error(text));
            async {}.boxed()
        })
        // The crate's reconnect hook is the only signal of a dropped connection: report it and
        // park the crate's own reconnect loop forever (we reconnect with a fresh client).
        .on_reconnect(move || {
            let _ = lost_tx.send(ConnEvent::Lost);
            async { std::future::pending::<ReconnectSettings>().await }.boxed()
        });

    let client = tokio::select! {
        r = tokio::time::timeout(cfg.welcome_timeout, builder.connect()) => match r {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => match certificate_rejection(&e, &cfg.server_url, &cfg.certificate_check) {
                Some(refusal) => return Outcome::Fatal(refusal),
                None => return Outcome::Lost { registered: false, message: format!("connect to {} failed: {e}", cfg.server_url) },
            },
            Err(_) => return Outcome::Lost { registered: false, message: format!("connect to {} timed out", cfg.server_url) },
        },
        _ = shutdown.changed() => return Outcome::Shutdown,
    };
    let outcome = serve(shared, &client, client_nonce.as_deref(), rx, shutdown, on_registered).await;
    disconnect(&client).await;
    outcome
}

/// Why a server that does not prove it holds the key is left at once, never retried.
fn unproven(server_url: &str, reason: &str) -> Outcome {
    Outcome::Fatal(TransportError::ServerUnproven(format!(
        "oh-executor: the server at {server_url} could not prove it holds the session key: not the OpenHands you configured? \
         ({reason}; or the key given to this executor is not this server's.) Nothing was sent to it or run."
    )))
}

/// A message of the proven session failed its check: the session ends, for good.
fn broken(server_url: &str, reason: String) -> Outcome {
    Outcome::Fatal(TransportError::SessionBroken(format!(
        "oh-executor: the session with the server at {server_url} was tampered with, so it was closed: {reason}. \
         Something between this executor and the server (a relay on the port?) injected, changed, replayed, reordered or dropped a message; nothing it sent was run."
    )))
}

/// A refusal, sealed or not: a sealed one must pass its check (and then the server's words are
/// shown); an unsealed one is reported in the executor's own words.
fn refused(cfg: &crate::TransportConfig, binding: &mut Option<SessionBinding>, v: &Value) -> Outcome {
    let (refusal, verified) = match binding.as_mut() {
        Some(b) if v.get("body").is_some() => match b.open("oh_executor_refused", v) {
            Ok(payload) => (Refusal::from_value(&payload), true),
            Err(reason) => return broken(&cfg.server_url, reason),
        },
        _ => (Refusal::from_value(v), false),
    };
    if verified && refusal.code.as_deref() == Some("session") {
        return Outcome::Fatal(TransportError::SessionBroken(refusal.message));
    }
    let (code, message) = refusal.explain(&cfg.server_url, &cfg.conversation_id, verified);
    Outcome::Refused(code, message)
}

/// The event loop of a connected client. Until the server has proven it holds the key, nothing
/// it sends is run or kept (actions are dropped, a welcome ends the connection); from our proof
/// on, every message must come sealed, in order (`session.rs`); between the proof and the
/// welcome, actions wait (events may arrive before the Connect callback) and the welcome
/// deadline runs; after it, actions are dispatched and the outbox is drained one acked reply at
/// a time.
async fn serve(
    shared: &Arc<Shared>,
    client: &Client,
    client_nonce: Option<&str>,
    mut rx: mpsc::UnboundedReceiver<ConnEvent>,
    shutdown: &mut watch::Receiver<bool>,
    on_registered: &mut (dyn FnMut() + Send),
) -> Outcome {
    let cfg = &shared.config;
    let mut welcome_deadline = Instant::now() + cfg.welcome_timeout;
    let mut registered = false;
    let mut binding: Option<SessionBinding> = None;
    let mut early = Vec::new();
    let mut early_cancels = Vec::new();
    let mut inflight: Option<(i64, Instant)> = None;
    // Opens a sealed message of the proven session, or ends the session.
    macro_rules! open {
        ($event:expr, $v:expr) => {
            match binding.as_mut().map(|b| b.open($event, &$v)) {
                Some(Ok(payload)) => payload,
                Some(Err(reason)) => return broken(&cfg.server_url, reason),
                None => unreachable!("opened only in a proven session"),
            }
        };
    }
    loop {
        if registered && inflight.is_none() {
            if let (Some((cause, json)), Some(b)) = (shared.outbox_front(), binding.as_mut()) {
                // The reply is already JSON text: sealed as is, never serialised again.
                let sealed = b.seal("oh_event", &json);
                if let Err(e) = client.emit("oh_event", Payload::Text(vec![sealed])).await {
                    return Outcome::Lost { registered: true, message: format!("sending a reply failed: {e}") };
                }
                inflight = Some((cause, Instant::now() + cfg.ack_timeout));
            }
        }
        let proven = binding.is_some();
        let deadline = match (registered, inflight) {
            (false, _) => welcome_deadline,
            (true, Some((_, d))) => d,
            (true, None) => Instant::now() + Duration::from_secs(3600),
        };
        tokio::select! {
            ev = rx.recv() => match ev {
                Some(ConnEvent::Challenge(v)) if !proven => {
                    let (Some(key), Some(nonce)) = (cfg.session_api_key.as_deref(), client_nonce) else {
                        return unproven(&cfg.server_url, "this executor has no key to check the server's proof with");
                    };
                    let server_nonce = match check_challenge(key, &cfg.conversation_id, nonce, &v) {
                        Ok(n) => n,
                        Err(reason) => return unproven(&cfg.server_url, reason),
                    };
                    // The auth the server registers is this signed copy, not the connect's.
                    let signed_auth = cfg.auth(Some(nonce)).to_string();
                    let ours = executor_proof(key, &cfg.conversation_id, &server_nonce, nonce, &signed_auth);
                    binding = Some(SessionBinding::executor(key, &cfg.conversation_id, nonce, &server_nonce));
                    if let Err(e) = client.emit("oh_executor_auth", serde_json::json!({"proof": ours, "auth": signed_auth})).await {
                        return Outcome::Lost { registered: false, message: format!("sending the executor's proof failed: {e}") };
                    }
                }
                Some(ConnEvent::Challenge(_)) => tracing::debug!("second challenge ignored"),
                Some(ConnEvent::Waiting(_)) if !proven => tracing::debug!("oh_executor_waiting before the proof ignored"),
                Some(ConnEvent::Waiting(v)) => {
                    let v = open!("oh_executor_waiting", v);
                    if !registered {
                        // The server holds us in its waiting room until the conversation's runtime
                        // opens (docs/protocol.md); it refuses us itself when that time is over.
                        let secs = v.get("seconds").and_then(Value::as_f64).filter(|s| s.is_finite() && *s >= 0.0).unwrap_or(0.0).min(3600.0);
                        welcome_deadline = Instant::now() + Duration::from_secs_f64(secs) + cfg.welcome_timeout;
                        tracing::info!("the server has no runtime for conversation {} yet: waiting up to {secs} s for it", cfg.conversation_id);
                        shared.set_status(ConnectionState::Connecting, Some(format!("waiting for the runtime of conversation {}", cfg.conversation_id)));
                    }
                }
                Some(ConnEvent::RefusedAfterConnect(v)) => {
                    let outcome = refused(cfg, &mut binding, &v);
                    if registered && matches!(outcome, Outcome::Refused(..)) {
                        // Unsealed, after the welcome: no server of ours sends that.
                        return broken(&cfg.server_url, "an unauthenticated oh_executor_refused arrived in a proven session".into());
                    }
                    return outcome;
                }
                Some(ConnEvent::Welcome(_)) if !proven => {
                    return unproven(&cfg.server_url, "it sent a welcome without a challenge");
                }
                Some(ConnEvent::Welcome(v)) => {
                    let v = open!("oh_executor_welcome", v);
                    if registered {
                        return broken(&cfg.server_url, "a second welcome arrived".into());
                    }
                    if let Err(outcome) = welcome(shared, &v).await {
                        return outcome;
                    }
                    registered = true;
                    on_registered();
                    for v in early.drain(..) {
                        shared.on_action(v);
                    }
                    for v in early_cancels.drain(..) {
                        shared.on_cancel(&v);
                    }
                }
                Some(ConnEvent::Action(_)) if !proven => {
                    tracing::warn!("an action from a server that has not proven the key was dropped, not run");
                }
                Some(ConnEvent::Action(v)) => {
                    let v = open!("oh_event", v);
                    if registered { shared.on_action(v) } else { early.push(v) }
                }
                Some(ConnEvent::Cancel(_)) if !proven => tracing::warn!("a cancel from a server that has not proven the key was dropped"),
                Some(ConnEvent::Cancel(v)) => {
                    let v = open!("oh_executor_cancel", v);
                    if registered { shared.on_cancel(&v) } else { early_cancels.push(v) }
                }
                Some(ConnEvent::Ack(_)) if !proven => tracing::debug!("an ack before the proof ignored"),
                Some(ConnEvent::Ack(v)) => {
                    let v = open!("oh_executor_ack", v);
                    let Some(cause) = v.get("cause").and_then(Value::as_i64) else {
                        return broken(&cfg.server_url, format!("an ack without a cause: {v}"));
                    };
                    if inflight.map(|(c, _)| c) == Some(cause) {
                        inflight = None;
                    }
                    if v.get("ok") != Some(&Value::Bool(true)) {
                        tracing::error!(cause, "the runtime rejected a reply: {}", v.get("error").map(|e| e.to_string()).unwrap_or_default());
                    }
                    shared.outbox_acked(cause);
                }
                Some(ConnEvent::Error(text)) => {
                    if let Some(refusal) = connect_refusal(&text) {
                        // A connect refusal comes before any proof: reported in our own words.
                        let (code, message) = refusal.explain(&cfg.server_url, &cfg.conversation_id, false);
                        return Outcome::Refused(code, message);
                    }
                    tracing::debug!("socket error: {text}");
                }
                Some(ConnEvent::Replaced(_)) if !proven => tracing::debug!("oh_executor_replaced before the proof ignored"),
                Some(ConnEvent::Replaced(v)) => {
                    let v = open!("oh_executor_replaced", v);
                    if !registered {
                        return Outcome::Replaced("replaced by a newer executor".into());
                    }
                    let detail = v.get("message").and_then(Value::as_str).map(|s| format!(": {s}")).unwrap_or_default();
                    return Outcome::Replaced(format!("replaced by a newer executor for this conversation{detail}"));
                }
                Some(ConnEvent::Closed) | Some(ConnEvent::Lost) | None if !registered => {
                    return Outcome::Lost { registered: false, message: "connection closed before the welcome".into() };
                }
                Some(ConnEvent::Closed) => {
                    return Outcome::Lost { registered: true, message: "the server closed the connection".into() };
                }
                Some(ConnEvent::Lost) | None => {
                    return Outcome::Lost { registered: true, message: "connection lost".into() };
                }
            },
            _ = shared.outbox_notify.notified(), if registered && inflight.is_none() => {}
            _ = tokio::time::sleep_until(deadline), if !registered || inflight.is_some() => {
                if !registered {
                    return Outcome::Lost { registered: false, message: "no oh_executor_welcome in time".to_string() };
                }
                tracing::warn!(cause = inflight.map(|(c, _)| c), "no ack for a reply: sending it again");
                inflight = None;
            }
            _ = shutdown.changed() => return Outcome::Shutdown,
        }
    }
}

/// Check the welcome's protocol version, then register its runtime session and apply its
/// session settings.
async fn welcome(shared: &Arc<Shared>, welcome: &Value) -> Result<(), Outcome> {
    let protocol = welcome.get("protocol").and_then(Value::as_i64);
    if protocol != Some(PROTOCOL_VERSION) {
        return Err(Outcome::Fatal(TransportError::ProtocolMismatch(format!(
            "oh-executor: protocol mismatch: this executor speaks oh-executor/{PROTOCOL_VERSION}, the server's welcome says oh-executor/{}",
            welcome.get("protocol").map(|v| v.to_string()).unwrap_or_else(|| "none".into())
        ))));
    }
    let session = match welcome.get("runtime_session") {
        Some(Value::String(s)) => s.clone(),
        Some(other) if !other.is_null() => other.to_string(),
        _ => String::from("default"),
    };
    shared.register(&session);
    if let Some(Value::Object(settings)) = welcome.get("session") {
        shared.handler.apply_session(settings).await;
    }
    tracing::info!(runtime_session = %session, executor_id = %shared.config.executor_id, "registered with the runtime");
    shared.set_status(ConnectionState::Connected, None);
    shared.idle_state();
    Ok(())
}
