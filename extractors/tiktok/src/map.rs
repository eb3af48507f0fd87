//! `itemStruct` (web, camelCase) → the media object and platformData
//! (guide §4–§5).

use mediaparse_sdk::fields::{self, Object, RawValue, Text, kind_of};
use mediaparse_sdk::serde_json;
use mediaparse_sdk::{
    Audio, Exchange, Extraction, Failure, Header, Image, Media, MediaSource, ObjectWriter,
    PlatformData, Result, Video, ua,
};
use serde::Deserialize;

use crate::flow::{is_page, received_cookies};

// The members `map` reads, straight from the `itemStruct` text: strings
// that are often escape-free borrow from it (`Text`), URLs are owned.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Item<'a> {
    desc: Option<String>,
    #[serde(borrow)]
    video: Option<VideoInfo<'a>>,
    image_post: Option<ImagePost>,
    music: Option<Music>,
    is_content_classified: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct VideoInfo<'a> {
    #[serde(deserialize_with = "fields::f64")]
    duration: f64,
    #[serde(deserialize_with = "fields::u32")]
    width: u32,
    #[serde(deserialize_with = "fields::u32")]
    height: u32,
    #[serde(borrow)]
    definition: Option<Text<'a>>,
    #[serde(borrow)]
    ratio: Option<Text<'a>>,
    cover: Option<String>,
    origin_cover: Option<String>,
    play_addr: Option<PlayAddr>,
    #[serde(borrow)]
    bitrate_info: Option<Vec<BitrateInfo<'a>>>,
}

