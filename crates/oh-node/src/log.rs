//! tracing (and the `log` records of rust_socketio) → a JS `(level, target, message)` callback.
//! One global subscriber, installed once; the sink and level are swappable.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Once, RwLock};

use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

pub type LogFn = ThreadsafeFunction<FnArgs<(String, String, String)>, napi::bindgen_prelude::Unknown<'static>, FnArgs<(String, String, String)>, Status, false, true>;

static SINK: RwLock<Option<std::sync::Arc<LogFn>>> = RwLock::new(None);
static LEVEL: AtomicU8 = AtomicU8::new(3);
static INSTALL: Once = Once::new();

fn rank(l: &Level) -> u8 {
    match *l {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// Route records to `sink` (or nowhere) from now on.
pub fn set_sink(sink: Option<LogFn>, level: Level) {
    INSTALL.call_once(|| {
        let _ = tracing_subscriber::registry().with(JsLayer).try_init();
    });
    LEVEL.store(rank(&level), Ordering::Relaxed);
    *SINK.write().unwrap_or_else(|p| p.into_inner()) = sink.map(std::sync::Arc::new);
}

/// Stop sending records to JS (`setLogHandler(null)`).
pub fn clear_sink() {
    SINK.write().unwrap_or_else(|p| p.into_inner()).take();
}

struct JsLayer;

struct SpanFields(String);

struct MessageVisitor(String, String);

impl Visit for MessageVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.1, " {}={}", field.name(), value);
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => {
                let _ = write!(self.0, "{value:?}");
            }
            n if n.starts_with("log.") => {}
            n => {
                let _ = write!(self.1, " {n}={value:?}");
            }
        }
    }
}

impl<S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S> for JsLayer {
    fn register_callsite(&self, _m: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }

    fn enabled(&self, m: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        rank(m.level()) <= LEVEL.load(Ordering::Relaxed)
            && (m.is_span() || SINK.read().map(|s| s.is_some()).unwrap_or(false))
            // rust_socketio/engineio are chatty below warn.
            && (rank(m.level()) <= 2 || !(m.target().starts_with("rust_socketio") || m.target().starts_with("rust_engineio") || m.target().starts_with("tungstenite") || m.target().starts_with("tokio_tungstenite")))
    }

    fn on_new_span(&self, attrs: &tracing::span::Attributes<'_>, id: &tracing::span::Id, ctx: Context<'_, S>) {
        let mut v = MessageVisitor(String::new(), String::new());
        attrs.record(&mut v);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanFields(v.1.trim().to_string()));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let sink = SINK.read().ok().and_then(|s| s.clone());
        let Some(sink) = sink else { return };
        let mut v = MessageVisitor(String::new(), String::new());
        event.record(&mut v);
        let meta = event.metadata();
        // log records carry their real target in the `log.target` field; normalized_metadata knows it.
        let target = {
            use tracing_log::NormalizeEvent;
            event.normalized_metadata().map(|m| m.target().to_string()).unwrap_or_else(|| meta.target().to_string())
        };
        let mut msg = v.0;
        if let Some(scope) = ctx.event_scope(event) {
            let spans: Vec<String> = scope
                .from_root()
                .map(|s| match s.extensions().get::<SpanFields>() {
                    Some(f) if !f.0.is_empty() => format!("{}{{{}}}", s.name(), f.0),
                    _ => s.name().to_string(),
                })
                .collect();
            if !spans.is_empty() {
                msg = format!("[{}] {msg}", spans.join(":"));
            }
        }
        msg.push_str(&v.1);
        let level = meta.level().as_str().to_ascii_lowercase();
        let _ = sink.call(FnArgs::from((level, target, msg)), ThreadsafeFunctionCallMode::NonBlocking);
    }
}
