//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-threads --example map_cost [case ...] [--runs N]`
//! (default: `ssr_text_only`, `ssr_video`, `graphql_fallback`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_threads::Threads;

fn main() {
    mediaparse_sdk::replay::map_cost_main::<Threads>(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &["ssr_text_only", "ssr_video", "graphql_fallback"],
    );
}
