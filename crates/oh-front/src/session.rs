//! What every front end of the executor sets up the same way: the executor core's and the
//! transport's configuration for one conversation, and how a connection that ended is read (why
//! it ended, and the exit status the command line gives for it).

use std::path::{Path, PathBuf};

use oh_executor::ExecutorConfig;
use oh_transport::{CertificateCheck, ErrorCode, TransportConfig, TransportError};

/// One conversation's executor, as a front end was asked to run it.
pub struct SessionSettings {
    pub url: String,
    pub conversation: String,
    /// Absolute; the shell and the editor start here.
    pub workspace: PathBuf,
    /// The workspace's other folders (absolute): named to the agent, covered by checkpoints.
    pub extra_roots: Vec<PathBuf>,
    /// Whole seconds without output before a command returns (`None`: the core's default).
    pub no_change_timeout_secs: Option<u64>,
    pub session_api_key: Option<String>,
    pub certificate_check: CertificateCheck,
    /// What the runtime logs as `auth.client`.
    pub client: String,
}

impl SessionSettings {
    /// The executor core's configuration: every root checkpointed in this conversation's own
    /// store, V1 file contents capped at what the transport can carry back in one reply.
    pub fn executor_config(&self) -> ExecutorConfig {
        let mut config = ExecutorConfig::new(&self.workspace);
        config.roots.extend(self.extra_roots.iter().cloned());
        config.checkpoints.conversation = Some(self.conversation.clone());
        if let Some(secs) = self.no_change_timeout_secs {
            config.shell.no_change_timeout_secs = secs;
        }
        config.v1_contents_limit = oh_transport::MAX_REPLY_BYTES;
        config
    }

    /// The transport's configuration (a fresh executor id; the caller may set its own).
    pub fn transport_config(&self) -> TransportConfig {
        let mut cfg = TransportConfig::new(&self.url, &self.conversation, path_text(&self.workspace));
        cfg.session_api_key = self.session_api_key.clone();
        cfg.certificate_check = self.certificate_check.clone();
        cfg.extra_roots = self.extra_roots.iter().map(|p| path_text(p)).collect();
        cfg.client = self.client.clone();
        cfg
    }
}

fn path_text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Why a connection ended for good.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// This side stopped it (a signal, `stop()`).
    Stopped,
    /// A newer executor registered for the same conversation.
    Replaced,
    /// A permanent failure.
    Failed(ErrorCode),
}

impl Ending {
    /// `stopped`: this side asked to stop; `failure`: the transport's close error (or the failed
    /// start's). The transport ends without an error only when it is replaced or stopped.
    pub fn of(stopped: bool, failure: Option<&TransportError>) -> Self {
        match failure {
            _ if stopped => Ending::Stopped,
            Some(e) => Ending::Failed(e.code()),
            None => Ending::Replaced,
        }
    }

    /// The command line's exit status: 0 when stopped or replaced, else [`exit_status`].
    pub fn exit_status(self) -> u8 {
        match self {
            Ending::Stopped | Ending::Replaced => 0,
            Ending::Failed(code) => exit_status(code),
        }
    }
}

/// The exit status of the executor's command line when it ends with this failure: 2 when the
/// registration was refused or never happened (a supervisor should not simply restart), 1 for any
/// other failure.
pub fn exit_status(code: ErrorCode) -> u8 {
    match code {
        ErrorCode::NoRuntime | ErrorCode::Auth | ErrorCode::Refused | ErrorCode::Protocol | ErrorCode::Unreachable => 2,
        ErrorCode::Stopped | ErrorCode::Shell => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses_of_every_code() {
        let codes: Vec<_> = ErrorCode::ALL.iter().map(|c| (c.as_str(), exit_status(*c))).collect();
        assert_eq!(
            codes,
            [
                ("ENORUNTIME", 2),
                ("EAUTH", 2),
                ("EREFUSED", 2),
                ("EPROTOCOL", 2),
                ("EUNREACHABLE", 2),
                ("ESTOPPED", 1),
                ("ESHELL", 1)
            ]
        );
    }

    #[test]
    fn endings() {
        let auth = TransportError::SessionBroken("bad MAC".into());
        assert_eq!(Ending::of(true, Some(&auth)), Ending::Stopped);
        assert_eq!(Ending::of(false, Some(&auth)), Ending::Failed(ErrorCode::Auth));
        assert_eq!(Ending::of(false, None), Ending::Replaced);
        assert_eq!(Ending::of(false, Some(&auth)).exit_status(), 2);
        assert_eq!(Ending::Replaced.exit_status(), 0);
    }

    #[test]
    fn configs_carry_every_setting() {
        let s = SessionSettings {
            url: "http://127.0.0.1:1".into(),
            conversation: "c1".into(),
            workspace: "/w".into(),
            extra_roots: vec!["/r".into()],
            no_change_timeout_secs: Some(7),
            session_api_key: Some("k".into()),
            certificate_check: CertificateCheck::default(),
            client: "me/1".into(),
        };
        let e = s.executor_config();
        assert_eq!(e.roots, [PathBuf::from("/w"), PathBuf::from("/r")]);
        assert_eq!(e.checkpoints.conversation.as_deref(), Some("c1"));
        assert_eq!(e.shell.no_change_timeout_secs, 7);
        assert_eq!(e.v1_contents_limit, oh_transport::MAX_REPLY_BYTES);
        let t = s.transport_config();
        assert_eq!((t.session_api_key.as_deref(), t.client.as_str()), (Some("k"), "me/1"));
        assert_eq!(t.extra_roots, ["/r"]);
        assert_eq!(t.max_reply_bytes, oh_transport::MAX_REPLY_BYTES);
    }
}
