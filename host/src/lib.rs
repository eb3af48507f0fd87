//! mediaparse: a REST service that turns the URL of one public post into its
//! downloadable media, with every platform extractor a sandboxed wasm
//! component. See DESIGN.md for the architecture; this crate is the host.

pub mod api;
pub mod auth;
pub mod authoring;
pub mod billing;
pub mod cli;
pub mod config;
pub mod fetch;
pub mod mcp;
pub mod metrics;
pub mod openapi;
pub mod operator;
pub mod pipeline;
pub mod ratelimit;
pub mod registry;
pub mod reload;
pub mod sanitize;
pub mod server;
pub mod state;
pub mod store;
