//! Wire types of OpenHands' V0 event stream (`oh_event` payloads, `/execute_action` bodies).
//!
//! The JSON shape is the one `openhands.events.serialization.event_to_dict` writes and
//! `event_from_dict` reads (openhands-ai 1.6.0). Two rules drive the design:
//!
//! * **Actions are kept raw.** An [`ActionEvent`] stores the `args` object exactly as received, so
//!   a round trip is lossless; [`ActionEvent::parse`] gives a typed [`Action`] for the executor.
//! * **Observations are built typed** and serialised with the reference's key order
//!   (`id, timestamp, source, message, cause, observation, content, extras, success`), with
//!   `message` and `success` derived the way the Python properties derive them.
//!
//! The OpenHands V1 tool actions (`v1_terminal`, `v1_file_editor`) are typed [`Action`] variants
//! too (module [`v1`]), decoded by the same entry point, and their observations typed [`Extras`]
//! variants (`V1Terminal`, `V1FileEditor`, `V1Interrupt`).
//!
//! This crate knows nothing of shells, files, sockets or Node.

mod action;
pub mod checkpoint;
pub mod decode;
mod handler;
mod observation;
pub mod v1;

pub use action::{
    Action, ActionEvent, CmdRunAction, FileEditAction, FileReadAction, FileWriteAction, ImplSource, McpToolAction,
    MCP_TOOL,
};
pub use decode::{decode_action_json, decode_delegated, DecodedAction, Delegated, Incoming};
pub use handler::ActionHandler;
pub use observation::{
    truncate_cmd_output, CmdOutputMetadata, Extras, Observation, ObservationEvent, MAX_CMD_OUTPUT_SIZE,
};
pub use v1::{
    v1_truncate, V1FileEditorAction, V1FileEditorObservation, V1InterruptObservation, V1TerminalAction,
    V1TerminalObservation,
};

/// Errors raised while decoding an event.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum ProtocolError {
    /// The payload is not a JSON object with an `action` or `observation` key.
    #[error("Unknown event type: {0}")]
    UnknownEventType(String),
    /// An action kind that this executor does not run (e.g. `browse`, `message`).
    #[error("Action {0} is not supported in the current runtime.")]
    UnsupportedAction(String),
    /// An argument has the wrong type or an unknown name.
    #[error("action={action} has the wrong arguments: {detail}")]
    BadArguments { action: String, detail: String },
}
