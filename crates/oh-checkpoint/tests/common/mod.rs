//! Helpers shared by the tests: a full, independent reading of a tree (everything, ignored files
//! and `.git` included) to compare with.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// One path as the tests see it: kind, bytes or link target, permission bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    File(Vec<u8>, u32),
    Link(String),
    Dir(u32),
}

/// Every path under `root` (relative, `/`-joined), read with plain std calls.
pub fn tree(root: &Path) -> BTreeMap<String, Node> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Node>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let rel = p.strip_prefix(root).unwrap().to_str().unwrap().to_string();
        let md = fs::symlink_metadata(&p).unwrap();
        let mode = md.mode() & 0o7777;
        if md.file_type().is_symlink() {
            out.insert(rel, Node::Link(fs::read_link(&p).unwrap().to_str().unwrap().to_string()));
        } else if md.is_dir() {
            out.insert(rel, Node::Dir(mode));
            walk(root, &p, out);
        } else {
            out.insert(rel, Node::File(fs::read(&p).unwrap(), mode));
        }
    }
}

/// Bytes and modification times of every file under `dir` (for "never touched").
pub fn bytes_and_mtimes(dir: &Path) -> BTreeMap<String, (Vec<u8>, i64, i64)> {
    let mut out = BTreeMap::new();
    for (rel, _) in tree(dir) {
        let p = dir.join(&rel);
        let md = fs::symlink_metadata(&p).unwrap();
        let bytes = if md.is_file() { fs::read(&p).unwrap() } else { Vec::new() };
        out.insert(rel, (bytes, md.mtime(), md.mtime_nsec()));
    }
    out
}

pub fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

pub fn chmod(root: &Path, rel: &str, mode: u32) {
    fs::set_permissions(root.join(rel), fs::Permissions::from_mode(mode)).unwrap();
}

/// Drop the entries under any of `prefixes` (paths the checkpoint does not own).
pub fn without(mut t: BTreeMap<String, Node>, prefixes: &[&str]) -> BTreeMap<String, Node> {
    t.retain(|k, _| !prefixes.iter().any(|p| k == p || k.starts_with(&format!("{p}/"))));
    t
}

pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}
