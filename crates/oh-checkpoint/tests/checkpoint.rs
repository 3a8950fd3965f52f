//! Snapshot and restore on real folders: kinds, modes, ignore rules, `.git`, the size cap,
//! dirty files, symlinks on the write path, multi-root, deduplication, the stat index, pruning.

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use common::*;
use oh_checkpoint::*;

fn settings() -> Settings {
    Settings { max_store_bytes: None, ..Settings::default() }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    store_dir: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let store_dir = tmp.path().join("state/checkpoints");
    fs::create_dir(&ws).unwrap();
    let ws = fs::canonicalize(ws).unwrap();
    Fixture { _tmp: tmp, ws, store_dir }
}

#[test]
fn every_kind_of_change_is_undone_and_the_undo_checkpoint_redoes_it() {
    let f = fixture();
    let ws = &f.ws;
    write(ws, "src/main.rs", b"fn main() {}\n");
    write(ws, "run.sh", b"#!/bin/sh\necho hi\n");
    chmod(ws, "run.sh", 0o755);
    write(ws, "becomes_dir", b"a file for now");
    write(ws, "becomes_file/inner.txt", b"inner");
    fs::create_dir_all(ws.join("empty/nested")).unwrap();
    chmod(ws, "empty", 0o700);
    symlink("src/main.rs", ws.join("link")).unwrap();
    symlink("/etc/passwd", ws.join("outside_link")).unwrap();
    let before = tree(ws);

    let mut store = Store::open(&f.store_dir, settings()).unwrap();
    let cp = store.take(std::slice::from_ref(ws), "before message 1").unwrap();
    assert_eq!(cp.files, 4);

    // What an agent might do through bash: sed -i, rm, chmod, ln -sf, generated files.
    write(ws, "src/main.rs", b"fn main() { println!(\"changed\"); }\n");
    fs::remove_file(ws.join("run.sh")).unwrap();
    fs::remove_file(ws.join("becomes_dir")).unwrap();
    write(ws, "becomes_dir/child", b"now a folder");
    fs::remove_dir_all(ws.join("becomes_file")).unwrap();
    write(ws, "becomes_file", b"now a file");
    fs::remove_dir_all(ws.join("empty")).unwrap();
    fs::remove_file(ws.join("link")).unwrap();
    symlink("elsewhere", ws.join("link")).unwrap();
    write(ws, "generated/out.bin", &[0u8, 1, 2, 255]);
    let after_agent = tree(ws);

    let plan = store.plan(cp.id).unwrap();
    let kinds: Vec<(String, ChangeKind)> = plan.changes.iter().map(|c| (c.path.clone(), c.kind)).collect();
    assert!(kinds.contains(&("src/main.rs".into(), ChangeKind::Modify)), "{kinds:?}");
    assert!(kinds.contains(&("run.sh".into(), ChangeKind::Create)), "{kinds:?}");
    assert!(kinds.contains(&("becomes_dir".into(), ChangeKind::Replace)), "{kinds:?}");
    assert!(kinds.contains(&("generated/out.bin".into(), ChangeKind::Delete)), "{kinds:?}");
    assert_eq!(tree(ws), after_agent, "a plan changes nothing");
    // A diff on demand: the content then is in the store.
    let then = plan.changes.iter().find(|c| c.path == "src/main.rs").unwrap();
    let Some(Entry::File { hash, .. }) = &then.then else { panic!() };
    assert_eq!(store.read_blob(hash).unwrap(), b"fn main() {}\n");

    let report = store.restore(cp.id, &[]).unwrap();
    assert!(report.left.is_empty(), "{:?}", report.left);
    assert_eq!(tree(ws), before);

    let undo = store.restore(report.undo_checkpoint, &[]).unwrap();
    assert!(undo.left.is_empty(), "{:?}", undo.left);
    assert_eq!(tree(ws), after_agent);
}

