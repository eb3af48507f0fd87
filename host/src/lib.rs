//! mediaparse: a REST service that turns the URL of one public post into its
//! downloadable media, with every platform extractor a sandboxed wasm
//! component. This crate is the host; `docs/architecture.md` walks its layers:
//!
//! ```text
//! http ─→ call ─→ {parse, tunnel} ─→ {registry, fetch, billing, auth, store} ─→ core
//! ```
//!
//! `cargo xtask layers` prints the module graph and fails on a cycle.

/// Signed alerts on a platform's change of health, its own crate
/// (`host/alerts`).
pub use mediaparse_alerts as alerts;
/// API keys, rate limits and sign-in throttles, its own crate (`host/auth`).
pub use mediaparse_auth as auth;
/// `mediaparse record` and `replay`, and failing parses kept as fixture
/// cases, its own crate (`host/authoring`).
pub use mediaparse_authoring as authoring;
/// Prices, the balance pre-check and the charge, its own crate (`host/billing`).
pub use mediaparse_billing as billing;
/// One parse call from any door and the typed answer every door renders,
/// its own crate (`host/call`).
pub use mediaparse_call as call;
/// Canary posts parsed on schedule for no one and the lease that picks the
/// host running them, its own crate (`host/canary`).
pub use mediaparse_canary as canary;
pub mod cli;
/// The operator configuration file, its own crate (`host/config`).
pub use mediaparse_config as config;
/// The leaf layer, its own crate (`host/core`, `mediaparse-core`): it can
/// name nothing of the host.
pub use mediaparse_core as core;
/// The only network code (egress clients, TLS profiles, exits), its own
/// crate (`host/fetch`).
pub use mediaparse_fetch as fetch;
/// The doors over HTTP: REST, the console, MCP and OpenAPI, its own crate
/// (`host/http`).
pub use mediaparse_http as http;
/// Batches run in the background, their runner and job.done webhook, its
/// own crate (`host/jobs`).
pub use mediaparse_jobs as jobs;
/// The console's e-mail through the operator's command, a leaf crate (`host/mail`).
pub use mediaparse_mail as mail;
/// The process-wide metrics, a leaf crate of their own (`host/metrics`).
pub use mediaparse_metrics as metrics;
/// Key, account, credit and usage operations shared by the CLI and the
/// admin API, its own crate (`host/operator`).
pub use mediaparse_operator as operator;
/// One parse end to end, and every platform's health, its own crate
/// (`host/parse`).
pub use mediaparse_parse as parse;
/// The extractor components and their wasmtime runtime, its own crate
/// (`host/registry`).
pub use mediaparse_registry as registry;
/// Hot reload of the extractors and the configuration file, its own crate
/// (`host/reload`).
pub use mediaparse_reload as reload;
/// Standard Webhooks signatures, a leaf crate (`host/signing`).
pub use mediaparse_signing as signing;
/// Storage, its own crate (`host/store`, `mediaparse-store`): it can name
/// nothing of the host above `core` and `metrics`.
pub use mediaparse_store as store;
/// Media delivery through the service, its own crate (`host/tunnel`).
pub use mediaparse_tunnel as tunnel;
/// Webhooks to customers: the queue, destination policy and delivery
/// worker, its own crate (`host/webhooks`).
pub use mediaparse_webhooks as webhooks;
