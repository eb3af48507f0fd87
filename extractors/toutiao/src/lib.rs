//! Toutiao videos: a `ttwid` from ByteDance's register endpoint (a cached
//! bootstrap call), then the desktop page's URL-encoded `RENDER_DATA`
//! (`data.initialVideo`); fallbacks: the mobile page (`articleInfo`, with
//! the VOD `GetPlayInfo` call when it only carries a play token), then the
//! legacy `/i{id}/info/` answer whose `video_play_info` is a JSON string.
//! See shared/upstream/toutiao.md and docs/platforms/toutiao.md.

mod playinfo;
mod strategy;
pub mod urls;

use mediaparse_sdk::spec::{fill_missing_members, listed_members};
use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, Info, Media, Plan, Result, Target,
};
use serde_json::{Map, Value};

use strategy::{Found, Step};

pub const PLATFORM: &str = "toutiao";

pub const DESKTOP_UA: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36";
pub const MOBILE_UA: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

pub struct Toutiao;

impl Extractor for Toutiao {
    fn info() -> Info {
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: ["*.toutiao.com", "*.toutiaoimg.cn", "*.toutiaocdn.com"]
                .map(String::from)
                .to_vec(),
            api_hosts: [
                "ttwid.bytedance.com",
                "www.toutiao.com",
                "m.toutiao.com",
                "vod.bytedanceapi.com",
            ]
            .map(String::from)
            .to_vec(),
            url_shapes: [
                "/video/{id}",
                "m.toutiao.com/video/{id}",
                "m.toutiao.com/is/{code}",
            ]
            .map(String::from)
            .to_vec(),
        }
    }

    fn detect(input: &str) -> Result<Target> {
        let url = urls::input_url(input)?;
        let (id, canonical_url) = match urls::classify(&url)? {
            urls::Link::Video(id) => {
                let canonical = urls::canonical_video(&id);
                (id, canonical)
            }
            urls::Link::Short(code) => {
                let canonical = urls::short_url(&code);
                (code, canonical)
            }
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
            Step::Found(..) => Plan::Ready,
        })
    }

    fn map(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        match strategy::step(target, ctx, done)? {
            Step::Fetch(_) => Err(Failure::upstream("the video was not fetched")),
            Step::Found(found) => Ok(extraction(*found)),
        }
    }
}

/// Media and platform data (SPEC.md's legacy member names, built from
/// whatever object was fetched; upstream members of the right type kept).
fn extraction(found: Found) -> Extraction {
    let media = Media {
        title: found.title.clone(),
        thumbnail: found.poster.clone(),
        duration: found.duration,
        images: Vec::new(),
        videos: found.videos,
        audios: Vec::new(),
    };
    let mut data = match found.object {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let derived: [(&str, Value); 7] = [
        ("group_id", Value::String(found.group_id)),
        ("item_id", Value::String(found.item_id)),
        ("title", Value::String(found.title)),
        ("abstract", Value::String(found.summary)),
        ("poster_url", Value::String(found.poster)),
        ("video_duration", seconds_value(found.duration)),
        ("video_play_info", found.play_info),
    ];
    for (name, value) in derived {
        let kind = listed_members(PLATFORM)
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k);
        let keep = name != "group_id"
            && data
                .get(name)
                .is_some_and(|v| kind.is_some_and(|k| k.accepts(v)));
        if !keep {
            data.insert(name.to_string(), value);
        }
    }
    let mut object = Value::Object(data);
    mediaparse_sdk::bigints::stringify_large_integers(&mut object);
    if let Value::Object(map) = &mut object {
        fill_missing_members(PLATFORM, map);
    }
    Extraction {
        media,
        platform_data: object,
    }
}

/// Whole seconds as an integer (as the legacy members were), else a float.
fn seconds_value(seconds: f64) -> Value {
    if seconds.is_finite() && seconds.fract() == 0.0 && seconds.abs() < 1e15 {
        Value::from(seconds as i64)
    } else {
        serde_json::Number::from_f64(seconds)
            .map(Value::Number)
            .unwrap_or_else(|| Value::from(0))
    }
}

mediaparse_sdk::export_extractor!(Toutiao);
