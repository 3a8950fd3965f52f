//! Round trips against JSON written by OpenHands' own `event_to_dict` (see gen_reference_events.py).

use oh_protocol::{Action, ActionEvent, ImplSource, ObservationEvent};
use serde_json::Value;

fn fixtures() -> (Vec<String>, Vec<String>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/reference_events.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
    let list = |k: &str| v[k].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect::<Vec<_>>();
    (list("actions"), list("observations"))
}

#[test]
fn reference_observations_re_encode_byte_for_byte() {
    let (_, observations) = fixtures();
    assert_eq!(observations.len(), 10);
    for text in observations {
        let v: Value = serde_json::from_str(&text).unwrap();
        let ev = ObservationEvent::from_value(&v).unwrap();
        assert_eq!(ev.to_json(), text);
    }
}

#[test]
fn reference_actions_round_trip_and_parse() {
    let (actions, _) = fixtures();
    assert_eq!(actions.len(), 9);
    let mut kinds = Vec::new();
    for text in &actions {
        let ev: ActionEvent = serde_json::from_str(text).unwrap();
        assert_eq!(&serde_json::to_string(&ev).unwrap(), text);
        kinds.push(ev.parse().unwrap_or_else(|e| panic!("{text}: {e}")));
    }
    match &kinds[1] {
        Action::Run(r) => {
            assert_eq!((r.command.as_str(), r.blocking, r.timeout), ("sleep 5", true, Some(2.5)));
        }
        other => panic!("{other:?}"),
    }
    match &kinds[2] {
        Action::Run(r) => assert!(r.is_input && r.timeout == Some(120.0) && !r.blocking),
        other => panic!("{other:?}"),
    }
    match &kinds[4] {
        Action::Read(r) => {
            assert_eq!((r.start, r.end, r.impl_source), (3, 9, ImplSource::OhAci));
            assert_eq!(r.view_range, Some(serde_json::json!([1, 20])));
        }
        other => panic!("{other:?}"),
    }
    match &kinds[7] {
        Action::Edit(e) => {
            assert_eq!(e.command, "insert");
            assert_eq!(e.insert_line, Some(serde_json::json!(3)));
            assert_eq!(e.old_str, None);
            assert_eq!(e.start, 1);
        }
        other => panic!("{other:?}"),
    }
}