/// `playAddr` is a URL string, or in some answers a list of `{src}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum PlayAddr {
    Url(String),
    List(Vec<Src>),
    Other(#[allow(dead_code)] serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct Src {
    #[serde(default)]
    src: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase", default)]
struct BitrateInfo<'a> {
    #[serde(borrow)]
    gear_name: Option<Text<'a>>,
    #[serde(borrow)]
    codec_type: Option<Text<'a>>,
    #[serde(borrow)]
    play_addr: Option<BitratePlayAddr<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase", default)]
struct BitratePlayAddr<'a> {
    url_list: Option<Vec<Option<String>>>,
    #[serde(deserialize_with = "fields::u32")]
    width: u32,
    #[serde(deserialize_with = "fields::u32")]
    height: u32,
    #[serde(borrow)]
    url_key: Option<Text<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ImagePost {
    images: Option<Vec<PostImage>>,
    cover: Option<PostImage>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct PostImage {
    #[serde(rename = "imageURL")]
    image_url: Option<UrlList>,
    #[serde(deserialize_with = "fields::u32")]
    image_width: u32,
    #[serde(deserialize_with = "fields::u32")]
    image_height: u32,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct UrlList {
    url_list: Option<Vec<Option<String>>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Music {
    play_url: Option<MusicUrl>,
    original: Option<bool>,
}

/// Web answers give `playUrl` as a string; app-shaped ones as `{urlList}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum MusicUrl {
    Url(String),
    List(UrlList),
    Other(#[allow(dead_code)] serde::de::IgnoredAny),
}

/// Map one `itemStruct` (its JSON text) to the media object. `headers` go
/// on every video and audio item (Referer, User-Agent, the page's
/// `tt_chain_token` cookie).
pub fn media(item: &Object, headers: &[Header]) -> Result<Media> {
    let item: Item = item.read("itemStruct")?;
    let video = item.video.unwrap_or_default();
    let mut media = Media {
        title: item.desc.unwrap_or_default(),
        thumbnail: nonempty(video.cover.as_deref())
            .or(nonempty(video.origin_cover.as_deref()))
            .unwrap_or_default()
            .to_string(),
        duration: video.duration,
        ..Media::default()
    };
    match item.image_post {
        // The presence of `imagePost` is the photo-post signal.
        Some(post) => {
            if let Some(cover) = post.cover.as_ref().and_then(|c| first_url(c, false)) {
                media.thumbnail = cover;
            }
            media.images = post
                .images
                .unwrap_or_default()
                .iter()
                .filter_map(|image| {
                    Some(Image {
                        url: first_url(image, true)?,
                        width: image.image_width,
                        height: image.image_height,
                    })
                })
                .collect();
        }
        None => media.videos = videos(&video, headers),
    }
    if let Some(url) = item.music.as_ref().and_then(music_url) {
        let original = item.music.as_ref().and_then(|m| m.original) == Some(true);
        media.audios.push(Audio {
            mime_type: audio_mime(&url).into(),
            url,
            quality: if original { "original" } else { "music" }.into(),
            bitrate: 0,
            source: MediaSource::Direct,
            headers: headers.to_vec(),
        });
    }
    if media.videos.is_empty()
        && media.images.is_empty()
        && item.is_content_classified == Some(true)
    {
        return Err(Failure::LoginRequired(
            "TikTok shows this post (classified as sensitive) only to signed-in adults".into(),
        ));
    }
    Ok(media)
}

/// `audio/mpeg` when the URL says `mime_type=audio_mpeg` (guide §5) or is an
/// `.mp3` file (licensed sounds on the music CDN); `audio/mp4` otherwise.
pub(crate) fn audio_mime(url: &str) -> &'static str {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    if url.contains("mime_type=audio_mpeg") || path.to_ascii_lowercase().ends_with(".mp3") {
        "audio/mpeg"
    } else {
        "audio/mp4"
    }
}

/// Every `bitrateInfo` rendition and every URL in its `UrlList` (alternate
/// hosts kept, source order), then `playAddr`. The watermarked
/// `downloadAddr` is never emitted; `bytevc2` renditions (unplayable) and
/// `/media-video-hvc1/` URLs (sometimes video-only or 404) are dropped.
fn videos(video: &VideoInfo, headers: &[Header]) -> Vec<Video> {
    let item = |url: &str, quality: &str, size: (u32, u32)| {
        Video::mp4(url, quality, size, headers.to_vec())
    };
    let mut out = Vec::new();
    for rendition in video.bitrate_info.iter().flatten() {
        if rendition
            .codec_type
            .as_ref()
            .is_some_and(|c| c.as_str().eq_ignore_ascii_case("bytevc2"))
        {
            continue;
        }
        let Some(addr) = &rendition.play_addr else {
            continue;
        };
        let key = addr
            .url_key
            .as_ref()
            .and_then(|k| parse_url_key(k.as_str()));
        if key.is_some_and(|k| k.codec == "bytevc2") {
            continue;
        }
        let size = if addr.width > 0 && addr.height > 0 {
            (addr.width, addr.height)
        } else {
            key.map(|k| scale(k.short_side, video.width, video.height))
                .unwrap_or((0, 0))
        };
        let quality = nonempty(rendition.gear_name.as_ref().map(Text::as_str))
            .map(str::to_string)
            .or_else(|| key.map(|k| format!("{}p", k.label)))
            .unwrap_or_default();
        for url in addr.url_list.iter().flatten().flatten() {
            if usable(url) {
                out.push(item(url, &quality, size));
            }
        }
    }
    let quality = nonempty(video.definition.as_ref().map(Text::as_str))
        .or(nonempty(video.ratio.as_ref().map(Text::as_str)))
        .unwrap_or_default();
    let size = (video.width, video.height);
    match &video.play_addr {
        Some(PlayAddr::Url(url)) if usable(url) => out.push(item(url, quality, size)),
        Some(PlayAddr::List(list)) => {
            for url in list.iter().filter_map(|s| s.src.as_deref()) {
                if usable(url) {
                    out.push(item(url, quality, size));
                }
            }
        }
        _ => {}
    }
    out
}

pub(crate) fn usable(url: &str) -> bool {
    (url.starts_with("https://") || url.starts_with("http://"))
        && !url.contains("/media-video-hvc1/")
}

pub(crate) fn nonempty(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.trim().is_empty())
}

/// An image's URL: the `urlList` entry that is a JPEG (cobalt), else the first.
fn first_url(image: &PostImage, prefer_jpeg: bool) -> Option<String> {
    let list: Vec<&str> = image
        .image_url
        .as_ref()?
        .url_list
        .iter()
        .flatten()
        .flatten()
        .map(String::as_str)
        .filter(|u| usable(u))
        .collect();
    let jpeg = prefer_jpeg
        .then(|| list.iter().find(|u| u.contains(".jpeg?")))
        .flatten();
    jpeg.or(list.first()).map(|u| u.to_string())
}

fn music_url(music: &Music) -> Option<String> {
    match music.play_url.as_ref()? {
        MusicUrl::Url(url) => Some(url.clone()),
        MusicUrl::List(list) => list.url_list.iter().flatten().flatten().next().cloned(),
        MusicUrl::Other(_) => None,
    }
    .filter(|u| usable(u))
}

/// The parts of a `UrlKey` such as `v0f0…_h264_540p_1711805`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UrlKey<'a> {
    pub codec: &'a str,
    /// The label's number (`540` for `540p`).
    pub label: u32,
    /// The real short side: TikTok's "540p" is 576 pixels.
    pub short_side: u32,
}

