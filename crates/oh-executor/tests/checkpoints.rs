//! `checkpoint_*` through `oh-executor replay`: an agent changes a two-root workspace through bash
//! (`sed -i`, `rm`, a generated file, `chmod`) and the file editor, and a restore brings both
//! roots back byte for byte, modes included; the undo checkpoint brings the changes back.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

fn tree(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_str().unwrap().to_string();
            let md = fs::symlink_metadata(&p).unwrap();
            if md.is_dir() {
                out.insert(rel, (Vec::new(), md.mode() & 0o7777));
                walk(root, &p, out);
            } else {
                out.insert(rel, (fs::read(&p).unwrap(), md.mode() & 0o7777));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Run `actions` (each given an id from 1) through one replay process; the replies in order.
fn replay(workspace: &Path, extra_root: &Path, store: &Path, actions: &[Value]) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_oh-executor"))
        .args(["replay", "--workspace"])
        .arg(workspace)
        .arg("--root")
        .arg(extra_root)
        .arg("--checkpoint-dir")
        .arg(store)
        .env("HOME", workspace.parent().unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for (i, a) in actions.iter().enumerate() {
        let mut a = a.clone();
        a["id"] = json!(i + 1);
        writeln!(stdin, "{a}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_restore_undoes_bash_and_editor_changes_in_every_root() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let other = tmp.path().join("other");
    let store = tmp.path().join("state/checkpoints");
    fs::create_dir_all(ws.join("data")).unwrap();
    fs::create_dir_all(&other).unwrap();
    let (ws, other) = (fs::canonicalize(ws).unwrap(), fs::canonicalize(other).unwrap());
    fs::write(ws.join("a.txt"), "old line\nsecond\n").unwrap();
    fs::write(ws.join("run.sh"), "#!/bin/sh\necho run\n").unwrap();
    fs::set_permissions(ws.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(ws.join("data/keep.txt"), "keep me").unwrap();
    fs::write(other.join("b.txt"), "in the second folder\n").unwrap();
    let before = (tree(&ws), tree(&other));

    let changes = [
        json!({"action": "checkpoint_take", "args": {"label": "before message 1", "before_message": {"conversation_id": "c1", "message": 1}}}),
        json!({"action": "run", "args": {"command": format!(
            "sed -i 's/old/new/' a.txt && rm data/keep.txt && seq 1 500 > generated.txt && chmod 600 run.sh && echo more >> {}/b.txt",
            other.display()
        )}}),
        json!({"action": "edit", "args": {"path": ws.join("created.py").to_str().unwrap(), "command": "create", "file_text": "print('hi')\n", "impl_source": "oh_aci"}}),
        json!({"action": "edit", "args": {"path": ws.join("run.sh").to_str().unwrap(), "command": "str_replace", "old_str": "echo run", "new_str": "echo edited", "impl_source": "oh_aci"}}),
        json!({"action": "checkpoint_plan", "args": {"id": 1}}),
    ];
    let replies = replay(&ws, &other, &store, &changes);
    assert_eq!(replies[0]["observation"], "checkpoint", "{}", replies[0]);
    assert_eq!(replies[0]["extras"]["result"]["id"], 1);
    assert_eq!(replies[0]["extras"]["result"]["roots"], json!([ws, other]));
    assert_eq!(replies[1]["extras"]["metadata"]["exit_code"], 0, "{}", replies[1]);
    assert_eq!(replies[2]["observation"], "edit", "{}", replies[2]);
    assert!(ws.join("created.py").exists(), "{}", replies[2]);
    assert!(fs::read_to_string(ws.join("run.sh")).unwrap().contains("echo edited"), "{}", replies[3]);
    let plan = &replies[4]["extras"]["result"];
    let mut planned: Vec<(String, String)> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["path"].as_str().unwrap().to_string(), c["kind"].as_str().unwrap().to_string()))
        .collect();
    planned.sort();
    let expected: Vec<(String, String)> = [
        ("a.txt", "modify"),
        ("b.txt", "modify"),
        ("created.py", "delete"),
        ("data/keep.txt", "create"),
        ("generated.txt", "delete"),
        ("run.sh", "modify"),
    ]
    .iter()
    .map(|(p, k)| (p.to_string(), k.to_string()))
    .collect();
    assert_eq!(planned, expected);
    let after_agent = (tree(&ws), tree(&other));
    assert_ne!(after_agent, before);

    // The restore runs in a new executor (a later session) against the same store.
    let replies = replay(
        &ws,
        &other,
        &store,
        &[json!({"action": "checkpoint_restore", "args": {"id": 1}}), json!({"action": "checkpoint_list"})],
    );
    assert_eq!(replies[0]["observation"], "checkpoint", "{}", replies[0]);
    let report = &replies[0]["extras"]["result"];
    assert_eq!(report["left"], json!([]));
    assert_eq!(report["undo_checkpoint"], 2);
    assert_eq!((tree(&ws), tree(&other)), before);
    let list = replies[1]["extras"]["result"]["checkpoints"].as_array().unwrap();
    assert_eq!(list.iter().map(|c| c["id"].as_u64().unwrap()).collect::<Vec<_>>(), vec![1, 2]);
    // The message a checkpoint precedes is listed as it was given, in a later session too; the
    // restore's own undo checkpoint precedes none.
    assert_eq!(list[0]["before_message"], json!({"conversation_id": "c1", "message": 1}));
    assert!(list[1].get("before_message").is_none(), "{}", list[1]);

    let replies = replay(&ws, &other, &store, &[json!({"action": "checkpoint_restore", "args": {"id": 2}})]);
    assert_eq!(replies[0]["extras"]["result"]["left"], json!([]), "{}", replies[0]);
    assert_eq!((tree(&ws), tree(&other)), after_agent);
}

#[test]
fn a_dirty_file_is_reported_and_a_bad_id_is_an_error_observation() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let other = tmp.path().join("other");
    fs::create_dir_all(&ws).unwrap();
    fs::create_dir_all(&other).unwrap();
    let ws = fs::canonicalize(ws).unwrap();
    fs::write(ws.join("open.txt"), "saved").unwrap();
    let store = tmp.path().join("store");
    let replies = replay(
        &ws,
        &other,
        &store,
        &[
            json!({"action": "checkpoint_take", "args": {}}),
            json!({"action": "run", "args": {"command": "echo agent > open.txt"}}),
            json!({"action": "checkpoint_restore", "args": {"id": 1, "skip": [ws.join("open.txt")]}}),
            json!({"action": "checkpoint_plan", "args": {"id": 42}}),
        ],
    );
    assert_eq!(fs::read_to_string(ws.join("open.txt")).unwrap(), "agent\n");
    assert_eq!(
        replies[2]["extras"]["result"]["left"],
        json!([{"path": ws.join("open.txt"), "why": "has unsaved changes in an editor"}])
    );
    assert_eq!(replies[3]["observation"], "error");
    assert_eq!(replies[3]["content"], "checkpoint_plan failed: no checkpoint 42");
    assert_eq!(replies[3]["cause"], 4);
}
