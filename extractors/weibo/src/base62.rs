//! Base62 with the alphabet `0-9a-zA-Z`, and Weibo's grouped mid ↔ mblogid
//! conversion built on it (offline, no request needed).
//!
//! Weibo's `mblogid` is the decimal `mid` cut from the right into groups of
//! seven digits, each group base62-encoded and (except the leftmost) padded
//! to four characters; the reverse cuts four characters at a time and pads
//! every group but the leftmost to seven digits.

const ALPHABET: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Encode a number in base62 (`0` is `"0"`).
pub fn encode(mut n: u64) -> String {
    if n == 0 {
        return "0".into();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(ALPHABET[(n % 62) as usize]);
        n /= 62;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// Decode a base62 string; `None` on an empty string, a foreign character
/// or overflow.
pub fn decode(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.bytes().try_fold(0u64, |acc, b| {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'z' => b - b'a' + 10,
            b'A'..=b'Z' => b - b'A' + 36,
            _ => return None,
        };
        acc.checked_mul(62)?.checked_add(u64::from(digit))
    })
}

/// Cut `s` from the right into chunks of `size` (the leftmost may be shorter).
fn chunks_from_right(s: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut end = s.len();
    while end > 0 {
        let start = end.saturating_sub(size);
        out.push(&s[start..end]);
        end = start;
    }
    out.reverse();
    out
}

/// Weibo `mid` (decimal digits) → `mblogid`. `None` unless `mid` is digits.
///
/// ```
/// use mediaparse_extractor_weibo::base62::mid_to_mblogid;
/// assert_eq!(mid_to_mblogid("4189191225395228").as_deref(), Some("FBqgOmDxO"));
/// ```
pub fn mid_to_mblogid(mid: &str) -> Option<String> {
    if mid.is_empty() || !mid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut out = String::new();
    for (i, group) in chunks_from_right(mid, 7).into_iter().enumerate() {
        let encoded = encode(group.parse().ok()?);
        if i > 0 {
            out.push_str(&"0".repeat(4usize.saturating_sub(encoded.len())));
        }
        out.push_str(&encoded);
    }
    Some(out)
}

/// Weibo `mblogid` → `mid` (decimal digits). `None` unless `mblogid` is base62.
///
/// ```
/// use mediaparse_extractor_weibo::base62::mblogid_to_mid;
/// assert_eq!(mblogid_to_mid("N4xlMvjhI").as_deref(), Some("4910815147462302"));
/// ```
pub fn mblogid_to_mid(mblogid: &str) -> Option<String> {
    if mblogid.is_empty() || !mblogid.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let mut out = String::new();
    for (i, group) in chunks_from_right(mblogid, 4).into_iter().enumerate() {
        let decoded = decode(group)?.to_string();
        if i > 0 {
            if decoded.len() > 7 {
                return None;
            }
            out.push_str(&"0".repeat(7 - decoded.len()));
        }
        out.push_str(&decoded);
    }
    // A leading zero group would not round-trip.
    let trimmed = out.trim_start_matches('0');
    Some(if trimmed.is_empty() {
        "0".into()
    } else {
        trimmed.into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guide's test vectors (upstream/weibo.md), checked both ways.
    const VECTORS: [(&str, &str); 6] = [
        ("4189191225395228", "FBqgOmDxO"),
        ("4910815147462302", "N4xlMvjhI"),
        ("5232630992732508", "QdGSDbsQI"),
        ("4857883315410503", "MohObmHwb"),
        ("4857881961438732", "MohM062hm"),
        ("4857880680859822", "MohJW3BG6"),
    ];

    #[test]
    fn weibo_vectors_both_ways() {
        for (mid, mblogid) in VECTORS {
            assert_eq!(mid_to_mblogid(mid).as_deref(), Some(mblogid), "{mid}");
            assert_eq!(mblogid_to_mid(mblogid).as_deref(), Some(mid), "{mblogid}");
        }
    }

    #[test]
    fn plain_base62() {
        assert_eq!(encode(0), "0");
        assert_eq!(encode(61), "Z");
        assert_eq!(encode(62), "10");
        assert_eq!(decode("10"), Some(62));
        assert_eq!(decode(&encode(u64::MAX)), Some(u64::MAX));
        assert_eq!(decode("ZZZZZZZZZZZZ"), None); // overflow
        assert_eq!(decode("a-b"), None);
        assert_eq!(decode(""), None);
    }

    #[test]
    fn inner_groups_are_padded() {
        // A middle group of "0000001" must keep its four characters.
        assert_eq!(mid_to_mblogid("10000001").as_deref(), Some("10001"));
        assert_eq!(mblogid_to_mid("10001").as_deref(), Some("10000001"));
    }

    #[test]
    fn rejects_foreign_input() {
        assert_eq!(mid_to_mblogid("12a"), None);
        assert_eq!(mid_to_mblogid(""), None);
        assert_eq!(mblogid_to_mid("ab-c"), None);
        assert_eq!(mblogid_to_mid(""), None);
        // a 4-character group above 9999999 cannot come from a mid
        assert_eq!(mblogid_to_mid("ZZZZZ"), None);
    }
}
