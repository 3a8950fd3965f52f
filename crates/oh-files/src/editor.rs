//! The OH_ACI editor (openhands-aci 0.3.3 `OHEditor`), over [`FileSystem`].
//!
//! Every command costs one `stat` and at most one whole-file `read` and one `write`; a directory
//! view is one `read_dir` of the directory plus one per visible sub-directory.

mod buffers;
mod edits;
mod range_scan;
mod view;

pub(crate) use range_scan::{RangeScan, ScanOutcome, ScannedLines};
pub(crate) use view::range_bounds;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::file_text::{self, Encoding};
use crate::fs::{FileKind, FileStat, FileSystem, FsError};
use crate::pypath::{self, norm_path, os_error_str};
use oh_pysem::{int_list as py_int_list, str_of as py_str, strip as py_strip};

const TOOL_NAME: &str = "oh_editor";
/// A full `view` shows at most 16,000 characters: files larger than this are read only this far
/// (the reference's encoding detection also looks at the first MiB only).
pub(crate) const VIEW_HEAD: usize = 1024 * 1024;
pub(crate) const MAX_FILE_SIZE: u64 = 10 * 1024 * 1024;
const MAX_HISTORY_PER_FILE: usize = 10;
const SUPPORTED_BINARY_EXTENSIONS: [&str; 8] = [".docx", ".xlsx", ".pptx", ".pdf", ".mp3", ".wav", ".m4a", ".flac"];

/// What the editor returns: its output and the before/after texts the server diffs.
pub(crate) struct EditorResult {
    pub output: String,
    pub old_content: Option<Arc<String>>,
    pub new_content: Option<Arc<String>>,
}

impl EditorResult {
    fn output(output: String) -> Self {
        EditorResult { output, old_content: None, new_content: None }
    }
}

/// `insert_line` after the server's `int()` conversion.
#[derive(Debug, Clone)]
pub(crate) enum InsertLine {
    Missing,
    /// The value and how Python prints it.
    Int(i64, String),
    /// A value Python cannot compare with an int (its type name).
    Uncomparable(&'static str),
}

/// A stat/read the caller already did (the server's binary pre-check), reused by `view`.
pub(crate) struct Preloaded {
    pub stat: Result<FileStat, FsError>,
    pub bytes: Option<Vec<u8>>,
    /// A `view_range` already streamed (then `bytes` is `None`).
    pub lines: Option<ScannedLines>,
}

pub(crate) struct Editor {
    fs: Arc<dyn FileSystem>,
    workspace_root: Option<String>,
    history: Mutex<HashMap<String, VecDeque<Arc<String>>>>,
    buffers: buffers::Buffers,
}

fn invalid(param: &str, value: &str, hint: &str) -> String {
    format!("Invalid `{param}` parameter: {value}. {hint}")
}

fn missing(command: &str, param: &str) -> String {
    format!("Parameter `{param}` is required for command: {command}.")
}

fn is_supported_binary(path: &str) -> bool {
    let s = pypath::suffix(path).to_lowercase();
    SUPPORTED_BINARY_EXTENSIONS.contains(&s.as_str())
}

/// `validate_file`'s size limit.
fn check_size(path: &str, stat: &FileStat) -> Result<(), String> {
    if stat.kind == FileKind::File {
        check_size_of(path, stat.size)?;
    }
    Ok(())
}

fn check_size_of(path: &str, size: u64) -> Result<(), String> {
    if size > MAX_FILE_SIZE {
        return Err(format!(
            "File validation failed for {path}: File is too large ({:.1}MB). Maximum allowed size is 10MB.",
            size as f64 / 1024.0 / 1024.0
        ));
    }
    Ok(())
}

/// Which editor's `validate_file` decides that a file is binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextRule {
    /// openhands-aci's `OHEditor` (V0): binaryornot on the first 1 KiB.
    OhEditor,
    /// openhands-tools 1.58's `FileEditor` (V1): binaryornot, overruled when the whole file
    /// decodes to text without control characters (`[\x00-\x08\x0e-\x1f\x7f]`). Those are
    /// ASCII bytes in every codec V1 tries (UTF-8, cp1252, Latin-1, cp1251), and multi-byte
    /// UTF-8 never contains them, so the test is on the bytes.
    V1,
}

/// The editor's `_make_output` under `rule`: OHEditor's (V0) or openhands-tools 1.58's (V1).
pub(crate) fn cat_n(rule: TextRule, content: &str, description: &str, start_line: i64) -> String {
    match rule {
        TextRule::OhEditor => file_text::make_output(content, description, start_line),
        TextRule::V1 => file_text::make_output_v1(content, description, start_line),
    }
}

