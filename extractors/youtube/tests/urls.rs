//! Every accepted YouTube URL shape and host variant, and every rejection.

use mediaparse_extractor_youtube::YouTube;
use mediaparse_sdk::Extractor;

/// (input, expected id)
const ACCEPTED: &[(&str, &str)] = &[
    // /watch?v=
    ("https://www.youtube.com/watch?v=M4gD1WSo5mA", "M4gD1WSo5mA"),
    ("https://youtube.com/watch?v=M4gD1WSo5mA", "M4gD1WSo5mA"),
    ("http://www.youtube.com/watch?v=M4gD1WSo5mA", "M4gD1WSo5mA"),
    (
        "https://m.youtube.com/watch?v=M4gD1WSo5mA&feature=youtu.be",
        "M4gD1WSo5mA",
    ),
    (
        "https://music.youtube.com/watch?v=M4gD1WSo5mA&si=Xy12",
        "M4gD1WSo5mA",
    ),
    ("https://www.YouTube.com/watch?v=M4gD1WSo5mA", "M4gD1WSo5mA"),
    ("HTTPS://WWW.YOUTUBE.COM/watch?v=M4gD1WSo5mA", "M4gD1WSo5mA"),
    (
        "https://www.youtube.com/watch/?v=M4gD1WSo5mA",
        "M4gD1WSo5mA",
    ),
    (
        "https://www.youtube.com/watch?feature=share&v=M4gD1WSo5mA",
        "M4gD1WSo5mA",
    ),
    (
        "https://www.youtube.com/watch?v=M4gD1WSo5mA&v=7PIMiDcwNvc",
        "M4gD1WSo5mA",
    ),
    (
        "https://www.youtube.com/watch?v=M4gD1WSo5mA&list=PLwQ8jHjkRYwKvyb4o6Ngj3TMHg8LZ4kdW&index=3",
        "M4gD1WSo5mA",
    ),
    (
        "https://www.youtube.com/watch?v=M4gD1WSo5mA&t=42s#t=42",
        "M4gD1WSo5mA",
    ),
    (
        "https://www.youtube.com/watch?x-yt-cl=84503534&amp;amp;v=M4gD1WSo5mA",
        "M4gD1WSo5mA",
    ),
    (
        "https://www.youtube.com/watch?v=M4gD1WSo5mA%26t%3D10",
        "M4gD1WSo5mA",
    ),
    (
        "https://www.youtube.com/watch%3Fv%3DM4gD1WSo5mA",
        "M4gD1WSo5mA",
    ),
    ("www.youtube.com/watch?v=M4gD1WSo5mA", "M4gD1WSo5mA"),
    (
        "https://www.youtube.com/watch_popup?v=M4gD1WSo5mA",
        "M4gD1WSo5mA",
    ),
    (
        "watch this https://www.youtube.com/watch?v=M4gD1WSo5mA !",
        "M4gD1WSo5mA",
    ),
    // /shorts/
    ("https://www.youtube.com/shorts/r5FpeOJItbw", "r5FpeOJItbw"),
    (
        "https://youtube.com/shorts/r5FpeOJItbw?feature=share",
        "r5FpeOJItbw",
    ),
    ("https://m.youtube.com/shorts/r5FpeOJItbw/", "r5FpeOJItbw"),
    // /live/ (a finished stream is an ordinary video)
    (
        "https://www.youtube.com/live/ENxZS6PUDuI?feature=shared",
        "ENxZS6PUDuI",
    ),
    ("https://m.youtube.com/live/ENxZS6PUDuI", "ENxZS6PUDuI"),
    // youtu.be
    ("https://youtu.be/M4gD1WSo5mA", "M4gD1WSo5mA"),
    ("https://youtu.be/M4gD1WSo5mA?si=abc", "M4gD1WSo5mA"),
    ("http://youtu.be/M4gD1WSo5mA?t=42", "M4gD1WSo5mA"),
    ("https://YOUTU.BE/M4gD1WSo5mA/", "M4gD1WSo5mA"),
    ("https://youtu.be/M4gD1WSo5mA//asd//", "M4gD1WSo5mA"),
    ("https://www.youtu.be/M4gD1WSo5mA", "M4gD1WSo5mA"),
    // embed and /v/ aliases
    ("https://www.youtube.com/embed/M4gD1WSo5mA", "M4gD1WSo5mA"),
    (
        "https://www.youtube.com/embed/M4gD1WSo5mA?start=10&autoplay=1",
        "M4gD1WSo5mA",
    ),
    (
        "https://www.youtube-nocookie.com/embed/M4gD1WSo5mA",
        "M4gD1WSo5mA",
    ),
    (
        "https://www.youtube.com/v/M4gD1WSo5mA?version=3",
        "M4gD1WSo5mA",
    ),
    // ids with - and _
    ("https://www.youtube.com/watch?v=_PL2HJKxnOM", "_PL2HJKxnOM"),
    ("https://youtu.be/don-t-exist", "don-t-exist"),
];

