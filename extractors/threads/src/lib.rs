//! Threads: one public post (image, video, carousel, or a text post that
//! embeds media) from its URL. Text-only posts are a success with no media.
//!
//! Strategies (upstream/threads.md §3): the post page rendered for
//! Googlebot (`data-sjs` JSON); then the homepage session and the logged-out
//! Barcelona GraphQL query. The requested shortcode is matched in the
//! answer, never the first item of the thread.

mod flow;
mod map;
mod urls;

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Target};

pub use urls::{URL_HOSTS, post_ref};

pub struct Threads;

impl Extractor for Threads {
    fn info() -> Info {
        Info::new(
            urls::PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &["*.threads.net", "*.threads.com"],
            &["www.threads.com"],
            &[
                "/@{user}/post/{shortcode}",
                "/@{user}/post/{shortcode}/media",
                "/t/{shortcode}",
                "/share/{code}",
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

mediaparse_sdk::export_extractor!(Threads);
