//! The `checkpoint_*` actions: workspace checkpoints (oh-checkpoint) over the executor's roots,
//! in a store outside the workspace (docs/checkpoints.md).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use oh_checkpoint::{Settings, Store};
use oh_protocol::checkpoint::CheckpointAction;
use oh_protocol::{Extras, Observation};
use serde_json::{json, Value};

/// Where checkpoints are stored and what they capture.
#[derive(Clone, Debug)]
pub struct CheckpointConfig {
    /// The store folder; `None`: [`default_store_dir`] for the executor's roots and conversation.
    pub dir: Option<PathBuf>,
    /// The conversation the executor serves: with the default folder, each conversation has a
    /// store of its own, so two conversations in one folder (running at once, or one after the
    /// other) never list, prune or restore each other's checkpoints. The front ends set it.
    pub conversation: Option<String>,
    pub settings: Settings,
}

impl CheckpointConfig {
    /// The defaults, overridden by `OH_CHECKPOINT_DIR`, `OH_CHECKPOINT_EXCLUDES` (comma-separated
    /// gitignore patterns; empty: none), `OH_CHECKPOINT_MAX_FILE_BYTES` and
    /// `OH_CHECKPOINT_MAX_STORE_BYTES` (0: unbounded).
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok();
        let mut settings = Settings::default();
        if let Some(ex) = var("OH_CHECKPOINT_EXCLUDES") {
            settings.excludes = ex.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
        }
        if let Some(n) = var("OH_CHECKPOINT_MAX_FILE_BYTES").and_then(|v| v.trim().parse().ok()) {
            settings.max_file_bytes = n;
        }
        if let Some(n) = var("OH_CHECKPOINT_MAX_STORE_BYTES").and_then(|v| v.trim().parse::<u64>().ok()) {
            settings.max_store_bytes = (n > 0).then_some(n);
        }
        CheckpointConfig {
            dir: var("OH_CHECKPOINT_DIR").filter(|d| !d.is_empty()).map(PathBuf::from),
            conversation: None,
            settings,
        }
    }
}

/// `$XDG_STATE_HOME/openhands-vscode-runtime/checkpoints/<key>` (`~/.local/state/...` without
/// XDG_STATE_HOME), the key naming the set of roots and the conversation
/// ([`oh_checkpoint::store_key`]) so neither two workspaces nor two conversations share a store.
pub fn default_store_dir(roots: &[PathBuf], conversation: Option<&str>) -> PathBuf {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".local/state"));
    state.join("openhands-vscode-runtime/checkpoints").join(oh_checkpoint::store_key(roots, conversation))
}

/// The store as this executor last read or wrote it, and the identity of its `catalog.json` then.
struct Loaded {
    store: Store,
    catalog: Option<CatalogStamp>,
}

/// Inode, size and modification time of `catalog.json`: every save replaces the file (a rename),
/// so another process's save changes the inode.
type CatalogStamp = (u64, u64, std::time::SystemTime);

fn catalog_stamp(dir: &Path) -> Option<CatalogStamp> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(dir.join("catalog.json")).ok()?;
    Some((md.ino(), md.len(), md.modified().ok()?))
}

/// The store, opened on first use; its operations are blocking file I/O, run off the async workers.
/// Each operation holds an exclusive lock on the store's `lock` file and reads the catalog again
/// when another process saved it since: a folder given by `OH_CHECKPOINT_DIR` may be shared by
/// several executors, and without the lock each would save its own catalog over the others'.
pub(crate) struct Checkpoints {
    roots: Vec<PathBuf>,
    dir: PathBuf,
    settings: Settings,
    store: Arc<Mutex<Option<Loaded>>>,
}

