//! Mapping the selected post object (upstream/threads.md §4–5).

use mediaparse_sdk::{Extraction, Failure, Header, Image, Media, Result};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::urls::PLATFORM;
use mediaparse_meta_web::item::{Item, extraction, sane_duration};
use mediaparse_meta_web::{CHROME_UA, id_string};

pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.threads.com/"),
        Header::new("User-Agent", CHROME_UA),
    ]
}

/// A Threads post: the common media item and what only Threads sends.
#[derive(Deserialize)]
struct TPost {
    #[serde(flatten)]
    item: Item,
    #[serde(default)]
    text_post_app_info: Option<AppInfo>,
    #[serde(default)]
    giphy_media_info: Option<Giphy>,
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
    /// The mapping order of upstream/threads.md §5.
    fn collect(&self, media: &mut Media, inline_allowed: bool) {
        let item = &self.item;
        if !item.children().is_empty() {
            for child in item.children() {
                if child.versions().is_empty() {
                    child.push_image(media);
                } else {
                    child.push_videos(media, None, &download_headers());
                }
            }
        } else if !item.versions().is_empty() {
            item.push_videos(media, None, &download_headers());
        } else if item.media_type == Some(1) && !item.candidates().is_empty() {
            item.push_image(media);
        } else if let Some(inline) = self
            .text_post_app_info
            .as_ref()
            .and_then(|i| i.linked_inline_media.as_deref())
            .filter(|_| inline_allowed)
        {
            inline.collect(media, false);
            if media.thumbnail.is_empty() {
                media.thumbnail = inline.item.thumbnail();
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
    let title = post.item.caption_text();
    let mut media = Media {
        title: title.clone(),
        thumbnail: post.item.thumbnail(),
        ..Media::default()
    };
    post.collect(&mut media, true);
    sane_duration(&mut media);

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
    Ok(extraction(PLATFORM, media, data))
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
        assert_eq!(ex.platform_data.to_value()["text"], "");
        assert!(
            mediaparse_sdk::spec::check_platform_data("threads", &ex.platform_data.to_value())
                .is_empty()
        );
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
        assert_eq!(ex.platform_data.to_value()["id"], "1");
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
