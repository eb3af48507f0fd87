//! Which Bilibili post an input names, from the URL alone.

use crate::bvid;
use mediaparse_sdk::share::first_url;
use mediaparse_sdk::urls::{InputUrl, is_alnum, is_digits};
use mediaparse_sdk::{Failure, Result, Target};

/// Hosts of the mainland site that serve posts.
pub const SITE_HOSTS: [&str; 3] = ["www.bilibili.com", "bilibili.com", "m.bilibili.com"];
/// Short-link hosts (`/{code}`), with or without `www.`.
pub const SHORT_HOSTS: [&str; 5] = [
    "*.b23.tv",
    "*.bili2233.cn",
    "*.bili22.cn",
    "*.bili23.cn",
    "*.bili33.cn",
];

/// What a URL points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An ordinary video (`BV…`), one part of it (1-based).
    Video { bvid: String, page: u32 },
    /// A bangumi (PGC) episode or season.
    Bangumi(Pgc),
    /// A course (cheese, PUGV) episode or season.
    Cheese(Pgc),
    /// A short link still to resolve.
    Short { url: String, code: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pgc {
    Episode(u64),
    Season(u64),
}

impl Kind {
    /// The target id: `BV…` (`BV…_p2` for a later part), `ep…`/`ss…`,
    /// `cheese-ep…`/`cheese-ss…`, or the short-link code.
    pub fn id(&self) -> String {
        match self {
            Kind::Video { bvid, page } if *page > 1 => format!("{bvid}_p{page}"),
            Kind::Video { bvid, .. } => bvid.clone(),
            Kind::Bangumi(p) => p.id(),
            Kind::Cheese(p) => format!("cheese-{}", p.id()),
            Kind::Short { code, .. } => code.clone(),
        }
    }

    pub fn canonical_url(&self) -> String {
        match self {
            Kind::Video { bvid, page } if *page > 1 => {
                format!("https://www.bilibili.com/video/{bvid}?p={page}")
            }
            Kind::Video { bvid, .. } => format!("https://www.bilibili.com/video/{bvid}"),
            Kind::Bangumi(p) => format!("https://www.bilibili.com/bangumi/play/{}", p.id()),
            Kind::Cheese(p) => format!("https://www.bilibili.com/cheese/play/{}", p.id()),
            Kind::Short { url, .. } => url.clone(),
        }
    }
}

impl Pgc {
    pub fn id(&self) -> String {
        match self {
            Pgc::Episode(n) => format!("ep{n}"),
            Pgc::Season(n) => format!("ss{n}"),
        }
    }
}

/// The target of a caller's input.
pub fn detect(input: &str) -> Result<Target> {
    let kind = detect_input(input)?;
    Ok(Target::new(
        crate::PLATFORM,
        kind.id(),
        kind.canonical_url(),
        input,
    ))
}

/// Recognise the caller's input: a URL, or share text holding one
/// (`【title-哔哩哔哩】 https://b23.tv/…`).
pub fn detect_input(input: &str) -> Result<Kind> {
    let text = input.trim();
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    let is_bare_url = (lower.starts_with("https://") || lower.starts_with("http://"))
        && !text.contains(char::is_whitespace);
    if !is_bare_url && let Some(found) = first_url(text) {
        return classify(&InputUrl::parse(&found)?);
    }
    classify(&InputUrl::parse(text)?)
}

/// Classify a parsed URL (also used on short-link redirect targets).
pub fn classify(url: &InputUrl) -> Result<Kind> {
    if url.host_in(&SHORT_HOSTS) {
        return short(url);
    }
    if url.host_in(&SITE_HOSTS) {
        return site(url);
    }
    if url.host == "player.bilibili.com" {
        // The embed player: `player.html?bvid=…` or `?aid=…` (an alias users paste).
        if url.path("/player.html").is_some()
            && let Some(kind) = video_from_query(url)
        {
            return kind;
        }
        return Err(Failure::unsupported("embed player URL without a video id"));
    }
    if url.host_in(&["*.bilibili.com"]) {
        let what = match url.host.split('.').next().unwrap_or_default() {
            "space" => "profiles, favourites and collections",
            "live" => "live rooms",
            "t" => "dynamics (posts)",
            "search" => "search pages",
            _ => "this part of bilibili.com",
        };
        return Err(Failure::unsupported(format!("{what} are not supported")));
    }
    Err(Failure::unsupported(
        "not a Bilibili video URL (only the mainland site is supported)",
    ))
}

fn short(url: &InputUrl) -> Result<Kind> {
    let [code] = url.segments.as_slice() else {
        return Err(Failure::unsupported("short link without a code"));
    };
    if !is_alnum(code) {
        return Err(Failure::unsupported("malformed short-link code"));
    }
    // `b23.tv/BV…` and `b23.tv/av…` name the video outright.
    if let Some(bvid) = bvid::normalize(code) {
        return Ok(Kind::Video { bvid, page: 1 });
    }
    if let Some(kind) = av(code) {
        return kind;
    }
    let host = url.host.trim_start_matches("www.");
    Ok(Kind::Short {
        url: format!("https://{host}/{code}"),
        code: code.clone(),
    })
}

fn site(url: &InputUrl) -> Result<Kind> {
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    let page = page(url);
    match segs.as_slice() {
        ["video", id] | ["s", "video", id] => video_id(id, page),
        ["bangumi", "play", id] => pgc(id).map(Kind::Bangumi),
        ["cheese", "play", id] => pgc(id).map(Kind::Cheese),
        ["list" | "medialist" | "festival", ..] => video_from_query(url).unwrap_or_else(|| {
            Err(Failure::unsupported(
                "lists, favourites and watch-later pages without one video id are not supported",
            ))
        }),
        [] => Err(Failure::unsupported("the home page is not a post")),
        ["bangumi", "media", ..] => Err(Failure::unsupported(
            "bangumi media pages (a whole series) are not supported",
        )),
        ["read", ..] | ["opus", ..] => Err(Failure::unsupported("articles are not supported")),
        ["audio", ..] => Err(Failure::unsupported("audio pages are not supported")),
        ["search", ..] => Err(Failure::unsupported("search pages are not supported")),
        _ => Err(Failure::unsupported("not a single Bilibili video URL")),
    }
}

/// `?bvid=BV…` (or `?aid=…` on the embed player), with `?p=`.
fn video_from_query(url: &InputUrl) -> Option<Result<Kind>> {
    if let Some(bvid) = url.query("bvid").filter(|v| !v.is_empty()) {
        return Some(video_id(&bvid, page(url)));
    }
    if let Some(aid) = url.query("aid").filter(|v| !v.is_empty()) {
        return Some(video_id(&format!("av{aid}"), page(url)));
    }
    None
}

fn video_id(id: &str, page: u32) -> Result<Kind> {
    if let Some(bvid) = bvid::normalize(id) {
        return Ok(Kind::Video { bvid, page });
    }
    match av(id) {
        Some(Ok(Kind::Video { bvid, .. })) => Ok(Kind::Video { bvid, page }),
        Some(other) => other,
        None => Err(Failure::unsupported(format!("not a video id: {id}"))),
    }
}

/// `av{digits}` (any case) → the video, converted offline to its BV id.
fn av(id: &str) -> Option<Result<Kind>> {
    let prefix = id.get(..2)?;
    if !prefix.eq_ignore_ascii_case("av") || !is_digits(&id[2..]) {
        return None;
    }
    Some(
        id[2..]
            .parse::<u64>()
            .ok()
            .and_then(bvid::av_to_bv)
            .map(|bvid| Kind::Video { bvid, page: 1 })
            .ok_or_else(|| Failure::unsupported(format!("av number out of range: {id}"))),
    )
}

fn pgc(id: &str) -> Result<Pgc> {
    let number = |rest: &str| {
        rest.parse::<u64>()
            .ok()
            .filter(|n| *n > 0 && is_digits(rest))
    };
    if let Some(n) = id.strip_prefix("ep").and_then(number) {
        return Ok(Pgc::Episode(n));
    }
    if let Some(n) = id.strip_prefix("ss").and_then(number) {
        return Ok(Pgc::Season(n));
    }
    Err(Failure::unsupported(format!(
        "not an episode or season id: {id}"
    )))
}

/// `?p=N`, 1-based; anything else is part 1.
fn page(url: &InputUrl) -> u32 {
    url.query("p")
        .and_then(|p| p.trim().parse::<u32>().ok())
        .filter(|p| *p >= 1)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_canonical_urls() {
        let k = Kind::Video {
            bvid: "BV117411r7R1".into(),
            page: 3,
        };
        assert_eq!(k.id(), "BV117411r7R1_p3");
        assert_eq!(
            k.canonical_url(),
            "https://www.bilibili.com/video/BV117411r7R1?p=3"
        );
        assert_eq!(Kind::Cheese(Pgc::Season(61)).id(), "cheese-ss61");
        assert_eq!(
            detect_input("https://www.bilibili.com/cheese/play/ss61")
                .map(|k| k.canonical_url())
                .ok()
                .as_deref(),
            Some("https://www.bilibili.com/cheese/play/ss61")
        );
    }

    #[test]
    fn canonical_urls_classify_to_themselves() {
        for input in [
            "https://www.bilibili.com/video/BV117411r7R1?p=2",
            "https://www.bilibili.com/bangumi/play/ss42290",
            "https://www.bilibili.com/cheese/play/ep790",
            "https://b23.tv/5x4wy5f",
        ] {
            let kind = detect_input(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(detect_input(&kind.canonical_url()).ok(), Some(kind));
        }
    }
}
