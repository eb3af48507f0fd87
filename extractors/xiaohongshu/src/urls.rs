//! Recognising Xiaohongshu links: note pages (with their `xsec_token`),
//! short links, and the pages that are not single notes.

use mediaparse_sdk::encode::strict;
use mediaparse_sdk::urls::{InputUrl, is_alnum};
use mediaparse_sdk::{Failure, Result, share};

/// Hosts that serve note pages (the international `rednote.com` mirrors them).
pub const NOTE_HOSTS: [&str; 4] = [
    "www.xiaohongshu.com",
    "xiaohongshu.com",
    "www.rednote.com",
    "rednote.com",
];

/// Short-link hosts of the app's share sheet.
pub const SHORT_HOSTS: [&str; 4] = [
    "xhslink.com",
    "www.xhslink.com",
    "xhslink.cn",
    "www.xhslink.cn",
];

/// One note, as a link names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteRef {
    /// 24 lowercase hex characters.
    pub id: String,
    /// The per-note access token of share links (mandatory upstream since 2024).
    pub xsec_token: Option<String>,
    pub xsec_source: Option<String>,
}

impl NoteRef {
    /// The canonical note page: always on www.xiaohongshu.com, `/explore/`,
    /// with the token and its source kept.
    pub fn page_url(&self) -> String {
        let mut url = format!("https://www.xiaohongshu.com/explore/{}", self.id);
        if let Some(token) = &self.xsec_token {
            let source = self.xsec_source.as_deref().unwrap_or("pc_share");
            url.push_str(&format!(
                "?xsec_token={}&xsec_source={}",
                strict(token),
                strict(source)
            ));
        }
        url
    }
}

/// What a link points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    Note(NoteRef),
    /// A short link to resolve through its redirect (normalized to https).
    Short {
        url: String,
        code: String,
    },
}

/// Recognise a caller's input: a URL, or share text holding one.
pub fn parse_input(input: &str) -> Result<Link> {
    let found = share::first_url(input);
    let raw = found.as_deref().unwrap_or(input.trim());
    if raw.is_empty() || raw.contains(char::is_whitespace) {
        return Err(Failure::unsupported("no Xiaohongshu URL in the input"));
    }
    parse_url(raw)
}

/// Recognise one URL.
pub fn parse_url(raw: &str) -> Result<Link> {
    let url = InputUrl::parse(raw)?;
    if url.host_in(&SHORT_HOSTS) {
        return short_link(&url);
    }
    if !url.host_in(&NOTE_HOSTS) {
        return Err(Failure::unsupported("not a Xiaohongshu URL"));
    }
    let id = url
        .path("/explore/{id}")
        .or_else(|| url.path("/discovery/item/{id}"))
        .or_else(|| url.path("/user/profile/{uid}/{id}"))
        .and_then(|caps| caps.get("id").map(str::to_string));
    let Some(id) = id else {
        return Err(Failure::unsupported(rejection(&url.segments)));
    };
    if !is_note_id(&id) {
        return Err(Failure::unsupported(format!(
            "`{id}` is not a Xiaohongshu note id"
        )));
    }
    let non_empty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    Ok(Link::Note(NoteRef {
        id: id.to_ascii_lowercase(),
        xsec_token: non_empty(url.query("xsec_token")),
        xsec_source: non_empty(url.query("xsec_source")),
    }))
}

fn short_link(url: &InputUrl) -> Result<Link> {
    let segs = &url.segments;
    let ok_code = |c: &str| is_alnum(c) && c.len() <= 32;
    let code = match segs.as_slice() {
        [code] if ok_code(code) => code.clone(),
        [kind, code]
            if kind.len() == 1 && kind.bytes().all(|b| b.is_ascii_lowercase()) && ok_code(code) =>
        {
            code.clone()
        }
        _ => return Err(Failure::unsupported("not a Xiaohongshu short link")),
    };
    let host = if url.host.ends_with(".cn") {
        "xhslink.cn"
    } else {
        "xhslink.com"
    };
    Ok(Link::Short {
        url: format!("https://{host}/{}", segs.join("/")),
        code,
    })
}

/// Why a Xiaohongshu URL that is not a note page is refused.
fn rejection(segments: &[String]) -> String {
    let first = segments.first().map(String::as_str).unwrap_or("");
    match first {
        "" => "the Xiaohongshu home page is not a note".into(),
        "user" => "Xiaohongshu profiles are not supported".into(),
        "search_result" | "search" => "Xiaohongshu search pages are not supported".into(),
        "board" => "Xiaohongshu collections (boards) are not supported".into(),
        "explore" => "the explore feed is not a note".into(),
        "page" | "topic" | "topics" => "Xiaohongshu topic pages are not supported".into(),
        "livestream" | "live" => "Xiaohongshu live pages are not supported".into(),
        _ => "not a Xiaohongshu note URL".into(),
    }
}

/// 24 hex characters (the first 8 are a unix-time prefix).
pub fn is_note_id(id: &str) -> bool {
    id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_url_keeps_token_and_source() {
        let n = NoteRef {
            id: "674051740000000007027a15".into(),
            xsec_token: Some("CBa-b_c=".into()),
            xsec_source: None,
        };
        assert_eq!(
            n.page_url(),
            "https://www.xiaohongshu.com/explore/674051740000000007027a15?xsec_token=CBa-b_c%3D&xsec_source=pc_share"
        );
    }

    #[test]
    fn short_links_normalize_to_https() {
        assert_eq!(
            parse_url("http://XHSLINK.com/a/AbC123").unwrap(),
            Link::Short {
                url: "https://xhslink.com/a/AbC123".into(),
                code: "AbC123".into()
            }
        );
        assert!(parse_url("https://xhslink.com/a/b/c").is_err());
    }
}
