//! The executor's credentials in its own environment do not reach the agent's bash.
//! A test binary of its own: it sets process environment variables before any thread reads them.
use oh_protocol::CmdRunAction;
use oh_shell::{BashSession, ShellConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn executor_credentials_not_inherited_by_bash() {
    let names = [
        ("OH_SESSION_API_KEY", "executor-key-value-1"),
        ("SESSION_API_KEY", "openhands-key-value-2"),
        ("OH_SESSION_API_KEYS_0", "agent-server-key-value-3"),
        ("OH_SHELL_TEST_PLAIN", "plain-value-4"),
    ];
    for (k, v) in names {
        // Set before the session (and its threads) start; this binary has one test.
        std::env::set_var(k, v);
    }
    let d = std::env::temp_dir().join(format!("oh-shell-credenv-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let s = BashSession::start(ShellConfig::new(&d)).await.unwrap();
    let o = s.execute(&CmdRunAction::new("env")).await;
    s.close().await;
    let _ = std::fs::remove_dir_all(&d);
    // The plain variable shows the environment was inherited at all.
    assert!(o.content.contains("OH_SHELL_TEST_PLAIN=plain-value-4"), "{:?}", o);
    for (k, v) in &names[..3] {
        assert!(
            !o.content.contains(v) && !o.content.contains(&format!("{k}=")),
            "{k} reached the agent's shell:\n{}",
            o.content
        );
    }
}
