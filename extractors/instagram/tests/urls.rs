//! Every SPEC.md shape and host variant, and every named rejection.

use mediaparse_extractor_instagram::Instagram;
use mediaparse_sdk::Extractor;

/// (input, expected id, expected canonical URL)
const ACCEPTED: &[(&str, &str, &str)] = &[
    // /p/{code}
    (
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
        "CAnqPB-Jzcj",
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
    ),
    (
        "https://instagram.com/p/CAnqPB-Jzcj",
        "CAnqPB-Jzcj",
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
    ),
    (
        "http://www.instagram.com/p/CAnqPB-Jzcj/",
        "CAnqPB-Jzcj",
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
    ),
    (
        "HTTPS://WWW.INSTAGRAM.COM/p/CAnqPB-Jzcj/",
        "CAnqPB-Jzcj",
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
    ),
    (
        "https://www.instagram.com/p/CAnqPB-Jzcj/?igsh=MzRlODBiNWFlZA==&img_index=2",
        "CAnqPB-Jzcj",
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
    ),
    (
        "https://www.instagram.com/p/CAnqPB-Jzcj/?utm_source=ig_web_copy_link#comments",
        "CAnqPB-Jzcj",
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
    ),
    (
        "https://www.instagram.com/p/CAnqPB%2DJzcj/",
        "CAnqPB-Jzcj",
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
    ),
    (
        "www.instagram.com/p/CAnqPB-Jzcj",
        "CAnqPB-Jzcj",
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
    ),
    (
        "https://instagr.am/p/BqvsDleB3lV/",
        "BqvsDleB3lV",
        "https://www.instagram.com/p/BqvsDleB3lV/",
    ),
    // /reel/, /reels/, /tv/, /r/
    (
        "https://www.instagram.com/reel/Chunk8-jurw/",
        "Chunk8-jurw",
        "https://www.instagram.com/p/Chunk8-jurw/",
    ),
    (
        "https://www.instagram.com/reels/DZc5TenzF7h/?igsh=abc",
        "DZc5TenzF7h",
        "https://www.instagram.com/p/DZc5TenzF7h/",
    ),
    (
        "https://www.instagram.com/tv/CAG3E8-A3wf",
        "CAG3E8-A3wf",
        "https://www.instagram.com/p/CAG3E8-A3wf/",
    ),
    (
        "https://www.instagram.com/r/Chunk8-jurw/",
        "Chunk8-jurw",
        "https://www.instagram.com/p/Chunk8-jurw/",
    ),
    // /{username}/p/{code}, /{username}/reel/{code}
    (
        "https://www.instagram.com/jlo/p/CAG3E8-A3wf/",
        "CAG3E8-A3wf",
        "https://www.instagram.com/p/CAG3E8-A3wf/",
    ),
    (
        "https://www.instagram.com/dm/p/CW042g7B9CY",
        "CW042g7B9CY",
        "https://www.instagram.com/p/CW042g7B9CY/",
    ),
    (
        "https://www.instagram.com/google/reel/DZc5TenzF7h/?hl=en",
        "DZc5TenzF7h",
        "https://www.instagram.com/p/DZc5TenzF7h/",
    ),
    (
        "https://www.instagram.com/nat.geo_travel/reel/Chunk8-jurw/",
        "Chunk8-jurw",
        "https://www.instagram.com/p/Chunk8-jurw/",
    ),
    // /p/{code}/embed, /reel/{code}/embed
    (
        "https://www.instagram.com/p/B-NYjoGpQqC/embed",
        "B-NYjoGpQqC",
        "https://www.instagram.com/p/B-NYjoGpQqC/",
    ),
    (
        "https://www.instagram.com/p/B-NYjoGpQqC/embed/captioned/",
        "B-NYjoGpQqC",
        "https://www.instagram.com/p/B-NYjoGpQqC/",
    ),
    (
        "https://www.instagram.com/reel/Chunk8-jurw/embed/",
        "Chunk8-jurw",
        "https://www.instagram.com/p/Chunk8-jurw/",
    ),
    // mobile host /p/{id}: a shortcode, or the numeric media id
    (
        "https://m.instagram.com/p/CAnqPB-Jzcj/",
        "CAnqPB-Jzcj",
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
    ),
    (
        "https://m.instagram.com/p/2317006284167526179",
        "CAnqPB-Jzcj",
        "https://www.instagram.com/p/CAnqPB-Jzcj/",
    ),
    // private posts: long codes are recognised (and answered unavailable in plan)
    (
        "https://www.instagram.com/p/C5_A1TQNPrYw4c2g9KAUTPUl8RVHqiAdAcOOSY0/",
        "C5_A1TQNPrYw4c2g9KAUTPUl8RVHqiAdAcOOSY0",
        "https://www.instagram.com/p/C5_A1TQNPrYw4c2g9KAUTPUl8RVHqiAdAcOOSY0/",
    ),
    // /share/..., /share/{type}/{code}: the id is the share code until resolved
    (
        "https://www.instagram.com/share/BACiUUUYQV",
        "BACiUUUYQV",
        "https://www.instagram.com/share/BACiUUUYQV/",
    ),
    (
        "https://www.instagram.com/share/p/BACiUUUYQV/",
        "BACiUUUYQV",
        "https://www.instagram.com/share/p/BACiUUUYQV/",
    ),
    (
        "https://www.instagram.com/share/reel/BARSSL4rTu/?igsh=x",
        "BARSSL4rTu",
        "https://www.instagram.com/share/reel/BARSSL4rTu/",
    ),
    (
        "https://instagram.com/share/_4kBjHqLz",
        "_4kBjHqLz",
        "https://www.instagram.com/share/_4kBjHqLz/",
    ),
    // a URL inside surrounding text
    (
        "look at this https://www.instagram.com/reel/Chunk8-jurw/?igsh=1 !!",
        "Chunk8-jurw",
        "https://www.instagram.com/p/Chunk8-jurw/",
    ),
];

