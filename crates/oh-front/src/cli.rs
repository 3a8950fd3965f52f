//! The executor's command line, one implementation for both front ends: the native binary
//! (`oh-headless`) and the npm package's `openhands-vscode-executor` (a shim that hands its argv
//! to this code through the Node binding). Same usage, checks, logs and exit statuses by
//! construction.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use oh_executor::{ExecutorHandler, LocalFs};
use oh_transport::{CertificateCheck, StatusEvent, Transport};
use tokio::sync::mpsc;

use crate::args::{self, Parsed, USAGE};
use crate::key::{self, OwnDescriptors};
use crate::log;
use crate::session::{Ending, SessionSettings};

/// Which program runs the command line.
pub struct Front {
    /// What `--version` prints.
    pub version: String,
    /// What the runtime logs as `auth.client` (tells the two programs apart).
    pub client: String,
    pub own_descriptors: OwnDescriptors,
}

/// A command line checked and ready to connect.
pub struct Prepared {
    settings: SessionSettings,
    exit_on_stdin_eof: bool,
}

impl Prepared {
    pub fn exit_on_stdin_eof(&self) -> bool {
        self.exit_on_stdin_eof
    }
}

const NAME: &str = "openhands-vscode-executor";

/// Parses and checks `argv` (the arguments after the program's name), reads the session key and
/// installs the stderr log. `Err(status)`: done, with usage, version or the error already printed
/// (64: a usage error, 66: a missing workspace, root or key).
pub fn prepare(argv: &[String], front: &Front) -> Result<Prepared, u8> {
    let a = match args::parse(argv) {
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return Err(0);
        }
        Ok(Parsed::Version) => {
            println!("{}", front.version);
            return Err(0);
        }
        Ok(Parsed::Run(a)) => *a,
        Err(msg) => {
            eprintln!("{NAME}: {msg}\n{USAGE}");
            return Err(64);
        }
    };
    let certificate_check =
        CertificateCheck::from_settings(a.ca_file.as_deref(), a.cert_sha256.as_deref()).map_err(|msg| {
            eprintln!("{NAME}: --ca-file / --cert-sha256: {msg}\n{USAGE}");
            64
        })?;
    let workspace = existing_folder("workspace", &a.workspace)?;
    // The other folders of a multi-root workspace: absolute, existing folders, as the workspace.
    let mut extra_roots = Vec::new();
    for root in &a.roots {
        let path = existing_folder("root", root)?;
        if path != workspace && !extra_roots.contains(&path) {
            extra_roots.push(path);
        }
    }
    // The key, from the launcher's pipe or a file, never from the environment (key.rs says why).
    let session_api_key = key::session_key(
        a.session_api_key_fd,
        a.session_api_key_file.as_deref(),
        std::env::var_os(key::REFUSED_KEY_VARIABLE).is_some(),
        front.own_descriptors,
    )
    .map_err(|msg| {
        eprintln!("{NAME}: {msg}");
        66
    })?;
    log::install(&a.log_level);
    Ok(Prepared {
        settings: SessionSettings {
            url: a.url,
            conversation: a.conversation,
            workspace,
            extra_roots,
            no_change_timeout_secs: a.no_change_timeout,
            session_api_key,
            certificate_check,
            client: front.client.clone(),
        },
        exit_on_stdin_eof: a.exit_on_stdin_eof,
    })
}

/// `path` made absolute; 66 (printed) unless it is a folder.
fn existing_folder(what: &str, path: &str) -> Result<PathBuf, u8> {
    let abs = std::path::absolute(path).map_err(|e| {
        eprintln!("{NAME}: {what} {path}: {e}");
        66
    })?;
    match std::fs::metadata(&abs) {
        Ok(m) if m.is_dir() => Ok(abs),
        Ok(_) => {
            eprintln!("{NAME}: {what} {}: not a directory", abs.display());
            Err(66)
        }
        Err(e) => {
            eprintln!("{NAME}: {what} {}: {e}", abs.display());
            Err(66)
        }
    }
}

/// The reasons to stop (a signal's name, the end of stdin), from whichever source the front end
/// has: its own signal handlers, or Node's passed in through the binding.
pub struct Stops(mpsc::UnboundedReceiver<String>);

/// Sends a reason to stop.
#[derive(Clone)]
pub struct StopSender(mpsc::UnboundedSender<String>);

impl StopSender {
    pub fn stop(&self, reason: &str) {
        let _ = self.0.send(reason.to_string());
    }
}

impl Stops {
    pub fn channel() -> (StopSender, Stops) {
        let (tx, rx) = mpsc::unbounded_channel();
        (StopSender(tx), Stops(rx))
    }

