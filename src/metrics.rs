//! Metric names and the process-wide Prometheus recorder.
//!
//! The `metrics` facade has one global recorder per process, so every in-process [`Server`]
//! (tests start several) shares it: the first one installs it, later ones reuse its handle.
//!
//! [`Server`]: crate::server::Server

use std::sync::OnceLock;
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::sync::watch;

/// Requests decoded, by `api`.
pub const REQUESTS_TOTAL: &str = "cohort_requests_total";
/// Error codes returned inside responses, by `api` and `error`.
pub const REQUEST_ERRORS_TOTAL: &str = "cohort_request_errors_total";
/// Time from decoded request to encoded response, by `api`.
pub const REQUEST_DURATION_SECONDS: &str = "cohort_request_duration_seconds";
/// Connections closed because of what the client sent, by `reason`.
pub const BAD_REQUESTS_TOTAL: &str = "cohort_bad_requests_total";
/// Client connections open now.
pub const CONNECTIONS_ACTIVE: &str = "cohort_connections_active";
/// Connections refused because `--max-connections` were open.
pub const CONNECTIONS_REFUSED_TOTAL: &str = "cohort_connections_refused_total";
/// Connections closed by a limit, by `reason` (`idle`, `send_timeout`).
pub const CONNECTIONS_CLOSED_TOTAL: &str = "cohort_connections_closed_total";
/// Reads that waited for request memory, by `scope` (`connection`, `broker`).
pub const REQUEST_MEMORY_WAITS_TOTAL: &str = "cohort_request_memory_waits_total";
/// ListOffsets-by-timestamp lookups that waited for decompression memory.
pub const LIST_OFFSETS_BUDGET_WAITS_TOTAL: &str = "cohort_list_offsets_budget_waits_total";
/// ListOffsets-by-timestamp lookups refused: the batch needs more than the whole budget.
pub const LIST_OFFSETS_OVER_BUDGET_TOTAL: &str = "cohort_list_offsets_over_budget_total";
/// Segment files open now, over every partition (`--open-segment-files-max` bounds it).
pub const SEGMENT_FILES_OPEN: &str = "cohort_segment_files_open";
/// Idle segment files closed to stay within `--open-segment-files-max`.
pub const SEGMENT_FILES_CLOSED_TOTAL: &str = "cohort_segment_files_closed_total";
/// Segment files reopened by path after the budget closed them.
pub const SEGMENT_FILES_REOPENED_TOTAL: &str = "cohort_segment_files_reopened_total";
/// SASL exchanges that ended, by `result` (`ok`, `failed`, `unsupported_mechanism`,
/// `illegal_state`).
pub const AUTHENTICATIONS_TOTAL: &str = "cohort_authentications_total";
/// TLS handshakes that failed or timed out (one log line each), by `listener`.
pub const TLS_HANDSHAKE_FAILURES_TOTAL: &str = "cohort_tls_handshake_failures_total";
/// Accept calls that failed (out of file descriptors...), by `listener`; each backs off.
pub const ACCEPT_ERRORS_TOTAL: &str = "cohort_accept_errors_total";

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The handle that renders `/metrics`, installing the global recorder on first use.
pub fn prometheus() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new();
        // Fixed buckets (seconds) make the latency a real histogram instead of a summary.
        let builder = builder
            .set_buckets(&[
                0.000_1, 0.000_5, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0,
            ])
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("a metrics recorder was already installed; /metrics will be empty");
        }
        handle
    })
}

/// How often histogram samples are folded into their buckets when nobody scrapes `/metrics`.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Folds recorded histogram samples into their buckets every [`UPKEEP_EVERY`] until `shutdown`
/// flips. The recorder keeps every sample until upkeep runs, so without this a broker nobody
/// scrapes would hold 16 bytes per request forever.
pub async fn run_upkeep(mut shutdown: watch::Receiver<bool>) {
    let mut every = tokio::time::interval(UPKEEP_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = every.tick() => {
                if let Some(handle) = HANDLE.get() {
                    handle.run_upkeep();
                }
            }
        }
    }
}

/// One API's request counter and duration histogram. Looking a labelled metric up by name
/// hashes its key and takes the registry's lock, on every request; these are looked up once.
struct ApiMetrics {
    requests: metrics::Counter,
    duration: metrics::Histogram,
}

/// Indexed by API key; Kafka's keys are small and dense.
static PER_API: [OnceLock<ApiMetrics>; 128] = [const { OnceLock::new() }; 128];

/// The handles of `api`, registered on first use, once the recorder is installed (a handle
/// taken before that would count nothing, forever). None before that, or for a key out of range.
fn per_api(api: ApiKey) -> Option<&'static ApiMetrics> {
    HANDLE.get()?;
    let slot = PER_API.get(usize::try_from(api as i16).ok()?)?;
    Some(slot.get_or_init(|| {
        let name = crate::handlers::api_name(api);
        ApiMetrics {
            requests: metrics::counter!(REQUESTS_TOTAL, "api" => name),
            duration: metrics::histogram!(REQUEST_DURATION_SECONDS, "api" => name),
        }
    }))
}

/// Counts one decoded request of `api` in `cohort_requests_total`.
pub fn count_request(api: ApiKey) {
    if let Some(m) = per_api(api) {
        m.requests.increment(1);
    }
}

/// Records one request's time from decoded to encoded in `cohort_request_duration_seconds`.
pub fn record_request_duration(api: ApiKey, elapsed: Duration) {
    if let Some(m) = per_api(api) {
        m.duration.record(elapsed.as_secs_f64());
    }
}
