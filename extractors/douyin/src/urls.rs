//! Douyin input URLs: post pages, share pages, query forms, short links and
//! direct media (play endpoints and media CDNs).

use mediaparse_sdk::urls::{InputUrl, is_digits};
use mediaparse_sdk::{Failure, Result, Target, share};

use crate::PLATFORM;

/// What an input URL points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// A post by its aweme id; `note` when the URL names an image post.
    Post { id: String, note: bool },
    /// A `v.douyin.com` short link, resolved by redirect in the flow.
    Short { code: String },
    /// A media URL returned as it is (no post lookup).
    Direct {
        id: String,
        url: String,
        kind: DirectKind,
    },
}

/// The kind of a direct media URL (platformData `media_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectKind {
    Video,
    Image,
    Audio,
}

impl DirectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DirectKind::Video => "video",
            DirectKind::Image => "image",
            DirectKind::Audio => "audio",
        }
    }
}

/// Hosts of the `/aweme/v1/play/` endpoint.
const PLAY_HOSTS: [&str; 4] = [
    "aweme.snssdk.com",
    "api.amemv.com",
    "www.iesdouyin.com",
    "iesdouyin.com",
];

/// Recognise a caller's input: a post, a short link (resolved in the
/// flow) or a direct media URL.
pub fn detect(input: &str) -> Result<Target> {
    let (id, canonical_url) = match classify(&input_url(input)?)? {
        Link::Post { id, note } => {
            let canonical = canonical_post(&id, note);
            (id, canonical)
        }
        Link::Short { code } => {
            let canonical = short_url(&code);
            (code, canonical)
        }
        Link::Direct { id, url, .. } => (id, url),
    };
    Ok(Target::new(PLATFORM, id, canonical_url, input))
}

/// The URL inside the caller's input (share text allowed).
pub fn input_url(input: &str) -> Result<InputUrl> {
    share::input_url(input, "Douyin")
}

/// A post id: decimal, 15 digits or more (19 today).
pub fn is_aweme_id(s: &str) -> bool {
    is_digits(s) && (15..=21).contains(&s.len())
}

fn is_short_code(s: &str) -> bool {
    (3..=24).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Recognise a Douyin URL.
pub fn classify(url: &InputUrl) -> Result<Link> {
    let host = url.host.as_str();
    let unsupported = |what: &str| Err(Failure::unsupported(format!("Douyin {what} unsupported")));

    if let Some(link) = direct_media(url) {
        return Ok(link);
    }
    if host == "v.douyin.com" {
        return match url.segments.as_slice() {
            [code] if is_short_code(code) => Ok(Link::Short { code: code.clone() }),
            _ => unsupported("short link without a code is"),
        };
    }
    if host == "live.douyin.com" || host.ends_with(".live.douyin.com") {
        return unsupported("live pages are");
    }
    if !url.host_in(&["*.douyin.com", "*.iesdouyin.com"]) {
        return unsupported("host is");
    }
    // Query forms come first: the page around them does not matter.
    for name in ["modal_id", "vid", "aweme_id"] {
        if let Some(id) = url.query(name).filter(|v| is_aweme_id(v)) {
            let note = url.segments.first().is_some_and(|s| s == "note");
            return Ok(Link::Post { id, note });
        }
    }
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    let (kind, id) = match segs.as_slice() {
        [
            kind @ ("video" | "note" | "shipin" | "lvdetail" | "vsdetail"),
            id,
        ] => (*kind, *id),
        ["share", kind @ ("video" | "note" | "slides"), id] => (*kind, *id),
        ["douyin", "share", "video", id] => ("video", *id),
        ["user", ..] => return unsupported("profiles are"),
        ["search", ..] => return unsupported("search pages are"),
        ["share", "user", ..] => return unsupported("profiles are"),
        ["collection" | "mix", ..] => return unsupported("collections are"),
        ["follow" | "friend", ..] => return unsupported("follow pages are"),
        ["music", ..] => return unsupported("music pages are"),
        ["hashtag" | "topic", ..] => return unsupported("hashtag pages are"),
        ["xg", ..] => return unsupported("Xigua videos are"),
        _ => return unsupported("page is"),
    };
    if !is_aweme_id(id) {
        return unsupported("post id is malformed; this URL is");
    }
    Ok(Link::Post {
        id: id.to_string(),
        note: matches!(kind, "note" | "slides"),
    })
}

/// Play endpoints and selected media CDNs: the URL itself is the media.
fn direct_media(url: &InputUrl) -> Option<Link> {
    let host = url.host.as_str();
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    if PLAY_HOSTS.contains(&host) && matches!(segs.as_slice(), ["aweme", "v1", "play" | "playwm"]) {
        let id = url.query("video_id")?;
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        return Some(Link::Direct {
            id,
            url: unwatermark(url.url.as_str()),
            kind: DirectKind::Video,
        });
    }
    let first_label = host.split('.').next().unwrap_or_default();
    let kind = if url.host_in(&["*.douyinvod.com"])
        || (url.host_in(&["*.zjcdn.com"]) && first_label.contains("-dy"))
    {
        DirectKind::Video
    } else if url.host_in(&["*.douyinpic.com"]) {
        DirectKind::Image
    } else if url.host_in(&["*.douyinstatic.com"]) {
        DirectKind::Audio
    } else {
        return None;
    };
    let id = segs.last()?.to_string();
    Some(Link::Direct {
        id,
        url: url.url.to_string(),
        kind,
    })
}

/// The unwatermarked form of a play URL: `/playwm/` becomes `/play/` and the
/// `watermark` / `logo_name` query parameters go. Other URLs are unchanged.
pub fn unwatermark(raw: &str) -> String {
    let Ok(mut url) = url::Url::parse(raw) else {
        return raw.to_string();
    };
    let path = url.path().to_string();
    let is_play = path.starts_with("/aweme/v1/play");
    if !is_play {
        return raw.to_string();
    }
    if path.trim_end_matches('/') == "/aweme/v1/playwm" {
        url.set_path("/aweme/v1/play/");
    }
    let has_marks = url
        .query_pairs()
        .any(|(k, _)| k == "watermark" || k == "logo_name");
    if has_marks {
        let kept: Vec<(String, String)> = url
            .query_pairs()
            .filter(|(k, _)| k != "watermark" && k != "logo_name")
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    url.to_string()
}

/// The canonical page of a post (the kind is kept for `plan`).
pub fn canonical_post(id: &str, note: bool) -> String {
    let kind = if note { "note" } else { "video" };
    format!("https://www.douyin.com/{kind}/{id}")
}

/// The short link as planned for resolution.
pub fn short_url(code: &str) -> String {
    format!("https://v.douyin.com/{code}/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn playwm_becomes_play_without_watermark_params() {
        assert_eq!(
            unwatermark(
                "https://aweme.snssdk.com/aweme/v1/playwm/?video_id=v0200f&line=0&watermark=1&logo_name=aweme_search_suffix&ratio=540p"
            ),
            "https://aweme.snssdk.com/aweme/v1/play/?video_id=v0200f&line=0&ratio=540p"
        );
        let plain = "https://api.amemv.com/aweme/v1/play/?video_id=v0200f&line=1";
        assert_eq!(unwatermark(plain), plain);
        let cdn = "https://v3-web.douyinvod.com/abc/def/video/tos/x/?a=6383&watermark=1";
        assert_eq!(unwatermark(cdn), cdn);
    }

    #[test]
    fn aweme_ids_are_long_decimals() {
        assert!(is_aweme_id("6961737553342991651"));
        assert!(!is_aweme_id("12345"));
        assert!(!is_aweme_id("69617375533429916x1"));
    }
}
