//! The command line, parsed exactly like the Node CLI's (`--flag value` or `--flag=value`).

pub const USAGE: &str = "usage: openhands-vscode-executor --url URL --conversation ID --workspace DIR
                                 [--session-api-key KEY] [--no-change-timeout SECONDS] [--log-level LEVEL]
                                 [--exit-on-stdin-eof]

  --url URL                  the OpenHands server / runtime, e.g. http://127.0.0.1:3000
  --conversation ID          the conversation whose VsCodeRuntime delegates to this executor
  --workspace DIR            workspace root (the shell starts there)
  --session-api-key KEY      when the server requires one (or $OH_SESSION_API_KEY)
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
    pub session_api_key: Option<String>,
    /// Whole seconds (the bash session counts whole seconds).
    pub no_change_timeout: Option<u64>,
    pub log_level: String,
    /// Stop when stdin reaches end of file (the spawning process is gone).
    pub exit_on_stdin_eof: bool,
}

#[derive(Debug, PartialEq)]
pub enum Parsed {
    Help,
    Version,
    Run(Args),
}

pub fn parse(argv: &[String]) -> Result<Parsed, String> {
    let mut url = None;
    let mut conversation = None;
    let mut workspace = None;
    let mut session_api_key = None;
    let mut no_change = None;
    let mut log_level = None;
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
        let slot = match name {
            "--url" => &mut url,
            "--conversation" => &mut conversation,
            "--workspace" => &mut workspace,
            "--session-api-key" => &mut session_api_key,
            "--no-change-timeout" => &mut no_change,
            "--log-level" => &mut log_level,
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
    Ok(Parsed::Run(Args {
        url: url.unwrap_or_default(),
        conversation: conversation.unwrap_or_default(),
        workspace: workspace.unwrap_or_default(),
        session_api_key: session_api_key.filter(|k| !k.is_empty()),
        no_change_timeout,
        log_level: log_level.unwrap_or_else(|| "info".into()),
        exit_on_stdin_eof,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Parsed, String> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn both_forms_and_rounding() {
        let Ok(Parsed::Run(a)) = p(&["--url=http://x", "--conversation", "c", "--workspace", "/w", "--no-change-timeout", "0.4"]) else {
            panic!("expected Run")
        };
        assert_eq!(a.url, "http://x");
        assert_eq!(a.conversation, "c");
        assert_eq!(a.no_change_timeout, Some(1));
        assert_eq!(a.log_level, "info");
        let Ok(Parsed::Run(b)) = p(&["--url", "u", "--conversation", "c", "--workspace", "/w", "--no-change-timeout=2.5"]) else {
            panic!("expected Run")
        };
        assert_eq!(b.no_change_timeout, Some(3));
        assert!(!b.exit_on_stdin_eof);
        let Ok(Parsed::Run(c)) = p(&["--exit-on-stdin-eof", "--url", "u", "--conversation", "c", "--workspace", "/w"]) else {
            panic!("expected Run")
        };
        assert!(c.exit_on_stdin_eof);
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
    }
}
