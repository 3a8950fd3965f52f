//! The executor side of the `oh-executor/3` protocol (docs/protocol.md) over rust_socketio.
//!
//! [`Transport::connect`] registers with a `VsCodeRuntime` (namespace `/oh-executor`), waits for
//! the server's proof that it holds the session key (`oh_executor_challenge`, [`handshake`]),
//! proves its own, waits for `oh_executor_welcome`, then (every message sealed from here on:
//! [`session`]), runs every delegated `oh_event` at most once through an
//! [`ActionHandler`] and sends the reply back until the server acknowledges it. The transport
//! knows sockets, registration, the exactly-once ledger and backoff; what an action is comes from
//! `oh-protocol` (decoding, `is_command`, and the [`ActionHandler`] that runs an action; `oh-executor`
//! implements it, this crate does not depend on it).
//!
//! Modules: [`config`] (settings, URL, auth), [`link`] (plain http only to loopback; the
//! certificate checks of https), [`ids`], [`status`] (states, errors, observers),
//! [`ledger`] (exactly-once bookkeeping, pure), [`reply`] (one serialisation, shrinking),
//! [`wire`] (reading rust_socketio's payloads), `dispatch`, `connection` (one event loop per
//! connection) and `supervisor` (reconnects with backoff; it runs `connection`, which tells it of
//! a registration through a callback, so neither imports the other both ways).
//!
//! rust_socketio gaps handled here (see shared notes): `connect()` returns before the namespace
//! is accepted (we wait for the welcome or a ConnectError, with a timeout); there is no callback
//! for a dropped connection (the crate's own reconnect hook is used as the signal, then parked,
//! and a fresh client is built by our own backoff loop); socket handlers hold a lock (they only
//! copy the payload into a channel); emits while disconnected are lost (our outbox keeps every
//! reply until acked); ack ids are random in 0..999 and never purged on timeout (one reply in
//! flight per connection, with our own timer).

pub mod config;
mod connection;
mod dispatch;
pub mod handshake;
pub mod ids;
pub mod ledger;
pub mod link;
pub mod refusal;
pub mod reply;
pub mod session;
pub mod status;
mod supervisor;
mod vocabulary;
pub mod wire;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

pub use config::{TransportConfig, MAX_REPLY_BYTES, NAMESPACE, PROTOCOL_VERSION};
pub use ids::new_uuid;
pub use link::{parse_sha256_fingerprint, CertificateCheck};
pub use oh_protocol::ActionHandler;
pub use reply::shrink_reply;
pub use status::{ConnectionState, ErrorCode, Observers, StatusEvent, StatusSink, TransportError, TransportStats};

use dispatch::{QueuedCommand, Shared};

/// A running connection to the runtime. Dropping it does not stop it: call [`Transport::shutdown`].
pub struct Transport {
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
    commands: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Transport {
    /// Connect and register; resolves once the first `oh_executor_welcome` is accepted, and keeps
    /// the connection (and reconnects) in the background. Must be called inside a tokio runtime.
    pub async fn connect(
        config: TransportConfig,
        handler: Arc<dyn ActionHandler>,
        status: Option<StatusSink>,
    ) -> Result<Transport, TransportError> {
        Self::connect_observed(config, handler, Observers::status(status)).await
    }

    /// [`Transport::connect`] with observers of each action and reply besides the status.
    pub async fn connect_observed(
        config: TransportConfig,
        handler: Arc<dyn ActionHandler>,
        observers: Observers,
    ) -> Result<Transport, TransportError> {
        let (cmd_tx, mut cmd_rx) = mpsc::unbounded_channel::<QueuedCommand>();
        let shared = Arc::new(Shared::new(config, handler, observers, cmd_tx));
        let worker = {
            let shared = shared.clone();
            tokio::spawn(async move {
                while let Some((session, job)) = cmd_rx.recv().await {
                    // A command queued by a runtime instance that is gone (the backend restarted:
                    // a new runtime_session registered meanwhile) must not run in the new one.
                    if !shared.drop_if_stale(&session, job.id) {
                        shared.run_one(session, job).await;
                    }
                }
            })
        };
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let (first_tx, first_rx) = oneshot::channel();
        let supervisor = tokio::spawn(supervisor::supervise(shared.clone(), shutdown_rx, first_tx));
        let transport = Transport {
            shared,
            shutdown: shutdown_tx,
            supervisor: Mutex::new(Some(supervisor)),
            commands: Mutex::new(Some(worker)),
        };
        match first_rx.await {
            Ok(Ok(())) => Ok(transport),
            Ok(Err(e)) => {
                transport.shutdown().await;
                Err(e)
            }
            Err(_) => {
                transport.shutdown().await;
                Err(TransportError::Stopped)
            }
        }
    }

    /// The last status.
    pub fn status(&self) -> StatusEvent {
        self.shared.lock().status.clone().unwrap_or(StatusEvent { state: ConnectionState::Connecting, message: None })
    }

    pub fn stats(&self) -> TransportStats {
        self.shared.stats()
    }

    pub fn executor_id(&self) -> &str {
        &self.shared.config.executor_id
    }

    /// Whether the supervisor has ended (shutdown, refusal, replaced).
    pub fn is_finished(&self) -> bool {
        self.supervisor.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_none_or(|h| h.is_finished())
    }

    /// The failure that ended the connection for good, if one did (the typed close reason;
    /// `None` after a shutdown or a replacement).
    pub fn close_error(&self) -> Option<TransportError> {
        self.shared.lock().failure.clone()
    }

    /// Wait until the supervisor ends (e.g. the executor was replaced or refused for good).
    pub async fn closed(&self) {
        let mut rx = self.shutdown.subscribe();
        loop {
            if self.is_finished() {
                return;
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                _ = rx.changed() => {}
            }
        }
    }

    /// Disconnect and stop; running actions are abandoned (their replies are not sent).
    pub async fn shutdown(&self) {
        let _ = self.shutdown.send(true);
        let sup = self.supervisor.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = sup {
            if tokio::time::timeout(Duration::from_secs(3), h).await.is_err() {
                tracing::warn!("transport supervisor did not stop in time");
            }
        }
        if let Some(h) = self.commands.lock().unwrap_or_else(|p| p.into_inner()).take() {
            h.abort();
        }
        let keep_error = {
            let mut st = self.shared.lock();
            st.registered = false;
            st.status.as_ref().is_some_and(|s| s.state == ConnectionState::Error)
        };
        if !keep_error {
            self.shared.set_status(ConnectionState::Disconnected, Some("stopped".into()));
        }
    }
}
