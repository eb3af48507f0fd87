//! The `dm_*` browser-fingerprint parameters the WBI playurl expects
//! (Bilibili's `bili-user-fingerprint` script, `queryUserLog`):
//!
//! - `dm_img_list`: mouse-move/click samples; `[]` (no pointer activity yet,
//!   which the API accepts);
//! - `dm_img_str`: base64 of the WebGL `VERSION` string, last two characters
//!   cut;
//! - `dm_cover_img_str`: base64 of the unmasked WebGL renderer followed by the
//!   vendor, last two characters cut;
//! - `dm_img_inter`: compact JSON `{"ds":[],"wh":[..],"of":[..]}` where, with
//!   `r` below 114 and `s` below 514,
//!   `wh = [2w + 2h + 3r, 4w - h + r, r]` for the screen size `w`×`h` and
//!   `of = [3t + 2l + s, 4t - 4l + 2s, s]` for the scroll offset `t`/`l`.
//!
//! Extractors have no randomness, so the values are derived: the "client"
//! (screen size and GPU) from the day of `now`, so one day's requests look
//! like one browser, and the per-request numbers (`r`, `s`, the scroll top)
//! from the video, its part and the time. Fixtures therefore sign the same
//! URL on every run.

use md5::{Digest, Md5};

/// Screen sizes desktop browsers report, with how often (out of 78) they
/// are picked: the common desktop resolutions, the same table yt-dlp uses.
const SCREENS: [((u32, u32), u32); 7] = [
    ((1920, 1080), 18),
    ((1366, 768), 18),
    ((1536, 864), 17),
    ((1280, 720), 8),
    ((2560, 1440), 7),
    ((1440, 900), 5),
    ((1600, 900), 5),
];

/// base64 of `WebGL 1.0 (OpenGL ES 2.0 Chromium)` (what Chrome on Windows
/// reports as the WebGL version) without its last two characters.
const WEBGL_VERSION_B64: &str = "V2ViR0wgMS4wIChPcGVuR0wgRVMgMi4wIENocm9taXVtKQ";

/// base64 of ANGLE renderer + vendor strings Chrome on Windows reports for
/// common GPUs, each without its last two characters:
/// `ANGLE (Intel, Intel(R) UHD Graphics 620 Direct3D11 vs_5_0 ps_5_0, D3D11)Google Inc. (Intel)`,
/// `ANGLE (NVIDIA, NVIDIA GeForce GTX 1660 SUPER Direct3D11 vs_5_0 ps_5_0, D3D11)Google Inc. (NVIDIA)`,
/// `ANGLE (AMD, AMD Radeon(TM) Graphics Direct3D11 vs_5_0 ps_5_0, D3D11)Google Inc. (AMD)`.
const WEBGL_RENDERERS_B64: [&str; 3] = [
    "QU5HTEUgKEludGVsLCBJbnRlbChSKSBVSEQgR3JhcGhpY3MgNjIwIERpcmVjdDNEMTEgdnNfNV8wIHBzXzVfMCwgRDNEMTEpR29vZ2xlIEluYy4gKEludGVsKQ",
    "QU5HTEUgKE5WSURJQSwgTlZJRElBIEdlRm9yY2UgR1RYIDE2NjAgU1VQRVIgRGlyZWN0M0QxMSB2c181XzAgcHNfNV8wLCBEM0QxMSlHb29nbGUgSW5jLiAoTlZJRElBKQ",
    "QU5HTEUgKEFNRCwgQU1EIFJhZGVvbihUTSkgR3JhcGhpY3MgRGlyZWN0M0QxMSB2c181XzAgcHNfNV8wLCBEM0QxMSlHb29nbGUgSW5jLiAoQU1EKQ",
];

const DAY_MS: u64 = 86_400_000;

