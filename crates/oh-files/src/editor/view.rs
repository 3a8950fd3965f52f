//! The `view` command: a file (whole, or a `view_range`, with the reference's checks and
//! messages) or a directory listing two levels deep.

use super::*;

impl Editor {
    pub(super) async fn view(
        &self,
        rule: TextRule,
        path: &str,
        stat: Option<FileStat>,
        pre: Option<Vec<u8>>,
        pre_lines: Option<ScannedLines>,
        view_range: Option<&Value>,
    ) -> Result<EditorResult, String> {
        let stat = stat.expect("validated");
        if stat.kind == FileKind::Dir {
            if view_range.is_some_and(py_truthy) {
                return Err(invalid(
                    "view_range",
                    &py_str(view_range.unwrap()),
                    "The `view_range` parameter is not allowed when `path` points to a directory.",
                ));
            }
            return self.view_dir(rule, path).await;
        }
        if is_supported_binary(path) {
            let _ = self.load(rule, path, &stat, pre).await?;
            // Markdown conversion of office/PDF/audio files is not available in this runtime.
            return Err(format!(
                "Error in converting file to Markdown: conversion of {} files is not supported by this runtime. Please use Python code to read {path}",
                pypath::suffix(path)
            ));
        }
        let vr = match view_range {
            None => None,
            Some(v) if !py_truthy(v) => None,
            Some(v) => Some(v),
        };
        let mut pre = pre;
        // V1 clips a long view in its middle: it needs the tail too.
        if pre.is_none()
            && rule == TextRule::OhEditor
            && vr.is_none()
            && stat.kind == FileKind::File
            && stat.size > VIEW_HEAD as u64
            && stat.size <= MAX_FILE_SIZE
        {
            // Only the first 16,000 characters are shown: the head is enough.
            let head = self
                .fs
                .read_head(path, VIEW_HEAD)
                .await
                .map_err(|e| format!("Ran into {} while trying to read {path}", os_error_str(&e, path)))?;
            pre = Some(file_text::trim_partial_utf8(head));
        }
        let Some(vr) = vr else {
            let text = self.load(rule, path, &stat, pre).await?.text;
            return Ok(EditorResult::output(cat_n(rule, &text, path, 1)));
        };
        let (num_lines, whole, lines) = match pre_lines {
            // Streamed by the caller (see `range_scan`): the count and the lines asked for.
            Some(l) => {
                check_size(path, &stat)?;
                check_not_binary(rule, path, &stat, &l.head)?;
                (l.num_lines as i64, String::new(), Some(l.text))
            }
            None => {
                let text = self.load(rule, path, &stat, pre).await?.text;
                (file_text::count_lines(&text) as i64, text, None)
            }
        };
        let bad = || invalid("view_range", &py_str(vr), "It should be a list of two integers.");
        let (start, end) = match vr {
            Value::Array(_) => match range_bounds(vr) {
                Some(b) => b,
                None => return Err(bad()),
            },
            Value::String(s) => {
                let _ = s;
                return Err(bad());
            }
            Value::Object(o) => {
                let _ = o;
                return Err(bad());
            }
            other => return Err(format!("object of type '{}' has no len()", oh_pysem::type_name(other))),
        };
        if start < 1 || start > num_lines {
            return Err(invalid(
                "view_range",
                &py_str(vr),
                &format!(
                    "Its first element `{start}` should be within the range of lines of the file: {}.",
                    py_int_list(&[1, num_lines])
                ),
            ));
        }
        let mut warning = None;
        let mut end = end;
        if end == -1 {
            end = num_lines;
        } else if end > num_lines {
            warning =
                Some(format!("We only show up to {num_lines} since there're only {num_lines} lines in this file."));
            end = num_lines;
        }
        if end < start {
            return Err(invalid(
                "view_range",
                &py_str(vr),
                &format!("Its second element `{end}` should be greater than or equal to the first element `{start}`."),
            ));
        }
        let slice = match &lines {
            Some(l) => l.as_str(),
            None => file_text::lines_range(&whole, start, end),
        };
        let mut output = match rule {
            // OHEditor re-splits the lines at every `str.splitlines()` break.
            TextRule::OhEditor => {
                file_text::make_output(&oh_pysem::splitlines(slice).collect::<Vec<_>>().join("\n"), path, start)
            }
            // V1 keeps the `\n`-separated lines as read (`_normalize_lines`).
            TextRule::V1 => file_text::make_output_v1(slice, path, start),
        };
        if let Some(w) = warning {
            output = format!("NOTE: {w}\n{output}");
        }
        Ok(EditorResult::output(output))
    }

