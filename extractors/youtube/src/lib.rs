//! YouTube: InnerTube `player` with the VISIONOS client (direct, unciphered
//! adaptive URLs), ANDROID `reel_item_watch` as the fallback (muxed itag 18),
//! then the WEB client with the player's `n` and signature challenges solved
//! in the embedded engine (`challenges`, `solver/`), and a small WEB
//! `$fields` call in the first round for `microformat`.
//! See `docs/platforms/youtube.md` and the upstream guide.
//!
//! `urls` recognises inputs, `flow` makes the requests (`innertube` builds
//! them), `map` reads the player answers into the media object.

mod challenges;
pub mod clients;
mod flow;
mod innertube;
mod map;
mod pot;
mod tool;
pub mod urls;
mod web;

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Stepped, Target};

pub const PLATFORM: &str = "youtube";

pub struct YouTube;

impl Extractor for YouTube {
    fn info() -> Info {
        Info::new(
            PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &[
                "*.youtube.com",
                "youtu.be",
                "www.youtu.be",
                "*.youtube-nocookie.com",
            ],
            &[innertube::API_HOST, innertube::WEB_HOST],
            &[
                "/watch?v={id}",
                "/shorts/{id}",
                "/live/{id}",
                "youtu.be/{id}",
                "/embed/{id}",
                "/v/{id}",
                "music.youtube.com/watch?v={id}",
            ],
        )
    }

    fn detect(input: &str) -> Result<Target> {
        urls::detect(input)
    }

    fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
        flow::stepped(target, ctx, done).map(|s| s.next)
    }

    fn stepped(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Stepped> {
        flow::stepped(target, ctx, done)
    }
}

mediaparse_sdk::export_extractor!(YouTube);