/// Parse `{uri}_{codec}_{n}p_{bitrate}` from the end.
pub fn parse_url_key(key: &str) -> Option<UrlKey<'_>> {
    let mut parts = key.rsplit('_');
    let bitrate = parts.next()?;
    let resolution = parts.next()?;
    let codec = parts.next()?;
    parts.next()?; // the uri before them
    let label: u32 = resolution.strip_suffix('p')?.parse().ok()?;
    if !bitrate.bytes().all(|b| b.is_ascii_digit()) || codec.is_empty() || label == 0 {
        return None;
    }
    Some(UrlKey {
        codec,
        label,
        short_side: if label == 540 { 576 } else { label },
    })
}

/// Width and height of a rendition whose short side is `short`, in the
/// aspect of the post's `video.width`/`video.height` (portrait 9:16 when
/// those are unknown). Sides are rounded to even numbers, as encoders do.
pub fn scale(short: u32, width: u32, height: u32) -> (u32, u32) {
    let (w, h) = if width > 0 && height > 0 {
        (u64::from(width), u64::from(height))
    } else {
        (9, 16)
    };
    let short = u64::from(short);
    let even = |x: u64| u32::try_from(x - x % 2).unwrap_or(0);
    if w < h {
        (even(short), even(short * h / w))
    } else {
        let long = short * w / h;
        (even(long + long % 2), even(short))
    }
}

/// The members of an `itemStruct` platformData renames or reshapes, as
/// their text.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct DataSource<'a> {
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    desc: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    author: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    author_id: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    video: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    image_post: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    stats: Option<&'a RawValue>,
    #[serde(borrow, rename = "statsV2", deserialize_with = "fields::raw")]
    stats_v2: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ImagePostSource<'a> {
    #[serde(borrow, deserialize_with = "fields::raw")]
    images: Option<&'a RawValue>,
}

