//! Threads: one public post (image, video, carousel, or a text post that
//! embeds media) from its URL. Text-only posts are a success with no media.
//!
//! Strategies (upstream/threads.md §3): the post page rendered for
//! Googlebot (`data-sjs` JSON); then the homepage session and the logged-out
//! Barcelona GraphQL query. The requested shortcode is matched in the
//! answer, never the first item of the thread.

mod detect;
mod flow;
mod post;

use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, Info, Plan, Result, Target,
};

pub use detect::{URL_HOSTS, post_path};

pub struct Threads;

impl Extractor for Threads {
    fn info() -> Info {
        Info {
            platform: detect::PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: vec!["*.threads.net".into(), "*.threads.com".into()],
            api_hosts: vec!["www.threads.com".into()],
            url_shapes: [
                "/@{user}/post/{shortcode}",
                "/@{user}/post/{shortcode}/media",
                "/share/{code}",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        }
    }

    fn detect(input: &str) -> Result<Target> {
        detect::detect(input)
    }

    fn plan(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Plan> {
        match flow::run(target, ctx, done)? {
            flow::Step::Fetch(requests) => Ok(Plan::Fetch(requests)),
            flow::Step::Found(_) => Ok(Plan::Ready),
        }
    }

    fn map(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        match flow::run(target, ctx, done)? {
            flow::Step::Found(post) => post::map(&post),
            flow::Step::Fetch(_) => Err(Failure::upstream(
                "map was called before the post was fetched",
            )),
        }
    }
}

mediaparse_sdk::export_extractor!(Threads);
