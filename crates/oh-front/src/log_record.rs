//! One log line from a tracing event, for both front ends (the Node binding's JS log callback and
//! the headless CLI's stderr), so their lines cannot drift apart: the message, then the enclosing
//! spans with their fields (`[oh_action{id=3 kind=run}] message`), then the event's own fields
//! (` key=value`); the `log.*` fields of bridged `log` records are dropped and their real target
//! used. Each front end keeps only its own sink, level and output format.

use std::fmt::Write as _;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// A span's fields as text, kept in the span's extensions.
struct SpanFields(String);

/// The `message` field and the other fields (` name=value` each).
#[derive(Default)]
struct Fields {
    message: String,
    rest: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message.push_str(value),
            n if n.starts_with("log.") => {}
            n => {
                let _ = write!(self.rest, " {n}={value}");
            }
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => {
                let _ = write!(self.message, "{value:?}");
            }
            n if n.starts_with("log.") => {}
            n => {
                let _ = write!(self.rest, " {n}={value:?}");
            }
        }
    }
}

/// Remember a new span's fields (call from the layer's `on_new_span`).
pub fn record_span<S: Subscriber + for<'a> LookupSpan<'a>>(attrs: &Attributes<'_>, id: &Id, ctx: &Context<'_, S>) {
    let mut fields = Fields::default();
    attrs.record(&mut fields);
    if let Some(span) = ctx.span(id) {
        span.extensions_mut().insert(SpanFields(fields.rest.trim().to_string()));
    }
}

/// The event's target and its line (without level and time).
pub fn format_event<S: Subscriber + for<'a> LookupSpan<'a>>(
    event: &Event<'_>,
    ctx: &Context<'_, S>,
) -> (String, String) {
    let mut fields = Fields::default();
    event.record(&mut fields);
    // `log` records carry their real target in the `log.target` field; normalized_metadata knows it.
    let target = {
        use tracing_log::NormalizeEvent;
        event
            .normalized_metadata()
            .map(|m| m.target().to_string())
            .unwrap_or_else(|| event.metadata().target().to_string())
    };
    let mut line = fields.message;
    if let Some(scope) = ctx.event_scope(event) {
        let spans: Vec<String> = scope
            .from_root()
            .map(|s| match s.extensions().get::<SpanFields>() {
                Some(f) if !f.0.is_empty() => format!("{}{{{}}}", s.name(), f.0),
                _ => s.name().to_string(),
            })
            .collect();
        if !spans.is_empty() {
            line = format!("[{}] {line}", spans.join(":"));
        }
    }
    line.push_str(&fields.rest);
    (target, line)
}

/// The socket libraries underneath are chatty below warn: the binding leaves their info/debug
/// lines out of the extension's log (the headless CLI logs everything at the level asked for).
pub fn is_chatty(meta: &Metadata<'_>) -> bool {
    *meta.level() > tracing::Level::WARN
        && ["rust_socketio", "rust_engineio", "tungstenite", "tokio_tungstenite"]
            .iter()
            .any(|t| meta.target().starts_with(t))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

    use super::*;

    /// The layer both front ends build on, writing its lines to a list.
    struct Capture(Arc<Mutex<Vec<(String, String)>>>);

    impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
        fn enabled(&self, m: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
            !is_chatty(m)
        }
        fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
            record_span(attrs, id, &ctx);
        }
        fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
            self.0.lock().unwrap().push(format_event(event, &ctx));
        }
    }

    #[test]
    fn a_line_has_the_spans_with_their_fields_then_the_fields_without_log_ones() {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let subscriber = tracing_subscriber::registry().with(Capture(lines.clone()));
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("oh_action", id = 3, kind = "run");
            let _g = span.enter();
            tracing::info!(target: "oh_transport::dispatch", peer = "p1", "log.file" = "x.rs", "hello");
            tracing::info!(target: "rust_engineio::client", "chatty");
            tracing::warn!(target: "rust_engineio::client", "kept");
        });
        let lines = lines.lock().unwrap().clone();
        assert_eq!(
            lines,
            [
                ("oh_transport::dispatch".to_string(), "[oh_action{id=3 kind=run}] hello peer=p1".to_string()),
                ("rust_engineio::client".to_string(), "[oh_action{id=3 kind=run}] kept".to_string()),
            ]
        );
    }
}
