//! The executor's front end, without Node: what the native binary (`oh-headless`) and the Node
//! binding (`oh-node`) share. The session set-up every front end does the same way (`session`:
//! configurations, why a connection ended, exit statuses), the whole command line (`cli`, `args`,
//! `key`: the npm package's CLI is a shim that calls [`cli`] through the binding), and the log
//! line format (`log`, `log_record`).

pub mod args;
pub mod cli;
pub mod key;
pub mod log;
pub mod log_record;
pub mod session;

pub use cli::{main_native, prepare, run, watch_stdin, Front, Prepared, StopSender, Stops};
pub use key::OwnDescriptors;
pub use session::{exit_status, Ending, SessionSettings};