/// platformData: the final `itemStruct` (members copied as their text, no
/// tree built) with SPEC's listed names built from the web names
/// (`id`→`aweme_id`, `stats`/`statsV2`→`statistics`,
/// `imagePost.images`→`images`), every other public member kept.
pub fn platform_data(item: &Object) -> Result<PlatformData> {
    let source: DataSource = item.read("itemStruct")?;
    let is = |k: u8| move |v: &&RawValue| kind_of(v) == k;
    let mut out = ObjectWriter::new();
    out.str("aweme_id", source.id.as_str());
    match source.desc.filter(is(b'"')) {
        Some(desc) => out.raw("desc", desc),
        None => out.str("desc", ""),
    };
    match source.author {
        Some(author) if kind_of(author) == b'{' => {
            out.raw("author", author);
        }
        // SIGI_STATE items name the author by handle, with `authorId` beside it.
        Some(handle) if kind_of(handle) == b'"' => {
            out.object("author", |a| {
                a.raw("uniqueId", handle);
                if let Some(id) = source.author_id {
                    a.raw("id", id);
                }
            });
        }
        _ => {
            out.object("author", |_| {});
        }
    }
    if let Some(video) = source.video.filter(is(b'{')) {
        out.raw("video", video);
    }
    let images = source
        .image_post
        .filter(is(b'{'))
        .and_then(|p| serde_json::from_str::<ImagePostSource>(p.get()).ok())
        .and_then(|p| p.images)
        .filter(is(b'['));
    match images {
        Some(images) => out.raw("images", images),
        None => out.value("images", &[] as &[u8]),
    };
    if let Some(stats) = source
        .stats
        .filter(is(b'{'))
        .or(source.stats_v2.filter(is(b'{')))
    {
        out.raw("statistics", stats);
    }
    out.rest_of_object(item);
    Ok(out.finish("tiktok"))
}

/// Media and platform data of one `itemStruct` (its members, found in the
/// pass that read the page), with the download headers the page answers in
/// `done` call for. The media and the platform data parse only the members
/// each names.
pub fn extraction(item: &Object, done: &[Exchange]) -> Result<Extraction> {
    Ok(Extraction {
        media: media(item, &media_headers(done))?,
        platform_data: platform_data(item)?,
    })
}

/// The Referer media downloads need.
const REFERER: &str = "https://www.tiktok.com/";