    /// OHEditor (V0): `find -L {path} -maxdepth 2 -not \( -path '{path}/\.*' -o -path
    /// '{path}/*/\.*' \) | sort` plus the depth-1 hidden count, emulated with `read_dir`.
    /// V1 (openhands-tools 1.58) lists each level sorted, a directory's children right after it,
    /// skips a subdirectory it cannot read, and clips the whole message in its middle.
    pub(super) async fn view_dir(&self, rule: TextRule, path: &str) -> Result<EditorResult, String> {
        let join = |base: &str, name: &str| {
            if base.ends_with('/') {
                format!("{base}{name}")
            } else {
                format!("{base}/{name}")
            }
        };
        let mut stderr = String::new();
        let mut lines: Vec<(String, bool)> = vec![(path.to_string(), true)];
        let mut hidden_count = 0usize;
        // Each subdirectory's entries: (its path, first index in `lines`, end index).
        let mut groups: Vec<(String, usize, usize)> = Vec::new();
        match self.fs.read_dir(path).await {
            Err(e) => {
                stderr.push_str(&format!("find: ‘{path}’: {}\n", pypath::errno_of(&e.code).1));
            }
            Ok(entries) => {
                let mut subdirs = Vec::new();
                for e in entries {
                    if e.name.starts_with('.') {
                        hidden_count += 1;
                        continue;
                    }
                    let full = join(path, &e.name);
                    let is_dir = e.kind == FileKind::Dir;
                    if is_dir {
                        subdirs.push(full.clone());
                    }
                    lines.push((full, is_dir));
                }
                for sub in subdirs {
                    let first = lines.len();
                    let read = self.fs.read_dir(&sub).await;
                    match read {
                        Err(_) if rule == TextRule::V1 => {}
                        Err(e) => stderr.push_str(&format!("find: ‘{sub}’: {}\n", pypath::errno_of(&e.code).1)),
                        Ok(children) => {
                            for c in children {
                                if c.name.starts_with('.') {
                                    continue;
                                }
                                lines.push((join(&sub, &c.name), c.kind == FileKind::Dir));
                            }
                        }
                    }
                    groups.push((sub, first, lines.len()));
                }
            }
        }
        if !stderr.is_empty() {
            return Err(file_text::maybe_truncate(&stderr, file_text::GENERIC_NOTICE).into_owned());
        }
        if rule == TextRule::V1 {
            return Ok(EditorResult::output(v1_dir_listing(path, &lines, &groups, hidden_count)));
        }
        lines.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let dirs: std::collections::HashSet<&str> = lines.iter().filter(|l| l.1).map(|l| l.0.as_str()).collect();
        let mut stdout = String::new();
        for (p, _) in &lines {
            stdout.push_str(p);
            stdout.push('\n');
        }
        let stdout = file_text::maybe_truncate(&stdout, file_text::DIRECTORY_NOTICE);
        let stripped = py_strip(&stdout);
        let formatted: Vec<String> = if stripped.is_empty() {
            Vec::new()
        } else {
            stripped.split('\n').map(|p| if dirs.contains(p) { format!("{p}/") } else { p.to_string() }).collect()
        };
        let mut out = format!(
            "Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:\n{}",
            formatted.join("\n")
        );
        if hidden_count > 0 {
            out.push_str(&format!(
                "\n\n{hidden_count} hidden files/directories in this directory are excluded. You can use 'ls -la {path}' to see them."
            ));
        }
        Ok(EditorResult::output(out))
    }
}

/// V1's directory view: `lines` holds the root, its entries, then each subdirectory's entries
/// (subdirectories in the order of `subdirs`); V1 sorts the depth-1 entries and puts each
/// directory's sorted children right after it.
fn v1_dir_listing(path: &str, lines: &[(String, bool)], subdirs: &[(String, usize, usize)], hidden: usize) -> String {
    let label = |(p, is_dir): &(String, bool)| if *is_dir { format!("{p}/") } else { p.clone() };
    let sorted = |s: &[(String, bool)]| {
        let mut v: Vec<(String, bool)> = s.to_vec();
        v.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        v
    };
    let depth1_end = subdirs.first().map_or(lines.len(), |s| s.1);
    let mut out = vec![label(&lines[0])];
    for entry in sorted(&lines[1..depth1_end]) {
        out.push(label(&entry));
        if let Some((_, a, b)) = subdirs.iter().find(|s| s.0 == entry.0) {
            out.extend(sorted(&lines[*a..*b]).iter().map(label));
        }
    }
    let mut msg = format!(
        "Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:\n{}",
        out.join("\n")
    );
    if hidden > 0 {
        msg.push_str(&format!(
            "\n\n{hidden} hidden files/directories in this directory are excluded. You can use 'ls -la {path}' to see them."
        ));
    }
    file_text::maybe_truncate_middle(&msg, file_text::DIRECTORY_NOTICE).into_owned()
}

/// `[start, end]` of a `view_range` that is a list of two integers (or bools, which Python
/// takes as integers).
pub(crate) fn range_bounds(vr: &Value) -> Option<(i64, i64)> {
    let as_int = |v: &Value| match v {
        Value::Number(n) if !n.is_f64() => n.as_i64().or_else(|| n.as_u64().map(|u| u as i64)),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    };
    match vr {
        Value::Array(a) if a.len() == 2 => Some((as_int(&a[0])?, as_int(&a[1])?)),
        _ => None,
    }
}