const REJECTED: &[&str] = &[
    // playlists
    "https://www.youtube.com/playlist?list=PLwQ8jHjkRYwKvyb4o6Ngj3TMHg8LZ4kdW",
    "https://www.youtube.com/watch?list=PLwQ8jHjkRYwKvyb4o6Ngj3TMHg8LZ4kdW",
    "https://www.youtube.com/embed/videoseries?list=PLwQ8jHjkRYwKvyb4o6Ngj3TMHg8LZ4kdW",
    "https://music.youtube.com/playlist?list=OLAK5uy_abc",
    // channels and community posts
    "https://www.youtube.com/channel/UCuLGmD72gJDBwmLw06X58SA",
    "https://www.youtube.com/@BKCHarvard",
    "https://www.youtube.com/@BKCHarvard/live",
    "https://www.youtube.com/@BKCHarvard/videos",
    "https://www.youtube.com/c/BKCHarvard",
    "https://www.youtube.com/user/BerkmanCenter",
    "https://www.youtube.com/channel/UCuLGmD72gJDBwmLw06X58SA/community",
    "https://www.youtube.com/post/UgkxCWeKPiIZHsVjYJXlxYA3wgTsFNBIbJmS",
    // live pages of a channel, feeds, search
    "https://www.youtube.com/embed/live_stream?channel=UCuLGmD72gJDBwmLw06X58SA",
    "https://www.youtube.com/feed/trending",
    "https://www.youtube.com/results?search_query=copyright",
    "https://www.youtube.com/hashtag/copyright",
    "https://www.youtube.com/",
    // ids of the wrong length
    "https://www.youtube.com/watch?v=M4gD1WSo5m",
    "https://www.youtube.com/watch?v=M4gD1WSo5mAA",
    "https://youtu.be/",
    "https://www.youtube.com/shorts/",
    // mirrors and other sites
    "https://yewtu.be/watch?v=M4gD1WSo5mA",
    "https://www.youtubekids.com/watch?v=M4gD1WSo5mA",
    "https://vimeo.com/76979871",
    "ftp://www.youtube.com/watch?v=M4gD1WSo5mA",
    "not a url",
];

#[test]
fn accepted_shapes() {
    for (input, id) in ACCEPTED {
        match YouTube::detect(input) {
            Ok(t) => {
                assert_eq!(t.id, *id, "{input}");
                assert_eq!(t.platform, "youtube");
                assert_eq!(
                    t.canonical_url,
                    format!("https://www.youtube.com/watch?v={id}")
                );
            }
            Err(f) => panic!("{input} rejected: {f}"),
        }
    }
}

#[test]
fn rejected_shapes() {
    for input in REJECTED {
        match YouTube::detect(input) {
            Ok(t) => panic!("{input} accepted as {}", t.id),
            Err(f) => assert_eq!(f.code(), "302", "{input}"),
        }
    }
}

#[test]
fn declared_hosts_cover_accepted_urls() {
    let info = YouTube::info();
    for (input, _) in ACCEPTED {
        let Some(url) =
            mediaparse_sdk::share::first_url(input).or_else(|| Some(format!("https://{input}")))
        else {
            continue;
        };
        let host = mediaparse_sdk::urls::InputUrl::parse(&url)
            .map(|u| u.host)
            .unwrap_or_default();
        assert!(
            info.url_hosts
                .iter()
                .any(|p| mediaparse_sdk::urls::host_matches(&host, p)),
            "{host} not in url_hosts"
        );
    }
}

/// Every URL above, and hostile variants of each, end in a target or a
/// failure, never a panic.
#[test]
fn detect_never_panics() {
    let urls = ACCEPTED.iter().map(|a| a.0).chain(REJECTED.iter().copied());
    mediaparse_sdk::testing::assert_detect_survives::<YouTube>(urls);
}
