//! URL recognition table: every SPEC.md shape and host variant, and every
//! rejection (code "302").

use mediaparse_extractor_xiaohongshu::Xiaohongshu;
use mediaparse_sdk::Extractor;

const ID: &str = "6411cf99000000001300b6d9";

/// (input, expected target id, expected canonical URL or "" to skip)
const ACCEPTED: &[(&str, &str, &str)] = &[
    // /explore/{id}
    (
        "https://www.xiaohongshu.com/explore/6411cf99000000001300b6d9",
        ID,
        "https://www.xiaohongshu.com/explore/6411cf99000000001300b6d9",
    ),
    (
        "https://www.xiaohongshu.com/explore/6411cf99000000001300b6d9?xsec_token=ABvEx1nSl3W-RDOrtTZbrS4y5s8oTkFrTYFxpPpGbrEfQ=&xsec_source=pc_feed",
        ID,
        "https://www.xiaohongshu.com/explore/6411cf99000000001300b6d9?xsec_token=ABvEx1nSl3W-RDOrtTZbrS4y5s8oTkFrTYFxpPpGbrEfQ%3D&xsec_source=pc_feed",
    ),
    // bare host, http, upper-case host, trailing slash
    (
        "http://xiaohongshu.com/explore/6411cf99000000001300b6d9",
        ID,
        "",
    ),
    (
        "https://WWW.XIAOHONGSHU.COM/explore/6411cf99000000001300b6d9/",
        ID,
        "",
    ),
    // percent-encoded token keeps its value
    (
        "https://www.xiaohongshu.com/explore/6411cf99000000001300b6d9?xsec_token=CB%2BabC%3D&xsec_source=pc_share#comment",
        ID,
        "https://www.xiaohongshu.com/explore/6411cf99000000001300b6d9?xsec_token=CB%2BabC%3D&xsec_source=pc_share",
    ),
    // /discovery/item/{id}: token kept, other share parameters dropped
    (
        "https://www.xiaohongshu.com/discovery/item/674051740000000007027a15?app_platform=ios&app_version=8.62&share_from_user_hidden=true&xsec_source=app_share&type=video&xsec_token=CBk2=&author_share=1",
        "674051740000000007027a15",
        "https://www.xiaohongshu.com/explore/674051740000000007027a15?xsec_token=CBk2%3D&xsec_source=app_share",
    ),
    // percent-encoded path segment
    (
        "https://www.xiaohongshu.com/discovery/item/%36%37%34051740000000007027a15",
        "674051740000000007027a15",
        "",
    ),
    // international host
    (
        "https://www.rednote.com/explore/6411cf99000000001300b6d9?xsec_token=AB1",
        ID,
        "https://www.xiaohongshu.com/explore/6411cf99000000001300b6d9?xsec_token=AB1&xsec_source=pc_share",
    ),
    (
        "https://rednote.com/discovery/item/6411cf99000000001300b6d9",
        ID,
        "",
    ),
    // note opened from a profile (XHS-Downloader treats it as a note link)
    (
        "https://www.xiaohongshu.com/user/profile/60503d3a0000000001008385/6411cf99000000001300b6d9?xsec_token=AB2",
        ID,
        "",
    ),
    // short hosts: /a/, /m/, /o/, legacy /{code}, .cn, http, upper case
    (
        "https://xhslink.com/a/8Dy7lYQ3Zm1",
        "8Dy7lYQ3Zm1",
        "https://xhslink.com/a/8Dy7lYQ3Zm1",
    ),
    (
        "https://xhslink.com/m/2wAnaTkLRc1",
        "2wAnaTkLRc1",
        "https://xhslink.com/m/2wAnaTkLRc1",
    ),
    (
        "http://XHSLINK.COM/o/5HXq7pL2Ab/",
        "5HXq7pL2Ab",
        "https://xhslink.com/o/5HXq7pL2Ab",
    ),
    (
        "http://xhslink.com/sA5Zcg",
        "sA5Zcg",
        "https://xhslink.com/sA5Zcg",
    ),
    (
        "https://xhslink.cn/a/AbC123?from=share",
        "AbC123",
        "https://xhslink.cn/a/AbC123",
    ),
    (
        "HTTP://XHSLINK.CN/o/5HXq7pL2Ab/",
        "5HXq7pL2Ab",
        "https://xhslink.cn/o/5HXq7pL2Ab",
    ),
    (
        "73 仙崽666发布了一篇小红书笔记，快来看吧！ 😆 5HXq7pL2Ab 😆 http://xhslink.cn/o/5HXq7pL2Ab，复制本条信息，打开【小红书】App查看精彩内容！",
        "5HXq7pL2Ab",
        "https://xhslink.cn/o/5HXq7pL2Ab",
    ),
    // share text
    (
        "64 仙崽666发布了一篇小红书笔记，快来看吧！ 😆 8Dy7lYQ3Zm1 😆 http://xhslink.com/a/8Dy7lYQ3Zm1，复制本条信息，打开【小红书】App查看精彩内容！",
        "8Dy7lYQ3Zm1",
        "https://xhslink.com/a/8Dy7lYQ3Zm1",
    ),
    (
        "看看这篇 https://www.xiaohongshu.com/explore/6411cf99000000001300b6d9?xsec_token=AB3 好看",
        ID,
        "",
    ),
    (
        "[笔记](https://www.xiaohongshu.com/discovery/item/6411cf99000000001300b6d9)",
        ID,
        "",
    ),
    // no scheme
    (
        "www.xiaohongshu.com/explore/6411cf99000000001300b6d9",
        ID,
        "",
    ),
];

