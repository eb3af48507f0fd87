//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-youtube --example map_cost [case ...] [--runs N]`
//! (default: `watch_visionos_primary`, `multi_audio_dubbed_tracks`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_youtube::YouTube;

fn main() {
    mediaparse_sdk::replay::map_cost_main::<YouTube>(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &["watch_visionos_primary", "multi_audio_dubbed_tracks"],
    );
}
