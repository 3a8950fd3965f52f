//! What tmux `send-keys ARG` writes to the pane for one argument: a whole argument that names a
//! key (`Up`, `Enter`, `C-c`, `^C`, `M-x`, a single character...) is sent as that key, anything
//! else as literal characters.

/// The bytes for `arg`, as `send-keys` (without `-l`) would write them.
pub fn encode(arg: &str, app_cursor: bool) -> Vec<u8> {
    if let Some(k) = lookup_key(arg, app_cursor) {
        return k;
    }
    arg.as_bytes().to_vec()
}

fn named(name: &str, app_cursor: bool) -> Option<Vec<u8>> {
    let cur = |c: char| -> Vec<u8> {
        if app_cursor {
            format!("\x1bO{c}").into_bytes()
        } else {
            format!("\x1b[{c}").into_bytes()
        }
    };
    let n = name.to_ascii_lowercase();
    let v: Vec<u8> = match n.as_str() {
        "enter" => b"\r".to_vec(),
        "escape" => b"\x1b".to_vec(),
        "space" => b" ".to_vec(),
        "tab" => b"\t".to_vec(),
        "btab" => b"\x1b[Z".to_vec(),
        "bspace" => b"\x7f".to_vec(),
        "up" => cur('A'),
        "down" => cur('B'),
        "right" => cur('C'),
        "left" => cur('D'),
        "home" => b"\x1b[1~".to_vec(),
        "end" => b"\x1b[4~".to_vec(),
        "ic" | "insert" => b"\x1b[2~".to_vec(),
        "dc" | "delete" => b"\x1b[3~".to_vec(),
        "ppage" | "pageup" | "pgup" => b"\x1b[5~".to_vec(),
        "npage" | "pagedown" | "pgdn" => b"\x1b[6~".to_vec(),
        "f1" => b"\x1bOP".to_vec(),
        "f2" => b"\x1bOQ".to_vec(),
        "f3" => b"\x1bOR".to_vec(),
        "f4" => b"\x1bOS".to_vec(),
        "f5" => b"\x1b[15~".to_vec(),
        "f6" => b"\x1b[17~".to_vec(),
        "f7" => b"\x1b[18~".to_vec(),
        "f8" => b"\x1b[19~".to_vec(),
        "f9" => b"\x1b[20~".to_vec(),
        "f10" => b"\x1b[21~".to_vec(),
        "f11" => b"\x1b[23~".to_vec(),
        "f12" => b"\x1b[24~".to_vec(),
        _ => return None,
    };
    Some(v)
}

fn ctrl(c: char) -> Vec<u8> {
    let b = match c {
        'a'..='z' => (c as u8 - b'a') + 1,
        '@' | 'A'..='Z' | '[' | '\\' | ']' | '^' | '_' => (c as u8) & 0x1f,
        ' ' | '2' => 0,
        '?' | '8' => 0x7f,
        '3'..='7' => (c as u8 - b'3') + 0x1b,
        _ => {
            let mut buf = [0u8; 4];
            return c.encode_utf8(&mut buf).as_bytes().to_vec();
        }
    };
    vec![b]
}

fn lookup_key(arg: &str, app_cursor: bool) -> Option<Vec<u8>> {
    if arg.is_empty() {
        return None;
    }
    let mut rest = arg;
    let mut is_ctrl = false;
    let mut meta = false;
    let mut shift = false;
    loop {
        let b = rest.as_bytes();
        if b.len() >= 3 && b[1] == b'-' {
            match b[0] {
                b'C' | b'c' => is_ctrl = true,
                b'M' | b'm' => meta = true,
                b'S' | b's' => shift = true,
                _ => break,
            }
            rest = &rest[2..];
            continue;
        }
        if b.len() >= 2 && b[0] == b'^' {
            is_ctrl = true;
            rest = &rest[1..];
            continue;
        }
        break;
    }
    let mut chars = rest.chars();
    let first = chars.next()?;
    let mut out = if chars.next().is_none() {
        // A single character key.
        let c = if shift { first.to_ascii_uppercase() } else { first };
        if is_ctrl {
            ctrl(c)
        } else {
            let mut buf = [0u8; 4];
            c.encode_utf8(&mut buf).as_bytes().to_vec()
        }
    } else {
        let k = named(rest, app_cursor)?;
        if is_ctrl && k.len() == 1 {
            ctrl(k[0] as char)
        } else {
            k
        }
    };
    if meta {
        out.insert(0, 0x1b);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::encode;

    #[test]
    fn keys() {
        assert_eq!(encode("C-c", false), b"\x03");
        assert_eq!(encode("C-z", false), b"\x1a");
        assert_eq!(encode("c-d", false), b"\x04");
        assert_eq!(encode("^C", false), b"\x03");
        assert_eq!(encode("Up", false), b"\x1b[A");
        assert_eq!(encode("up", true), b"\x1bOA");
        assert_eq!(encode("M-x", false), b"\x1bx");
        assert_eq!(encode("q", false), b"q");
        assert_eq!(encode("echo hi", false), b"echo hi");
        assert_eq!(encode("C-", false), b"C-");
        assert_eq!(encode("^", false), b"^");
        assert_eq!(encode("yes", false), b"yes");
    }
}
