//! `openhands-vscode-executor` without Node: registers with a VsCodeRuntime (docs/protocol.md) and
//! runs its delegated actions in a persistent bash session, with files on the local filesystem.
//! Same flags, logs and exit codes as `npm/executor/bin/openhands-vscode-executor.js`.

mod args;
mod log;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use oh_executor::{ExecutorConfig, ExecutorHandler, LocalFs};
use oh_transport::{CertificateCheck, StatusEvent, Transport, TransportConfig};

use args::{Args, Parsed, USAGE};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match args::parse(&argv) {
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return ExitCode::from(0);
        }
        Ok(Parsed::Version) => {
            println!("{VERSION}");
            return ExitCode::from(0);
        }
        Ok(Parsed::Run(a)) => *a,
        Err(msg) => {
            eprintln!("openhands-vscode-executor: {msg}\n{USAGE}");
            return ExitCode::from(64);
        }
    };
    let certificate_check = match CertificateCheck::from_settings(args.ca_file.as_deref(), args.cert_sha256.as_deref())
    {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("openhands-vscode-executor: --ca-file / --cert-sha256: {msg}\n{USAGE}");
            return ExitCode::from(64);
        }
    };
    let workspace = match std::path::absolute(&args.workspace) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("openhands-vscode-executor: workspace {}: {e}", args.workspace);
            return ExitCode::from(66);
        }
    };
    match std::fs::metadata(&workspace) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            eprintln!("openhands-vscode-executor: workspace {}: not a directory", workspace.display());
            return ExitCode::from(66);
        }
        Err(e) => {
            eprintln!("openhands-vscode-executor: workspace {}: {e}", workspace.display());
            return ExitCode::from(66);
        }
    }
    // The other folders of a multi-root workspace: absolute, existing folders, as the workspace.
    let mut extra_roots = Vec::new();
    for root in &args.roots {
        let path = match std::path::absolute(root) {
            Ok(p) if p.is_dir() => p,
            Ok(p) => {
                eprintln!("openhands-vscode-executor: root {}: not a directory", p.display());
                return ExitCode::from(66);
            }
            Err(e) => {
                eprintln!("openhands-vscode-executor: root {root}: {e}");
                return ExitCode::from(66);
            }
        };
        if path != workspace && !extra_roots.contains(&path) {
            extra_roots.push(path);
        }
    }
    // The key, from the launcher's pipe or a file, never from the environment (args::session_key
    // says why). First thing that touches descriptors: the pipe's number is the launcher's.
    let session_api_key = match args::session_key(
        args.session_api_key_fd,
        args.session_api_key_file.as_deref(),
        std::env::var_os(args::REFUSED_KEY_VARIABLE).is_some(),
    ) {
        Ok(k) => k,
        Err(msg) => {
            eprintln!("openhands-vscode-executor: {msg}");
            return ExitCode::from(66);
        }
    };
    log::install(&args.log_level);
    // Two workers: the transport and the shell's I/O never need more, and each thread costs memory.
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("openhands-vscode-executor: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(run(args, certificate_check, session_api_key, &workspace, extra_roots));
    // The transport may leave blocking reader threads behind; do not wait for them.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    ExitCode::from(code)
}

