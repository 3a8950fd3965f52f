//! The executor core: one [`Executor`] owns one persistent bash session and the file actions, and
//! turns each [`ActionEvent`] into the [`ObservationEvent`] OpenHands' action server would return,
//! with `cause` set to the action's id.
//!
//! It knows nothing of sockets or Node: the `oh-executor replay` binary drives it from JSON lines,
//! `oh-transport` from Socket.IO (through an [`ActionHandler`], usually the [`ExecutorHandler`]
//! that starts the core on first use), and `oh-node` from JavaScript.

mod checkpoints;
mod handler;
mod v1;

use std::path::PathBuf;
use std::sync::Arc;

use oh_files::{FileActions, FileSystem};
use oh_protocol::{Action, ActionEvent, ImplSource, Observation, ObservationEvent};
use oh_shell::{BashSession, ShellConfig};

pub use checkpoints::{default_store_dir, CheckpointConfig};
pub use handler::ExecutorHandler;
pub use oh_files::{FsError, LocalFs};
pub use oh_protocol::ActionHandler;
pub use oh_shell::OutputSink;

/// The host's IDE tools (VS Code's language intelligence, editors, diffs; docs/ide-tools.md):
/// runs one tool call and resolves to its MCP `CallToolResult` as JSON text, or to an error
/// message when the host could not run it at all. The executor core only routes the call.
#[async_trait::async_trait]
pub trait IdeTools: Send + Sync {
    /// Run one call; `call_id` names it for [`IdeTools::cancel`] (unique within this executor).
    async fn call(
        &self,
        call_id: u64,
        name: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<String, String>;
    /// The runtime gave up on call `call_id`: stop it (close what it opened, stop waiting) and
    /// let `call` resolve, as cancelled, soon. An unknown or finished call is no error.
    fn cancel(&self, _call_id: u64) {}
}

/// Everything needed to start an executor.
#[derive(Clone)]
pub struct ExecutorConfig {
    /// The workspace root: the shell starts there and the editor is rooted there.
    pub workspace: PathBuf,
    /// Every folder of the workspace, `workspace` first: what a checkpoint captures.
    pub roots: Vec<PathBuf>,
    /// Where checkpoints are stored and what they capture.
    pub checkpoints: CheckpointConfig,
    /// Shell options (no-change timeout, env, terminal mirror).
    pub shell: ShellConfig,
    /// The host's IDE tools; `None` (the headless executor) answers every `call_tool_mcp` with
    /// an ErrorObservation.
    pub ide_tools: Option<Arc<dyn IdeTools>>,
    /// The most bytes a V1 edit's `old_content` + `new_content` may take; above it both are left
    /// out (null). A transport sets its reply limit here: it would drop them anyway, and leaving
    /// them out in the editor spares copying them (docs/v1.md, "Measured"). Default: no limit.
    pub v1_contents_limit: usize,
}

impl ExecutorConfig {
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        let workspace = workspace.into();
        ExecutorConfig {
            shell: ShellConfig::new(workspace.clone()),
            roots: vec![workspace.clone()],
            workspace,
            ide_tools: None,
            checkpoints: CheckpointConfig::from_env(),
            v1_contents_limit: usize::MAX,
        }
    }
}

/// The ErrorObservation text for an IDE tool call that reaches an executor without IDE tools.
pub fn no_ide_tools_message(name: &str) -> String {
    format!(
        "The IDE tool {name:?} needs VS Code: this executor runs without it (headless), so it offers no IDE tools. \
         Use the shell and file editor instead, or run the agent in the VS Code extension."
    )
}

/// Runs actions. Commands are serialised by the session; file actions may run concurrently.
pub struct Executor {
    shell: BashSession,
    files: FileActions,
    /// Where V1's `reset` starts the new shell.
    workspace: PathBuf,
    ide_tools: Option<Arc<dyn IdeTools>>,
    /// [`ExecutorConfig::v1_contents_limit`].
    v1_contents_limit: usize,
    checkpoints: checkpoints::Checkpoints,
    /// IDE tool calls running now: delegated action id -> host call id (for `cancel`).
    ide_calls: std::sync::Mutex<std::collections::HashMap<i64, u64>>,
    next_ide_call: std::sync::atomic::AtomicU64,
}

impl Executor {
    /// Start the bash session and set up the file actions over `fs`.
    pub async fn start(config: ExecutorConfig, fs: Arc<dyn FileSystem>) -> std::io::Result<Self> {
        let shell = BashSession::start(config.shell.clone()).await?;
        let files = FileActions::new(fs, config.workspace.clone());
        let checkpoints = checkpoints::Checkpoints::new(config.roots.clone(), &config.checkpoints);
        Ok(Executor {
            shell,
            files,
            workspace: config.workspace,
            ide_tools: config.ide_tools,
            v1_contents_limit: config.v1_contents_limit,
            checkpoints,
            ide_calls: Default::default(),
            next_ide_call: std::sync::atomic::AtomicU64::new(1),
        })
    }

