//! Toutiao videos: a `ttwid` from ByteDance's register endpoint (a cached
//! bootstrap call), then the desktop page's URL-encoded `RENDER_DATA`
//! (`data.initialVideo`); fallbacks: the mobile page (`articleInfo`, with
//! the VOD `GetPlayInfo` call when it only carries a play token), then the
//! legacy `/i{id}/info/` answer whose `video_play_info` is a JSON string.
//! See shared/upstream/toutiao.md and docs/platforms/toutiao.md.
//!
//! `urls` recognises inputs, `flow` makes the requests, `map` reads the
//! answers (`playinfo` the stream lists).

mod flow;
mod map;
mod playinfo;
pub mod urls;

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Target};

pub const PLATFORM: &str = "toutiao";

pub struct Toutiao;

impl Extractor for Toutiao {
    fn info() -> Info {
        Info::new(
            PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &["*.toutiao.com", "*.toutiaoimg.cn", "*.toutiaocdn.com"],
            &[
                "ttwid.bytedance.com",
                "www.toutiao.com",
                "m.toutiao.com",
                "vod.bytedanceapi.com",
            ],
            &[
                "/video/{id}",
                "m.toutiao.com/video/{id}",
                "m.toutiao.com/is/{code}",
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

mediaparse_sdk::export_extractor!(Toutiao);
