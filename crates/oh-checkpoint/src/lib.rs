//! Workspace checkpoints: the state of N root folders (files with their bytes and modes,
//! symlinks, folders, and by their absence deletions), kept in a content-addressed store outside
//! the workspace, and restored through a plan that can be shown before it is applied.
//!
//! It knows nothing of sockets, Node or VS Code; `oh-executor` drives it (docs/checkpoints.md).
//! Unix only (modes, inodes and symlinks are read through `std::os::unix`).

mod model;
mod restore;
mod store;

pub use model::*;
pub use store::{PruneReport, Settings, Store, DEFAULT_EXCLUDES};
