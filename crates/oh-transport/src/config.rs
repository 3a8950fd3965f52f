//! Connection settings: the server URL with its query, the handshake's `auth`, timeouts and limits.

use std::time::Duration;

use serde_json::{json, Value};

use crate::ids::new_uuid;

/// The protocol version this executor speaks (`auth.protocol`, welcome `protocol`).
pub const PROTOCOL_VERSION: i64 = 3;
/// The Socket.IO namespace of the protocol.
pub const NAMESPACE: &str = "/oh-executor";

/// Connection settings.
#[derive(Clone, Debug)]
pub struct TransportConfig {
    /// Base URL of the server, e.g. `http://127.0.0.1:3000` (the `/socket.io/` path is added).
    pub server_url: String,
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
