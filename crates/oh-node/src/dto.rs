//! The plain data types of the JS API (options, file stats, directory entries) and their
//! conversions to the core types. The executor class, the fs callbacks and the errors have their
//! own modules.

use std::collections::HashMap;

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::sys;
use napi_derive::napi;
use oh_files::FileKind;

/// Options of `new Executor(options, fs, hooks?)`.
#[napi(object)]
#[derive(Clone, Debug)]
pub struct ExecutorOptions {
    /// Base URL of the OpenHands server / runtime, e.g. `http://127.0.0.1:3000`.
    pub server_url: String,
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
