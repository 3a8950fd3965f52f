//! The supervisor: one connection after another with exponential backoff, until shutdown, a
//! permanent refusal, a protocol mismatch or a replacement by a newer executor. It also settles
//! the first registration that [`crate::Transport::connect`] waits for.

use std::sync::Arc;

use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use crate::connection::{connection, Outcome};
use crate::dispatch::Shared;
use crate::link::Link;
use crate::{ConnectionState, TransportError};

pub(crate) type FirstRegistration = oneshot::Sender<Result<(), TransportError>>;

pub(crate) async fn supervise(shared: Arc<Shared>, mut shutdown: watch::Receiver<bool>, first: FirstRegistration) {
    let cfg = shared.config.clone();
    let mut first = Some(first);
    let first_deadline = Instant::now() + cfg.initial_connect_timeout;
    let mut backoff = cfg.backoff_min;
    let mut ever_registered = false;
    let mut link = Link::new(cfg.certificate_check.clone());
    // Ends the first registration with an error and reports it.
    let fail = |shared: &Shared, first: &mut Option<FirstRegistration>, e: TransportError| {
        shared.lock().failure = Some(e.clone());
        shared.set_status(ConnectionState::Error, Some(e.to_string()));
        if let Some(f) = first.take() {
            let _ = f.send(Err(e));
        }
    };
    loop {
        if *shutdown.borrow() {
            break;
        }
        shared.set_status(ConnectionState::Connecting, Some(cfg.server_url.clone()));
        let mut settle_first = || {
            if let Some(f) = first.take() {
                let _ = f.send(Ok(()));
            }
        };
        let outcome = connection(&shared, &mut link, &mut shutdown, &mut settle_first).await;
        shared.unregistered();
        match outcome {
            Outcome::Shutdown => break,
            Outcome::Fatal(e) => {
                tracing::error!("{e}");
                fail(&shared, &mut first, e);
                break;
            }
            Outcome::Refused(code, msg) => {
                if !ever_registered || code.is_permanent() {
                    let e = TransportError::Refused(code, msg);
                    tracing::error!("{e}");
                    fail(&shared, &mut first, e);
                    break;
                }
                tracing::warn!("registration refused, will retry: {msg}");
                shared.set_status(ConnectionState::Disconnected, Some(format!("refused: {msg}")));
            }
            Outcome::Replaced(msg) => {
                tracing::warn!("{msg}");
                shared.set_status(ConnectionState::Disconnected, Some(msg));
                break;
            }
            Outcome::Lost { registered, message } => {
                if registered {
                    ever_registered = true;
                    backoff = cfg.backoff_min;
                }
                tracing::warn!("connection lost: {message}");
                shared.set_status(ConnectionState::Disconnected, Some(message.clone()));
                if first.is_some() && Instant::now() + backoff > first_deadline {
                    fail(&shared, &mut first, TransportError::Unreachable(message));
                    break;
                }
            }
        }
        if first.is_none() {
            ever_registered = true;
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = shutdown.changed() => break,
        }
        backoff = next_backoff(backoff, cfg.backoff_max);
    }
    if let Some(f) = first.take() {
        let _ = f.send(Err(TransportError::Stopped));
    }
}

/// Double the wait, up to `max`.
pub(crate) fn next_backoff(current: std::time::Duration, max: std::time::Duration) -> std::time::Duration {
    (current * 2).min(max)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let max = Duration::from_secs(10);
        let mut b = Duration::from_millis(500);
        let mut seen = Vec::new();
        for _ in 0..7 {
            seen.push(b.as_millis());
            b = super::next_backoff(b, max);
        }
        assert_eq!(seen, [500, 1000, 2000, 4000, 8000, 10000, 10000]);
    }
}
