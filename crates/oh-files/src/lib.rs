//! File actions over an async filesystem trait.
//!
//! Every byte the executor reads or writes goes through [`FileSystem`]; [`LocalFs`] implements it
//! on tokio, and the Node binding implements it with JS callbacks (`vscode.workspace.fs`).
//!
//! Behaviour follows OpenHands 1.6.0's action execution server (`read`, `write`, `edit`) and
//! openhands-aci 0.3.3's `OHEditor`; see `README.md` in this crate for the deviations.
mod byte_scan;
mod editor;
mod file_text;
mod fs;
mod pypath;

pub use fs::{DirEntry, FileKind, FileStat, FileSystem, FsError, LocalFs};

use std::path::PathBuf;
use std::sync::Arc;

use oh_protocol::{Extras, FileEditAction, FileReadAction, FileWriteAction, ImplSource, Observation};
use serde_json::Value;

pub use editor::TextRule;
use editor::{Editor, EditorResult, InsertLine, Preloaded};
/// binaryornot's `is_binary(path)` given the file's bytes (the pre-check of reads and the editor's
/// test); public for the differential driver `tests/parity` (`examples/binary_verdicts.rs`).
pub use file_text::is_binary;

/// [`FileActions::edit_whole_file`]'s result.
#[derive(Debug, Clone, PartialEq)]
pub struct WholeFileEdit {
    /// The editor's text; an error starts with `ERROR:\n`.
    pub content: String,
    /// The whole file before the edit (`str_replace`, `insert`, `undo_edit`).
    pub old_content: Option<String>,
    /// The whole file after the edit (`create`: the new file's text).
    pub new_content: Option<String>,
}

/// The file half of the action execution server (read, write, OH_ACI edit), with the editor's
/// undo history.
pub struct FileActions {
    fs: Arc<dyn FileSystem>,
    #[allow(dead_code)]
    workspace_root: PathBuf,
    editor: Editor,
}

fn read_obs(content: String, path: String, impl_source: ImplSource) -> Observation {
    Observation { content, extras: Extras::Read { path, impl_source } }
}

/// `read_lines(all_lines, start, end)` of `openhands/runtime/utils/files.py`.
fn read_lines<'a>(lines: &[&'a str], start: i64, end: i64) -> Vec<&'a str> {
    let n = lines.len() as i64;
    let start = start.max(0).min(n);
    let mut end = if end == -1 { -1 } else { end.max(0) };
    end = end.min(n);
    if end == -1 {
        return lines[start as usize..].to_vec();
    }
    let begin = 0.max(start.min(n - 2));
    let end = (begin + 1).max(end).min(n);
    if begin >= end {
        return Vec::new();
    }
    lines[begin as usize..end as usize].to_vec()
}

/// Python's `int(str)`.
fn py_int(s: &str) -> Option<i64> {
    let t = oh_pysem::strip(s);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') || digits.contains("__") {
        return None;
    }
    let mut v: i64 = 0;
    for c in digits.chars() {
        if c == '_' {
            continue;
        }
        let d = c.to_digit(10)?;
        v = v.saturating_mul(10).saturating_add(d as i64);
    }
    Some(if neg { -v } else { v })
}

impl FileActions {
    pub fn new(fs: Arc<dyn FileSystem>, workspace_root: impl Into<PathBuf>) -> Self {
        let workspace_root = workspace_root.into();
        let root = workspace_root.to_string_lossy().into_owned();
        let editor = Editor::new(fs.clone(), if root.starts_with('/') { Some(root) } else { None });
        FileActions { fs, workspace_root, editor }
    }

    /// `FileReadAction`; relative paths resolve against the shell's cwd.
    pub async fn read(&self, action: &FileReadAction, shell_cwd: &str) -> Observation {
        match action.impl_source {
            ImplSource::OhAci => self.read_oh_aci(action, TextRule::OhEditor).await,
            ImplSource::Default => self.read_default(action, shell_cwd).await,
        }
    }

    /// OpenHands V1's `file_editor` `view` with a `view_range`: V1's editor and its binary rule,
    /// without the V0 server's `ERROR_BINARY_FILE` pre-check (V1 has no such server).
    pub async fn v1_view_range(&self, action: &FileReadAction) -> Observation {
        self.read_oh_aci(action, TextRule::V1).await
    }

