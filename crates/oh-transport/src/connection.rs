//! One Socket.IO connection: connect, check the server's proof of the key and prove ours (the
//! handshake of protocol 2), wait for the welcome, register, then serve (dispatch
//! actions, send replies one at a time until each is acked) in a single event loop until the
//! connection ends.

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use rust_socketio::asynchronous::{Client, ClientBuilder, ReconnectSettings};
use rust_socketio::{Event, Payload, TransportType};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::dispatch::Shared;
use crate::handshake::{check_challenge, new_nonce, proof, EXECUTOR_LABEL};
use crate::supervisor::FirstRegistration;
use crate::wire::{ack_object, connect_error_message};
use crate::{ConnectionState, TransportError, NAMESPACE, PROTOCOL_VERSION};

/// How a connection ended.
pub(crate) enum Outcome {
    Shutdown,
    Lost { registered: bool, message: String },
    Refused(String),
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
    Ack { cause: i64, values: Vec<Value> },
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

/// One connection: connect, register, serve until it ends.
pub(crate) async fn connection(
    shared: &Arc<Shared>,
    shutdown: &mut watch::Receiver<bool>,
    first: &mut Option<FirstRegistration>,
) -> Outcome {
    let cfg = &shared.config;
    let (tx, rx) = mpsc::unbounded_channel::<ConnEvent>();
    let lost_tx = tx.clone();
    let err_tx = tx.clone();
    // A fresh nonce per connection: the server's proof covers it, so no recorded proof passes.
    let client_nonce = match cfg.session_api_key.as_deref().map(|_| new_nonce()).transpose() {
        Ok(n) => n,
        Err(e) => return Outcome::Fatal(TransportError::Unreachable(e)),
    };
    let builder = ClientBuilder::new(cfg.url(shared.latest_id()))
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
            Ok(Err(e)) => return Outcome::Lost { registered: false, message: format!("connect to {} failed: {e}", cfg.server_url) },
            Err(_) => return Outcome::Lost { registered: false, message: format!("connect to {} timed out", cfg.server_url) },
        },
        _ = shutdown.changed() => return Outcome::Shutdown,
    };
    let outcome = serve(shared, &client, client_nonce.as_deref(), tx, rx, shutdown, first).await;
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

