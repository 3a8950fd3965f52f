//! The editor commands that change a file (`str_replace`, `insert`, `undo_edit`), kept apart from
//! the dispatch, validation, loading and writing in `editor.rs` that every command shares.

use std::sync::Arc;

use super::*;

impl Editor {
    pub(super) async fn str_replace(
        &self,
        rule: TextRule,
        path: &str,
        stat: &FileStat,
        old_str: &str,
        new_str: &str,
    ) -> Result<EditorResult, String> {
        let Loaded { enc, text: content, verbatim } = self.load(rule, path, stat, None).await?;
        let mut old_str = old_str;
        let mut new_str = new_str;
        let mut found = find_all(&content, old_str);
        if found.is_empty() {
            old_str = py_strip(old_str);
            new_str = py_strip(new_str);
            found = find_all(&content, old_str);
            if found.is_empty() {
                return Err(format!(
                    "No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}."
                ));
            }
        }
        if found.len() > 1 {
            let lines = if old_str.is_empty() {
                (1..=file_text::count_newlines(&content) as i64 + 1).collect::<Vec<_>>()
            } else {
                let mut lines = Vec::new();
                let mut line = 1i64;
                let mut prev = 0usize;
                for &pos in &found {
                    line += memchr::memchr_iter(b'\n', &content.as_bytes()[prev..pos]).count() as i64;
                    prev = pos;
                    if lines.last() != Some(&line) {
                        lines.push(line);
                    }
                }
                lines
            };
            return Err(format!(
                "No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines {}. Please ensure it is unique.",
                py_int_list(&lines)
            ));
        }
        let idx = found[0];
        let line = file_text::count_newlines(&content[..idx]) as i64 + 1;
        let mut new_content = self.buffers.take_string(content.len() + new_str.len());
        new_content.push_str(&content[..idx]);
        new_content.push_str(new_str);
        new_content.push_str(&content[idx + old_str.len()..]);
        let unchanged = if verbatim { idx } else { 0 };
        let written = self.write_encoded(rule, path, &new_content, enc, unchanged).await?;
        let content = Arc::new(content);
        self.push_history(path, content.clone());
        // After the history entry, as in the reference: `undo_edit` can still restore the file.
        written.revalidate(path)?;

        let start = (line - file_text::SNIPPET_CONTEXT_WINDOW).max(0);
        let end = line + file_text::SNIPPET_CONTEXT_WINDOW + new_str.matches('\n').count() as i64;
        // The text read has no CR left (universal newlines): only `new_str` can bring one.
        let reread = if new_str.contains('\r') {
            file_text::universal_newlines(&new_content)
        } else {
            std::borrow::Cow::Borrowed(new_content.as_str())
        };
        let snippet = match reread {
            // No CR: the re-read text is `new_content`, whose line `line` starts where the
            // original's did; the snippet is found by scanning back a few lines from there.
            std::borrow::Cow::Borrowed(t) => {
                let line_begin = memchr::memrchr(b'\n', &t.as_bytes()[..idx]).map_or(0, |p| p + 1);
                let mut a = line_begin;
                for _ in 0..(line - 1 - start) {
                    a = memchr::memrchr(b'\n', &t.as_bytes()[..a - 1]).map_or(0, |p| p + 1);
                }
                file_text::lines_range(&t[a..], 1, end - start)
            }
            std::borrow::Cow::Owned(ref t) => file_text::lines_range(t, start + 1, end),
        };
        let mut output = format!("The file {path} has been edited. ");
        output.push_str(&cat_n(rule, snippet, &format!("a snippet of {path}"), start + 1));
        output.push_str("Review the changes and make sure they are as expected. Edit the file again if necessary.");
        drop(reread);
        Ok(EditorResult { output, old_content: Some(content), new_content: Some(Arc::new(new_content)) })
    }

    pub(super) async fn insert(
        &self,
        rule: TextRule,
        path: &str,
        stat: &FileStat,
        insert_line: InsertLine,
        new_str: &str,
    ) -> Result<EditorResult, String> {
        let Loaded { enc, text: content, verbatim } = self.load(rule, path, stat, None).await?;
        let num_lines = file_text::count_lines(&content) as i64;
        let (line, shown) = match insert_line {
            InsertLine::Int(n, s) => (n, s),
            InsertLine::Uncomparable(t) => {
                return Err(format!("'<' not supported between instances of '{t}' and 'int'"))
            }
            InsertLine::Missing => unreachable!(),
        };
        if line < 0 || line > num_lines {
            return Err(invalid(
                "insert_line",
                &shown,
                &format!("It should be within the range of allowed values: {}", py_int_list(&[0, num_lines])),
            ));
        }
        let split_at = file_text::line_start(&content, line as usize + 1);
        let parts: Vec<&str> = new_str.split('\n').collect();
        let mut new_content = self.buffers.take_string(content.len() + new_str.len() + 1);
        new_content.push_str(&content[..split_at]);
        for p in &parts {
            new_content.push_str(p);
            new_content.push('\n');
        }
        new_content.push_str(&content[split_at..]);
        let unchanged = if verbatim { split_at } else { 0 };
        // Before the history entry, as in the reference: its snippet read comes first.
        self.write_encoded(rule, path, &new_content, enc, unchanged).await?.revalidate(path)?;
        // As in `str_replace`, only `new_str` can bring a CR.
        let new_content = if new_str.contains('\r') {
            match file_text::universal_newlines(&new_content) {
                std::borrow::Cow::Borrowed(_) => new_content,
                std::borrow::Cow::Owned(s) => s,
            }
        } else {
            new_content
        };
        let k = parts.len() as i64;
        let start = (line - file_text::SNIPPET_CONTEXT_WINDOW).max(0);
        let end = (num_lines + k).min(line + file_text::SNIPPET_CONTEXT_WINDOW + k);
        let snippet = file_text::lines_range(&new_content, start + 1, end);
        let mut output = format!("The file {path} has been edited. ");
        output.push_str(&cat_n(
            rule,
            snippet,
            "a snippet of the edited file",
            (line - file_text::SNIPPET_CONTEXT_WINDOW + 1).max(1),
        ));
        output.push_str("Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.");
        let content = Arc::new(content);
        self.push_history(path, content.clone());
        Ok(EditorResult { output, old_content: Some(content), new_content: Some(Arc::new(new_content)) })
    }

    pub(super) async fn undo_edit(&self, rule: TextRule, path: &str, stat: &FileStat) -> Result<EditorResult, String> {
        let Loaded { enc, text: current, verbatim } = self.load(rule, path, stat, None).await?;
        let old = self.pop_history(path).ok_or_else(|| format!("No edit history found for {path}."))?;
        let unchanged = if verbatim { file_text::common_prefix(current.as_bytes(), old.as_bytes()) } else { 0 };
        // `undo_edit` does not read the file back: no revalidation.
        let _ = self.write_encoded(rule, path, &old, enc, unchanged).await?;
        let output = format!("Last edit to {path} undone successfully. {}", cat_n(rule, &old, path, 1));
        Ok(EditorResult { output, old_content: Some(Arc::new(current)), new_content: Some(old) })
    }
}

/// Byte offsets of the non-overlapping occurrences of `needle`, left to right (`re.finditer`
/// of the escaped pattern). An empty needle matches at every position; only whether there is
/// one or more matters then, so at most two are returned.
fn find_all(hay: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return if hay.is_empty() { vec![0] } else { vec![0, 1] };
    }
    memchr::memmem::find_iter(hay.as_bytes(), needle.as_bytes()).collect()
}
