//! Mapping the selected post object (upstream/threads.md §4–5).

use mediaparse_sdk::spec::fill_missing_members;
use mediaparse_sdk::{Extraction, Failure, Header, Image, Media, MediaSource, Result, Video};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::urls::PLATFORM;
use mediaparse_meta_web::{CHROME_UA, Candidate, best_candidate, id_string, video_quality};

pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.threads.com/"),
        Header::new("User-Agent", CHROME_UA),
    ]
}

#[derive(Deserialize)]
struct TPost {
    #[serde(default)]
    media_type: Option<u32>,
    #[serde(default)]
    caption: Option<Caption>,
    #[serde(default)]
    image_versions2: Option<Images>,
    #[serde(default)]
    original_width: Option<u32>,
    #[serde(default)]
    original_height: Option<u32>,
    #[serde(default)]
    video_versions: Option<Vec<Version>>,
    #[serde(default)]
    carousel_media: Option<Vec<TPost>>,
    #[serde(default)]
    has_audio: Option<bool>,
    #[serde(default)]
    video_duration: Option<f64>,
    #[serde(default)]
    text_post_app_info: Option<AppInfo>,
    #[serde(default)]
    giphy_media_info: Option<Giphy>,
}

#[derive(Deserialize)]
struct Caption {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct Images {
    #[serde(default)]
    candidates: Vec<Candidate>,
}

#[derive(Deserialize)]
struct Version {
    url: String,
    #[serde(default, rename = "type")]
    kind: Option<u32>,
    #[serde(default)]
    width: Option<u32>,
    #[serde(default)]
    height: Option<u32>,
}

#[derive(Deserialize)]
struct AppInfo {
    #[serde(default)]
    is_post_unavailable: Option<bool>,
    #[serde(default)]
    linked_inline_media: Option<Box<TPost>>,
}

#[derive(Deserialize)]
struct Giphy {
    #[serde(default)]
    images: Option<GiphyImages>,
}

#[derive(Deserialize)]
struct GiphyImages {
    #[serde(default)]
    fixed_height: Option<GiphyRendition>,
}

#[derive(Deserialize)]
struct GiphyRendition {
    #[serde(default)]
    webp: Option<String>,
}

impl TPost {
    fn candidates(&self) -> &[Candidate] {
        self.image_versions2
            .as_ref()
            .map(|i| i.candidates.as_slice())
            .unwrap_or_default()
    }

    fn original(&self) -> Option<(u32, u32)> {
        Some((self.original_width?, self.original_height?))
    }

    fn versions(&self) -> &[Version] {
        self.video_versions.as_deref().unwrap_or_default()
    }

    fn children(&self) -> &[TPost] {
        self.carousel_media.as_deref().unwrap_or_default()
    }

    fn push_video(&self, media: &mut Media) {
        if media.duration == 0.0 {
            media.duration = self.video_duration.unwrap_or(0.0);
        }
        let (ow, oh) = self.original().unwrap_or((0, 0));
        for v in self.versions() {
            let width = v.width.unwrap_or(ow);
            let height = v.height.unwrap_or(oh);
            media.videos.push(Video {
                url: v.url.clone(),
                quality: video_quality(&v.url, width, height, v.kind),
                mime_type: "video/mp4".into(),
                width,
                height,
                has_audio: self.has_audio.unwrap_or(true),
                source: MediaSource::Direct,
                headers: download_headers(),
            });
        }
    }

    fn push_image(&self, media: &mut Media) {
        if let Some(c) = best_candidate(self.candidates(), self.original()) {
            media.images.push(Image {
                url: c.url.clone(),
                width: c.width.unwrap_or(0),
                height: c.height.unwrap_or(0),
            });
        }
    }

    /// The mapping order of upstream/threads.md §5.
    fn collect(&self, media: &mut Media, inline_allowed: bool) {
        if !self.children().is_empty() {
            for child in self.children() {
                if child.versions().is_empty() {
                    child.push_image(media);
                } else {
                    child.push_video(media);
                }
            }
        } else if !self.versions().is_empty() {
            self.push_video(media);
        } else if self.media_type == Some(1) && !self.candidates().is_empty() {
            self.push_image(media);
        } else if let Some(inline) = self
            .text_post_app_info
            .as_ref()
            .and_then(|i| i.linked_inline_media.as_deref())
            .filter(|_| inline_allowed)
        {
            inline.collect(media, false);
            if media.thumbnail.is_empty() {
                media.thumbnail = inline.thumbnail();
            }
        } else if let Some(webp) = self
            .giphy_media_info
            .as_ref()
            .and_then(|g| g.images.as_ref())
            .and_then(|i| i.fixed_height.as_ref())
            .and_then(|f| f.webp.clone())
            .filter(|u| u.starts_with("http"))
        {
            media.images.push(Image {
                url: webp,
                width: 0,
                height: 0,
            });
        }
    }

