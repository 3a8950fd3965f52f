//! Python's path and OS-error behaviours that leak into observations: `pathlib` normalisation,
//! `os.path` pieces and `OSError.__str__`. String semantics (`repr`, `strip`, `splitlines`) are in
//! `oh-pysem`.

use crate::fs::FsError;

/// `str(pathlib.PurePosixPath(s))`: drops empty and `.` components and a trailing slash, keeps
/// `..`, keeps exactly two leading slashes (POSIX implementation-defined), collapses three or
/// more to one. An empty path becomes `.`.
pub fn norm_path(s: &str) -> String {
    let lead = s.bytes().take_while(|&b| b == b'/').count();
    let prefix = match lead {
        0 => "",
        2 => "//",
        _ => "/",
    };
    let parts: Vec<&str> = s.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    if parts.is_empty() {
        return if prefix.is_empty() { ".".to_string() } else { prefix.to_string() };
    }
    let mut out = String::with_capacity(s.len());
    out.push_str(prefix);
    out.push_str(&parts.join("/"));
    out
}

/// `str(Path(base) / rel)` for a relative `rel`.
pub fn join_path(base: &str, rel: &str) -> String {
    if rel.starts_with('/') {
        return norm_path(rel);
    }
    norm_path(&format!("{base}/{rel}"))
}

/// `os.path.dirname` of a normalised absolute path.
pub fn dirname(p: &str) -> String {
    match p.rfind('/') {
        Some(i) => {
            let head = &p[..=i];
            let trimmed = head.trim_end_matches('/');
            if trimmed.is_empty() {
                head.to_string()
            } else {
                trimmed.to_string()
            }
        }
        None => String::new(),
    }
}

/// Last path component.
pub fn basename(p: &str) -> &str {
    match p.rfind('/') {
        Some(i) => &p[i + 1..],
        None => p,
    }
}

/// `PurePath.suffix`.
pub fn suffix(p: &str) -> &str {
    let name = basename(p);
    match name.rfind('.') {
        Some(i) if i > 0 && i < name.len() - 1 => &name[i..],
        _ => "",
    }
}

/// The extension `os.path.splitext` finds (leading dots of the name do not count).
pub fn splitext_ext(p: &str) -> &str {
    let name = basename(p);
    match name.rfind('.') {
        Some(i) if name[..i].bytes().any(|b| b != b'.') => &name[i..],
        _ => "",
    }
}

/// `(errno, strerror)` of a POSIX error name, as on Linux.
pub fn errno_of(code: &str) -> (i32, &'static str) {
    match code {
        "EPERM" => (1, "Operation not permitted"),
        "ENOENT" => (2, "No such file or directory"),
        "EIO" => (5, "Input/output error"),
        "EACCES" => (13, "Permission denied"),
        "EBUSY" => (16, "Device or resource busy"),
        "EEXIST" => (17, "File exists"),
        "EXDEV" => (18, "Invalid cross-device link"),
        "ENOTDIR" => (20, "Not a directory"),
        "EISDIR" => (21, "Is a directory"),
        "EINVAL" => (22, "Invalid argument"),
        "ETXTBSY" => (26, "Text file busy"),
        "EFBIG" => (27, "File too large"),
        "ENOSPC" => (28, "No space left on device"),
        "EROFS" => (30, "Read-only file system"),
        "ENAMETOOLONG" => (36, "File name too long"),
        "ENOTEMPTY" => (39, "Directory not empty"),
        "ELOOP" => (40, "Too many levels of symbolic links"),
        "EDQUOT" => (122, "Disk quota exceeded"),
        _ => (5, "Input/output error"),
    }
}

/// `str(OSError)` for an error on `path`: `[Errno 2] No such file or directory: '/p'`.
pub fn os_error_str(e: &FsError, path: &str) -> String {
    let (n, msg) = errno_of(&e.code);
    format!("[Errno {n}] {msg}: {}", oh_pysem::repr_str(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(norm_path("//a/b"), "//a/b");
        assert_eq!(norm_path("///a"), "/a");
        assert_eq!(norm_path("/a/./b/"), "/a/b");
        assert_eq!(norm_path("a//b/."), "a/b");
        assert_eq!(norm_path(""), ".");
        assert_eq!(norm_path("/"), "/");
        assert_eq!(norm_path("a/../b"), "a/../b");
        assert_eq!(norm_path("//"), "//");
        assert_eq!(dirname("/a/b"), "/a");
        assert_eq!(dirname("/a"), "/");
        assert_eq!(suffix("/x/.pdf"), "");
        assert_eq!(suffix("/x/a.PDF"), ".PDF");
        assert_eq!(splitext_ext("/x/.png"), "");
        assert_eq!(splitext_ext("/x/a.b.png"), ".png");
    }
}
