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
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: vec![
                "*.xiaohongshu.com".into(),
                "*.rednote.com".into(),
                "*.xhslink.com".into(),
                "*.xhslink.cn".into(),
            ],
            api_hosts: vec![
                "www.xiaohongshu.com".into(),
                "xhslink.com".into(),
                "xhslink.cn".into(),
            ],
            url_shapes: vec![
                "https://www.xiaohongshu.com/explore/{id}?xsec_token={token}".into(),
                "https://www.xiaohongshu.com/discovery/item/{id}?xsec_token={token}".into(),
                "https://www.rednote.com/explore/{id}".into(),
                "https://www.rednote.com/discovery/item/{id}".into(),
                "https://xhslink.com/{type}/{code}".into(),
                "https://xhslink.com/{code}".into(),
                "share text containing one of these URLs".into(),
            ],
        }
    }

    fn detect(input: &str) -> Result<Target> {
        let (id, canonical_url) = match urls::parse_input(input)? {
            Link::Note(note) => (note.id.clone(), note.page_url()),
            Link::Short { url, code } => (code, url),
        };
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

mediaparse_sdk::export_extractor!(Xiaohongshu);
