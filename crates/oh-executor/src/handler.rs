//! [`ExecutorHandler`]: the [`ActionHandler`] (defined in `oh-protocol`, so that a transport does
//! not depend on this crate) over the executor core, started on first use.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use oh_files::FileSystem;
use oh_protocol::{ActionHandler, Delegated, Observation, ObservationEvent};
use serde_json::{Map, Value};

use crate::{Executor, ExecutorConfig};

/// [`ActionHandler`] over the executor core, started on first use: when a transport registers
/// first, the welcome's `session` settings (`no_change_timeout_seconds`) go into the shell's
/// configuration before the bash session starts.
pub struct ExecutorHandler {
    config: Mutex<ExecutorConfig>,
    fs: Arc<dyn FileSystem>,
    core: tokio::sync::Mutex<Option<Arc<Executor>>>,
}

impl ExecutorHandler {
    pub fn new(config: ExecutorConfig, fs: Arc<dyn FileSystem>) -> Self {
        ExecutorHandler { config: Mutex::new(config), fs, core: tokio::sync::Mutex::new(None) }
    }

    /// The running core, started now if needed.
    pub async fn core(&self) -> std::io::Result<Arc<Executor>> {
        let mut slot = self.core.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let config = self.config.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let core = Arc::new(Executor::start(config, self.fs.clone()).await?);
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
    async fn execute(&self, job: &Delegated) -> ObservationEvent {
        match self.core().await {
            Ok(core) => core.execute(&job.event, &job.action).await,
            Err(e) => {
                ObservationEvent::reply(Some(job.id), Observation::error(format!("Cannot start the bash session: {e}")))
            }
        }
    }

    async fn cancel(&self, id: i64) {
        let core = self.core.lock().await.clone();
        if let Some(core) = core {
            core.cancel(id);
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
