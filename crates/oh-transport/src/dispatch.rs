//! Dispatch: each decoded `oh_event` is admitted through the ledger, run at most once by the
//! handler (commands one at a time in arrival order, file actions concurrently), and its reply
//! serialised once and queued for the connection to send.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use oh_protocol::ActionHandler;
use oh_protocol::{decode_delegated, Delegated, Incoming, Observation, ObservationEvent};
use serde_json::Value;
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;
use tracing::Instrument;

use crate::ledger::{Admit, Ledger};
use crate::reply::encode_reply;
use crate::{ConnectionState, Observers, StatusEvent, TransportConfig, TransportError, TransportStats};

/// Byte budget of the finished-reply cache.
const FINISHED_CACHE_BYTES: usize = 64 << 20;

/// A command waiting for the shell: the runtime session it was delegated in, and the action.
pub(crate) type QueuedCommand = (String, Delegated);

pub(crate) struct State {
    pub(crate) ledger: Ledger,
    running: usize,
    pub(crate) registered: bool,
    pub(crate) status: Option<StatusEvent>,
    /// The failure that ended the supervisor, if one did.
    pub(crate) failure: Option<TransportError>,
    stats: TransportStats,
}

pub(crate) struct Shared {
    pub(crate) config: TransportConfig,
    pub(crate) handler: Arc<dyn ActionHandler>,
    observers: Observers,
    state: Mutex<State>,
    pub(crate) outbox_notify: Notify,
    commands: mpsc::UnboundedSender<QueuedCommand>,
}

