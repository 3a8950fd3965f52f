//! The command line, parsed the same way by both front ends (`--flag value` or `--flag=value`).

pub const USAGE: &str = "usage: openhands-vscode-executor --url URL --conversation ID --workspace DIR [--root DIR]...
                                 [--session-api-key-fd N | --session-api-key-file PATH]
                                 [--ca-file PEM | --cert-sha256 FINGERPRINT]
                                 [--no-change-timeout SECONDS] [--log-level LEVEL] [--exit-on-stdin-eof]

  --url URL                  the OpenHands server / runtime, e.g. http://127.0.0.1:3000 or
                             https://agent.example:8443; plain http only to this machine (a host
                             whose addresses are all loopback)
  --ca-file PEM              with https: trust only the CA certificate(s) in this file (default:
                             the system's trust store)
  --cert-sha256 FINGERPRINT  with https: accept exactly the (self-signed) certificate with this
                             SHA-256 fingerprint (hex, `:` between bytes allowed), any host name
  --conversation ID          the conversation whose VsCodeRuntime delegates to this executor
  --workspace DIR            workspace root (the shell starts there)
  --root DIR                 another folder of the workspace (repeatable): named to the agent,
                             covered by checkpoints
  --session-api-key-fd N     read the session key from inherited file descriptor N (a pipe the
                             launcher writes it to and closes) up to end of file, then close it
  --session-api-key-file PATH
                             a file holding the session key. Never on the command line (every
                             local user reads it: ps, /proc/PID/cmdline), never in the environment
                             (the agent's shell reads its parent's: /proc/PPID/environ)
  --no-change-timeout N      seconds without output before a command returns (the runtime may override)
  --log-level LEVEL          error | warn | info (default) | debug | trace; logs go to stderr
  --exit-on-stdin-eof        stop (status 0) when standard input reaches end of file: a parent that
                             keeps a pipe to it open takes the executor with it when it dies, even
                             by SIGKILL (what the Python runtime does); input is read and discarded

Exit status: 0 after SIGTERM/SIGINT, at end of input with --exit-on-stdin-eof, or when replaced by a newer executor, 2 when the runtime refuses
the connection (unknown conversation, bad key, protocol mismatch) or cannot be reached, 1 otherwise.";

#[derive(Debug, Default, PartialEq)]
pub struct Args {
    pub url: String,
    pub conversation: String,
    pub workspace: String,
    /// The workspace's other folders (`--root`, in order).
    pub roots: Vec<String>,
    /// Where to read the session key from: an inherited descriptor, or a file.
    pub session_api_key_fd: Option<i32>,
    pub session_api_key_file: Option<String>,
    /// Whole seconds (the bash session counts whole seconds).
    pub no_change_timeout: Option<u64>,
    pub log_level: String,
    /// `--ca-file`, `--cert-sha256` (at most one; checked when the transport is configured).
    pub ca_file: Option<String>,
    pub cert_sha256: Option<String>,
    /// Stop when stdin reaches end of file (the spawning process is gone).
    pub exit_on_stdin_eof: bool,
}

#[derive(Debug, PartialEq)]
pub enum Parsed {
    Help,
    Version,
    Run(Box<Args>),
}

pub fn parse(argv: &[String]) -> Result<Parsed, String> {
    let mut url = None;
    let mut conversation = None;
    let mut workspace = None;
    let mut session_api_key_file = None;
    let mut session_api_key_fd = None;
    let mut no_change = None;
    let mut log_level = None;
    let mut ca_file = None;
    let mut cert_sha256 = None;
    let mut roots = Vec::new();
    let (mut help, mut version, mut exit_on_stdin_eof) = (false, false, false);
    let mut i = 0;
    while i < argv.len() {
        let arg = argv[i].as_str();
        i += 1;
        match arg {
            "-h" | "--help" => {
                help = true;
                continue;
            }
            "--version" => {
                version = true;
                continue;
            }
            "--exit-on-stdin-eof" => {
                exit_on_stdin_eof = true;
                continue;
            }
            _ => {}
        }
        let (name, inline) = match arg.find('=') {
            Some(eq) if arg.starts_with("--") && eq > 0 => (&arg[..eq], Some(arg[eq + 1..].to_string())),
            _ => (arg, None),
        };
        if name == "--root" {
            let value = match inline {
                Some(v) => v,
                None => {
                    let Some(v) = argv.get(i) else { return Err("--root needs a value".into()) };
                    i += 1;
                    v.clone()
                }
            };
            if value.is_empty() {
                return Err("--root needs a folder".into());
            }
            roots.push(value);
            continue;
        }
        let slot = match name {
            "--url" => &mut url,
            "--conversation" => &mut conversation,
            "--workspace" => &mut workspace,
            "--session-api-key" => {
                return Err(
                    "--session-api-key is gone: a key on the command line is readable by every local user (ps, \
                            /proc/PID/cmdline); pass it with --session-api-key-fd N or --session-api-key-file PATH"
                        .into(),
                )
            }
            "--session-api-key-file" => &mut session_api_key_file,
            "--session-api-key-fd" => &mut session_api_key_fd,
            "--no-change-timeout" => &mut no_change,
            "--log-level" => &mut log_level,
            "--ca-file" => &mut ca_file,
            "--cert-sha256" => &mut cert_sha256,
            _ => return Err(format!("unknown argument {name}")),
        };
        let value = match inline {
            Some(v) => v,
            None => {
                let Some(v) = argv.get(i) else { return Err(format!("{name} needs a value")) };
                i += 1;
                v.clone()
            }
        };
        *slot = Some(value);
    }
    if help {
        return Ok(Parsed::Help);
    }
    if version {
        return Ok(Parsed::Version);
    }
    let missing: Vec<&str> = [("url", &url), ("conversation", &conversation), ("workspace", &workspace)]
        .iter()
        .filter(|(_, v)| v.as_deref().is_none_or(str::is_empty))
        .map(|(k, _)| *k)
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing --{}", missing.join(", --")));
    }
    let no_change_timeout = match no_change {
        None => None,
        Some(s) => {
            let n: f64 = s.trim().parse().map_err(|_| "--no-change-timeout must be a number of seconds".to_string())?;
            if !n.is_finite() || n < 0.0 {
                return Err("--no-change-timeout must be a number of seconds".into());
            }
            // Like the Node CLI: rounded, and a positive value never becomes 0 (= no timeout).
            Some((n.round() as u64).max(if n > 0.0 { 1 } else { 0 }))
        }
    };
    let session_api_key_fd = match session_api_key_fd {
        None => None,
        Some(s) => match s.trim().parse::<i32>() {
            // 1 and 2 are the logs; 0 is the parent's pipe with --exit-on-stdin-eof.
            Ok(n) if n >= 3 || (n == 0 && !exit_on_stdin_eof) => Some(n),
            _ => {
                return Err(format!(
                    "--session-api-key-fd must be an inherited file descriptor: 3 or more (or 0 without \
                     --exit-on-stdin-eof), not {s:?}"
                ))
            }
        },
    };
    if session_api_key_fd.is_some() && session_api_key_file.as_deref().is_some_and(|f| !f.is_empty()) {
        return Err("--session-api-key-fd and --session-api-key-file: give one".into());
    }
    Ok(Parsed::Run(Box::new(Args {
        url: url.unwrap_or_default(),
        conversation: conversation.unwrap_or_default(),
        workspace: workspace.unwrap_or_default(),
        roots,
        session_api_key_fd,
        session_api_key_file: session_api_key_file.filter(|k| !k.is_empty()),
        no_change_timeout,
        log_level: log_level.unwrap_or_else(|| "info".into()),
        ca_file,
        cert_sha256,
        exit_on_stdin_eof,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Parsed, String> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn both_forms_and_rounding() {
        let Ok(Parsed::Run(a)) =
            p(&["--url=http://x", "--conversation", "c", "--workspace", "/w", "--no-change-timeout", "0.4"])
        else {
            panic!("expected Run")
        };
        assert_eq!(a.url, "http://x");
        assert_eq!(a.conversation, "c");
        assert_eq!(a.no_change_timeout, Some(1));
        assert_eq!(a.log_level, "info");
        let Ok(Parsed::Run(b)) =
            p(&["--url", "u", "--conversation", "c", "--workspace", "/w", "--no-change-timeout=2.5"])
        else {
            panic!("expected Run")
        };
        assert_eq!(b.no_change_timeout, Some(3));
        assert!(!b.exit_on_stdin_eof);
        let Ok(Parsed::Run(c)) = p(&["--exit-on-stdin-eof", "--url", "u", "--conversation", "c", "--workspace", "/w"])
        else {
            panic!("expected Run")
        };
        assert!(c.exit_on_stdin_eof);
        let Ok(Parsed::Run(d)) = p(&[
            "--url",
            "https://h",
            "--conversation",
            "c",
            "--workspace",
            "/w",
            "--ca-file",
            "/ca.pem",
            "--cert-sha256=ab",
        ]) else {
            panic!("expected Run")
        };
        assert_eq!((d.ca_file.as_deref(), d.cert_sha256.as_deref()), (Some("/ca.pem"), Some("ab")));
    }

    #[test]
    fn extra_roots_in_order() {
        let Ok(Parsed::Run(a)) =
            p(&["--url", "u", "--conversation", "c", "--workspace", "/w", "--root", "/a", "--root=/b"])
        else {
            panic!("expected Run")
        };
        assert_eq!(a.roots, vec!["/a".to_string(), "/b".to_string()]);
        assert_eq!(
            p(&["--url", "u", "--conversation", "c", "--workspace", "/w", "--root"]),
            Err("--root needs a value".into())
        );
        assert_eq!(
            p(&["--url", "u", "--conversation", "c", "--workspace", "/w", "--root="]),
            Err("--root needs a folder".into())
        );
    }

    #[test]
    fn usage_errors() {
        assert_eq!(p(&["--url", "u"]), Err("missing --conversation, --workspace".into()));
        assert_eq!(p(&["--bogus"]), Err("unknown argument --bogus".into()));
        assert_eq!(p(&["--url"]), Err("--url needs a value".into()));
        assert!(p(&["--url", "u", "--conversation", "c", "--workspace", "/w", "--no-change-timeout", "-1"]).is_err());
        assert_eq!(p(&["--help", "--url"]).unwrap_err(), "--url needs a value");
        assert_eq!(p(&["-h"]), Ok(Parsed::Help));
        assert_eq!(p(&["--version"]), Ok(Parsed::Version));
        // The key never on the command line.
        let err = p(&["--url", "u", "--conversation", "c", "--workspace", "/w", "--session-api-key", "k"]).unwrap_err();
        assert!(err.contains("--session-api-key is gone") && !err.contains(" k "), "{err}");
        assert!(p(&["--url", "u", "--conversation", "c", "--workspace", "/w", "--session-api-key=k"]).is_err());
        let Ok(Parsed::Run(a)) =
            p(&["--url", "u", "--conversation", "c", "--workspace", "/w", "--session-api-key-file", "/k"])
        else {
            panic!("expected Run")
        };
        assert_eq!(a.session_api_key_file.as_deref(), Some("/k"));
        let base = ["--url", "u", "--conversation", "c", "--workspace", "/w"];
        let with = |extra: &[&str]| p(&[&base[..], extra].concat());
        let Ok(Parsed::Run(b)) = with(&["--session-api-key-fd", "3"]) else { panic!("expected Run") };
        assert_eq!(b.session_api_key_fd, Some(3));
        let Ok(Parsed::Run(c)) = with(&["--session-api-key-fd=0"]) else { panic!("expected Run") };
        assert_eq!(c.session_api_key_fd, Some(0));
        for bad in [&["--session-api-key-fd", "1"][..], &["--session-api-key-fd", "x"], &["--session-api-key-fd=-1"]] {
            assert!(with(bad).unwrap_err().contains("--session-api-key-fd must be"), "{bad:?}");
        }
        // Stdin is the parent's liveness pipe with --exit-on-stdin-eof: not also the key's.
        assert!(with(&["--session-api-key-fd", "0", "--exit-on-stdin-eof"]).is_err());
        assert!(with(&["--session-api-key-fd", "3", "--session-api-key-file", "/k"]).unwrap_err().contains("give one"));
    }
}
