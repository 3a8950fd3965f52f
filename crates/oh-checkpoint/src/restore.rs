//! Restore: the plan (what would change) and its application, after a checkpoint of the state
//! being replaced so that the restore itself can be undone.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::model::*;
use crate::store::{write_atomic, Store};

fn depth(path: &str) -> usize {
    path.matches('/').count()
}

/// Every folder between `root` and `rel`'s last component is a real folder (not a symlink, which
/// could lead a write out of the roots).
fn parents_are_real_dirs(root: &Path, rel: &str) -> bool {
    let mut at = root.to_path_buf();
    let mut parts: Vec<&str> = rel.split('/').collect();
    parts.pop();
    for part in parts {
        if part.is_empty() || part == "." || part == ".." {
            return false;
        }
        at.push(part);
        match fs::symlink_metadata(&at) {
            Ok(md) if md.file_type().is_dir() => {}
            _ => return false,
        }
    }
    true
}

/// A path is safe to name when it has no `..`, no empty part and is not absolute (a manifest is
/// data from disk: never let it point a write elsewhere).
fn well_formed(rel: &str) -> bool {
    !rel.is_empty() && !rel.starts_with('/') && rel.split('/').all(|p| !p.is_empty() && p != "." && p != "..")
}

/// The changes that turn `now` into `then`, root by root.
pub(crate) fn diff(then: &Checkpoint, now: &[RootSnapshot]) -> Plan {
    let mut changes = Vec::new();
    let mut left = Vec::new();
    for (target, current) in then.roots.iter().zip(now) {
        let root = &target.root;
        let not_captured_then: HashMap<&str, &SkipReason> =
            target.skipped.iter().map(|s| (s.path.as_str(), &s.reason)).collect();
        let not_captured_now: HashMap<&str, &SkipReason> =
            current.skipped.iter().map(|s| (s.path.as_str(), &s.reason)).collect();
        for (path, t) in &target.entries {
            let change = |kind, now: Option<&Entry>| Change {
                root: root.clone(),
                path: path.clone(),
                kind,
                now: now.cloned(),
                then: Some(t.clone()),
            };
            match current.entries.get(path) {
                None if not_captured_now.contains_key(path.as_str()) => left.push(Left {
                    path: root.join(path),
                    why: format!(
                        "not restored: no copy of its current version can be kept ({}), so restoring it could not be undone",
                        describe(not_captured_now[path.as_str()])
                    ),
                }),
                None => changes.push(change(ChangeKind::Create, None)),
                Some(c) if c == t => {}
                Some(c) => {
                    let kind = match (c, t) {
                        (Entry::File { hash: a, .. }, Entry::File { hash: b, .. }) if a == b => ChangeKind::Mode,
                        (Entry::File { .. }, Entry::File { .. }) | (Entry::Symlink { .. }, Entry::Symlink { .. }) => ChangeKind::Modify,
                        (Entry::Dir { .. }, Entry::Dir { .. }) => ChangeKind::Mode,
                        _ => ChangeKind::Replace,
                    };
                    changes.push(change(kind, Some(c)));
                }
            }
        }
        for (path, c) in &current.entries {
            if target.entries.contains_key(path) {
                continue;
            }
            if let Some(reason) = not_captured_then.get(path.as_str()) {
                left.push(Left {
                    path: root.join(path),
                    why: format!("not in the checkpoint ({}), left as it is", describe(reason)),
                });
                continue;
            }
            changes.push(Change {
                root: root.clone(),
                path: path.clone(),
                kind: ChangeKind::Delete,
                now: Some(c.clone()),
                then: None,
            });
        }
        for s in &current.skipped {
            if s.path.is_empty() || target.entries.contains_key(&s.path) {
                continue;
            }
            if let Some(reason) = not_captured_then.get(s.path.as_str()) {
                left.push(Left {
                    path: root.join(&s.path),
                    why: format!("not in the checkpoint ({}), left as it is", describe(reason)),
                });
            } else {
                left.push(Left {
                    path: root.join(&s.path),
                    why: format!(
                        "not deleted: no copy of it can be kept ({}), so deleting it could not be undone",
                        describe(&s.reason)
                    ),
                });
            }
        }
    }
    Plan { checkpoint: then.id, changes, left }
}