#[test]
fn ignored_and_excluded_paths_are_neither_captured_nor_touched_by_a_restore() {
    let f = fixture();
    let ws = &f.ws;
    write(ws, ".gitignore", b"*.log\nbuild/\n");
    write(ws, "sub/.ignore", b"secret.txt\n");
    write(ws, "app.log", b"log 1");
    write(ws, "build/out.o", b"object 1");
    write(ws, "sub/secret.txt", b"secret 1");
    write(ws, "node_modules/pkg/index.js", b"module 1");
    write(ws, "kept.txt", b"kept");
    let mut store = Store::open(&f.store_dir, settings()).unwrap();
    let cp = store.take(std::slice::from_ref(ws), "t").unwrap();
    let manifest = store.load(cp.id).unwrap();
    let paths: Vec<&String> = manifest.roots[0].entries.keys().collect();
    assert_eq!(paths, vec![".gitignore", "kept.txt", "sub", "sub/.ignore"]);

    write(ws, "app.log", b"log 2");
    write(ws, "build/out.o", b"object 2");
    write(ws, "build/new.o", b"object new");
    write(ws, "sub/secret.txt", b"secret 2");
    fs::remove_dir_all(ws.join("node_modules")).unwrap();
    write(ws, "kept.txt", b"changed");
    let report = store.restore(cp.id, &[]).unwrap();
    assert_eq!(fs::read(ws.join("kept.txt")).unwrap(), b"kept");
    assert_eq!(fs::read(ws.join("app.log")).unwrap(), b"log 2");
    assert_eq!(fs::read(ws.join("build/out.o")).unwrap(), b"object 2");
    assert_eq!(fs::read(ws.join("build/new.o")).unwrap(), b"object new");
    assert_eq!(fs::read(ws.join("sub/secret.txt")).unwrap(), b"secret 2");
    assert!(!ws.join("node_modules").exists());
    assert_eq!(report.applied.len(), 1, "{:?}", report.applied);
}

#[test]
fn the_users_git_folder_is_never_read_nor_touched() {
    let f = fixture();
    let ws = &f.ws;
    write(ws, ".git/HEAD", b"ref: refs/heads/main\n");
    write(ws, ".git/objects/ab/cdef", b"\x78\x01 a zlib blob");
    write(ws, ".git/info/exclude", b"*.txt\n");
    write(ws, "a.txt", b"tracked");
    let git_before = bytes_and_mtimes(&ws.join(".git"));
    let mut store = Store::open(&f.store_dir, settings()).unwrap();
    let cp = store.take(std::slice::from_ref(ws), "t").unwrap();
    // .git/info/exclude is not honoured (reading it would read .git) and .git is not captured.
    let manifest = store.load(cp.id).unwrap();
    assert_eq!(manifest.roots[0].entries.keys().collect::<Vec<_>>(), vec!["a.txt"]);

    fs::remove_file(ws.join("a.txt")).unwrap();
    write(ws, "nested/.git/HEAD", b"a repo the agent cloned");
    write(ws, "nested/file", b"x");
    let nested_git = bytes_and_mtimes(&ws.join("nested/.git"));
    let report = store.restore(cp.id, &[]).unwrap();
    assert_eq!(fs::read(ws.join("a.txt")).unwrap(), b"tracked");
    assert_eq!(bytes_and_mtimes(&ws.join(".git")), git_before);
    assert_eq!(bytes_and_mtimes(&ws.join("nested/.git")), nested_git);
    assert!(!ws.join("nested/file").exists());
    assert!(
        report.left.iter().any(|l| l.path == ws.join("nested") && l.why.contains("folder kept")),
        "{:?}",
        report.left
    );
    // No blob in the store holds the bytes of a .git file.
    for (rel, (bytes, _, _)) in git_before.iter().chain(nested_git.iter()) {
        let hash = sha256(bytes);
        assert!(!f.store_dir.join("objects").join(&hash[..2]).join(&hash[2..]).exists(), ".git/{rel} was stored");
    }
}

#[test]
fn files_over_the_cap_are_recorded_as_not_captured_and_never_deleted() {
    let f = fixture();
    let ws = &f.ws;
    write(ws, "small.txt", b"small");
    write(ws, "big.bin", &vec![7u8; 2000]);
    let mut store = Store::open(&f.store_dir, Settings { max_file_bytes: 1000, ..settings() }).unwrap();
    let cp = store.take(std::slice::from_ref(ws), "t").unwrap();
    assert_eq!(cp.skipped, 1);
    let manifest = store.load(cp.id).unwrap();
    assert_eq!(
        manifest.roots[0].skipped,
        vec![Skipped { path: "big.bin".into(), reason: SkipReason::TooLarge { size: 2000, cap: 1000 } }]
    );
    assert!(!manifest.roots[0].entries.contains_key("big.bin"));

    write(ws, "big.bin", &vec![8u8; 3000]);
    write(ws, "new_big.bin", &vec![9u8; 5000]);
    let plan = store.plan(cp.id).unwrap();
    assert!(plan.changes.is_empty(), "{:?}", plan.changes);
    assert_eq!(plan.left.len(), 2, "{:?}", plan.left);
    assert!(plan.left.iter().any(|l| l.path == ws.join("new_big.bin") && l.why.contains("could not be undone")));
    assert!(plan.left.iter().any(|l| l.path == ws.join("big.bin") && l.why.contains("not in the checkpoint")));
    store.restore(cp.id, &[]).unwrap();
    assert_eq!(fs::read(ws.join("big.bin")).unwrap(), vec![8u8; 3000]);
    assert_eq!(fs::read(ws.join("new_big.bin")).unwrap(), vec![9u8; 5000]);
}

