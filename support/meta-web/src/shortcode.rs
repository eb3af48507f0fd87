//! Instagram / Threads shortcodes: the post's numeric id (`pk`) written
//! big-endian in base 64 over the alphabet `A–Z a–z 0–9 - _` (A=0 … `_`=63).
//! No request is needed to turn one into the other.
//!
//! Private posts carry longer codes: the public code followed by 28 more
//! characters of other data ([`PRIVATE_SUFFIX_LEN`]).

/// The shortcode alphabet, a symbol's value being its index.
pub const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Characters private-post codes carry after the decodable part.
pub const PRIVATE_SUFFIX_LEN: usize = 28;

fn value(b: u8) -> Option<u128> {
    match b {
        b'A'..=b'Z' => Some((b - b'A') as u128),
        b'a'..=b'z' => Some((b - b'a') as u128 + 26),
        b'0'..=b'9' => Some((b - b'0') as u128 + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    }
}

/// True when every character belongs to the alphabet (and there is one).
pub fn is_code(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| value(b).is_some())
}

/// A private post's long code (more than [`PRIVATE_SUFFIX_LEN`] characters).
pub fn is_private(code: &str) -> bool {
    code.len() > PRIVATE_SUFFIX_LEN
}

/// The decodable part of a code: private codes lose their last 28 characters.
pub fn public_part(code: &str) -> &str {
    if is_private(code) && code.is_char_boundary(code.len() - PRIVATE_SUFFIX_LEN) {
        &code[..code.len() - PRIVATE_SUFFIX_LEN]
    } else {
        code
    }
}

/// The numeric id of a code (its public part for private codes); `None` for
/// characters outside the alphabet or a value beyond `u64`.
pub fn decode(code: &str) -> Option<u64> {
    let code = public_part(code);
    if code.is_empty() {
        return None;
    }
    let mut pk: u128 = 0;
    for b in code.bytes() {
        pk = pk.checked_mul(64)?.checked_add(value(b)?)?;
        if pk > u64::MAX as u128 {
            return None;
        }
    }
    u64::try_from(pk).ok()
}

/// The shortcode of a numeric id (no leading `A`s, as Instagram writes them).
pub fn encode(mut pk: u64) -> String {
    if pk == 0 {
        return "A".into();
    }
    let mut out = Vec::new();
    while pk > 0 {
        out.push(ALPHABET[(pk % 64) as usize]);
        pk /= 64;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// A code of `len` characters in `lengths` whose public part decodes to an id.
///
/// ```
/// use mediaparse_meta_web::shortcode::is_post_code;
/// assert!(is_post_code("C8CTu0iswgv", 5..=48));
/// assert!(!is_post_code("abc", 5..=48));
/// ```
pub fn is_post_code(code: &str, lengths: std::ops::RangeInclusive<usize>) -> bool {
    lengths.contains(&code.len()) && is_code(code) && decode(code).is_some()
}

/// A Meta username: 1 to 30 letters, digits, `.` and `_`.
///
/// ```
/// use mediaparse_meta_web::shortcode::is_username;
/// assert!(is_username("earthrise.studio"));
/// assert!(!is_username("a-b"));
/// ```
pub fn is_username(user: &str) -> bool {
    (1..=30).contains(&user.len())
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
}

/// The numeric id of a post's code, refusing private posts' codes.
///
/// ```
/// use mediaparse_meta_web::shortcode::post_pk;
/// assert_eq!(post_pk("C8CTu0iswgv"), Ok(3387356650132408367));
/// assert!(post_pk("C5_A1TQNPrYw4c2g9KAUTPUl8RVHqiAdAcOOSY0").is_err()); // private
/// assert!(post_pk("a.b").is_err());
/// ```
pub fn post_pk(code: &str) -> mediaparse_sdk::Result<u64> {
    if is_private(code) {
        return Err(mediaparse_sdk::Failure::unavailable(
            "this is a private post's link; private posts are unsupported",
        ));
    }
    decode(code).ok_or_else(|| {
        mediaparse_sdk::Failure::unsupported("the shortcode does not decode to a post id")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors from upstream/instagram.md and upstream/threads.md.
    const VECTORS: [(&str, u64); 11] = [
        ("CAnqPB-Jzcj", 2317006284167526179),
        ("CAG3E8-A3wf", 2307774091974900767),
        ("B-NYjoGpQqC", 2273581388251073154),
        ("BqvsDleB3lV", 1922949326347663701),
        ("Chunk8-jurw", 2913440072144448240),
        ("DXeh-kYiIge", 3881689364048676894),
        ("Cs9iEotsiGY", 3115796369385857432),
        ("DZc5TenzF7h", 3917257803106639585),
        ("DXhZAMkljvS", 3882494318431583186),
        ("C8CTu0iswgv", 3387356650132408367),
        ("CuVdfsNtmvh", 3140546036288089057),
    ];

    #[test]
    fn decodes_and_encodes_the_guide_vectors() {
        for (code, pk) in VECTORS {
            assert_eq!(decode(code), Some(pk), "{code}");
            assert_eq!(encode(pk), code, "{pk}");
        }
    }

    #[test]
    fn private_codes_decode_their_public_part() {
        let code = "C5_A1TQNPrYw4c2g9KAUTPUl8RVHqiAdAcOOSY0";
        assert!(is_private(code));
        assert_eq!(public_part(code), "C5_A1TQNPrY");
        assert_eq!(decode(code), decode("C5_A1TQNPrY"));
        assert!(!is_private("CAnqPB-Jzcj"));
    }

    #[test]
    fn rejects_foreign_characters_and_overflow() {
        assert_eq!(decode(""), None);
        assert_eq!(decode("abc!"), None);
        assert_eq!(decode("ABC DEF"), None);
        assert_eq!(decode("____________"), None); // 64^12 - 1 > u64::MAX
        assert!(decode("___________").is_none()); // 64^11 - 1 > u64::MAX too
        assert_eq!(decode("P__________"), Some(u64::MAX));
        assert!(is_code("a-_Z9"));
        assert!(!is_code("a.b"));
        assert_eq!(encode(0), "A");
        assert_eq!(encode(63), "_");
        assert_eq!(decode("BA"), Some(64));
    }
}
