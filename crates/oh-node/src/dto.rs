//! The plain data types of the JS API (options, file stats, directory entries) and their
//! conversions to the core types. The executor class, the fs callbacks and the errors have their
//! own modules.

use std::collections::HashMap;

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::sys;
use napi_derive::napi;
use oh_files::FileKind;

/// Options of `new Executor(options, fs, hooks?)`. Its `Debug` shows the key as `<redacted>`.
#[napi(object)]
#[derive(Clone)]
pub struct ExecutorOptions {
    /// Base URL of the OpenHands server / runtime, e.g. `http://127.0.0.1:3000` or
    /// `https://agent.example:8443`. Plain `http` only to this machine (every address loopback).
    pub server_url: String,
    /// With `https`: trust only the CA certificate(s) in this PEM file (default: the system's store).
    pub ca_file: Option<String>,
    /// With `https`: accept exactly the self-signed certificate with this SHA-256 fingerprint
    /// (hex, `:` between bytes allowed), whatever its host name. Not with `caFile`.
    pub cert_sha256: Option<String>,
    pub conversation_id: String,
    pub session_api_key: Option<String>,
    /// Absolute workspace root: the shell starts there, file actions are rooted there.
    pub workspace_root: String,
    /// The workspace's other folders (a multi-root workspace), absolute: checkpoints cover them
    /// and the runtime names them to the agent (`auth.roots`); the shell starts in `workspaceRoot`.
    pub extra_roots: Option<Vec<String>>,
    /// Seconds without output before a command returns (the runtime's welcome may override it).
    pub no_change_timeout_seconds: Option<u32>,
    /// Extra environment for the shell.
    pub env: Option<HashMap<String, String>>,
    /// `auth.client` (`name/version`); defaults to `openhands-vscode-executor/<version>`.
    pub client_name: Option<String>,
    /// Minimum level of records sent to `onLog`: `error`, `warn`, `info` (default), `debug`, `trace`.
    pub log_level: Option<String>,
    /// The IDE tools this host runs through `hooks.onIdeTool`, announced to the runtime at
    /// registration (`auth.ide_tools`); absent: none are offered to the agent.
    pub ide_tools: Option<Vec<IdeToolInfo>>,
}

/// Every field but the key (a log line or a panic message must never carry it). The pattern names
/// every field, so a new one does not compile until it is decided here whether it is shown.
impl std::fmt::Debug for ExecutorOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ExecutorOptions {
            server_url,
            ca_file,
            cert_sha256,
            conversation_id,
            session_api_key,
            workspace_root,
            extra_roots,
            no_change_timeout_seconds,
            env,
            client_name,
            log_level,
            ide_tools,
        } = self;
        f.debug_struct("ExecutorOptions")
            .field("server_url", server_url)
            .field("ca_file", ca_file)
            .field("cert_sha256", cert_sha256)
            .field("conversation_id", conversation_id)
            .field("session_api_key", &session_api_key.as_ref().map(|_| oh_transport::config::Redacted))
            .field("workspace_root", workspace_root)
            .field("extra_roots", extra_roots)
            .field("no_change_timeout_seconds", no_change_timeout_seconds)
            // The shell's extra variables may hold the user's secrets: names only.
            .field("env", &env.as_ref().map(|e| e.keys().collect::<std::collections::BTreeSet<_>>()))
            .field("client_name", client_name)
            .field("log_level", log_level)
            .field("ide_tools", ide_tools)
            .finish()
    }
}

/// One IDE tool as MCP's `tools/list` describes it.
#[napi(object)]
#[derive(Clone, Debug)]
pub struct IdeToolInfo {
    pub name: String,
    pub description: String,
    /// The JSON Schema of the tool's arguments.
    #[napi(ts_type = "Record<string, unknown>")]
    pub input_schema: serde_json::Value,
}