fn describe(reason: &SkipReason) -> String {
    match reason {
        SkipReason::TooLarge { size, cap } => format!("{size} bytes, over the {cap}-byte cap"),
        SkipReason::Special => "not a regular file, folder or symlink".into(),
        SkipReason::NotUtf8 => "its name or target is not UTF-8".into(),
        SkipReason::Unreadable { error } => format!("unreadable: {error}"),
    }
}

/// The forms under which a caller may name a dirty file: as given and canonical.
fn dirty_set(skip: &[PathBuf]) -> HashSet<PathBuf> {
    let mut set = HashSet::new();
    for p in skip {
        set.insert(p.clone());
        if let Ok(c) = fs::canonicalize(p) {
            set.insert(c);
        } else if let (Some(parent), Some(name)) = (p.parent(), p.file_name()) {
            if let Ok(c) = fs::canonicalize(parent) {
                set.insert(c.join(name));
            }
        }
    }
    set
}

impl Store {
    /// What restoring checkpoint `id` would change now, without changing anything.
    pub fn plan(&mut self, id: u64) -> Result<Plan> {
        let then = self.load(id)?;
        let roots: Vec<PathBuf> = then.roots.iter().map(|r| r.root.clone()).collect();
        let now = self.scan(&roots, false)?;
        Ok(diff(&then, &now))
    }