    /// Execute one decoded action (`oh_protocol::decode_delegated` or `decode_action_json`, the
    /// only places JSON becomes an action) and build the reply (`cause` = the event's id).
    pub async fn execute(&self, event: &ActionEvent, action: &Action) -> ObservationEvent {
        let observation = self.observe_as(event.id, action).await;
        Self::reply_to(event, observation)
    }

    fn reply_to(event: &ActionEvent, observation: Observation) -> ObservationEvent {
        let mut reply = ObservationEvent::reply(event.id, observation);
        reply.tool_call_metadata = event.tool_call_metadata.clone();
        reply
    }

    /// Execute one typed action and return the bare observation.
    pub async fn observe(&self, action: &Action) -> Observation {
        self.observe_as(None, action).await
    }

    /// The runtime gave up on delegated action `id`: an IDE tool call still running is cancelled
    /// in the host (true); anything else (unknown, finished, not an IDE call) is left alone.
    /// Commands are not cancelled this way: they end at their own timeout.
    pub fn cancel(&self, id: i64) -> bool {
        let call_id = self.ide_calls.lock().unwrap_or_else(|p| p.into_inner()).get(&id).copied();
        match (call_id, &self.ide_tools) {
            (Some(call_id), Some(tools)) => {
                tracing::info!(id, call_id, "IDE tool call cancelled by the runtime");
                tools.cancel(call_id);
                true
            }
            _ => false,
        }
    }

    /// `observe`, for the delegated action `id` (when it has one: the key of `cancel`).
    async fn observe_as(&self, id: Option<i64>, action: &Action) -> Observation {
        match action {
            Action::Run(run) => self.shell.execute(run).await,
            Action::Read(read) => self.files.read(read, &self.shell.cwd()).await,
            Action::Write(write) => self.files.write(write, &self.shell.cwd()).await,
            Action::Edit(edit) if edit.impl_source != ImplSource::OhAci => Observation::error(format!(
                "LLM-based file edits (impl_source \"{}\") are not executed by this runtime: the agent must send OH_ACI edits (str_replace_editor).",
                edit.impl_source.as_str()
            )),
            Action::Edit(edit) => self.files.edit(edit).await,
            // OpenHands V1 tools: the same session and editor, V1's observations (v1.rs).
            Action::V1Terminal(terminal) => self.v1_terminal(terminal).await,
            Action::V1FileEditor(editor) => self.v1_file_editor(editor).await,
            Action::V1Interrupt => self.v1_interrupt(),
            Action::McpTool(call) => self.ide_tool(id, call).await,
            Action::Checkpoint(c) => self.checkpoints.run(c).await,
        }
    }

    /// An IDE tool call: handed to the host; its reply is OpenHands' `MCPObservation`.
    async fn ide_tool(&self, id: Option<i64>, call: &oh_protocol::McpToolAction) -> Observation {
        let Some(tools) = &self.ide_tools else {
            return Observation::error(no_ide_tools_message(&call.name));
        };
        let call_id = self.next_ide_call.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Removed when the call ends, however it ends (also when this future is dropped).
        let _running = id.map(|id| RunningIdeCall::new(&self.ide_calls, id, call_id));
        match tools.call(call_id, &call.name, &call.arguments).await {
            Ok(content) => Observation {
                content,
                extras: oh_protocol::Extras::Mcp { name: call.name.clone(), arguments: call.arguments.clone() },
            },
            Err(e) => Observation::error(format!("The IDE tool {:?} failed: {e}", call.name)),
        }
    }

    /// Change the no-change (soft) timeout of the running session, e.g. when a runtime's welcome
    /// asks for another `NO_CHANGE_TIMEOUT_SECONDS` after the shell has started.
    pub fn set_no_change_timeout(&self, secs: u64) {
        self.shell.set_no_change_timeout(secs);
    }

    /// The folder the checkpoints are stored in.
    pub fn checkpoint_dir(&self) -> &std::path::Path {
        self.checkpoints.dir()
    }

    /// The shell's current working directory.
    pub fn cwd(&self) -> String {
        self.shell.cwd()
    }

    /// Stop the shell and every process it started.
    pub async fn shutdown(&self) {
        self.shell.close().await;
    }
}

/// An entry of `Executor::ide_calls` for as long as the call runs.
struct RunningIdeCall<'a> {
    calls: &'a std::sync::Mutex<std::collections::HashMap<i64, u64>>,
    id: i64,
    call_id: u64,
}

impl<'a> RunningIdeCall<'a> {
    fn new(calls: &'a std::sync::Mutex<std::collections::HashMap<i64, u64>>, id: i64, call_id: u64) -> Self {
        calls.lock().unwrap_or_else(|p| p.into_inner()).insert(id, call_id);
        RunningIdeCall { calls, id, call_id }
    }
}