    async fn read_oh_aci(&self, action: &FileReadAction, rule: TextRule) -> Observation {
        // The server's binaryornot pre-check reads the path as given; the editor then stats and
        // reads it again. One stat and one read serve both here.
        let precheck = rule == TextRule::OhEditor;
        let norm = pypath::norm_path(&action.path);
        let ranged = action.view_range.as_ref().filter(|v| editor::py_truthy(v)).and_then(editor::range_bounds);
        let mut lines = None;
        let pre = if norm.starts_with('/') {
            let stat = self.fs.stat(&norm).await;
            let bytes = match &stat {
                // Too large for the editor anyway: only the head is needed for the check.
                Ok(s) if s.kind != FileKind::Dir && s.size > editor::MAX_FILE_SIZE => {
                    let head = self.fs.read_head(&norm, 1024).await.ok();
                    if precheck && file_text::is_binary(&action.path, head.as_deref()) {
                        return Observation::error("ERROR_BINARY_FILE");
                    }
                    None
                }
                // A full view needs only the head of a big file (see editor::VIEW_HEAD).
                Ok(s)
                    if s.kind == FileKind::File
                        && s.size > editor::VIEW_HEAD as u64
                        && !action.view_range.as_ref().is_some_and(editor::py_truthy) =>
                {
                    self.fs.read_head(&norm, editor::VIEW_HEAD).await.ok().map(file_text::trim_partial_utf8)
                }
                // A range streams the file: the line count and the lines asked for, not the
                // whole text (editor::RangeScan).
                Ok(s) if s.kind == FileKind::File && ranged.is_some() => {
                    let (start, end) = ranged.expect("matched");
                    let mut scan = editor::RangeScan::new(start, end);
                    let read = self.fs.read_pieces(&norm, &mut |p| scan.feed(p)).await;
                    match (read, scan.outcome()) {
                        (Ok(()), editor::ScanOutcome::Lines(l)) => {
                            if precheck && file_text::is_binary(&action.path, Some(&l.head)) {
                                return Observation::error("ERROR_BINARY_FILE");
                            }
                            lines = Some(l);
                            None
                        }
                        (Ok(()), editor::ScanOutcome::Whole(w)) => Some(w),
                        _ => self.fs.read(&norm).await.ok(),
                    }
                }
                Ok(s) if s.kind != FileKind::Dir => self.fs.read(&norm).await.ok(),
                _ => None,
            };
            if precheck && bytes.is_some() && file_text::is_binary(&action.path, bytes.as_deref()) {
                return Observation::error("ERROR_BINARY_FILE");
            }
            if precheck && bytes.is_none() && action.path.ends_with(".pyc") {
                return Observation::error("ERROR_BINARY_FILE");
            }
            Some(Preloaded { stat, bytes, lines })
        } else {
            if precheck && action.path.ends_with(".pyc") {
                return Observation::error("ERROR_BINARY_FILE");
            }
            None
        };
        let vr = action.view_range.as_ref().filter(|v| !v.is_null());
        let content =
            match self.editor.call("view", &action.path, None, vr, None, None, InsertLine::Missing, pre, rule).await {
                Ok(r) => r.output,
                Err(e) => format!("ERROR:\n{e}"),
            };
        read_obs(content, action.path.clone(), ImplSource::OhAci)
    }

