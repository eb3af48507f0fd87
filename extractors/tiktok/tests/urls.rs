//! Every accepted TikTok URL shape and host variant, and every rejection
//! SPEC.md and the upstream guide name (code "302").

use mediaparse_extractor_tiktok::TikTok;
use mediaparse_sdk::Extractor;

/// (input, expected id, expected canonical URL)
const ACCEPTED: &[(&str, &str, &str)] = &[
    // /@{user}/video/{id}: hosts, scheme, case, slashes, query, encoding.
    (
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    (
        "https://tiktok.com/@vantoan___/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    (
        "https://m.tiktok.com/@vantoan___/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    (
        "https://www.tiktokv.com/@vantoan___/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    (
        "http://www.tiktok.com/@vantoan___/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    (
        "https://WWW.TIKTOK.COM/@vantoan___/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    (
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913/",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    (
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913?is_from_webapp=1&sender_device=pc&web_id=7306000000000000000",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    (
        "https://www.tiktok.com/%40vantoan___/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    (
        "https://www.tiktok.com/@scout2015/video/6718335390845095173?lang=en#comments",
        "6718335390845095173",
        "https://www.tiktok.com/@scout2015/video/6718335390845095173",
    ),
    (
        "https://www.tiktok.com/@the.real-name_1/video/7106594312292453675",
        "7106594312292453675",
        "https://www.tiktok.com/@the.real-name_1/video/7106594312292453675",
    ),
    // An empty user is accepted (yt-dlp, gallery-dl) and fetched as `@_`.
    (
        "https://www.tiktok.com/@/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@_/video/7305827432509082913",
    ),
    // Without a scheme, and as share text around the URL.
    (
        "www.tiktok.com/@vantoan___/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    (
        "Check out this video! https://www.tiktok.com/@vantoan___/video/7305827432509082913?_r=1 #piano",
        "7305827432509082913",
        "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
    ),
    // /@{user}/photo/{id}
    (
        "https://www.tiktok.com/@lina.travels/photo/7240568259186019630",
        "7240568259186019630",
        "https://www.tiktok.com/@lina.travels/photo/7240568259186019630",
    ),
    (
        "https://m.tiktok.com/@lina.travels/photo/7240568259186019630/?is_from_webapp=1",
        "7240568259186019630",
        "https://www.tiktok.com/@lina.travels/photo/7240568259186019630",
    ),
    // Aliases (guide's decisions): /share/video, /embed, /embed/v2, /v/{id}.html, /i18n/share/video.
    (
        "https://www.tiktokv.com/share/video/7305827432509082913/",
        "7305827432509082913",
        "https://www.tiktok.com/@_/video/7305827432509082913",
    ),
    (
        "https://www.tiktok.com/share/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@_/video/7305827432509082913",
    ),
    (
        "https://www.tiktok.com/embed/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@_/video/7305827432509082913",
    ),
    (
        "https://www.tiktok.com/embed/v2/7305827432509082913?lang=en-US",
        "7305827432509082913",
        "https://www.tiktok.com/@_/video/7305827432509082913",
    ),
    (
        "https://m.tiktok.com/v/7305827432509082913.html",
        "7305827432509082913",
        "https://www.tiktok.com/@_/video/7305827432509082913",
    ),
    (
        "https://m.tiktok.com/v/6718335390845095173.html?u_code=0&preview_pb=0&language=en",
        "6718335390845095173",
        "https://www.tiktok.com/@_/video/6718335390845095173",
    ),
    (
        "https://www.tiktok.com/i18n/share/video/7305827432509082913",
        "7305827432509082913",
        "https://www.tiktok.com/@_/video/7305827432509082913",
    ),
    // Short links: /t/{code} on www and bare, vm./vt. /{code}.
    (
        "https://www.tiktok.com/t/ZTR45GpSF/",
        "ZTR45GpSF",
        "https://www.tiktok.com/t/ZTR45GpSF/",
    ),
    (
        "https://tiktok.com/t/ZTR45GpSF",
        "ZTR45GpSF",
        "https://www.tiktok.com/t/ZTR45GpSF/",
    ),
    (
        "https://www.tiktok.com/t/ZTR45GpSF//",
        "ZTR45GpSF",
        "https://www.tiktok.com/t/ZTR45GpSF/",
    ),
    (
        "https://vm.tiktok.com/ZSe4FqkKd/",
        "ZSe4FqkKd",
        "https://vm.tiktok.com/ZSe4FqkKd/",
    ),
    (
        "https://VM.TIKTOK.COM/ZSe4FqkKd",
        "ZSe4FqkKd",
        "https://vm.tiktok.com/ZSe4FqkKd/",
    ),
    (
        "http://vt.tiktok.com/2p4ewa7/?share_app_id=1233",
        "2p4ewa7",
        "https://vt.tiktok.com/2p4ewa7/",
    ),
    (
        "https://vt.tiktok.com/ZS2abCdEf/",
        "ZS2abCdEf",
        "https://vt.tiktok.com/ZS2abCdEf/",
    ),
    (
        "TikTok · Van https://vm.tiktok.com/ZMhvqAbCd/ 🎹",
        "ZMhvqAbCd",
        "https://vm.tiktok.com/ZMhvqAbCd/",
    ),
];

/// Inputs that must be rejected with code "302".
const REJECTED: &[&str] = &[
    // Profiles, with and without query or trailing slash.
    "https://www.tiktok.com/@vantoan___",
    "https://www.tiktok.com/@vantoan___?lang=en",
    "https://www.tiktok.com/@vantoan___/",
    "https://m.tiktok.com/@vantoan___",
    // Profile tabs.
    "https://www.tiktok.com/@vantoan___/posts",
    "https://www.tiktok.com/@vantoan___/reposts",
    "https://www.tiktok.com/@vantoan___/likes",
    "https://www.tiktok.com/@vantoan___/saved",
    "https://www.tiktok.com/@vantoan___/stories",
    // Live pages.
    "https://www.tiktok.com/@vantoan___/live",
    "https://m.tiktok.com/share/live/7305827432509082913",
    "https://www.tiktok.com/live",
    // Sound, sticker, tag, search, discover pages.
    "https://www.tiktok.com/music/original-sound-7305827462574377760",
    "https://www.tiktok.com/sticker/Cat-Ears-123456",
    "https://www.tiktok.com/tag/piano",
    "https://www.tiktok.com/search?q=piano",
    "https://www.tiktok.com/search/video?q=piano&t=1701415393000",
    "https://www.tiktok.com/discover/piano-cover",
    // Collections and playlists.
    "https://www.tiktok.com/@vantoan___/collection/Piano-7305000000000000000",
    "https://www.tiktok.com/@vantoan___/playlist/Covers-7305000000000000001",
    // Home and feeds.
    "https://www.tiktok.com/",
    "https://www.tiktok.com/foryou",
    "https://www.tiktok.com/explore",
    // TikTok Lite and other subdomains; anything without a post shape.
    "https://lite.tiktok.com/@vantoan___/video/7305827432509082913",
    "https://www.tiktok.com/lite/@vantoan___/video/7305827432509082913",
    "https://ads.tiktok.com/help/article/7305827432509082913",
    // Malformed ids, codes and extra segments.
    "https://www.tiktok.com/@vantoan___/video/",
    "https://www.tiktok.com/@vantoan___/video/73058274325O9082913",
    "https://www.tiktok.com/@vantoan___/video/7305827432509082913123456",
    "https://www.tiktok.com/@vantoan___/video/7305827432509082913/comments",
    "https://www.tiktok.com/@vantoan___/VIDEO/7305827432509082913",
    "https://vm.tiktok.com/",
    "https://vm.tiktok.com/ZSe4-FqkKd/",
    "https://vm.tiktok.com/ZSe4FqkKd/extra",
    "https://www.tiktok.com/t/",
    // Other hosts that only look like TikTok, and non-URLs.
    "https://www.tiktok.com.evil.example/@a/video/7305827432509082913",
    "https://nottiktok.com/@a/video/7305827432509082913",
    "https://www.douyin.com/video/7305827432509082913",
    "ftp://www.tiktok.com/@a/video/7305827432509082913",
    "no url here",
];

#[test]
fn accepted_urls() {
    let mut failures = Vec::new();
    for (input, id, canonical) in ACCEPTED {
        match TikTok::detect(input) {
            Ok(t) if t.id == *id && t.canonical_url == *canonical && t.platform == "tiktok" => {}
            Ok(t) => failures.push(format!(
                "{input}: got id {} canonical {}",
                t.id, t.canonical_url
            )),
            Err(e) => failures.push(format!("{input}: rejected ({e})")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rejected_urls() {
    let mut failures = Vec::new();
    for input in REJECTED {
        match TikTok::detect(input) {
            Err(e) if e.code() == "302" => {}
            Err(e) => failures.push(format!("{input}: wrong code {}", e.code())),
            Ok(t) => failures.push(format!("{input}: accepted as {}", t.id)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn declared_hosts_cover_accepted_urls() {
    let info = TikTok::info();
    for (input, _, _) in ACCEPTED {
        let text = mediaparse_sdk::share::first_url(input).unwrap_or_else(|| input.to_string());
        let url = mediaparse_sdk::urls::InputUrl::parse(&text).unwrap();
        assert!(
            url.host_in(
                &info
                    .url_hosts
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
            ),
            "{input} is not on the declared url hosts"
        );
    }
}

/// Every URL above, and hostile variants of each, end in a target or a
/// failure, never a panic.
#[test]
fn detect_never_panics() {
    let urls = ACCEPTED.iter().map(|a| a.0).chain(REJECTED.iter().copied());
    mediaparse_sdk::testing::assert_detect_survives::<TikTok>(urls);
}
