//! Native cost of `map` on fixture cases: the median of many calls.
//!
//! `cargo run --release -p mediaparse-extractor-xiaohongshu --example map_cost [case ...] [--runs N]`
//! (default: `image_note_explore`, `live_photo_note_rednote_host` and `video_note_discovery_cookie`, 2000 runs).

use std::path::Path;

use mediaparse_extractor_xiaohongshu::Xiaohongshu;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let runs = match args.iter().position(|a| a == "--runs") {
        Some(i) => {
            let n = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(2000);
            args.drain(i..(i + 2).min(args.len()));
            n
        }
        None => 2000,
    };
    if args.is_empty() {
        args = vec![
            "image_note_explore".into(),
            "live_photo_note_rednote_host".into(),
            "video_note_discovery_cookie".into(),
        ];
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for case in args {
        match mediaparse_sdk::replay::median_map_time::<Xiaohongshu>(&fixtures.join(&case), runs) {
            Ok(Some(t)) => println!(
                "{case}: map {:.1} µs (median of {runs})",
                t.as_secs_f64() * 1e6
            ),
            Ok(None) => println!("{case}: never reaches map"),
            Err(e) => println!("{case}: {e}"),
        }
    }
}
