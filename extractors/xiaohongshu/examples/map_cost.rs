//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-xiaohongshu --example map_cost [case ...] [--runs N]`
//! (default: `image_note_explore`, `live_photo_note_rednote_host` and `video_note_discovery_cookie`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_xiaohongshu::Xiaohongshu;

fn main() {
    mediaparse_sdk::replay::map_cost_main::<Xiaohongshu>(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &[
            "image_note_explore",
            "live_photo_note_rednote_host",
            "video_note_discovery_cookie",
        ],
    );
}
