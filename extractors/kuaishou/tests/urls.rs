//! Accepted Kuaishou URL shapes (SPEC.md) and the rejections it names.

use mediaparse_extractor_kuaishou::Kuaishou;
use mediaparse_sdk::Extractor;

const ACCEPTED: &[(&str, &str, &str)] = &[
    (
        "https://www.kuaishou.com/short-video/3x43cyvcyph57i4",
        "3x43cyvcyph57i4",
        "https://www.kuaishou.com/short-video/3x43cyvcyph57i4",
    ),
    (
        "https://www.kuaishou.com/short-video/3x43cyvcyph57i4?authorId=3xabc&streamSource=find&area=homexxbrilliant",
        "3x43cyvcyph57i4",
        "https://www.kuaishou.com/short-video/3x43cyvcyph57i4",
    ),
    (
        "http://WWW.KUAISHOU.COM/short-video/3x43cyvcyph57i4/",
        "3x43cyvcyph57i4",
        "https://www.kuaishou.com/short-video/3x43cyvcyph57i4",
    ),
    (
        "https://video.kuaishou.com/short-video/3x43cyvcyph57i4",
        "3x43cyvcyph57i4",
        "https://www.kuaishou.com/short-video/3x43cyvcyph57i4",
    ),
    (
        "https://kuaishou.com/short-video/%33x43cyvcyph57i4",
        "3x43cyvcyph57i4",
        "https://www.kuaishou.com/short-video/3x43cyvcyph57i4",
    ),
    (
        "https://www.kuaishou.com/f/X-7aBcDeFgHi1234",
        "X-7aBcDeFgHi1234",
        "https://www.kuaishou.com/f/X-7aBcDeFgHi1234",
    ),
    (
        "https://v.kuaishou.com/13x0B9e",
        "13x0B9e",
        "https://v.kuaishou.com/13x0B9e",
    ),
    (
        "https://v.kuaishou.com/2wH7DR/",
        "2wH7DR",
        "https://v.kuaishou.com/2wH7DR",
    ),
    (
        "https://v.kuaishou.com/13x0B9e 致敬中国的英雄'钱学森' 该作品在快手被播放过1.2万次，点击链接，打开【快手】直接观看！",
        "13x0B9e",
        "https://v.kuaishou.com/13x0B9e",
    ),
    (
        "看看这个😂https://v.kuaishou.com/OSuHs3 复制此消息",
        "OSuHs3",
        "https://v.kuaishou.com/OSuHs3",
    ),
    (
        "https://v.m.chenzhongtech.com/fw/photo/3xbr5pi8hxi4e6s",
        "3xbr5pi8hxi4e6s",
        "https://www.kuaishou.com/short-video/3xbr5pi8hxi4e6s",
    ),
    (
        "https://kphk9mez.m.chenzhongtech.com/fw/photo/3xr4rd4rxfsh6jc?cc=share_copylink&fid=123&shareId=456",
        "3xr4rd4rxfsh6jc",
        "https://www.kuaishou.com/short-video/3xr4rd4rxfsh6jc",
    ),
    (
        "HTTP://Z7X2QWPA.M.CHENZHONGTECH.COM/fw/photo/3xr4rd4rxfsh6jc/?photoId=3xr4rd4rxfsh6jc",
        "3xr4rd4rxfsh6jc",
        "https://www.kuaishou.com/short-video/3xr4rd4rxfsh6jc",
    ),
    (
        "https://v.m.chenzhongtech.com/fw/long-video/3xr4rd4rxfsh6jc",
        "3xr4rd4rxfsh6jc",
        "https://www.kuaishou.com/short-video/3xr4rd4rxfsh6jc",
    ),
    (
        "https://m.gifshow.com/fw/photo/3xbr5pi8hxi4e6s",
        "3xbr5pi8hxi4e6s",
        "https://www.kuaishou.com/short-video/3xbr5pi8hxi4e6s",
    ),
    (
        "https://www.kwai.com/@kwai.user_1/video/5199555880897549098",
        "5199555880897549098",
        "https://www.kuaishou.com/short-video/5199555880897549098",
    ),
    (
        "https://www.kuaishou.com/brilliant?photoId=3x43cyvcyph57i4",
        "3x43cyvcyph57i4",
        "https://www.kuaishou.com/short-video/3x43cyvcyph57i4",
    ),
    (
        "https://v.m.chenzhongtech.com/fw/photo/3xbr5pi8hxi4e6s?photo_id=3xbr5pi8hxi4e6s",
        "3xbr5pi8hxi4e6s",
        "https://www.kuaishou.com/short-video/3xbr5pi8hxi4e6s",
    ),
];

const REJECTED: &[&str] = &[
    "https://www.kuaishou.com/profile/3xv78fxycm35nn4",
    "https://www.kuaishou.com/search/video?searchKey=%E7%8C%AB",
    "https://www.kuaishou.com/brilliant",
    "https://www.kuaishou.com/new-reco",
    "https://live.kuaishou.com/u/3xv78fxycm35nn4",
    "https://live.kuaishou.com/u/3xv78fxycm35nn4/3x43cyvcyph57i4",
    "https://klingai-share.kuaishou.com/share/abc123",
    "https://www.kuaishou.com/short-video/bad",
    "https://www.kuaishou.com/",
    "https://v.kuaishou.com/",
    "https://v.m.chenzhongtech.com/fw/user/3xv78fxycm35nn4",
    "https://www.kwai.com/@kwai.user_1",
    "https://www.douyin.com/video/6961737553342991651",
    "点击链接，打开【快手】直接观看！",
];

#[test]
fn accepted_shapes() {
    for (input, id, canonical) in ACCEPTED {
        let t = Kuaishou::detect(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(t.platform, "kuaishou", "{input}");
        assert_eq!(t.id, *id, "{input}");
        assert_eq!(t.canonical_url, *canonical, "{input}");
    }
}

#[test]
fn rejected_shapes() {
    for input in REJECTED {
        match Kuaishou::detect(input) {
            Err(f) => assert_eq!(f.code(), "302", "{input}: {f}"),
            Ok(t) => panic!("{input} was accepted as {t:?}"),
        }
    }
}

#[test]
fn accepted_inputs_are_routed_here() {
    mediaparse_sdk::testing::assert_routed_to::<Kuaishou>(
        ACCEPTED.iter().map(|(input, _, _)| *input),
    );
}

/// Every URL above, and hostile variants of each, end in a target or a
/// failure, never a panic.
#[test]
fn detect_never_panics() {
    let urls = ACCEPTED.iter().map(|a| a.0).chain(REJECTED.iter().copied());
    mediaparse_sdk::testing::assert_detect_survives::<Kuaishou>(urls);
}