    async fn read_default(&self, action: &FileReadAction, shell_cwd: &str) -> Observation {
        let filepath = pypath::join_path(shell_cwd, &action.path);
        let working_dir = shell_cwd;
        let bytes = match self.fs.read(&filepath).await {
            Ok(b) => b,
            Err(e) => {
                if action.path.ends_with(".pyc") {
                    return Observation::error("ERROR_BINARY_FILE");
                }
                return match e.code.as_str() {
                    "ENOENT" => Observation::error(format!(
                        "File not found: {filepath}. Your current working directory is {working_dir}."
                    )),
                    "EISDIR" => Observation::error(format!("Path is a directory: {filepath}. You can only read files")),
                    _ => Observation::error(format!("Internal server error: {}", pypath::os_error_str(&e, &filepath))),
                };
            }
        };
        if file_text::is_binary(&action.path, Some(&bytes)) {
            return Observation::error("ERROR_BINARY_FILE");
        }
        let lower = filepath.to_lowercase();
        let ext = pypath::splitext_ext(&lower).to_string();
        let data_url = |default_mime: &str| {
            let mime = match ext.as_str() {
                ".png" => "image/png",
                ".jpg" | ".jpeg" => "image/jpeg",
                ".bmp" => "image/bmp",
                ".gif" => "image/gif",
                ".mp4" => "video/mp4",
                ".webm" => "video/webm",
                ".ogg" => "audio/ogg",
                ".pdf" => "application/pdf",
                _ => default_mime,
            };
            format!("data:{mime};base64,{}", file_text::base64(&bytes))
        };
        if [".png", ".jpg", ".jpeg", ".bmp", ".gif"].iter().any(|s| lower.ends_with(s)) {
            return read_obs(data_url("image/png"), filepath, ImplSource::Default);
        }
        if lower.ends_with(".pdf") {
            return read_obs(
                format!("data:application/pdf;base64,{}", file_text::base64(&bytes)),
                filepath,
                ImplSource::Default,
            );
        }
        if [".mp4", ".webm", ".ogg"].iter().any(|s| lower.ends_with(s)) {
            return read_obs(data_url("video/mp4"), filepath, ImplSource::Default);
        }
        let Ok(decoded) = std::str::from_utf8(&bytes) else {
            return Observation::error(format!("File could not be decoded as utf-8: {filepath}."));
        };
        let text = file_text::universal_newlines(decoded);
        let lines = file_text::readlines(&text);
        let content = read_lines(&lines, action.start, action.end).concat();
        read_obs(content, filepath, ImplSource::Default)
    }

    /// `FileWriteAction`; relative paths resolve against the shell's cwd.
    pub async fn write(&self, action: &FileWriteAction, shell_cwd: &str) -> Observation {
        let filepath = pypath::join_path(shell_cwd, &action.path);
        let parts: Vec<&str> = action.content.split('\n').collect();
        let mut inserted = String::with_capacity(action.content.len() + 1);
        for p in &parts {
            inserted.push_str(p);
            inserted.push('\n');
        }
        let (data, is_new) = match self.fs.read(&filepath).await {
            Ok(old) => {
                let Ok(old) = std::str::from_utf8(&old) else {
                    return Observation::error(format!("File could not be decoded as utf-8: {filepath}"));
                };
                let old = file_text::universal_newlines(old);
                let lines = file_text::readlines(&old);
                let mut out = String::with_capacity(old.len() + inserted.len());
                if action.start != 0 {
                    let a = oh_pysem::slice_index(action.start, lines.len());
                    out.push_str(&lines[..a].concat());
                }
                out.push_str(&inserted);
                if action.end != -1 {
                    let b = oh_pysem::slice_index(action.end, lines.len());
                    out.push_str(&lines[b..].concat());
                }
                (out, false)
            }
            Err(e) if e.code == "ENOENT" => {
                let parent = pypath::dirname(&filepath);
                if !parent.is_empty() && self.fs.stat(&parent).await.is_err() {
                    if let Err(e) = self.fs.create_dir_all(&parent).await {
                        return Observation::error(format!(
                            "Internal server error: {}",
                            pypath::os_error_str(&e, &parent)
                        ));
                    }
                }
                (inserted, true)
            }
            Err(e) if e.code == "EISDIR" => {
                return Observation::error(format!("Path is a directory: {filepath}. You can only write to files"));
            }
            Err(e) => {
                return Observation::error(format!("Internal server error: {}", pypath::os_error_str(&e, &filepath)))
            }
        };
        if let Err(e) = self.fs.write(&filepath, data.as_bytes()).await {
            return match e.code.as_str() {
                "ENOENT" => Observation::error(format!("File not found: {filepath}")),
                "EISDIR" => Observation::error(format!("Path is a directory: {filepath}. You can only write to files")),
                _ => Observation::error(format!("Internal server error: {}", pypath::os_error_str(&e, &filepath))),
            };
        }
        if is_new {
            if let Err(e) = self.fs.set_mode(&filepath, 0o664).await {
                if e.code == "EPERM" || e.code == "EACCES" {
                    return Observation::error(format!(
                        "File {filepath} written, but failed to change ownership and permissions: {}",
                        pypath::os_error_str(&e, &filepath)
                    ));
                }
            }
        }
        Observation { content: String::new(), extras: Extras::Write { path: filepath } }
    }

