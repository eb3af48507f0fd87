//! Which Threads URLs name one post (SPEC.md shapes, upstream/threads.md §1).

use mediaparse_meta_web::shortcode;
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Failure, Result, Target};

pub const PLATFORM: &str = "threads";
pub const WWW: &str = "https://www.threads.com";

pub const URL_HOSTS: [&str; 4] = [
    "threads.net",
    "www.threads.net",
    "threads.com",
    "www.threads.com",
];

pub fn valid_code(code: &str) -> bool {
    shortcode::is_post_code(code, 5..=64)
}

fn valid_share_code(code: &str) -> bool {
    (4..=32).contains(&code.len()) && shortcode::is_code(code)
}

/// The shortcode and canonical URL of a post path: `/@{user}/post/{code}`
/// (optionally `/media`), or the legacy author-less `/t/{code}` of 2023
/// shares (upstream/threads.md §1), which Threads redirects to the former.
pub fn post_ref(segments: &[&str]) -> Option<(String, String)> {
    match segments {
        [user, "post", code] | [user, "post", code, "media"] => {
            let user = user.strip_prefix('@')?;
            (shortcode::is_username(user) && valid_code(code))
                .then(|| (code.to_string(), format!("{WWW}/@{user}/post/{code}")))
        }
        ["t", code] => valid_code(code).then(|| (code.to_string(), format!("{WWW}/t/{code}"))),
        _ => None,
    }
}

/// A post's target: its id is the decoded shortcode.
pub fn post_target(code: &str, canonical_url: String, input: &str) -> Target {
    let id = shortcode::decode(code)
        .map(|pk| pk.to_string())
        .unwrap_or_else(|| code.to_string());
    Target::new(PLATFORM, id, canonical_url, input)
}

pub fn detect(input: &str) -> Result<Target> {
    let raw = mediaparse_sdk::share::first_url(input).unwrap_or_else(|| input.trim().to_string());
    let url = InputUrl::parse(&raw)?;
    if !url.host_in(&URL_HOSTS) {
        return Err(Failure::unsupported("not a Threads URL"));
    }
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    if let ["share", code] = segs.as_slice()
        && valid_share_code(code)
    {
        return Ok(Target::new(
            PLATFORM,
            *code,
            format!("{WWW}/share/{code}/"),
            input,
        ));
    }
    match post_ref(&segs) {
        Some((code, canonical_url)) => Ok(post_target(&code, canonical_url, input)),
        None => Err(Failure::unsupported(
            "not a single Threads post (profiles, feeds, search and activity pages are unsupported)",
        )),
    }
}

/// Is this target a share link still to be resolved?
pub fn is_share(target: &Target) -> bool {
    target.canonical_url.starts_with(&format!("{WWW}/share/"))
}

/// `(shortcode, canonical URL)` of a post target.
pub fn canonical_post(target: &Target) -> Option<(String, String)> {
    let url = InputUrl::parse(&target.canonical_url).ok()?;
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    post_ref(&segs)
}
