//! The executor core: one [`Executor`] owns one persistent bash session and the file actions, and
//! turns each [`ActionEvent`] into the [`ObservationEvent`] OpenHands' action server would return,
//! with `cause` set to the action's id.
//!
//! It knows nothing of sockets or Node: the `oh-executor replay` binary drives it from JSON lines,
//! `oh-transport` from Socket.IO (through an [`ActionHandler`], usually the [`ExecutorHandler`]
//! that starts the core on first use), and `oh-node` from JavaScript.

mod handler;
mod v1;

use std::path::PathBuf;
use std::sync::Arc;

use oh_files::{FileActions, FileSystem};
use oh_protocol::{Action, ActionEvent, ImplSource, Observation, ObservationEvent};
use oh_shell::{BashSession, ShellConfig};

pub use handler::{ActionHandler, ExecutorHandler};
pub use oh_files::{LocalFs, FsError};
pub use oh_shell::OutputSink;

/// Everything needed to start an executor.
#[derive(Clone)]
pub struct ExecutorConfig {
    /// The workspace root: the shell starts there and the editor is rooted there.
    pub workspace: PathBuf,
    /// Shell options (no-change timeout, env, terminal mirror).
    pub shell: ShellConfig,
}

impl ExecutorConfig {
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        let workspace = workspace.into();
        ExecutorConfig { shell: ShellConfig::new(workspace.clone()), workspace }
    }
}

/// Runs actions. Commands are serialised by the session; file actions may run concurrently.
pub struct Executor {
    shell: BashSession,
    files: FileActions,
    /// Where V1's `reset` starts the new shell.
    workspace: PathBuf,
}

impl Executor {
    /// Start the bash session and set up the file actions over `fs`.
    pub async fn start(config: ExecutorConfig, fs: Arc<dyn FileSystem>) -> std::io::Result<Self> {
        let shell = BashSession::start(config.shell.clone()).await?;
        let files = FileActions::new(fs, config.workspace.clone());
        Ok(Executor { shell, files, workspace: config.workspace })
    }

    /// Execute one action event and build the reply (`cause` = the action's id).
    pub async fn execute(&self, event: &ActionEvent) -> ObservationEvent {
        let observation = match event.parse() {
            Ok(action) => self.observe(&action).await,
            Err(e) => {
                tracing::warn!(action = %event.action, id = ?event.id, error = %e, "refused action");
                Observation::error(e.to_string())
            }
        };
        Self::reply_to(event, observation)
    }

    /// Execute an action already parsed (by `oh_protocol::decode_delegated`) and build the reply.
    pub async fn execute_parsed(&self, event: &ActionEvent, action: &Action) -> ObservationEvent {
        let observation = self.observe(action).await;
        Self::reply_to(event, observation)
    }

    fn reply_to(event: &ActionEvent, observation: Observation) -> ObservationEvent {
        let mut reply = ObservationEvent::reply(event.id, observation);
        reply.tool_call_metadata = event.tool_call_metadata.clone();
        reply
    }

    /// Execute one typed action and return the bare observation.
    pub async fn observe(&self, action: &Action) -> Observation {
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
        }
    }

    /// Change the no-change (soft) timeout of the running session, e.g. when a runtime's welcome
    /// asks for another `NO_CHANGE_TIMEOUT_SECONDS` after the shell has started.
    pub fn set_no_change_timeout(&self, secs: u64) {
        self.shell.set_no_change_timeout(secs);
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
