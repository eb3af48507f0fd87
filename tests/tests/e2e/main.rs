//! The end-to-end suite, one test binary (each test binary links the host
//! and wasmtime, so one link instead of ten): the real `mediaparse` binary,
//! the real wasm components, real HTTP to fake upstreams. One module per
//! topic; a test's name is its path, e.g.
//! `cargo test -p mediaparse-tests --test e2e accounts::billing::`.
//!
//! Run through `cargo xtask test`, which builds the binary, the components
//! and the test guests and says where they are (see `tests/src/paths.rs`).

mod accounts;
mod admission;
mod api;
mod authoring;
mod batch;
mod canaries;
mod chaos;
mod cli;
mod clients;
mod cluster;
mod console;
mod database;
mod dist;
mod doors;
mod dropin;
mod egress;
mod fixtures_e2e;
mod fuzz_smoke;
mod idempotency;
mod jobs;
mod ledger_doors;
mod mcp;
mod network_edges;
mod openapi;
mod operations;
mod parse_cache;
mod parse_limits;
mod platform_health;
mod rate_headers;
mod robustness;
mod slow_clients;
mod test_mode;
mod tiktok_slice;
mod tunnel;
mod webhook_receiver;
mod webhooks;
mod youtube;
