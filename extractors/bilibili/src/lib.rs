//! Bilibili (mainland site): ordinary videos through `x/web-interface/view`
//! and the WBI-signed `x/player/wbi/playurl` (DASH), with the video page's
//! `window.__playinfo__` and the legacy `platform=html5` MP4 as fallbacks;
//! bangumi through `pgc`, courses through `pugv`. See
//! `docs/platforms/bilibili.md` for what each fixture proves.
//!
//! `urls.rs` recognises inputs, `flow.rs` decides the requests (built and
//! judged in `api.rs`), `meta.rs` reads the metadata answers and `map.rs`
//! maps a play-URL object to the media object.

mod api;
pub mod bvid;
mod fingerprint;
mod flow;
mod map;
mod meta;
mod urls;
mod wbi;

pub use urls::{Kind, Pgc, classify, detect_input};
pub use wbi::{Keys, signed_query};

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Target};

pub struct Bilibili;

pub const PLATFORM: &str = "bilibili";

impl Extractor for Bilibili {
    fn info() -> Info {
        let mut url_hosts = vec!["*.bilibili.com"];
        url_hosts.extend(urls::SHORT_HOSTS);
        Info::new(
            PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &url_hosts,
            &[
                "api.bilibili.com",
                "www.bilibili.com",
                "b23.tv",
                "bili2233.cn",
                "bili22.cn",
                "bili23.cn",
                "bili33.cn",
            ],
            &[
                "/video/BV{id}",
                "/video/av{id}",
                "/video/BV{id}?p={n}",
                "/list/...?bvid=BV{id}",
                "/bangumi/play/ep{id}",
                "/bangumi/play/ss{id}",
                "/cheese/play/ss{id}",
                "/cheese/play/ep{id}",
                "short hosts b23.tv, bili2233.cn, bili22.cn, bili23.cn, bili33.cn: /{code}",
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

mediaparse_sdk::export_extractor!(Bilibili);
