//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-weibo --example map_cost [case ...] [--runs N]`
//! (default: `pc_repost_own_video`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_weibo::Weibo;

fn main() {
    mediaparse_sdk::replay::map_cost_main::<Weibo>(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &["pc_repost_own_video"],
    );
}