impl Shared {
    pub(crate) fn new(
        config: TransportConfig,
        handler: Arc<dyn ActionHandler>,
        observers: Observers,
        commands: mpsc::UnboundedSender<QueuedCommand>,
    ) -> Self {
        let ledger = Ledger::new(config.finished_cache, FINISHED_CACHE_BYTES);
        Shared {
            config,
            handler,
            observers,
            state: Mutex::new(State {
                ledger,
                running: 0,
                registered: false,
                status: None,
                failure: None,
                stats: TransportStats::default(),
            }),
            outbox_notify: Notify::new(),
            commands,
        }
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn stats(&self) -> TransportStats {
        let st = self.lock();
        let mut s = st.stats.clone();
        s.outbox = st.ledger.outbox_len();
        s
    }

    pub(crate) fn latest_id(&self) -> Option<i64> {
        self.lock().ledger.latest_id()
    }

    /// The one place a status is deduplicated: observers (the binding, the headless CLI, and
    /// through the binding the extension) see each change once and need no check of their own.
    pub(crate) fn set_status(&self, state: ConnectionState, message: Option<String>) {
        let ev = StatusEvent { state, message };
        {
            let mut st = self.lock();
            if st.status.as_ref() == Some(&ev) {
                return;
            }
            st.status = Some(ev.clone());
        }
        tracing::debug!(state = state.as_str(), detail = ev.message.as_deref().unwrap_or(""), "executor status");
        if let Some(sink) = &self.observers.on_status {
            sink(&ev);
        }
    }

    /// `executing` while an action runs, else `connected` (only while registered).
    pub(crate) fn idle_state(&self) {
        let (registered, running) = {
            let st = self.lock();
            (st.registered, st.running)
        };
        if registered {
            if running > 0 {
                self.set_status(ConnectionState::Executing, None);
            } else {
                self.set_status(ConnectionState::Connected, None);
            }
        }
    }

    /// A new registration: the ledger forgets the old runtime session's ids if the instance changed.
    pub(crate) fn register(&self, session: &str) {
        let mut st = self.lock();
        let old = st.ledger.session().map(str::to_string);
        if st.ledger.register(session) {
            if let Some(old) = old {
                tracing::info!(old, new = session, "new runtime session: forgetting delegated ids of the old one");
            }
        }
        st.registered = true;
        st.stats.registrations += 1;
    }

    pub(crate) fn unregistered(&self) {
        self.lock().registered = false;
    }

    fn admit(&self, id: i64) -> Admit {
        let mut st = self.lock();
        let admit = st.ledger.admit(id);
        match admit {
            Admit::Finished(_) => st.stats.cached_replies += 1,
            Admit::Running => st.stats.ignored_running += 1,
            _ => {}
        }
        admit
    }

    /// Handle one `oh_event` payload (never blocks on execution).
    pub(crate) fn on_action(self: &Arc<Self>, payload: Value) {
        let Some(session) = self.lock().ledger.session().map(str::to_string) else {
            tracing::warn!("oh_event before registration: dropped");
            return;
        };
        match decode_delegated(&payload) {
            Incoming::Drop { reason } => {
                self.lock().stats.dropped += 1;
                tracing::warn!("ignoring oh_event: {reason}");
            }
            Incoming::Refuse { id, reason } => match self.admit(id) {
                Admit::New => {
                    self.lock().stats.refused += 1;
                    tracing::warn!(id, "refusing oh_event: {reason}");
                    let reply = encode_reply(
                        ObservationEvent::reply(Some(id), Observation::error(reason)),
                        id,
                        self.config.max_reply_bytes,
                    );
                    self.finish(&session, id, reply);
                }
                Admit::Running => {}
                Admit::Finished(reply) => self.enqueue(&session, id, reply),
                Admit::Evicted => self.evicted(&session, id),
            },
            Incoming::Execute(job) => match self.admit(job.id) {
                Admit::Running => tracing::debug!(id = job.id, "re-delivered while running: ignored"),
                Admit::Finished(reply) => {
                    tracing::debug!(id = job.id, "re-delivered after finishing: cached reply sent again");
                    self.enqueue(&session, job.id, reply)
                }
                Admit::Evicted => self.evicted(&session, job.id),
                Admit::New => {
                    {
                        let mut st = self.lock();
                        st.running += 1;
                        st.stats.executed += 1;
                    }
                    // No text: what an action is, for people, is the front end's business (the extension's
                    // activity list, which masks secret exports); a command in a status message would
                    // carry an exported secret in clear into the status line and the logs.
                    self.set_status(ConnectionState::Executing, None);
                    // The kind and id only, for the same reason: enough to follow an action through
                    // the logs (and for a test to see that a queued command was admitted).
                    tracing::info!(id = job.id, kind = %job.event.action, "action admitted");
                    if job.action.is_command() {
                        // Commands run one at a time, in arrival order.
                        if self.commands.send((session, job)).is_err() {
                            tracing::warn!("command queue closed");
                        }
                    } else {
                        let me = self.clone();
                        tokio::spawn(async move { me.run_one(session, job).await });
                    }
                }
            },
        }
    }

    /// Handle one `oh_executor_cancel` payload (`{"id": n}`): the runtime gave up on action `n`.
    /// Only an action of the current runtime session that is running now is cancelled (through
    /// the handler); a cancel for an unknown, finished or not yet delivered id does nothing.
    pub(crate) fn on_cancel(self: &Arc<Self>, payload: &Value) {
        let Some(id) = payload.get("id").and_then(Value::as_i64) else {
            tracing::warn!("ignoring oh_executor_cancel without an integer id: {payload}");
            return;
        };
        if !self.lock().ledger.is_running(id) {
            tracing::debug!(id, "cancel for an action that is not running: nothing to do");
            return;
        }
        self.lock().stats.cancelled += 1;
        let handler = self.handler.clone();
        tokio::spawn(async move { handler.cancel(id).await });
    }

    /// Drop a queued command of a previous runtime session (true when dropped).
    pub(crate) fn drop_if_stale(&self, session: &str, id: i64) -> bool {
        {
            let mut st = self.lock();
            if st.ledger.session() == Some(session) {
                return false;
            }
            st.running = st.running.saturating_sub(1);
            st.stats.stale_dropped += 1;
        }
        tracing::warn!(id, "queued command of a previous runtime session: not run");
        self.idle_state();
        true
    }

    pub(crate) async fn run_one(self: &Arc<Self>, session: String, job: Delegated) {
        let id = job.id;
        let span = tracing::info_span!("oh_action", id, kind = %job.event.action);
        let started = Instant::now();
        if let Some(f) = &self.observers.on_action {
            f(&job.event);
        }
        let result = AssertUnwindSafe(self.handler.execute(&job)).catch_unwind().instrument(span.clone()).await;
        let reply = match result {
            Ok(reply) => reply,
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown panic".into());
                tracing::error!(parent: &span, "executor panicked: {msg}");
                ObservationEvent::reply(
                    Some(id),
                    Observation::error(format!("The executor failed while running this action: {msg}")),
                )
            }
        };
        let json = encode_reply(reply, id, self.config.max_reply_bytes);
        tracing::debug!(parent: &span, elapsed_ms = started.elapsed().as_secs_f64() * 1e3, "action finished");
        if let Some(f) = &self.observers.on_reply {
            f(&json);
        }
        {
            let mut st = self.lock();
            st.running = st.running.saturating_sub(1);
        }
        // Status first, so that `connected` is reported before the reply can be seen.
        self.idle_state();
        self.finish(&session, id, json);
    }

    /// A re-delivery of an id whose reply is no longer cached: never run it again.
    fn evicted(&self, session: &str, id: i64) {
        tracing::warn!(id, "re-delivered long after finishing: reply no longer cached");
        let reply = ObservationEvent::reply(
            Some(id),
            Observation::error(format!(
                "This action (id {id}) was already executed; its result is no longer available."
            )),
        );
        self.enqueue(session, id, Arc::from(reply.to_json()));
    }

    fn finish(&self, session: &str, id: i64, reply: Arc<str>) {
        if !self.lock().ledger.finish(session, id, reply) {
            tracing::warn!(id, "reply for a previous runtime session: dropped");
            return;
        }
        self.outbox_notify.notify_one();
    }

    fn enqueue(&self, session: &str, id: i64, reply: Arc<str>) {
        if self.lock().ledger.enqueue(session, id, reply) {
            self.outbox_notify.notify_one();
        }
    }

    pub(crate) fn outbox_front(&self) -> Option<(i64, Arc<str>)> {
        self.lock().ledger.outbox_front()
    }

    pub(crate) fn outbox_acked(&self, cause: i64) {
        self.lock().ledger.acked(cause);
    }
}
