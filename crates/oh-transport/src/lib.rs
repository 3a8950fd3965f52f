//! The executor side of the `oh-executor/1` protocol (docs/protocol.md) over rust_socketio.
//!
//! [`Transport::connect`] registers with a `VsCodeRuntime` (namespace `/oh-executor`), waits for
//! `oh_executor_welcome`, then executes every delegated `oh_event` at most once through an
//! [`ActionHandler`] and sends the observation back until the server acknowledges it.
//!
//! rust_socketio gaps handled here (see shared notes): `connect()` returns before the namespace
//! is accepted (we wait for the welcome or a ConnectError, with a timeout); there is no callback
//! for a dropped connection (the crate's own reconnect hook is used as the signal, then parked,
//! and a fresh client is built by our own backoff loop); socket handlers hold a lock (they only
//! copy the payload into a channel); emits while disconnected are lost (our outbox keeps every
//! reply until acked); ack ids are random in 0..999 and never purged on timeout (one reply in
//! flight per connection, with our own timer).

pub mod decode;

use std::collections::{HashMap, HashSet, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use oh_executor::ExecutorConfig;
use oh_files::FileSystem;
use futures_util::FutureExt;
use oh_protocol::{ActionEvent, Observation, ObservationEvent};
use rust_socketio::asynchronous::{Client, ClientBuilder, ReconnectSettings};
use rust_socketio::{Event, Payload, TransportType};
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, oneshot, watch, Notify};
use tokio::time::Instant;
use tracing::Instrument;

pub use decode::{classify, Incoming};

/// The protocol version this executor speaks (`auth.protocol`, welcome `protocol`).
pub const PROTOCOL_VERSION: i64 = 1;
/// The Socket.IO namespace of the protocol.
pub const NAMESPACE: &str = "/oh-executor";

/// Connection settings.
#[derive(Clone, Debug)]
pub struct TransportConfig {
    /// Base URL of the server, e.g. `http://127.0.0.1:3000` (the `/socket.io/` path is added).
    pub server_url: String,
    pub conversation_id: String,
    pub session_api_key: Option<String>,
    /// Absolute workspace root, sent in `auth.workspace`.
    pub workspace: String,
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
}

impl TransportConfig {
    pub fn new(server_url: impl Into<String>, conversation_id: impl Into<String>, workspace: impl Into<String>) -> Self {
        TransportConfig {
            server_url: server_url.into(),
            conversation_id: conversation_id.into(),
            session_api_key: None,
            workspace: workspace.into(),
            client: format!("oh-transport/{}", env!("CARGO_PKG_VERSION")),
            executor_id: new_uuid(),
            welcome_timeout: Duration::from_secs(10),
            initial_connect_timeout: Duration::from_secs(15),
            ack_timeout: Duration::from_secs(10),
            backoff_min: Duration::from_millis(500),
            backoff_max: Duration::from_secs(10),
            finished_cache: 1024,
            max_reply_bytes: 4_000_000,
        }
    }

    /// The connection URL with its query (`conversation_id`, `latest_event_id`, `session_api_key`).
    pub fn url(&self, latest_event_id: Option<i64>) -> String {
        let mut u = format!("{}/socket.io/?", self.server_url.trim_end_matches('/'));
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        q.append_pair("conversation_id", &self.conversation_id);
        if let Some(id) = latest_event_id {
            q.append_pair("latest_event_id", &id.to_string());
        }
        if let Some(k) = &self.session_api_key {
            q.append_pair("session_api_key", k);
        }
        u.push_str(&q.finish());
        u
    }

    /// The `auth` object of the handshake.
    pub fn auth(&self) -> Value {
        json!({"protocol": PROTOCOL_VERSION, "executor_id": self.executor_id, "workspace": self.workspace, "client": self.client})
    }
}

