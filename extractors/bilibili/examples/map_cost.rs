//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-bilibili --example map_cost [case ...] [--runs N]`
//! (default: `video_dash_av_part2`, `video_durl_only` and `bangumi_ep_v2`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_bilibili::Bilibili;

fn main() {
    mediaparse_sdk::replay::map_cost_main::<Bilibili>(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &["video_dash_av_part2", "video_durl_only", "bangumi_ep_v2"],
    );
}
