//! tracing (and the `log` records of rust_socketio) → a JS `(level, target, message)` callback.
//! One global subscriber, installed once; the sink and level are swappable.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Once, RwLock};

use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use oh_front::log_record;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

pub type LogFn = ThreadsafeFunction<
    FnArgs<(String, String, String)>,
    napi::bindgen_prelude::Unknown<'static>,
    FnArgs<(String, String, String)>,
    Status,
    false,
    true,
>;

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

impl<S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S> for JsLayer {
    fn register_callsite(&self, _m: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }

    fn enabled(&self, m: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        rank(m.level()) <= LEVEL.load(Ordering::Relaxed)
            && (m.is_span() || SINK.read().map(|s| s.is_some()).unwrap_or(false))
            && !log_record::is_chatty(m)
    }

    fn on_new_span(&self, attrs: &tracing::span::Attributes<'_>, id: &tracing::span::Id, ctx: Context<'_, S>) {
        log_record::record_span(attrs, id, &ctx);
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let sink = SINK.read().ok().and_then(|s| s.clone());
        let Some(sink) = sink else { return };
        let (target, msg) = log_record::format_event(event, &ctx);
        let level = event.metadata().level().as_str().to_ascii_lowercase();
        let _ = sink.call(FnArgs::from((level, target, msg)), ThreadsafeFunctionCallMode::NonBlocking);
    }
}
