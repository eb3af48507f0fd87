//! TikTok's WAF proof-of-work page, solved inside the extractor.
//!
//! The page has an element with id `cs` whose `class` is base64 of a JSON
//! object; `v.a` is a base64 salt and `v.c` the base64 SHA-256 digest of
//! the salt followed by the ASCII digits of an unknown n in 0..=1,000,000.
//! The answer is that object with `d` = base64(digits of n), serialized and
//! base64-encoded again, sent as a cookie named by the `class` of element
//! `wci`; element `rci` names a second cookie whose value is the `class` of
//! element `rs` (guide §3, yt-dlp #15672, #16223).

use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use mediaparse_sdk::html::attr_by_id;
use mediaparse_sdk::serde_json::{self, Value};
use mediaparse_sdk::{Failure, Result};
use sha2::{Digest, Sha256};

/// Largest n the challenge may use.
const MAX_N: u32 = 1_000_000;
/// The cookie name TikTok used when `wci` is missing.
const DEFAULT_COOKIE: &str = "_wafchallengeid";

/// Standard alphabet, padding optional (pages have been seen without it).
const B64_IN: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);
const B64_OUT: GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Is this page the proof-of-work challenge?
pub fn is_challenge(html: &str) -> bool {
    attr_by_id(html, "cs", "class").is_some_and(|c| !c.trim().is_empty())
}

/// Solve the challenge page: the cookies (name, value) to send with the
/// re-request of the same URL.
pub fn solve(html: &str) -> Result<Vec<(String, String)>> {
    let changed = |what: &str| Failure::changed(format!("WAF challenge page: {what}"));
    let cs = attr_by_id(html, "cs", "class").ok_or_else(|| changed("no `cs` element"))?;
    let json = decode(&cs).ok_or_else(|| changed("`cs` is not base64"))?;
    let mut challenge: Value =
        serde_json::from_slice(&json).map_err(|_| changed("`cs` is not JSON"))?;
    let field = |name: &str| {
        challenge
            .pointer(&format!("/v/{name}"))
            .and_then(Value::as_str)
            .and_then(decode)
    };
    let salt = field("a").ok_or_else(|| changed("no salt `v.a`"))?;
    let digest = field("c").ok_or_else(|| changed("no digest `v.c`"))?;
    let n = search(&salt, &digest).ok_or_else(|| changed("no n up to 1,000,000 matches"))?;
    let object = challenge
        .as_object_mut()
        .ok_or_else(|| changed("`cs` is not an object"))?;
    object.insert("d".into(), B64_OUT.encode(n.to_string()).into());
    let answer = serde_json::to_string(&challenge).map_err(|_| changed("unserializable"))?;

    let name = attr_by_id(html, "wci", "class")
        .filter(|n| is_cookie_name(n))
        .unwrap_or_else(|| DEFAULT_COOKIE.into());
    let mut cookies = vec![(name, B64_OUT.encode(answer))];
    if let (Some(name), Some(value)) = (
        attr_by_id(html, "rci", "class").filter(|n| is_cookie_name(n)),
        attr_by_id(html, "rs", "class").filter(|v| !v.is_empty() && is_cookie_value(v)),
    ) {
        cookies.push((name, value));
    }
    Ok(cookies)
}

fn decode(text: &str) -> Option<Vec<u8>> {
    B64_IN.decode(text.trim()).ok()
}

/// The n in 0..=MAX_N with SHA-256(salt ‖ digits(n)) = digest.
pub fn search(salt: &[u8], digest: &[u8]) -> Option<u32> {
    if digest.len() != 32 {
        return None;
    }
    let mut prefix = Sha256::new();
    prefix.update(salt);
    let mut digits = [0u8; 10];
    (0..=MAX_N).find(|&n| {
        let len = ascii_digits(n, &mut digits);
        let mut hasher = prefix.clone();
        hasher.update(&digits[..len]);
        hasher.finalize().as_slice() == digest
    })
}

/// Write n's decimal digits at the start of `buf`; returns how many.
fn ascii_digits(mut n: u32, buf: &mut [u8; 10]) -> usize {
    let mut tmp = [0u8; 10];
    let mut len = 0;
    loop {
        tmp[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        buf[i] = tmp[len - 1 - i];
    }
    len
}

fn is_cookie_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn is_cookie_value(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b.is_ascii_graphic() && !matches!(b, b';' | b',' | b'"' | b'\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(cs: &str) -> String {
        format!(
            r#"<html><body><p id="wci" class="_wafchallengeid"></p><p id="cs" class="{cs}"></p><p id="rci" class="waforiginalreid"></p><p id="rs" class="MTIz"></p></body></html>"#
        )
    }

    fn challenge_for(salt: &[u8], n: u32) -> String {
        let digest = Sha256::digest([salt, n.to_string().as_bytes()].concat());
        let json = format!(
            r#"{{"v":{{"a":"{}","c":"{}"}}}}"#,
            B64_OUT.encode(salt),
            B64_OUT.encode(digest)
        );
        B64_OUT.encode(json)
    }

    #[test]
    fn digits() {
        let mut buf = [0u8; 10];
        for n in [0, 7, 10, 73, 999_999, 1_000_000, u32::MAX] {
            let len = ascii_digits(n, &mut buf);
            assert_eq!(&buf[..len], n.to_string().as_bytes());
        }
    }

    #[test]
    fn solves_and_builds_both_cookies() {
        let html = page(&challenge_for(b"salty", 73));
        assert!(is_challenge(&html));
        let cookies = solve(&html).unwrap();
        assert_eq!(cookies.len(), 2);
        assert_eq!(cookies[0].0, "_wafchallengeid");
        assert_eq!(cookies[1], ("waforiginalreid".into(), "MTIz".into()));
        let answer: Value =
            serde_json::from_slice(&B64_OUT.decode(&cookies[0].1).unwrap()).unwrap();
        assert_eq!(answer["d"], B64_OUT.encode("73"));
        assert_eq!(answer["v"]["a"], B64_OUT.encode(b"salty"));
    }

    #[test]
    fn finds_the_largest_n() {
        let digest = Sha256::digest(b"s1000000");
        assert_eq!(search(b"s", &digest), Some(1_000_000));
    }

    #[test]
    fn unsolvable_or_malformed_is_upstream_changed() {
        let unsolvable = B64_OUT.encode(format!(
            r#"{{"v":{{"a":"c2FsdA==","c":"{}"}}}}"#,
            B64_OUT.encode([0u8; 32])
        ));
        for cs in [unsolvable.as_str(), "!!!", "bm90IGpzb24", "e30"] {
            let err = solve(&page(cs)).unwrap_err();
            assert_eq!(err.code(), "upstream_error", "{cs}");
        }
    }

    #[test]
    fn missing_cookie_names_fall_back() {
        let html = format!(r#"<div id="cs" class="{}"></div>"#, challenge_for(b"x", 5));
        let cookies = solve(&html).unwrap();
        assert_eq!(cookies.len(), 1);
        assert_eq!(cookies[0].0, DEFAULT_COOKIE);
    }
}
