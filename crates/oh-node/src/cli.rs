//! The npm package's `openhands-vscode-executor` command: its bin is a shim that hands argv and
//! Node's signals to `oh_front::cli`, the command line the native binary runs, so both programs
//! parse, check, log and exit alike by construction.

use std::sync::Mutex;

use napi_derive::napi;
use oh_front::{Front, OwnDescriptors, StopSender, Stops};

/// Where `stopCli` sends its reason while a command line runs.
static STOP: Mutex<Option<StopSender>> = Mutex::new(None);

/// Runs the executor's command line (`argv` without node and the script) to its end; resolves
/// with the exit status. Usage, logs and errors go to this process's stdout and stderr. `version`
/// is the npm package's.
#[napi]
pub async fn run_cli(argv: Vec<String>, version: String) -> u32 {
    let front = Front {
        client: format!("openhands-vscode-executor-cli/{version}"),
        version,
        own_descriptors: OwnDescriptors::ProcFdOnly,
    };
    // First: a signal that arrives while the key is read waits in the channel for `run`.
    let (stop, stops) = Stops::channel();
    *STOP.lock().unwrap_or_else(|p| p.into_inner()) = Some(stop.clone());
    let status = match oh_front::prepare(&argv, &front) {
        Err(status) => status,
        Ok(prepared) => match prepared.exit_on_stdin_eof().then(|| oh_front::watch_stdin(stop)).transpose() {
            Err(e) => {
                eprintln!("openhands-vscode-executor: cannot watch stdin: {e}");
                1
            }
            Ok(_) => oh_front::run(prepared, stops).await,
        },
    };
    STOP.lock().unwrap_or_else(|p| p.into_inner()).take();
    status.into()
}

/// Asks the running command line to stop (`reason`: the signal's name, logged); ignored when
/// none runs.
#[napi]
pub fn stop_cli(reason: String) {
    if let Some(stop) = STOP.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        stop.stop(&reason);
    }
}
