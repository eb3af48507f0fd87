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
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: vec!["*.weibo.com".into(), "*.weibo.cn".into(), "t.cn".into()],
            api_hosts: vec![
                "passport.weibo.com".into(),
                "weibo.com".into(),
                "m.weibo.cn".into(),
                "h5.video.weibo.com".into(),
                "t.cn".into(),
                "mapp.api.weibo.cn".into(),
            ],
            url_shapes: vec![
                "https://weibo.com/{uid}/{mid}".into(),
                "https://weibo.com/{uid}/{mblogid}".into(),
                "https://m.weibo.cn/status/{id}".into(),
                "https://m.weibo.cn/detail/{id}".into(),
                "https://weibo.com/tv/show/1034:{object_id}".into(),
                "https://video.weibo.com/show?fid=1034:{object_id}".into(),
                "https://h5.video.weibo.com/show/1034:{object_id}".into(),
                "https://weibo.com/{uid}?layerid={mid}".into(),
                "https://weibo.com/u/{uid}?layerid={mid}".into(),
                "https://t.cn/{code}".into(),
                "https://mapp.api.weibo.cn/fx/{hash}.html".into(),
                "share text containing one of these URLs".into(),
            ],
        }
    }

    fn detect(input: &str) -> Result<Target> {
        let (id, canonical_url) = urls::parse_input(input)?.target();
        Ok(Target {
            platform: PLATFORM.into(),
            id,
            canonical_url,
            input: input.into(),
        })
    }

    fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
        flow::step(target, ctx, done)
    }
}

mediaparse_sdk::export_extractor!(Weibo);
