//! Recognising X / Twitter post URLs (guide section 1) with string work.

use crate::PLATFORM;
use mediaparse_sdk::share::first_url;
use mediaparse_sdk::urls::{InputUrl, is_digits};
use mediaparse_sdk::{Failure, Target};

/// The two sites, each bare or with `www.`, `mobile.` or `m.`.
const SITES: [&str; 2] = ["x.com", "twitter.com"];
const PREFIXES: [&str; 4] = ["", "www.", "mobile.", "m."];

fn is_post_host(host: &str) -> bool {
    SITES
        .iter()
        .any(|site| PREFIXES.iter().any(|p| host == format!("{p}{site}")))
}

/// A user name: 1–15 of `[A-Za-z0-9_]`.
pub fn is_screen_name(s: &str) -> bool {
    (1..=15).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A post id: a snowflake of 1–20 digits.
pub fn is_post_id(s: &str) -> bool {
    (1..=20).contains(&s.len()) && is_digits(s)
}

/// Remove whitespace (literal or `%20`) that users leave after `/status`
/// (`/status/ 123`, `/status /123`), so the URL survives share-text cutting.
fn close_status_gap(input: &str) -> String {
    let lower = input.to_ascii_lowercase();
    let mut out = String::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        let rest = &lower[i..];
        let word = if rest.starts_with("/statuses") {
            "/statuses".len()
        } else if rest.starts_with("/status") {
            "/status".len()
        } else {
            0
        };
        if word == 0 {
            let ch = input[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        out.push_str(&input[i..i + word]);
        i += word;
        // gap, optional slash, gap, then digits
        let skip_gap = |mut j: usize| {
            loop {
                if lower[j..].starts_with("%20") {
                    j += 3;
                } else if let Some(c) = input[j..].chars().next().filter(|c| c.is_whitespace()) {
                    j += c.len_utf8();
                } else {
                    return j;
                }
            }
        };
        let mut j = skip_gap(i);
        let slash = input[j..].starts_with('/');
        if slash {
            j = skip_gap(j + 1);
        }
        if slash && input[j..].starts_with(|c: char| c.is_ascii_digit()) {
            out.push('/');
            i = j;
        }
    }
    out
}

/// Recognise a caller's input: one post.
pub fn detect(input: &str) -> Result<Target, Failure> {
    let id = post_id(input)?;
    Ok(Target::new(
        PLATFORM,
        &id,
        format!("https://x.com/i/status/{id}"),
        input,
    ))
}

/// The post id in the caller's input, or `unsupported-url`.
pub fn post_id(input: &str) -> Result<String, Failure> {
    let input = close_status_gap(input);
    let raw = first_url(&input).unwrap_or_else(|| input.trim().to_string());
    let url = InputUrl::parse(&raw)?;
    if !is_post_host(&url.host) {
        return Err(Failure::unsupported(format!(
            "{} is not an X / Twitter post host (media-CDN and short links are not posts)",
            url.host
        )));
    }
    let segs: Vec<&str> = url.segments.iter().map(|s| s.trim()).collect();
    let id = match segs.as_slice() {
        ["i", "web", "status", id, rest @ ..] => tail_ok(rest).then_some(*id),
        [user, "status" | "statuses", id, rest @ ..] if is_screen_name(user) => {
            tail_ok(rest).then_some(*id)
        }
        ["u", user, id] if is_screen_name(user) => Some(*id),
        _ => None,
    };
    match id {
        Some(id) if is_post_id(id) => Ok(id.to_string()),
        _ => Err(Failure::unsupported(
            "not a single X / Twitter post (profiles, search, spaces, communities, lists and broadcasts are not supported)",
        )),
    }
}

/// What may follow the id: `/video/{n}`, `/photo/{n}` (1-based, selecting
/// nothing: all media are returned), optionally `/mediaviewer`; or
/// `/mediaviewer` alone.
fn tail_ok(rest: &[&str]) -> bool {
    let viewer = |s: &str| s.eq_ignore_ascii_case("mediaviewer");
    match rest {
        [] => true,
        [v] => viewer(v),
        ["video" | "photo", n] => is_index(n),
        ["video" | "photo", n, v] => is_index(n) && viewer(v),
        _ => false,
    }
}

fn is_index(n: &str) -> bool {
    (1..=2).contains(&n.len()) && is_digits(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closes_gaps_after_status() {
        assert_eq!(
            close_status_gap("https://x.com/a/status/ 123"),
            "https://x.com/a/status/123"
        );
        assert_eq!(
            close_status_gap("https://x.com/a/status%20/%20%20123"),
            "https://x.com/a/status/123"
        );
        assert_eq!(
            close_status_gap("https://x.com/a/status /123 nice"),
            "https://x.com/a/status/123 nice"
        );
        assert_eq!(close_status_gap("/status/ abc"), "/status/ abc");
        assert_eq!(close_status_gap("看 /Status/\t9"), "看 /Status/9");
    }

    #[test]
    fn names_and_ids() {
        assert!(is_screen_name("DivineDropbear"));
        assert!(is_screen_name("_"));
        assert!(!is_screen_name("a_very_long_name_x"));
        assert!(!is_screen_name("bad-name"));
        assert!(is_post_id("20"));
        assert!(is_post_id("1841206275088290279"));
        assert!(!is_post_id("123456789012345678901"));
        assert!(!is_post_id("12a"));
    }
}
