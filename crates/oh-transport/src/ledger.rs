//! The exactly-once ledger: which delegated ids of the current runtime session have started,
//! which replies are kept for re-deliveries, and which replies wait for the server's ack.
//!
//! Pure bookkeeping (no locks, no I/O, no clock): the transport holds it under its mutex.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// What to do with a delegated id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admit {
    /// Never seen in this runtime session: run it.
    New,
    /// Still running: ignore the re-delivery.
    Running,
    /// Finished: send its cached reply again.
    Finished(Arc<str>),
    /// Finished so long ago that its reply left the cache: never run it again.
    Evicted,
}

/// A reply waiting for the server's ack.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outgoing {
    session: String,
    cause: i64,
    json: Arc<str>,
}

/// Per-runtime-session record of delegated ids and their replies.
#[derive(Debug)]
pub struct Ledger {
    session: Option<String>,
    started: HashSet<i64>,
    running: HashSet<i64>,
    finished: HashMap<i64, Arc<str>>,
    finished_order: VecDeque<i64>,
    finished_bytes: usize,
    outbox: VecDeque<Outgoing>,
    latest_id: Option<i64>,
    max_finished: usize,
    max_finished_bytes: usize,
}

impl Ledger {
    /// A ledger keeping at most `max_finished` replies (at least one) and, beyond the newest,
    /// at most `max_finished_bytes` of them.
    pub fn new(max_finished: usize, max_finished_bytes: usize) -> Self {
        Ledger {
            session: None,
            started: HashSet::new(),
            running: HashSet::new(),
            finished: HashMap::new(),
            finished_order: VecDeque::new(),
            finished_bytes: 0,
            outbox: VecDeque::new(),
            latest_id: None,
            max_finished: max_finished.max(1),
            max_finished_bytes,
        }
    }

    /// The runtime session of the last registration.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The highest id seen (the reconnect URL's `latest_event_id`).
    pub fn latest_id(&self) -> Option<i64> {
        self.latest_id
    }

    /// A registration with `session`. A new runtime instance forgets the old one's ids and
    /// unsent replies; returns whether the session changed.
    pub fn register(&mut self, session: &str) -> bool {
        if self.session.as_deref() == Some(session) {
            return false;
        }
        self.session = Some(session.to_string());
        self.started.clear();
        self.running.clear();
        self.finished.clear();
        self.finished_order.clear();
        self.finished_bytes = 0;
        self.outbox.retain(|o| o.session == session);
        true
    }

    /// Record a delivery of `id` and say what to do with it.
    pub fn admit(&mut self, id: i64) -> Admit {
        self.latest_id = Some(self.latest_id.map_or(id, |l| l.max(id)));
        if let Some(reply) = self.finished.get(&id) {
            return Admit::Finished(reply.clone());
        }
        if self.running.contains(&id) {
            return Admit::Running;
        }
        if !self.started.insert(id) {
            return Admit::Evicted;
        }
        self.running.insert(id);
        Admit::New
    }

    /// Whether `id` of the current runtime session is running now.
    pub fn is_running(&self, id: i64) -> bool {
        self.running.contains(&id)
    }

    /// `id` of `session` finished with `reply`: cache it and queue it. A reply of a previous
    /// runtime session is dropped (returns false).
    pub fn finish(&mut self, session: &str, id: i64, reply: Arc<str>) -> bool {
        if self.session.as_deref() != Some(session) {
            return false;
        }
        self.running.remove(&id);
        self.finished_bytes += reply.len();
        self.finished.insert(id, reply.clone());
        self.finished_order.push_back(id);
        // Bounded by count (the protocol's 1024) and by bytes (edit replies carry whole files).
        while self.finished_order.len() > self.max_finished
            || (self.finished_bytes > self.max_finished_bytes && self.finished_order.len() > 1)
        {
            let Some(old) = self.finished_order.pop_front() else { break };
            if let Some(v) = self.finished.remove(&old) {
                self.finished_bytes = self.finished_bytes.saturating_sub(v.len());
            }
        }
        self.enqueue(session, id, reply);
        true
    }

    /// Queue a reply unless the same one is already waiting; returns whether it was queued.
    pub fn enqueue(&mut self, session: &str, id: i64, reply: Arc<str>) -> bool {
        if self.outbox.iter().any(|o| o.cause == id && o.session == session) {
            return false;
        }
        self.outbox.push_back(Outgoing { session: session.to_string(), cause: id, json: reply });
        true
    }

    /// The next reply to send.
    pub fn outbox_front(&self) -> Option<(i64, Arc<str>)> {
        self.outbox.front().map(|o| (o.cause, o.json.clone()))
    }

    /// The server acknowledged the reply to `cause`.
    pub fn acked(&mut self, cause: i64) {
        self.outbox.retain(|o| o.cause != cause);
    }

    /// Replies waiting for an ack.
    pub fn outbox_len(&self) -> usize {
        self.outbox.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    #[test]
    fn an_id_runs_once_and_its_reply_is_reused() {
        let mut l = Ledger::new(8, 1 << 20);
        l.register("s");
        assert_eq!(l.admit(1), Admit::New);
        assert_eq!(l.admit(1), Admit::Running);
        assert!(l.finish("s", 1, reply("r1")));
        assert_eq!(l.admit(1), Admit::Finished(reply("r1")));
        assert_eq!(l.latest_id(), Some(1));
    }

    #[test]
    fn evicted_ids_are_never_run_again() {
        let mut l = Ledger::new(2, 1 << 20);
        l.register("s");
        for id in 1..=3 {
            assert_eq!(l.admit(id), Admit::New);
            l.finish("s", id, reply("r"));
        }
        assert_eq!(l.admit(1), Admit::Evicted, "dropped by count");
        assert!(matches!(l.admit(3), Admit::Finished(_)));
    }

    #[test]
    fn the_byte_budget_keeps_at_least_the_newest_reply() {
        let mut l = Ledger::new(100, 10);
        l.register("s");
        l.admit(1);
        l.finish("s", 1, reply("0123456789abc"));
        assert!(matches!(l.admit(1), Admit::Finished(_)));
        l.admit(2);
        l.finish("s", 2, reply("0123456789abc"));
        assert_eq!(l.admit(1), Admit::Evicted);
        assert!(matches!(l.admit(2), Admit::Finished(_)));
    }

    #[test]
    fn a_new_runtime_session_forgets_ids_and_unsent_replies() {
        let mut l = Ledger::new(8, 1 << 20);
        assert!(l.register("a"));
        assert!(!l.register("a"));
        l.admit(1);
        l.finish("a", 1, reply("r1"));
        l.admit(2);
        assert!(l.register("b"));
        assert_eq!(l.outbox_len(), 0);
        assert_eq!(l.admit(1), Admit::New);
        assert!(!l.finish("a", 2, reply("late")), "a reply of the old session is dropped");
        assert_eq!(l.outbox_len(), 0);
    }

    #[test]
    fn the_outbox_keeps_one_copy_until_acked() {
        let mut l = Ledger::new(8, 1 << 20);
        l.register("s");
        l.admit(1);
        l.finish("s", 1, reply("r1"));
        assert!(!l.enqueue("s", 1, reply("r1")));
        l.admit(2);
        l.finish("s", 2, reply("r2"));
        assert_eq!(l.outbox_front(), Some((1, reply("r1"))));
        l.acked(1);
        assert_eq!(l.outbox_front(), Some((2, reply("r2"))));
        l.acked(2);
        assert_eq!(l.outbox_front(), None);
        assert!(l.enqueue("s", 1, reply("r1")), "a re-delivery after the ack is sent again");
    }
}
