//! The filesystem seam. Paths are absolute POSIX paths as strings.

use async_trait::async_trait;

/// What a path is (after following symlinks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    File,
    Dir,
    Other,
}

/// `stat` of a path, following symlinks.
#[derive(Debug, Clone, PartialEq)]
pub struct FileStat {
    pub kind: FileKind,
    pub size: u64,
    /// Modification time in milliseconds since the epoch.
    pub mtime_ms: f64,
    /// Unix permission bits when the backend knows them.
    pub mode: Option<u32>,
}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub kind: FileKind,
}

/// A filesystem error carrying the POSIX code (`ENOENT`, `EISDIR`, ...) so that messages can be
/// rendered exactly as Python's `OSError.__str__` renders them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsError {
    /// POSIX error name, e.g. `ENOENT`; `EIO` when unknown.
    pub code: String,
    /// Human-readable detail from the backend.
    pub message: String,
}

impl FsError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        FsError {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for FsError {}

impl From<std::io::Error> for FsError {
    fn from(e: std::io::Error) -> Self {
        let code = match e.raw_os_error() {
            Some(2) => "ENOENT",
            Some(13) => "EACCES",
            Some(17) => "EEXIST",
            Some(20) => "ENOTDIR",
            Some(21) => "EISDIR",
            Some(1) => "EPERM",
            Some(16) => "EBUSY",
            Some(18) => "EXDEV",
            Some(22) => "EINVAL",
            Some(26) => "ETXTBSY",
            Some(27) => "EFBIG",
            Some(28) => "ENOSPC",
            Some(30) => "EROFS",
            Some(36) => "ENAMETOOLONG",
            Some(39) => "ENOTEMPTY",
            Some(40) => "ELOOP",
            Some(122) => "EDQUOT",
            _ => "EIO",
        };
        FsError::new(code, e.to_string())
    }
}

/// The async filesystem every file action goes through.
#[async_trait]
pub trait FileSystem: Send + Sync + 'static {
    /// Whole-file read.
    async fn read(&self, path: &str) -> Result<Vec<u8>, FsError>;
    /// The first `len` bytes (fewer if the file is shorter). Used for the binary check of files
    /// too large to read whole; the default reads the whole file and cuts it.
    async fn read_head(&self, path: &str, len: usize) -> Result<Vec<u8>, FsError> {
        let mut v = self.read(path).await?;
        v.truncate(len);
        Ok(v)
    }
    /// The whole file in order, in pieces of any size, to `sink`; `sink` returns `false` to stop
    /// reading. The default reads the file whole and hands it over in one piece.
    async fn read_pieces(
        &self,
        path: &str,
        sink: &mut (dyn for<'b> FnMut(&'b [u8]) -> bool + Send),
    ) -> Result<(), FsError> {
        let v = self.read(path).await?;
        sink(&v);
        Ok(())
    }
    /// Create or truncate, then write all bytes. Parent directories must exist.
    async fn write(&self, path: &str, data: &[u8]) -> Result<(), FsError>;
    /// [`FileSystem::write`] of a file whose first `unchanged` bytes on disk are already
    /// `data[..unchanged]`: a backend that can write at an offset writes only the rest. The
    /// default writes everything.
    async fn write_after(&self, path: &str, data: &[u8], unchanged: usize) -> Result<(), FsError> {
        let _ = unchanged;
        self.write(path, data).await
    }
    /// Stat, following symlinks.
    async fn stat(&self, path: &str) -> Result<FileStat, FsError>;
    /// Entries of a directory (no `.`/`..`), in no particular order.
    async fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, FsError>;
    /// `mkdir -p`.
    async fn create_dir_all(&self, path: &str) -> Result<(), FsError>;
    /// Remove a file.
    async fn remove(&self, path: &str) -> Result<(), FsError>;
    /// Rename/move.
    async fn rename(&self, from: &str, to: &str) -> Result<(), FsError>;
    /// Set permission bits; backends without modes ignore it.
    async fn set_mode(&self, _path: &str, _mode: u32) -> Result<(), FsError> {
        Ok(())
    }
}

/// Runs blocking I/O on the current worker with `block_in_place` when the runtime allows it
/// (multi-thread); `None` otherwise, and the caller falls back to `tokio::fs`.
fn blocking_here<T>(f: impl FnOnce() -> T) -> Option<T> {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            Some(tokio::task::block_in_place(f))
        }
        _ => None,
    }
}

/// Like `std::fs::write`, but without `O_TRUNC`: rewriting a file in place keeps its page cache
/// instead of dropping and re-allocating it; the length is fixed afterwards.
fn overwrite(path: &str, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    f.write_all(data)?;
    f.set_len(data.len() as u64)
}

