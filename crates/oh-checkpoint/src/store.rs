//! The store: blobs named by the SHA-256 of their bytes, one manifest per checkpoint, and a
//! catalog (checkpoint summaries, blob sizes, the stat index that spares re-hashing).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::model::*;

/// Folders a caller may want excluded by default (the user's to change: they are a setting).
pub const DEFAULT_EXCLUDES: &[&str] = &["node_modules", ".venv", "__pycache__"];

/// How a store captures and how large it may grow.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Gitignore-style patterns excluded on top of `.gitignore`/`.ignore` (e.g. `node_modules`).
    pub excludes: Vec<String>,
    /// Files larger than this are not captured (recorded as skipped).
    pub max_file_bytes: u64,
    /// The store's size bound: after a checkpoint, the oldest checkpoints are pruned until blobs
    /// and manifests fit (the newest checkpoint is always kept). `None`: unbounded.
    pub max_store_bytes: Option<u64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            excludes: DEFAULT_EXCLUDES.iter().map(|s| s.to_string()).collect(),
            max_file_bytes: 10 * 1024 * 1024,
            max_store_bytes: Some(2 * 1024 * 1024 * 1024),
        }
    }
}

/// What the stat index remembers of a file whose hash it knows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    dev: u64,
    hash: String,
}

impl Stamp {
    fn matches(&self, md: &fs::Metadata) -> bool {
        self.size == md.size()
            && self.mtime == (md.mtime(), md.mtime_nsec())
            && self.ctime == (md.ctime(), md.ctime_nsec())
            && self.ino == md.ino()
            && self.dev == md.dev()
    }
}

#[derive(Default, Serialize, Deserialize)]
struct Catalog {
    /// Files read and hashed by the scan in progress (not saved).
    #[serde(skip)]
    hashed: u64,
    next_id: u64,
    checkpoints: Vec<Summary>,
    /// Every blob in the store and its size.
    blobs: BTreeMap<String, u64>,
    /// Manifest sizes, by checkpoint id.
    manifests: BTreeMap<u64, u64>,
    /// Absolute path → the stamp of the file when its hash was computed.
    index: HashMap<String, Stamp>,
}

/// What pruning removed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PruneReport {
    pub removed_checkpoints: Vec<u64>,
    pub removed_blobs: u64,
    pub freed_bytes: u64,
}

/// A checkpoint store in a folder of its own (outside the workspace). One writer at a time: the
/// executor owns it.
pub struct Store {
    dir: PathBuf,
    settings: Settings,
    catalog: Catalog,
}

/// A file changed less than this long before a scan is hashed again next time even if its stamp
/// matches: a write within the same timestamp tick would otherwise go unseen. Filesystems with
/// nanosecond timestamps stamp with the kernel's coarse clock (a tick of a few ms); one whose
/// stamps have no fraction may count in whole seconds (or two, FAT).
const RACY_NS: i128 = 100_000_000;
const RACY_COARSE_NS: i128 = 2_000_000_000;

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

fn now_ns() -> i128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i128).unwrap_or(0)
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Write `bytes` to `path` through a temporary file in the same folder and a rename, so a reader
/// sees the old file or the new one, never half of one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.oh-checkpoint-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        if let Some(mode) = mode {
            f.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

impl Store {
    /// Open (or create) the store in `dir`.
    pub fn open(dir: impl Into<PathBuf>, settings: Settings) -> Result<Store> {
        let dir = dir.into();
        fs::create_dir_all(dir.join("objects")).map_err(io_err(&dir))?;
        fs::create_dir_all(dir.join("checkpoints")).map_err(io_err(&dir))?;
        let catalog_path = dir.join("catalog.json");
        let catalog = match fs::read(&catalog_path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt(format!("catalog.json: {e}")))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Catalog { next_id: 1, ..Default::default() },
            Err(e) => return Err(Error::Io { path: catalog_path, source: e }),
        };
        Ok(Store { dir, settings, catalog })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The checkpoints kept, oldest first.
    pub fn list(&self) -> &[Summary] {
        &self.catalog.checkpoints
    }

    /// Blobs and manifests, in bytes.
    pub fn size(&self) -> u64 {
        self.catalog.blobs.values().sum::<u64>() + self.catalog.manifests.values().sum::<u64>()
    }

