//! File-sized buffers the editor reuses from one command to the next.
//!
//! An edit of a 6 MB file needs two file-sized buffers: the text read (kept as the undo
//! snapshot) and the edited text (written, diffed, then dropped). Fresh ones cost more than the
//! edit itself: glibc serves them from pages the kernel must fault in and zero, and gives them
//! back when they are freed, so every command faulted in 12 MB again. The editor instead keeps
//! the last two large buffers it dropped and reads and builds into them.
//!
//! What it holds is bounded (two buffers, each at most the editor's file-size limit plus some
//! slack) and temporary: 30 seconds after the last command the buffers are freed, so an agent
//! that edited a big file once does not keep its size in the host process.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

// tokio's clock, so that a test with paused time can step over the idle period.
use tokio::time::Instant;

use super::MAX_FILE_SIZE;

/// Smaller buffers are cheap to allocate (glibc serves them from its heap without page faults).
const MIN_KEPT: usize = 256 * 1024;
/// A buffer for the largest file the editor takes, plus what an edit may add.
const MAX_KEPT: usize = MAX_FILE_SIZE as usize + MAX_FILE_SIZE as usize / 8;
const KEPT: usize = 2;
pub(crate) const IDLE_RELEASE: Duration = Duration::from_secs(30);

#[derive(Default)]
pub(crate) struct Buffers {
    inner: Arc<Mutex<Spare>>,
}

#[derive(Default)]
struct Spare {
    buffers: Vec<Vec<u8>>,
    last_use: Option<Instant>,
    /// A release task is sleeping.
    release_pending: bool,
}

impl Buffers {
    /// An empty buffer with room for at least `capacity` bytes: the smallest kept one that is
    /// large enough, else a new one.
    pub fn take(&self, capacity: usize) -> Vec<u8> {
        let mut spare = self.lock();
        spare.last_use = Some(Instant::now());
        let best = spare
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= capacity)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        match best {
            Some(i) => spare.buffers.swap_remove(i),
            None => Vec::with_capacity(capacity),
        }
    }

    /// [`Buffers::take`] as an empty `String`.
    pub fn take_string(&self, capacity: usize) -> String {
        let mut v = self.take(capacity);
        v.clear();
        String::from_utf8(v).expect("an empty buffer is valid UTF-8")
    }

    /// Gives a text back once nothing else holds it (a snapshot still in the history does).
    pub fn recycle(&self, text: Option<Arc<String>>) {
        if let Some(s) = text.and_then(|t| Arc::try_unwrap(t).ok()) {
            self.give(s.into_bytes());
        }
    }

    fn give(&self, mut buf: Vec<u8>) {
        if !(MIN_KEPT..=MAX_KEPT).contains(&buf.capacity()) {
            return;
        }
        // Without a runtime to free them later, nothing is kept.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        buf.clear();
        let mut spare = self.lock();
        spare.last_use = Some(Instant::now());
        spare.buffers.push(buf);
        if spare.buffers.len() > KEPT {
            let smallest = (0..spare.buffers.len()).min_by_key(|&i| spare.buffers[i].capacity()).expect("not empty");
            spare.buffers.swap_remove(smallest);
        }
        if !spare.release_pending {
            spare.release_pending = true;
            runtime.spawn(release_when_idle(Arc::downgrade(&self.inner)));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Spare> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[cfg(test)]
    pub(super) fn kept(&self) -> Vec<usize> {
        self.lock().buffers.iter().map(Vec::capacity).collect()
    }
}

/// Frees the kept buffers once the editor has been idle for [`IDLE_RELEASE`]; ends early when
/// the editor is gone.
async fn release_when_idle(spare: Weak<Mutex<Spare>>) {
    let mut wait = IDLE_RELEASE;
    loop {
        tokio::time::sleep(wait).await;
        let Some(spare) = spare.upgrade() else { return };
        let mut s = spare.lock().unwrap_or_else(|e| e.into_inner());
        let idle = s.last_use.map_or(IDLE_RELEASE, |t| t.elapsed());
        if idle >= IDLE_RELEASE {
            s.buffers.clear();
            s.release_pending = false;
            return;
        }
        wait = IDLE_RELEASE - idle;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn keeps_two_large_buffers_and_frees_them_when_idle() {
        let b = Buffers::default();
        b.give(vec![0u8; 1024]); // small: not kept
        b.give(Vec::with_capacity(MAX_KEPT + 1)); // over the limit: not kept
        assert!(b.kept().is_empty());

        for cap in [1 << 20, 3 << 20, 2 << 20] {
            b.give(Vec::with_capacity(cap));
        }
        let mut kept = b.kept();
        kept.sort();
        assert_eq!(kept.len(), 2);
        assert!(kept[0] >= 2 << 20 && kept[1] >= 3 << 20, "the two largest stay: {kept:?}");

        // The smallest kept buffer that fits; a request no buffer fits gets a new one.
        let small = b.take(1 << 20);
        assert!(small.capacity() >= 2 << 20 && small.capacity() < 3 << 20);
        assert!(small.is_empty());
        let big = b.take(5 << 20);
        assert!(big.capacity() >= 5 << 20);
        assert_eq!(b.kept().len(), 1);
        let s = b.take_string(10);
        assert!(s.is_empty() && s.capacity() >= 3 << 20);
        b.recycle(Some(Arc::new(s)));
        assert_eq!(b.kept().len(), 1);

        // Still held by someone else (a history snapshot): not taken back.
        let shared = Arc::new(String::with_capacity(1 << 20));
        let _held = shared.clone();
        b.recycle(Some(shared));
        assert_eq!(b.kept().len(), 1);

        // Use within the idle time keeps the buffers; then they are freed.
        tokio::time::sleep(IDLE_RELEASE / 2).await;
        b.give(small);
        tokio::time::sleep(IDLE_RELEASE / 2 + Duration::from_secs(1)).await;
        assert_eq!(b.kept().len(), 2, "used 16 s ago: kept");
        tokio::time::sleep(IDLE_RELEASE).await;
        assert!(b.kept().is_empty(), "idle for 30 s: freed");
    }
}
