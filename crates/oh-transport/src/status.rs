//! What the transport reports: connection states, errors, counters, and the observers that see
//! each action and reply.

use std::sync::Arc;

use oh_protocol::ActionEvent;

pub use crate::vocabulary::{ConnectionState, ErrorCode};

/// One status change.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusEvent {
    pub state: ConnectionState,
    pub message: Option<String>,
}

/// Receives status changes (called from tokio tasks; keep it quick and non-blocking).
pub type StatusSink = Arc<dyn Fn(&StatusEvent) + Send + Sync>;
/// Receives each delegated action as it starts.
pub type ActionSink = Arc<dyn Fn(&ActionEvent) + Send + Sync>;
/// Receives each reply as the JSON text sent to the runtime.
pub type ReplySink = Arc<dyn Fn(&str) + Send + Sync>;

/// Optional callbacks (called from tokio tasks; keep them quick and non-blocking).
#[derive(Clone, Default)]
pub struct Observers {
    /// Every status change.
    pub on_status: Option<StatusSink>,
    /// Each delegated action as it starts (not refusals or re-deliveries).
    pub on_action: Option<ActionSink>,
    /// Each executed action's reply, as the JSON text sent to the runtime (`cause` = its id).
    pub on_reply: Option<ReplySink>,
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
    /// The server refused the registration: the code of its reason (`refusal.rs`) and what the
    /// executor reports (the server's words only when it had proven the key).
    Refused(ErrorCode, String),
    /// The welcome announced another protocol version.
    ProtocolMismatch(String),
    /// The server could not prove that it holds the session key (an impostor on the port, or a
    /// key that is not this server's): nothing was sent to it or run.
    ServerUnproven(String),
    /// A message of the proven session failed its check (a bad MAC, a sequence number out of
    /// order, replayed or missing, an unsealed message): a party between the two ends injected,
    /// changed, replayed, reordered or dropped it. The session ended, never retried.
    SessionBroken(String),
    /// No registration within the initial timeout (network errors, no welcome).
    Unreachable(String),
    /// The server URL is not one the executor may use: plain `http` to a host that is not
    /// loopback (the link would carry the agent's commands and files in clear), or no URL.
    InsecureUrl(String),
    /// The server's TLS certificate was refused (not trusted, wrong host name, not the pinned
    /// one), or the CA file could not be used: nothing was sent. Never retried.
    Certificate(String),
    /// Shut down before registering.
    Stopped,
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Refused(_, m) => write!(f, "connection refused: {m}"),
            TransportError::SessionBroken(m) => write!(f, "{m}"),
            TransportError::ProtocolMismatch(m) => write!(f, "{m}"),
            TransportError::ServerUnproven(m) => write!(f, "{m}"),
            TransportError::Unreachable(m) => write!(f, "cannot reach the runtime: {m}"),
            TransportError::InsecureUrl(m) | TransportError::Certificate(m) => write!(f, "{m}"),
            TransportError::Stopped => write!(f, "stopped before registering"),
        }
    }
}

impl std::error::Error for TransportError {}

impl TransportError {
    /// What kind of failure this is: the code every front end prints and branches on.
    pub fn code(&self) -> ErrorCode {
        match self {
            TransportError::Refused(code, _) => *code,
            TransportError::SessionBroken(_) => ErrorCode::Auth,
            TransportError::ProtocolMismatch(_) => ErrorCode::Protocol,
            TransportError::ServerUnproven(_) => ErrorCode::Auth,
            TransportError::Unreachable(_) => ErrorCode::Unreachable,
            TransportError::InsecureUrl(_) => ErrorCode::Refused,
            // The server could not prove who it is, like a server that cannot prove the key.
            TransportError::Certificate(_) => ErrorCode::Auth,
            TransportError::Stopped => ErrorCode::Stopped,
        }
    }
}

impl ErrorCode {
    /// Whether retrying cannot help once the executor has registered before: a wrong key or
    /// protocol stays wrong; a missing runtime or another refusal may pass on a later try.
    pub fn is_permanent(self) -> bool {
        matches!(self, ErrorCode::Auth | ErrorCode::Protocol)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_have_codes() {
        assert_eq!(TransportError::Refused(ErrorCode::NoRuntime, "x".into()).code(), ErrorCode::NoRuntime);
        assert_eq!(TransportError::SessionBroken("bad MAC".into()).code(), ErrorCode::Auth);
        assert_eq!(TransportError::ProtocolMismatch("x".into()).code(), ErrorCode::Protocol);
        assert_eq!(TransportError::Unreachable("x".into()).code().as_str(), "EUNREACHABLE");
        assert_eq!(TransportError::Stopped.code().as_str(), "ESTOPPED");
    }

    #[test]
    fn the_vocabulary() {
        let codes: Vec<_> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(codes, ["ENORUNTIME", "EAUTH", "EREFUSED", "EPROTOCOL", "EUNREACHABLE", "ESTOPPED", "ESHELL"]);
        let states: Vec<_> = ConnectionState::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(states, ["connecting", "connected", "executing", "disconnected", "error"]);
    }
}

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
    /// Running actions the runtime cancelled (`oh_executor_cancel`), handed to the handler.
    pub cancelled: u64,
    /// Successful registrations (1 + reconnects).
    pub registrations: u64,
    /// Replies waiting for an ack.
    pub outbox: usize,
}
