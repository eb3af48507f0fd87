//! Every accepted X / Twitter URL shape and host variant, and every rejection.

use mediaparse_extractor_twitter::Twitter;
use mediaparse_sdk::Extractor;

/// (input, expected id)
const ACCEPTED: &[(&str, &str)] = &[
    // /{user}/status/{id} on both hosts and their prefixes
    (
        "https://x.com/X/status/1697304622749086011",
        "1697304622749086011",
    ),
    (
        "https://twitter.com/DivineDropbear/status/1841206275088290279",
        "1841206275088290279",
    ),
    (
        "https://www.x.com/DivineDropbear/status/1841206275088290279",
        "1841206275088290279",
    ),
    (
        "https://www.twitter.com/DivineDropbear/status/1841206275088290279",
        "1841206275088290279",
    ),
    (
        "https://mobile.twitter.com/DivineDropbear/status/1841206275088290279",
        "1841206275088290279",
    ),
    (
        "https://mobile.x.com/DivineDropbear/status/1841206275088290279",
        "1841206275088290279",
    ),
    (
        "https://m.twitter.com/DivineDropbear/status/1841206275088290279",
        "1841206275088290279",
    ),
    ("http://twitter.com/jack/status/20", "20"),
    ("HTTPS://X.COM/jack/status/20", "20"),
    ("https://x.com/jack/status/20/", "20"),
    (
        "https://x.com/SpaceX/status/1848831595014459513?s=20&t=AbCdEf123",
        "1848831595014459513",
    ),
    (
        "https://x.com/SpaceX/status/1848831595014459513#m",
        "1848831595014459513",
    ),
    ("https://twitter.com/jack/statuses/20", "20"),
    ("x.com/jack/status/20", "20"),
    // /i/status/{id} and /i/web/status/{id}
    (
        "https://x.com/i/status/1841206275088290279",
        "1841206275088290279",
    ),
    (
        "https://twitter.com/i/status/1841206275088290279/video/1",
        "1841206275088290279",
    ),
    (
        "https://twitter.com/i/web/status/1841206275088290279",
        "1841206275088290279",
    ),
    // /u/{user}/{id}
    (
        "https://x.com/u/vo1twasdowned/1964084223871971826",
        "1964084223871971826",
    ),
    // /video/{n}, /photo/{n}, /mediaviewer suffixes select nothing
    (
        "https://x.com/DivineDropbear/status/1841206275088290279/video/1",
        "1841206275088290279",
    ),
    (
        "https://x.com/SpaceX/status/1848831595014459513/photo/3",
        "1848831595014459513",
    ),
    (
        "https://x.com/SpaceX/status/1848831595014459513/photo/1/mediaViewer",
        "1848831595014459513",
    ),
    (
        "https://x.com/SpaceX/status/1848831595014459513/mediaviewer",
        "1848831595014459513",
    ),
    // whitespace after /status
    ("https://x.com/jack/status/ 20", "20"),
    ("https://x.com/jack/status/%2020", "20"),
    ("https://x.com/jack/status%20/20", "20"),
    // percent-encoding and share text
    ("https://x.com/%4Aack/status/20", "20"),
    (
        "look at this https://x.com/SpaceX/status/1848831595014459513?s=46 via @SpaceX",
        "1848831595014459513",
    ),
    ("[post](https://x.com/jack/status/20)", "20"),
];

const REJECTED: &[&str] = &[
    // profiles and profile tabs
    "https://x.com/SpaceX",
    "https://twitter.com/SpaceX/",
    "https://x.com/SpaceX/media",
    "https://x.com/SpaceX/likes",
    "https://x.com/SpaceX/with_replies",
    "https://x.com/SpaceX/status",
    // search and hashtags
    "https://x.com/search?q=starship&src=typed_query",
    "https://twitter.com/hashtag/starship",
    "https://x.com/explore",
    // spaces, broadcasts, events, communities, lists, bookmarks
    "https://x.com/i/spaces/1YpKkgVgNmNKj",
    "https://x.com/i/broadcasts/1ZkJzbdvLgRJv",
    "https://x.com/i/events/1696943637286101084",
    "https://x.com/i/communities/1493446837214187523",
    "https://x.com/i/lists/1234567890",
    "https://x.com/i/bookmarks?post_id=1848831595014459513",
    "https://twitter.com/i/cards/tfw/v1/1234567890",
    "https://twitter.com/i/videos/tweet/1841206275088290279",
    // direct media-CDN URLs and short links
    "https://pbs.twimg.com/media/GahebgHbEAEevTU.jpg",
    "https://video.twimg.com/ext_tw_video/1841204388993646595/pu/vid/avc1/1280x720/NRpzIavCR5W-jWFh.mp4",
    "https://t.co/RoMxHhAo9X",
    // bad ids, bad names, other suffixes, other sites
    "https://x.com/jack/status/abc",
    "https://x.com/jack/status/123456789012345678901",
    "https://x.com/bad-name/status/20",
    "https://x.com/jack/status/20/analytics",
    "https://x.com/jack/status/20/video/1/extra",
    "https://api.x.com/jack/status/20",
    "https://fxtwitter.com/jack/status/20",
    "https://example.com/jack/status/20",
    "not a url",
];

#[test]
fn accepted_shapes() {
    for (input, id) in ACCEPTED {
        match Twitter::detect(input) {
            Ok(t) => {
                assert_eq!(t.id, *id, "{input}");
                assert_eq!(t.platform, "twitter");
                assert_eq!(t.canonical_url, format!("https://x.com/i/status/{id}"));
            }
            Err(f) => panic!("{input} rejected: {f}"),
        }
    }
}

#[test]
fn rejected_shapes() {
    for input in REJECTED {
        match Twitter::detect(input) {
            Ok(t) => panic!("{input} accepted as {}", t.id),
            Err(f) => assert_eq!(f.code(), "302", "{input}"),
        }
    }
}

#[test]
fn accepted_inputs_are_routed_here() {
    mediaparse_sdk::testing::assert_routed_to::<Twitter>(ACCEPTED.iter().map(|(input, _)| *input));
}

/// Every URL above, and hostile variants of each, end in a target or a
/// failure, never a panic.
#[test]
fn detect_never_panics() {
    let urls = ACCEPTED.iter().map(|a| a.0).chain(REJECTED.iter().copied());
    mediaparse_sdk::testing::assert_detect_survives::<Twitter>(urls);
}
