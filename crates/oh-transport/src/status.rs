//! What the transport reports: connection states, errors, counters, and the observers that see
//! each action and reply.

use std::sync::Arc;

use oh_protocol::ActionEvent;

/// The connection state reported to the status callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionState {
    Connecting,
    Connected,
    Executing,
    Disconnected,
    Error,
}

impl ConnectionState {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionState::Connecting => "connecting",
            ConnectionState::Connected => "connected",
            ConnectionState::Executing => "executing",
            ConnectionState::Disconnected => "disconnected",
            ConnectionState::Error => "error",
        }
    }
}

/// One status change.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusEvent {
    pub state: ConnectionState,
    pub message: Option<String>,
}

/// Receives status changes (called from tokio tasks; keep it quick and non-blocking).
pub type StatusSink = Arc<dyn Fn(&StatusEvent) + Send + Sync>;

/// Optional callbacks (called from tokio tasks; keep them quick and non-blocking).
#[derive(Clone, Default)]
pub struct Observers {
    /// Every status change.
    pub on_status: Option<StatusSink>,
    /// Each delegated action as it starts (not refusals or re-deliveries).
    pub on_action: Option<Arc<dyn Fn(&ActionEvent) + Send + Sync>>,
    /// Each executed action's reply, as the JSON text sent to the runtime (`cause` = its id).
    pub on_reply: Option<Arc<dyn Fn(&str) + Send + Sync>>,
}

impl Observers {
    /// Only a status sink.
    pub fn status(sink: Option<StatusSink>) -> Self {
        Observers { on_status: sink, ..Observers::default() }
    }
}

/// Why [`crate::Transport::connect`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The server refused the registration (its `ConnectionRefusedError` message).
    Refused(String),
    /// The welcome announced another protocol version.
    ProtocolMismatch(String),
    /// No registration within the initial timeout (network errors, no welcome).
    Unreachable(String),
    /// Shut down before registering.
    Stopped,
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Refused(m) => write!(f, "connection refused: {m}"),
            TransportError::ProtocolMismatch(m) => write!(f, "{m}"),
            TransportError::Unreachable(m) => write!(f, "cannot reach the runtime: {m}"),
            TransportError::Stopped => write!(f, "stopped before registering"),
        }
    }
}

impl std::error::Error for TransportError {}

/// Counters, for tests and status displays.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransportStats {
    /// Actions handed to the handler.
    pub executed: u64,
    /// Re-deliveries answered from the finished cache.
    pub cached_replies: u64,
    /// Re-deliveries of an id still running (ignored).
    pub ignored_running: u64,
    /// Payloads refused with an ErrorObservation.
    pub refused: u64,
    /// Payloads dropped (no id).
    pub dropped: u64,
    /// Queued commands of a previous runtime session, never run.
    pub stale_dropped: u64,
    /// Successful registrations (1 + reconnects).
    pub registrations: u64,
    /// Replies waiting for an ack.
    pub outbox: usize,
}
