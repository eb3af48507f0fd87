//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-twitter --example map_cost [case ...] [--runs N]`
//! (default: `video_graphql`, `photos_graphql` and `video_quoting_post`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_twitter::Twitter;

fn main() {
    mediaparse_sdk::replay::map_cost_main::<Twitter>(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &["video_graphql", "photos_graphql", "video_quoting_post"],
    );
}
