//! What a checkpoint records, what a restore plan says, and the errors.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One captured path, relative to its root (components joined by `/`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A regular file: the SHA-256 of its bytes (the blob's name in the store), its size and its
    /// permission bits (`mode & 0o7777`).
    File { hash: String, size: u64, mode: u32 },
    /// A symbolic link: its target as written, never followed.
    Symlink { target: String },
    /// A directory (empty ones too): its permission bits.
    Dir { mode: u32 },
}

impl Entry {
    pub fn kind(&self) -> &'static str {
        match self {
            Entry::File { .. } => "file",
            Entry::Symlink { .. } => "symlink",
            Entry::Dir { .. } => "dir",
        }
    }
}

/// Why a path under a root is not in a checkpoint although the ignore rules did not exclude it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SkipReason {
    /// Larger than `Settings::max_file_bytes`.
    TooLarge { size: u64, cap: u64 },
    /// A FIFO, socket or device node: nothing to copy.
    Special,
    /// The name or link target is not UTF-8 (the manifest is JSON text).
    NotUtf8,
    /// Reading it failed (permissions, vanished while scanning, ...).
    Unreadable { error: String },
}

/// A path that was seen but not captured, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub path: String,
    #[serde(flatten)]
    pub reason: SkipReason,
}

/// The state of one root folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootSnapshot {
    /// The root as captured (canonical, absolute).
    pub root: PathBuf,
    pub entries: BTreeMap<String, Entry>,
    pub skipped: Vec<Skipped>,
}

/// The user message a checkpoint was taken before: its conversation and its number there (the
/// event id in V0, the count of user messages in V1; docs/checkpoints.md). A revert finds the
/// checkpoint by it, not by reading its label.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeforeMessage {
    pub conversation_id: String,
    pub message: u64,
}

/// A full checkpoint: every root's state. A path absent from `entries` did not exist (or was
/// ignored): that is how deletions between checkpoints are recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub id: u64,
    pub label: String,
    /// Set when the checkpoint precedes a user message (absent in stores written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_message: Option<BeforeMessage>,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
    pub roots: Vec<RootSnapshot>,
}

/// What `list()` shows without loading manifests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub id: u64,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_message: Option<BeforeMessage>,
    pub created_ms: u64,
    pub roots: Vec<PathBuf>,
    /// Regular files captured.
    pub files: u64,
    /// Their total size (before deduplication).
    pub bytes: u64,
    /// Paths seen but not captured (see the manifest's `skipped` for each one and why).
    pub skipped: u64,
    /// Files read and hashed to take it (the others' stamps matched the index).
    #[serde(default)]
    pub hashed: u64,
}

/// What a restore does to one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Absent now, present in the checkpoint.
    Create,
    /// Same kind, other content or link target (and maybe mode).
    Modify,
    /// Same content, other permission bits.
    Mode,
    /// A file where the checkpoint has a folder, a link where it has a file, ...
    Replace,
    /// Present now, absent from the checkpoint.
    Delete,
}

/// One change in a restore plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The root folder (as recorded in the checkpoint).
    pub root: PathBuf,
    /// Relative to `root`.
    pub path: String,
    pub kind: ChangeKind,
    /// The path now (`None` when absent). Hashes name blobs of the current state only after a
    /// restore took its safety checkpoint; in a plan they let a UI ask for a diff.
    pub now: Option<Entry>,
    /// The path in the checkpoint (`None` for a delete).
    pub then: Option<Entry>,
}

impl Change {
    pub fn abs_path(&self) -> PathBuf {
        self.root.join(&self.path)
    }
}

/// A path a restore leaves as it is, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Left {
    pub path: PathBuf,
    pub why: String,
}

/// What `plan()` returns: the changes a restore would apply, and what it would leave alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub checkpoint: u64,
    pub changes: Vec<Change>,
    /// Files a restore cannot handle safely (e.g. a new file too large to keep a copy of, so
    /// deleting it could not be undone).
    pub left: Vec<Left>,
}

/// What `restore()` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreReport {
    pub checkpoint: u64,
    /// The checkpoint of the state just before the restore: restoring it undoes the restore.
    pub undo_checkpoint: u64,
    pub applied: Vec<Change>,
    /// Paths left alone: dirty in an editor, not safe to write, a folder still holding ignored
    /// files, a write that failed.
    pub left: Vec<Left>,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("no checkpoint {0}")]
    NoSuchCheckpoint(u64),
    #[error("the checkpoint store is damaged: {0}")]
    Corrupt(String),
    #[error("no root folders to capture")]
    NoRoots,
}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}