    /// `FileEditAction` (OH_ACI).
    pub async fn edit(&self, action: &FileEditAction) -> Observation {
        let (content, before, after) = self.run_editor(action, TextRule::OhEditor).await;
        let diff = oh_difflib::get_diff(
            before.as_deref().map_or("", String::as_str),
            after.as_deref().map_or("", String::as_str),
            &action.path,
        );
        self.editor.recycle(before, after);
        Observation {
            content,
            extras: Extras::Edit {
                path: action.path.clone(),
                prev_exist: false,
                old_content: action.old_str.clone(),
                new_content: action.new_str.clone(),
                impl_source: ImplSource::OhAci,
                diff: Some(diff),
            },
        }
    }

    /// The editor and its wrapper without the diff: the benchmark's "editor only" figure.
    #[doc(hidden)]
    pub async fn edit_without_diff(&self, action: &FileEditAction) -> String {
        let (content, before, after) = self.run_editor(action, TextRule::OhEditor).await;
        self.editor.recycle(before, after);
        content
    }

    /// An OH_ACI edit as OpenHands V1's `file_editor` reports it: the editor's text (with V0's
    /// `ERROR:\n` header on errors) and the whole file before and after the edit, which V1's
    /// `FileEditorObservation` carries as `old_content`/`new_content` (V0's carries the edited
    /// strings). `rule` chooses whose binary check applies.
    ///
    /// The texts are the editor's own buffers handed over, not copies, except where the undo
    /// history still holds the same text (the text before a `str_replace`/`insert`): that one is
    /// copied once, since the reply needs an owned string. They are not recycled into the
    /// editor's buffer pool, which V0 edits reuse.
    ///
    /// When the two texts together exceed `contents_limit` bytes, both are `None`: a caller whose
    /// reply could not carry them (the transport drops them above its reply limit) then neither
    /// pays for the copy nor leaves the pool empty (the next edit of a 6 MB file would read into
    /// and build in fresh memory that the kernel faults in page by page). `usize::MAX`: always.
    pub async fn edit_whole_file(
        &self,
        action: &FileEditAction,
        rule: TextRule,
        contents_limit: usize,
    ) -> WholeFileEdit {
        let (content, before, after) = self.run_editor(action, rule).await;
        let len = |t: &Option<Arc<String>>| t.as_ref().map_or(0, |t| t.len());
        if len(&before).saturating_add(len(&after)) > contents_limit {
            tracing::warn!(contents_limit, "edit contents over the limit: old_content/new_content left out");
            self.editor.recycle(before, after);
            return WholeFileEdit { content, old_content: None, new_content: None };
        }
        let owned = |t: Arc<String>| Arc::try_unwrap(t).unwrap_or_else(|shared| shared.as_str().to_owned());
        WholeFileEdit { content, old_content: before.map(owned), new_content: after.map(owned) }
    }

