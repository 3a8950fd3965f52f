//! Logs on stderr in the Node CLI's format: `2026-01-02T03:04:05.678Z INFO  target: message`.
//! tracing events (and the `log` records of rust_socketio, bridged by tracing-subscriber) at the
//! chosen level and above.

use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::log_record;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

fn level_from(s: &str) -> Level {
    match s.trim().to_ascii_lowercase().as_str() {
        "error" => Level::ERROR,
        "warn" | "warning" => Level::WARN,
        "debug" => Level::DEBUG,
        "trace" => Level::TRACE,
        _ => Level::INFO,
    }
}

pub fn install(level: &str) {
    let filter = tracing_subscriber::filter::LevelFilter::from_level(level_from(level));
    let _ = tracing_subscriber::registry().with(StderrLayer.with_filter(filter)).try_init();
}

/// One line on stderr, written at once so lines of different threads do not interleave.
pub fn line(level: &str, target: &str, message: &str) {
    let text = format!("{} {:<5} {target}: {message}\n", iso_now(), level.to_ascii_uppercase());
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// UTC now as `YYYY-MM-DDTHH:MM:SS.mmmZ` (JavaScript's `toISOString`).
fn iso_now() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

struct StderrLayer;

impl<S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S> for StderrLayer {
    fn on_new_span(&self, attrs: &tracing::span::Attributes<'_>, id: &tracing::span::Id, ctx: Context<'_, S>) {
        log_record::record_span(attrs, id, &ctx);
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let (target, msg) = log_record::format_event(event, &ctx);
        line(event.metadata().level().as_str(), &target, &msg);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso_shape() {
        let s = super::iso_now();
        assert_eq!(s.len(), 24, "{s}");
        assert!(s.ends_with('Z') && &s[10..11] == "T", "{s}");
        assert!(s.as_str() > "2024-01-01" && s.as_str() < "2200-01-01", "{s}");
    }
}