/// What a caller needs to download the video and audio URLs (guide §7):
/// the Referer, our User-Agent, and the anonymous `tt_chain_token` cookie
/// the page handed out (the URLs carry `tk=tt_chain_token`).
pub fn media_headers(done: &[Exchange]) -> Vec<Header> {
    let pages: Vec<&Exchange> = done.iter().filter(|e| is_page(e)).collect();
    let mut headers = vec![
        Header::new("Referer", REFERER),
        Header::new("User-Agent", ua::CHROME_139_WINDOWS),
    ];
    if let Some((_, token)) = received_cookies(&pages)
        .into_iter()
        .find(|(n, v)| n == "tt_chain_token" && !v.is_empty())
    {
        headers.push(Header::new("Cookie", format!("tt_chain_token={token}")));
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `itemStruct` text's members.
    fn parse_item(text: &str) -> Result<Object<'_>> {
        Object::from_text(text, "itemStruct")
    }

    #[test]
    fn url_keys() {
        let k = parse_url_key("v0f044gc0000clho6ffog65ruf6d59j0_bytevc1_1080p_1312594").unwrap();
        assert_eq!((k.codec, k.label, k.short_side), ("bytevc1", 1080, 1080));
        let k = parse_url_key("v0f044gc0000clho6ffog65ruf6d59j0_h264_540p_1711805").unwrap();
        assert_eq!((k.codec, k.label, k.short_side), ("h264", 540, 576));
        assert_eq!(parse_url_key(""), None);
        assert_eq!(parse_url_key("abc_h264_540p"), None);
        assert_eq!(parse_url_key("uri_h264_540x_1"), None);
        assert_eq!(parse_url_key("uri_h264_540p_x1"), None);
    }

    #[test]
    fn scaling_follows_the_post_aspect() {
        // The payload's post: 576×1024.
        assert_eq!(scale(576, 576, 1024), (576, 1024));
        assert_eq!(scale(720, 576, 1024), (720, 1280));
        assert_eq!(scale(1080, 576, 1024), (1080, 1920));
        // Landscape 16:9 and unknown aspect.
        assert_eq!(scale(720, 1280, 720), (1280, 720));
        assert_eq!(scale(576, 0, 0), (576, 1024));
        // Odd results are rounded to even.
        assert_eq!(scale(576, 3, 5), (576, 960));
        assert_eq!(scale(575, 5, 3), (958, 574));
    }

    #[test]
    fn lenient_numbers_and_missing_parts() {
        let item = parse_item(
            r#"{"desc":null,"video":{"duration":"12","width":"720","height":1280.0,"playAddr":[{"src":"https://v16-webapp-prime.tiktok.com/a"},{"src":null}]},"music":{"playUrl":{"urlList":["https://sf16-ies-music.tiktokcdn.com/a.mp3"]}}}"#,
        )
        .unwrap();
        let media = media(&item, &[]).unwrap();
        assert_eq!(media.title, "");
        assert_eq!(media.duration, 12.0);
        assert_eq!(media.videos.len(), 1);
        assert_eq!((media.videos[0].width, media.videos[0].height), (720, 1280));
        assert_eq!(media.audios[0].mime_type, "audio/mpeg");
        assert_eq!(media.audios[0].quality, "music");
        assert_eq!(
            audio_mime("https://v16-webapp-prime.tiktok.com/video/tos/x/?mime_type=audio_mp4"),
            "audio/mp4"
        );
        assert_eq!(
            audio_mime("https://v16-webapp-prime.tiktok.com/video/tos/x/?a=1&mime_type=audio_mpeg"),
            "audio/mpeg"
        );
    }

    #[test]
    fn drops_bytevc2_and_hvc1_paths() {
        let item = parse_item(
            r#"{"video":{"bitrateInfo":[
                {"CodecType":"bytevc2","GearName":"a","PlayAddr":{"UrlList":["https://v16-webapp-prime.tiktok.com/x"]}},
                {"CodecType":"h265_hvc1","GearName":"b","PlayAddr":{"UrlKey":"u_bytevc2_720p_1","UrlList":["https://v16-webapp-prime.tiktok.com/y"]}},
                {"CodecType":"h265_hvc1","GearName":"c","PlayAddr":{"Width":720,"Height":1280,"UrlList":["https://v16-webapp-prime.tiktok.com/media-video-hvc1/z","https://v19-webapp-prime.tiktok.com/w",null]}}
            ]}}"#,
        )
        .unwrap();
        let media = media(&item, &[]).unwrap();
        let urls: Vec<&str> = media.videos.iter().map(|v| v.url.as_str()).collect();
        assert_eq!(urls, ["https://v19-webapp-prime.tiktok.com/w"]);
        assert_eq!((media.videos[0].width, media.videos[0].height), (720, 1280));
        assert_eq!(media.videos[0].quality, "c");
    }

    #[test]
    fn classified_post_without_media_needs_login() {
        let item = parse_item(r#"{"id":"1","isContentClassified":true}"#).unwrap();
        assert_eq!(media(&item, &[]).unwrap_err().code(), "login_required");
        let item = parse_item(r#"{"id":"1"}"#).unwrap();
        assert!(media(&item, &[]).unwrap().is_empty());
    }

    #[test]
    fn platform_data_names() {
        let item = parse_item(
            r#"{"id":"7305827432509082913","desc":"d","author":"someone","authorId":"68","statsV2":{"playCount":"5"},"imagePost":{"images":[{"imageWidth":1}]}}"#,
        )
        .unwrap();
        let data = platform_data(&item).unwrap().to_value();
        assert_eq!(data["aweme_id"], "7305827432509082913");
        assert_eq!(data["author"]["uniqueId"], "someone");
        assert_eq!(data["author"]["id"], "68");
        assert_eq!(data["statistics"]["playCount"], "5");
        assert_eq!(data["images"][0]["imageWidth"], 1);
        assert_eq!(data["video"], serde_json::json!({}));
        assert_eq!(data["statsV2"]["playCount"], "5");
        assert!(mediaparse_sdk::spec::check_platform_data("tiktok", &data).is_empty());
    }
}
