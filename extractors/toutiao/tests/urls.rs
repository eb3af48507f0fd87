//! Accepted Toutiao URL shapes (SPEC.md) and the rejections it names.

use mediaparse_extractor_toutiao::Toutiao;
use mediaparse_sdk::Extractor;

const ACCEPTED: &[(&str, &str, &str)] = &[
    (
        "https://www.toutiao.com/video/7505382061495176511/",
        "7505382061495176511",
        "https://www.toutiao.com/video/7505382061495176511/",
    ),
    (
        "https://www.toutiao.com/video/7479446610359878153",
        "7479446610359878153",
        "https://www.toutiao.com/video/7479446610359878153/",
    ),
    (
        "http://WWW.TOUTIAO.COM/video/7479446610359878153/?log_from=a1b2c3&channel=",
        "7479446610359878153",
        "https://www.toutiao.com/video/7479446610359878153/",
    ),
    (
        "https://toutiao.com/video/7479446610359878153/",
        "7479446610359878153",
        "https://www.toutiao.com/video/7479446610359878153/",
    ),
    (
        "https://m.toutiao.com/video/7479446610359878153/?app=news_article&timestamp=1700000000&share_token=abc",
        "7479446610359878153",
        "https://www.toutiao.com/video/7479446610359878153/",
    ),
    (
        "https://m.toutiaoimg.cn/video/7479446610359878153/",
        "7479446610359878153",
        "https://www.toutiao.com/video/7479446610359878153/",
    ),
    (
        "https://m.toutiaocdn.com/video/%37479446610359878153/",
        "7479446610359878153",
        "https://www.toutiao.com/video/7479446610359878153/",
    ),
    (
        "https://m.toutiao.com/is/dtj1pND/",
        "dtj1pND",
        "https://m.toutiao.com/is/dtj1pND/",
    ),
    (
        "https://m.toutiao.com/is/ak5hTd8QN2o",
        "ak5hTd8QN2o",
        "https://m.toutiao.com/is/ak5hTd8QN2o/",
    ),
    (
        "HTTPS://M.TOUTIAO.COM/is/-ZK78WwoSjM/?=",
        "-ZK78WwoSjM",
        "https://m.toutiao.com/is/-ZK78WwoSjM/",
    ),
    (
        "https://www.toutiao.com/is/dtj1pND/",
        "dtj1pND",
        "https://m.toutiao.com/is/dtj1pND/",
    ),
    (
        "https://m.toutiao.com/isdtj1pND/",
        "dtj1pND",
        "https://m.toutiao.com/is/dtj1pND/",
    ),
    (
        "【不明飞行物】 https://m.toutiao.com/is/dtj1pND/ 点击链接打开",
        "dtj1pND",
        "https://m.toutiao.com/is/dtj1pND/",
    ),
];

const REJECTED: &[&str] = &[
    "https://www.toutiao.com/article/7667212185281528364/",
    "https://www.toutiao.com/a6349548387310305537/",
    "https://m.toutiao.com/i6349548387310305537/",
    "https://www.toutiao.com/group/6349548387310305537/",
    "https://www.toutiao.com/item/6349548387310305537/",
    "https://www.toutiao.com/w/1791234567890123/",
    "https://www.toutiao.com/c/user/token/MS4wLjABAAAA/",
    "https://www.toutiao.com/search/?keyword=%E8%A7%86%E9%A2%91",
    "https://www.toutiao.com/ch/news_hot/",
    "https://live.toutiao.com/room/7300000000000000000",
    "https://www.toutiao.com/",
    "https://www.toutiao.com/video/123/",
    "https://m.toutiao.com/is/",
    "https://www.ixigua.com/7479446610359878153",
    "no link at all",
];

#[test]
fn accepted_shapes() {
    for (input, id, canonical) in ACCEPTED {
        let t = Toutiao::detect(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(t.platform, "toutiao", "{input}");
        assert_eq!(t.id, *id, "{input}");
        assert_eq!(t.canonical_url, *canonical, "{input}");
    }
}

#[test]
fn rejected_shapes() {
    for input in REJECTED {
        match Toutiao::detect(input) {
            Err(f) => assert_eq!(f.code(), "302", "{input}: {f}"),
            Ok(t) => panic!("{input} was accepted as {t:?}"),
        }
    }
}

#[test]
fn accepted_inputs_are_routed_here() {
    mediaparse_sdk::testing::assert_routed_to::<Toutiao>(
        ACCEPTED.iter().map(|(input, _, _)| *input),
    );
}

/// Every URL above, and hostile variants of each, end in a target or a
/// failure, never a panic.
#[test]
fn detect_never_panics() {
    let urls = ACCEPTED.iter().map(|a| a.0).chain(REJECTED.iter().copied());
    mediaparse_sdk::testing::assert_detect_survives::<Toutiao>(urls);
}