/// Whether `bytes` hold one of the control characters V1's `BINARY_CONTROL_CHARS` matches.
fn has_binary_control_byte(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| matches!(b, 0x00..=0x08 | 0x0e..=0x1f | 0x7f))
}

/// `validate_file`'s binary check, on the file's bytes (`bytes` is the whole file, except for a
/// streamed `view_range` and a full view of a file over 1 MiB, where it is the head read).
fn check_not_binary(rule: TextRule, path: &str, stat: &FileStat, bytes: &[u8]) -> Result<(), String> {
    if stat.kind == FileKind::File {
        check_text(rule, path, bytes)?;
    }
    Ok(())
}

fn check_text(rule: TextRule, path: &str, bytes: &[u8]) -> Result<(), String> {
    if !is_supported_binary(path)
        && file_text::is_binary(path, Some(&bytes[..bytes.len().min(1024)]))
        && (rule == TextRule::OhEditor || has_binary_control_byte(bytes))
    {
        return Err(format!(
            "File validation failed for {path}: File appears to be binary and this file type cannot be read or edited by this tool."
        ));
    }
    Ok(())
}

/// A file the editor has just written, as `validate_file` would judge it if asked again.
///
/// `str_replace` and `insert` read their snippet back through `read_file`, which validates the
/// new file first: an edit that leaves a file binary-looking (binaryornot on its first 1 KiB,
/// e.g. one short CJK word) or over 10 MB is written and then reported as a validation error.
/// `create` and `undo_edit` never re-read, so they never ask.
#[must_use = "str_replace and insert must revalidate what they wrote"]
struct Written {
    size: u64,
    text_check: Result<(), String>,
}

impl Written {
    fn of(rule: TextRule, path: &str, data: &[u8]) -> Self {
        Written { size: data.len() as u64, text_check: check_text(rule, path, data) }
    }

    fn revalidate(self, path: &str) -> Result<(), String> {
        check_size_of(path, self.size)?;
        self.text_check
    }
}

/// A loaded, validated text file.
struct Loaded {
    enc: Encoding,
    text: String,
    /// Encoding `text` gives the file's bytes (see `file_text::read_text_verbatim`).
    verbatim: bool,
}

impl Editor {
    pub fn new(fs: Arc<dyn FileSystem>, workspace_root: Option<String>) -> Self {
        Editor { fs, workspace_root, history: Mutex::new(HashMap::new()), buffers: buffers::Buffers::default() }
    }

    fn push_history(&self, key: &str, text: Arc<String>) {
        let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        let q = h.entry(key.to_string()).or_default();
        q.push_back(text);
        let mut dropped = Vec::new();
        while q.len() > MAX_HISTORY_PER_FILE {
            dropped.extend(q.pop_front());
        }
        drop(h);
        for text in dropped {
            self.buffers.recycle(Some(text));
        }
    }

    /// Takes back the texts of a result once the caller is done with them (see [`buffers`]).
    pub fn recycle(&self, old_content: Option<Arc<String>>, new_content: Option<Arc<String>>) {
        self.buffers.recycle(old_content);
        self.buffers.recycle(new_content);
    }

    /// How many file-sized buffers the pool holds now.
    #[cfg(test)]
    pub(crate) fn kept_buffers(&self) -> usize {
        self.buffers.kept().len()
    }

    fn pop_history(&self, key: &str) -> Option<Arc<String>> {
        let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        h.get_mut(key).and_then(|q| q.pop_back())
    }

    /// `OHEditor.__call__`; `Err` is the message the server wraps as `ERROR:\n{message}`.
    #[allow(clippy::too_many_arguments)]
    pub async fn call(
        &self,
        command: &str,
        raw_path: &str,
        file_text: Option<&str>,
        view_range: Option<&Value>,
        old_str: Option<&str>,
        new_str: Option<&str>,
        insert_line: InsertLine,
        pre: Option<Preloaded>,
        rule: TextRule,
    ) -> Result<EditorResult, String> {
        let path = norm_path(raw_path);
        let (stat, pre_bytes, pre_lines) = match pre {
            Some(p) => (p.stat, p.bytes, p.lines),
            None => {
                if path.starts_with('/') {
                    (self.fs.stat(&path).await, None, None)
                } else {
                    (Err(FsError::new("ENOENT", "relative")), None, None)
                }
            }
        };
        self.validate_path(command, &path, stat.as_ref().ok()).await?;
        let stat = stat.ok();
        match command {
            "view" => {
                self.view(rule, &path, stat, pre_bytes, pre_lines, view_range)
                    .await
            }
            "create" => {
                let file_text = file_text.ok_or_else(|| missing(command, "file_text"))?;
                // `create` does not read the new file back: no revalidation.
                let _ = self.write_encoded(rule, &path, file_text, Encoding::Utf8, 0).await?;
                let file_text = Arc::new(file_text.to_string());
                self.push_history(&path, file_text.clone());
                Ok(EditorResult {
                    output: format!("File created successfully at: {path}"),
                    old_content: None,
                    new_content: Some(file_text),
                })
            }
            "str_replace" => {
                let old_str = old_str.ok_or_else(|| missing(command, "old_str"))?;
                if new_str == Some(old_str) {
                    return Err(invalid(
                        "new_str",
                        new_str.unwrap_or(""),
                        "No replacement was performed. `new_str` and `old_str` must be different.",
                    ));
                }
                let stat = stat.expect("validated");
                self.str_replace(rule, &path, &stat, old_str, new_str.unwrap_or("")).await
            }
            "insert" => {
                if matches!(insert_line, InsertLine::Missing) {
                    return Err(missing(command, "insert_line"));
                }
                let new_str = new_str.ok_or_else(|| missing(command, "new_str"))?;
                let stat = stat.expect("validated");
                self.insert(rule, &path, &stat, insert_line, new_str).await
            }
            "undo_edit" => {
                let stat = stat.expect("validated");
                self.undo_edit(rule, &path, &stat).await
            }
            other => Err(format!(
                "Unrecognized command {other}. The allowed commands for the {TOOL_NAME} tool are: view, create, str_replace, insert, undo_edit"
            )),
        }
    }

