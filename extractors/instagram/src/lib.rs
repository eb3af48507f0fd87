//! Instagram: one public post (photo, video/reel, carousel) from its URL.
//!
//! Strategies (upstream/instagram.md §3): homepage session + logged-out
//! Polaris GraphQL; then the permalink page's `data-sjs` JSON; then the
//! `/embed/captioned/` page. Share links are resolved by redirect first.

mod flow;
mod map;
mod urls;

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Target};

pub use urls::{URL_HOSTS, post_code};

pub struct Instagram;

impl Extractor for Instagram {
    fn info() -> Info {
        Info::new(
            urls::PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &["*.instagram.com", "*.instagr.am"],
            &["www.instagram.com"],
            &[
                "/p/{code}",
                "/reel/{code}",
                "/reels/{code}",
                "/tv/{code}",
                "/r/{code}",
                "/{username}/p/{code}",
                "/{username}/reel/{code}",
                "/p/{code}/embed",
                "/reel/{code}/embed",
                "/share/{id}",
                "/share/{type}/{id}",
                "m.instagram.com/p/{id}",
            ],
        )
    }

    fn detect(input: &str) -> Result<Target> {
        urls::detect(input)
    }

    fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
        flow::step(target, ctx, done)
    }
}

mediaparse_sdk::export_extractor!(Instagram);
