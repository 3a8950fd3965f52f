//! The session key: from the launcher's pipe or a file, never from the command line or the
//! environment.

/// The variable earlier versions took the key from. A process's initial environment stays readable
/// in `/proc/PID/environ` for its whole life (removing a variable changes the C library's copy, not
/// that block), and the agent's shell, a child, reads its parent's (`/proc/$PPID/environ`): so a key
/// there is refused, never read.
pub const REFUSED_KEY_VARIABLE: &str = "OH_SESSION_API_KEY";

/// Keys are short (the runtime's are 32 random bytes); more than this is not a key.
const MAX_KEY_BYTES: u64 = 64 * 1024;

/// How this process tells the launcher's descriptor from one of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnDescriptors {
    /// A plain program: every descriptor it opens has close-on-exec (the standard library opens
    /// files so), an inherited one has not.
    CloseOnExec,
    /// Node: it opens descriptors of its own before any of our code runs (its event loop's epoll
    /// and eventfds, pipes with both ends) and marks inherited ones close-on-exec too, so the flag
    /// tells nothing. Linux names each descriptor in `/proc/self/fd` instead: the launcher's is a
    /// pipe whose other end is not in this process, a socket or a file.
    ProcFdOnly,
}

/// Where the key comes from: an inherited descriptor, a file, or nowhere (the server will refuse,
/// saying what it needs). `env_key_present`: whether `REFUSED_KEY_VARIABLE` is set.
pub fn session_key(
    fd: Option<i32>,
    file: Option<&str>,
    env_key_present: bool,
    own: OwnDescriptors,
) -> Result<Option<String>, String> {
    if env_key_present {
        return Err(format!(
            "${REFUSED_KEY_VARIABLE} is set: a key in the environment stays readable in /proc/PID/environ for the \
             executor's whole life, by the agent's shell too (/proc/$PPID/environ), so it is not read. Pass the key \
             with --session-api-key-fd N (a pipe) or --session-api-key-file PATH, and unset {REFUSED_KEY_VARIABLE}"
        ));
    }
    let (what, text) = match (fd, file) {
        (Some(fd), _) => (
            format!("--session-api-key-fd {fd}"),
            read_fd(fd, own).map_err(|e| format!("--session-api-key-fd {fd}: {e}"))?,
        ),
        (None, Some(path)) => (
            format!("--session-api-key-file {path}"),
            std::fs::read_to_string(path).map_err(|e| format!("--session-api-key-file {path}: {e}"))?,
        ),
        (None, None) => return Ok(None),
    };
    let key = text.trim_end_matches(['\n', '\r']).to_string();
    if key.is_empty() {
        return Err(format!("{what}: no key (empty up to end of file)"));
    }
    Ok(Some(key))
}

/// Reads inherited descriptor `fd` to end of file and closes it, so that nothing this process
/// starts (the agent's bash) inherits it. Must run before this process opens files of its own
/// (the CLI calls it first): `fd` must be the launcher's, not one of ours.
fn read_fd(fd: i32, own: OwnDescriptors) -> Result<String, String> {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    // SAFETY: fcntl on any integer is defined; it tells an open descriptor from a closed one
    // (EBADF), so the File below owns an open descriptor that nothing else in this process uses.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(format!("{} (the launcher did not pass it open)", std::io::Error::last_os_error()));
    }
    // Never read or close one of this process's own descriptors (`OwnDescriptors` says how to tell).
    const OWN: &str = "not inherited: it is one of this process's own (the launcher did not pass it open)";
    // SAFETY: as above.
    if own == OwnDescriptors::CloseOnExec && unsafe { libc::fcntl(fd, libc::F_GETFD) } & libc::FD_CLOEXEC != 0 {
        return Err(OWN.into());
    }
    if fd >= 3 && is_ours_by_proc_fd(fd) {
        return Err(OWN.into());
    }
    // A launcher's socket pair may be non-blocking (Node's extra stdio pipes); a key is read whole.
    if flags & libc::O_NONBLOCK != 0 {
        // SAFETY: as above, on a descriptor checked to be open.
        unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) };
    }
    // SAFETY: `fd` is open (checked above) and was inherited, not opened by this process; the
    // File takes it over and closes it when dropped at the end of this function.
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    let mut bytes = Vec::new();
    file.take(MAX_KEY_BYTES + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_KEY_BYTES {
        return Err(format!("more than {MAX_KEY_BYTES} bytes: not a key"));
    }
    String::from_utf8(bytes).map_err(|_| "the key is not UTF-8 text".to_string())
}

/// Whether `/proc/self/fd` shows `fd` as one of this process's own: an anonymous inode (epoll,
/// eventfd) or a pipe another descriptor of this process also holds. False where there is no
/// `/proc` (the close-on-exec rule is then all there is).
fn is_ours_by_proc_fd(fd: i32) -> bool {
    let Ok(target) = std::fs::read_link(format!("/proc/self/fd/{fd}")) else { return false };
    let target = target.to_string_lossy().into_owned();
    if target.starts_with("anon_inode:") {
        return true;
    }
    if !target.starts_with("pipe:") {
        return false;
    }
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else { return false };
    dir.flatten().any(|e| {
        e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()).is_some_and(|other| other != fd)
            && std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy() == target)
    })
}

#[cfg(test)]
mod key_tests {
    use super::{session_key, OwnDescriptors};
    const NATIVE: OwnDescriptors = OwnDescriptors::CloseOnExec;
    const NODE: OwnDescriptors = OwnDescriptors::ProcFdOnly;

