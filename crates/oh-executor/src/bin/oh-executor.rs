//! `oh-executor replay --workspace DIR`: actions as JSON lines on stdin (event_to_dict form, each
//! with an `id`), one observation JSON line per action on stdout, `cause` = that id.
//!
//! Actions run one after another against the local filesystem, exactly as they would through the
//! socket. Logs go to stderr (`RUST_LOG=debug` for more).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use oh_executor::{Executor, ExecutorConfig, LocalFs};
use tokio::io::{AsyncBufReadExt, BufReader};

#[derive(Parser)]
#[command(name = "oh-executor", version, about = "OpenHands-compatible action executor")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Execute actions read as JSON lines from stdin; write observations as JSON lines to stdout.
    Replay {
        /// Workspace root: the shell starts here and the editor is rooted here.
        #[arg(long)]
        workspace: PathBuf,
        /// Seconds without new output before a non-blocking command returns
        /// (default: $NO_CHANGE_TIMEOUT_SECONDS, else 10, as the action server).
        #[arg(long)]
        no_change_timeout: Option<u64>,
        /// Another folder of a multi-root workspace (repeatable): checkpoints cover every root.
        #[arg(long = "root")]
        roots: Vec<PathBuf>,
        /// Where checkpoints are stored (default: $OH_CHECKPOINT_DIR, else under the state dir).
        #[arg(long)]
        checkpoint_dir: Option<PathBuf>,
    },
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| "warn".into()))
        .init();
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match cli.command {
        Command::Replay { workspace, no_change_timeout, roots, checkpoint_dir } => {
            rt.block_on(replay(workspace, no_change_timeout, roots, checkpoint_dir))
        }
    }
}

async fn replay(
    workspace: PathBuf,
    no_change_timeout: Option<u64>,
    roots: Vec<PathBuf>,
    checkpoint_dir: Option<PathBuf>,
) -> anyhow::Result<()> {
    let workspace = std::fs::canonicalize(&workspace).with_context(|| format!("workspace {}", workspace.display()))?;
    let mut config = ExecutorConfig::new(&workspace);
    for root in roots {
        config.roots.push(std::fs::canonicalize(&root).with_context(|| format!("root {}", root.display()))?);
    }
    if checkpoint_dir.is_some() {
        config.checkpoints.dir = checkpoint_dir;
    }
    config.shell.no_change_timeout_secs = no_change_timeout
        .or_else(|| std::env::var("NO_CHANGE_TIMEOUT_SECONDS").ok().and_then(|v| v.trim().parse().ok()))
        .unwrap_or(10);
    let executor = Executor::start(config, Arc::new(LocalFs)).await.context("starting the bash session")?;
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let stdout = std::io::stdout();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let reply = match oh_protocol::decode_action_json(&line) {
            Ok(decoded) => executor.execute(&decoded.event, &decoded.action).await,
            Err(refusal) => refusal,
        };
        let mut out = stdout.lock();
        writeln!(out, "{}", reply.to_json())?;
        out.flush()?;
    }
    executor.shutdown().await;
    Ok(())
}
