//! TikTok: the post page's `__UNIVERSAL_DATA_FOR_REHYDRATION__` blob
//! (guide `upstream/tiktok.md`, strategy A), with the WAF proof-of-work
//! challenge solved in the extractor and short links resolved through their
//! redirects. Notes beyond the guide: `docs/platforms/tiktok.md`.
//!
//! `urls` recognises inputs, `flow` makes the requests (rounds described
//! there; `challenge` solves the proof-of-work, `page` reads the post page,
//! `app` is strategy B), `map` builds the media object.

mod app;
mod challenge;
mod flow;
mod map;
mod page;
mod urls;

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Target};

pub use urls::{Link, Post, Short, classify, landing};

pub const PLATFORM: &str = "tiktok";

pub struct TikTok;

impl Extractor for TikTok {
    fn info() -> Info {
        Info::new(
            PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &["*.tiktok.com", "*.tiktokv.com"],
            &["www.tiktok.com", "vt.tiktok.com", app::HOST],
            &[
                "/@{user}/video/{id}",
                "/@{user}/photo/{id}",
                "/t/{code}",
                "vm.tiktok.com/{code}, vt.tiktok.com/{code}",
                "/share/video/{id}, /i18n/share/video/{id} (alias)",
                "/embed/{id}, /embed/v2/{id} (alias)",
                "m.tiktok.com/v/{id}.html (alias)",
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

mediaparse_sdk::export_extractor!(TikTok);
