//! Connection settings: the server URL with its query, the handshake's `auth`, timeouts and limits.

use std::time::Duration;

use serde_json::{json, Value};

use crate::ids::new_uuid;
use crate::link::CertificateCheck;

/// The protocol version this executor speaks (`auth.protocol`, welcome `protocol`).
pub const PROTOCOL_VERSION: i64 = 3;
/// The Socket.IO namespace of the protocol.
pub const NAMESPACE: &str = "/oh-executor";

/// Connection settings. Its `Debug` shows the key as `<redacted>`.
#[derive(Clone)]
pub struct TransportConfig {
    /// Base URL of the server, e.g. `http://127.0.0.1:3000` or `https://agent.example:8443` (the
    /// `/socket.io/` path is added). Plain `http` only to a host whose addresses are all loopback.
    pub server_url: String,
    /// How an `https` server's certificate is checked (system store, a CA file, or a pin).
    pub certificate_check: CertificateCheck,
    pub conversation_id: String,
    /// The session key. It never leaves the process: the handshake proves it with HMACs over
    /// nonces (docs/protocol.md); without it the executor sends no nonce and the server refuses.
    pub session_api_key: Option<String>,
    /// Absolute workspace root, sent in `auth.workspace`.
    pub workspace: String,
    /// The workspace's other folders (a multi-root workspace), absolute; with `workspace` first
    /// they are sent in `auth.roots`, so the runtime can name every folder to the agent. Empty:
    /// no `auth.roots` (one folder).
    pub extra_roots: Vec<String>,
    /// `auth.client`, `name/version`.
    pub client: String,
    /// Stable for the executor's lifetime; sent on every (re)registration.
    pub executor_id: String,
    /// How long to wait for `oh_executor_welcome` after connecting.
    pub welcome_timeout: Duration,
    /// How long the first registration may take in total (retries of network errors included).
    pub initial_connect_timeout: Duration,
    /// How long to wait for the server's ack of a reply before sending it again.
    pub ack_timeout: Duration,
    pub backoff_min: Duration,
    pub backoff_max: Duration,
    /// Finished replies kept per runtime session for re-deliveries.
    pub finished_cache: usize,
    /// Largest reply sent as is (OpenHands' Socket.IO server accepts 4 MiB messages; a bigger
    /// one would drop the connection, again after each reconnect). Bigger replies are shrunk.
    pub max_reply_bytes: usize,
    /// The host's IDE tools (MCP tool descriptions: `name`, `description`, `inputSchema`), sent
    /// in `auth.ide_tools` so that the runtime offers exactly these to the agent; `None` (the
    /// headless executor) sends no such key and the runtime offers none (docs/ide-tools.md).
    pub ide_tools: Option<Value>,
}

/// [`TransportConfig::max_reply_bytes`]'s default. An executor behind the transport sets its
/// `v1_contents_limit` to it, so that an edit's contents that could not be sent are not built.
pub const MAX_REPLY_BYTES: usize = 4_000_000;

impl TransportConfig {
    pub fn new(
        server_url: impl Into<String>,
        conversation_id: impl Into<String>,
        workspace: impl Into<String>,
    ) -> Self {
        TransportConfig {
            server_url: server_url.into(),
            certificate_check: CertificateCheck::SystemRoots,
            conversation_id: conversation_id.into(),
            session_api_key: None,
            workspace: workspace.into(),
            extra_roots: Vec::new(),
            client: format!("oh-transport/{}", env!("CARGO_PKG_VERSION")),
            executor_id: new_uuid(),
            welcome_timeout: Duration::from_secs(10),
            initial_connect_timeout: Duration::from_secs(15),
            ack_timeout: Duration::from_secs(10),
            backoff_min: Duration::from_millis(500),
            backoff_max: Duration::from_secs(10),
            finished_cache: 1024,
            max_reply_bytes: MAX_REPLY_BYTES,
            ide_tools: None,
        }
    }

    /// The connection URL with its query (`conversation_id`, `latest_event_id`). The key is not
    /// in it (the handshake proves the key without sending it).
    pub fn url(&self, latest_event_id: Option<i64>) -> String {
        let mut u = format!("{}/socket.io/?", self.server_url.trim_end_matches('/'));
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        q.append_pair("conversation_id", &self.conversation_id);
        if let Some(id) = latest_event_id {
            q.append_pair("latest_event_id", &id.to_string());
        }
        u.push_str(&q.finish());
        u
    }

    /// The `auth` object of the handshake; `client_nonce` (fresh for each connection) only when
    /// the executor has a key to check the server's proof with.
    pub fn auth(&self, client_nonce: Option<&str>) -> Value {
        let mut auth = json!({"protocol": PROTOCOL_VERSION, "executor_id": self.executor_id, "workspace": self.workspace, "client": self.client});
        if let Some(nonce) = client_nonce {
            auth["client_nonce"] = Value::String(nonce.to_string());
        }
        if let Some(tools) = &self.ide_tools {
            auth["ide_tools"] = tools.clone();
        }
        if !self.extra_roots.is_empty() {
            let roots: Vec<&String> = std::iter::once(&self.workspace).chain(&self.extra_roots).collect();
            auth["roots"] = json!(roots);
        }
        auth
    }
}

/// What `Debug` prints in place of a key.
pub const REDACTED: &str = "<redacted>";

/// Every field but the key, which a log line or a panic message must never carry. The pattern
/// names every field, so a new one does not compile until it is decided here whether it is shown.
impl std::fmt::Debug for TransportConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let TransportConfig {
            server_url,
            certificate_check,
            conversation_id,
            session_api_key,
            workspace,
            extra_roots,
            client,
            executor_id,
            welcome_timeout,
            initial_connect_timeout,
            ack_timeout,
            backoff_min,
            backoff_max,
            finished_cache,
            max_reply_bytes,
            ide_tools,
        } = self;
        f.debug_struct("TransportConfig")
            .field("server_url", server_url)
            .field("certificate_check", certificate_check)
            .field("conversation_id", conversation_id)
            .field("session_api_key", &session_api_key.as_ref().map(|_| Redacted))
            .field("workspace", workspace)
            .field("extra_roots", extra_roots)
            .field("client", client)
            .field("executor_id", executor_id)
            .field("welcome_timeout", welcome_timeout)
            .field("initial_connect_timeout", initial_connect_timeout)
            .field("ack_timeout", ack_timeout)
            .field("backoff_min", backoff_min)
            .field("backoff_max", backoff_max)
            .field("finished_cache", finished_cache)
            .field("max_reply_bytes", max_reply_bytes)
            .field("ide_tools", ide_tools)
            .finish()
    }
}

/// Prints [`REDACTED`] (without quotes) wherever a secret's `Debug` would go.
pub struct Redacted;

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod debug_tests {
    use super::TransportConfig;

    #[test]
    fn debug_never_shows_the_key() {
        let mut cfg = TransportConfig::new("http://127.0.0.1:3000", "conv-7", "/w");
        cfg.session_api_key = Some("k3y-that-must-not-print".into());
        assert!(format!("{cfg:?}").contains("session_api_key: Some(<redacted>)"), "{cfg:?}");
        for text in [format!("{cfg:?}"), format!("{cfg:#?}")] {
            assert!(!text.contains("k3y-that-must-not-print"), "{text}");
            assert!(text.contains("<redacted>"), "{text}");
            assert!(text.contains("conv-7") && text.contains("http://127.0.0.1:3000"), "{text}");
        }
        cfg.session_api_key = None;
        assert!(format!("{cfg:?}").contains("session_api_key: None"));
    }
}
