//! Property test of the oh_event decoder: arbitrary JSON never panics, and an id is always
//! answered (executed or refused) while id-less payloads are dropped.

use oh_protocol::decode::{decode_delegated, extract_id, Incoming};
use oh_transport::refusal::connect_refusal;
use oh_transport::shrink_reply;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![Just("run"), Just("read"), Just("write"), Just("edit"), Just("browse"), Just("7")]
            .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
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
                        Just("observation".to_string()),
                        "[a-z_]{1,8}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn decoding_never_panics(v in arb_json()) {
        let r = decode_delegated(&v);
        let has_id = v.as_object().and_then(extract_id).is_some();
        prop_assert_eq!(r.id().is_some(), has_id);
        // Also as a double-encoded string.
        let _ = decode_delegated(&Value::String(v.to_string()));
    }

    #[test]
    fn runnable_actions_with_args(id in any::<i64>(), cmd in ".{0,40}", timeout in proptest::option::of(0.0f64..1e6)) {
        let mut v = json!({"id": id, "action": "run", "args": {"command": cmd}});
        if let Some(t) = timeout { v["timeout"] = json!(t); }
        match decode_delegated(&v) {
            Incoming::Execute(job) => { prop_assert_eq!(job.id, id); prop_assert_eq!(job.event.id, Some(id)); prop_assert!(job.action.is_command()); }
            other => prop_assert!(false, "{:?}", other),
        }
    }

    #[test]
    fn error_text_parsing_never_panics(s in ".{0,80}") {
        let _ = connect_refusal(&s);
        let _ = connect_refusal(&format!("Received an ConnectError frame: {s}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn shrunk_replies_fit(content in "(.|\n){0,3000}", old in proptest::option::of(".{0,500}"), max in 300usize..4000) {
        let mut v = json!({"message": "m", "cause": 1, "observation": "edit", "content": content,
            "extras": {"path": "/x", "old_content": old, "new_content": "n"}});
        shrink_reply(&mut v, max);
        prop_assert!(serde_json::to_string(&v).unwrap().len() <= max.max(400), "{}", serde_json::to_string(&v).unwrap().len());
        prop_assert_eq!(&v["cause"], &json!(1));
    }
}