const REJECTED: &[&str] = &[
    // profiles and profile tabs
    "https://www.instagram.com/natgeo/",
    "https://www.instagram.com/natgeo",
    "https://www.instagram.com/id:123456/",
    "https://www.instagram.com/natgeo/reels/",
    "https://www.instagram.com/natgeo/tagged/",
    "https://www.instagram.com/natgeo/saved/",
    "https://www.instagram.com/natgeo/guide/x/17890/",
    // highlights and stories
    "https://www.instagram.com/stories/highlights/17983407089364361/",
    "https://www.instagram.com/stories/natgeo/3115796369385857432/",
    "https://www.instagram.com/s/aGlnaGxpZ2h0OjE3OTgzNDA3MDg5MzY0MzYx",
    // explore, direct messages, accounts, audio pages
    "https://www.instagram.com/explore/tags/travel/",
    "https://www.instagram.com/explore/locations/212988663/paris-france/",
    "https://www.instagram.com/explore/",
    "https://www.instagram.com/direct/t/340282366841710300949128/",
    "https://www.instagram.com/accounts/login/",
    "https://www.instagram.com/reels/audio/1234567890123456/",
    "https://www.instagram.com/",
    // malformed codes, other sites, app schemes
    "https://www.instagram.com/p/abc/",
    "https://www.instagram.com/p/CAnq.B-Jzcj/",
    "https://www.instagram.com/share/",
    "https://www.notinstagram.com/p/CAnqPB-Jzcj/",
    "https://www.threads.net/@natgeo/post/C8CTu0iswgv",
    "instagram://media?id=2317006284167526179",
    "not a url",
];

#[test]
fn accepted_shapes() {
    let mut failures = Vec::new();
    for (input, id, canonical) in ACCEPTED {
        match Instagram::detect(input) {
            Ok(t) if t.id == *id && t.canonical_url == *canonical && t.platform == "instagram" => {}
            other => failures.push(format!("{input}: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rejections_are_302() {
    let mut failures = Vec::new();
    for input in REJECTED {
        match Instagram::detect(input) {
            Err(f) if f.code() == "302" => {}
            other => failures.push(format!("{input}: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn declared_hosts_cover_accepted_inputs() {
    let info = Instagram::info();
    for (input, _, _) in ACCEPTED {
        let url =
            mediaparse_sdk::share::first_url(input).unwrap_or_else(|| format!("https://{input}"));
        let host = mediaparse_sdk::urls::InputUrl::parse(&url).unwrap().host;
        assert!(
            info.url_hosts
                .iter()
                .any(|p| mediaparse_sdk::urls::host_matches(&host, p)),
            "{host} not declared"
        );
    }
}

/// Every URL above, and hostile variants of each, end in a target or a
/// failure, never a panic.
#[test]
fn detect_never_panics() {
    let urls = ACCEPTED.iter().map(|a| a.0).chain(REJECTED.iter().copied());
    mediaparse_sdk::testing::assert_detect_survives::<Instagram>(urls);
}
