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

use mediaparse_meta_web::cascade::Next;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, Info, Plan, Result, Target,
};

pub use urls::{URL_HOSTS, post_ref};

pub struct Threads;

impl Extractor for Threads {
    fn info() -> Info {
        Info {
            platform: urls::PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: vec!["*.threads.net".into(), "*.threads.com".into()],
            api_hosts: vec!["www.threads.com".into()],
            url_shapes: [
                "/@{user}/post/{shortcode}",
                "/@{user}/post/{shortcode}/media",
                "/t/{shortcode}",
                "/share/{code}",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        }
    }

    fn detect(input: &str) -> Result<Target> {
        urls::detect(input)
    }

    fn plan(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Plan> {
        match flow::run(target, ctx, done)? {
            Next::Fetch(requests) => Ok(Plan::Fetch(requests)),
            Next::Found(_) => Ok(Plan::Ready),
        }
    }

    fn map(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        match flow::run(target, ctx, done)? {
            Next::Found(post) => map::map(&post),
            Next::Fetch(_) => Err(Failure::upstream(
                "map was called before the post was fetched",
            )),
        }
    }
}

mediaparse_sdk::export_extractor!(Threads);
