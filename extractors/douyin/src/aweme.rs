//! The aweme object (slidesinfo `aweme_details[0]`, share page
//! `videoInfoRes.item_list[0]`, web API `aweme_detail`: one schema) and its
//! mapping to the media object.

use mediaparse_sdk::{Audio, Header, Image, Media, MediaSource, Video, ids};
use serde::Deserialize;

use crate::urls::unwatermark;

// `null` and absent both mean "empty" upstream: `ids::nullable`.
#[derive(Debug, Default, Deserialize)]
pub struct Aweme {
    #[serde(default, deserialize_with = "ids::nullable")]
    pub desc: String,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub aweme_type: i64,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub media_type: i64,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub video: VideoInfo,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub images: Vec<ImageInfo>,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub music: Music,
}

/// `{uri, url_list, width?, height?}`: play addresses, covers, images.
#[derive(Debug, Default, Deserialize)]
pub struct Addr {
    #[serde(default, deserialize_with = "ids::nullable")]
    pub uri: String,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub url_list: Vec<String>,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub width: u32,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub height: u32,
}

#[derive(Debug, Default, Deserialize)]
pub struct VideoInfo {
    /// Milliseconds.
    #[serde(default, deserialize_with = "ids::nullable")]
    pub duration: f64,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub width: u32,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub height: u32,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub ratio: String,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub cover: Addr,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub origin_cover: Addr,
    #[serde(default)]
    pub play_addr: Option<Addr>,
    #[serde(default)]
    pub play_addr_h264: Option<Addr>,
    #[serde(default)]
    pub play_addr_265: Option<Addr>,
    #[serde(default)]
    pub download_addr: Option<Addr>,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub bit_rate: Vec<BitRate>,
}

#[derive(Debug, Default, Deserialize)]
pub struct BitRate {
    #[serde(default, deserialize_with = "ids::nullable")]
    pub gear_name: String,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub play_addr: Addr,
}

#[derive(Debug, Default, Deserialize)]
pub struct ImageInfo {
    #[serde(default, deserialize_with = "ids::nullable")]
    pub url_list: Vec<String>,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub width: u32,
    #[serde(default, deserialize_with = "ids::nullable")]
    pub height: u32,
    /// Live photos carry their clip here.
    #[serde(default)]
    pub video: Option<VideoInfo>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Music {
    #[serde(default, deserialize_with = "ids::nullable")]
    pub play_url: Addr,
}

/// Headers a caller sends to download video and audio (guide section 7).
pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.douyin.com/"),
        Header::new("User-Agent", mediaparse_sdk::ua::SAFARI_17_IPHONE),
    ]
}

fn is_webp(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.to_ascii_lowercase().ends_with(".webp") || path.contains(".webp~")
}

/// The first entry that is not WebP, else the first entry.
fn prefer_non_webp(list: &[String]) -> Option<&String> {
    list.iter().find(|u| !is_webp(u)).or_else(|| list.first())
}