#[test]
fn dirty_editor_files_are_left_alone_and_reported() {
    let f = fixture();
    let ws = &f.ws;
    write(ws, "a.txt", b"a0");
    write(ws, "b.txt", b"b0");
    let mut store = Store::open(&f.store_dir, settings()).unwrap();
    let cp = store.take(std::slice::from_ref(ws), "t").unwrap();
    write(ws, "a.txt", b"a1");
    write(ws, "b.txt", b"b1");
    let report = store.restore(cp.id, &[ws.join("a.txt")]).unwrap();
    assert_eq!(fs::read(ws.join("a.txt")).unwrap(), b"a1");
    assert_eq!(fs::read(ws.join("b.txt")).unwrap(), b"b0");
    assert_eq!(report.left, vec![Left { path: ws.join("a.txt"), why: "has unsaved changes in an editor".into() }]);
}

#[test]
fn a_restore_never_writes_through_a_symlinked_folder() {
    let f = fixture();
    let ws = &f.ws;
    let outside = f.ws.parent().unwrap().join("outside");
    fs::create_dir(&outside).unwrap();
    write(ws, "d/f.txt", b"inside");
    let mut store = Store::open(&f.store_dir, settings()).unwrap();
    let cp = store.take(std::slice::from_ref(ws), "t").unwrap();
    // The agent swaps the folder for a link out of the workspace; the link is "dirty" in an
    // editor, so the restore may not remove it, and must not write d/f.txt through it.
    fs::remove_dir_all(ws.join("d")).unwrap();
    symlink(&outside, ws.join("d")).unwrap();
    let report = store.restore(cp.id, &[ws.join("d")]).unwrap();
    assert!(!outside.join("f.txt").exists(), "a restore wrote through a symlink out of the root");
    assert!(report.left.iter().any(|l| l.path == ws.join("d/f.txt") && l.why.contains("symlink")), "{:?}", report.left);
    // Without the dirty flag the link is replaced by the folder and the file comes back inside.
    store.restore(cp.id, &[]).unwrap();
    assert_eq!(fs::read(ws.join("d/f.txt")).unwrap(), b"inside");
    assert!(fs::symlink_metadata(ws.join("d")).unwrap().is_dir());
    assert!(!outside.join("f.txt").exists());
}

#[test]
fn a_checkpoint_covers_every_root_of_a_multi_root_workspace() {
    let f = fixture();
    let ws2 = f.ws.parent().unwrap().join("ws2");
    fs::create_dir(&ws2).unwrap();
    write(&f.ws, "one.txt", b"1");
    write(&ws2, "two.txt", b"2");
    let before = (tree(&f.ws), tree(&ws2));
    let mut store = Store::open(&f.store_dir, settings()).unwrap();
    let cp = store.take(&[f.ws.clone(), ws2.clone()], "t").unwrap();
    assert_eq!(cp.roots.len(), 2);
    write(&f.ws, "one.txt", b"one");
    fs::remove_file(ws2.join("two.txt")).unwrap();
    write(&ws2, "three.txt", b"3");
    let plan = store.plan(cp.id).unwrap();
    assert_eq!(plan.changes.iter().filter(|c| c.root == fs::canonicalize(&ws2).unwrap()).count(), 2);
    store.restore(cp.id, &[]).unwrap();
    assert_eq!((tree(&f.ws), tree(&ws2)), before);
}

#[test]
fn unchanged_files_are_stored_once_and_not_hashed_again() {
    let f = fixture();
    for i in 0..20 {
        write(&f.ws, &format!("f{i}.txt"), format!("content {i}").as_bytes());
    }
    write(&f.ws, "copy.txt", b"content 0");
    // The stat index trusts only stamps older than its racy window (100 ms; 2 s on a filesystem
    // with whole-second stamps).
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let mut store = Store::open(&f.store_dir, settings()).unwrap();
    let first = store.take(std::slice::from_ref(&f.ws), "1").unwrap();
    assert_eq!(first.hashed, 21);
    let blob_count = || {
        fs::read_dir(f.store_dir.join("objects"))
            .unwrap()
            .map(|d| fs::read_dir(d.unwrap().path()).unwrap().count())
            .sum::<usize>()
    };
    assert_eq!(blob_count(), 20, "identical content is one blob");
    drop(store);
    let mut store = Store::open(&f.store_dir, settings()).unwrap();
    let second = store.take(std::slice::from_ref(&f.ws), "2").unwrap();
    assert_eq!(second.hashed, 0, "the index survives reopening and spares every read");
    assert_eq!(blob_count(), 20);
    write(&f.ws, "f3.txt", b"changed");
    let third = store.take(std::slice::from_ref(&f.ws), "3").unwrap();
    assert_eq!(third.hashed, 1);
    assert_eq!(blob_count(), 21);
}

