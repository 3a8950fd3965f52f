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
        FsError { code: code.into(), message: message.into() }
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
    /// [`FileSystem::read`] into `buf`, replacing what it held. A backend that reads into
    /// memory it owns reuses `buf`'s allocation; the default replaces `buf`.
    async fn read_into(&self, path: &str, buf: &mut Vec<u8>) -> Result<(), FsError> {
        *buf = self.read(path).await?;
        Ok(())
    }
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
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(path)?;
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

/// A whole file into `buf` (replacing its contents), through [`read_in_pieces`]' small buffer.
///
/// Reading from the page cache straight into a file-sized buffer is the slow way on the
/// machines we measured: the kernel's copy into memory that is not in the CPU cache ran at
/// under 3 GB/s, so a 6.2 MB file took 2.2-3.6 ms. Reading 120 KB pieces into a buffer that
/// stays in cache and appending them with the C library's `memcpy` took 0.55 ms (see "Reading
/// files" in `bench/README.md`).
fn read_whole_into(path: &str, buf: &mut Vec<u8>) -> std::io::Result<()> {
    let f = std::fs::File::open(path)?;
    buf.clear();
    if let Ok(m) = f.metadata() {
        buf.reserve(m.len() as usize);
    }
    read_file_in_pieces(f, &mut |piece| {
        buf.extend_from_slice(piece);
        true
    })
}

fn read_in_pieces(path: &str, sink: &mut (dyn for<'b> FnMut(&'b [u8]) -> bool + Send)) -> std::io::Result<()> {
    read_file_in_pieces(std::fs::File::open(path)?, sink)
}

fn read_file_in_pieces(
    mut f: std::fs::File,
    sink: &mut (dyn for<'b> FnMut(&'b [u8]) -> bool + Send + '_),
) -> std::io::Result<()> {
    use std::io::Read;
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
        let mut buf = Vec::new();
        self.read_into(path, &mut buf).await?;
        Ok(buf)
    }
    async fn read_into(&self, path: &str, buf: &mut Vec<u8>) -> Result<(), FsError> {
        if let Some(r) = blocking_here(|| read_whole_into(path, buf)) {
            return Ok(r?);
        }
        *buf = tokio::fs::read(path).await?;
        Ok(())
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
        // A stat is a few microseconds: on a multi-thread runtime it is not worth a hop to the
        // blocking pool and back (two thread wake-ups).
        let m = match blocking_here(|| std::fs::metadata(path)) {
            Some(m) => m?,
            None => tokio::fs::metadata(path).await?,
        };
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
        Ok(FileStat { kind, size: m.len(), mtime_ms, mode })
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
            out.push(DirEntry { name: e.file_name().to_string_lossy().into_owned(), kind });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of several pieces (and not a multiple of the piece size) reads back exactly, into
    /// a buffer that held something else and keeps its allocation.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn read_into_replaces_and_reuses() {
        let dir = std::env::temp_dir().join(format!("oh-files-read-into-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.bin");
        let data: Vec<u8> = (0..400_003u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let path = path.to_str().unwrap();

        let mut buf = Vec::with_capacity(1 << 20);
        buf.extend_from_slice(b"stale");
        let before = buf.as_ptr();
        LocalFs.read_into(path, &mut buf).await.unwrap();
        assert!(buf == data, "bytes differ");
        assert_eq!(buf.as_ptr(), before, "the buffer's allocation is reused");
        assert!(LocalFs.read(path).await.unwrap() == data);

        std::fs::write(path, b"").unwrap();
        LocalFs.read_into(path, &mut buf).await.unwrap();
        assert!(buf.is_empty());
        let missing = LocalFs.read_into(&format!("{path}.gone"), &mut buf).await;
        assert_eq!(missing.unwrap_err().code, "ENOENT");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