fn is_http(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

impl Aweme {
    /// Image post: it has images, or its type says so.
    pub fn is_image_post(&self) -> bool {
        !self.images.is_empty() || matches!(self.aweme_type, 2 | 68) || self.media_type == 2
    }

    pub fn to_media(&self) -> Media {
        let headers = download_headers();
        let image_post = self.is_image_post();
        let mut media = Media {
            title: self.desc.clone(),
            thumbnail: self.thumbnail(),
            duration: if image_post {
                0.0
            } else {
                self.video.duration / 1000.0
            },
            ..Media::default()
        };
        if image_post {
            for image in &self.images {
                let Some(url) = prefer_non_webp(&image.url_list) else {
                    continue;
                };
                media.images.push(Image {
                    url: url.clone(),
                    width: image.width,
                    height: image.height,
                });
            }
            for image in &self.images {
                let Some(clip) = &image.video else { continue };
                let Some(addr) = &clip.play_addr else {
                    continue;
                };
                let (width, height) = dims(addr, clip.width, clip.height);
                for url in addr.url_list.iter().filter(|u| is_http(u)) {
                    media.videos.push(Video {
                        url: unwatermark(url),
                        quality: "live_photo".into(),
                        mime_type: "video/mp4".into(),
                        width,
                        height,
                        // Unverified whether the clips carry sound (guide section 5).
                        has_audio: false,
                        source: MediaSource::LivePhoto,
                        headers: headers.clone(),
                    });
                }
            }
        } else {
            media.videos = self.videos(&headers);
        }
        let mut audio_urls: Vec<&String> = self.music.play_url.url_list.iter().collect();
        if audio_urls.is_empty() && image_post {
            // Notes keep their background audio in `video.play_addr.uri`.
            if let Some(addr) = &self.video.play_addr
                && is_http(&addr.uri)
            {
                audio_urls.push(&addr.uri);
            }
        }
        for url in audio_urls.into_iter().filter(|u| is_http(u)) {
            media.audios.push(Audio {
                url: url.clone(),
                quality: "music".into(),
                mime_type: "audio/mpeg".into(),
                bitrate: 0,
                source: MediaSource::Direct,
                headers: headers.clone(),
            });
        }
        media
    }

    /// Every `bit_rate` rendition with each alternate host; without
    /// `bit_rate`, the plain play addresses (the watermarked download
    /// address only as a last resort).
    fn videos(&self, headers: &[Header]) -> Vec<Video> {
        let v = &self.video;
        let mut out = Vec::new();
        if !v.bit_rate.is_empty() {
            for rate in &v.bit_rate {
                let quality = if rate.gear_name.is_empty() {
                    height_label(rate.play_addr.height)
                } else {
                    rate.gear_name.clone()
                };
                push_renditions(&mut out, &rate.play_addr, &quality, v, headers);
            }
        } else {
            let label = if v.ratio.is_empty() {
                height_label(v.height)
            } else {
                v.ratio.clone()
            };
            if let Some(a) = &v.play_addr_h264 {
                push_renditions(&mut out, a, &format!("{label} h264"), v, headers);
            }
            if let Some(a) = &v.play_addr {
                push_renditions(&mut out, a, &label, v, headers);
            }
            if let Some(a) = &v.play_addr_265 {
                push_renditions(&mut out, a, &format!("{label} h265"), v, headers);
            }
        }
        if out.is_empty()
            && let Some(a) = &v.download_addr
        {
            push_renditions(&mut out, a, "download", v, headers);
        }
        out
    }

    fn thumbnail(&self) -> String {
        let v = &self.video;
        v.cover
            .url_list
            .iter()
            .find(|u| !is_webp(u))
            .or_else(|| v.origin_cover.url_list.first())
            .or_else(|| v.cover.url_list.first())
            .or_else(|| {
                self.images
                    .first()
                    .and_then(|i| prefer_non_webp(&i.url_list))
            })
            .cloned()
            .unwrap_or_default()
    }
}

/// One progressive video item per URL of a play address (alternate hosts
/// kept in order), unwatermarked.
fn push_renditions(
    out: &mut Vec<Video>,
    addr: &Addr,
    quality: &str,
    video: &VideoInfo,
    headers: &[Header],
) {
    let (width, height) = dims(addr, video.width, video.height);
    for url in addr.url_list.iter().filter(|u| is_http(u)) {
        out.push(Video::mp4(
            unwatermark(url),
            quality,
            (width, height),
            headers.to_vec(),
        ));
    }
}

/// A play address's own size, else the post video's.
fn dims(addr: &Addr, width: u32, height: u32) -> (u32, u32) {
    if addr.width > 0 && addr.height > 0 {
        (addr.width, addr.height)
    } else {
        (width, height)
    }
}

fn height_label(height: u32) -> String {
    if height > 0 {
        format!("{height}p")
    } else {
        "default".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webp_detection_ignores_query() {
        assert!(is_webp("https://p3.douyinpic.com/a/b.webp?x=1"));
        assert!(is_webp(
            "https://p3-sign.douyinpic.com/tos/abc~tplv-dy-aweme-images:q75.webp?x-expires=1"
        ));
        assert!(!is_webp("https://p3.douyinpic.com/a/b.jpeg?from=webp"));
    }

    #[test]
    fn nulls_are_empty() {
        let a: Aweme = serde_json::from_str(
            r#"{"desc":null,"video":{"bit_rate":null,"play_addr":null},"images":null,"music":null}"#,
        )
        .unwrap();
        assert!(a.desc.is_empty() && a.images.is_empty() && a.video.bit_rate.is_empty());
        assert!(a.to_media().is_empty());
    }
}
