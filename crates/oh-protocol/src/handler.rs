//! The seam between a transport and whatever runs its actions: [`ActionHandler`] runs one
//! delegated action. It lives here, beside [`Delegated`], so that `oh-transport` needs only the
//! wire types and not the executor (with its shell and editor); `oh-executor`'s
//! `ExecutorHandler` implements it.

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::{Delegated, ObservationEvent};

/// What executes the delegated actions of a transport.
#[async_trait]
pub trait ActionHandler: Send + Sync + 'static {
    /// Execute one decoded action; the reply's `cause` must be its id.
    async fn execute(&self, job: &Delegated) -> ObservationEvent;
    /// Apply a runtime's `session` settings (e.g. `no_change_timeout_seconds`).
    async fn apply_session(&self, _settings: &Map<String, Value>) {}
    /// The runtime gave up on action `id` (its reply timeout passed): stop it if it can be
    /// stopped. Unknown and finished ids are no-ops.
    async fn cancel(&self, _id: i64) {}
}