    fn blob_path(&self, hash: &str) -> PathBuf {
        self.dir.join("objects").join(&hash[..2]).join(&hash[2..])
    }

    fn manifest_path(&self, id: u64) -> PathBuf {
        self.dir.join("checkpoints").join(format!("{id:010}.json"))
    }

    /// The bytes of a captured file (for a diff), checked against their hash.
    pub fn read_blob(&self, hash: &str) -> Result<Vec<u8>> {
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::Corrupt(format!("not a blob name: {hash:?}")));
        }
        let path = self.blob_path(hash);
        let bytes = fs::read(&path).map_err(io_err(&path))?;
        if sha256_hex(&bytes) != hash {
            return Err(Error::Corrupt(format!("blob {hash} does not match its hash")));
        }
        Ok(bytes)
    }

    /// A checkpoint's full manifest.
    pub fn load(&self, id: u64) -> Result<Checkpoint> {
        if !self.catalog.checkpoints.iter().any(|c| c.id == id) {
            return Err(Error::NoSuchCheckpoint(id));
        }
        let path = self.manifest_path(id);
        let bytes = fs::read(&path).map_err(io_err(&path))?;
        serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt(format!("checkpoint {id}: {e}")))
    }

    fn save_catalog(&self) -> Result<()> {
        let path = self.dir.join("catalog.json");
        let bytes = serde_json::to_vec(&self.catalog).expect("the catalog serialises");
        write_atomic(&path, &bytes, None).map_err(io_err(&path))
    }

    /// Capture `roots` into a new checkpoint and prune to the size bound.
    pub fn take(&mut self, roots: &[PathBuf], label: &str) -> Result<Summary> {
        self.take_before(roots, label, None)
    }

    /// [`Store::take`], recording the user message the checkpoint precedes.
    pub fn take_before(
        &mut self,
        roots: &[PathBuf],
        label: &str,
        before_message: Option<BeforeMessage>,
    ) -> Result<Summary> {
        self.catalog.hashed = 0;
        let snapshots = self.scan(roots, true)?;
        let id = self.catalog.next_id;
        self.catalog.next_id += 1;
        let checkpoint =
            Checkpoint { id, label: label.to_string(), before_message, created_ms: now_ms(), roots: snapshots };
        let manifest = serde_json::to_vec(&checkpoint).expect("a checkpoint serialises");
        let path = self.manifest_path(id);
        write_atomic(&path, &manifest, None).map_err(io_err(&path))?;
        let files =
            checkpoint.roots.iter().flat_map(|r| r.entries.values()).filter(|e| matches!(e, Entry::File { .. }));
        let (count, bytes) = files.fold((0, 0), |(n, b), e| match e {
            Entry::File { size, .. } => (n + 1, b + size),
            _ => (n, b),
        });
        let summary = Summary {
            id,
            label: checkpoint.label.clone(),
            before_message: checkpoint.before_message.clone(),
            created_ms: checkpoint.created_ms,
            roots: checkpoint.roots.iter().map(|r| r.root.clone()).collect(),
            files: count,
            bytes,
            skipped: checkpoint.roots.iter().map(|r| r.skipped.len() as u64).sum(),
            hashed: self.catalog.hashed,
        };
        self.catalog.checkpoints.push(summary.clone());
        self.catalog.manifests.insert(id, manifest.len() as u64);
        if self.settings.max_store_bytes.is_some_and(|max| self.size() > max) {
            self.prune()?;
        } else {
            self.save_catalog()?;
        }
        Ok(summary)
    }

    /// Remove the oldest checkpoints until the store fits its bound (keeping the newest), then
    /// every blob no kept checkpoint references.
    pub fn prune(&mut self) -> Result<PruneReport> {
        let mut report = PruneReport::default();
        let before = self.size();
        if let Some(max) = self.settings.max_store_bytes {
            // Estimate what removing the oldest frees: its manifest plus blobs only it references.
            let mut kept: Vec<Checkpoint> = Vec::new();
            for s in &self.catalog.checkpoints {
                kept.push(self.load(s.id)?);
            }
            let mut refs: HashMap<String, usize> = HashMap::new();
            for c in &kept {
                for h in hashes(c) {
                    *refs.entry(h).or_default() += 1;
                }
            }
            let mut size = self.size();
            while size > max && kept.len() > 1 {
                let oldest = kept.remove(0);
                size -= self.catalog.manifests.get(&oldest.id).copied().unwrap_or(0);
                for h in hashes(&oldest) {
                    let n = refs.get_mut(&h).expect("counted above");
                    *n -= 1;
                    if *n == 0 {
                        size -= self.catalog.blobs.get(&h).copied().unwrap_or(0);
                    }
                }
                report.removed_checkpoints.push(oldest.id);
            }
            for id in &report.removed_checkpoints {
                let path = self.manifest_path(*id);
                fs::remove_file(&path).map_err(io_err(&path))?;
                self.catalog.manifests.remove(id);
                self.catalog.checkpoints.retain(|s| s.id != *id);
            }
            let live: HashSet<String> = refs.into_iter().filter(|(_, n)| *n > 0).map(|(h, _)| h).collect();
            report.removed_blobs = self.remove_blobs_except(&live)?;
        } else {
            let mut live = HashSet::new();
            for s in &self.catalog.checkpoints {
                live.extend(hashes(&self.load(s.id)?));
            }
            report.removed_blobs = self.remove_blobs_except(&live)?;
        }
        report.freed_bytes = before - self.size();
        self.save_catalog()?;
        Ok(report)
    }

    fn remove_blobs_except(&mut self, live: &HashSet<String>) -> Result<u64> {
        let dead: Vec<String> = self.catalog.blobs.keys().filter(|h| !live.contains(*h)).cloned().collect();
        for h in &dead {
            let path = self.blob_path(h);
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::Io { path, source: e }),
            }
            self.catalog.blobs.remove(h);
        }
        Ok(dead.len() as u64)
    }

    fn store_blob(&mut self, hash: &str, bytes: &[u8]) -> Result<()> {
        let path = self.blob_path(hash);
        if !path.exists() {
            let dir = path.parent().expect("blobs live in a folder");
            fs::create_dir_all(dir).map_err(io_err(dir))?;
            write_atomic(&path, bytes, Some(0o444)).map_err(io_err(&path))?;
        }
        self.catalog.blobs.insert(hash.to_string(), bytes.len() as u64);
        Ok(())
    }

    /// The ignore rules for one root: `.gitignore`/`.ignore` files inside it (not above it, not
    /// the user's global ones, not `.git/info/exclude`: the user's `.git` is never read), the
    /// configured excludes, `.git` always, and the store itself when it sits under the root.
    pub(crate) fn walker(&self, root: &Path) -> Result<ignore::Walk> {
        let mut builder = GitignoreBuilder::new(root);
        for pattern in &self.settings.excludes {
            builder.add_line(None, pattern).map_err(|e| Error::Corrupt(format!("exclude {pattern:?}: {e}")))?;
        }
        let excludes: Gitignore = builder.build().map_err(|e| Error::Corrupt(format!("excludes: {e}")))?;
        let store = fs::canonicalize(&self.dir).unwrap_or_else(|_| self.dir.clone());
        Ok(ignore::WalkBuilder::new(root)
            .hidden(false)
            .parents(false)
            .git_global(false)
            .git_exclude(false)
            .git_ignore(true)
            .ignore(true)
            .require_git(false)
            .follow_links(false)
            .filter_entry(move |e| {
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                e.file_name() != ".git" && e.path() != store && !excludes.matched(e.path(), is_dir).is_ignore()
            })
            .build())
    }

    /// Read the state of every root. With `keep`, every file's bytes end up in the store.
    pub(crate) fn scan(&mut self, roots: &[PathBuf], keep: bool) -> Result<Vec<RootSnapshot>> {
        if roots.is_empty() {
            return Err(Error::NoRoots);
        }
        let scan_start = now_ns();
        let mut snapshots = Vec::with_capacity(roots.len());
        let mut seen: HashSet<String> = HashSet::new();
        for root in roots {
            let root = fs::canonicalize(root).map_err(io_err(root))?;
            let mut entries = BTreeMap::new();
            let mut skipped = Vec::new();
            for item in self.walker(&root)? {
                let item = match item {
                    Ok(item) => item,
                    Err(e) => {
                        skipped.push(Skipped {
                            path: String::new(),
                            reason: SkipReason::Unreadable { error: e.to_string() },
                        });
                        continue;
                    }
                };
                if item.depth() == 0 {
                    continue;
                }
                let path = item.path();
                let Some(rel) = path.strip_prefix(&root).ok().and_then(|r| r.to_str()).map(str::to_string) else {
                    skipped.push(Skipped { path: path.to_string_lossy().into_owned(), reason: SkipReason::NotUtf8 });
                    continue;
                };
                seen.insert(path.to_string_lossy().into_owned());
                match self.capture(path, keep, scan_start) {
                    Ok(Ok(entry)) => {
                        entries.insert(rel, entry);
                    }
                    Ok(Err(reason)) => skipped.push(Skipped { path: rel, reason }),
                    Err(e) => {
                        skipped.push(Skipped { path: rel, reason: SkipReason::Unreadable { error: e.to_string() } })
                    }
                }
            }
            snapshots.push(RootSnapshot { root, entries, skipped });
        }
        // Forget the stamps of files that are gone, so the index does not grow without end.
        let scanned: Vec<String> = snapshots.iter().map(|s| format!("{}/", s.root.to_string_lossy())).collect();
        self.catalog.index.retain(|k, _| seen.contains(k) || !scanned.iter().any(|r| k.starts_with(r.as_str())));
        Ok(snapshots)
    }

    /// One path's entry, or why it is not captured.
    fn capture(&mut self, path: &Path, keep: bool, scan_start: i128) -> Result<std::result::Result<Entry, SkipReason>> {
        let md = fs::symlink_metadata(path).map_err(io_err(path))?;
        let ft = md.file_type();
        let mode = md.mode() & 0o7777;
        if ft.is_dir() {
            return Ok(Ok(Entry::Dir { mode }));
        }
        if ft.is_symlink() {
            let target = fs::read_link(path).map_err(io_err(path))?;
            return Ok(match target.into_os_string().into_string() {
                Ok(target) => Ok(Entry::Symlink { target }),
                Err(_) => Err(SkipReason::NotUtf8),
            });
        }
        if !ft.is_file() {
            return Ok(Err(SkipReason::Special));
        }
        let cap = self.settings.max_file_bytes;
        if md.size() > cap {
            return Ok(Err(SkipReason::TooLarge { size: md.size(), cap }));
        }
        let key = path.to_string_lossy().into_owned();
        if let Some(stamp) = self.catalog.index.get(&key) {
            if stamp.matches(&md) && (!keep || self.catalog.blobs.contains_key(&stamp.hash)) {
                return Ok(Ok(Entry::File { hash: stamp.hash.clone(), size: stamp.size, mode }));
            }
        }
        let bytes = fs::read(path).map_err(io_err(path))?;
        self.catalog.hashed += 1;
        if bytes.len() as u64 > cap {
            return Ok(Err(SkipReason::TooLarge { size: bytes.len() as u64, cap }));
        }
        let hash = sha256_hex(&bytes);
        if keep {
            self.store_blob(&hash, &bytes)?;
        }
        // Trust the stamp next time only if the file had stopped changing when it was read and
        // is still as it was (a write between stat and read would make the hash lie).
        let mtime_ns = md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128;
        let ctime_ns = md.ctime() as i128 * 1_000_000_000 + md.ctime_nsec() as i128;
        let after = fs::symlink_metadata(path).ok();
        let stable = after.as_ref().is_some_and(|a| {
            a.len() == bytes.len() as u64 && a.mtime() == md.mtime() && a.mtime_nsec() == md.mtime_nsec()
        });
        let coarse = md.mtime_nsec() == 0 && md.ctime_nsec() == 0;
        let racy_after = scan_start - if coarse { RACY_COARSE_NS } else { RACY_NS };
        if stable && mtime_ns < racy_after && ctime_ns < racy_after {
            let stamp = Stamp {
                size: bytes.len() as u64,
                mtime: (md.mtime(), md.mtime_nsec()),
                ctime: (md.ctime(), md.ctime_nsec()),
                ino: md.ino(),
                dev: md.dev(),
                hash: hash.clone(),
            };
            self.catalog.index.insert(key, stamp);
        } else {
            self.catalog.index.remove(&key);
        }
        Ok(Ok(Entry::File { hash, size: bytes.len() as u64, mode }))
    }
}

fn hashes(c: &Checkpoint) -> impl Iterator<Item = String> + '_ {
    c.roots.iter().flat_map(|r| r.entries.values()).filter_map(|e| match e {
        Entry::File { hash, .. } => Some(hash.clone()),
        _ => None,
    })
}