impl IdeToolInfo {
    /// The MCP form sent in `auth.ide_tools`.
    pub fn to_mcp(&self) -> serde_json::Value {
        serde_json::json!({"name": self.name, "description": self.description, "inputSchema": self.input_schema})
    }
}

/// A promise result whose value is ignored (`fs.mkdir` resolves with a path, others with undefined).
pub struct Ignored;

impl TypeName for Ignored {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> napi::ValueType {
        napi::ValueType::Unknown
    }
}

impl ValidateNapiValue for Ignored {}

impl FromNapiValue for Ignored {
    unsafe fn from_napi_value(_env: sys::napi_env, _val: sys::napi_value) -> napi::Result<Self> {
        Ok(Ignored)
    }
}

/// What a path is (symlinks followed): `vscode.FileType` callers map `Directory` to `'directory'`,
/// `File` to `'file'`, anything else to `'other'`.
#[napi(string_enum = "lowercase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    File,
    Directory,
    Other,
}

impl From<FileType> for FileKind {
    fn from(t: FileType) -> Self {
        match t {
            FileType::File => FileKind::File,
            FileType::Directory => FileKind::Dir,
            FileType::Other => FileKind::Other,
        }
    }
}

/// What the `stat` callback resolves with.
#[napi(object, object_to_js = false)]
pub struct FileStat {
    #[napi(js_name = "type")]
    pub kind: FileType,
    /// Bytes.
    pub size: f64,
    /// Modification time, milliseconds since the epoch (0 when unknown).
    pub mtime_ms: Option<f64>,
    /// Unix permission bits (`st_mode`; the type bits are dropped); optional, since
    /// `vscode.workspace.fs` has no modes.
    pub mode: Option<u32>,
}

impl From<FileStat> for oh_files::FileStat {
    fn from(s: FileStat) -> Self {
        oh_files::FileStat {
            kind: s.kind.into(),
            size: s.size.max(0.0) as u64,
            mtime_ms: s.mtime_ms.unwrap_or(0.0),
            mode: s.mode.map(|m| m & 0o7777),
        }
    }
}

/// One entry of what the `readDirectory` callback resolves with (no `.`/`..`).
#[napi(object, object_to_js = false)]
pub struct DirEntry {
    pub name: String,
    #[napi(js_name = "type")]
    pub kind: FileType,
}

impl From<DirEntry> for oh_files::DirEntry {
    fn from(e: DirEntry) -> Self {
        oh_files::DirEntry { name: e.name, kind: e.kind.into() }
    }
}

/// Parse `logLevel`.
pub fn level_from(s: Option<&str>) -> tracing::Level {
    match s.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("error") => tracing::Level::ERROR,
        Some("warn") | Some("warning") => tracing::Level::WARN,
        Some("debug") => tracing::Level::DEBUG,
        Some("trace") => tracing::Level::TRACE,
        _ => tracing::Level::INFO,
    }
}

#[cfg(test)]
mod tests {
    use super::ExecutorOptions;

    #[test]
    fn debug_never_shows_the_key_or_the_shells_values() {
        let options = ExecutorOptions {
            server_url: "http://127.0.0.1:3000".into(),
            ca_file: None,
            cert_sha256: None,
            conversation_id: "conv-7".into(),
            session_api_key: Some("k3y-that-must-not-print".into()),
            workspace_root: "/w".into(),
            extra_roots: None,
            no_change_timeout_seconds: None,
            env: Some([("GITHUB_TOKEN".to_string(), "ghp-value-that-must-not-print".to_string())].into()),
            client_name: None,
            log_level: None,
            ide_tools: None,
        };
        for text in [format!("{options:?}"), format!("{options:#?}")] {
            assert!(!text.contains("k3y-that-must-not-print") && !text.contains("ghp-value"), "{text}");
            assert!(text.contains("<redacted>") && text.contains("GITHUB_TOKEN") && text.contains("conv-7"), "{text}");
        }
    }
}