#[test]
fn pruning_drops_the_oldest_checkpoints_and_only_blobs_nobody_keeps() {
    let f = fixture();
    let ws = &f.ws;
    write(ws, "shared.txt", &vec![1u8; 4000]);
    let mut store = Store::open(&f.store_dir, Settings { max_store_bytes: Some(14_000), ..settings() }).unwrap();
    let mut ids = Vec::new();
    for i in 0..6u8 {
        write(ws, "turn.txt", &vec![i; 3000]);
        ids.push(store.take(std::slice::from_ref(ws), &format!("turn {i}")).unwrap().id);
        assert!(
            store.size() <= 14_000 || store.list().len() == 1,
            "size {} with {} kept",
            store.size(),
            store.list().len()
        );
    }
    let kept: Vec<u64> = store.list().iter().map(|s| s.id).collect();
    assert!(kept.len() >= 2 && kept.len() < 6, "{kept:?}");
    assert_eq!(kept, ids[ids.len() - kept.len()..].to_vec(), "the oldest go first");
    assert!(matches!(store.load(ids[0]), Err(Error::NoSuchCheckpoint(_))));
    // Every kept checkpoint still restores: its blobs (the shared one included) survived.
    for id in kept.iter().rev() {
        store.restore(*id, &[]).unwrap();
        assert_eq!(fs::read(ws.join("shared.txt")).unwrap(), vec![1u8; 4000]);
    }
    let oldest_kept = kept[0];
    let i = ids.iter().position(|x| *x == oldest_kept).unwrap() as u8;
    store.restore(oldest_kept, &[]).unwrap();
    assert_eq!(fs::read(ws.join("turn.txt")).unwrap(), vec![i; 3000]);
    let on_disk: std::collections::BTreeSet<String> = fs::read_dir(f.store_dir.join("objects"))
        .unwrap()
        .flat_map(|d| {
            let d = d.unwrap();
            let prefix = d.file_name().into_string().unwrap();
            fs::read_dir(d.path())
                .unwrap()
                .map(move |e| format!("{prefix}{}", e.unwrap().file_name().into_string().unwrap()))
        })
        .collect();
    let referenced: std::collections::BTreeSet<String> = store
        .list()
        .iter()
        .flat_map(|s| store.load(s.id).unwrap().roots.into_iter().flat_map(|r| r.entries.into_values()))
        .filter_map(|e| match e {
            Entry::File { hash, .. } => Some(hash),
            _ => None,
        })
        .collect();
    assert_eq!(on_disk, referenced, "the store holds exactly the blobs its checkpoints reference");
}

#[test]
fn a_file_that_grew_over_the_cap_is_not_overwritten_since_that_could_not_be_undone() {
    let f = fixture();
    write(&f.ws, "grows.bin", b"small then");
    let mut store = Store::open(&f.store_dir, Settings { max_file_bytes: 1000, ..settings() }).unwrap();
    let cp = store.take(std::slice::from_ref(&f.ws), "t").unwrap();
    write(&f.ws, "grows.bin", &vec![1u8; 5000]);
    let report = store.restore(cp.id, &[]).unwrap();
    assert_eq!(fs::read(f.ws.join("grows.bin")).unwrap(), vec![1u8; 5000]);
    assert!(
        report.left.iter().any(|l| l.path == f.ws.join("grows.bin") && l.why.contains("could not be undone")),
        "{:?}",
        report.left
    );
}

#[test]
fn a_file_ignored_since_the_checkpoint_is_not_overwritten_since_that_could_not_be_undone() {
    let f = fixture();
    write(&f.ws, "app.log", b"log then");
    let mut store = Store::open(&f.store_dir, settings()).unwrap();
    let cp = store.take(std::slice::from_ref(&f.ws), "t").unwrap();
    write(&f.ws, ".gitignore", b"*.log\n");
    write(&f.ws, "app.log", b"log now");
    let report = store.restore(cp.id, &[]).unwrap();
    assert!(!f.ws.join(".gitignore").exists());
    assert_eq!(fs::read(f.ws.join("app.log")).unwrap(), b"log now");
    assert!(
        report.left.iter().any(|l| l.path == f.ws.join("app.log") && l.why.contains("ignored now")),
        "{:?}",
        report.left
    );
}
