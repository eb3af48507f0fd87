//! Recognising Weibo links: posts (mid or mblogid), `1034:` video objects,
//! `t.cn` short links, app share pages, and what is not a single post.

use crate::base62::{mblogid_to_mid, mid_to_mblogid};
use mediaparse_sdk::urls::{InputUrl, is_alnum, is_digits};
use mediaparse_sdk::{Failure, Result, share};

/// Hosts of post pages.
const MAIN_HOSTS: [&str; 6] = [
    "weibo.com",
    "www.weibo.com",
    "m.weibo.com",
    "weibo.cn",
    "www.weibo.cn",
    "m.weibo.cn",
];
const VIDEO_HOSTS: [&str; 2] = ["video.weibo.com", "h5.video.weibo.com"];
const SHORT_HOSTS: [&str; 2] = ["t.cn", "www.t.cn"];
const APP_SHARE_HOST: &str = "mapp.api.weibo.cn";
const SHARE_API_HOST: &str = "share.api.weibo.cn";
const VIDEO_H5_HOST: &str = "video.h5.weibo.cn";

/// What a link points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// A post, by its numeric mid.
    Post { mid: String },
    /// A video object `1034:…`, with the post's mid when the link names it.
    Video { oid: String, mid: Option<String> },
    /// A `t.cn` short link.
    Short { url: String, code: String },
    /// An app share page `mapp.api.weibo.cn/fx/{hash}.html`.
    AppShare { url: String, code: String },
}

impl Link {
    /// The target id and canonical URL `detect` answers.
    pub fn target(&self) -> (String, String) {
        match self {
            Link::Post { mid } => (mid.clone(), format!("https://m.weibo.cn/detail/{mid}")),
            Link::Video { oid, mid } => (
                oid.clone(),
                match mid {
                    Some(mid) => format!("https://weibo.com/tv/show/{oid}?mid={mid}"),
                    None => format!("https://weibo.com/tv/show/{oid}"),
                },
            ),
            Link::Short { url, code } | Link::AppShare { url, code } => (code.clone(), url.clone()),
        }
    }
}

/// Recognise a caller's input: a URL, or share text holding one.
pub fn parse_input(input: &str) -> Result<Link> {
    let found = share::first_url(input);
    let raw = found.as_deref().unwrap_or(input.trim());
    if raw.is_empty() || raw.contains(char::is_whitespace) {
        return Err(Failure::unsupported("no Weibo URL in the input"));
    }
    parse_url(raw)
}

/// Recognise one URL.
pub fn parse_url(raw: &str) -> Result<Link> {
    let url = InputUrl::parse(raw)?;
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    if url.host_in(&SHORT_HOSTS) {
        return match segs.as_slice() {
            [code] if is_alnum(code) => Ok(Link::Short {
                url: format!("https://t.cn/{code}"),
                code: code.to_string(),
            }),
            _ => Err(Failure::unsupported("not a t.cn short link")),
        };
    }
    if url.host_in(&[APP_SHARE_HOST]) {
        let code = url
            .path("/fx/{code}.html")
            .and_then(|c| c.get("code").map(str::to_string))
            .filter(|c| is_alnum(c));
        return match code {
            Some(code) => Ok(Link::AppShare {
                url: format!("https://{APP_SHARE_HOST}/fx/{code}.html"),
                code,
            }),
            None => Err(Failure::unsupported("not a Weibo app share link")),
        };
    }
    if url.host_in(&[SHARE_API_HOST]) {
        // share.api.weibo.cn/share/{n},{mid}.html[?weibo_id={mid}]
        let from_path = url.path("/share/{pair}.html").and_then(|c| {
            c.get("pair")
                .and_then(|p| p.split_once(','))
                .map(|(_, m)| m.to_string())
        });
        return match url.query("weibo_id").or(from_path) {
            Some(id) => post(&id),
            None => Err(Failure::unsupported("not a Weibo share link")),
        };
    }
    if url.host_in(&[VIDEO_H5_HOST]) {
        // video.h5.weibo.cn/1034:{oid}/{mid}
        return match segs.as_slice() {
            [oid, mid] if is_video_oid(oid) && is_mid(mid) => Ok(Link::Video {
                oid: oid.to_string(),
                mid: Some(mid.to_string()),
            }),
            _ => Err(Failure::unsupported("not a Weibo video link")),
        };
    }
    if url.host_in(&VIDEO_HOSTS) {
        let oid = match segs.as_slice() {
            ["show"] => url.query("fid"),
            ["show", oid] => Some(oid.to_string()),
            _ => None,
        };
        return match oid.filter(|o| is_video_oid(o)) {
            Some(oid) => Ok(Link::Video {
                oid,
                mid: url.query("mid").filter(|m| is_mid(m)),
            }),
            None => Err(Failure::unsupported("not a Weibo video page")),
        };
    }
    if url.host_in(&MAIN_HOSTS) {
        return main_host(&url, &segs);
    }
    Err(Failure::unsupported(other_host(&url.host)))
}

