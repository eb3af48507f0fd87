//! Input URLs: parse once, then match hosts and path shapes with plain
//! string work (a fresh wasm instance per parse makes regex compilation a
//! per-request cost, so the SDK has none).

use crate::Failure;

/// A caller's URL, normalized: lower-case host without `www.`-style noise
/// kept as is, percent-decoded non-empty path segments, query pairs.
#[derive(Clone, Debug)]
pub struct InputUrl {
    /// The parsed URL.
    pub url: url::Url,
    /// Lower-case host, no trailing dot.
    pub host: String,
    /// Percent-decoded path segments; empty ones (from `//` or a trailing `/`) dropped.
    pub segments: Vec<String>,
}

impl InputUrl {
    /// Parse an absolute http(s) URL. A missing scheme is taken as https.
    pub fn parse(input: &str) -> Result<Self, Failure> {
        let trimmed = input.trim();
        let with_scheme = if trimmed.contains("://") {
            trimmed.to_string()
        } else {
            format!("https://{trimmed}")
        };
        let url = url::Url::parse(&with_scheme)
            .map_err(|e| Failure::unsupported(format!("not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Failure::unsupported(
                "only http and https URLs are accepted",
            ));
        }
        let host = url
            .host_str()
            .ok_or_else(|| Failure::unsupported("URL has no host"))?
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let segments = url
            .path_segments()
            .map(|segs| {
                segs.filter(|s| !s.is_empty())
                    .map(|s| {
                        percent_encoding::percent_decode_str(s)
                            .decode_utf8_lossy()
                            .into_owned()
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(InputUrl {
            url,
            host,
            segments,
        })
    }

    /// First value of a query parameter, decoded.
    pub fn query(&self, name: &str) -> Option<String> {
        self.url
            .query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }

    /// Does the host match one of these patterns (see [`host_matches`])?
    pub fn host_in(&self, patterns: &[&str]) -> bool {
        patterns.iter().any(|p| host_matches(&self.host, p))
    }

    /// Match the path against a shape such as `/@{user}/video/{id}`.
    pub fn path(&self, shape: &str) -> Option<Captures> {
        match_path(shape, &self.segments)
    }
}

/// `*.example.com` matches `example.com` and every subdomain; anything else
/// matches exactly. Case-insensitive.
pub fn host_matches(host: &str, pattern: &str) -> bool {
    let host = host.trim_end_matches('.');
    match pattern.strip_prefix("*.") {
        Some(base) => {
            host.eq_ignore_ascii_case(base)
                || (host.len() > base.len()
                    && host[host.len() - base.len()..].eq_ignore_ascii_case(base)
                    && host.as_bytes()[host.len() - base.len() - 1] == b'.')
        }
        None => host.eq_ignore_ascii_case(pattern),
    }
}

/// Named values captured by a path shape.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captures(Vec<(String, String)>);

impl Captures {
    /// A captured value by name.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Match path segments against a shape. Each shape segment is a literal,
/// or `prefix{name}suffix` capturing a non-empty middle (`{name?}` may be
/// empty, as the user in `/@{user?}/video/{id}`). A final `*`
/// accepts any further segments; without it the lengths must agree.
/// Literals compare case-sensitively, as servers do.
///
/// ```
/// use mediaparse_sdk::urls::match_path;
/// let segs: Vec<String> = ["@someone", "video", "7305827432509082913"].iter().map(|s| s.to_string()).collect();
/// let caps = match_path("/@{user}/video/{id}", &segs).unwrap();
/// assert_eq!(caps.get("id"), Some("7305827432509082913"));
/// assert!(match_path("/@{user}/photo/{id}", &segs).is_none());
/// ```
pub fn match_path(shape: &str, segments: &[String]) -> Option<Captures> {
    let parts: Vec<&str> = shape.split('/').filter(|s| !s.is_empty()).collect();
    let (parts, open_ended) = match parts.split_last() {
        Some((&"*", head)) => (head, true),
        _ => (&parts[..], false),
    };
    if segments.len() < parts.len() || (!open_ended && segments.len() != parts.len()) {
        return None;
    }
    let mut caps = Vec::new();
    for (part, seg) in parts.iter().zip(segments) {
        match (part.find('{'), part.find('}')) {
            (Some(open), Some(close)) if close > open => {
                let (prefix, name, suffix) =
                    (&part[..open], &part[open + 1..close], &part[close + 1..]);
                let middle = seg.strip_prefix(prefix)?.strip_suffix(suffix)?;
                let (name, may_be_empty) = match name.strip_suffix('?') {
                    Some(name) => (name, true),
                    None => (name, false),
                };
                if middle.is_empty() && !may_be_empty {
                    return None;
                }
                caps.push((name.to_string(), middle.to_string()));
            }
            _ if part == seg => {}
            _ => return None,
        }
    }
    Some(Captures(caps))
}

/// True when every character is an ASCII digit (and there is at least one).
pub fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// True when every character is an ASCII letter or digit (and there is at least one).
pub fn is_alnum(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// An http or scheme-relative (`//host/…`) media URL as https; anything
/// else unchanged. Platforms still hand out `http://` CDN links.
///
/// ```
/// use mediaparse_sdk::urls::https;
/// assert_eq!(https("http://cdn.example.com/a.jpg"), "https://cdn.example.com/a.jpg");
/// assert_eq!(https("//cdn.example.com/a.jpg"), "https://cdn.example.com/a.jpg");
/// assert_eq!(https("https://cdn.example.com/a.jpg"), "https://cdn.example.com/a.jpg");
/// ```
pub fn https(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("http://") {
        format!("https://{rest}")
    } else if url.starts_with("//") {
        format!("https:{url}")
    } else {
        url.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_case_slashes_and_encoding() {
        let u = InputUrl::parse("  HTTP://WWW.TikTok.COM./@a%2Eb//video/12/?lang=en ").unwrap();
        assert_eq!(u.host, "www.tiktok.com");
        assert_eq!(u.segments, ["@a.b", "video", "12"]);
        assert_eq!(u.query("lang").as_deref(), Some("en"));
        assert_eq!(
            u.path("/@{user}/video/{id}").unwrap().get("user"),
            Some("a.b")
        );
    }

    #[test]
    fn rejects_non_web_urls() {
        assert!(InputUrl::parse("ftp://tiktok.com/x").is_err());
        assert!(InputUrl::parse("javascript:alert(1)").is_err());
        assert!(InputUrl::parse("https://").is_err());
    }

    #[test]
    fn host_patterns() {
        assert!(host_matches("tiktok.com", "*.tiktok.com"));
        assert!(host_matches("vm.TikTok.com", "*.tiktok.com"));
        assert!(!host_matches("eviltiktok.com", "*.tiktok.com"));
        assert!(!host_matches("tiktok.com.evil.net", "*.tiktok.com"));
        assert!(host_matches("www.tiktok.com", "www.tiktok.com"));
    }

    #[test]
    fn shapes_with_prefixes_suffixes_and_tails() {
        let segs = |p: &str| {
            p.split('/')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            match_path("/v/{id}.html", &segs("/v/123.html"))
                .unwrap()
                .get("id"),
            Some("123")
        );
        assert_eq!(
            match_path("/@{user?}/video/{id}", &segs("/@/video/1"))
                .unwrap()
                .get("user"),
            Some("")
        );
        assert!(match_path("/@{user}/video/{id}", &segs("/@/video/1")).is_none());
        assert!(match_path("/t/{code}", &segs("/t/abc/extra")).is_none());
        assert!(match_path("/t/{code}/*", &segs("/t/abc/extra")).is_some());
        assert!(match_path("/video/BV{id}", &segs("/video/BV")).is_none());
    }
}