/// [`overwrite`] of all but the first `unchanged` bytes, which the file already holds. A file
/// that is gone or shorter than that meanwhile is written whole.
fn overwrite_after(path: &str, data: &[u8], unchanged: usize) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    if unchanged == 0 {
        return overwrite(path, data);
    }
    let mut f = match std::fs::OpenOptions::new().write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return overwrite(path, data),
        Err(e) => return Err(e),
    };
    if f.metadata()?.len() < unchanged as u64 {
        drop(f);
        return overwrite(path, data);
    }
    f.seek(SeekFrom::Start(unchanged as u64))?;
    f.write_all(&data[unchanged..])?;
    f.set_len(data.len() as u64)
}

fn read_in_pieces(
    path: &str,
    sink: &mut (dyn for<'b> FnMut(&'b [u8]) -> bool + Send),
) -> std::io::Result<()> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    // Below glibc's mmap threshold, so the buffer comes from the heap without page faults.
    let mut buf = vec![0u8; 120 * 1024];
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if !sink(&buf[..n]) {
            return Ok(());
        }
    }
}

/// The local filesystem, through tokio.
#[derive(Debug, Default, Clone)]
pub struct LocalFs;

#[async_trait]
impl FileSystem for LocalFs {
    async fn read(&self, path: &str) -> Result<Vec<u8>, FsError> {
        if let Some(r) = blocking_here(|| std::fs::read(path)) {
            return Ok(r?);
        }
        Ok(tokio::fs::read(path).await?)
    }
    async fn read_pieces(
        &self,
        path: &str,
        sink: &mut (dyn for<'b> FnMut(&'b [u8]) -> bool + Send),
    ) -> Result<(), FsError> {
        // A small buffer: no file-sized allocation (and its page faults) per call.
        if let Some(r) = blocking_here(|| read_in_pieces(path, &mut *sink)) {
            return Ok(r?);
        }
        let v = tokio::fs::read(path).await?;
        sink(&v);
        Ok(())
    }
    async fn read_head(&self, path: &str, len: usize) -> Result<Vec<u8>, FsError> {
        use tokio::io::AsyncReadExt;
        let f = tokio::fs::File::open(path).await?;
        let mut v = Vec::with_capacity(len.min(1 << 20));
        f.take(len as u64).read_to_end(&mut v).await?;
        Ok(v)
    }
    async fn write(&self, path: &str, data: &[u8]) -> Result<(), FsError> {
        // tokio::fs::write copies the data for its blocking thread; on a multi-thread runtime
        // write in place instead.
        if let Some(r) = blocking_here(|| overwrite(path, data)) {
            return Ok(r?);
        }
        Ok(tokio::fs::write(path, data).await?)
    }
    async fn write_after(&self, path: &str, data: &[u8], unchanged: usize) -> Result<(), FsError> {
        let unchanged = unchanged.min(data.len());
        if let Some(r) = blocking_here(|| overwrite_after(path, data, unchanged)) {
            return Ok(r?);
        }
        Ok(tokio::fs::write(path, data).await?)
    }
    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let m = tokio::fs::metadata(path).await?;
        let kind = if m.is_file() {
            FileKind::File
        } else if m.is_dir() {
            FileKind::Dir
        } else {
            FileKind::Other
        };
        let mtime_ms = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0);
        #[cfg(unix)]
        let mode = {
            use std::os::unix::fs::PermissionsExt;
            Some(m.permissions().mode() & 0o7777)
        };
        #[cfg(not(unix))]
        let mode = None;
        Ok(FileStat {
            kind,
            size: m.len(),
            mtime_ms,
            mode,
        })
    }
    async fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let mut rd = tokio::fs::read_dir(path).await?;
        let mut out = Vec::new();
        while let Some(e) = rd.next_entry().await? {
            // Follow symlinks like `find -L`.
            let kind = match tokio::fs::metadata(e.path()).await {
                Ok(m) if m.is_dir() => FileKind::Dir,
                Ok(m) if m.is_file() => FileKind::File,
                _ => FileKind::Other,
            };
            out.push(DirEntry {
                name: e.file_name().to_string_lossy().into_owned(),
                kind,
            });
        }
        Ok(out)
    }
    async fn create_dir_all(&self, path: &str) -> Result<(), FsError> {
        Ok(tokio::fs::create_dir_all(path).await?)
    }
    async fn remove(&self, path: &str) -> Result<(), FsError> {
        Ok(tokio::fs::remove_file(path).await?)
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), FsError> {
        Ok(tokio::fs::rename(from, to).await?)
    }
    async fn set_mode(&self, path: &str, mode: u32) -> Result<(), FsError> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tokio::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).await?;
        }
        Ok(())
    }
}
