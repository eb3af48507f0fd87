//! Accepted Douyin URL shapes (SPEC.md) and the rejections it names.

use mediaparse_extractor_douyin::Douyin;
use mediaparse_sdk::Extractor;

const ID: &str = "6961737553342991651";

/// (input, expected id, expected canonical URL)
const ACCEPTED: &[(&str, &str, &str)] = &[
    // /video/{id}, with host variants, http, case, slash, query, encoding
    (
        "https://www.douyin.com/video/6961737553342991651",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    (
        "https://douyin.com/video/6961737553342991651/",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    (
        "http://WWW.DOUYIN.COM/video/6961737553342991651?previous_page=app_code_link",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    (
        "https://m.douyin.com/video/%36961737553342991651",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    (
        "www.douyin.com/video/6961737553342991651",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    // /note/{id}
    (
        "https://www.douyin.com/note/7616399587141737704",
        "7616399587141737704",
        "https://www.douyin.com/note/7616399587141737704",
    ),
    // share pages on iesdouyin
    (
        "https://www.iesdouyin.com/share/video/6961737553342991651/?region=CN&mid=6961737575002291000&u_code=0&did=MS4wLjABAAAA&iid=MS4wLjABAAAA&share_sign=abc",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    (
        "https://iesdouyin.com/share/note/7616399587141737704/",
        "7616399587141737704",
        "https://www.douyin.com/note/7616399587141737704",
    ),
    (
        "https://www.iesdouyin.com/share/slides/7341116582651981098/?from_ssr=1",
        "7341116582651981098",
        "https://www.douyin.com/note/7341116582651981098",
    ),
    (
        "https://www.douyin.com/share/video/6961737553342991651",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    (
        "https://www.iesdouyin.com/douyin/share/video/6961737553342991651/",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    // SEO, theater and vs pages
    (
        "https://www.douyin.com/shipin/7259284364052056124",
        "7259284364052056124",
        "https://www.douyin.com/video/7259284364052056124",
    ),
    (
        "https://www.douyin.com/lvdetail/7259284364052056124",
        "7259284364052056124",
        "https://www.douyin.com/video/7259284364052056124",
    ),
    (
        "https://www.douyin.com/vsdetail/7259284364052056124/",
        "7259284364052056124",
        "https://www.douyin.com/video/7259284364052056124",
    ),
    // query forms
    (
        "https://www.douyin.com/jingxuan?modal_id=6961737553342991651",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    (
        "https://www.douyin.com/discover?modal_id=6961737553342991651&from=1",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    (
        "https://www.douyin.com/search/%E7%8C%AB?aid=1&modal_id=6961737553342991651&type=general",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    (
        "https://www.douyin.com/user/MS4wLjABAAAAfbWhm2kBkPIi9XeDDGWtBO7Ns939XRTRvwCaEwNcda0?vid=7206519665021996303",
        "7206519665021996303",
        "https://www.douyin.com/video/7206519665021996303",
    ),
    (
        "https://www.douyin.com/user/self?modal_id=6961737553342991651&showTab=like",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    (
        "https://www.iesdouyin.com/share/detail?aweme_id=6961737553342991651",
        ID,
        "https://www.douyin.com/video/6961737553342991651",
    ),
    // short links and share text
    (
        "https://v.douyin.com/L4FJNR3/",
        "L4FJNR3",
        "https://v.douyin.com/L4FJNR3/",
    ),
    (
        "http://V.DOUYIN.COM/u-fCCopjutU",
        "u-fCCopjutU",
        "https://v.douyin.com/u-fCCopjutU/",
    ),
    (
        "7.43 pda:/ 让你在几秒钟之内记住我  https://v.douyin.com/L5pbfdP/ 复制此链接，打开Dou音搜索，直接观看视频！",
        "L5pbfdP",
        "https://v.douyin.com/L5pbfdP/",
    ),
    (
        "看看这个变身https://v.douyin.com/L4FJNR3/ 复制此链接",
        "L4FJNR3",
        "https://v.douyin.com/L4FJNR3/",
    ),
    (
        "[好看的视频](https://v.douyin.com/Nid-fFF_sdI/)",
        "Nid-fFF_sdI",
        "https://v.douyin.com/Nid-fFF_sdI/",
    ),
    (
        "https://v.douyin.com/iRNBho6u/复制此链接，打开Dou音搜索，直接观看视频！ 😀",
        "iRNBho6u",
        "https://v.douyin.com/iRNBho6u/",
    ),
    // play URLs (direct media): playwm becomes play
    (
        "https://aweme.snssdk.com/aweme/v1/playwm/?video_id=v0200f9f0000brl13ftjfrmhhde5v1v0&line=0&ratio=540p&watermark=1",
        "v0200f9f0000brl13ftjfrmhhde5v1v0",
        "https://aweme.snssdk.com/aweme/v1/play/?video_id=v0200f9f0000brl13ftjfrmhhde5v1v0&line=0&ratio=540p",
    ),
    (
        "https://api.amemv.com/aweme/v1/play/?video_id=v0200f9f0000brl13ftjfrmhhde5v1v0&line=1",
        "v0200f9f0000brl13ftjfrmhhde5v1v0",
        "https://api.amemv.com/aweme/v1/play/?video_id=v0200f9f0000brl13ftjfrmhhde5v1v0&line=1",
    ),
    (
        "https://www.iesdouyin.com/aweme/v1/play/?video_id=v0d00fg10000cfd3jcrc77u8rhj1k2q0&ratio=720p&line=0",
        "v0d00fg10000cfd3jcrc77u8rhj1k2q0",
        "https://www.iesdouyin.com/aweme/v1/play/?video_id=v0d00fg10000cfd3jcrc77u8rhj1k2q0&ratio=720p&line=0",
    ),
    // media CDNs
    (
        "https://v3-web.douyinvod.com/1f2e3d/66b0a1c2/video/tos/cn/tos-cn-ve-15/oQAbCdEf/?a=6383&br=1234",
        "oQAbCdEf",
        "https://v3-web.douyinvod.com/1f2e3d/66b0a1c2/video/tos/cn/tos-cn-ve-15/oQAbCdEf/?a=6383&br=1234",
    ),
    (
        "https://v26-dy-abc.zjcdn.com/1f2e3d/66b0a1c2/video/tos/cn/tos-cn-ve-15c001/oAbC/?a=1128",
        "oAbC",
        "https://v26-dy-abc.zjcdn.com/1f2e3d/66b0a1c2/video/tos/cn/tos-cn-ve-15c001/oAbC/?a=1128",
    ),
    (
        "https://p3-sign.douyinpic.com/tos-cn-i-0813/oQxyz~tplv-dy-aweme-images:q75.jpeg?x-expires=1700000000&x-signature=abc",
        "oQxyz~tplv-dy-aweme-images:q75.jpeg",
        "https://p3-sign.douyinpic.com/tos-cn-i-0813/oQxyz~tplv-dy-aweme-images:q75.jpeg?x-expires=1700000000&x-signature=abc",
    ),
];

const REJECTED: &[&str] = &[
    "https://www.douyin.com/user/MS4wLjABAAAAfbWhm2kBkPIi9XeDDGWtBO7Ns939XRTRvwCaEwNcda0",
    "https://www.iesdouyin.com/share/user/MS4wLjABAAAAfbWhm2kBkPIi9XeDDGWtBO7Ns939XRTRvwCaEwNcda0",
    "https://www.douyin.com/search/%E7%8C%AB?type=video",
    "https://www.douyin.com/collection/7127961421154552098",
    "https://www.douyin.com/mix/detail/7127961421154552098",
    "https://www.douyin.com/follow",
    "https://www.douyin.com/friend",
    "https://live.douyin.com/123456789",
    "https://webcast.amemv.com/douyin/webcast/reflow/7300000000000000000",
    "https://www.douyin.com/music/6961737553342991651",
    "https://www.douyin.com/hashtag/1626183225956429",
    "https://www.iesdouyin.com/xg/video/6961737553342991651",
    "https://www.douyin.com/",
    "https://www.douyin.com/video/12345",
    "https://www.douyin.com/video/abc",
    "https://v.douyin.com/",
    "https://aweme.snssdk.com/aweme/v1/play/",
    "https://v3-web.zjcdn.com/abc/video/",
    "https://www.tiktok.com/@a/video/7305827432509082913",
    "复制此链接，打开Dou音搜索，直接观看视频！",
    "ftp://www.douyin.com/video/6961737553342991651",
];

#[test]
fn accepted_shapes() {
    for (input, id, canonical) in ACCEPTED {
        let target = Douyin::detect(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(target.platform, "douyin", "{input}");
        assert_eq!(target.id, *id, "{input}");
        assert_eq!(target.canonical_url, *canonical, "{input}");
    }
}

#[test]
fn rejected_shapes() {
    for input in REJECTED {
        match Douyin::detect(input) {
            Err(f) => assert_eq!(f.code(), "302", "{input}: {f}"),
            Ok(t) => panic!("{input} was accepted as {t:?}"),
        }
    }
}

#[test]
fn info_routes_every_accepted_host() {
    let info = Douyin::info();
    for (input, _, _) in ACCEPTED {
        let url = mediaparse_extractor_douyin::urls::input_url(input).unwrap();
        assert!(
            info.url_hosts
                .iter()
                .any(|p| mediaparse_sdk::urls::host_matches(&url.host, p)),
            "{input}: host {} not in url_hosts",
            url.host
        );
    }
}

/// Every URL above, and hostile variants of each, end in a target or a
/// failure, never a panic.
#[test]
fn detect_never_panics() {
    let urls = ACCEPTED.iter().map(|a| a.0).chain(REJECTED.iter().copied());
    mediaparse_sdk::testing::assert_detect_survives::<Douyin>(urls);
}
