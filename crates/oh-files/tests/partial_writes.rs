//! Edits write only what changed (`FileSystem::write_after`): the file's bytes after every
//! command are the same as with a filesystem that always writes whole files.

use std::sync::Arc;

use async_trait::async_trait;
use oh_files::{DirEntry, FileActions, FileStat, FileSystem, FsError, LocalFs};
use oh_protocol::FileEditAction;
use serde_json::json;

/// `LocalFs` without partial writes (the trait's default `write_after`).
struct WholeWrites(LocalFs);

#[async_trait]
impl FileSystem for WholeWrites {
    async fn read(&self, path: &str) -> Result<Vec<u8>, FsError> {
        self.0.read(path).await
    }
    async fn write(&self, path: &str, data: &[u8]) -> Result<(), FsError> {
        self.0.write(path, data).await
    }
    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.0.stat(path).await
    }
    async fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        self.0.read_dir(path).await
    }
    async fn create_dir_all(&self, path: &str) -> Result<(), FsError> {
        self.0.create_dir_all(path).await
    }
    async fn remove(&self, path: &str) -> Result<(), FsError> {
        self.0.remove(path).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), FsError> {
        self.0.rename(from, to).await
    }
}

fn edit(path: &str, command: &str) -> FileEditAction {
    FileEditAction::oh_aci(path, command)
}

/// One edit to apply to the file at the given path.
type Step = Box<dyn Fn(&str) -> FileEditAction>;

#[test]
fn partial_writes_leave_the_same_bytes_as_whole_writes() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let root = std::env::temp_dir().join(format!("oh-files-partial-{}", std::process::id()));
    let (a, b) = (root.join("partial"), root.join("whole"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let body: String = (0..3000).map(|i| format!("line {i} = value\n")).collect();
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("plain.py", body.clone().into_bytes()),
        ("bom.py", [b"\xef\xbb\xbf".as_slice(), body.as_bytes()].concat()),
        ("crlf.py", body.replace('\n', "\r\n").into_bytes()),
        ("latin1.py", [body.as_bytes(), b"caf\xe9\n".as_slice()].concat()),
    ];
    rt.block_on(async {
        let partial = FileActions::new(Arc::new(LocalFs), a.clone());
        let whole = FileActions::new(Arc::new(WholeWrites(LocalFs)), b.clone());
        for (name, bytes) in &files {
            let (pa, pb) = (a.join(name), b.join(name));
            std::fs::write(&pa, bytes).unwrap();
            std::fs::write(&pb, bytes).unwrap();
            let (pa, pb) = (pa.to_str().unwrap().to_string(), pb.to_str().unwrap().to_string());
            let steps: Vec<Step> = vec![
                Box::new(|p| {
                    let mut e = edit(p, "str_replace");
                    e.old_str = Some("line 2990 = value".into());
                    e.new_str = Some("line 2990 = changed\nand one more".into());
                    e
                }),
                Box::new(|p| {
                    let mut e = edit(p, "insert");
                    e.insert_line = Some(json!(1500));
                    e.new_str = Some("inserted".into());
                    e
                }),
                Box::new(|p| {
                    let mut e = edit(p, "str_replace");
                    e.old_str = Some("line 3 = value".into());
                    e.new_str = Some("x".into());
                    e
                }),
                Box::new(|p| edit(p, "undo_edit")),
                Box::new(|p| edit(p, "undo_edit")),
                Box::new(|p| edit(p, "undo_edit")),
            ];
            for (i, step) in steps.iter().enumerate() {
                let oa = partial.edit(&step(&pa)).await;
                let ob = whole.edit(&step(&pb)).await;
                assert!(!oa.content.starts_with("ERROR"), "{name} step {i}: {}", oa.content);
                assert_eq!(oa.content.replace(&pa, "P"), ob.content.replace(&pb, "P"), "{name} step {i}");
                assert!(std::fs::read(&pa).unwrap() == std::fs::read(&pb).unwrap(), "{name} step {i}: bytes differ");
            }
            // Undone to the original text (the editor writes what it read: universal newlines).
            let want = if *name == "crlf.py" { body.as_bytes().to_vec() } else { bytes.clone() };
            assert!(std::fs::read(&pa).unwrap() == want, "{name}: not undone to the original");
        }
    });
    let _ = std::fs::remove_dir_all(&root);
}
