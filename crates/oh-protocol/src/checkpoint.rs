//! Checkpoint actions (`checkpoint_take`, `checkpoint_list`, `checkpoint_plan`,
//! `checkpoint_restore`, `checkpoint_blob`): this project's own, not OpenHands'. A runtime sends
//! them to take a checkpoint of the workspace before a user message and to revert to one; they
//! are answered with a `checkpoint` observation whose `extras.result` is the JSON result
//! (docs/protocol.md, docs/checkpoints.md).

use serde_json::{Map, Value};

use crate::ProtocolError;

pub const CHECKPOINT_TAKE: &str = "checkpoint_take";
pub const CHECKPOINT_LIST: &str = "checkpoint_list";
pub const CHECKPOINT_PLAN: &str = "checkpoint_plan";
pub const CHECKPOINT_RESTORE: &str = "checkpoint_restore";
pub const CHECKPOINT_BLOB: &str = "checkpoint_blob";
/// The observation kind every checkpoint action is answered with.
pub const CHECKPOINT_OBSERVATION: &str = "checkpoint";

pub const CHECKPOINT_KINDS: [&str; 5] =
    [CHECKPOINT_TAKE, CHECKPOINT_LIST, CHECKPOINT_PLAN, CHECKPOINT_RESTORE, CHECKPOINT_BLOB];

/// The user message a checkpoint is taken before (`checkpoint_take`'s `before_message`): the
/// conversation and the message's number in it. A revert looks the checkpoint up by it; the
/// label is only for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeforeMessage {
    pub conversation_id: String,
    pub message: u64,
}

/// One checkpoint operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointAction {
    /// Capture every workspace root now.
    Take { label: String, before_message: Option<BeforeMessage> },
    /// The checkpoints kept, oldest first.
    List,
    /// What restoring checkpoint `id` would change (nothing is changed).
    Plan { id: u64 },
    /// Restore checkpoint `id`, leaving the absolute paths in `skip` (dirty in an editor) alone.
    Restore { id: u64, skip: Vec<String> },
    /// The bytes of a captured file (for a diff), by its hash.
    Blob { hash: String },
}

impl CheckpointAction {
    /// The operation's name without the `checkpoint_` prefix (`take`, `list`, ...).
    pub fn op(&self) -> &'static str {
        match self {
            CheckpointAction::Take { .. } => "take",
            CheckpointAction::List => "list",
            CheckpointAction::Plan { .. } => "plan",
            CheckpointAction::Restore { .. } => "restore",
            CheckpointAction::Blob { .. } => "blob",
        }
    }
}

fn bad(kind: &str, detail: impl Into<String>) -> ProtocolError {
    ProtocolError::BadArguments { action: kind.to_string(), detail: detail.into() }
}

fn id(kind: &str, args: &Map<String, Value>) -> Result<u64, ProtocolError> {
    match args.get("id") {
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64().unwrap_or_default()),
        Some(other) => {
            Err(bad(kind, format!("argument 'id' must be a checkpoint id (a non-negative integer), not {other}")))
        }
        None => Err(bad(kind, "missing 1 required argument: 'id'")),
    }
}

fn only(kind: &str, args: &Map<String, Value>, known: &[&str]) -> Result<(), ProtocolError> {
    match args.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(bad(kind, format!("unexpected keyword argument '{k}'"))),
        None => Ok(()),
    }
}

fn before_message(kind: &str, v: &Value) -> Result<BeforeMessage, ProtocolError> {
    let wrong = || {
        bad(
            kind,
            format!(
                "argument 'before_message' must be {{\"conversation_id\": a non-empty string, \"message\": a non-negative integer}}, not {v}"
            ),
        )
    };
    let obj = v.as_object().ok_or_else(wrong)?;
    if obj.keys().any(|k| k != "conversation_id" && k != "message") {
        return Err(wrong());
    }
    let conversation_id =
        obj.get("conversation_id").and_then(Value::as_str).filter(|c| !c.is_empty()).ok_or_else(wrong)?;
    let message = obj.get("message").and_then(Value::as_u64).ok_or_else(wrong)?;
    Ok(BeforeMessage { conversation_id: conversation_id.to_string(), message })
}

