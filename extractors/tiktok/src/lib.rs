//! TikTok: placeholder being replaced by the real extractor.

use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, Info, Plan, Result, Target,
};

pub struct TikTok;

impl Extractor for TikTok {
    fn info() -> Info {
        Info {
            platform: "tiktok".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: vec!["*.tiktok.com".into(), "*.tiktokv.com".into()],
            api_hosts: vec![
                "www.tiktok.com".into(),
                "vm.tiktok.com".into(),
                "vt.tiktok.com".into(),
            ],
            url_shapes: vec!["/@{user}/video/{id}".into()],
        }
    }

    fn detect(input: &str) -> Result<Target> {
        let url = InputUrl::parse(input)?;
        let caps = url
            .path("/@{user?}/video/{id}")
            .ok_or_else(|| Failure::unsupported("not a TikTok post"))?;
        let id = caps.get("id").unwrap_or_default().to_string();
        Ok(Target {
            platform: "tiktok".into(),
            canonical_url: format!("https://www.tiktok.com/@_/video/{id}"),
            id,
            input: input.into(),
        })
    }

    fn plan(_: &Target, _: &Context, _: &[Exchange]) -> Result<Plan> {
        Err(Failure::upstream("not implemented yet"))
    }

    fn map(_: &Target, _: &Context, _: &[Exchange]) -> Result<Extraction> {
        Err(Failure::upstream("not implemented yet"))
    }
}

mediaparse_sdk::export_extractor!(TikTok);
