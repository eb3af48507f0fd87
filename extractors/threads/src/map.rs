//! Mapping the selected post object (upstream/threads.md §4–5).

use mediaparse_sdk::fields::{self, Object, RawValue, kind_of};
use mediaparse_sdk::{Extraction, Failure, Header, Image, Media, ObjectWriter, Result};
use serde::Deserialize;

use crate::urls::PLATFORM;
use mediaparse_meta_web::item::{Item, absent, id_text, sane_duration};
use mediaparse_meta_web::{CHROME_UA, scan};

pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.threads.com/"),
        Header::new("User-Agent", CHROME_UA),
    ]
}

/// A Threads post: the common media item and what only Threads sends
/// (read from the same text, each without the other's members).
struct TPost {
    item: Item,
    extra: Extra,
}

#[derive(Deserialize)]
struct Extra {
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
    linked_inline_media: Option<Box<RawValue>>,
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
    /// The post of `text`, and of its linked inline media (`None` when
    /// none is linked).
    fn read(post: &Object) -> Result<(TPost, Option<TPost>)> {
        let item: Item = post.read("the post")?;
        let extra: Extra = post.read("the post")?;
        let inline = match extra
            .text_post_app_info
            .as_ref()
            .and_then(|i| i.linked_inline_media.as_deref())
            .filter(|raw| kind_of(raw) != b'n')
        {
            Some(raw) => Some(TPost::read(&object(raw)?)?.0),
            None => None,
        };
        Ok((TPost { item, extra }, inline))
    }
}

impl TPost {
    /// The mapping order of upstream/threads.md §5.
    fn collect(&self, media: &mut Media, inline: Option<&TPost>) {
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
        } else if let Some(inline) = inline {
            inline.collect(media, None);
            if media.thumbnail.is_empty() {
                media.thumbnail = inline.item.thumbnail();
            }
        } else if let Some(webp) = self
            .extra
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

/// The members of a post the platform data rewrites or fills.
#[derive(Deserialize)]
struct PostMembers<'a> {
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    pk: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    user: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    image_versions2: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    video_versions: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    carousel_media: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    text_post_app_info: Option<&'a RawValue>,
}

/// A post's members, found in one pass: the media, the platform data's
/// own members and the rest copied each parse only the members they name.
fn object(raw: &RawValue) -> Result<Object<'_>> {
    Object::of(raw)
        .ok_or_else(|| Failure::changed("the post has an unexpected shape: not an object"))
}

pub fn map(raw: &RawValue) -> Result<Extraction> {
    let object = object(raw)?;
    let (post, inline) = TPost::read(&object)?;
    if post
        .extra
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
    post.collect(&mut media, inline.as_ref());
    sane_duration(&mut media);

    let members: PostMembers = object.read("the post")?;
    let mut data = ObjectWriter::new();
    let pk = id_text(members.pk);
    match id_text(members.id) {
        Some(id) => {
            data.str("id", &id);
        }
        None => {
            if let (None, Some(pk)) = (members.id, &pk) {
                data.str("id", pk);
            }
        }
    }
    if let Some(pk) = &pk {
        data.str("pk", pk);
    }
    data.str("text", &title);
    data.value("images", &media.images);
    for (name, member) in [
        ("user", members.user),
        ("image_versions2", members.image_versions2),
        ("text_post_app_info", members.text_post_app_info),
    ] {
        if absent(member) {
            data.object(name, |_| {});
        }
    }
    for (name, member) in [
        ("video_versions", members.video_versions),
        ("carousel_media", members.carousel_media),
    ] {
        if absent(member) {
            data.value(name, &[] as &[u8]);
        }
    }
    data.rest_of_object(&object);
    Ok(Extraction {
        media,
        platform_data: data.finish(PLATFORM),
    })
}

/// Is this object the requested post (its `code`, with post members)?
pub fn is_post(m: &scan::Members<'_, '_>, code: &str) -> bool {
    m.string("code").as_deref() == Some(code)
        && m.has("pk")
        && (m.has("image_versions2")
            || m.has("video_versions")
            || m.has("carousel_media")
            || m.has("text_post_app_info")
            || m.has("media_type"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> serde_json::Result<Box<RawValue>> {
        RawValue::from_string(text.into())
    }

    #[test]
    fn gif_posts_give_the_giphy_image() {
        let v = raw(
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
        let v = raw(
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
            let v = raw(text).unwrap();
            assert!(map(&v).unwrap().media.is_empty());
        }
        let v = raw(r#"{"carousel_media":"x"}"#).unwrap();
        assert_eq!(map(&v).unwrap_err().code(), "upstream_error");
    }
}
