//! `openhands-vscode-executor` without Node: registers with a VsCodeRuntime (docs/protocol.md) and
//! runs its delegated actions in a persistent bash session, with files on the local filesystem.
//! The command line itself is `oh_front::cli`, which the npm package's CLI runs too.

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    ExitCode::from(oh_front::main_native(&argv))
}