    /// `_execute_file_editor`: the wrapper text and the before/after texts.
    async fn run_editor(
        &self,
        action: &FileEditAction,
        rule: TextRule,
    ) -> (String, Option<Arc<String>>, Option<Arc<String>>) {
        let insert_line = match &action.insert_line {
            None | Some(Value::Null) => InsertLine::Missing,
            Some(Value::String(s)) => match py_int(s) {
                Some(n) => InsertLine::Int(n, n.to_string()),
                None => {
                    return (format!("ERROR:\nInvalid insert_line value: '{s}'. Expected an integer."), None, None);
                }
            },
            Some(Value::Bool(b)) => InsertLine::Int(i64::from(*b), if *b { "True" } else { "False" }.to_string()),
            Some(Value::Number(n)) => match n.as_i64() {
                Some(i) => InsertLine::Int(i, i.to_string()),
                None => {
                    let f = n.as_f64().unwrap_or(0.0);
                    InsertLine::Int(f as i64, oh_pysem::repr_float(f))
                }
            },
            Some(other) => InsertLine::Uncomparable(oh_pysem::type_name(other)),
        };
        let result = self
            .editor
            .call(
                &action.command,
                &action.path,
                action.file_text.as_deref(),
                None,
                action.old_str.as_deref(),
                action.new_str.as_deref(),
                insert_line,
                None,
                rule,
            )
            .await;
        match result {
            Err(e) => (format!("ERROR:\n{e}"), None, None),
            Ok(EditorResult { output, .. }) if output.is_empty() => (String::new(), None, None),
            Ok(EditorResult { output, old_content, new_content }) => (output, old_content, new_content),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A V1 edit whose whole-file texts exceed the limit carries neither (what the transport
    /// would send: it drops them above its reply limit), and the edited text goes back to the
    /// buffer pool instead of being handed over; under the limit both texts are whole.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn whole_file_contents_over_the_limit_are_left_out_and_their_buffer_reused() {
        let dir = std::env::temp_dir().join(format!("oh-files-contents-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.txt");
        let half = format!("{}\n", "x".repeat(99)).repeat(5_000); // 500 KB each side: a pooled size
        let before = format!("{half}OLD\n{half}");
        let after = format!("{half}NEW\n{half}");
        std::fs::write(&path, &before).unwrap();
        let files = FileActions::new(Arc::new(LocalFs), &dir);
        let p = path.to_string_lossy().into_owned();
        let replace = |old: &str, new: &str| FileEditAction {
            old_str: Some(old.into()),
            new_str: Some(new.into()),
            ..FileEditAction::oh_aci(p.clone(), "str_replace")
        };

        let limit = before.len() + after.len() - 1;
        let edit = files.edit_whole_file(&replace("OLD", "NEW"), TextRule::V1, limit).await;
        assert!(edit.content.contains("has been edited"), "{}", edit.content);
        let lens =
            |e: &WholeFileEdit| (e.old_content.as_ref().map(String::len), e.new_content.as_ref().map(String::len));
        assert_eq!(lens(&edit), (None, None), "left out over the limit");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), after);
        assert_eq!(files.editor.kept_buffers(), 1, "the edited text is back in the pool");

        let edit = files.edit_whole_file(&replace("NEW", "OLD"), TextRule::V1, limit + 1).await;
        assert_eq!(lens(&edit), (Some(after.len()), Some(before.len())), "whole at the limit");
        assert!(
            edit.old_content.as_deref() == Some(after.as_str()) && edit.new_content.as_deref() == Some(before.as_str())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn l(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn read_lines_quirks() {
        let lines = ["l0\n", "l1\n", "l2\n", "l3\n", "l4\n"];
        let r = |s, e| read_lines(&lines, s, e).iter().map(|x| x.trim_end().to_string()).collect::<Vec<_>>();
        assert_eq!(r(0, -1), l(&["l0", "l1", "l2", "l3", "l4"]));
        assert_eq!(r(2, -1), l(&["l2", "l3", "l4"]));
        assert_eq!(r(10, -1), l(&[]));
        assert_eq!(r(1, 3), l(&["l1", "l2"]));
        assert_eq!(r(2, 100), l(&["l2", "l3", "l4"]));
        assert_eq!(r(-3, 2), l(&["l0", "l1"]));
        assert_eq!(r(4, 5), l(&["l3", "l4"]));
        assert_eq!(r(5, 6), l(&["l3", "l4"]));
        assert_eq!(r(3, 3), l(&["l3"]));
        assert_eq!(r(0, 0), l(&["l0"]));
    }

    #[test]
    fn ints() {
        assert_eq!(py_int(" 12 "), Some(12));
        assert_eq!(py_int("-1_0"), Some(-10));
        assert_eq!(py_int("1__0"), None);
        assert_eq!(py_int("x"), None);
        assert_eq!(py_int(""), None);
    }
}
