//! URL recognition table: every SPEC.md shape and host variant, and every
//! rejection (code "302").

use mediaparse_extractor_weibo::Weibo;
use mediaparse_sdk::Extractor;

/// (input, expected target id, expected canonical URL or "" to skip)
const ACCEPTED: &[(&str, &str, &str)] = &[
    // /{uid}/{mblogid} and /{uid}/{mid}
    (
        "https://weibo.com/7827771738/N4xlMvjhI",
        "4910815147462302",
        "https://m.weibo.cn/detail/4910815147462302",
    ),
    (
        "https://www.weibo.com/7827771738/4910815147462302",
        "4910815147462302",
        "",
    ),
    (
        "https://weibo.com/0/QdGSDbsQI?type=comment#_rnd1700000000000",
        "5232630992732508",
        "",
    ),
    (
        "http://WEIBO.COM/1111681197/MohObmHwb/",
        "4857883315410503",
        "",
    ),
    (
        "https://weibo.cn/1111681197/MohObmHwb",
        "4857883315410503",
        "",
    ),
    // /status/ and /detail/ on the mobile host
    (
        "https://m.weibo.cn/status/4189191225395228",
        "4189191225395228",
        "",
    ),
    (
        "https://m.weibo.cn/status/FBqgOmDxO?mblogid=FBqgOmDxO&luicode=10000011",
        "4189191225395228",
        "",
    ),
    (
        "https://m.weibo.cn/detail/5120561132606436",
        "5120561132606436",
        "",
    ),
    (
        "https://weibo.com/detail/4857881961438732",
        "4857881961438732",
        "",
    ),
    (
        "https://M.WEIBO.CN/detail/4857881961438732/",
        "4857881961438732",
        "",
    ),
    // /tv/show/1034:{id}
    (
        "https://weibo.com/tv/show/1034:4797699866951785",
        "1034:4797699866951785",
        "https://weibo.com/tv/show/1034:4797699866951785",
    ),
    (
        "https://www.weibo.com/tv/show/1034:4797699866951785?mid=4797700463137878",
        "1034:4797699866951785",
        "https://weibo.com/tv/show/1034:4797699866951785?mid=4797700463137878",
    ),
    (
        "https://weibo.com/tv/show/1034%3A0123456789abcdef0123456789abcdef",
        "1034:0123456789abcdef0123456789abcdef",
        "",
    ),
    // /show?fid=1034:{id} on the video host (raw and percent-encoded colon)
    (
        "https://video.weibo.com/show?fid=1034:4967272104787984",
        "1034:4967272104787984",
        "",
    ),
    (
        "http://video.weibo.com/show/?fid=1034%3A4967272104787984&luicode=10000011",
        "1034:4967272104787984",
        "",
    ),
    // /show/{id} on the h5 video host
    (
        "https://h5.video.weibo.com/show/1034:4857848069554290",
        "1034:4857848069554290",
        "",
    ),
    // ?layerid=
    (
        "https://weibo.com/1111681197?layerid=4857883315410503",
        "4857883315410503",
        "",
    ),
    (
        "https://weibo.com/u/1111681197?tabtype=newVideo&layerid=4857883315410503",
        "4857883315410503",
        "",
    ),
    // short links and app links
    ("http://t.cn/A69UcM1M", "A69UcM1M", "https://t.cn/A69UcM1M"),
    (
        "https://T.CN/A69UcM1M/",
        "A69UcM1M",
        "https://t.cn/A69UcM1M",
    ),
    (
        "https://mapp.api.weibo.cn/fx/8c2b4e3a1f5d6e7a9b0c1d2e3f4a5b6c.html",
        "8c2b4e3a1f5d6e7a9b0c1d2e3f4a5b6c",
        "https://mapp.api.weibo.cn/fx/8c2b4e3a1f5d6e7a9b0c1d2e3f4a5b6c.html",
    ),
    // aliases real links use (not in SPEC.md)
    (
        "https://share.api.weibo.cn/share/366785473,4857883315410503.html",
        "4857883315410503",
        "",
    ),
    (
        "https://video.h5.weibo.cn/1034:4857848069554290/4857851275384530",
        "1034:4857848069554290",
        "",
    ),
    // share text
    (
        "湖南农民画工，20多年临摹了10万张梵高的画 http://t.cn/A69UcM1M \u{200b}\u{200b}",
        "A69UcM1M",
        "",
    ),
    (
        "快看 https://weibo.com/1111681197/MohObmHwb 转发",
        "4857883315410503",
        "",
    ),
    // no scheme
    ("m.weibo.cn/detail/4857881961438732", "4857881961438732", ""),
];

const REJECTED: &[&str] = &[
    // profiles
    "https://weibo.com/1111681197",
    "https://weibo.com/u/1111681197",
    "https://weibo.com/n/%E8%B4%B5%E5%A6%83%E9%86%89%E5%BD%B1",
    "https://m.weibo.cn/u/1813359803?uid=1813359803",
    "https://m.weibo.cn/profile/1813359803",
    "https://weibo.com/1111681197?tabtype=album",
    // search
    "https://s.weibo.com/weibo?q=%23%E5%87%A1%E5%B0%94%E8%B5%9B%E5%AE%AB%E8%BD%B6%E4%BA%8B%23",
    "https://m.weibo.cn/search?containerid=231522type%3D1",
    // topics and super topics
    "https://weibo.com/p/1008088b2e5b4d5a5a4c4e3b2a1c0d9e8f7a6b",
    "https://huati.weibo.com/k/%E5%87%A1%E5%B0%94%E8%B5%9B%E5%AE%AB",
    // live
    "https://weibo.com/l/wblive/p/show/1022:2321324857860000000001",
    // articles
    "https://weibo.com/ttarticle/p/show?id=2309404857900000000001",
    "https://card.weibo.com/article/m/show/id/2309404857900000000001",
    // home, malformed ids, other sites, no URL
    "https://weibo.com/",
    "https://weibo.com/1111681197/abc",
    "https://weibo.com/tv/show/1042:4797699866951785",
    "https://video.weibo.com/show?fid=",
    "https://t.cn/",
    "https://www.xiaohongshu.com/explore/6411cf99000000001300b6d9",
    "https://notweibo.com/1111681197/MohObmHwb",
    "转发微博",
];

#[test]
fn accepted_urls() {
    for (input, id, canonical) in ACCEPTED {
        let target = Weibo::detect(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(target.platform, "weibo");
        assert_eq!(&target.id, id, "{input}");
        if !canonical.is_empty() {
            assert_eq!(&target.canonical_url, canonical, "{input}");
        }
    }
}

#[test]
fn rejected_urls() {
    for input in REJECTED {
        match Weibo::detect(input) {
            Err(f) => assert_eq!(f.code(), "302", "{input}: {f}"),
            Ok(t) => panic!("{input} was accepted as {t:?}"),
        }
    }
}

#[test]
fn declared_url_hosts_cover_the_accepted_inputs() {
    let info = Weibo::info();
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
    mediaparse_sdk::testing::assert_detect_survives::<Weibo>(urls);
}
