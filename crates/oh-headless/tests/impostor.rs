//! The headless executor binary against real python-socketio servers (oh-transport's test server,
//! tests/support/server.py): an impostor on the configured port learns nothing and runs nothing;
//! the key never appears in the executor's own logs, even at trace level.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

const KEY: &str = "headless-session-key-7f3a9c";

fn python() -> PathBuf {
    if let Ok(p) = std::env::var("OH_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = std::env::var("OH_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/openhands-vscode-runtime/venv"));
    let p = venv.join("bin/python");
    assert!(
        p.exists(),
        "these tests need a python with python-socketio and uvicorn: run `make deps-python` or set OH_TEST_PYTHON"
    );
    p
}

struct Server {
    child: Child,
    events: mpsc::Receiver<Value>,
    port: u16,
    seen: Vec<Value>,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../oh-transport/tests/support/server.py");
        let mut child = Command::new(python())
            .arg(script)
            .args(["--port", &port.to_string()])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        let mut s = Server { child, events: rx, port, seen: Vec::new() };
        assert!(s.wait_for("listening", Duration::from_secs(20)), "the server did not start");
        s
    }

    fn wait_for(&mut self, ev: &str, d: Duration) -> bool {
        let deadline = Instant::now() + d;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.events.recv_timeout(left) {
                Ok(v) => {
                    let hit = v["ev"] == ev;
                    self.seen.push(v);
                    if hit {
                        return true;
                    }
                }
                Err(_) => return false,
            }
        }
        false
    }

    fn drain(&mut self, d: Duration) {
        self.wait_for("never-sent", d);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The executor, with the key on a pipe as its stdin (`--session-api-key-fd 0`): the key is in
/// neither its arguments nor its environment.
fn executor(port: u16, workspace: &std::path::Path, key: &str) -> Command {
    use std::io::Write;
    let (reader, mut writer) = std::io::pipe().unwrap();
    writer.write_all(key.as_bytes()).unwrap();
    drop(writer);
    let mut c = Command::new(env!("CARGO_BIN_EXE_openhands-vscode-executor"));
    c.args(["--url", &format!("http://127.0.0.1:{port}"), "--conversation", "conv1", "--workspace"])
        .arg(workspace)
        .args(["--log-level", "trace", "--session-api-key-fd", "0"])
        .env("RUST_LOG", "trace")
        .stdin(reader)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

#[test]
fn an_impostor_on_the_configured_port_learns_nothing_and_runs_nothing() {
    for mode in ["challenge", "welcome"] {
        let ws = tempfile::tempdir().unwrap();
        let marker = ws.path().join("owned");
        let mut server = Server::start(&["--impostor", "--impostor-mode", mode, "--marker", marker.to_str().unwrap()]);
        let out = executor(server.port, ws.path(), KEY).output().unwrap();
        let log = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{mode}: {log}");
        assert!(
            log.contains("could not prove it holds the session key: not the OpenHands you configured?"),
            "{mode}: {log}"
        );
        server.drain(Duration::from_millis(1500));
        let received: Vec<&Value> = server.seen.iter().filter(|v| v["ev"] == "received").collect();
        assert!(received.iter().any(|v| v["what"] == "connect"), "{mode}: {:#?}", server.seen);
        let text = serde_json::to_string(&received).unwrap();
        assert!(!text.contains(KEY), "{mode}: the impostor received the key: {text}");
        assert!(!received.iter().any(|v| v["what"] == "oh_executor_auth" || v["what"] == "oh_event"), "{mode}: {text}");
        assert!(!marker.exists(), "{mode}: the impostor's action ran");
        assert!(!log.contains(KEY), "{mode}: the key is in the executor's log");
    }
}

/// At trace level (rust_socketio's and tungstenite's records included) the executor never logs
/// the key: it is in no URL, no auth and no event.
#[test]
fn the_key_never_appears_in_trace_logs() {
    let ws = tempfile::tempdir().unwrap();
    let mut server = Server::start(&["--key", KEY]);
    let mut child = executor(server.port, ws.path(), KEY).spawn().unwrap();
    assert!(server.wait_for("registered", Duration::from_secs(20)), "{:#?}", server.seen);
    // The server marks the registration before the executor has read the answer and logged it:
    // stop the executor only once its own "registered with" line is out (else, under load, the
    // TERM can land first and the log below lacks it).
    let (lines, seen) = mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut log = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !log.contains("registered with") && Instant::now() < deadline {
        if let Ok(line) = seen.recv_timeout(Duration::from_millis(100)) {
            log.push_str(&line);
            log.push('\n');
        }
    }
    terminate(child.id());
    child.wait().unwrap();
    reader.join().unwrap();
    log.extend(seen.try_iter().map(|l| l + "\n"));
    assert!(log.contains("TRACE"), "trace logging was not on: {log}");
    assert!(log.contains("registered with"), "{log}");
    assert!(!log.contains(KEY), "the key is in the trace log:\n{log}");
}

fn terminate(pid: u32) {
    let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
}