const REJECTED: &[&str] = &[
    // profiles
    "https://www.xiaohongshu.com/user/profile/60503d3a0000000001008385",
    "https://www.rednote.com/user/profile/619253540000000010006899?xsec_token=AB1",
    // search
    "https://www.xiaohongshu.com/search_result?keyword=%E7%8C%AB&source=web_explore_feed",
    // collections
    "https://www.xiaohongshu.com/board/5e0234b4000000000100017d",
    // explore feed without id, home page
    "https://www.xiaohongshu.com/explore",
    "https://www.xiaohongshu.com/",
    // topic and live pages
    "https://www.xiaohongshu.com/page/topics/5be26541ad58650001ab19bb",
    "https://www.xiaohongshu.com/livestream/569318498376302489",
    // malformed ids
    "https://www.xiaohongshu.com/explore/6411cf99000000001300b6d",
    "https://www.xiaohongshu.com/explore/6411cf99000000001300b6dz",
    // short host without a code, or with too many segments
    "https://xhslink.com/",
    "https://xhslink.com/a/b/c",
    // other sites and no URL at all
    "https://www.douyin.com/video/7305827432509082913",
    "https://evilxiaohongshu.com/explore/6411cf99000000001300b6d9",
    "复制本条信息，打开【小红书】App查看精彩内容！",
    "",
];

#[test]
fn accepted_urls() {
    for (input, id, canonical) in ACCEPTED {
        let target = Xiaohongshu::detect(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(target.platform, "xiaohongshu");
        assert_eq!(&target.id, id, "{input}");
        if !canonical.is_empty() {
            assert_eq!(&target.canonical_url, canonical, "{input}");
        }
    }
}

#[test]
fn rejected_urls() {
    for input in REJECTED {
        match Xiaohongshu::detect(input) {
            Err(f) => assert_eq!(f.code(), "302", "{input}: {f}"),
            Ok(t) => panic!("{input} was accepted as {t:?}"),
        }
    }
}

#[test]
fn declared_url_hosts_cover_the_accepted_inputs() {
    let info = Xiaohongshu::info();
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
    mediaparse_sdk::testing::assert_detect_survives::<Xiaohongshu>(urls);
}
