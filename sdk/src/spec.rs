//! Facts of SPEC.md that both the host and extractor tests check against.

use serde_json::Value;

/// The platform identifiers the service loads, exactly as SPEC.md spells
/// them (`cargo xtask new-extractor` appends a new platform's id here).
pub const PLATFORMS: &[&str] = &[
    "tiktok",
    "douyin",
    "toutiao",
    "youtube",
    "twitter",
    "instagram",
    "threads",
    "xiaohongshu",
    "bilibili",
    "kuaishou",
    "weibo",
];

/// JSON types SPEC.md uses for listed platformData members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A JSON string.
    String,
    /// A JSON number.
    Number,
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
    /// `toutiao.video_play_info`: an object, or the older JSON-string form.
    ObjectOrString,
}

impl Kind {
    /// Does this JSON value have this type?
    ///
    /// ```
    /// use mediaparse_sdk::spec::Kind;
    /// assert!(Kind::String.accepts(&serde_json::json!("7305827432509082913")));
    /// assert!(!Kind::Number.accepts(&serde_json::json!("1")));
    /// ```
    pub fn accepts(self, v: &Value) -> bool {
        match self {
            Kind::String => v.is_string(),
            Kind::Number => v.is_number(),
            Kind::Object => v.is_object(),
            Kind::Array => v.is_array(),
            Kind::ObjectOrString => v.is_object() || v.is_string(),
        }
    }
}

/// Listed stable members of `data.platformData` per platform (SPEC.md).
/// Douyin's `media_url`/`media_type` are conditional and not listed here.
pub fn listed_members(platform: &str) -> &'static [(&'static str, Kind)] {
    use Kind::*;
    match platform {
        "tiktok" => &[
            ("aweme_id", String),
            ("desc", String),
            ("author", Object),
            ("video", Object),
            ("images", Array),
            ("statistics", Object),
        ],
        "douyin" => &[
            ("aweme_id", String),
            ("desc", String),
            ("author", Object),
            ("video", Object),
            ("images", Array),
            ("music", Object),
            ("statistics", Object),
        ],
        "toutiao" => &[
            ("group_id", String),
            ("item_id", String),
            ("title", String),
            ("abstract", String),
            ("poster_url", String),
            ("video_duration", Number),
            ("video_play_info", ObjectOrString),
        ],
        "youtube" => &[
            ("videoDetails", Object),
            ("streamingData", Object),
            ("playabilityStatus", Object),
            ("microformat", Object),
            ("captions", Object),
        ],
        "twitter" => &[
            ("id_str", String),
            ("text", String),
            ("full_text", String),
            ("user", Object),
            ("media", Object),
            ("metrics", Object),
        ],
        "instagram" => &[
            ("id", String),
            ("code", String),
            ("caption", Object),
            ("user", Object),
            ("video_versions", Array),
            ("image_versions", Object),
            ("carousel_media", Array),
            ("taken_at", Number),
        ],
        "threads" => &[
            ("id", String),
            ("code", String),
            ("text", String),
            ("user", Object),
            ("images", Array),
            ("image_versions2", Object),
            ("video_versions", Array),
            ("carousel_media", Array),
            ("text_post_app_info", Object),
        ],
        "xiaohongshu" => &[
            ("note_id", String),
            ("title", String),
            ("desc", String),
            ("type", String),
            ("user", Object),
            ("images_list", Array),
            ("video_info_v2", Object),
            ("interact_info", Object),
            ("native_voice_info", Object),
        ],
        "bilibili" => &[
            ("title", String),
            ("pic", String),
            ("timelength", Number),
            ("dash", Object),
            ("support_formats", Array),
            ("quality", Number),
            ("format", String),
        ],
        "kuaishou" => &[
            ("photoId", String),
            ("caption", String),
            ("author", Object),
            ("mainMvUrls", Array),
            ("manifest", Object),
            ("coverUrls", Array),
            ("duration", Number),
            ("width", Number),
            ("height", Number),
        ],
        "weibo" => &[
            ("id", String),
            ("mid", String),
            ("mblogid", String),
            ("text_raw", String),
            ("user", Object),
            ("pics", Array),
            ("page_info", Object),
            ("video_details_url", String),
        ],
        _ => &[],
    }
}

/// Problems with a platformData object against SPEC.md's listed members.
pub fn check_platform_data(platform: &str, data: &Value) -> Vec<String> {
    let Some(object) = data.as_object() else {
        return vec!["platformData is not an object".into()];
    };
    listed_members(platform)
        .iter()
        .filter_map(|(name, kind)| match object.get(*name) {
            None => Some(format!("listed member `{name}` is missing")),
            Some(v) if !kind.accepts(v) => {
                Some(format!("listed member `{name}` should be {kind:?}, is {v}"))
            }
            Some(_) => None,
        })
        .collect()
}

/// Fill listed members the fetched shape could not supply with the empty
/// value of their type (never invented data).
pub fn fill_missing_members(platform: &str, data: &mut serde_json::Map<String, Value>) {
    for (name, kind) in listed_members(platform) {
        if !data.contains_key(*name) {
            let empty = match kind {
                Kind::String => Value::String(String::new()),
                Kind::Number => Value::from(0),
                Kind::Object | Kind::ObjectOrString => Value::Object(Default::default()),
                Kind::Array => Value::Array(vec![]),
            };
            data.insert((*name).to_string(), empty);
        }
    }
}

/// The host's checks on an extractor's media (DESIGN.md §2 step 8):
/// absolute http(s) URLs everywhere, finite non-negative duration.
pub fn validate_media(media: &crate::Media) -> Result<(), String> {
    let check = |what: &str, i: usize, url: &str| -> Result<(), String> {
        match url::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
            _ => Err(format!(
                "{what}[{i}].url is not an absolute http(s) URL: {url:?}"
            )),
        }
    };
    for (i, x) in media.images.iter().enumerate() {
        check("images", i, &x.url)?;
    }
    for (i, x) in media.videos.iter().enumerate() {
        check("videos", i, &x.url)?;
        // SPEC.md: a video's source is direct, adaptive, dash or live_photo.
        if x.source == crate::MediaSource::NativeVoice {
            return Err(format!("videos[{i}].source native_voice is audio-only"));
        }
    }
    for (i, x) in media.audios.iter().enumerate() {
        check("audios", i, &x.url)?;
        // SPEC.md: an audio's source is direct, adaptive, dash or native_voice.
        if x.source == crate::MediaSource::LivePhoto {
            return Err(format!("audios[{i}].source live_photo is video-only"));
        }
    }
    if !media.thumbnail.is_empty() && url::Url::parse(&media.thumbnail).is_err() {
        return Err(format!("thumbnail is not a URL: {:?}", media.thumbnail));
    }
    if !media.duration.is_finite() || media.duration < 0.0 {
        return Err(format!(
            "duration is not a non-negative number: {}",
            media.duration
        ));
    }
    Ok(())
}