    /// The tests that open or close descriptors run one at a time: "closed" is checked by number,
    /// which another test's file could reuse in between.
    static FDS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn key_from_a_file() {
        let _one = FDS.lock().unwrap_or_else(|p| p.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("key");
        std::fs::write(&f, "s3cret\n").unwrap();
        let fp = f.to_str().unwrap();
        assert_eq!(session_key(None, Some(fp), false, NATIVE).unwrap().as_deref(), Some("s3cret"));
        assert_eq!(session_key(None, None, false, NATIVE).unwrap(), None);
        std::fs::write(&f, "\n").unwrap();
        assert!(session_key(None, Some(fp), false, NATIVE).unwrap_err().contains("no key"));
        assert!(session_key(None, Some("/nonexistent/oh-key"), false, NATIVE)
            .unwrap_err()
            .contains("/nonexistent/oh-key"));
    }

    /// The launcher's pipe: read to end of file, then closed (the agent's bash must not inherit it).
    #[test]
    fn key_from_an_inherited_pipe_which_is_then_closed() {
        let _one = FDS.lock().unwrap_or_else(|p| p.into_inner());
        use std::io::Write;
        use std::os::fd::IntoRawFd;
        // What a child inherits across exec: no close-on-exec flag (std's pipe has one).
        let inherited = |fd: i32| {
            // SAFETY: fcntl on a descriptor this test owns.
            assert_eq!(unsafe { libc::fcntl(fd, libc::F_SETFD, 0) }, 0);
            fd
        };
        let (reader, mut writer) = std::io::pipe().unwrap();
        writer.write_all(b"pipe-key\n").unwrap();
        drop(writer);
        let fd = inherited(reader.into_raw_fd());
        assert_eq!(session_key(Some(fd), None, false, NATIVE).unwrap().as_deref(), Some("pipe-key"));
        // SAFETY: fcntl on a number; EBADF is the expected answer.
        assert_eq!(unsafe { libc::fcntl(fd, libc::F_GETFD) }, -1, "the descriptor was closed");
        // Empty, and a descriptor nobody passed: each says what went wrong.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(writer);
        let fd = inherited(reader.into_raw_fd());
        assert!(session_key(Some(fd), None, false, NATIVE).unwrap_err().contains("no key"));
        // One of this process's own descriptors (close-on-exec): neither read nor closed.
        let (own, mut writer) = std::io::pipe().unwrap();
        writer.write_all(b"not-a-key-of-ours").unwrap();
        drop(writer);
        let own_fd = own.into_raw_fd();
        let err = session_key(Some(own_fd), None, false, NATIVE).unwrap_err();
        assert!(err.contains("not inherited"), "{err}");
        // SAFETY: fcntl and close on a descriptor this test owns (still open: checked first).
        assert!(unsafe { libc::fcntl(own_fd, libc::F_GETFD) } >= 0, "it was left open");
        unsafe { libc::close(own_fd) };
        let err = session_key(Some(987), None, false, NATIVE).unwrap_err();
        assert!(err.contains("--session-api-key-fd 987") && err.contains("did not pass it open"), "{err}");
    }

    /// Node's rule: close-on-exec tells nothing (Node sets it on inherited descriptors too), so a
    /// pipe is the launcher's when its other end is not in this process, and an anonymous inode
    /// (Node's epoll, eventfds) is never a key.
    #[test]
    fn under_node_the_proc_fd_table_tells_ours_from_the_launchers() {
        let _one = FDS.lock().unwrap_or_else(|p| p.into_inner());
        use std::io::Write;
        use std::os::fd::IntoRawFd;
        // The launcher's pipe, marked close-on-exec as Node marks it: read and closed.
        let (reader, mut writer) = std::io::pipe().unwrap();
        writer.write_all(b"node-key").unwrap();
        drop(writer);
        let fd = reader.into_raw_fd();
        assert_eq!(session_key(Some(fd), None, false, NODE).unwrap().as_deref(), Some("node-key"));
        // A pipe whose other end this process holds (Node's own): refused, left open.
        let (reader, writer) = std::io::pipe().unwrap();
        let fd = reader.into_raw_fd();
        // SAFETY: fcntl on a descriptor this test owns: as if inherited (no close-on-exec).
        assert_eq!(unsafe { libc::fcntl(fd, libc::F_SETFD, 0) }, 0);
        let err = session_key(Some(fd), None, false, NODE).unwrap_err();
        assert!(err.contains("not inherited"), "{err}");
        // SAFETY: as above; the descriptor is still open.
        assert!(unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0, "it was left open");
        drop(writer);
        // SAFETY: closing the descriptor this test owns.
        unsafe { libc::close(fd) };
        // An eventfd (anon_inode:[eventfd]): refused.
        // SAFETY: eventfd creates a descriptor this test owns; closed below.
        let efd = unsafe { libc::eventfd(0, 0) };
        assert!(efd >= 3);
        let err = session_key(Some(efd), None, false, NODE).unwrap_err();
        assert!(err.contains("not inherited"), "{err}");
        // SAFETY: as above.
        unsafe { libc::close(efd) };
    }

    #[test]
    fn a_key_in_the_environment_is_refused_not_read() {
        let err = session_key(None, None, true, NATIVE).unwrap_err();
        assert!(err.contains("$OH_SESSION_API_KEY is set") && err.contains("--session-api-key-fd"), "{err}");
    }
}
