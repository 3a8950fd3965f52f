//! The PS1 metadata of the reference, re-stated: the regex
//! (`^###PS1JSON###(.*?)###PS1END###`, DOTALL|MULTILINE, kept only when the group parses as JSON),
//! `_combine_outputs_between_matches` and `_get_command_output`.

use oh_protocol::CmdOutputMetadata;

pub const PS1_BEGIN: &str = "###PS1JSON###";
pub const PS1_END: &str = "###PS1END###";

use oh_pysem::{lstrip as py_lstrip, rstrip as py_rstrip, strip as py_strip};

/// One valid PS1 block in a pane capture: byte offsets of the whole match and of group 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ps1Match {
    pub start: usize,
    pub end: usize,
    pub group: (usize, usize),
}

/// `CmdOutputMetadata.matches_ps1_metadata`.
pub fn find_ps1(p: &str) -> Vec<Ps1Match> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos <= p.len() {
        // Next PS1_BEGIN at the start of a line, at or after `pos`.
        let Some(start) = find_at_line_start(p, pos, PS1_BEGIN) else {
            break;
        };
        let gstart = start + PS1_BEGIN.len();
        let Some(rel) = p[gstart..].find(PS1_END) else {
            break;
        };
        let gend = gstart + rel;
        let end = gend + PS1_END.len();
        if serde_json::from_str::<serde_json::Value>(py_strip(&p[gstart..gend])).is_ok() {
            out.push(Ps1Match { start, end, group: (gstart, gend) });
        }
        pos = end;
    }
    out
}

fn find_at_line_start(p: &str, mut pos: usize, needle: &str) -> Option<usize> {
    while pos <= p.len() {
        let rel = p[pos..].find(needle)?;
        let at = pos + rel;
        if at == 0 || p.as_bytes()[at - 1] == b'\n' {
            return Some(at);
        }
        pos = at + 1;
        while pos < p.len() && !p.is_char_boundary(pos) {
            pos += 1;
        }
    }
    None
}

/// `int(float(str(v)))`, -1 when that fails.
fn py_int_of(v: &serde_json::Value) -> i64 {
    let s = match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match py_strip(&s).replace('_', "").parse::<f64>() {
        Ok(f) if f.is_finite() => f.trunc() as i64,
        _ => -1,
    }
}

/// `CmdOutputMetadata.from_ps1_match`.
pub fn metadata_from(p: &str, m: &Ps1Match) -> CmdOutputMetadata {
    let mut md = CmdOutputMetadata::default();
    let Ok(serde_json::Value::Object(obj)) =
        serde_json::from_str::<serde_json::Value>(py_strip(&p[m.group.0..m.group.1]))
    else {
        return md;
    };
    let text = |k: &str| {
        obj.get(k).map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    if let Some(v) = obj.get("pid") {
        md.pid = py_int_of(v);
    }
    if let Some(v) = obj.get("exit_code") {
        md.exit_code = py_int_of(v);
    }
    md.username = text("username");
    md.hostname = text("hostname");
    md.working_dir = text("working_dir");
    md.py_interpreter_path = text("py_interpreter_path");
    md
}

/// Python slicing `p[from:]` with an index that may run past the end.
fn tail(p: &str, from: usize) -> &str {
    if from >= p.len() {
        ""
    } else {
        let mut f = from;
        while !p.is_char_boundary(f) {
            f += 1;
        }
        &p[f..]
    }
}

/// `_combine_outputs_between_matches`.
pub fn combine_outputs<'a>(p: &'a str, m: &[Ps1Match], before_last: bool) -> std::borrow::Cow<'a, str> {
    match m.len() {
        0 => p.into(),
        1 => {
            if before_last {
                p[..m[0].start].into()
            } else {
                tail(p, m[0].end + 1).into()
            }
        }
        _ => {
            let mut out = String::new();
            for w in m.windows(2) {
                let from = (w[0].end + 1).min(p.len());
                let to = w[1].start.max(from);
                out.push_str(&p[from..to]);
                out.push('\n');
            }
            out.push_str(tail(p, m[m.len() - 1].end + 1));
            out.into()
        }
    }
}

/// `_remove_command_prefix(...).rstrip()`: the final content.
pub fn strip_command_echo<'a>(output: &'a str, command: &str) -> &'a str {
    let o = py_lstrip(output);
    let c = py_lstrip(command);
    let o = o.strip_prefix(c).unwrap_or(o);
    py_rstrip(py_lstrip(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "\n###PS1JSON###\n{\n  \"pid\": \"\",\n  \"exit_code\": \"0\",\n  \"username\": \"u\",\n  \"hostname\": \"h\",\n  \"working_dir\": \"/w\",\n  \"py_interpreter_path\": \"\"\n}\n###PS1END###";

    #[test]
    fn finds_valid_blocks_only() {
        let p = format!("{PROMPT}\nexport PROMPT_COMMAND='###PS1JSON###\\n{{ ###PS1END###'\necho hi\nhi\n{PROMPT}");
        let m = find_ps1(&p);
        assert_eq!(m.len(), 2);
        let md = metadata_from(&p, &m[1]);
        assert_eq!(md.exit_code, 0);
        assert_eq!(md.pid, -1);
        assert_eq!(md.working_dir.as_deref(), Some("/w"));
        assert_eq!(md.py_interpreter_path.as_deref(), Some(""));
        let raw = combine_outputs(&p, &m, false);
        assert!(raw.starts_with("export PROMPT_COMMAND"));
    }

    #[test]
    fn marker_not_at_line_start_is_ignored() {
        let p = format!("x###PS1JSON###{{}}###PS1END###{PROMPT}");
        assert_eq!(find_ps1(&p).len(), 1);
    }

    #[test]
    fn echo_removal() {
        assert_eq!(strip_command_echo("\necho hi\nhi\n\n", "echo hi"), "hi");
        assert_eq!(strip_command_echo("  x  \n", "y"), "x");
    }

    #[test]
    fn python_whitespace() {
        assert_eq!(py_strip("\x1c a \u{a0}"), "a");
    }
}