    fn thumbnail(&self) -> String {
        self.candidates()
            .first()
            .or_else(|| self.children().first().and_then(|c| c.candidates().first()))
            .map(|c| c.url.clone())
            .unwrap_or_default()
    }
}

pub fn map(value: &Value) -> Result<Extraction> {
    let post = TPost::deserialize(value)
        .map_err(|e| Failure::changed(format!("the post has an unexpected shape: {e}")))?;
    if post
        .text_post_app_info
        .as_ref()
        .and_then(|i| i.is_post_unavailable)
        == Some(true)
    {
        return Err(Failure::unavailable(
            "Threads marks this post as unavailable",
        ));
    }
    let title = post
        .caption
        .as_ref()
        .and_then(|c| c.text.clone())
        .unwrap_or_default();
    let mut media = Media {
        title: title.clone(),
        thumbnail: post.thumbnail(),
        ..Media::default()
    };
    post.collect(&mut media, true);
    if !media.duration.is_finite() || media.duration < 0.0 {
        media.duration = 0.0;
    }

    let mut data = value.as_object().cloned().unwrap_or_default();
    for name in ["id", "pk"] {
        if let Some(s) = id_string(data.get(name)) {
            data.insert(name.into(), s.into());
        }
    }
    if !data.contains_key("id")
        && let Some(pk) = id_string(data.get("pk"))
    {
        data.insert("id".into(), pk.into());
    }
    data.insert("text".into(), title.into());
    data.insert(
        "images".into(),
        serde_json::to_value(&media.images).unwrap_or_else(|_| json!([])),
    );
    for (name, empty) in [
        ("user", json!({})),
        ("image_versions2", json!({})),
        ("video_versions", json!([])),
        ("carousel_media", json!([])),
        ("text_post_app_info", json!({})),
    ] {
        if data.get(name).is_none_or(Value::is_null) {
            data.insert(name.into(), empty);
        }
    }
    fill_missing_members(PLATFORM, &mut data);
    let mut platform_data = Value::Object(data);
    mediaparse_sdk::bigints::stringify_large_integers(&mut platform_data);
    Ok(Extraction {
        media,
        platform_data,
    })
}

/// Is this object the requested post (its `code`, with post members)?
pub fn is_post(m: &Map<String, Value>, code: &str) -> bool {
    m.get("code").and_then(Value::as_str) == Some(code)
        && m.contains_key("pk")
        && (m.contains_key("image_versions2")
            || m.contains_key("video_versions")
            || m.contains_key("carousel_media")
            || m.contains_key("text_post_app_info")
            || m.contains_key("media_type"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gif_posts_give_the_giphy_image() {
        let v: Value = serde_json::from_str(
            r#"{"pk":"1","id":"1_2","code":"DXhZAMkljvS","media_type":19,"caption":null,
            "image_versions2":{"candidates":[]},"video_versions":null,
            "giphy_media_info":{"images":{"fixed_height":{"webp":"https://media.giphy.com/media/abc/200.webp"}}}}"#,
        )
        .unwrap();
        let ex = map(&v).unwrap();
        assert_eq!(ex.media.images.len(), 1);
        assert_eq!(
            ex.media.images[0].url,
            "https://media.giphy.com/media/abc/200.webp"
        );
        assert_eq!(ex.platform_data["text"], "");
        assert!(mediaparse_sdk::spec::check_platform_data("threads", &ex.platform_data).is_empty());
    }

    #[test]
    fn quoted_posts_are_not_this_posts_media() {
        let v: Value = serde_json::from_str(
            r#"{"pk":"1","code":"DXhZAMkljvS","media_type":19,"image_versions2":{"candidates":[]},
            "text_post_app_info":{"share_info":{"quoted_post":{"pk":"9","code":"C8CTu0iswgv","media_type":1,
              "image_versions2":{"candidates":[{"url":"https://x.cdninstagram.com/q.jpg","width":1,"height":1}]}}}}}"#,
        )
        .unwrap();
        let ex = map(&v).unwrap();
        assert!(ex.media.is_empty());
        assert_eq!(ex.platform_data["id"], "1");
    }

    #[test]
    fn odd_posts_never_panic() {
        for text in [
            "{}",
            r#"{"carousel_media":[{}]}"#,
            r#"{"text_post_app_info":null}"#,
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            assert!(map(&v).unwrap().media.is_empty());
        }
        let v: Value = serde_json::from_str(r#"{"carousel_media":"x"}"#).unwrap();
        assert_eq!(map(&v).unwrap_err().code(), "upstream_error");
    }
}
