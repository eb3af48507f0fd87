//! Meta's media descriptions: image candidates and CDN video quality labels.

use base64::Engine;
use serde_json::Value;

/// An image candidate: `{url, width, height}`.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Candidate {
    pub url: String,
    #[serde(default)]
    pub width: Option<u32>,
    #[serde(default)]
    pub height: Option<u32>,
}

/// The full image among `candidates`: the largest whose aspect matches the
/// original's (square crops of portrait posts are listed too), else the first.
pub fn best_candidate(
    candidates: &[Candidate],
    original: Option<(u32, u32)>,
) -> Option<&Candidate> {
    let area = |c: &Candidate| c.width.unwrap_or(0) as u64 * c.height.unwrap_or(0) as u64;
    let matches = |c: &Candidate| match (original, c.width, c.height) {
        (Some((ow, oh)), Some(w), Some(h)) if ow > 0 && oh > 0 && w > 0 && h > 0 => {
            let a = w as f64 * oh as f64;
            let b = h as f64 * ow as f64;
            (a - b).abs() <= 0.02 * a.max(b)
        }
        _ => false,
    };
    let mut best: Option<&Candidate> = None;
    for c in candidates.iter().filter(|c| matches(c)) {
        if best.is_none_or(|b| area(c) > area(b)) {
            best = Some(c);
        }
    }
    best.or_else(|| candidates.first())
}

/// A video's quality label: the encode cap from the CDN URL's `efg`
/// parameter (base64 JSON `vencode_tag`, e.g. `…CLIPS.C3.720.dash…` → `720p`),
/// else the shorter side, else the version type.
pub fn video_quality(url: &str, width: u32, height: u32, kind: Option<u32>) -> String {
    if let Some(cap) = efg_cap(url) {
        return format!("{cap}p");
    }
    match (width.min(height), kind) {
        (side, _) if side > 0 => format!("{side}p"),
        (_, Some(t)) => format!("type {t}"),
        _ => String::new(),
    }
}

fn efg_cap(url: &str) -> Option<u32> {
    let parsed = url::Url::parse(url).ok()?;
    let efg = parsed
        .query_pairs()
        .find(|(k, _)| k == "efg")
        .map(|(_, v)| v.into_owned())?;
    let normalized: String = efg
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            c => c,
        })
        .collect();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(normalized.as_bytes())
        .ok()?;
    let json: Value = serde_json::from_slice(&bytes).ok()?;
    let tag = json.get("vencode_tag")?.as_str()?;
    tag.split(['.', '_'])
        .find(|t| !t.is_empty() && t.len() <= 4 && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse().ok())
        .filter(|&n: &u32| n >= 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efg_quality_labels() {
        // vencode_tag "xpv_progressive.INSTAGRAM.CLIPS.C3.720.dash_baseline_1_v1"
        let url = "https://instagram.fyto1-2.fna.fbcdn.net/o1/v.mp4?efg=eyJ2ZW5jb2RlX3RhZyI6Inhwdl9wcm9ncmVzc2l2ZS5JTlNUQUdSQU0uQ0xJUFMuQzMuNzIwLmRhc2hfYmFzZWxpbmVfMV92MSIsInhwdl9hc3NldF9pZCI6OTgzNTQ5MTkxMDU3MjQ2LCJhc3NldF9hZ2VfZGF5cyI6MCwidmlfdXNlY2FzZV9pZCI6MTAwOTksImR1cmF0aW9uX3MiOjYwLCJ1cmxnZW5fc291cmNlIjoid3d3In0&x=1";
        assert_eq!(video_quality(url, 720, 1280, Some(101)), "720p");
        // "vts_vod_urlgen.452.feed.default" (percent-encoded padding survives)
        let url = "https://scontent.cdninstagram.com/v.mp4?efg=eyJ2ZW5jb2RlX3RhZyI6InZ0c192b2RfdXJsZ2VuLjQ1Mi5mZWVkLmRlZmF1bHQiLCJxZV9ncm91cHMiOiJbXCJpZ193ZWJfZGVsaXZlcnlfdnRzX290ZlwiXSJ9";
        assert_eq!(video_quality(url, 452, 566, Some(102)), "452p");
        assert_eq!(
            video_quality("https://x.net/v.mp4?efg=%%%", 720, 900, None),
            "720p"
        );
        assert_eq!(
            video_quality("https://x.net/v.mp4", 0, 0, Some(103)),
            "type 103"
        );
    }

    #[test]
    fn best_candidate_skips_square_crops() {
        let c = |w, h| Candidate {
            url: format!("https://x/{w}x{h}"),
            width: Some(w),
            height: Some(h),
        };
        let list = vec![c(720, 900), c(640, 800), c(1080, 1080), c(150, 150)];
        assert_eq!(
            best_candidate(&list, Some((720, 900))).map(|c| c.url.as_str()),
            Some("https://x/720x900")
        );
        assert_eq!(
            best_candidate(&list, None).map(|c| c.url.as_str()),
            Some("https://x/720x900")
        );
        assert!(best_candidate(&[], Some((1, 1))).is_none());
        let list = vec![c(480, 853), c(540, 960)];
        assert_eq!(
            best_candidate(&list, Some((540, 960))).map(|c| c.url.as_str()),
            Some("https://x/540x960")
        );
    }
}
