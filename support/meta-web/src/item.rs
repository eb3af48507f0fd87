//! The API-v1 media item both sites answer with (`image_versions2`,
//! `video_versions`, `carousel_media`), and how its pictures and videos go
//! into the media object.

use mediaparse_sdk::bigints::stringify_large_integers;
use mediaparse_sdk::fields::{RawValue, Text, kind_of};
use mediaparse_sdk::spec::fill_missing_members;
use mediaparse_sdk::{Extraction, Header, Image, Media, MediaSource, Video};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::media::{Candidate, best_candidate, video_quality};

/// A media item (a post, or one carousel child).
#[derive(Debug, Default, Deserialize)]
pub struct Item {
    #[serde(default)]
    pub caption: Option<Caption>,
    #[serde(default)]
    pub image_versions2: Option<Images>,
    #[serde(default)]
    pub video_versions: Option<Vec<Version>>,
    #[serde(default)]
    pub carousel_media: Option<Vec<Item>>,
    #[serde(default)]
    pub original_width: Option<u32>,
    #[serde(default)]
    pub original_height: Option<u32>,
    #[serde(default)]
    pub has_audio: Option<bool>,
    #[serde(default)]
    pub video_duration: Option<f64>,
    #[serde(default)]
    pub media_type: Option<u32>,
}

/// `caption: {text}`.
#[derive(Debug, Deserialize)]
pub struct Caption {
    #[serde(default)]
    pub text: Option<String>,
}

/// `image_versions2: {candidates}`.
#[derive(Debug, Deserialize)]
pub struct Images {
    #[serde(default)]
    pub candidates: Vec<Candidate>,
}

/// One entry of `video_versions`.
#[derive(Debug, Deserialize)]
pub struct Version {
    pub url: String,
    #[serde(default, rename = "type")]
    pub kind: Option<u32>,
    #[serde(default)]
    pub width: Option<u32>,
    #[serde(default)]
    pub height: Option<u32>,
}

impl Item {
    /// The caption's text, or empty.
    pub fn caption_text(&self) -> String {
        self.caption
            .as_ref()
            .and_then(|c| c.text.clone())
            .unwrap_or_default()
    }

    /// The image candidates (all sizes and crops).
    pub fn candidates(&self) -> &[Candidate] {
        self.image_versions2
            .as_ref()
            .map(|i| i.candidates.as_slice())
            .unwrap_or_default()
    }

    /// The original size, when both sides are given.
    pub fn original(&self) -> Option<(u32, u32)> {
        Some((self.original_width?, self.original_height?))
    }

    /// The video renditions (none for a picture).
    pub fn versions(&self) -> &[Version] {
        self.video_versions.as_deref().unwrap_or_default()
    }

    /// The carousel's children (none for a single item).
    pub fn children(&self) -> &[Item] {
        self.carousel_media.as_deref().unwrap_or_default()
    }

    /// The first candidate of the item, else of its first child.
    pub fn thumbnail(&self) -> String {
        self.candidates()
            .first()
            .or_else(|| self.children().first().and_then(|c| c.candidates().first()))
            .map(|c| c.url.clone())
            .unwrap_or_default()
    }

    /// Every rendition as a video (sizes default to the original's); the
    /// first video sets the duration (`fallback_duration` when the item has none).
    pub fn push_videos(
        &self,
        media: &mut Media,
        fallback_duration: Option<f64>,
        headers: &[Header],
    ) {
        if media.duration == 0.0 {
            media.duration = self.video_duration.or(fallback_duration).unwrap_or(0.0);
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
                headers: headers.to_vec(),
            });
        }
    }

    /// The full-size picture (see [`best_candidate`]), if any.
    pub fn push_image(&self, media: &mut Media) {
        if let Some(c) = best_candidate(self.candidates(), self.original()) {
            media.images.push(Image {
                url: c.url.clone(),
                width: c.width.unwrap_or(0),
                height: c.height.unwrap_or(0),
            });
        }
    }
}

/// The extraction of a Meta post: its platform data completed with the
/// members SPEC lists for `platform`, integers beyond 2^53 as strings.
pub fn extraction(platform: &str, media: Media, mut data: Map<String, Value>) -> Extraction {
    fill_missing_members(platform, &mut data);
    let mut platform_data = Value::Object(data);
    stringify_large_integers(&mut platform_data);
    Extraction {
        media,
        platform_data: platform_data.into(),
    }
}

/// An id member sent as a string or a number, as non-empty text (as
/// [`crate::id_string`] reads a `Value`).
pub fn id_text(raw: Option<&RawValue>) -> Option<String> {
    let raw = raw?;
    if !matches!(kind_of(raw), b'"' | b'-' | b'0'..=b'9') {
        return None;
    }
    let text: Text = serde_json::from_str(raw.get()).ok()?;
    Some(text.into_string()).filter(|s| !s.is_empty())
}

/// Is a member absent or `null`?
pub fn absent(raw: Option<&RawValue>) -> bool {
    raw.is_none_or(|r| kind_of(r) == b'n')
}

/// A duration that is not a finite, non-negative number becomes 0.
pub fn sane_duration(media: &mut Media) {
    if !media.duration.is_finite() || media.duration < 0.0 {
        media.duration = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carousel_children_become_pictures_and_videos() {
        let item: Item = serde_json::from_value(serde_json::json!({
            "caption": {"text": "two"},
            "carousel_media": [
                {"image_versions2": {"candidates": [{"url": "https://x/1.jpg", "width": 1080, "height": 1350}]},
                 "original_width": 1080, "original_height": 1350},
                {"video_versions": [{"url": "https://x/2.mp4", "type": 101, "width": 720, "height": 1280}],
                 "image_versions2": {"candidates": [{"url": "https://x/2.jpg"}]}, "has_audio": false}
            ],
            "video_duration": 7.5
        }))
        .unwrap();
        let mut media = Media::default();
        for child in item.children() {
            if child.versions().is_empty() {
                child.push_image(&mut media);
            } else {
                child.push_videos(&mut media, item.video_duration, &[]);
            }
        }
        assert_eq!(item.caption_text(), "two");
        assert_eq!(item.thumbnail(), "https://x/1.jpg");
        assert_eq!(media.images[0].url, "https://x/1.jpg");
        assert_eq!(
            (media.videos[0].quality.as_str(), media.videos[0].has_audio),
            ("720p", false)
        );
        assert_eq!(media.duration, 7.5);
    }
}
