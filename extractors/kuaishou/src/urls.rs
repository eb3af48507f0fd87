//! Kuaishou input URLs: `/short-video/{id}`, share tokens (`/f/{token}`,
//! `v.kuaishou.com/{token}`), `/fw/photo/{id}` on the alternate hosts,
//! Kwai `/@{user}/video/{id}` and any of these with `photoId`/`photo_id`.

use mediaparse_sdk::urls::{InputUrl, is_digits};
use mediaparse_sdk::{Failure, Result, Target, share};

use crate::PLATFORM;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// A photo (post) id; `page` is a mobile share page URL to fetch when
    /// the input (or a redirect) named one.
    Photo { id: String, page: Option<String> },
    /// A share token, resolved by redirect in the flow (the URL to ask).
    Short { token: String, url: String },
}

/// Recognise a caller's input: a photo, or a share token resolved in the flow.
pub fn detect(input: &str) -> Result<Target> {
    let (id, canonical_url) = match classify(&input_url(input)?)? {
        Link::Photo { id, .. } => {
            let canonical = canonical_photo(&id);
            (id, canonical)
        }
        Link::Short { token, url } => (token, url),
    };
    Ok(Target::new(PLATFORM, id, canonical_url, input))
}

/// The link to work from: the caller's input when it still classifies
/// (it may name a share page), else the canonical URL.
pub fn link_of(target: &Target) -> Result<Link> {
    input_url(&target.input)
        .and_then(|u| classify(&u))
        .or_else(|_| classify(&InputUrl::parse(&target.canonical_url)?))
}

pub fn input_url(input: &str) -> Result<InputUrl> {
    share::input_url(input, "Kuaishou")
}

/// Web ids are `3x` plus lowercase letters and digits; Kwai and some
/// `photoId` parameters are decimal.
pub fn is_photo_id(s: &str) -> bool {
    let web = s.len() >= 7
        && s.len() <= 32
        && s.starts_with("3x")
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    web || (is_digits(s) && (6..=21).contains(&s.len()))
}

fn is_token(s: &str) -> bool {
    (4..=32).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

const SHARE_HOSTS: [&str; 2] = ["*.m.chenzhongtech.com", "m.gifshow.com"];

pub fn classify(url: &InputUrl) -> Result<Link> {
    let unsupported =
        |what: &str| Err(Failure::unsupported(format!("Kuaishou {what} unsupported")));
    let host = url.host.as_str();
    let known = url.host_in(&[
        "*.kuaishou.com",
        "*.chenzhongtech.com",
        "*.gifshow.com",
        "*.kwai.com",
    ]);
    if !known {
        return unsupported("host is");
    }
    if host.starts_with("live.") {
        return unsupported("live pages are");
    }
    if host.starts_with("klingai") {
        return unsupported("Kling AI pages are");
    }
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    // A photo id in the query names the post whatever page shows it
    // (feeds and profiles open posts in a modal).
    for name in ["photoId", "photo_id"] {
        if let Some(id) = url.query(name).filter(|v| is_photo_id(v)) {
            let page = share_page(url, &id);
            return Ok(Link::Photo { id, page });
        }
    }
    if host == "v.kuaishou.com" {
        return match segs.as_slice() {
            [token] if is_token(token) => Ok(Link::Short {
                token: token.to_string(),
                url: format!("https://v.kuaishou.com/{token}"),
            }),
            _ => unsupported("short link without a token is"),
        };
    }
    if url.host_in(&SHARE_HOSTS) {
        return match segs.as_slice() {
            ["fw", "photo" | "long-video", id] if is_photo_id(id) => Ok(Link::Photo {
                id: id.to_string(),
                page: share_page(url, id),
            }),
            _ => unsupported("page is"),
        };
    }
    if url.host_in(&["*.kwai.com"]) {
        return match segs.as_slice() {
            [user, "video", id] if user.starts_with('@') && is_photo_id(id) => Ok(Link::Photo {
                id: id.to_string(),
                page: None,
            }),
            _ => unsupported("Kwai page is"),
        };
    }
    match segs.as_slice() {
        ["short-video", id] if is_photo_id(id) => Ok(Link::Photo {
            id: id.to_string(),
            page: None,
        }),
        ["short-video", ..] => unsupported("photo id is malformed; this URL is"),
        ["f", token] if is_token(token) => Ok(Link::Short {
            token: token.to_string(),
            url: format!("https://www.kuaishou.com/f/{token}"),
        }),
        ["profile", ..] => unsupported("profiles are"),
        ["search", ..] => unsupported("search pages are"),
        ["brilliant", ..] | ["new-reco", ..] => unsupported("feed pages are"),
        _ => unsupported("page is"),
    }
}

/// The mobile share page to fetch for an input on a share host:
/// `/fw/long-video/` rewritten to `/fw/photo/`, the query kept.
fn share_page(url: &InputUrl, id: &str) -> Option<String> {
    if !url.host_in(&SHARE_HOSTS) {
        return None;
    }
    let query = url.url.query().map(|q| format!("?{q}")).unwrap_or_default();
    Some(format!("https://{}/fw/photo/{id}{query}", url.host))
}

pub fn canonical_photo(id: &str) -> String {
    format!("https://www.kuaishou.com/short-video/{id}")
}

/// The default mobile share page of a photo.
pub fn mobile_page(id: &str) -> String {
    format!("https://v.m.chenzhongtech.com/fw/photo/{id}")
}
