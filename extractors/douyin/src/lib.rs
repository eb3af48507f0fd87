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
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: [
                "*.douyin.com",
                "*.iesdouyin.com",
                "aweme.snssdk.com",
                "api.amemv.com",
                "*.douyinvod.com",
                "*.zjcdn.com",
                "*.douyinpic.com",
                "*.douyinstatic.com",
            ]
            .map(String::from)
            .to_vec(),
            api_hosts: ["v.douyin.com", "www.iesdouyin.com", "www.douyin.com"]
                .map(String::from)
                .to_vec(),
            url_shapes: [
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
            ]
            .map(String::from)
            .to_vec(),
        }
    }

    fn detect(input: &str) -> Result<Target> {
        urls::detect(input)
    }

    fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
        flow::step(target, ctx, done)
    }
}

mediaparse_sdk::export_extractor!(Douyin);
