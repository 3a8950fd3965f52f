//! STUB: the bash session. See the crate description.
use std::path::PathBuf;
use std::sync::Arc;

use oh_protocol::{CmdOutputMetadata, CmdRunAction, Observation};

/// A sink for the raw bytes the shell prints (the VS Code terminal mirror).
pub type OutputSink = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// How to start a session.
#[derive(Clone)]
pub struct ShellConfig {
    /// Initial working directory.
    pub work_dir: PathBuf,
    /// Seconds without new output before a non-blocking command returns (`NO_CHANGE_TIMEOUT_SECONDS`).
    pub no_change_timeout_secs: u64,
    /// Extra environment for the shell.
    pub env: Vec<(String, String)>,
    /// Called with every chunk of raw PTY output.
    pub output_sink: Option<OutputSink>,
}

impl ShellConfig {
    pub fn new(work_dir: impl Into<PathBuf>) -> Self {
        ShellConfig { work_dir: work_dir.into(), no_change_timeout_secs: 10, env: Vec::new(), output_sink: None }
    }
}

/// One persistent bash.
pub struct BashSession {
    cwd: std::sync::Mutex<String>,
}

impl BashSession {
    pub async fn start(cfg: ShellConfig) -> std::io::Result<Self> {
        Ok(BashSession { cwd: std::sync::Mutex::new(cfg.work_dir.display().to_string()) })
    }

    pub async fn execute(&self, action: &CmdRunAction) -> Observation {
        Observation::cmd_output("", action.command.trim(), CmdOutputMetadata::default(), action.hidden)
    }

    pub fn cwd(&self) -> String {
        self.cwd.lock().expect("cwd lock").clone()
    }

    pub async fn close(&self) {}
}
