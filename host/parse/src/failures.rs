//! Failing parses handed over to be kept as fixture cases: which failures
//! qualify (a platform-side code the extractor itself reported, with the
//! exchanges captured), and the sink that keeps them — the folder writer in
//! `authoring::failures`, plugged in by the server so the parse path does not
//! depend on the authoring tools.

use std::path::Path;

use super::{Capture, ParseError, ParseRequest, Services, health};
use mediaparse_config::OperatorConfig;

/// One failing parse, as the parse path hands it over.
pub struct FailedParse {
    pub platform: String,
    pub code: &'static str,
    /// The error's message (configured secrets already redacted).
    pub message: String,
    pub input: String,
    /// `context.now-unix-ms` the extractor saw.
    pub now_unix_ms: u64,
    /// `context.config` the extractor saw.
    pub config: Vec<mediaparse_sdk::Header>,
    /// The operator's secret settings of the platform (scrubbed wherever they occur).
    pub secrets: Vec<mediaparse_sdk::Header>,
    pub helper_hosts: Vec<String>,
    /// The requests the extractor planned and what each received.
    pub exchanges: std::sync::Arc<Vec<mediaparse_sdk::Exchange>>,
    pub at_unix_s: i64,
}

/// How many failures a sink keeps per platform, and how large one may be.
#[derive(Clone, Copy, Debug)]
pub struct FailureBounds {
    pub per_platform: usize,
    pub max_bytes: usize,
}

/// Where failing parses go; `keep` returns at once (the writing happens off
/// the request path).
pub trait FailureSink: Send + Sync {
    /// The folder the kept failures are listed from.
    fn dir(&self) -> &Path;
    fn keep(&self, failed: FailedParse, bounds: FailureBounds);
}

/// Keep a parse that failed on the platform's side with a code its
/// extractor reported.
pub(super) fn keep(
    services: &Services,
    config: &OperatorConfig,
    request: &ParseRequest<'_>,
    platform: &str,
    error: &ParseError,
    capture: &Capture,
) {
    // The case expects the extractor's own code (`upstream_changed` is
    // reported as `upstream_error`), which replay compares.
    let (ParseError::Failure(failure), Some(_)) = (error, health::verdict::platform_side(error))
    else {
        return;
    };
    let (Some(sink), Some(captured)) = (&services.failures, capture.take()) else {
        return;
    };
    let per_platform = config.health.failures_per_platform();
    if per_platform == 0 {
        return;
    }
    let failed = FailedParse {
        platform: platform.to_string(),
        code: failure.code(),
        message: error.to_string(),
        input: request.input.to_string(),
        now_unix_ms: captured.now_unix_ms,
        config: captured.config,
        secrets: config.secret_settings(platform),
        helper_hosts: config.limits_for(platform).fetch.helper_hosts,
        exchanges: captured.exchanges,
        at_unix_s: mediaparse_core::clock::unix_now_s(),
    };
    let bounds = FailureBounds {
        per_platform,
        max_bytes: config.health.failure_max_bytes(),
    };
    sink.keep(failed, bounds);
}
