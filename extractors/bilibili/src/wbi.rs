//! WBI signing for `api.bilibili.com/x/player/wbi/playurl` (and the other
//! `/wbi/` endpoints): a `w_rid` query parameter = MD5 of the sorted,
//! encoded query plus a "mixin key" derived from two keys that the `nav`
//! endpoint hands out to everyone (they rotate about daily).

use md5::{Digest, Md5};
use mediaparse_sdk::encode::strict;

/// The permutation that picks the mixin key's characters out of `img_key + sub_key`.
const MIXIN_TABLE: [usize; 64] = [
    46, 47, 18, 2, 53, 8, 23, 32, 15, 50, 10, 31, 58, 3, 45, 35, 27, 43, 5, 49, 33, 9, 42, 19, 29,
    28, 14, 39, 12, 38, 41, 13, 37, 48, 7, 16, 24, 55, 40, 61, 26, 17, 0, 1, 60, 51, 30, 4, 22, 25,
    54, 21, 56, 59, 6, 63, 57, 62, 11, 36, 20, 34, 44, 52,
];

/// The two keys from `nav`'s `data.wbi_img`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    pub img_key: String,
    pub sub_key: String,
}

impl Keys {
    /// Keys from the `img_url`/`sub_url` values: the file-name stems
    /// (`…/bfs/wbi/7cd084941338484aae1ad9425b84077c.png` → `7cd0…077c`).
    pub fn from_urls(img_url: &str, sub_url: &str) -> Option<Keys> {
        let img_key = stem(img_url)?;
        let sub_key = stem(sub_url)?;
        Some(Keys { img_key, sub_key })
    }

    /// The 32-character mixin key.
    pub fn mixin(&self) -> String {
        let raw: Vec<char> = self.img_key.chars().chain(self.sub_key.chars()).collect();
        MIXIN_TABLE
            .iter()
            .filter_map(|&i| raw.get(i))
            .take(32)
            .collect()
    }
}

fn stem(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next()?;
    let file = path.rsplit('/').next()?;
    let stem = file.split('.').next()?;
    (stem.len() >= 32 && stem.bytes().all(|b| b.is_ascii_alphanumeric())).then(|| stem.to_string())
}

/// The signed query string: the parameters plus `wts`, sorted by key,
/// values stripped of `!'()*` and encoded, then `&w_rid=md5(query + mixin)`.
pub fn signed_query(params: &[(&str, String)], keys: &Keys, wts_seconds: u64) -> String {
    let mut pairs: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    pairs.push(("wts".into(), wts_seconds.to_string()));
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let query = pairs
        .iter()
        .map(|(k, v)| {
            let cleaned: String = v.chars().filter(|c| !"!'()*".contains(*c)).collect();
            format!("{}={}", strict(k), strict(&cleaned))
        })
        .collect::<Vec<_>>()
        .join("&");
    let w_rid = hex_lower(&Md5::digest(format!("{query}{}", keys.mixin()).as_bytes()));
    format!("{query}&w_rid={w_rid}")
}

fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload_keys() -> Keys {
        Keys::from_urls(
            "https://i0.hdslb.com/bfs/wbi/7cd084941338484aae1ad9425b84077c.png",
            "https://i0.hdslb.com/bfs/wbi/4932caff0ff746eab6f01bf08b70ac45.png",
        )
        .unwrap_or_else(|| panic!("keys"))
    }

    #[test]
    fn keys_are_url_stems() {
        let keys = payload_keys();
        assert_eq!(keys.img_key, "7cd084941338484aae1ad9425b84077c");
        assert_eq!(keys.sub_key, "4932caff0ff746eab6f01bf08b70ac45");
        assert_eq!(Keys::from_urls("https://i0.hdslb.com/bfs/wbi/", "x"), None);
    }

    #[test]
    fn guide_test_vector() {
        let keys = payload_keys();
        assert_eq!(keys.mixin(), "ea1db124af3c7062474693fa704f4ff8");
        let q = signed_query(
            &[
                ("foo", "114".into()),
                ("bar", "514".into()),
                ("zab", "1919810".into()),
            ],
            &keys,
            1_702_204_169,
        );
        assert_eq!(
            q,
            "bar=514&foo=114&wts=1702204169&zab=1919810&w_rid=8f6f2b5b3d485fe1886cec6a0be8c5d4"
        );
    }

    #[test]
    fn values_are_cleaned_and_encoded() {
        assert_eq!(
            strict("a b/[]{\"x\":1}~._-"),
            "a%20b%2F%5B%5D%7B%22x%22%3A1%7D~._-"
        );
        let q = signed_query(&[("k", "it's (ok)!*".into())], &payload_keys(), 1);
        assert!(q.starts_with("k=its%20ok&wts=1&w_rid="), "{q}");
    }
}
