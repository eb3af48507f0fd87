//! Douyin: posts through the signature-free iesdouyin `slidesinfo` endpoint
//! (iOS User-Agent), falling back to the share page's `_ROUTER_DATA`, then
//! (only with an operator `cookie`) the web detail API. Play and media-CDN
//! URLs are returned directly without a post lookup.
//! See shared/upstream/douyin.md and docs/platforms/douyin.md.
//!
//! `urls` recognises inputs, `flow` makes the requests, `map` reads the
//! answers (`aweme` is the typed post object).

mod aweme;
mod flow;
mod map;
pub mod urls;

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Target};

pub const PLATFORM: &str = "douyin";

pub struct Douyin;

impl Extractor for Douyin {
    fn info() -> Info {
        Info::new(
            PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &[
                "*.douyin.com",
                "*.iesdouyin.com",
                "aweme.snssdk.com",
                "api.amemv.com",
                "*.douyinvod.com",
                "*.zjcdn.com",
                "*.douyinpic.com",
                "*.douyinstatic.com",
            ],
            &["v.douyin.com", "www.iesdouyin.com", "www.douyin.com"],
            &[
                "/video/{id}",
                "/note/{id}",
                "/share/video/{id}",
                "/share/note/{id}",
                "/share/slides/{id}",
                "/shipin/{id}",
                "/lvdetail/{id}",
                "/vsdetail/{id}",
                "any page ?modal_id={id} / ?vid={id} / ?aweme_id={id}",
                "/aweme/v1/play/?video_id={vid}",
                "/aweme/v1/playwm/?video_id={vid}",
                "v.douyin.com/{code}",
                "share text holding a URL",
                "media CDN URLs (douyinvod, zjcdn, douyinpic, douyinstatic)",
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

mediaparse_sdk::export_extractor!(Douyin);
