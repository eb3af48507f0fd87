//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-kuaishou --example map_cost [case ...] [--runs N]`
//! (default: `mobile_init_state_video`, `atlas_image_post`, `desktop_apollo_fallback`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_kuaishou::Kuaishou;

fn main() {
    mediaparse_sdk::replay::map_cost_main::<Kuaishou>(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &[
            "mobile_init_state_video",
            "atlas_image_post",
            "desktop_apollo_fallback",
        ],
    );
}
