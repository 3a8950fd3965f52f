//! File actions over an async filesystem trait.
//!
//! Every byte the executor reads or writes goes through [`FileSystem`]; [`LocalFs`] implements it
//! on tokio, and the Node binding implements it with JS callbacks (`vscode.workspace.fs`).
mod fs;
pub use fs::{DirEntry, FileKind, FileStat, FileSystem, FsError, LocalFs};

use std::path::PathBuf;
use std::sync::Arc;

use oh_protocol::{FileEditAction, FileReadAction, FileWriteAction, Observation};

/// The file half of the action execution server (read, write, OH_ACI edit), with the editor's
/// undo history.
pub struct FileActions {
    #[allow(dead_code)]
    fs: Arc<dyn FileSystem>,
    #[allow(dead_code)]
    workspace_root: PathBuf,
}

impl FileActions {
    pub fn new(fs: Arc<dyn FileSystem>, workspace_root: impl Into<PathBuf>) -> Self {
        FileActions { fs, workspace_root: workspace_root.into() }
    }

    /// `FileReadAction`; relative paths resolve against the shell's cwd.
    pub async fn read(&self, _action: &FileReadAction, _shell_cwd: &str) -> Observation {
        Observation::error("not implemented")
    }

    /// `FileWriteAction`; relative paths resolve against the shell's cwd.
    pub async fn write(&self, _action: &FileWriteAction, _shell_cwd: &str) -> Observation {
        Observation::error("not implemented")
    }

    /// `FileEditAction` (OH_ACI).
    pub async fn edit(&self, _action: &FileEditAction) -> Observation {
        Observation::error("not implemented")
    }
}