    /// Bring the roots of checkpoint `id` back to their state then. First a checkpoint of the
    /// current state is taken (its id is in the report: restoring it undoes this restore). Paths
    /// in `skip` (files dirty in an editor) are left alone and reported.
    pub fn restore(&mut self, id: u64, skip: &[PathBuf]) -> Result<RestoreReport> {
        let then = self.load(id)?;
        let roots: Vec<PathBuf> = then.roots.iter().map(|r| r.root.clone()).collect();
        let undo = self.take(&roots, &format!("before restoring checkpoint {id}"))?;
        let now = self.load(undo.id)?;
        let plan = diff(&then, &now.roots);
        let dirty = dirty_set(skip);
        let mut left = plan.left;
        let mut applied = Vec::new();
        let mut blocked: HashSet<PathBuf> = HashSet::new();

        let ok = |c: &Change, left: &mut Vec<Left>, blocked: &mut HashSet<PathBuf>| -> bool {
            let abs = c.abs_path();
            if blocked.contains(&abs) {
                return false;
            }
            if !well_formed(&c.path) {
                left.push(Left { path: abs.clone(), why: "not a plain relative path".into() });
                blocked.insert(abs);
                return false;
            }
            if dirty.contains(&abs) {
                left.push(Left { path: abs.clone(), why: "has unsaved changes in an editor".into() });
                blocked.insert(abs);
                return false;
            }
            if !parents_are_real_dirs(&c.root, &c.path) {
                left.push(Left { path: abs.clone(), why: "a folder on its path is missing or a symlink".into() });
                blocked.insert(abs);
                return false;
            }
            // Absent from the undo checkpoint yet on disk: ignored now (the ignore rules changed
            // since). Overwriting it could not be undone.
            if c.kind == ChangeKind::Create && fs::symlink_metadata(&abs).is_ok() {
                left.push(Left {
                    path: abs.clone(),
                    why: "not restored: it exists but is ignored now, so its current version could not be kept".into(),
                });
                blocked.insert(abs);
                return false;
            }
            true
        };

        // 1. Remove what the checkpoint does not have, deepest first (folders after their content).
        let mut removals: Vec<&Change> =
            plan.changes.iter().filter(|c| matches!(c.kind, ChangeKind::Delete | ChangeKind::Replace)).collect();
        removals.sort_by(|a, b| depth(&b.path).cmp(&depth(&a.path)).then(b.path.cmp(&a.path)));
        for c in removals {
            if !ok(c, &mut left, &mut blocked) {
                continue;
            }
            let abs = c.abs_path();
            let result = match c.now {
                Some(Entry::Dir { .. }) => fs::remove_dir(&abs),
                _ => fs::remove_file(&abs),
            };
            match result {
                Ok(()) => {
                    if c.kind == ChangeKind::Delete {
                        applied.push(c.clone());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if c.kind == ChangeKind::Delete {
                        applied.push(c.clone());
                    }
                }
                Err(e) => {
                    let why = if matches!(c.now, Some(Entry::Dir { .. })) {
                        format!("folder kept: it still holds files the checkpoint does not cover (ignored or not captured): {e}")
                    } else {
                        format!("could not remove: {e}")
                    };
                    left.push(Left { path: abs.clone(), why });
                    blocked.insert(abs);
                }
            }
        }

        // 2. Create folders, shallowest first (their modes are set last).
        let mut creations: Vec<&Change> = plan.changes.iter().filter(|c| c.kind != ChangeKind::Delete).collect();
        creations.sort_by(|a, b| depth(&a.path).cmp(&depth(&b.path)).then(a.path.cmp(&b.path)));
        for c in creations.iter().filter(|c| {
            matches!(c.then, Some(Entry::Dir { .. })) && matches!(c.kind, ChangeKind::Create | ChangeKind::Replace)
        }) {
            if !ok(c, &mut left, &mut blocked) {
                continue;
            }
            let abs = c.abs_path();
            if let Err(e) = fs::create_dir(&abs) {
                left.push(Left { path: abs.clone(), why: format!("could not create the folder: {e}") });
                blocked.insert(abs);
            }
        }

        // 3. Files and symlinks, each written atomically (temp + rename in its folder).
        for c in creations.iter().filter(|c| !matches!(c.then, Some(Entry::Dir { .. }))) {
            if !ok(c, &mut left, &mut blocked) {
                continue;
            }
            let abs = c.abs_path();
            let result = match (&c.then, c.kind) {
                (Some(Entry::File { mode, .. }), ChangeKind::Mode) => match fs::symlink_metadata(&abs) {
                    Ok(md) if md.file_type().is_file() => {
                        fs::set_permissions(&abs, fs::Permissions::from_mode(*mode)).map_err(|e| e.to_string())
                    }
                    _ => Err("it is no longer a regular file".into()),
                },
                (Some(Entry::File { hash, mode, .. }), _) => match self.read_blob(hash) {
                    Ok(bytes) => write_atomic(&abs, &bytes, Some(*mode)).map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                },
                (Some(Entry::Symlink { target }), _) => link_atomic(&abs, target).map_err(|e| e.to_string()),
                _ => Ok(()),
            };
            match result {
                Ok(()) => applied.push((*c).clone()),
                Err(e) => {
                    left.push(Left { path: abs.clone(), why: format!("could not write: {e}") });
                    blocked.insert(abs);
                }
            }
        }

        // 4. Folder modes, deepest first (a read-only folder is filled before it is closed).
        for c in creations.iter().rev().filter(|c| matches!(c.then, Some(Entry::Dir { .. }))) {
            let abs = c.abs_path();
            if blocked.contains(&abs) {
                continue;
            }
            let Some(Entry::Dir { mode }) = c.then else { continue };
            let result = match fs::symlink_metadata(&abs) {
                Ok(md) if md.file_type().is_dir() => {
                    fs::set_permissions(&abs, fs::Permissions::from_mode(mode)).map_err(|e| e.to_string())
                }
                _ => Err("it is not a folder".to_string()),
            };
            match result {
                Ok(()) => applied.push((*c).clone()),
                Err(e) => left.push(Left { path: abs, why: format!("could not set the folder's mode: {e}") }),
            }
        }

        Ok(RestoreReport { checkpoint: id, undo_checkpoint: undo.id, applied, left })
    }
}

/// Make `path` a symlink to `target` through a temporary link and a rename (which replaces
/// whatever file or link is there without following it).
fn link_atomic(path: &Path, target: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.oh-checkpoint-{}.tmp", std::process::id()));
    std::os::unix::fs::symlink(target, &tmp)?;
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}