/// Parse the arguments of a checkpoint action kind (one of [`CHECKPOINT_KINDS`]).
pub fn parse(kind: &str, args: &Map<String, Value>) -> Result<CheckpointAction, ProtocolError> {
    match kind {
        CHECKPOINT_TAKE => {
            only(kind, args, &["label", "before_message"])?;
            let label = match args.get("label") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => return Err(bad(kind, format!("argument 'label' must be a string, not {other}"))),
            };
            let before_message = match args.get("before_message") {
                None | Some(Value::Null) => None,
                Some(v) => Some(before_message(kind, v)?),
            };
            Ok(CheckpointAction::Take { label, before_message })
        }
        CHECKPOINT_LIST => {
            only(kind, args, &[])?;
            Ok(CheckpointAction::List)
        }
        CHECKPOINT_PLAN => {
            only(kind, args, &["id"])?;
            Ok(CheckpointAction::Plan { id: id(kind, args)? })
        }
        CHECKPOINT_RESTORE => {
            only(kind, args, &["id", "skip"])?;
            let skip = match args.get("skip") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| bad(kind, format!("'skip' holds paths (strings), not {v}")))
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => return Err(bad(kind, format!("argument 'skip' must be a list of paths, not {other}"))),
            };
            Ok(CheckpointAction::Restore { id: id(kind, args)?, skip })
        }
        CHECKPOINT_BLOB => {
            only(kind, args, &["hash"])?;
            match args.get("hash") {
                Some(Value::String(h)) => Ok(CheckpointAction::Blob { hash: h.clone() }),
                _ => Err(bad(kind, "missing 1 required argument: 'hash' (a string)")),
            }
        }
        other => Err(ProtocolError::UnsupportedAction(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Action, ActionEvent};
    use serde_json::json;

    fn parsed(v: Value) -> Result<Action, ProtocolError> {
        ActionEvent::from_value(v).unwrap().parse()
    }

    #[test]
    fn checkpoint_actions_parse_with_their_arguments() {
        assert_eq!(
            parsed(json!({"action": "checkpoint_take", "args": {"label": "before 3"}})).unwrap(),
            Action::Checkpoint(CheckpointAction::Take { label: "before 3".into(), before_message: None })
        );
        assert_eq!(
            parsed(json!({"action": "checkpoint_take", "args": {"label": "l", "before_message": {"conversation_id": "c", "message": 3}}}))
                .unwrap(),
            Action::Checkpoint(CheckpointAction::Take {
                label: "l".into(),
                before_message: Some(BeforeMessage { conversation_id: "c".into(), message: 3 })
            })
        );
        assert_eq!(parsed(json!({"action": "checkpoint_list"})).unwrap(), Action::Checkpoint(CheckpointAction::List));
        assert_eq!(
            parsed(json!({"action": "checkpoint_plan", "args": {"id": 4}})).unwrap(),
            Action::Checkpoint(CheckpointAction::Plan { id: 4 })
        );
        assert_eq!(
            parsed(json!({"action": "checkpoint_restore", "args": {"id": 4, "skip": ["/w/a.txt"]}})).unwrap(),
            Action::Checkpoint(CheckpointAction::Restore { id: 4, skip: vec!["/w/a.txt".into()] })
        );
        assert!(Action::KINDS.contains(&"checkpoint_restore"));
    }

    #[test]
    fn bad_checkpoint_arguments_are_refused() {
        assert!(parsed(json!({"action": "checkpoint_plan", "args": {}})).is_err());
        assert!(parsed(json!({"action": "checkpoint_plan", "args": {"id": -1}})).is_err());
        assert!(parsed(json!({"action": "checkpoint_restore", "args": {"id": 1, "skip": "a"}})).is_err());
        assert!(parsed(json!({"action": "checkpoint_take", "args": {"lable": "x"}})).is_err());
        for bad in [
            json!("c 3"),
            json!({"conversation_id": "c"}),
            json!({"conversation_id": "", "message": 3}),
            json!({"conversation_id": "c", "message": -1}),
            json!({"conversation_id": "c", "message": 3, "x": 1}),
        ] {
            let v = json!({"action": "checkpoint_take", "args": {"before_message": bad}});
            assert!(parsed(v).is_err(), "{bad}");
        }
    }
}
