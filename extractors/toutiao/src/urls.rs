//! Toutiao input URLs: `/video/{id}` on www, bare and mobile hosts (and the
//! mobile mirrors), and `/is/{code}` share links.

use mediaparse_sdk::urls::{InputUrl, is_digits};
use mediaparse_sdk::{Failure, Result, Target, share};

use crate::PLATFORM;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// A video by its group id (kept as a string).
    Video(String),
    /// An `/is/{code}` share link, resolved by redirect in the flow.
    Short(String),
}

/// Recognise a caller's input: a video, or a share link resolved in the flow.
pub fn detect(input: &str) -> Result<Target> {
    let url = input_url(input)?;
    let (id, canonical_url) = match classify(&url)? {
        Link::Video(id) => {
            let canonical = canonical_video(&id);
            (id, canonical)
        }
        Link::Short(code) => {
            let canonical = short_url(&code);
            (code, canonical)
        }
    };
    Ok(Target::new(PLATFORM, id, canonical_url, input))
}

/// The URL inside the caller's input.
pub fn input_url(input: &str) -> Result<InputUrl> {
    share::input_url(input, "Toutiao")
}

/// A group id: decimal, 15 digits or more (19 today).
pub fn is_group_id(s: &str) -> bool {
    is_digits(s) && (15..=21).contains(&s.len())
}

fn is_code(s: &str) -> bool {
    (4..=24).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

const HOSTS: [&str; 3] = ["*.toutiao.com", "*.toutiaoimg.cn", "*.toutiaocdn.com"];

pub fn classify(url: &InputUrl) -> Result<Link> {
    let unsupported = |what: &str| Err(Failure::unsupported(format!("Toutiao {what} unsupported")));
    if !url.host_in(&HOSTS) {
        return unsupported("host is");
    }
    if url.host.starts_with("live.") {
        return unsupported("live pages are");
    }
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["video", id] if is_group_id(id) => Ok(Link::Video(id.to_string())),
        ["video", ..] => unsupported("video id is malformed; this URL is"),
        ["is", code] if is_code(code) => Ok(Link::Short(code.to_string())),
        // `is{code}` without the slash, as users sometimes write it.
        [one] if one.len() > 6 && one.starts_with("is") && is_code(&one[2..]) => {
            Ok(Link::Short(one[2..].to_string()))
        }
        ["article" | "group" | "item" | "w", ..] => unsupported("articles and micro-posts are"),
        [one, ..] if is_legacy_article(one) => unsupported("articles are"),
        ["c", "user", ..] | ["user", ..] => unsupported("profiles are"),
        ["search", ..] => unsupported("search pages are"),
        ["ch", ..] => unsupported("channels are"),
        ["live", ..] => unsupported("live pages are"),
        _ => unsupported("page is"),
    }
}

/// `/a{id}` and `/i{id}` article paths.
fn is_legacy_article(seg: &str) -> bool {
    let rest = seg.strip_prefix('a').or_else(|| seg.strip_prefix('i'));
    rest.is_some_and(is_digits)
}

pub fn canonical_video(id: &str) -> String {
    format!("https://www.toutiao.com/video/{id}/")
}

pub fn short_url(code: &str) -> String {
    format!("https://m.toutiao.com/is/{code}/")
}