fn main_host(url: &InputUrl, segs: &[&str]) -> Result<Link> {
    let layer = url.query("layerid").filter(|l| is_mid(l));
    match segs {
        ["status" | "detail", id] => post(id),
        ["tv", "show", oid] if is_video_oid(oid) => Ok(Link::Video {
            oid: oid.to_string(),
            mid: url.query("mid").filter(|m| is_mid(m)),
        }),
        [uid] | ["u", uid] if is_digits(uid) => match layer {
            Some(id) => post(&id),
            None => Err(Failure::unsupported("Weibo profiles are not supported")),
        },
        [uid, id] if is_digits(uid) && is_post_id(id) => post(id),
        _ => Err(Failure::unsupported(rejection(segs))),
    }
}

/// A post by mid or mblogid, normalized to the mid.
fn post(id: &str) -> Result<Link> {
    if is_mid(id) {
        return Ok(Link::Post {
            mid: id.to_string(),
        });
    }
    if is_mblogid(id)
        && let Some(mid) = mblogid_to_mid(id)
    {
        return Ok(Link::Post { mid });
    }
    Err(Failure::unsupported(format!(
        "`{id}` is not a Weibo post id"
    )))
}

/// Why a Weibo URL that is not a single post is refused.
fn rejection(segs: &[&str]) -> String {
    match segs.first().copied().unwrap_or("") {
        "" => "the Weibo home page is not a post".into(),
        "u" | "n" | "profile" => "Weibo profiles are not supported".into(),
        "p" => "Weibo topic, super-topic and page URLs are not supported".into(),
        "l" => "Weibo live pages are not supported".into(),
        "ttarticle" | "article" => "Weibo articles are not supported".into(),
        "search" | "hot" => "Weibo search pages are not supported".into(),
        "tv" => "Weibo video channels and collections are not supported".into(),
        s if is_digits(s) => "Weibo profiles are not supported".into(),
        _ => "not a Weibo post URL".into(),
    }
}

fn other_host(host: &str) -> String {
    if host == "s.weibo.com" {
        "Weibo search is not supported".into()
    } else if host == "card.weibo.com" || host.starts_with("media.weibo") {
        "Weibo articles are not supported".into()
    } else if host.starts_with("huati.") {
        "Weibo topics are not supported".into()
    } else {
        "not a Weibo URL".into()
    }
}

/// A numeric post id (16 digits today; older ones are shorter).
pub fn is_mid(s: &str) -> bool {
    is_digits(s) && (10..=20).contains(&s.len())
}

/// A base62 post id (9 characters today), not all digits.
pub fn is_mblogid(s: &str) -> bool {
    is_alnum(s) && (8..=10).contains(&s.len()) && !is_digits(s)
}

fn is_post_id(s: &str) -> bool {
    is_mid(s) || is_mblogid(s)
}

/// `1034:` followed by digits or (32) lowercase hex characters.
pub fn is_video_oid(s: &str) -> bool {
    match s.strip_prefix("1034:") {
        Some(rest) => {
            !rest.is_empty()
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        }
        None => false,
    }
}

/// The mblogid of a mid (empty when the mid is not convertible).
pub fn mblogid_of(mid: &str) -> String {
    mid_to_mblogid(mid).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_mblogid_to_mid() {
        assert_eq!(
            parse_url("https://weibo.com/7827771738/N4xlMvjhI").unwrap(),
            Link::Post {
                mid: "4910815147462302".into()
            }
        );
        assert_eq!(mblogid_of("4910815147462302"), "N4xlMvjhI");
    }

    #[test]
    fn video_oids() {
        assert!(is_video_oid("1034:4797699866951785"));
        assert!(is_video_oid("1034:0123456789abcdef0123456789abcdef"));
        assert!(!is_video_oid("1034:"));
        assert!(!is_video_oid("1042:123"));
        assert!(!is_video_oid("1034:12G"));
    }
}