impl Checkpoints {
    pub(crate) fn new(roots: Vec<PathBuf>, config: &CheckpointConfig) -> Self {
        let dir = config.dir.clone().unwrap_or_else(|| default_store_dir(&roots, config.conversation.as_deref()));
        Checkpoints { roots, dir, settings: config.settings.clone(), store: Arc::new(Mutex::new(None)) }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) async fn run(&self, action: &CheckpointAction) -> Observation {
        let (store, roots, dir, settings, action) =
            (self.store.clone(), self.roots.clone(), self.dir.clone(), self.settings.clone(), action.clone());
        let op = action.op();
        let outcome = tokio::task::spawn_blocking(move || {
            let mut guard = store.lock().unwrap_or_else(|p| p.into_inner());
            std::fs::create_dir_all(&dir).map_err(|e| oh_checkpoint::Error::Io { path: dir.clone(), source: e })?;
            let lock_path = dir.join("lock");
            let lock = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
                .and_then(|f| f.lock().map(|()| f))
                .map_err(|e| oh_checkpoint::Error::Io { path: lock_path, source: e })?;
            let now = catalog_stamp(&dir);
            if guard.as_ref().is_none_or(|l| l.catalog != now) {
                *guard = Some(Loaded { store: Store::open(&dir, settings)?, catalog: now });
            }
            let loaded = guard.as_mut().expect("opened above");
            let result = perform(&mut loaded.store, &roots, &action);
            loaded.catalog = catalog_stamp(&dir);
            drop(lock);
            result
        })
        .await;
        match outcome {
            Ok(Ok((content, result))) => {
                Observation { content, extras: Extras::Checkpoint { op: op.to_string(), result } }
            }
            Ok(Err(e)) => Observation::error(format!("checkpoint_{op} failed: {e}")),
            Err(e) => Observation::error(format!("checkpoint_{op} failed: {e}")),
        }
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("checkpoint types serialise")
}

/// One operation: the text a conversation shows and the JSON result a UI reads.
fn perform(store: &mut Store, roots: &[PathBuf], action: &CheckpointAction) -> oh_checkpoint::Result<(String, Value)> {
    Ok(match action {
        CheckpointAction::Take { label, before_message } => {
            let before = before_message.as_ref().map(|b| oh_checkpoint::BeforeMessage {
                conversation_id: b.conversation_id.clone(),
                message: b.message,
            });
            let s = store.take_before(roots, label, before)?;
            let text = format!(
                "Checkpoint {} taken: {} files ({} bytes) in {} folder(s), {} path(s) not captured.",
                s.id,
                s.files,
                s.bytes,
                s.roots.len(),
                s.skipped
            );
            (text, to_json(&s))
        }
        CheckpointAction::List => {
            let list = store.list();
            (
                format!("{} checkpoint(s) kept.", list.len()),
                json!({"checkpoints": to_json(&list), "store": store.dir(), "store_bytes": store.size()}),
            )
        }
        CheckpointAction::Plan { id } => {
            let plan = store.plan(*id)?;
            let text = format!(
                "Restoring checkpoint {id} would change {} path(s) and leave {} alone.",
                plan.changes.len(),
                plan.left.len()
            );
            (text, to_json(&plan))
        }
        CheckpointAction::Restore { id, skip } => {
            let skip: Vec<PathBuf> = skip.iter().map(PathBuf::from).collect();
            let report = store.restore(*id, &skip)?;
            let text = format!(
                "Restored checkpoint {id}: {} change(s) applied, {} path(s) left alone. Checkpoint {} holds the files as they were before (restore it to undo).",
                report.applied.len(),
                report.left.len(),
                report.undo_checkpoint
            );
            (text, to_json(&report))
        }
        CheckpointAction::Blob { hash } => {
            let bytes = store.read_blob(hash)?;
            let size = bytes.len();
            match String::from_utf8(bytes) {
                Ok(text) => (format!("{size} bytes of text."), json!({"hash": hash, "size": size, "text": text})),
                Err(_) => {
                    (format!("{size} bytes, not text."), json!({"hash": hash, "size": size, "text": Value::Null}))
                }
            }
        }
    })
}