/// The four `dm_*` parameters, in the order they are added to the query.
pub fn dm_params(bvid: &str, cid: &str, now_unix_ms: u64) -> [(&'static str, String); 4] {
    let mut client = Numbers::new(&format!("client:{}", now_unix_ms / DAY_MS));
    let (w, h) = pick_screen(client.below(78));
    let renderer = WEBGL_RENDERERS_B64[client.below(3) as usize];

    let mut request = Numbers::new(&format!("request:{bvid}:{cid}:{now_unix_ms}"));
    let r = request.below(114);
    let s = request.below(514);
    let top = request.below(101);
    let left = 0;
    let (w, h, r, s, top, left) = (
        i64::from(w),
        i64::from(h),
        i64::from(r),
        i64::from(s),
        i64::from(top),
        i64::from(left),
    );
    let wh = [2 * w + 2 * h + 3 * r, 4 * w - h + r, r];
    let of = [3 * top + 2 * left + s, 4 * top - 4 * left + 2 * s, s];
    let inter = format!(
        r#"{{"ds":[],"wh":[{},{},{}],"of":[{},{},{}]}}"#,
        wh[0], wh[1], wh[2], of[0], of[1], of[2]
    );
    [
        ("dm_img_list", "[]".into()),
        ("dm_img_str", WEBGL_VERSION_B64.into()),
        ("dm_cover_img_str", renderer.into()),
        ("dm_img_inter", inter),
    ]
}

fn pick_screen(mut ticket: u32) -> (u32, u32) {
    for (size, weight) in SCREENS {
        if ticket < weight {
            return size;
        }
        ticket -= weight;
    }
    SCREENS[0].0
}

/// Deterministic numbers from a seed: MD5 of the seed, then SplitMix64.
struct Numbers(u64);

impl Numbers {
    fn new(seed: &str) -> Numbers {
        let digest = Md5::digest(seed.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        Numbers(u64::from_le_bytes(first))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n small, so the modulo bias is negligible).
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mediaparse_sdk::serde_json::{self, Value};

    fn value<'a>(params: &'a [(&'static str, String)], name: &str) -> &'a str {
        params
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no {name}"))
    }

    fn ints(v: &Value, key: &str) -> Vec<i64> {
        v[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} is not an array: {v}"))
            .iter()
            .map(|n| {
                n.as_i64()
                    .unwrap_or_else(|| panic!("{key}: {n} not an integer"))
            })
            .collect()
    }

    /// `dm_img_inter` as yt-dlp builds it: compact JSON, `ds` empty, `wh`
    /// solvable for a real screen size with r < 114, `of` for a scroll
    /// offset t, l ≥ 0 with s < 514.
    pub(crate) fn assert_inter_shape(inter: &str) -> Result<(), String> {
        if inter.contains(' ') {
            return Err(format!("not compact: {inter}"));
        }
        let v: Value = serde_json::from_str(inter).map_err(|e| format!("{e}: {inter}"))?;
        if v["ds"] != Value::Array(vec![]) {
            return Err(format!("ds not empty: {inter}"));
        }
        let (wh, of) = (ints(&v, "wh"), ints(&v, "of"));
        if wh.len() != 3 || of.len() != 3 {
            return Err(format!("wh/of not triples: {inter}"));
        }
        // wh = [2w+2h+3r, 4w-h+r, r] → w+h and 4w-h, so 5w = (w+h) + (4w-h).
        let r = wh[2];
        if !(0..114).contains(&r) || (wh[0] - 3 * r) % 2 != 0 {
            return Err(format!("wh[2] out of range or wh[0] odd: {inter}"));
        }
        let sum = (wh[0] - 3 * r) / 2;
        let diff = wh[1] - r;
        if (sum + diff) % 5 != 0 {
            return Err(format!("wh has no integer screen size: {inter}"));
        }
        let w = (sum + diff) / 5;
        let h = sum - w;
        if !(800..=7680).contains(&w) || !(600..=4320).contains(&h) || w < h {
            return Err(format!("wh gives no plausible screen ({w}x{h}): {inter}"));
        }
        // of = [3t+2l+s, 4t-4l+2s, s] → 3t+2l and 4t-4l, so 10t = 2(3t+2l) + (4t-4l).
        let s = of[2];
        if !(0..514).contains(&s) {
            return Err(format!("of[2] out of range: {inter}"));
        }
        let a = of[0] - s;
        let b = of[1] - 2 * s;
        if (2 * a + b) % 10 != 0 {
            return Err(format!("of has no integer scroll offset: {inter}"));
        }
        let t = (2 * a + b) / 10;
        let l2 = a - 3 * t;
        if t < 0 || l2 < 0 || l2 % 2 != 0 {
            return Err(format!("of gives no scroll offset: {inter}"));
        }
        Ok(())
    }

    /// yt-dlp: base64 of 16–64 (img) or 32–128 (cover) characters, last two
    /// characters cut.
    pub(crate) fn assert_b64_shape(v: &str, min_chars: usize, max_chars: usize) {
        let full = v.len() + 2;
        assert_eq!(full % 4, 0, "{v}");
        assert!(
            v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/'),
            "{v}"
        );
        let min = min_chars.div_ceil(3) * 4;
        let max = max_chars.div_ceil(3) * 4;
        assert!(
            (min..=max).contains(&full),
            "{v}: {full} not in {min}..={max}"
        );
    }

    #[test]
    fn parameters_have_the_shape_yt_dlp_sends() {
        for (bvid, cid, now) in [
            ("BV1rp4y1e745", "244954665", 1_700_000_000_000u64),
            ("BV1dW411z7vi", "1", 0),
            ("BV1xx411c7mD", "98765432101", 1_780_000_123_456),
        ] {
            let params = dm_params(bvid, cid, now);
            assert_eq!(value(&params, "dm_img_list"), "[]");
            assert_b64_shape(value(&params, "dm_img_str"), 16, 64);
            assert_b64_shape(value(&params, "dm_cover_img_str"), 32, 128);
            let inter = value(&params, "dm_img_inter");
            assert_inter_shape(inter).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn all_zero_inter_is_not_the_browser_shape() {
        assert!(assert_inter_shape(r#"{"ds":[],"wh":[0,0,0],"of":[0,0,0]}"#).is_err());
        // yt-dlp's own defaults (1920x1080, scroll 10/10, r = s = 0) pass.
        assert!(assert_inter_shape(r#"{"ds":[],"wh":[6000,6600,0],"of":[50,0,0]}"#).is_ok());
    }

    #[test]
    fn values_are_derived_not_fixed() {
        let a = dm_params("BV1rp4y1e745", "244954665", 1_700_000_000_000);
        assert_eq!(a, dm_params("BV1rp4y1e745", "244954665", 1_700_000_000_000));
        let inters: std::collections::BTreeSet<String> = (0..20u64)
            .map(|i| {
                dm_params("BV1rp4y1e745", "244954665", 1_700_000_000_000 + i)[3]
                    .1
                    .clone()
            })
            .collect();
        assert!(inters.len() > 10, "{inters:?}");
        // One day looks like one screen: w+h is the same across requests.
        let screens: std::collections::BTreeSet<i64> = inters
            .iter()
            .map(|i| {
                let v: Value = serde_json::from_str(i).unwrap_or_default();
                let wh = ints(&v, "wh");
                (wh[0] - 3 * wh[2]) / 2
            })
            .collect();
        assert_eq!(screens.len(), 1, "{screens:?}");
    }

    #[test]
    fn screen_weights_cover_every_ticket() {
        assert_eq!(SCREENS.iter().map(|(_, w)| w).sum::<u32>(), 78);
        assert_eq!(pick_screen(0), (1920, 1080));
        assert_eq!(pick_screen(18), (1366, 768));
        assert_eq!(pick_screen(77), (1600, 900));
    }
}
