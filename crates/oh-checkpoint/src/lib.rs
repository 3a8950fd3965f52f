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

/// A short name for a set of root folders (16 hex digits of a SHA-256 over their paths), for a
/// store folder per workspace.
pub fn roots_key(roots: &[std::path::PathBuf]) -> String {
    let joined: Vec<u8> =
        roots.iter().flat_map(|r| r.to_string_lossy().into_owned().into_bytes().into_iter().chain([0u8])).collect();
    store::sha256_hex(&joined)[..16].to_string()
}

/// The store folder's name for `roots` and, when given, one conversation: [`roots_key`], then
/// `-` and the conversation id when it is a plain name (letters, digits, `-`, `_`, at most 64;
/// OpenHands' ids are hex), else 16 hex digits of its SHA-256.
pub fn store_key(roots: &[std::path::PathBuf], conversation: Option<&str>) -> String {
    let key = roots_key(roots);
    match conversation {
        None => key,
        Some(c)
            if !c.is_empty()
                && c.len() <= 64
                && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
        {
            format!("{key}-{c}")
        }
        Some(c) => format!("{key}-{}", &store::sha256_hex(c.as_bytes())[..16]),
    }
}
