//! Bilibili video ids: the decimal `aid` ("av" number) and the `bvid`
//! ("BV1…") name the same video. The conversion is a fixed, public,
//! offline transform (a permuted base-58 encoding of `aid` XOR a constant),
//! so `/video/av…` links need no upstream request to find their `BV` id.

const TABLE: &[u8; 58] = b"FcwAPNKTMug3GV5Lj7EJnHpWsx4tb8haYeviqBz6rkCy12mUSDQX9RdoZf";
const XOR: u64 = 23_442_827_791_579;
/// `aid` values are below this bound (2^51).
pub const MAX_AID: u64 = 1 << 51;
const MASK: u64 = MAX_AID - 1;
const BASE: u64 = 58;
/// Positions swapped after the base-58 digits are written.
const SWAPS: [(usize, usize); 2] = [(3, 9), (4, 7)];

/// `aid` → `BV1…` (12 characters). `None` for 0 or an aid of 2^51 and above.
pub fn av_to_bv(aid: u64) -> Option<String> {
    if aid == 0 || aid >= MAX_AID {
        return None;
    }
    let mut out = *b"BV1000000000";
    let mut t = (MAX_AID | aid) ^ XOR;
    let mut i = out.len() - 1;
    while t > 0 && i >= 3 {
        out[i] = TABLE[(t % BASE) as usize];
        t /= BASE;
        i -= 1;
    }
    for (a, b) in SWAPS {
        out.swap(a, b);
    }
    String::from_utf8(out.to_vec()).ok()
}

/// `BV1…` (any case of the `BV` prefix) → `aid`. `None` when the text is
/// not a well-formed BV id.
pub fn bv_to_av(bvid: &str) -> Option<u64> {
    let bytes = normalize(bvid)?.into_bytes();
    let mut chars = bytes;
    for (a, b) in SWAPS.iter().rev() {
        chars.swap(*a, *b);
    }
    let mut value: u64 = 0;
    for &c in &chars[3..] {
        let digit = TABLE.iter().position(|&t| t == c)? as u64;
        value = value.checked_mul(BASE)?.checked_add(digit)?;
    }
    let aid = (value & MASK) ^ XOR;
    (aid != 0).then_some(aid)
}

/// A well-formed BV id with its prefix normalised to `BV` (`bv1…` → `BV1…`):
/// `BV1` followed by 9 base-58 characters (no `0`, `I`, `O`, `l`).
pub fn normalize(bvid: &str) -> Option<String> {
    let b = bvid.as_bytes();
    if b.len() != 12 || !b[..2].eq_ignore_ascii_case(b"BV") || b[2] != b'1' {
        return None;
    }
    if !b[3..].iter().all(|c| TABLE.contains(c)) {
        return None;
    }
    Some(format!("BV{}", &bvid[2..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guide's checked vectors.
    const VECTORS: [(u64, &str); 4] = [
        (99_999_999, "BV1y7411Q7Eq"),
        (85_440_373, "BV117411r7R1"),
        (1_074_402, "BV11x411K7CN"),
        (115_871_406_101_538, "BV1pR6UB3ENW"),
    ];

    #[test]
    fn converts_both_ways() {
        for (aid, bvid) in VECTORS {
            assert_eq!(av_to_bv(aid).as_deref(), Some(bvid), "av{aid}");
            assert_eq!(bv_to_av(bvid), Some(aid), "{bvid}");
        }
    }

    #[test]
    fn accepts_lower_case_prefix_only() {
        assert_eq!(bv_to_av("bv117411r7R1"), Some(85_440_373));
        assert_eq!(normalize("bV117411r7R1").as_deref(), Some("BV117411r7R1"));
        // The body is case-sensitive base 58.
        assert_ne!(bv_to_av("BV117411R7R1"), Some(85_440_373));
    }

    #[test]
    fn rejects_malformed_ids() {
        for bad in [
            "",
            "BV1",
            "BV117411r7R",
            "BV117411r7R12",
            "BV217411r7R1",
            "BV117411r7R0",
            "BV1O7411r7R1",
            "BV1l7411r7R1",
            "XX117411r7R1",
            "BV1１7411r7R",
        ] {
            assert_eq!(bv_to_av(bad), None, "{bad:?}");
        }
        assert_eq!(av_to_bv(0), None);
        assert_eq!(av_to_bv(MAX_AID), None);
        assert!(av_to_bv(MAX_AID - 1).is_some());
    }

    #[test]
    fn round_trips_a_spread_of_aids() {
        let mut aid = 1u64;
        while aid < MAX_AID {
            let bv = av_to_bv(aid).unwrap_or_default();
            assert_eq!(bv_to_av(&bv), Some(aid), "av{aid} -> {bv}");
            aid = aid * 7 + 3;
        }
    }
}
