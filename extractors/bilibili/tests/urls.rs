//! Every accepted URL shape of SPEC.md on every host, and every rejection.

use mediaparse_extractor_bilibili::Bilibili;
use mediaparse_sdk::Extractor;

/// (input, expected target id, expected canonical URL)
const ACCEPTED: &[(&str, &str, &str)] = &[
    // /video/BV{id}: www, bare, mobile, http, upper-case host, trailing slash, query, `/s/` prefix.
    (
        "https://www.bilibili.com/video/BV13x41117TL",
        "BV13x41117TL",
        "https://www.bilibili.com/video/BV13x41117TL",
    ),
    (
        "https://bilibili.com/video/BV117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    (
        "https://m.bilibili.com/video/BV117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    (
        "http://www.bilibili.com/video/BV117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    (
        "https://WWW.BILIBILI.COM/video/BV117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    (
        "https://www.bilibili.com/video/BV117411r7R1/",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    (
        "https://www.bilibili.com/video/BV117411r7R1/?spm_id_from=333.1007.tianma.1-1-1.click&vd_source=0a1b2c3d4e5f",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    (
        "https://www.bilibili.com/s/video/BV117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    (
        "www.bilibili.com/video/BV117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    // Case-insensitive `bv` prefix, normalised.
    (
        "https://www.bilibili.com/video/bv117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    // Percent-encoding in the path.
    (
        "https://www.bilibili.com/video/%42V117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    // ?p= parts.
    (
        "https://www.bilibili.com/video/BV1ex411J7GE?p=3",
        "BV1ex411J7GE_p3",
        "https://www.bilibili.com/video/BV1ex411J7GE?p=3",
    ),
    (
        "https://www.bilibili.com/video/BV1ex411J7GE/?p=1&share_source=copy_web",
        "BV1ex411J7GE",
        "https://www.bilibili.com/video/BV1ex411J7GE",
    ),
    (
        "https://www.bilibili.com/video/BV1ex411J7GE?p=zero",
        "BV1ex411J7GE",
        "https://www.bilibili.com/video/BV1ex411J7GE",
    ),
    // /video/av{id}, converted offline.
    (
        "https://www.bilibili.com/video/av1074402",
        "BV11x411K7CN",
        "https://www.bilibili.com/video/BV11x411K7CN",
    ),
    (
        "https://m.bilibili.com/video/av85440373?p=2",
        "BV117411r7R1_p2",
        "https://www.bilibili.com/video/BV117411r7R1?p=2",
    ),
    (
        "https://www.bilibili.com/video/AV99999999/",
        "BV1y7411Q7Eq",
        "https://www.bilibili.com/video/BV1y7411Q7Eq",
    ),
    (
        "https://www.bilibili.com/video/av115871406101538",
        "BV1pR6UB3ENW",
        "https://www.bilibili.com/video/BV1pR6UB3ENW",
    ),
    // Short hosts: codes stay codes, BV/av codes resolve offline.
    (
        "https://b23.tv/5x4wy5f",
        "5x4wy5f",
        "https://b23.tv/5x4wy5f",
    ),
    (
        "http://B23.TV/Fc9i7QF/",
        "Fc9i7QF",
        "https://b23.tv/Fc9i7QF",
    ),
    (
        "https://b23.tv/Fc9i7QF?share_medium=android&share_source=copy",
        "Fc9i7QF",
        "https://b23.tv/Fc9i7QF",
    ),
    (
        "https://www.b23.tv/Fc9i7QF",
        "Fc9i7QF",
        "https://b23.tv/Fc9i7QF",
    ),
    (
        "https://bili2233.cn/aBcD123",
        "aBcD123",
        "https://bili2233.cn/aBcD123",
    ),
    (
        "https://bili22.cn/aBcD123",
        "aBcD123",
        "https://bili22.cn/aBcD123",
    ),
    (
        "https://bili23.cn/aBcD123",
        "aBcD123",
        "https://bili23.cn/aBcD123",
    ),
    (
        "https://bili33.cn/aBcD123",
        "aBcD123",
        "https://bili33.cn/aBcD123",
    ),
    (
        "https://b23.tv/av32430100",
        "BV1dW411z7vi",
        "https://www.bilibili.com/video/BV1dW411z7vi",
    ),
    (
        "https://b23.tv/BV117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    // Share text (the app's format; the title itself contains 【】).
    (
        "【【官方 MV】Never Gonna Give You Up - Rick Astley-哔哩哔哩】 https://b23.tv/5x4wy5f",
        "5x4wy5f",
        "https://b23.tv/5x4wy5f",
    ),
    (
        "看看这个 https://www.bilibili.com/video/BV117411r7R1?share_source=copy_web 😆",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    // /list/...?bvid= (and /medialist/play/, /festival/ aliases).
    (
        "https://www.bilibili.com/list/66606350?sid=4055016&bvid=BV117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    (
        "https://www.bilibili.com/list/watchlater?oid=85440373&bvid=BV117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    (
        "https://www.bilibili.com/list/ml1234567?bvid=BV1ex411J7GE&p=2",
        "BV1ex411J7GE_p2",
        "https://www.bilibili.com/video/BV1ex411J7GE?p=2",
    ),
    (
        "https://www.bilibili.com/medialist/play/66606350?from=space&bvid=BV117411r7R1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    (
        "https://www.bilibili.com/festival/2022bnj?bvid=BV1ex411J7GE",
        "BV1ex411J7GE",
        "https://www.bilibili.com/video/BV1ex411J7GE",
    ),
    // Embed player alias.
    (
        "https://player.bilibili.com/player.html?aid=85440373&cid=146044693&page=1",
        "BV117411r7R1",
        "https://www.bilibili.com/video/BV117411r7R1",
    ),
    // Bangumi episodes and seasons.
    (
        "https://www.bilibili.com/bangumi/play/ep21495",
        "ep21495",
        "https://www.bilibili.com/bangumi/play/ep21495",
    ),
    (
        "https://m.bilibili.com/bangumi/play/ep85046?from_spmid=666.25",
        "ep85046",
        "https://www.bilibili.com/bangumi/play/ep85046",
    ),
    (
        "https://www.bilibili.com/bangumi/play/ss26801/",
        "ss26801",
        "https://www.bilibili.com/bangumi/play/ss26801",
    ),
    (
        "http://BILIBILI.COM/bangumi/play/ss42290",
        "ss42290",
        "https://www.bilibili.com/bangumi/play/ss42290",
    ),
    // Courses.
    (
        "https://www.bilibili.com/cheese/play/ss5918",
        "cheese-ss5918",
        "https://www.bilibili.com/cheese/play/ss5918",
    ),
    (
        "https://www.bilibili.com/cheese/play/ep790?query_from=0",
        "cheese-ep790",
        "https://www.bilibili.com/cheese/play/ep790",
    ),
    (
        "https://m.bilibili.com/cheese/play/ss61/",
        "cheese-ss61",
        "https://www.bilibili.com/cheese/play/ss61",
    ),
];

/// Inputs that must be refused with code "302".
const REJECTED: &[&str] = &[
    // International site.
    "https://www.bilibili.tv/en/video/2045364497",
    "https://www.biliintl.com/en/play/34613/341736",
    // Profiles, favourites, collections.
    "https://space.bilibili.com/66606350",
    "https://space.bilibili.com/66606350/favlist?fid=123456",
    "https://space.bilibili.com/66606350/channel/collectiondetail?sid=4055016",
    // Watch-later and lists without one video id.
    "https://www.bilibili.com/list/watchlater",
    "https://www.bilibili.com/list/ml1234567",
    "https://www.bilibili.com/list/66606350?sid=4055016",
    "https://www.bilibili.com/medialist/play/watchlater",
    "https://www.bilibili.com/watchlater/#/list",
    // Live, dynamics, articles, audio, series pages, search, home.
    "https://live.bilibili.com/21452505",
    "https://t.bilibili.com/123456789012345678",
    "https://www.bilibili.com/opus/123456789012345678",
    "https://www.bilibili.com/read/cv1234567",
    "https://www.bilibili.com/audio/au1234567",
    "https://www.bilibili.com/bangumi/media/md28229233",
    "https://search.bilibili.com/all?keyword=test",
    "https://www.bilibili.com/",
    "https://www.bilibili.com/v/popular/all",
    // Malformed ids.
    "https://www.bilibili.com/video/BV1234",
    "https://www.bilibili.com/video/BV0Ol1IIIIII",
    "https://www.bilibili.com/video/av",
    "https://www.bilibili.com/video/av9999999999999999",
    "https://www.bilibili.com/bangumi/play/ep",
    "https://www.bilibili.com/bangumi/play/epabc",
    "https://www.bilibili.com/cheese/play/xx61",
    "https://b23.tv/",
    "https://b23.tv/abc/def",
    // Other sites, no URL.
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
    "ftp://www.bilibili.com/video/BV117411r7R1",
    "no link here",
];

#[test]
fn accepted_urls() {
    let mut failures = Vec::new();
    for (input, id, canonical) in ACCEPTED {
        match Bilibili::detect(input) {
            Ok(t) if t.id == *id && t.canonical_url == *canonical && t.platform == "bilibili" => {}
            Ok(t) => failures.push(format!(
                "{input}: got id {} canonical {}, want {id} {canonical}",
                t.id, t.canonical_url
            )),
            Err(e) => failures.push(format!("{input}: rejected: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rejected_urls() {
    let mut failures = Vec::new();
    for input in REJECTED {
        match Bilibili::detect(input) {
            Err(e) if e.code() == "302" => {}
            Err(e) => failures.push(format!("{input}: wrong error {}", e.code())),
            Ok(t) => failures.push(format!("{input}: accepted as {}", t.id)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn declared_hosts_cover_every_accepted_url() {
    use mediaparse_sdk::urls::{InputUrl, host_matches};
    let info = Bilibili::info();
    for (input, _, canonical) in ACCEPTED {
        let url = mediaparse_sdk::share::first_url(input).unwrap_or_else(|| input.to_string());
        let host = InputUrl::parse(&url).map(|u| u.host).unwrap_or_default();
        assert!(
            info.url_hosts.iter().any(|p| host_matches(&host, p)),
            "{host} not in url_hosts"
        );
        let canonical_host = InputUrl::parse(canonical)
            .map(|u| u.host)
            .unwrap_or_default();
        assert!(
            info.api_hosts
                .iter()
                .any(|p| host_matches(&canonical_host, p)),
            "{canonical_host} not in api_hosts"
        );
    }
    for input in [
        "https://www.bilibili.tv/en/video/1",
        "https://www.biliintl.com/x",
    ] {
        let host = InputUrl::parse(input).map(|u| u.host).unwrap_or_default();
        assert!(
            !info.url_hosts.iter().any(|p| host_matches(&host, p)),
            "{host}"
        );
    }
}

/// Every URL above, and hostile variants of each, end in a target or a
/// failure, never a panic.
#[test]
fn detect_never_panics() {
    let urls = ACCEPTED.iter().map(|a| a.0).chain(REJECTED.iter().copied());
    mediaparse_sdk::testing::assert_detect_survives::<Bilibili>(urls);
}