/// A random RFC 4122 version-4 UUID.
pub fn new_uuid() -> String {
    let mut b = [0u8; 16];
    if getrandom::getrandom(&mut b).is_err() {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        b = (t ^ (std::process::id() as u128) << 64).to_le_bytes();
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

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

/// What executes the delegated actions.
#[async_trait]
pub trait ActionHandler: Send + Sync + 'static {
    /// Execute one action; the reply's `cause` must be the action's id.
    async fn execute(&self, event: &ActionEvent) -> ObservationEvent;
    /// Apply the welcome's `session` settings (e.g. `no_change_timeout_seconds`).
    async fn apply_session(&self, _settings: &Map<String, Value>) {}
}

/// [`ActionHandler`] over the executor core, started on first use: when the transport
/// registers first, the welcome's `session` settings (`no_change_timeout_seconds`) go into the
/// shell's configuration before the bash session starts.
pub struct ExecutorHandler {
    config: Mutex<ExecutorConfig>,
    fs: Arc<dyn FileSystem>,
    core: tokio::sync::Mutex<Option<Arc<oh_executor::Executor>>>,
}

impl ExecutorHandler {
    pub fn new(config: ExecutorConfig, fs: Arc<dyn FileSystem>) -> Self {
        ExecutorHandler { config: Mutex::new(config), fs, core: tokio::sync::Mutex::new(None) }
    }

    /// The running core, started now if needed.
    pub async fn core(&self) -> std::io::Result<Arc<oh_executor::Executor>> {
        let mut slot = self.core.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let config = self.config.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let core = Arc::new(oh_executor::Executor::start(config, self.fs.clone()).await?);
        *slot = Some(core.clone());
        Ok(core)
    }

    /// Whether the bash session has been started.
    pub async fn is_started(&self) -> bool {
        self.core.lock().await.is_some()
    }

    /// Stop the shell and every process it started (a later action starts a new one).
    pub async fn shutdown(&self) {
        let core = self.core.lock().await.take();
        if let Some(c) = core {
            c.shutdown().await;
        }
    }
}

#[async_trait]
impl ActionHandler for ExecutorHandler {
    async fn execute(&self, event: &ActionEvent) -> ObservationEvent {
        match self.core().await {
            Ok(core) => core.execute(event).await,
            Err(e) => ObservationEvent::reply(event.id, Observation::error(format!("Cannot start the bash session: {e}"))),
        }
    }

    async fn apply_session(&self, settings: &Map<String, Value>) {
        let Some(secs) = settings.get("no_change_timeout_seconds").and_then(Value::as_f64) else { return };
        let secs = secs.max(0.0).round() as u64;
        let current = self.config.lock().unwrap_or_else(|p| p.into_inner()).shell.no_change_timeout_secs;
        if current == secs {
            return;
        }
        tracing::info!(secs, "session setting no_change_timeout_seconds");
        // Keep the config in step so that a restarted shell gets the same value.
        self.config.lock().unwrap_or_else(|p| p.into_inner()).shell.no_change_timeout_secs = secs;
        if let Some(core) = self.core.lock().await.as_ref() {
            core.set_no_change_timeout(secs);
        }
    }
}

/// Why [`Transport::connect`] failed.
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

struct Outgoing {
    session: String,
    cause: i64,
    value: Value,
}

#[derive(Default)]
struct State {
    runtime_session: Option<String>,
    started: HashSet<i64>,
    finished: HashMap<i64, Value>,
    finished_order: VecDeque<i64>,
    finished_bytes: usize,
    running_ids: HashSet<i64>,
    outbox: VecDeque<Outgoing>,
    latest_id: Option<i64>,
    running: usize,
    registered: bool,
    status: Option<StatusEvent>,
    stats: TransportStats,
}

struct Shared {
    config: TransportConfig,
    handler: Arc<dyn ActionHandler>,
    status_sink: Option<StatusSink>,
    state: Mutex<State>,
    outbox_notify: Notify,
    commands: mpsc::UnboundedSender<(String, i64, ActionEvent)>,
}

enum Admit {
    New,
    Running,
    Finished(Value),
    /// Finished so long ago that its reply left the cache.
    Evicted,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set_status(&self, state: ConnectionState, message: Option<String>) {
        let ev = StatusEvent { state, message };
        {
            let mut st = self.lock();
            if st.status.as_ref() == Some(&ev) {
                return;
            }
            st.status = Some(ev.clone());
        }
        tracing::debug!(state = state.as_str(), message = ev.message.as_deref().unwrap_or(""), "executor status");
        if let Some(sink) = &self.status_sink {
            sink(&ev);
        }
    }

    fn idle_state(&self) {
        let (registered, running) = {
            let st = self.lock();
            (st.registered, st.running)
        };
        if registered {
            if running > 0 {
                self.set_status(ConnectionState::Executing, None);
            } else {
                self.set_status(ConnectionState::Connected, None);
            }
        }
    }

    /// A new registration: reset the per-session state if the runtime instance changed.
    fn register(&self, session: &str) {
        let mut st = self.lock();
        if st.runtime_session.as_deref() != Some(session) {
            if let Some(old) = &st.runtime_session {
                tracing::info!(old, new = session, "new runtime session: forgetting delegated ids of the old one");
            }
            st.runtime_session = Some(session.to_string());
            st.started.clear();
            st.finished.clear();
            st.finished_order.clear();
            st.finished_bytes = 0;
            st.running_ids.clear();
            st.outbox.retain(|o| o.session == session);
        }
        st.registered = true;
        st.stats.registrations += 1;
    }

    fn admit(&self, id: i64) -> Admit {
        let mut st = self.lock();
        st.latest_id = Some(st.latest_id.map_or(id, |l| l.max(id)));
        if let Some(reply) = st.finished.get(&id).cloned() {
            st.stats.cached_replies += 1;
            return Admit::Finished(reply);
        }
        if st.running_ids.contains(&id) {
            st.stats.ignored_running += 1;
            return Admit::Running;
        }
        if !st.started.insert(id) {
            return Admit::Evicted;
        }
        st.running_ids.insert(id);
        Admit::New
    }

    /// Handle one `oh_event` payload (never blocks on execution).
    fn on_action(self: &Arc<Self>, payload: Value) {
        let Some(session) = self.lock().runtime_session.clone() else {
            tracing::warn!("oh_event before registration: dropped");
            return;
        };
        match classify(&payload) {
            Incoming::Drop { reason } => {
                self.lock().stats.dropped += 1;
                tracing::warn!("ignoring oh_event: {reason}");
            }
            Incoming::Refuse { id, reason } => match self.admit(id) {
                Admit::New => {
                    self.lock().stats.refused += 1;
                    tracing::warn!(id, "refusing oh_event: {reason}");
                    self.finish(&session, id, ObservationEvent::reply(Some(id), Observation::error(reason)).to_value());
                }
                Admit::Running => {}
                Admit::Finished(reply) => self.enqueue(&session, id, reply),
                Admit::Evicted => self.evicted(&session, id),
            },
            Incoming::Execute { id, event } => match self.admit(id) {
                Admit::Running => tracing::debug!(id, "re-delivered while running: ignored"),
                Admit::Finished(reply) => {
                    tracing::debug!(id, "re-delivered after finishing: cached reply sent again");
                    self.enqueue(&session, id, reply)
                }
                Admit::Evicted => self.evicted(&session, id),
                Admit::New => {
                    {
                        let mut st = self.lock();
                        st.running += 1;
                        st.stats.executed += 1;
                    }
                    self.set_status(ConnectionState::Executing, Some(describe(&event)));
                    if event.action == "run" || event.action == "v1_terminal" {
                        // Commands run one at a time, in arrival order.
                        if self.commands.send((session, id, event)).is_err() {
                            tracing::warn!(id, "command queue closed");
                        }
                    } else {
                        let me = self.clone();
                        tokio::spawn(async move { me.run_one(session, id, event).await });
                    }
                }
            },
        }
    }

    /// Drop a queued command of a previous runtime session (true when dropped).
    fn drop_if_stale(&self, session: &str, id: i64) -> bool {
        {
            let mut st = self.lock();
            if st.runtime_session.as_deref() == Some(session) {
                return false;
            }
            st.running = st.running.saturating_sub(1);
            st.stats.stale_dropped += 1;
        }
        tracing::warn!(id, "queued command of a previous runtime session: not run");
        self.idle_state();
        true
    }

    async fn run_one(self: &Arc<Self>, session: String, id: i64, event: ActionEvent) {
        let span = tracing::info_span!("oh_action", id, kind = %event.action);
        let started = Instant::now();
        let result = AssertUnwindSafe(self.handler.execute(&event)).catch_unwind().instrument(span.clone()).await;
        let reply = match result {
            Ok(reply) => reply,
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown panic".into());
                tracing::error!(parent: &span, "executor panicked: {msg}");
                ObservationEvent::reply(Some(id), Observation::error(format!("The executor failed while running this action: {msg}")))
            }
        };
        let mut value = reply.to_value();
        if let Value::Object(m) = &mut value {
            // The runtime's event stream assigns ids; cause is always the delegated id.
            m.remove("id");
            m.remove("timestamp");
            m.remove("source");
            m.insert("cause".into(), Value::from(id));
        }
        shrink_reply(&mut value, self.config.max_reply_bytes);
        tracing::debug!(parent: &span, elapsed_ms = started.elapsed().as_secs_f64() * 1e3, "action finished");
        {
            let mut st = self.lock();
            st.running = st.running.saturating_sub(1);
        }
        // Status first, so that `connected` is reported before the reply can be seen.
        self.idle_state();
        self.finish(&session, id, value);
    }

    /// A re-delivery of an id whose reply is no longer cached: never run it again.
    fn evicted(&self, session: &str, id: i64) {
        tracing::warn!(id, "re-delivered long after finishing: reply no longer cached");
        let reply = ObservationEvent::reply(
            Some(id),
            Observation::error(format!("This action (id {id}) was already executed; its result is no longer available.")),
        );
        self.enqueue(session, id, reply.to_value());
    }

    fn finish(&self, session: &str, id: i64, reply: Value) {
        {
            let mut st = self.lock();
            if st.runtime_session.as_deref() != Some(session) {
                tracing::warn!(id, "reply for a previous runtime session: dropped");
                return;
            }
            st.running_ids.remove(&id);
            let size = approx_size(&reply);
            st.finished.insert(id, reply.clone());
            st.finished_order.push_back(id);
            st.finished_bytes += size;
            // Bounded by count (the protocol's 1024) and by bytes (edit replies carry whole files).
            while st.finished_order.len() > self.config.finished_cache.max(1)
                || (st.finished_bytes > FINISHED_CACHE_BYTES && st.finished_order.len() > 1)
            {
                if let Some(old) = st.finished_order.pop_front() {
                    if let Some(v) = st.finished.remove(&old) {
                        st.finished_bytes = st.finished_bytes.saturating_sub(approx_size(&v));
                    }
                }
            }
        }
        self.enqueue(session, id, reply);
    }

    fn enqueue(&self, session: &str, id: i64, reply: Value) {
        {
            let mut st = self.lock();
            if st.outbox.iter().any(|o| o.cause == id && o.session == session) {
                return;
            }
            st.outbox.push_back(Outgoing { session: session.to_string(), cause: id, value: reply });
        }
        self.outbox_notify.notify_one();
    }

    fn outbox_front(&self) -> Option<(i64, Value)> {
        let st = self.lock();
        st.outbox.front().map(|o| (o.cause, o.value.clone()))
    }

    fn outbox_acked(&self, cause: i64) {
        let mut st = self.lock();
        st.outbox.retain(|o| o.cause != cause);
    }
}

