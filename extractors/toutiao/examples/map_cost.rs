//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-toutiao --example map_cost [case ...] [--runs N]`
//! (default: `legacy_info_string_play_info`, `desktop_render_data`, `mobile_page_vod_fallback`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_toutiao::Toutiao;

fn main() {
    mediaparse_sdk::replay::map_cost_main::<Toutiao>(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &[
            "legacy_info_string_play_info",
            "desktop_render_data",
            "mobile_page_vod_fallback",
        ],
    );
}