async fn run(
    args: Args,
    certificate_check: CertificateCheck,
    session_api_key: Option<String>,
    workspace: &Path,
    extra_roots: Vec<PathBuf>,
) -> u8 {
    let workspace_str = workspace.to_string_lossy().into_owned();
    let mut config = ExecutorConfig::new(workspace);
    // Checkpoints cover every folder; the shell and the editor start in the first.
    config.roots.extend(extra_roots.iter().cloned());
    config.checkpoints.conversation = Some(args.conversation.clone());
    if let Some(secs) = args.no_change_timeout {
        config.shell.no_change_timeout_secs = secs;
    }
    let mut cfg = TransportConfig::new(&args.url, &args.conversation, &workspace_str);
    config.v1_contents_limit = cfg.max_reply_bytes;
    let handler = Arc::new(ExecutorHandler::new(config, Arc::new(LocalFs)));
    cfg.session_api_key = session_api_key;
    cfg.certificate_check = certificate_check;
    cfg.extra_roots = extra_roots.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    // The runtime logs `auth.client`; `+native` tells this binary from the Node CLI.
    cfg.client = format!("openhands-vscode-executor-cli/{VERSION}+native");
    let executor_id = cfg.executor_id.clone();

    // The last status (the transport reports each change once), logged as the Node CLI logs it.
    let last: Arc<Mutex<(String, Option<String>)>> = Arc::new(Mutex::new(("disconnected".into(), None)));
    let sink: oh_transport::StatusSink = {
        let last = last.clone();
        Arc::new(move |ev: &StatusEvent| {
            *last.lock().unwrap_or_else(|p| p.into_inner()) = (ev.state.as_str().to_string(), ev.message.clone());
            match &ev.message {
                Some(m) => log::line("info", "executor", &format!("status {}: {m}", ev.state.as_str())),
                None => log::line("info", "executor", &format!("status {}", ev.state.as_str())),
            }
        })
    };

    let mut signals = match Signals::new(args.exit_on_stdin_eof) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("openhands-vscode-executor: cannot install signal handlers: {e}");
            return 1;
        }
    };

    let transport = tokio::select! {
        r = Transport::connect(cfg, handler.clone(), Some(sink)) => r,
        name = signals.recv() => {
            log::line("info", "executor", &format!("{name}: stopping"));
            handler.shutdown().await;
            return 0;
        }
    };
    let transport = match transport {
        Ok(t) => t,
        Err(e) => {
            eprintln!("openhands-vscode-executor: {}: {e}", e.code().as_str());
            handler.shutdown().await;
            return e.code().exit_status();
        }
    };
    log::line(
        "info",
        "executor",
        &format!("registered with {} for conversation {} (executor {executor_id})", args.url, args.conversation),
    );

    tokio::select! {
        name = signals.recv() => {
            log::line("info", "executor", &format!("{name}: stopping"));
            transport.shutdown().await;
            handler.shutdown().await;
            0
        }
        _ = transport.closed() => {
            transport.shutdown().await;
            handler.shutdown().await;
            let why = {
                let st = last.lock().unwrap_or_else(|p| p.into_inner());
                // The code first, as the Node CLI prints it (a tampered session: `EAUTH`).
                let code = transport.close_error().map(|e| format!("{}: ", e.code().as_str())).unwrap_or_default();
                match &st.1 {
                    Some(m) => format!("{}: {code}{m}", st.0),
                    None => st.0.clone(),
                }
            };
            eprintln!("openhands-vscode-executor: connection closed ({why})");
            // The transport ends without an error only when a newer executor replaced it.
            match transport.close_error() {
                Some(e) => e.code().exit_status(),
                None => 0,
            }
        }
    }
}

/// SIGTERM and SIGINT, and with `--exit-on-stdin-eof` the end of stdin: the reasons to stop.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    stdin_eof: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl Signals {
    fn new(exit_on_stdin_eof: bool) -> std::io::Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        let stdin_eof = exit_on_stdin_eof.then(watch_stdin).transpose()?;
        Ok(Signals { term: signal(SignalKind::terminate())?, int: signal(SignalKind::interrupt())?, stdin_eof })
    }

    async fn recv(&mut self) -> &'static str {
        let eof = async {
            match self.stdin_eof.as_mut() {
                // A read error ends the watcher too (the sender is dropped): also "the parent is gone".
                Some(rx) => {
                    let _ = rx.await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
            _ = eof => "end of stdin (--exit-on-stdin-eof)",
        }
    }
}

/// A plain thread reads and discards stdin until end of file (a blocking read: tokio's stdin
/// would hold a runtime worker, and this thread is never joined; it ends with the process).
fn watch_stdin() -> std::io::Result<tokio::sync::oneshot::Receiver<()>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new().name("stdin-eof".into()).spawn(move || {
        use std::io::Read;
        let mut buf = [0u8; 4096];
        let mut stdin = std::io::stdin().lock();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = tx.send(());
    })?;
    Ok(rx)
}
