//! Fuzzing the two entry points an untrusted payload reaches: the `oh_event` decoder
//! (`oh_protocol::decode_delegated`) and the addon's `Executor.execute(actionJson)`
//! (`oh_protocol::decode_action_json`,
//! then the executor on a real workspace for file actions). Every payload must be answered (an
//! observation, an ErrorObservation or a logged drop), never a panic.
//!
//! `make test` runs a smoke run (`OH_FUZZ_CASES`, default 1000 payloads per property). The long
//! run is outside it:
//!
//! ```sh
//! OH_FUZZ_CASES=1000000 cargo test --release -p oh-transport --test fuzz_execute -- --nocapture
//! ```
//!
//! Commands (`run`) are decoded but never executed here: the fuzzer must not run random shell
//! text on this machine; the shell's own state machine is covered by oh-shell's tests.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use oh_executor::{Executor, ExecutorConfig, LocalFs};
use oh_protocol::decode::{decode_action_json, decode_delegated, extract_id};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Map, Value};

fn cases(default: u32) -> u32 {
    std::env::var("OH_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn arb_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)),
        "\\PC{0,16}".prop_map(Value::String),
        prop_oneof![
            Just("run"),
            Just("read"),
            Just("write"),
            Just("edit"),
            Just("browse"),
            Just("view"),
            Just("create"),
            Just("str_replace"),
            Just("insert"),
            Just("undo_edit"),
            Just("oh_aci"),
            Just("default"),
            Just("7"),
            Just("-1")
        ]
        .prop_map(|s| Value::String(s.into())),
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    arb_leaf().prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("id".to_string()),
                        Just("action".to_string()),
                        Just("args".to_string()),
                        Just("command".to_string()),
                        Just("path".to_string()),
                        Just("timeout".to_string()),
                        Just("view_range".to_string()),
                        Just("start".to_string()),
                        Just("end".to_string()),
                        Just("insert_line".to_string()),
                        Just("old_str".to_string()),
                        Just("new_str".to_string()),
                        Just("file_text".to_string()),
                        Just("content".to_string()),
                        Just("impl_source".to_string()),
                        Just("is_input".to_string()),
                        Just("blocking".to_string()),
                        "[a-z_]{1,8}"
                    ],
                    inner
                ),
                0..8,
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Well-formed-looking file actions with hostile arguments. Every path is absolute and stays
/// inside `outer` (the workspace is `outer/ws`; `..` reaches only `outer`, the test's own temp
/// dir): the fuzzer writes random bytes, so it must never be able to name a file of the machine.
fn arb_file_action(ws: String) -> impl Strategy<Value = Value> {
    let name = prop_oneof![
        Just("a.txt"),
        Just("sub/b.py"),
        Just("missing/x"),
        Just(""),
        Just(".."),
        Just("../outside.txt"),
        Just("sub"),
        Just("./a.txt")
    ];
    let text = prop_oneof!["\\PC{0,40}", "(.|\n|\r){0,200}", Just("\u{0}\u{feff}\r\n".to_string())];
    let num = prop_oneof![any::<i64>().prop_map(Value::from), (-3i64..20).prop_map(Value::from), arb_leaf()];
    (any::<i64>(), 0u8..8, name, text.clone(), text, num.clone(), num).prop_map(
        move |(id, kind, name, t1, t2, n1, n2)| {
            let path = format!("{ws}/{name}");
            let (action, args) = match kind {
                0 => ("read", json!({"path": path})),
                1 => ("read", json!({"path": path, "impl_source": "oh_aci", "view_range": [n1, n2]})),
                2 => ("read", json!({"path": path, "start": n1, "end": n2})),
                3 => ("write", json!({"path": path, "content": t1, "start": n1, "end": n2})),
                4 => ("edit", json!({"command": "create", "path": path, "file_text": t1})),
                5 => ("edit", json!({"command": "str_replace", "path": path, "old_str": t1, "new_str": t2})),
                6 => ("edit", json!({"command": "insert", "path": path, "insert_line": n1, "new_str": t1})),
                _ => ("edit", json!({"command": "undo_edit", "path": path})),
            };
            json!({"id": id, "action": action, "args": args, "timeout": n2})
        },
    )
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap())
}

fn report(name: &str, n: u64) {
    eprintln!("fuzz {name}: {n} payloads, 0 panics");
}

#[test]
fn decoder_answers_every_payload() {
    let n = AtomicU64::new(0);
    let mut runner = TestRunner::new(Config { cases: cases(1000), failure_persistence: None, ..Config::default() });
    runner
        .run(&arb_json(), |v| {
            n.fetch_add(1, Ordering::Relaxed);
            let r = decode_delegated(&v);
            let has_id = v.as_object().and_then(extract_id).is_some();
            prop_assert_eq!(r.id().is_some(), has_id);
            let _ = decode_delegated(&Value::String(v.to_string()));
            Ok(())
        })
        .unwrap();
    report("decode_delegated", n.into_inner());
}

#[test]
fn direct_execute_decoding_answers_every_text() {
    let n = AtomicU64::new(0);
    // JSON texts, their truncations and byte-level damage, and arbitrary text.
    let text = prop_oneof![
        arb_json().prop_map(|v| v.to_string()),
        (arb_json(), any::<prop::sample::Index>()).prop_map(|(v, i)| {
            let s = v.to_string();
            let mut cut = i.index(s.len() + 1);
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s[..cut].to_string()
        }),
        "\\PC{0,64}",
    ];
    let mut runner = TestRunner::new(Config { cases: cases(1000), failure_persistence: None, ..Config::default() });
    runner
        .run(&text, |s| {
            n.fetch_add(1, Ordering::Relaxed);
            match decode_action_json(&s) {
                // Decoded and typed, or refused with an ErrorObservation.
                Ok(_) => {}
                Err(reply) => {
                    let v: Value = serde_json::from_str(&reply.to_json()).unwrap();
                    prop_assert_eq!(&v["observation"], &json!("error"));
                }
            }
            Ok(())
        })
        .unwrap();
    report("decode_action_json", n.into_inner());
}

#[test]
fn file_actions_through_execute_always_reply() {
    let outer = tempfile::tempdir().unwrap();
    let outer_path = outer.path().canonicalize().unwrap();
    let root = outer_path.join("ws");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    let ex = runtime().block_on(Executor::start(ExecutorConfig::new(&root), Arc::new(LocalFs))).unwrap();
    let n = AtomicU64::new(0);
    let mut runner =
        TestRunner::new(Config { cases: cases(1000) / 10 + 1, failure_persistence: None, ..Config::default() });
    runner
        .run(&arb_file_action(root.display().to_string()), |v| {
            n.fetch_add(1, Ordering::Relaxed);
            let id = v["id"].as_i64();
            let path = v["args"]["path"].as_str().unwrap_or_default();
            assert!(path.starts_with(&format!("{}/", root.display())), "unsafe path generated: {path}");
            assert!(!path.contains("../.."), "unsafe path generated: {path}");
            let reply = match decode_action_json(&v.to_string()) {
                Ok(d) => runtime().block_on(ex.execute(&d.event, &d.action)),
                Err(r) => r,
            };
            let out: Value = serde_json::from_str(&reply.to_json()).unwrap();
            prop_assert!(out.get("observation").is_some(), "{}", out);
            prop_assert_eq!(out["cause"].as_i64(), id, "{}", out);
            Ok(())
        })
        .unwrap();
    runtime().block_on(ex.shutdown());
    report("execute (file actions)", n.into_inner());
}
