//! Test support: a real python-socketio server (tests/support/server.py) and a scriptable handler.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use oh_protocol::{CmdOutputMetadata, Delegated, Observation, ObservationEvent};
use oh_transport::ActionHandler;
use serde_json::{json, Value};

pub fn python() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("OH_TEST_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let venv = match std::env::var("OH_VENV") {
        Ok(v) => PathBuf::from(v),
        Err(_) => PathBuf::from(std::env::var("HOME").ok()?).join(".cache/openhands-vscode-runtime/venv"),
    };
    let p = venv.join("bin/python");
    p.exists().then_some(p)
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub struct PyServer {
    child: Child,
    stdin: ChildStdin,
    events: mpsc::Receiver<Value>,
    pub port: u16,
    /// `https` when started with `--tls-cert`.
    pub scheme: &'static str,
    /// Every event seen so far (also those consumed by `expect`).
    pub log: Vec<Value>,
}

impl PyServer {
    /// Start the server; `None` (test skipped with a message) if the venv python is missing.
    pub fn start(extra: &[&str]) -> Option<PyServer> {
        Self::start_on(free_port(), extra)
    }

    /// Start on a given port (e.g. to restart a server where an executor is reconnecting).
    pub fn start_on(port: u16, extra: &[&str]) -> Option<PyServer> {
        let Some(py) = python() else {
            // A test that returns early is reported as passed, so skipping must be asked for, and
            // CI (CI=true, which .ci/run sets) never skips: there the missing venv is the failure.
            let under_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty());
            if std::env::var_os("OH_ALLOW_SKIP").is_some() && !under_ci {
                eprintln!("SKIP: no python with python-socketio (OH_ALLOW_SKIP is set)");
                return None;
            }
            panic!(
                "these tests need a real python-socketio server: run `make deps-python` (or set OH_TEST_PYTHON \
                 to a python with python-socketio and uvicorn); OH_ALLOW_SKIP=1 skips them instead, except under CI"
            );
        };
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/server.py");
        let mut child = Command::new(py)
            .arg(script)
            .arg("--port")
            .arg(port.to_string())
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn python server");
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
            }
        });
        let scheme = if extra.contains(&"--tls-cert") { "https" } else { "http" };
        let mut s = PyServer { child, stdin, events: rx, port, scheme, log: Vec::new() };
        s.expect("listening", Duration::from_secs(20), |_| true);
        Some(s)
    }

    pub fn url(&self) -> String {
        format!("{}://127.0.0.1:{}", self.scheme, self.port)
    }

    pub fn cmd(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn send(&mut self, payload: Value) {
        self.cmd(json!({"cmd": "send", "payload": payload}));
    }

    /// Wait for the next event of kind `ev` matching `pred`; panics on timeout.
    pub fn expect(&mut self, ev: &str, timeout: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        self.try_expect(ev, timeout, pred)
            .unwrap_or_else(|| panic!("no {ev} event within {timeout:?}; seen: {:#?}", self.log))
    }

    pub fn try_expect(&mut self, ev: &str, timeout: Duration, pred: impl Fn(&Value) -> bool) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.events.recv_timeout(left) {
                Ok(v) => {
                    self.log.push(v.clone());
                    if v["ev"] == ev && pred(&v) {
                        return Some(v);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Drain events for `d`, returning those of kind `ev`.
    pub fn collect(&mut self, ev: &str, d: Duration) -> Vec<Value> {
        let deadline = Instant::now() + d;
        let mut out = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.events.recv_timeout(left) {
                Ok(v) => {
                    self.log.push(v.clone());
                    if v["ev"] == ev {
                        out.push(v);
                    }
                }
                Err(_) => break,
            }
        }
        out
    }

    /// Wait for the reply whose cause is `id`.
    pub fn reply(&mut self, id: i64, timeout: Duration) -> Value {
        self.expect("reply", timeout, |v| v["data"]["cause"] == id)["data"].clone()
    }
}

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A handler that records executions. `run` commands of the form `sleep:MS` sleep that long;
/// every reply is a CmdOutputObservation whose content is the command (or a read/write reply).
#[derive(Default)]
pub struct MockHandler {
    pub executions: Mutex<HashMap<i64, u32>>,
    pub order: Mutex<Vec<(i64, &'static str, Instant)>>,
    pub sessions: Mutex<Vec<serde_json::Map<String, Value>>>,
    /// Ids the transport asked to cancel, in order; a `read` of `/until-cancelled` waits for it.
    pub cancels: Mutex<Vec<i64>>,
    pub cancelled: tokio::sync::Notify,
}

impl MockHandler {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
    pub fn count(&self, id: i64) -> u32 {
        self.executions.lock().unwrap().get(&id).copied().unwrap_or(0)
    }
}

#[async_trait]
impl ActionHandler for MockHandler {
    async fn execute(&self, job: &Delegated) -> ObservationEvent {
        let event = &job.event;
        let id = event.id.unwrap_or(-1);
        *self.executions.lock().unwrap().entry(id).or_default() += 1;
        self.order.lock().unwrap().push((id, "start", Instant::now()));
        let obs = match event.action.as_str() {
            "run" => {
                let cmd = event.args.get("command").and_then(Value::as_str).unwrap_or("").to_string();
                if let Some(ms) = cmd.strip_prefix("sleep:") {
                    tokio::time::sleep(Duration::from_millis(ms.parse().unwrap_or(0))).await;
                }
                if cmd == "panic" {
                    panic!("boom");
                }
                let md = CmdOutputMetadata { exit_code: 0, ..Default::default() };
                Observation::cmd_output(cmd.clone(), cmd, md, false)
            }
            "read" => {
                let path = event.args.get("path").and_then(Value::as_str).unwrap_or("");
                if path == "/until-cancelled" {
                    while !self.cancels.lock().unwrap().contains(&id) {
                        self.cancelled.notified().await;
                    }
                    return ObservationEvent::reply(event.id, Observation::error("mock read cancelled".to_string()));
                }
                if let Some(ms) = path.strip_prefix("/slow/") {
                    tokio::time::sleep(Duration::from_millis(ms.parse().unwrap_or(0))).await;
                }
                Observation::error(format!("mock read {path}"))
            }
            other => Observation::error(format!("mock {other}")),
        };
        self.order.lock().unwrap().push((id, "end", Instant::now()));
        ObservationEvent::reply(event.id, obs)
    }

    async fn apply_session(&self, settings: &serde_json::Map<String, Value>) {
        self.sessions.lock().unwrap().push(settings.clone());
    }

    async fn cancel(&self, id: i64) {
        self.cancels.lock().unwrap().push(id);
        self.cancelled.notify_waiters();
    }
}

pub fn run_action(id: i64, command: &str) -> Value {
    json!({"id": id, "action": "run", "args": {"command": command, "is_input": false, "thought": "", "blocking": false,
        "is_static": false, "cwd": null, "hidden": false, "confirmation_state": "confirmed", "security_risk": -1}, "timeout": 120.0})
}

pub fn read_action(id: i64, path: &str) -> Value {
    json!({"id": id, "action": "read", "args": {"path": path, "start": 0, "end": -1, "thought": "", "security_risk": -1,
        "impl_source": "default", "view_range": null}})
}

pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| "warn".into()))
        .try_init();
}
