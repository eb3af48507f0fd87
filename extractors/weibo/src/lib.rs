//! Weibo: one post → its pictures, live photos and every video quality.
//!
//! Strategy (upstream/weibo.md):
//! - posts: a visitor cookie from `passport.weibo.com/visitor/genvisitor2`
//!   (a cacheable bootstrap call; skipped when the operator configures
//!   `cookie`), then `weibo.com/ajax/statuses/show`; on a block, redirect or
//!   error page, the mobile API `m.weibo.cn/statuses/show` (no cookie).
//! - `1034:` video links: the cookie-less video component
//!   `h5.video.weibo.com/api/component` first; the post lookup (by the
//!   component's `mid`) only when the component has no media.
//! - `t.cn` short links and `mapp.api.weibo.cn/fx/` app pages are resolved
//!   through their redirect first.

pub mod base62;
mod flow;
pub mod map;
pub mod urls;

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Target};

pub const PLATFORM: &str = "weibo";

pub struct Weibo;

impl Extractor for Weibo {
    fn info() -> Info {
        Info::new(
            PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &["*.weibo.com", "*.weibo.cn", "t.cn"],
            &[
                "passport.weibo.com",
                "weibo.com",
                "m.weibo.cn",
                "h5.video.weibo.com",
                "t.cn",
                "mapp.api.weibo.cn",
            ],
            &[
                "https://weibo.com/{uid}/{mid}",
                "https://weibo.com/{uid}/{mblogid}",
                "https://m.weibo.cn/status/{id}",
                "https://m.weibo.cn/detail/{id}",
                "https://weibo.com/tv/show/1034:{object_id}",
                "https://video.weibo.com/show?fid=1034:{object_id}",
                "https://h5.video.weibo.com/show/1034:{object_id}",
                "https://weibo.com/{uid}?layerid={mid}",
                "https://weibo.com/u/{uid}?layerid={mid}",
                "https://t.cn/{code}",
                "https://mapp.api.weibo.cn/fx/{hash}.html",
                "share text containing one of these URLs",
            ],
        )
    }

    fn detect(input: &str) -> Result<Target> {
        let (id, canonical_url) = urls::parse_input(input)?.target();
        Ok(Target::new(PLATFORM, id, canonical_url, input))
    }

    fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
        flow::step(target, ctx, done)
    }
}

mediaparse_sdk::export_extractor!(Weibo);
