//! Every conversion between JS values and the core types, in one place.

use std::collections::HashMap;

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::sys;
use napi_derive::napi;
use oh_files::{DirEntry, FileKind, FileStat};
use serde_json::Value;

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
    /// Seconds without output before a command returns (the runtime's welcome may override it).
    pub no_change_timeout_seconds: Option<u32>,
    /// Extra environment for the shell.
    pub env: Option<HashMap<String, String>>,
    /// `auth.client` (`name/version`); defaults to `openhands-vscode-executor/<version>`.
    pub client_name: Option<String>,
    /// Minimum level of records sent to `onLog`: `error`, `warn`, `info` (default), `debug`, `trace`.
    pub log_level: Option<String>,
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

fn kind_from(v: Option<&Value>, mode: Option<u32>) -> Result<FileKind, String> {
    match v {
        Some(Value::String(s)) => match s.as_str() {
            "file" => Ok(FileKind::File),
            "directory" | "dir" => Ok(FileKind::Dir),
            _ => Ok(FileKind::Other),
        },
        // vscode.FileType: Unknown 0, File 1, Directory 2, SymbolicLink 64 (or-ed with the target's type).
        Some(Value::Number(n)) => {
            let t = n.as_u64().unwrap_or(0);
            Ok(if t & 2 != 0 {
                FileKind::Dir
            } else if t & 1 != 0 {
                FileKind::File
            } else {
                FileKind::Other
            })
        }
        None | Some(Value::Null) => match mode {
            Some(m) if m & 0o170000 == 0o040000 => Ok(FileKind::Dir),
            Some(m) if m & 0o170000 == 0o100000 => Ok(FileKind::File),
            Some(_) => Ok(FileKind::Other),
            None => Err("no `type` and no `mode`".into()),
        },
        Some(other) => Err(format!("an invalid type {other}")),
    }
}

/// `{type, size, mtimeMs | mtime, mode}` → `FileStat`.
pub fn stat_from_js(v: &Value) -> Result<FileStat, String> {
    let Value::Object(m) = v else { return Err(format!("{v} instead of an object")) };
    let mode = m.get("mode").and_then(Value::as_u64).map(|x| x as u32);
    let kind = kind_from(m.get("type"), mode)?;
    let size = m.get("size").and_then(Value::as_f64).unwrap_or(0.0).max(0.0) as u64;
    let mtime_ms = m.get("mtimeMs").or_else(|| m.get("mtime")).and_then(Value::as_f64).unwrap_or(0.0);
    Ok(FileStat { kind, size, mtime_ms, mode: mode.map(|x| x & 0o7777) })
}

/// `[{name, type}]` or `[[name, type]]` → entries.
pub fn dir_entries_from_js(v: &Value) -> Result<Vec<DirEntry>, String> {
    let Value::Array(items) = v else { return Err(format!("{v} instead of an array")) };
    items
        .iter()
        .map(|item| match item {
            Value::Object(m) => {
                let name = m.get("name").and_then(Value::as_str).ok_or("an entry without a name")?;
                Ok(DirEntry { name: name.to_string(), kind: kind_from(m.get("type"), None).unwrap_or(FileKind::Other) })
            }
            Value::Array(pair) => {
                let name = pair.first().and_then(Value::as_str).ok_or("an entry without a name")?;
                Ok(DirEntry { name: name.to_string(), kind: kind_from(pair.get(1), None).unwrap_or(FileKind::Other) })
            }
            other => Err(format!("an invalid entry {other}")),
        })
        .collect()
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
mod tests {}
