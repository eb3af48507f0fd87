//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-tiktok --example map_cost [case ...] [--runs N]`
//! (default: `video_post` and `photo_post`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_tiktok::TikTok;

fn main() {
    mediaparse_sdk::replay::map_cost_main::<TikTok>(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &["video_post", "photo_post"],
    );
}
