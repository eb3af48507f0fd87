//! Xiaohongshu (RED / rednote): one note → its images, live photos, video
//! streams and (app data only) voice.
//!
//! Strategy (upstream/xiaohongshu.md): short links are resolved through
//! their redirect first; then the web note page
//! `www.xiaohongshu.com/explore/{id}?xsec_token=…` with a desktop UA and the
//! operator's `cookie` (needed for video streams), whose last
//! `window.__INITIAL_STATE__` holds the note. When that page carries no
//! state at all, the same page with a mobile UA (`noteData` layouts).

mod flow;
pub mod map;
pub mod page;
pub mod urls;

use mediaparse_sdk::{Context, Exchange, Extractor, Info, Result, Step, Target};

use urls::Link;

pub const PLATFORM: &str = "xiaohongshu";

pub struct Xiaohongshu;

impl Extractor for Xiaohongshu {
    fn info() -> Info {
        Info::new(
            PLATFORM,
            env!("CARGO_PKG_VERSION"),
            &[
                "*.xiaohongshu.com",
                "*.rednote.com",
                "*.xhslink.com",
                "*.xhslink.cn",
            ],
            &["www.xiaohongshu.com", "xhslink.com", "xhslink.cn"],
            &[
                "https://www.xiaohongshu.com/explore/{id}?xsec_token={token}",
                "https://www.xiaohongshu.com/discovery/item/{id}?xsec_token={token}",
                "https://www.rednote.com/explore/{id}",
                "https://www.rednote.com/discovery/item/{id}",
                "https://xhslink.com/{type}/{code}",
                "https://xhslink.com/{code}",
                "share text containing one of these URLs",
            ],
        )
    }

    fn detect(input: &str) -> Result<Target> {
        let (id, canonical_url) = match urls::parse_input(input)? {
            Link::Note(note) => (note.id.clone(), note.page_url()),
            Link::Short { url, code } => (code, url),
        };
        Ok(Target::new(PLATFORM, id, canonical_url, input))
    }

    fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
        flow::step(target, ctx, done)
    }
}

mediaparse_sdk::export_extractor!(Xiaohongshu);
