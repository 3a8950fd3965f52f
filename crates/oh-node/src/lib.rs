//! `openhands-vscode-executor`: the executor core for Node (VS Code extension host or the headless
//! CLI). Thin: options and callbacks in, the core and the transport do the work.
//!
//! ```js
//! const ex = new Executor({ serverUrl, conversationId, workspaceRoot }, fsCallbacks, { onStatus, onLog, onTerminalData })
//! await ex.start()          // resolves once registered with the runtime; rejects with a `code` if refused
//! await ex.waitUntilClosed() // { reason: 'stopped' | 'replaced' | 'failed', code?, message }
//! await ex.stop()
//! ```
//! `fsCallbacks` `null` runs file actions on Rust's own `LocalFs` (the headless CLI).

mod cli;
mod dto;
mod errors;
mod fs;
mod log;

use std::sync::{Arc, Mutex, RwLock};

use napi::bindgen_prelude::{FnArgs, PromiseRaw, Uint8Array, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use oh_executor::{ExecutorConfig, ExecutorHandler};
use oh_files::{FileSystem, LocalFs};
use oh_front::{Ending, SessionSettings};
use oh_protocol::ActionEvent;
use oh_transport::{Observers, StatusEvent, Transport};

pub use cli::{run_cli, stop_cli};
pub use dto::{ExecutorOptions, IdeToolInfo};
pub use errors::{CloseReason, Closed, CodedError, ErrorCode};
pub use fs::FsCallbacks;

/// The connection state reported by `onStatus` and the `status` getter: the napi form of
/// `oh_transport::ConnectionState`, built from the same list (`oh_transport::connection_states!`).
macro_rules! napi_connection_state {
    ($($(#[doc = $doc:literal])* $variant:ident = $text:tt,)*) => {
        /// The connection state reported by `onStatus` and the `status` getter.
        #[napi(string_enum)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum ConnectionState {
            $($(#[doc = $doc])* #[napi(value = $text)] $variant,)*
        }

        impl From<oh_transport::ConnectionState> for ConnectionState {
            fn from(s: oh_transport::ConnectionState) -> Self {
                match s {
                    $(oh_transport::ConnectionState::$variant => ConnectionState::$variant,)*
                }
            }
        }
    };
}
oh_transport::connection_states!(napi_connection_state);

type StatusFn = ThreadsafeFunction<
    FnArgs<(ConnectionState, Option<String>)>,
    Unknown<'static>,
    FnArgs<(ConnectionState, Option<String>)>,
    Status,
    false,
    true,
>;
type DataFn = ThreadsafeFunction<Uint8Array, Unknown<'static>, Uint8Array, Status, false, true>;
type JsonFn = ThreadsafeFunction<String, Unknown<'static>, String, Status, false, true>;

/// Optional notification hooks (weak: they never keep Node alive).
#[napi(object, object_to_js = false)]
pub struct ExecutorHooks {
    /// Raw bytes the shell prints (the VS Code terminal mirror).
    #[napi(ts_type = "(data: Uint8Array) => void")]
    pub on_terminal_data: Option<ThreadsafeFunction<Uint8Array, Unknown<'static>, Uint8Array, Status, false, true>>,
    /// Log records (`level` is `error`/`warn`/`info`/`debug`/`trace`).
    #[napi(ts_type = "(level: string, target: string, message: string) => void")]
    pub on_log: Option<log::LogFn>,
    /// Each change of the connection state; `executing` carries `<action> <command or path>`.
    #[napi(ts_type = "(status: ConnectionState, message: string | null) => void")]
    pub on_status: Option<StatusFn>,
    /// Each delegated action as it starts (event_to_dict JSON).
    #[napi(ts_type = "(eventJson: string) => void")]
    pub on_action: Option<ThreadsafeFunction<String, Unknown<'static>, String, Status, false, true>>,
    /// Each observation sent back (JSON, `cause` = the action's id).
    #[napi(ts_type = "(eventJson: string) => void")]
    pub on_observation: Option<ThreadsafeFunction<String, Unknown<'static>, String, Status, false, true>>,
    /// Runs one IDE tool (`call_tool_mcp` actions): resolves to the MCP `CallToolResult` as JSON
    /// text; a rejection becomes an ErrorObservation with its message. Without it the executor
    /// offers no IDE tools and refuses such calls. `callId` names the call for
    /// `onIdeToolCancel`.
    #[napi(ts_type = "(name: string, argumentsJson: string, callId: number) => Promise<string>")]
    pub on_ide_tool: Option<IdeToolFn>,
    /// The runtime gave up on IDE tool call `callId` (its reply timeout passed): stop it (an
    /// `open_diff` closes its diff) and resolve its promise soon. Unknown ids must be ignored.
    #[napi(ts_type = "(callId: number) => void")]
    pub on_ide_tool_cancel: Option<IdeCancelFn>,
}

type IdeToolFn = ThreadsafeFunction<
    FnArgs<(String, String, f64)>,
    fs::FsPromise<String>,
    FnArgs<(String, String, f64)>,
    Status,
    false,
    true,
>;
type IdeCancelFn = ThreadsafeFunction<f64, Unknown<'static>, f64, Status, false, true>;

/// The executor core's `IdeTools` over the `onIdeTool` and `onIdeToolCancel` hooks; emptied by
/// `stop()`.
struct NodeIdeTools(RwLock<Option<Arc<IdeToolFn>>>, RwLock<Option<Arc<IdeCancelFn>>>);

#[async_trait::async_trait]
impl oh_executor::IdeTools for NodeIdeTools {
    async fn call(
        &self,
        call_id: u64,
        name: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> std::result::Result<String, String> {
        let f = self.0.read().unwrap_or_else(|p| p.into_inner()).clone().ok_or("the executor was stopped")?;
        let args = serde_json::Value::Object(arguments.clone()).to_string();
        // A JS number holds every id this executor will ever allocate (counted from 1).
        let promise = f
            .call_async_catch(FnArgs::from((name.to_string(), args, call_id as f64)))
            .await
            .map_err(|e| e.reason.clone())?;
        match promise.0.await {
            Ok(Ok(json)) => Ok(json),
            Ok(Err(e)) => Err(e.message),
            Err(_) => Err("the IDE tool's promise was dropped".into()),
        }
    }

    fn cancel(&self, call_id: u64) {
        let f = self.1.read().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(f) = f {
            let _ = f.call(call_id as f64, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// A JSON hook slot: emptied on `stop()` so that Node can exit.
type JsonSlot = Arc<RwLock<Option<Arc<JsonFn>>>>;

fn notify(slot: &JsonSlot, json: impl FnOnce() -> String) {
    let f = slot.read().ok().and_then(|f| f.clone());
    if let Some(f) = f {
        let _ = f.call(json(), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

struct Inner {
    options: ExecutorOptions,
    /// The conversation's settings from the options (the certificate settings checked).
    settings: SessionSettings,
    /// The JS callbacks, if any (dropped by `stop()`); `None` runs on `LocalFs`.
    js_fs: Option<Arc<fs::NodeFs>>,
    status_fn: RwLock<Option<Arc<StatusFn>>>,
    data_fn: Arc<RwLock<Option<Arc<DataFn>>>>,
    handler: Arc<ExecutorHandler>,
    ide_tools: Option<Arc<NodeIdeTools>>,
    on_action: JsonSlot,
    on_observation: JsonSlot,
    transport: tokio::sync::Mutex<Option<Arc<Transport>>>,
    status: Mutex<(ConnectionState, Option<String>)>,
    /// The failure a `start()` was rejected with (a started transport keeps its own).
    start_failure: Mutex<Option<oh_transport::TransportError>>,
    /// `stop()` was called (so a closed connection was ours to close).
    stopped: std::sync::atomic::AtomicBool,
    executor_id: String,
}

impl Inner {
    /// A status change (the transport reports each change once: no deduplication here).
    fn report(&self, ev: &StatusEvent) {
        *self.status.lock().unwrap_or_else(|p| p.into_inner()) = (ConnectionState::from(ev.state), ev.message.clone());
        let f = self.status_fn.read().ok().and_then(|f| f.clone());
        if let Some(f) = f {
            let _ = f.call(
                FnArgs::from((ConnectionState::from(ev.state), ev.message.clone())),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        }
    }
}

/// The executor core's configuration: the settings' (`oh_front::session`), the environment of the
/// options, terminal bytes to `data_fn`.
fn executor_config(
    settings: &SessionSettings,
    options: &ExecutorOptions,
    data_fn: Arc<RwLock<Option<Arc<DataFn>>>>,
) -> ExecutorConfig {
    let mut config = settings.executor_config();
    if let Some(env) = &options.env {
        let mut pairs: Vec<(String, String)> = env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        pairs.sort();
        config.shell.env = pairs;
    }
    config.shell.output_sink = Some(Arc::new(move |bytes: &[u8]| {
        let f = data_fn.read().ok().and_then(|f| f.clone());
        if let Some(f) = f {
            let _ = f.call(Uint8Array::new(bytes.to_vec()), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }));
    config
}

/// The executor: one bash session, file actions through the JS callbacks (or Rust's own
/// filesystem), and the connection to the runtime.
#[napi]
pub struct Executor {
    inner: Arc<Inner>,
}

#[napi]
impl Executor {
    /// `fs` `null`: file actions use Rust's own filesystem (the headless CLI); VS Code passes
    /// callbacks over `vscode.workspace.fs`.
    #[napi(
        constructor,
        ts_args_type = "options: ExecutorOptions, fs: FsCallbacks | null, hooks?: ExecutorHooks | undefined | null"
    )]
    pub fn new(options: ExecutorOptions, fs: Option<FsCallbacks>, hooks: Option<ExecutorHooks>) -> Result<Self> {
        if !options.workspace_root.starts_with('/') && !options.workspace_root.contains(":\\") {
            return Err(Error::new(
                Status::InvalidArg,
                format!("workspaceRoot must be absolute, got {:?}", options.workspace_root),
            ));
        }
        // Checked here (a wrong setting is the caller's error, not a refused connection).
        let certificate_check =
            oh_transport::CertificateCheck::from_settings(options.ca_file.as_deref(), options.cert_sha256.as_deref())
                .map_err(|e| Error::new(Status::InvalidArg, format!("options.caFile / options.certSha256: {e}")))?;
        let settings = SessionSettings {
            url: options.server_url.clone(),
            conversation: options.conversation_id.clone(),
            workspace: options.workspace_root.clone().into(),
            extra_roots: options.extra_roots.iter().flatten().map(std::path::PathBuf::from).collect(),
            no_change_timeout_secs: options.no_change_timeout_seconds.map(u64::from),
            session_api_key: options.session_api_key.clone(),
            certificate_check,
            client: options
                .client_name
                .clone()
                .unwrap_or_else(|| format!("openhands-vscode-executor/{}", env!("CARGO_PKG_VERSION"))),
        };
        let hooks = hooks.unwrap_or(ExecutorHooks {
            on_terminal_data: None,
            on_log: None,
            on_status: None,
            on_action: None,
            on_observation: None,
            on_ide_tool: None,
            on_ide_tool_cancel: None,
        });
        if let Some(on_log) = hooks.on_log {
            log::set_sink(Some(on_log), dto::level_from(options.log_level.as_deref()));
        }
        let js_fs = fs.map(|f| Arc::new(fs::NodeFs::new(f)));
        let files: Arc<dyn FileSystem> = match &js_fs {
            Some(f) => f.clone(),
            None => Arc::new(LocalFs),
        };
        let data_fn = Arc::new(RwLock::new(hooks.on_terminal_data.map(Arc::new)));
        let cancel = hooks.on_ide_tool_cancel.map(Arc::new);
        let ide_tools =
            hooks.on_ide_tool.map(|f| Arc::new(NodeIdeTools(RwLock::new(Some(Arc::new(f))), RwLock::new(cancel))));
        if ide_tools.is_none() && options.ide_tools.as_ref().is_some_and(|t| !t.is_empty()) {
            return Err(Error::new(
                Status::InvalidArg,
                "options.ideTools needs hooks.onIdeTool to run them".to_string(),
            ));
        }
        let mut config = executor_config(&settings, &options, data_fn.clone());
        config.ide_tools = ide_tools.clone().map(|t| t as Arc<dyn oh_executor::IdeTools>);
        let handler = Arc::new(ExecutorHandler::new(config, files));
        let inner = Inner {
            options,
            settings,
            js_fs,
            status_fn: RwLock::new(hooks.on_status.map(Arc::new)),
            data_fn,
            handler,
            ide_tools,
            on_action: Arc::new(RwLock::new(hooks.on_action.map(Arc::new))),
            on_observation: Arc::new(RwLock::new(hooks.on_observation.map(Arc::new))),
            transport: tokio::sync::Mutex::new(None),
            status: Mutex::new((ConnectionState::Disconnected, None)),
            start_failure: Mutex::new(None),
            stopped: std::sync::atomic::AtomicBool::new(false),
            executor_id: oh_transport::new_uuid(),
        };
        Ok(Executor { inner: Arc::new(inner) })
    }

    /// Start the shell and register with the runtime. Resolves once the runtime's welcome is
    /// accepted; rejects with an `Error` whose `code` is an `ErrorCode` (`ENORUNTIME`, `EAUTH`, ...).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let inner = self.inner.clone();
        errors::coded_promise(env, async move {
            let mut slot = inner.transport.lock().await;
            if slot.is_some() {
                return Ok(());
            }
            let o = &inner.options;
            let mut cfg = inner.settings.transport_config();
            cfg.executor_id = inner.executor_id.clone();
            // Announced only when this host runs them (an empty list is announced as such).
            if inner.ide_tools.is_some() {
                cfg.ide_tools = Some(serde_json::Value::Array(
                    o.ide_tools.iter().flatten().map(dto::IdeToolInfo::to_mcp).collect(),
                ));
            }
            let weak = Arc::downgrade(&inner);
            let sink: oh_transport::StatusSink = Arc::new(move |ev: &StatusEvent| {
                if let Some(i) = weak.upgrade() {
                    i.report(ev);
                }
            });
            // Observers of the transport: the action as it starts, the reply as sent (one serialisation).
            let (on_action, on_observation) = (inner.on_action.clone(), inner.on_observation.clone());
            let observers = Observers {
                on_status: Some(sink),
                on_action: Some(Arc::new(move |ev: &ActionEvent| {
                    notify(&on_action, || serde_json::to_string(ev).unwrap_or_default())
                })),
                on_reply: Some(Arc::new(move |json: &str| notify(&on_observation, || json.to_string()))),
            };
            let transport = Transport::connect_observed(cfg, inner.handler.clone(), observers).await.map_err(|e| {
                let coded = CodedError::from(&e);
                *inner.start_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                coded
            })?;
            *slot = Some(Arc::new(transport));
            Ok(())
        })
    }

    /// Resolves when the connection has ended for good (stopped, replaced by a newer executor,
    /// failed), saying why. Keeps Node alive while connected.
    #[napi]
    pub async fn wait_until_closed(&self) -> Result<Closed> {
        let t = self.inner.transport.lock().await.clone();
        if let Some(t) = &t {
            t.closed().await;
        }
        let message = self.inner.status.lock().unwrap_or_else(|p| p.into_inner()).1.clone();
        let failure = match &t {
            Some(t) => t.close_error(),
            None => self.inner.start_failure.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        };
        let stopped = self.inner.stopped.load(std::sync::atomic::Ordering::SeqCst);
        let (reason, code) = match Ending::of(stopped, failure.as_ref()) {
            Ending::Stopped => (CloseReason::Stopped, None),
            Ending::Replaced => (CloseReason::Replaced, None),
            Ending::Failed(code) => (CloseReason::Failed, Some(ErrorCode::from(code))),
        };
        Ok(Closed { reason, code, message })
    }

    /// Disconnect, kill the shell and its children, and drop every JS callback so Node can exit.
    #[napi]
    pub async fn stop(&self) -> Result<()> {
        let inner = self.inner.clone();
        inner.stopped.store(true, std::sync::atomic::Ordering::SeqCst);
        let transport = inner.transport.lock().await.take();
        if let Some(t) = transport {
            t.shutdown().await;
        }
        inner.handler.shutdown().await;
        inner.on_action.write().unwrap_or_else(|p| p.into_inner()).take();
        inner.on_observation.write().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(t) = &inner.ide_tools {
            t.0.write().unwrap_or_else(|p| p.into_inner()).take();
            t.1.write().unwrap_or_else(|p| p.into_inner()).take();
        }
        if let Some(f) = &inner.js_fs {
            f.dispose();
        }
        let errored = inner.status.lock().unwrap_or_else(|p| p.into_inner()).0 == ConnectionState::Error;
        if !errored {
            inner.report(&StatusEvent {
                state: oh_transport::ConnectionState::Disconnected,
                message: Some("stopped".into()),
            });
        }
        inner.status_fn.write().unwrap_or_else(|p| p.into_inner()).take();
        inner.data_fn.write().unwrap_or_else(|p| p.into_inner()).take();
        Ok(())
    }

    /// The current connection state.
    #[napi(getter)]
    pub fn status(&self) -> ConnectionState {
        self.inner.status.lock().unwrap_or_else(|p| p.into_inner()).0
    }

    /// The message of the last status change (e.g. why the connection was refused).
    #[napi(getter)]
    pub fn status_message(&self) -> Option<String> {
        self.inner.status.lock().unwrap_or_else(|p| p.into_inner()).1.clone()
    }

    /// Sent as `auth.executor_id`; stable for this object's lifetime.
    #[napi(getter)]
    pub fn executor_id(&self) -> String {
        self.inner.executor_id.clone()
    }

    /// Execute one action directly (event_to_dict JSON, with an `id`), without a server; returns
    /// the observation JSON (`cause` = that id). Starts the shell on first use; rejects with code
    /// `ESHELL` when it cannot.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn execute<'env>(&self, env: &'env Env, action_json: String) -> Result<PromiseRaw<'env, String>> {
        let handler = self.inner.handler.clone();
        errors::coded_promise(env, async move {
            let core = handler
                .core()
                .await
                .map_err(|e| CodedError::new(ErrorCode::Shell, format!("cannot start the bash session: {e}")))?;
            let reply = match oh_protocol::decode_action_json(&action_json) {
                Ok(decoded) => core.execute(&decoded.event, &decoded.action).await,
                Err(refusal) => refusal,
            };
            Ok(reply.to_json())
        })
    }
}

/// Route log records to `callback` (or stop logging with `null`), at `level` and above.
#[napi(ts_args_type = "callback: ((level: string, target: string, message: string) => void) | null, level?: string")]
pub fn set_log_handler(callback: Option<log::LogFn>, level: Option<String>) {
    match callback {
        Some(cb) => log::set_sink(Some(cb), dto::level_from(level.as_deref())),
        None => log::clear_sink(),
    }
}

/// The protocol version this build speaks.
#[napi]
pub const PROTOCOL_VERSION: u32 = oh_transport::PROTOCOL_VERSION as u32;