/// Keep a reply under `max` serialized bytes: first drop an edit's `old_content`/`new_content`
/// (optional in FileEditObservation), then middle-truncate `content` with a note.
pub fn shrink_reply(value: &mut Value, max: usize) {
    let size = |v: &Value| serde_json::to_string(v).map(|s| s.len()).unwrap_or(0);
    let total = size(value);
    if total <= max {
        return;
    }
    if let Some(extras) = value.get_mut("extras").and_then(Value::as_object_mut) {
        for key in ["old_content", "new_content"] {
            if extras.get(key).is_some_and(|v| !v.is_null()) {
                extras.insert(key.into(), Value::Null);
            }
        }
    }
    let now = size(value);
    if now <= max {
        tracing::warn!(total, "reply too large for the socket: dropped old_content/new_content");
        return;
    }
    let Some(content) = value.get("content").and_then(Value::as_str).map(str::to_string) else { return };
    let excess = now - max;
    let note = format!(
        "\n[... {} bytes of this observation were cut: it was {total} bytes, over the executor's {max}-byte reply limit ...]\n",
        excess + 200
    );
    // JSON escaping can expand text: aim at half the budget the content may still use.
    let keep = content.len().saturating_sub(excess + note.len() + 200) / 2;
    let mut head = keep.min(content.len());
    while !content.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = content.len().saturating_sub(keep).max(head);
    while !content.is_char_boundary(tail) {
        tail += 1;
    }
    let mut cut = String::with_capacity(head + note.len() + content.len() - tail);
    cut.push_str(&content[..head]);
    cut.push_str(&note);
    cut.push_str(&content[tail..]);
    tracing::warn!(total, "reply too large for the socket: content cut");
    if let Some(m) = value.as_object_mut() {
        m.insert("content".into(), Value::String(cut.clone()));
        if m.get("observation").and_then(Value::as_str) == Some("error") {
            m.insert("message".into(), Value::String(cut));
        }
    }
    if size(value) > max {
        // Pathological escaping (e.g. all control characters): halve until it fits.
        let c = value.get("content").and_then(Value::as_str).unwrap_or("").to_string();
        let mut n = c.len() / 2;
        while !c.is_char_boundary(n) {
            n -= 1;
        }
        if let Some(m) = value.as_object_mut() {
            m.insert("content".into(), Value::String(format!("{}{note}", &c[..n])));
        }
        if size(value) > max {
            if let Some(m) = value.as_object_mut() {
                m.insert("content".into(), Value::String(note.trim().to_string()));
            }
        }
    }
}

