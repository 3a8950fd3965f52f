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
//! This crate knows nothing of shells, files, sockets or Node.

mod action;
pub mod decode;
mod observation;

pub use action::{Action, ActionEvent, CmdRunAction, FileEditAction, FileReadAction, FileWriteAction, ImplSource};
pub use decode::{decode_action_json, decode_delegated, Delegated, Incoming};
pub use observation::{
    truncate_cmd_output, CmdOutputMetadata, Extras, Observation, ObservationEvent, MAX_CMD_OUTPUT_SIZE,
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

/// A Python-compatible rendering of a float as `str(float)` prints it for the values timeouts take
/// (`120.0`, `2.5`, `0.1`, `1e-05`...). Rust's shortest round-trip formatting agrees with Python's
/// `repr` digits; only the integral case needs the `.0` that Python adds.
pub fn python_float_str(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let abs = v.abs();
    if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
        // Python switches to exponent notation outside [1e-4, 1e16): 1e-05, 1e+16.
        let s = format!("{v:e}");
        let (mant, exp) = s.split_once('e').expect("exponent form");
        let exp: i32 = exp.parse().expect("exponent");
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    let s = format!("{v}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::python_float_str;

    #[test]
    fn floats_print_like_python_str() {
        assert_eq!(python_float_str(120.0), "120.0");
        assert_eq!(python_float_str(2.5), "2.5");
        assert_eq!(python_float_str(1.0), "1.0");
        assert_eq!(python_float_str(0.1), "0.1");
        assert_eq!(python_float_str(0.00001), "1e-05");
        assert_eq!(python_float_str(1e16), "1e+16");
        assert_eq!(python_float_str(-3.0), "-3.0");
    }
}
