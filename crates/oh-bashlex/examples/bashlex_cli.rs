//! Differential-testing helper: reads one JSON string per stdin line, prints one JSON object
//! per line with `split`/`split_error` and `escape`/`escape_error` (same shape as the corpus).
use oh_bashlex::{try_escape_bash_special_chars, try_split_bash_commands};
use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.unwrap();
        let input: String = serde_json::from_str(&line).unwrap();
        let mut obj = serde_json::Map::new();
        obj.insert("input".into(), input.clone().into());
        match try_split_bash_commands(&input) {
            Ok(v) => obj.insert("split".into(), v.into()),
            Err(e) => obj.insert("split_error".into(), e.exception.into()),
        };
        match try_escape_bash_special_chars(&input) {
            Ok(v) => obj.insert("escape".into(), v.into()),
            Err(e) => obj.insert("escape_error".into(), e.exception.into()),
        };
        writeln!(out, "{}", serde_json::Value::Object(obj)).unwrap();
    }
}