/// Byte budget of the finished-reply cache.
const FINISHED_CACHE_BYTES: usize = 64 << 20;

fn approx_size(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 8,
        Value::Array(a) => a.iter().map(approx_size).sum::<usize>() + 8,
        Value::Object(m) => m.iter().map(|(k, v)| k.len() + approx_size(v)).sum::<usize>() + 8,
        _ => 8,
    }
}

fn describe(event: &ActionEvent) -> String {
    let detail = match event.action.as_str() {
        "run" | "v1_terminal" => event.args.get("command").and_then(Value::as_str).unwrap_or(""),
        _ => event.args.get("path").and_then(Value::as_str).unwrap_or(""),
    };
    let mut s = format!("{} {}", event.action, detail);
    if s.len() > 120 {
        let mut cut = 117;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

/// Socket events, copied out of rust_socketio's handlers.
enum ConnEvent {
    Welcome(Value),
    Action(Value),
    Ack { cause: i64, values: Vec<Value> },
    Error(String),
    Closed,
    Lost,
    Replaced(Value),
}

enum Outcome {
    Shutdown,
    Lost { registered: bool, message: String },
    Refused(String),
    Fatal(TransportError),
    Replaced(String),
}

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
        let (cmd_tx, mut cmd_rx) = mpsc::unbounded_channel::<(String, i64, ActionEvent)>();
        let shared = Arc::new(Shared {
            config,
            handler,
            status_sink: status,
            state: Mutex::new(State::default()),
            outbox_notify: Notify::new(),
            commands: cmd_tx,
        });
        let worker = {
            let shared = shared.clone();
            tokio::spawn(async move {
                while let Some((session, id, event)) = cmd_rx.recv().await {
                    // A command queued by a runtime instance that is gone (the backend restarted:
                    // a new runtime_session registered meanwhile) must not run in the new one.
                    if !shared.drop_if_stale(&session, id) {
                        shared.run_one(session, id, event).await;
                    }
                }
            })
        };
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let (first_tx, first_rx) = oneshot::channel();
        let supervisor = tokio::spawn(supervise(shared.clone(), shutdown_rx, first_tx));
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
        self.shared
            .lock()
            .status
            .clone()
            .unwrap_or(StatusEvent { state: ConnectionState::Connecting, message: None })
    }

    pub fn stats(&self) -> TransportStats {
        let st = self.shared.lock();
        let mut s = st.stats.clone();
        s.outbox = st.outbox.len();
        s
    }

    pub fn executor_id(&self) -> &str {
        &self.shared.config.executor_id
    }

    /// Whether the supervisor has ended (shutdown, refusal, replaced).
    pub fn is_finished(&self) -> bool {
        self.supervisor.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_none_or(|h| h.is_finished())
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

async fn supervise(shared: Arc<Shared>, mut shutdown: watch::Receiver<bool>, first: oneshot::Sender<Result<(), TransportError>>) {
    let cfg = shared.config.clone();
    let mut first = Some(first);
    let first_deadline = Instant::now() + cfg.initial_connect_timeout;
    let mut backoff = cfg.backoff_min;
    let mut ever_registered = false;
    loop {
        if *shutdown.borrow() {
            break;
        }
        shared.set_status(ConnectionState::Connecting, Some(cfg.server_url.clone()));
        let outcome = connection(&shared, &mut shutdown, &mut first).await;
        shared.lock().registered = false;
        match outcome {
            Outcome::Shutdown => break,
            Outcome::Fatal(e) => {
                tracing::error!("{e}");
                shared.set_status(ConnectionState::Error, Some(e.to_string()));
                if let Some(f) = first.take() {
                    let _ = f.send(Err(e));
                }
                break;
            }
            Outcome::Refused(msg) => {
                let permanent = msg.contains("protocol mismatch") || msg.contains("session_api_key");
                if !ever_registered || permanent {
                    let e = TransportError::Refused(msg);
                    tracing::error!("{e}");
                    shared.set_status(ConnectionState::Error, Some(e.to_string()));
                    if let Some(f) = first.take() {
                        let _ = f.send(Err(e));
                    }
                    break;
                }
                tracing::warn!("registration refused, will retry: {msg}");
                shared.set_status(ConnectionState::Disconnected, Some(format!("refused: {msg}")));
            }
            Outcome::Replaced(msg) => {
                tracing::warn!("{msg}");
                shared.set_status(ConnectionState::Disconnected, Some(msg));
                break;
            }
            Outcome::Lost { registered, message } => {
                if registered {
                    ever_registered = true;
                    backoff = cfg.backoff_min;
                }
                tracing::warn!("connection lost: {message}");
                shared.set_status(ConnectionState::Disconnected, Some(message.clone()));
                if first.is_some() && Instant::now() + backoff > first_deadline {
                    let e = TransportError::Unreachable(message);
                    shared.set_status(ConnectionState::Error, Some(e.to_string()));
                    if let Some(f) = first.take() {
                        let _ = f.send(Err(e));
                    }
                    break;
                }
            }
        }
        if first.is_none() {
            ever_registered = true;
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = shutdown.changed() => break,
        }
        backoff = (backoff * 2).min(cfg.backoff_max);
    }
    if let Some(f) = first.take() {
        let _ = f.send(Err(TransportError::Stopped));
    }
}

fn handler(tx: mpsc::UnboundedSender<ConnEvent>, f: fn(Vec<Value>) -> ConnEvent) -> impl FnMut(Payload, Client) -> futures_util::future::BoxFuture<'static, ()> + Send + Sync + 'static {
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
async fn connection(
    shared: &Arc<Shared>,
    shutdown: &mut watch::Receiver<bool>,
    first: &mut Option<oneshot::Sender<Result<(), TransportError>>>,
) -> Outcome {
    let cfg = &shared.config;
    let (tx, mut rx) = mpsc::unbounded_channel::<ConnEvent>();
    let latest = shared.lock().latest_id;
    let lost_tx = tx.clone();
    let err_tx = tx.clone();
    let builder = ClientBuilder::new(cfg.url(latest))
        .namespace(NAMESPACE)
        .transport_type(TransportType::Websocket)
        .auth(cfg.auth())
        .reconnect(true)
        .reconnect_on_disconnect(true)
        .reconnect_delay(1, 1)
        .on("oh_event", handler(tx.clone(), |v| ConnEvent::Action(first_value(v))))
        .on("oh_executor_welcome", handler(tx.clone(), |v| ConnEvent::Welcome(first_value(v))))
        .on("oh_executor_replaced", handler(tx.clone(), |v| ConnEvent::Replaced(first_value(v))))
        .on(Event::Close, handler(tx.clone(), |_| ConnEvent::Closed))
        .on(Event::Error, move |payload: Payload, _c: Client| {
            let text = match payload {
                Payload::Text(v) => v.iter().map(|x| x.as_str().map(str::to_string).unwrap_or_else(|| x.to_string())).collect::<Vec<_>>().join(" "),
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

    // Wait for the welcome (events may arrive before the Connect callback).
    let deadline = Instant::now() + cfg.welcome_timeout;
    let mut early = Vec::new();
    let welcome = loop {
        tokio::select! {
            ev = rx.recv() => match ev {
                Some(ConnEvent::Welcome(v)) => break v,
                Some(ConnEvent::Action(v)) => early.push(v),
                Some(ConnEvent::Error(text)) => {
                    if let Some(msg) = decode::connect_error_message(&text) {
                        disconnect(&client).await;
                        return Outcome::Refused(msg);
                    }
                    tracing::debug!("socket error before welcome: {text}");
                }
                Some(ConnEvent::Replaced(_)) => {
                    disconnect(&client).await;
                    return Outcome::Replaced("replaced by a newer executor".into());
                }
                Some(ConnEvent::Closed) | Some(ConnEvent::Lost) | None => {
                    disconnect(&client).await;
                    return Outcome::Lost { registered: false, message: "connection closed before the welcome".into() };
                }
                Some(ConnEvent::Ack { .. }) => {}
            },
            _ = tokio::time::sleep_until(deadline) => {
                disconnect(&client).await;
                return Outcome::Lost { registered: false, message: format!("no oh_executor_welcome within {:?}", cfg.welcome_timeout) };
            }
            _ = shutdown.changed() => {
                disconnect(&client).await;
                return Outcome::Shutdown;
            }
        }
    };

    let protocol = welcome.get("protocol").and_then(Value::as_i64);
    if protocol != Some(PROTOCOL_VERSION) {
        disconnect(&client).await;
        return Outcome::Fatal(TransportError::ProtocolMismatch(format!(
            "oh-executor: protocol mismatch: executor speaks {PROTOCOL_VERSION}, server sent {}",
            welcome.get("protocol").map(|v| v.to_string()).unwrap_or_else(|| "none".into())
        )));
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
    tracing::info!(runtime_session = %session, executor_id = %cfg.executor_id, "registered with the runtime");
    shared.set_status(ConnectionState::Connected, None);
    shared.idle_state();
    if let Some(f) = first.take() {
        let _ = f.send(Ok(()));
    }
    for v in early {
        shared.on_action(v);
    }

    // Serve: dispatch actions, send replies one at a time until each is acked.
    let mut inflight: Option<(i64, Instant)> = None;
    loop {
        if inflight.is_none() {
            if let Some((cause, value)) = shared.outbox_front() {
                let ack_tx = tx.clone();
                let sent = client
                    .emit_with_ack("oh_event", Payload::Text(vec![value]), cfg.ack_timeout, move |p: Payload, _c: Client| {
                        let values = match p {
                            Payload::Text(v) => v,
                            _ => Vec::new(),
                        };
                        let _ = ack_tx.send(ConnEvent::Ack { cause, values });
                        async {}.boxed()
                    })
                    .await;
                if let Err(e) = sent {
                    disconnect(&client).await;
                    return Outcome::Lost { registered: true, message: format!("sending a reply failed: {e}") };
                }
                inflight = Some((cause, Instant::now() + cfg.ack_timeout));
            }
        }
        let ack_deadline = inflight.map(|(_, d)| d).unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
        tokio::select! {
            ev = rx.recv() => match ev {
                Some(ConnEvent::Action(v)) => shared.on_action(v),
                Some(ConnEvent::Ack { cause, values }) => {
                    if inflight.map(|(c, _)| c) == Some(cause) {
                        inflight = None;
                    }
                    match decode::ack_object(&values) {
                        Some(m) if m.get("ok") == Some(&Value::Bool(true)) => {}
                        Some(m) => tracing::error!(cause, "the runtime rejected a reply: {}", m.get("error").map(|e| e.to_string()).unwrap_or_default()),
                        None => tracing::warn!(cause, "unexpected ack payload: {values:?}"),
                    }
                    shared.outbox_acked(cause);
                }
                Some(ConnEvent::Welcome(_)) => tracing::debug!("duplicate welcome ignored"),
                Some(ConnEvent::Error(text)) => {
                    if let Some(msg) = decode::connect_error_message(&text) {
                        disconnect(&client).await;
                        return Outcome::Refused(msg);
                    }
                    tracing::debug!("socket error: {text}");
                }
                Some(ConnEvent::Replaced(v)) => {
                    disconnect(&client).await;
                    let detail = v.get("message").and_then(Value::as_str).map(|s| format!(": {s}")).unwrap_or_default();
                    return Outcome::Replaced(format!("replaced by a newer executor for this conversation{detail}"));
                }
                Some(ConnEvent::Closed) => {
                    disconnect(&client).await;
                    return Outcome::Lost { registered: true, message: "the server closed the connection".into() };
                }
                Some(ConnEvent::Lost) | None => {
                    disconnect(&client).await;
                    return Outcome::Lost { registered: true, message: "connection lost".into() };
                }
            },
            _ = shared.outbox_notify.notified(), if inflight.is_none() => {}
            _ = tokio::time::sleep_until(ack_deadline), if inflight.is_some() => {
                tracing::warn!(cause = inflight.map(|(c, _)| c), "no ack for a reply: sending it again");
                inflight = None;
            }
            _ = shutdown.changed() => {
                disconnect(&client).await;
                return Outcome::Shutdown;
            }
        }
    }
}
