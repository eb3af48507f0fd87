//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-instagram --example map_cost [case ...] [--runs N]`
//! (default: `graphql_mixed_carousel`, `page_polaris_reel`, `embed_html_image`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_instagram::Instagram;

fn main() {
    mediaparse_sdk::replay::map_cost_main::<Instagram>(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &[
            "graphql_mixed_carousel",
            "page_polaris_reel",
            "embed_html_image",
        ],
    );
}
