//! Douyin: posts through the signature-free iesdouyin `slidesinfo` endpoint
//! (iOS User-Agent), falling back to the share page's `_ROUTER_DATA`, then
//! (only with an operator `cookie`) the web detail API. Play and media-CDN
//! URLs are returned directly without a post lookup.
//! See shared/upstream/douyin.md and docs/platforms/douyin.md.

mod aweme;
mod strategy;
pub mod urls;

use mediaparse_sdk::spec::{fill_missing_members, listed_members};
use mediaparse_sdk::{
    Audio, Context, Exchange, Extraction, Extractor, Failure, Image, Info, Media, MediaSource,
    Plan, Result, Target, Video,
};
use serde_json::{Map, Value};

use strategy::Step;
use urls::{DirectKind, Link};

pub const PLATFORM: &str = "douyin";

/// The iOS Safari User-Agent iesdouyin serves data to (desktop UAs get an
/// anti-bot page); also what the play endpoint wants for downloads.
pub const MOBILE_UA: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/// Desktop UA for the web API (which only works with the operator's cookie).
pub const DESKTOP_UA: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36";

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
        let url = urls::input_url(input)?;
        let (id, canonical_url) = match urls::classify(&url)? {
            Link::Post { id, note } => {
                let canonical = urls::canonical_post(&id, note);
                (id, canonical)
            }
            Link::Short { code } => {
                let canonical = urls::short_url(&code);
                (code, canonical)
            }
            Link::Direct { id, url, .. } => (id, url),
        };
        Ok(Target {
            platform: PLATFORM.into(),
            id,
            canonical_url,
            input: input.into(),
        })
    }

    fn plan(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Plan> {
        Ok(match strategy::step(target, ctx, done)? {
            Step::Fetch(requests) => Plan::Fetch(requests),
            Step::Direct(..) | Step::Found(..) => Plan::Ready,
        })
    }

    fn map(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        match strategy::step(target, ctx, done)? {
            Step::Fetch(_) => Err(Failure::upstream("the post was not fetched")),
            Step::Direct(link) => Ok(direct_extraction(&link)),
            Step::Found(object) => post_extraction(object),
        }
    }
}

/// Map an aweme object: media plus the object itself as platform data.
fn post_extraction(mut object: Value) -> Result<Extraction> {
    let aweme = aweme::Aweme::deserialize_from(&object)?;
    let media = aweme.to_media();
    mediaparse_sdk::bigints::stringify_large_integers(&mut object);
    let Value::Object(mut data) = object else {
        return Err(Failure::changed("the aweme is not an object"));
    };
    // A listed member the upstream sent as `null` is its type's empty value.
    for (name, _) in listed_members(PLATFORM) {
        if data.get(*name).is_some_and(Value::is_null) {
            data.remove(*name);
        }
    }
    fill_missing_members(PLATFORM, &mut data);
    Ok(Extraction {
        media,
        platform_data: Value::Object(data),
    })
}

/// Path D: the URL itself is the media; no aweme object exists.
fn direct_extraction(link: &Link) -> Extraction {
    let Link::Direct { url, kind, .. } = link else {
        return Extraction {
            media: Media::default(),
            platform_data: Value::Object(Map::new()),
        };
    };
    let headers = aweme::download_headers();
    let mut media = Media::default();
    match kind {
        DirectKind::Video => media.videos.push(Video {
            url: url.clone(),
            quality: "direct".into(),
            mime_type: "video/mp4".into(),
            width: 0,
            height: 0,
            has_audio: true,
            source: MediaSource::Direct,
            headers,
        }),
        DirectKind::Image => media.images.push(Image {
            url: url.clone(),
            width: 0,
            height: 0,
        }),
        DirectKind::Audio => media.audios.push(Audio {
            url: url.clone(),
            quality: "direct".into(),
            mime_type: "audio/mpeg".into(),
            bitrate: 0,
            source: MediaSource::Direct,
            headers,
        }),
    }
    let mut data = Map::new();
    data.insert("media_url".into(), Value::String(url.clone()));
    data.insert("media_type".into(), Value::String(kind.as_str().into()));
    fill_missing_members(PLATFORM, &mut data);
    Extraction {
        media,
        platform_data: Value::Object(data),
    }
}

mediaparse_sdk::export_extractor!(Douyin);