    async fn validate_path(&self, command: &str, path: &str, stat: Option<&FileStat>) -> Result<(), String> {
        if !path.starts_with('/') {
            let mut hint = "The path should be an absolute path, starting with `/`.".to_string();
            if let Some(root) = &self.workspace_root {
                let suggested = pypath::join_path(root, path);
                if self.fs.stat(&suggested).await.is_ok() {
                    hint.push_str(&format!(" Maybe you meant {suggested}?"));
                }
            }
            return Err(invalid("path", path, &hint));
        }
        if command == "create" && stat.is_some() {
            return Err(invalid(
                "path",
                path,
                &format!("File already exists at: {path}. Cannot overwrite files using command `create`."),
            ));
        }
        if command != "create" && stat.is_none() {
            return Err(invalid(
                "path",
                path,
                &format!("The path {path} does not exist. Please provide a valid path."),
            ));
        }
        if command != "view" {
            if stat.map(|s| s.kind) == Some(FileKind::Dir) {
                return Err(invalid(
                    "path",
                    path,
                    &format!("The path {path} is a directory and only the `view` command can be used on directories."),
                ));
            }
            if is_supported_binary(path) {
                return Err(invalid(
                    "path",
                    path,
                    &format!(
                        "The path {path} points to a binary file ({}) and only the `view` command can be used on supported binary files.",
                        pypath::suffix(path)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `validate_file` + `read_file` in one read: size, binary check, decode.
    async fn load(&self, rule: TextRule, path: &str, stat: &FileStat, pre: Option<Vec<u8>>) -> Result<Loaded, String> {
        let bytes = self.load_bytes(rule, path, stat, pre).await?;
        let (enc, text, verbatim) = file_text::read_text_verbatim(bytes);
        Ok(Loaded { enc, text, verbatim })
    }

    /// [`Self::load`] up to the decoding: size check, read, binary check.
    async fn load_bytes(
        &self,
        rule: TextRule,
        path: &str,
        stat: &FileStat,
        pre: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, String> {
        check_size(path, stat)?;
        let bytes = match pre {
            Some(b) => b,
            None => {
                let mut buf = self.buffers.take(stat.size as usize);
                self.fs
                    .read_into(path, &mut buf)
                    .await
                    .map_err(|e| format!("Ran into {} while trying to read {path}", os_error_str(&e, path)))?;
                buf
            }
        };
        check_not_binary(rule, path, stat, &bytes)?;
        Ok(bytes)
    }

    /// Writes `text` in `enc`; its first `unchanged` bytes are known to be on disk already (a
    /// 6 MB file edited near its end is then written from there on, not whole).
    async fn write_encoded(
        &self,
        rule: TextRule,
        path: &str,
        text: &str,
        enc: Encoding,
        unchanged: usize,
    ) -> Result<Written, String> {
        let data = enc.encode(text).map_err(|e| format!("Ran into {e} while trying to write to {path}"))?;
        let unchanged = match enc {
            Encoding::Utf8 => unchanged,
            Encoding::Utf8Sig if unchanged > 0 => unchanged + file_text::UTF8_BOM.len(),
            Encoding::Utf8Sig | Encoding::Latin1 => 0,
        };
        self.fs
            .write_after(path, &data, unchanged)
            .await
            .map_err(|e| format!("Ran into {} while trying to write to {path}", os_error_str(&e, path)))?;
        Ok(Written::of(rule, path, &data))
    }
}

/// Python truthiness of a JSON value.
pub(crate) fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}
