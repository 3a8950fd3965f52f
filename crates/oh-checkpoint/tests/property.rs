//! Random trees, random edits (create, modify, delete, chmod, symlink, a file replaced by a folder
//! and back): restoring a checkpoint gives back the tree it captured byte for byte, modes and
//! symlinks included; restoring the undo checkpoint gives back the edited tree; ignored files and
//! `.git` are never touched.

mod common;

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use common::*;
use oh_checkpoint::*;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Write(String, Vec<u8>),
    Delete(String),
    Chmod(String, u32),
    Symlink(String, String),
    Mkdir(String),
}

fn rel_path() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!["a", "b", "c"]), 1..=3).prop_map(|parts| parts.join("/"))
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (rel_path(), prop::collection::vec(any::<u8>(), 0..64)).prop_map(|(p, b)| Op::Write(p, b)),
        1 => rel_path().prop_map(Op::Delete),
        1 => (rel_path(), prop::sample::select(vec![0o644u32, 0o755, 0o600, 0o400, 0o700])).prop_map(|(p, m)| Op::Chmod(p, m)),
        1 => (rel_path(), prop::sample::select(vec!["a", "b/c", "../outside", "/etc/passwd", "missing"])).prop_map(|(p, t)| Op::Symlink(p, t.to_string())),
        1 => rel_path().prop_map(Op::Mkdir),
    ]
}

/// Make every folder above `rel` a real folder, replacing whatever file or link stands there.
fn make_parents(root: &Path, rel: &str) {
    let mut at = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for part in &parts[..parts.len() - 1] {
        at.push(part);
        match fs::symlink_metadata(&at) {
            Ok(md) if md.is_dir() => {}
            Ok(_) => {
                fs::remove_file(&at).unwrap();
                fs::create_dir(&at).unwrap();
            }
            Err(_) => fs::create_dir(&at).unwrap(),
        }
    }
}

fn remove(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(md) if md.is_dir() => fs::remove_dir_all(path).unwrap(),
        Ok(_) => fs::remove_file(path).unwrap(),
        Err(_) => {}
    }
}

fn apply(root: &Path, op: &Op) {
    match op {
        Op::Write(rel, bytes) => {
            make_parents(root, rel);
            let p = root.join(rel);
            // Replace rather than rewrite: a read-only file (0o400) may not be opened for writing.
            remove(&p);
            fs::write(&p, bytes).unwrap();
        }
        Op::Delete(rel) => remove(&root.join(rel)),
        Op::Chmod(rel, mode) => {
            let p = root.join(rel);
            match fs::symlink_metadata(&p) {
                // Folders stay writable: the tests run as any user.
                Ok(md) if md.is_dir() => fs::set_permissions(&p, fs::Permissions::from_mode(mode | 0o700)).unwrap(),
                Ok(md) if md.is_file() => fs::set_permissions(&p, fs::Permissions::from_mode(*mode)).unwrap(),
                _ => {}
            }
        }
        Op::Symlink(rel, target) => {
            make_parents(root, rel);
            let p = root.join(rel);
            remove(&p);
            symlink(target, &p).unwrap();
        }
        Op::Mkdir(rel) => {
            make_parents(root, rel);
            let p = root.join(rel);
            if fs::symlink_metadata(&p).is_ok_and(|m| !m.is_dir()) {
                remove(&p);
            }
            let _ = fs::create_dir(&p);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn restore_gives_back_the_captured_tree(
        first in prop::collection::vec(op(), 0..25),
        edits in prop::collection::vec(op(), 1..25),
        checkpoint_between in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        fs::create_dir(&ws).unwrap();
        let ws = fs::canonicalize(ws).unwrap();
        write(&ws, ".gitignore", b"*.log\n");
        write(&ws, "keep.log", b"ignored 1");
        write(&ws, ".git/HEAD", b"ref: refs/heads/main\n");
        for op in &first {
            apply(&ws, op);
        }
        let mut store = Store::open(tmp.path().join("store"), Settings { max_store_bytes: None, ..Settings::default() }).unwrap();
        let cp = store.take(std::slice::from_ref(&ws), "before").unwrap();
        let captured = without(tree(&ws), &[".git", "keep.log"]);
        let git = bytes_and_mtimes(&ws.join(".git"));

        for op in &edits {
            apply(&ws, op);
        }
        write(&ws, "keep.log", b"ignored 2");
        if checkpoint_between {
            store.take(std::slice::from_ref(&ws), "between").unwrap();
        }
        let edited = without(tree(&ws), &[".git", "keep.log"]);

        let report = store.restore(cp.id, &[]).unwrap();
        prop_assert!(report.left.is_empty(), "{:?}", report.left);
        prop_assert_eq!(without(tree(&ws), &[".git", "keep.log"]), captured);
        prop_assert_eq!(fs::read(ws.join("keep.log")).unwrap(), b"ignored 2");
        prop_assert_eq!(bytes_and_mtimes(&ws.join(".git")), git.clone());

        let undo = store.restore(report.undo_checkpoint, &[]).unwrap();
        prop_assert!(undo.left.is_empty(), "{:?}", undo.left);
        prop_assert_eq!(without(tree(&ws), &[".git", "keep.log"]), edited);
        prop_assert_eq!(bytes_and_mtimes(&ws.join(".git")), git);
    }
}
