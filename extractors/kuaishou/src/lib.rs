//! Kuaishou: the mobile share page's `window.INIT_STATE` (obfuscated keys:
//! the value holding both `result` and `photo`), with the desktop page's
//! `window.__APOLLO_STATE__` as fallback. Share tokens are resolved hop by
//! hop and the cookies they set are sent on to the share page.
//! No real capture exists yet: see docs/platforms/kuaishou.md.
//!
//! `urls` recognises inputs, `flow` makes the requests, `map` reads the
//! answers into the media object.

mod flow;
mod map;
pub mod urls;

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Target};

pub const PLATFORM: &str = "kuaishou";

pub struct Kuaishou;

impl Extractor for Kuaishou {
    fn info() -> Info {
        Info::new(
            PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &[
                "*.kuaishou.com",
                "*.chenzhongtech.com",
                "*.gifshow.com",
                "*.kwai.com",
            ],
            &[
                "v.kuaishou.com",
                "www.kuaishou.com",
                "*.m.chenzhongtech.com",
                "m.gifshow.com",
            ],
            &[
                "/short-video/{id}",
                "/f/{token}",
                "v.kuaishou.com/{token}",
                "/fw/photo/{id} (m.chenzhongtech.com, m.gifshow.com)",
                "kwai.com/@{user}/video/{id}",
                "any of these with ?photoId= / ?photo_id=",
                "share text holding a URL",
            ],
        )
    }

    fn detect(input: &str) -> Result<Target> {
        urls::detect(input)
    }

    fn step(target: &Target, _ctx: &Context, done: &[Exchange]) -> Result<Step> {
        flow::step(target, done)
    }
}

mediaparse_sdk::export_extractor!(Kuaishou);