impl Drop for RunningIdeCall<'_> {
    fn drop(&mut self) {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        // Only this call's entry: a later call may reuse the id (another runtime session).
        if calls.get(&self.id) == Some(&self.call_id) {
            calls.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod ide_tool_tests {
    use super::*;
    use serde_json::{json, Map, Value};

    /// A host whose one tool echoes its arguments, and which fails `broken`.
    struct EchoTools;

    #[async_trait::async_trait]
    impl IdeTools for EchoTools {
        async fn call(&self, _call_id: u64, name: &str, arguments: &Map<String, Value>) -> Result<String, String> {
            match name {
                "broken" => Err("the host went away".into()),
                _ => Ok(json!({"content": [{"type": "text", "text": format!("{name} {}", Value::Object(arguments.clone()))}], "isError": false}).to_string()),
            }
        }
    }

    async fn run(ide_tools: Option<Arc<dyn IdeTools>>, payload: Value) -> Value {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ExecutorConfig::new(dir.path());
        config.ide_tools = ide_tools;
        let ex = Executor::start(config, Arc::new(LocalFs)).await.unwrap();
        let decoded = oh_protocol::decode_action_json(&payload.to_string()).unwrap();
        let reply = ex.execute(&decoded.event, &decoded.action).await;
        ex.shutdown().await;
        serde_json::from_str(&reply.to_json()).unwrap()
    }

    #[tokio::test]
    async fn an_ide_tool_call_goes_to_the_host_and_comes_back_as_an_mcp_observation() {
        let r = run(
            Some(Arc::new(EchoTools)),
            json!({"id": 4, "action": "call_tool_mcp", "args": {"name": "hover", "arguments": {"line": 2}}}),
        )
        .await;
        assert_eq!(r["observation"], "mcp");
        assert_eq!(r["cause"], 4);
        assert_eq!(r["extras"], json!({"name": "hover", "arguments": {"line": 2}}));
        let content: Value = serde_json::from_str(r["content"].as_str().unwrap()).unwrap();
        assert_eq!(content["content"][0]["text"], "hover {\"line\":2}");
    }

    #[tokio::test]
    async fn a_host_failure_is_an_error_observation_naming_the_tool() {
        let r = run(Some(Arc::new(EchoTools)), json!({"id": 5, "action": "call_tool_mcp", "args": {"name": "broken"}}))
            .await;
        assert_eq!(r["observation"], "error");
        assert_eq!(r["content"], "The IDE tool \"broken\" failed: the host went away");
    }

    #[tokio::test]
    async fn without_ide_tools_a_call_is_a_clear_error() {
        let r =
            run(None, json!({"id": 6, "action": "call_tool_mcp", "args": {"name": "diagnostics", "arguments": {}}}))
                .await;
        assert_eq!(r["observation"], "error");
        assert_eq!(r["content"], no_ide_tools_message("diagnostics"));
        assert!(r["content"].as_str().unwrap().contains("needs VS Code"));
    }

    /// A host whose one tool waits until it is cancelled, then resolves as cancelled.
    struct WaitingTools(tokio::sync::Notify, std::sync::Mutex<Vec<u64>>);

    #[async_trait::async_trait]
    impl IdeTools for WaitingTools {
        async fn call(&self, call_id: u64, name: &str, _arguments: &Map<String, Value>) -> Result<String, String> {
            self.1.lock().unwrap().push(call_id);
            self.0.notified().await;
            Ok(json!({"content": [{"type": "text", "text": format!("{name} cancelled")}], "isError": true}).to_string())
        }
        fn cancel(&self, _call_id: u64) {
            self.0.notify_one();
        }
    }

    #[tokio::test]
    async fn a_running_ide_call_is_cancelled_by_its_action_id_and_unknown_ids_are_no_ops() {
        let dir = tempfile::tempdir().unwrap();
        let tools = Arc::new(WaitingTools(tokio::sync::Notify::new(), Default::default()));
        let mut config = ExecutorConfig::new(dir.path());
        config.ide_tools = Some(tools.clone());
        let ex = Arc::new(Executor::start(config, Arc::new(LocalFs)).await.unwrap());
        assert!(!ex.cancel(9), "nothing runs yet: a cancel that arrives first is a no-op");
        let decoded = oh_protocol::decode_action_json(
            &json!({"id": 9, "action": "call_tool_mcp", "args": {"name": "open_diff"}}).to_string(),
        )
        .unwrap();
        let running = tokio::spawn({
            let ex = ex.clone();
            async move { ex.execute(&decoded.event, &decoded.action).await }
        });
        while tools.1.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        assert!(!ex.cancel(8), "another id is not cancelled");
        assert!(ex.cancel(9));
        let reply: Value = serde_json::from_str(
            &tokio::time::timeout(std::time::Duration::from_secs(10), running).await.unwrap().unwrap().to_json(),
        )
        .unwrap();
        assert_eq!(reply["cause"], 9);
        assert!(reply["content"].as_str().unwrap().contains("open_diff cancelled"));
        assert!(!ex.cancel(9), "a finished call is no longer cancellable");
        ex.shutdown().await;
    }
}
