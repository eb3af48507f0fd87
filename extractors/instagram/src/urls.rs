//! Which Instagram URLs name one post (SPEC.md shapes, upstream/instagram.md §1).

use mediaparse_meta_web::shortcode;
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Failure, Result, Target};

pub const PLATFORM: &str = "instagram";
pub const WWW: &str = "https://www.instagram.com";

/// Hosts a caller's URL may use.
pub const URL_HOSTS: [&str; 5] = [
    "instagram.com",
    "www.instagram.com",
    "m.instagram.com",
    "instagr.am",
    "www.instagr.am",
];

/// Path kinds that carry a shortcode right after them.
const POST_KINDS: [&str; 5] = ["p", "reel", "reels", "tv", "r"];

/// First path segments that are never a username.
const RESERVED: [&str; 12] = [
    "share", "stories", "explore", "accounts", "direct", "s", "reels", "p", "reel", "tv", "r",
    "about",
];

/// A shortcode (public or private) whose public part decodes to an id.
pub fn valid_code(code: &str) -> bool {
    shortcode::is_post_code(code, 5..=48)
}

fn valid_share_id(id: &str) -> bool {
    (1..=32).contains(&id.len()) && shortcode::is_code(id)
}

/// The shortcode in an Instagram post path (also used on redirect targets).
pub fn post_code(segments: &[&str]) -> Option<String> {
    let code = match segments {
        [kind, code] if POST_KINDS.contains(kind) => code,
        [kind, code, "embed"] | [kind, code, "embed", "captioned"]
            if POST_KINDS[..4].contains(kind) =>
        {
            code
        }
        [user, "p" | "reel" | "tv", code]
            if shortcode::is_username(user) && !RESERVED.contains(user) =>
        {
            code
        }
        _ => return None,
    };
    valid_code(code).then(|| code.to_string())
}

pub fn post_target(code: &str, input: &str) -> Target {
    Target::new(PLATFORM, code, format!("{WWW}/p/{code}/"), input)
}

pub fn detect(input: &str) -> Result<Target> {
    let raw = mediaparse_sdk::share::first_url(input).unwrap_or_else(|| input.trim().to_string());
    let url = InputUrl::parse(&raw)?;
    if !url.host_in(&URL_HOSTS) {
        return Err(Failure::unsupported("not an Instagram URL"));
    }
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["share", id] if valid_share_id(id) => {
            return Ok(share_target(None, id, input));
        }
        ["share", kind @ ("p" | "reel" | "reels" | "tv"), id] if valid_share_id(id) => {
            return Ok(share_target(Some(kind), id, input));
        }
        // The mobile host's `/p/{id}` may carry the numeric media id.
        ["p", id]
            if url.host == "m.instagram.com"
                && id.len() >= 12
                && id.bytes().all(|b| b.is_ascii_digit()) =>
        {
            let pk: u64 = id
                .parse()
                .map_err(|_| Failure::unsupported("media id out of range"))?;
            return Ok(post_target(&shortcode::encode(pk), input));
        }
        _ => {}
    }
    match post_code(&segs) {
        Some(code) => Ok(post_target(&code, input)),
        None => Err(Failure::unsupported(
            "not a single Instagram post (profiles, stories, highlights, explore and direct pages are unsupported)",
        )),
    }
}

fn share_target(kind: Option<&str>, id: &str, input: &str) -> Target {
    let path = match kind {
        Some(kind) => format!("share/{kind}/{id}/"),
        None => format!("share/{id}/"),
    };
    Target::new(PLATFORM, id, format!("{WWW}/{path}"), input)
}

/// Is this target a share link still to be resolved?
pub fn is_share(target: &Target) -> bool {
    target.canonical_url.starts_with(&format!("{WWW}/share/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_codes_in_paths() {
        assert_eq!(
            post_code(&["p", "CAnqPB-Jzcj"]).as_deref(),
            Some("CAnqPB-Jzcj")
        );
        assert_eq!(
            post_code(&["natgeo", "reel", "Chunk8-jurw"]).as_deref(),
            Some("Chunk8-jurw")
        );
        assert_eq!(post_code(&["stories", "p", "Chunk8-jurw"]), None);
        assert_eq!(post_code(&["reels", "audio", "123"]), None);
        assert_eq!(post_code(&["r", "Chunk8-jurw", "embed"]), None);
        assert_eq!(post_code(&["p", "a.b"]), None);
    }
}
