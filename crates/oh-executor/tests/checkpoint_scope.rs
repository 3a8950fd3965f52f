//! Checkpoints of one conversation stay in that conversation: two executors over the same folder
//! serving two conversations keep separate stores by default, and two executors made to share one
//! store (`OH_CHECKPOINT_DIR`) both keep every checkpoint they took, even taken at the same time.
//! One test per file: the default store folder comes from `XDG_STATE_HOME`, set for this process.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oh_executor::{CheckpointConfig, Executor, ExecutorConfig, LocalFs};
use oh_protocol::checkpoint::CheckpointAction;
use oh_protocol::{Action, Extras, Observation};
use serde_json::Value;

async fn executor(workspace: &Path, conversation: &str, dir: Option<PathBuf>) -> Executor {
    let mut config = ExecutorConfig::new(workspace);
    config.shell.env = vec![("HOME".into(), workspace.to_string_lossy().into_owned())];
    config.checkpoints =
        CheckpointConfig { dir, conversation: Some(conversation.to_string()), ..CheckpointConfig::from_env() };
    Executor::start(config, Arc::new(LocalFs)).await.expect("executor starts")
}

fn result(obs: Observation) -> Value {
    match obs.extras {
        Extras::Checkpoint { result, .. } => result,
        other => panic!("not a checkpoint observation: {other:?} ({})", obs.content),
    }
}

async fn take(e: &Executor, label: &str) -> Value {
    result(e.observe(&Action::Checkpoint(CheckpointAction::Take { label: label.into(), before_message: None })).await)
}

async fn labels(e: &Executor) -> Vec<String> {
    let list = result(e.observe(&Action::Checkpoint(CheckpointAction::List)).await);
    let mut out: Vec<String> =
        list["checkpoints"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap().to_string()).collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_in_one_folder_keep_their_checkpoints_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    // Set before any executor reads it; this file's only test.
    std::env::set_var("XDG_STATE_HOME", tmp.path().join("state"));

    // The default folder: one store per conversation.
    let a = executor(&ws, "0123abcd", None).await;
    let b = executor(&ws, "4567ef01", None).await;
    assert_ne!(a.checkpoint_dir(), b.checkpoint_dir());
    assert!(a.checkpoint_dir().starts_with(tmp.path().join("state/openhands-vscode-runtime/checkpoints")));
    take(&a, "a-1").await;
    take(&b, "b-1").await;
    take(&a, "a-2").await;
    assert_eq!(labels(&a).await, ["a-1", "a-2"]);
    assert_eq!(labels(&b).await, ["b-1"]);
    // A restore in one conversation cannot name the other's checkpoint: ids are per store.
    let b_first =
        result(b.observe(&Action::Checkpoint(CheckpointAction::List)).await)["checkpoints"][0]["id"].as_u64().unwrap();
    let a_plan = a.observe(&Action::Checkpoint(CheckpointAction::Plan { id: b_first + 10 })).await;
    assert!(a_plan.content.contains("no checkpoint"), "{}", a_plan.content);
    a.shutdown().await;
    b.shutdown().await;

    // One folder shared on purpose: checkpoints taken at the same time by two executors all stay
    // listed (each operation locks the store and reads what the other saved).
    let shared = tmp.path().join("shared");
    let c = executor(&ws, "c", Some(shared.clone())).await;
    let d = executor(&ws, "d", Some(shared.clone())).await;
    let rounds = 8;
    let (c_ids, d_ids) = tokio::join!(
        async {
            let mut ids = Vec::new();
            for i in 0..rounds {
                ids.push(take(&c, &format!("c-{i}")).await["id"].as_u64().unwrap());
            }
            ids
        },
        async {
            let mut ids = Vec::new();
            for i in 0..rounds {
                ids.push(take(&d, &format!("d-{i}")).await["id"].as_u64().unwrap());
            }
            ids
        }
    );
    let mut all: Vec<u64> = c_ids.iter().chain(&d_ids).copied().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 2 * rounds, "every checkpoint got its own id: {c_ids:?} {d_ids:?}");
    assert_eq!(labels(&c).await.len(), 2 * rounds);
    assert_eq!(labels(&d).await, labels(&c).await);
    c.shutdown().await;
    d.shutdown().await;
}