/// The event loop of a connected client. Until the server has proven it holds the key, nothing
/// it sends is run or kept (actions are dropped, a welcome ends the connection); between the
/// proof and the welcome, actions wait (events may arrive before the Connect callback) and the
/// welcome deadline runs; after it, actions are dispatched and the outbox is drained one acked
/// reply at a time.
async fn serve(
    shared: &Arc<Shared>,
    client: &Client,
    client_nonce: Option<&str>,
    tx: mpsc::UnboundedSender<ConnEvent>,
    mut rx: mpsc::UnboundedReceiver<ConnEvent>,
    shutdown: &mut watch::Receiver<bool>,
    first: &mut Option<FirstRegistration>,
) -> Outcome {
    let cfg = &shared.config;
    let mut welcome_deadline = Instant::now() + cfg.welcome_timeout;
    let mut registered = false;
    let mut proven = false;
    let mut early = Vec::new();
    let mut early_cancels = Vec::new();
    let mut inflight: Option<(i64, Instant)> = None;
    loop {
        if registered && inflight.is_none() {
            if let Some((cause, json)) = shared.outbox_front() {
                let ack_tx = tx.clone();
                // The reply is already JSON text: sent as is, never serialised again.
                #[allow(deprecated)]
                let payload = Payload::String(json.to_string());
                let sent = client
                    .emit_with_ack("oh_event", payload, cfg.ack_timeout, move |p: Payload, _c: Client| {
                        let values = match p {
                            Payload::Text(v) => v,
                            _ => Vec::new(),
                        };
                        let _ = ack_tx.send(ConnEvent::Ack { cause, values });
                        async {}.boxed()
                    })
                    .await;
                if let Err(e) = sent {
                    return Outcome::Lost { registered: true, message: format!("sending a reply failed: {e}") };
                }
                inflight = Some((cause, Instant::now() + cfg.ack_timeout));
            }
        }
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
                    proven = true;
                    let ours = proof(key, EXECUTOR_LABEL, &cfg.conversation_id, &server_nonce, nonce);
                    if let Err(e) = client.emit("oh_executor_auth", serde_json::json!({"proof": ours})).await {
                        return Outcome::Lost { registered: false, message: format!("sending the executor's proof failed: {e}") };
                    }
                }
                Some(ConnEvent::Challenge(_)) => tracing::debug!("second challenge ignored"),
                Some(ConnEvent::Waiting(v)) if proven && !registered => {
                    // The server holds us in its waiting room until the conversation's runtime
                    // opens (docs/protocol.md); it refuses us itself when that time is over.
                    let secs = v.get("seconds").and_then(Value::as_f64).filter(|s| s.is_finite() && *s >= 0.0).unwrap_or(0.0).min(3600.0);
                    welcome_deadline = Instant::now() + Duration::from_secs_f64(secs) + cfg.welcome_timeout;
                    tracing::info!("the server has no runtime for conversation {} yet: waiting up to {secs} s for it", cfg.conversation_id);
                    shared.set_status(ConnectionState::Connecting, Some(format!("waiting for the runtime of conversation {}", cfg.conversation_id)));
                }
                Some(ConnEvent::Waiting(_)) => tracing::debug!("oh_executor_waiting ignored"),
                Some(ConnEvent::RefusedAfterConnect(v)) if !registered => {
                    let message = v.get("message").and_then(Value::as_str).unwrap_or("refused without a message").to_string();
                    return Outcome::Refused(message);
                }
                Some(ConnEvent::RefusedAfterConnect(_)) => tracing::debug!("refusal after the welcome ignored"),
                Some(ConnEvent::Welcome(_)) if !proven => {
                    return unproven(&cfg.server_url, "it sent a welcome without a challenge");
                }
                Some(ConnEvent::Welcome(v)) if !registered => {
                    if let Err(outcome) = welcome(shared, &v).await {
                        return outcome;
                    }
                    registered = true;
                    if let Some(f) = first.take() {
                        let _ = f.send(Ok(()));
                    }
                    for v in early.drain(..) {
                        shared.on_action(v);
                    }
                    for v in early_cancels.drain(..) {
                        shared.on_cancel(&v);
                    }
                }
                Some(ConnEvent::Welcome(_)) => tracing::debug!("duplicate welcome ignored"),
                Some(ConnEvent::Action(_)) if !proven => {
                    tracing::warn!("an action from a server that has not proven the key was dropped, not run");
                }
                Some(ConnEvent::Action(v)) if !registered => early.push(v),
                Some(ConnEvent::Action(v)) => shared.on_action(v),
                Some(ConnEvent::Cancel(_)) if !proven => tracing::warn!("a cancel from a server that has not proven the key was dropped"),
                Some(ConnEvent::Cancel(v)) if !registered => early_cancels.push(v),
                Some(ConnEvent::Cancel(v)) => shared.on_cancel(&v),
                Some(ConnEvent::Ack { cause, values }) => {
                    if inflight.map(|(c, _)| c) == Some(cause) {
                        inflight = None;
                    }
                    match ack_object(&values) {
                        Some(m) if m.get("ok") == Some(&Value::Bool(true)) => {}
                        Some(m) => tracing::error!(cause, "the runtime rejected a reply: {}", m.get("error").map(|e| e.to_string()).unwrap_or_default()),
                        None => tracing::warn!(cause, "unexpected ack payload: {values:?}"),
                    }
                    shared.outbox_acked(cause);
                }
                Some(ConnEvent::Error(text)) => {
                    if let Some(msg) = connect_error_message(&text) {
                        return Outcome::Refused(msg);
                    }
                    tracing::debug!("socket error: {text}");
                }
                Some(ConnEvent::Replaced(_)) if !proven => tracing::debug!("oh_executor_replaced before the proof ignored"),
                Some(ConnEvent::Replaced(v)) => {
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
            "oh-executor: protocol mismatch: executor speaks {PROTOCOL_VERSION}, server sent {}",
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