    async fn recv(&mut self) -> String {
        match self.0.recv().await {
            Some(reason) => reason,
            // Every sender gone: nothing can ask to stop any more.
            None => std::future::pending().await,
        }
    }
}

/// With `--exit-on-stdin-eof`: a plain thread reads and discards stdin until end of file (or an
/// error: the parent is gone either way), then asks to stop. A blocking read: tokio's stdin would
/// hold a runtime worker; the thread is never joined and ends with the process.
pub fn watch_stdin(stop: StopSender) -> std::io::Result<()> {
    std::thread::Builder::new().name("stdin-eof".into()).spawn(move || {
        use std::io::Read;
        let mut buf = [0u8; 4096];
        let mut stdin = std::io::stdin().lock();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // A non-blocking stdin (a parent's socket pair): wait until it is readable.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => wait_readable(0),
                Err(_) => break,
            }
        }
        stop.stop("end of stdin (--exit-on-stdin-eof)");
    })?;
    Ok(())
}

fn wait_readable(fd: i32) {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd for the duration of the call.
    unsafe { libc::poll(&mut p, 1, -1) };
}

/// SIGTERM and SIGINT, as reasons to stop (the native binary; Node has its own handlers).
pub fn watch_signals(stop: StopSender) -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::spawn(async move {
        loop {
            let name = tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            };
            stop.stop(name);
        }
    });
    Ok(())
}

/// Connects, serves until the connection ends or a reason to stop arrives, and returns the exit
/// status (0 stopped or replaced; else by the failure's code: `session::exit_status`).
pub async fn run(prepared: Prepared, mut stops: Stops) -> u8 {
    let s = &prepared.settings;
    let handler = Arc::new(ExecutorHandler::new(s.executor_config(), Arc::new(LocalFs)));
    let cfg = s.transport_config();
    let executor_id = cfg.executor_id.clone();
    // The last status (the transport reports each change once), for the closing line.
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
    let transport = tokio::select! {
        r = Transport::connect(cfg, handler.clone(), Some(sink)) => r,
        reason = stops.recv() => {
            log::line("info", "executor", &format!("{reason}: stopping"));
            handler.shutdown().await;
            return Ending::Stopped.exit_status();
        }
    };
    let transport = match transport {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{NAME}: {}: {e}", e.code().as_str());
            handler.shutdown().await;
            return Ending::of(false, Some(&e)).exit_status();
        }
    };
    log::line(
        "info",
        "executor",
        &format!("registered with {} for conversation {} (executor {executor_id})", s.url, s.conversation),
    );
    tokio::select! {
        reason = stops.recv() => {
            log::line("info", "executor", &format!("{reason}: stopping"));
            transport.shutdown().await;
            handler.shutdown().await;
            Ending::Stopped.exit_status()
        }
        _ = transport.closed() => {
            transport.shutdown().await;
            handler.shutdown().await;
            let failure = transport.close_error();
            let why = {
                let st = last.lock().unwrap_or_else(|p| p.into_inner());
                // The code first (a tampered session: `EAUTH`), then the last status message.
                let code = failure.as_ref().map(|e| format!("{}: ", e.code().as_str())).unwrap_or_default();
                match &st.1 {
                    Some(m) => format!("{}: {code}{m}", st.0),
                    None => st.0.clone(),
                }
            };
            eprintln!("{NAME}: connection closed ({why})");
            Ending::of(false, failure.as_ref()).exit_status()
        }
    }
}

/// The native binary's whole life: prepare, a small runtime, signals, run.
pub fn main_native(argv: &[String]) -> u8 {
    let version = env!("CARGO_PKG_VERSION");
    let front = Front {
        version: version.to_string(),
        // `+native` tells this binary from the Node CLI in the runtime's `auth.client` log.
        client: format!("{NAME}-cli/{version}+native"),
        own_descriptors: OwnDescriptors::CloseOnExec,
    };
    let prepared = match prepare(argv, &front) {
        Ok(p) => p,
        Err(status) => return status,
    };
    // Two workers: the transport and the shell's I/O never need more, and each thread costs memory.
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{NAME}: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let (stop, stops) = Stops::channel();
    let status = runtime.block_on(async {
        let watched =
            watch_signals(stop.clone())
                .and_then(|()| if prepared.exit_on_stdin_eof() { watch_stdin(stop) } else { Ok(()) });
        if let Err(e) = watched {
            eprintln!("{NAME}: cannot install signal handlers: {e}");
            return 1;
        }
        run(prepared, stops).await
    });
    // The transport may leave blocking reader threads behind; do not wait for them.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    status
}
