//! Mapping a found post to the media object and platform data.
//! Two upstream shapes (upstream/instagram.md §4): the API-v1 item (Polaris
//! GraphQL, permalink page) and the legacy GraphQL shape (embed page).

use mediaparse_sdk::fields::{self, Object, RawValue, kind_of};
use mediaparse_sdk::{
    Extraction, Failure, Header, Image, Media, MediaSource, ObjectWriter, Result, Video,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::urls::PLATFORM;
use mediaparse_meta_web::item::{Item, absent, extraction, id_text, sane_duration};
use mediaparse_meta_web::{CHROME_UA, id_string, video_quality};

/// A post found by one of the strategies.
#[derive(Clone, Debug)]
pub enum Post {
    /// Legacy `shortcode_media` object (embed page `gql_data`).
    Legacy(Value),
    /// Only the embed page's HTML image (its `contextJSON` was null).
    EmbedImage {
        code: String,
        url: String,
        width: u32,
        media_id: Option<String>,
        owner_id: Option<String>,
        username: Option<String>,
    },
}

/// Headers a caller needs to download Instagram CDN media.
pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.instagram.com/"),
        Header::new("User-Agent", CHROME_UA),
    ]
}

pub fn map(post: &Post) -> Result<Extraction> {
    match post {
        Post::Legacy(item) => map_legacy(item),
        Post::EmbedImage {
            code,
            url,
            width,
            media_id,
            owner_id,
            username,
        } => {
            let image = Image {
                url: url.clone(),
                width: *width,
                height: 0,
            };
            let mut data = Map::new();
            if let Some(media_id) = media_id {
                let id = match owner_id {
                    Some(owner) => format!("{media_id}_{owner}"),
                    None => media_id.clone(),
                };
                data.insert("id".into(), id.into());
                data.insert("pk".into(), media_id.clone().into());
            }
            data.insert("code".into(), code.clone().into());
            let mut user = Map::new();
            if let Some(owner) = owner_id {
                user.insert("pk".into(), owner.clone().into());
            }
            if let Some(name) = username {
                user.insert("username".into(), name.clone().into());
            }
            data.insert("user".into(), Value::Object(user));
            data.insert(
                "image_versions".into(),
                json!({"candidates": [{"url": url, "width": width, "height": 0}]}),
            );
            data.insert("media_type".into(), 1.into());
            let media = Media {
                thumbnail: url.clone(),
                images: vec![image],
                ..Media::default()
            };
            Ok(extraction(PLATFORM, media, data))
        }
    }
}

/// The members of an API-v1 item the platform data rewrites or fills.
#[derive(Deserialize)]
struct V1Members<'a> {
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    pk: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    caption: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    user: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    video_versions: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    carousel_media: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    image_versions2: Option<&'a RawValue>,
}

/// Map an API-v1 media item (Polaris GraphQL, the permalink page) from its
/// members, found where the item was read: the media, the platform data's
/// own members and the rest copied each parse only the members they name.
pub fn map_v1(object: &Object) -> Result<Extraction> {
    let item: Item = object.read("the media item")?;
    let mut media = Media {
        title: item.caption_text(),
        thumbnail: item.thumbnail(),
        ..Media::default()
    };
    let children: Vec<&Item> = match item.children() {
        [] => vec![&item],
        children => children.iter().collect(),
    };
    for child in children {
        if child.versions().is_empty() {
            child.push_image(&mut media);
        } else {
            child.push_videos(&mut media, item.video_duration, &download_headers());
        }
    }
    sane_duration(&mut media);

    let members: V1Members = object.read("the media item")?;
    let mut data = ObjectWriter::new();
    if let Some(id) = id_text(members.id).or_else(|| id_text(members.pk)) {
        data.str("id", &id);
    }
    if let Some(pk) = id_text(members.pk) {
        data.str("pk", &pk);
    }
    for (name, member) in [("caption", members.caption), ("user", members.user)] {
        if absent(member) {
            data.object(name, |_| {});
        }
    }
    for (name, member) in [
        ("video_versions", members.video_versions),
        ("carousel_media", members.carousel_media),
    ] {
        if absent(member) {
            data.value(name, EMPTY_LIST);
        }
    }
    match members.image_versions2.filter(|r| kind_of(r) == b'{') {
        Some(images) => data.raw("image_versions", images),
        None => data.object("image_versions", |_| {}),
    };
    data.rest_of_object(object);
    Ok(Extraction {
        media,
        platform_data: data.finish(PLATFORM),
    })
}

const EMPTY_LIST: &[u8] = &[];

#[derive(Deserialize)]
struct Legacy {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    shortcode: Option<String>,
    #[serde(default)]
    dimensions: Option<Dimensions>,
    #[serde(default)]
    display_url: Option<String>,
    #[serde(default)]
    display_resources: Option<Vec<Resource>>,
    #[serde(default)]
    is_video: Option<bool>,
    #[serde(default)]
    video_url: Option<String>,
    #[serde(default)]
    video_duration: Option<f64>,
    #[serde(default)]
    has_audio: Option<bool>,
    #[serde(default)]
    edge_sidecar_to_children: Option<Edges<Legacy>>,
    #[serde(default)]
    edge_media_to_caption: Option<Edges<CaptionNode>>,
    #[serde(default)]
    owner: Option<Value>,
    #[serde(default)]
    taken_at_timestamp: Option<Value>,
}

#[derive(Deserialize)]
struct Dimensions {
    #[serde(default)]
    width: Option<u32>,
    #[serde(default)]
    height: Option<u32>,
}

#[derive(Deserialize)]
struct Resource {
    src: String,
    #[serde(default)]
    config_width: Option<u32>,
    #[serde(default)]
    config_height: Option<u32>,
}

#[derive(Deserialize)]
struct Edges<T> {
    #[serde(default = "Vec::new")]
    edges: Vec<Edge<T>>,
}

#[derive(Deserialize)]
struct Edge<T> {
    node: T,
}

#[derive(Deserialize)]
struct CaptionNode {
    #[serde(default)]
    text: Option<String>,
}

impl Legacy {
    fn dims(&self) -> (u32, u32) {
        self.dimensions
            .as_ref()
            .map(|d| (d.width.unwrap_or(0), d.height.unwrap_or(0)))
            .unwrap_or((0, 0))
    }

    /// Candidates largest first, in the v1 `{url, width, height}` form.
    fn candidates(&self) -> Vec<Value> {
        let mut out: Vec<(u64, Value)> = self
            .display_resources
            .iter()
            .flatten()
            .map(|r| {
                let (w, h) = (r.config_width.unwrap_or(0), r.config_height.unwrap_or(0));
                (
                    w as u64 * h as u64,
                    json!({"url": r.src, "width": w, "height": h}),
                )
            })
            .collect();
        out.sort_by_key(|x| std::cmp::Reverse(x.0));
        let mut out: Vec<Value> = out.into_iter().map(|(_, v)| v).collect();
        if out.is_empty()
            && let Some(url) = &self.display_url
        {
            let (w, h) = self.dims();
            out.push(json!({"url": url, "width": w, "height": h}));
        }
        out
    }

    /// The full image: the largest display resource, else `display_url`.
    fn image(&self) -> Option<Image> {
        let best = self.display_resources.iter().flatten().max_by_key(|r| {
            r.config_width.unwrap_or(0) as u64 * r.config_height.unwrap_or(0) as u64
        });
        match (best, &self.display_url) {
            (Some(r), _) => Some(Image {
                url: r.src.clone(),
                width: r.config_width.unwrap_or(0),
                height: r.config_height.unwrap_or(0),
            }),
            (None, Some(url)) => {
                let (width, height) = self.dims();
                Some(Image {
                    url: url.clone(),
                    width,
                    height,
                })
            }
            (None, None) => None,
        }
    }

    fn as_v1_child(&self) -> Value {
        let (w, h) = self.dims();
        let videos = match (&self.video_url, self.is_video) {
            (Some(url), Some(true)) => json!([{"url": url, "width": w, "height": h}]),
            _ => json!([]),
        };
        json!({
            "id": self.id.as_ref().and_then(|v| id_string(Some(v))).unwrap_or_default(),
            "media_type": if self.is_video == Some(true) { 2 } else { 1 },
            "image_versions2": {"candidates": self.candidates()},
            "video_versions": videos,
            "original_width": w,
            "original_height": h,
        })
    }
}

fn map_legacy(value: &Value) -> Result<Extraction> {
    let item = Legacy::deserialize(value)
        .map_err(|e| Failure::changed(format!("embed media has an unexpected shape: {e}")))?;
    let children: Vec<&Legacy> = match &item.edge_sidecar_to_children {
        Some(e) if !e.edges.is_empty() => e.edges.iter().map(|e| &e.node).collect(),
        _ => vec![&item],
    };
    let mut media = Media {
        title: item
            .edge_media_to_caption
            .as_ref()
            .and_then(|c| c.edges.first())
            .and_then(|e| e.node.text.clone())
            .unwrap_or_default(),
        thumbnail: item
            .display_url
            .clone()
            .or_else(|| children.first().and_then(|c| c.display_url.clone()))
            .unwrap_or_default(),
        ..Media::default()
    };
    for child in &children {
        if child.is_video == Some(true) {
            let Some(url) = &child.video_url else {
                // cobalt PR #1554: the embed can list a video without its URL.
                return Err(Failure::upstream(
                    "the embed page withholds a video of this post",
                ));
            };
            let (width, height) = child.dims();
            if media.duration == 0.0 {
                media.duration = child.video_duration.unwrap_or(0.0);
            }
            media.videos.push(Video {
                url: url.clone(),
                quality: video_quality(url, width, height, None),
                mime_type: "video/mp4".into(),
                width,
                height,
                has_audio: child.has_audio.unwrap_or(true),
                source: MediaSource::Direct,
                headers: download_headers(),
            });
        } else if let Some(image) = child.image() {
            media.images.push(image);
        }
    }
    if !media.duration.is_finite() || media.duration < 0.0 {
        media.duration = 0.0;
    }

    let mut data = value.as_object().cloned().unwrap_or_default();
    let pk = item.id.as_ref().and_then(|v| id_string(Some(v)));
    let owner_id = item.owner.as_ref().and_then(|o| id_string(o.get("id")));
    if let Some(pk) = &pk {
        let id = match &owner_id {
            Some(owner) => format!("{pk}_{owner}"),
            None => pk.clone(),
        };
        data.insert("id".into(), id.into());
        data.insert("pk".into(), pk.clone().into());
    }
    if let Some(code) = &item.shortcode {
        data.insert("code".into(), code.clone().into());
    }
    data.insert(
        "caption".into(),
        if media.title.is_empty() {
            json!({})
        } else {
            json!({"text": media.title})
        },
    );
    data.insert(
        "user".into(),
        item.owner
            .clone()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({})),
    );
    let top = item.as_v1_child();
    data.insert(
        "video_versions".into(),
        if item.edge_sidecar_to_children.is_some() {
            json!([])
        } else {
            top["video_versions"].clone()
        },
    );
    data.insert("image_versions".into(), top["image_versions2"].clone());
    let carousel: Vec<Value> = match &item.edge_sidecar_to_children {
        Some(e) => e.edges.iter().map(|e| e.node.as_v1_child()).collect(),
        None => vec![],
    };
    data.insert("carousel_media".into(), Value::Array(carousel));
    if let Some(t) = item.taken_at_timestamp.clone().filter(Value::is_number) {
        data.insert("taken_at".into(), t);
    }
    Ok(extraction(PLATFORM, media, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_sidecar_keeps_order_and_kinds() {
        let v: Value = serde_json::from_str(
            r#"{"__typename":"GraphSidecar","id":"2273581388251073154","shortcode":"B-NYjoGpQqC",
            "display_url":"https://scontent.cdninstagram.com/a.jpg","owner":{"id":"305701719","username":"jlo"},
            "taken_at_timestamp":1585243045,
            "edge_media_to_caption":{"edges":[{"node":{"text":"hi"}}]},
            "edge_sidecar_to_children":{"edges":[
              {"node":{"__typename":"GraphVideo","id":"1","is_video":true,"video_url":"https://scontent.cdninstagram.com/v.mp4","dimensions":{"width":480,"height":480},"display_url":"https://scontent.cdninstagram.com/v.jpg","video_duration":12.866}},
              {"node":{"__typename":"GraphImage","id":"2","is_video":false,"dimensions":{"width":1080,"height":1080},"display_url":"https://scontent.cdninstagram.com/b.jpg",
                "display_resources":[{"src":"https://scontent.cdninstagram.com/s640.jpg","config_width":640,"config_height":640},{"src":"https://scontent.cdninstagram.com/s1080.jpg","config_width":1080,"config_height":1080}]}}]}}"#,
        )
        .unwrap();
        let ex = map(&Post::Legacy(v)).unwrap();
        assert_eq!(ex.media.title, "hi");
        assert_eq!(ex.media.duration, 12.866);
        assert_eq!(ex.media.videos.len(), 1);
        assert_eq!(ex.media.videos[0].quality, "480p");
        assert_eq!(ex.media.images.len(), 1);
        assert_eq!(
            ex.media.images[0].url,
            "https://scontent.cdninstagram.com/s1080.jpg"
        );
        let pd = &ex.platform_data.to_value();
        assert_eq!(pd["id"], "2273581388251073154_305701719");
        assert_eq!(pd["carousel_media"][0]["media_type"], 2);
        assert_eq!(
            pd["carousel_media"][1]["image_versions2"]["candidates"][0]["width"],
            1080
        );
        assert_eq!(pd["video_versions"], serde_json::json!([]));
        assert!(mediaparse_sdk::spec::check_platform_data("instagram", pd).is_empty());
    }

    #[test]
    fn legacy_video_without_url_is_an_error() {
        let v: Value = serde_json::from_str(
            r#"{"shortcode":"B-NYjoGpQqC","edge_sidecar_to_children":{"edges":[{"node":{"is_video":true,"display_url":"https://x/a.jpg"}}]}}"#,
        )
        .unwrap();
        assert_eq!(map(&Post::Legacy(v)).unwrap_err().code(), "upstream_error");
    }

    #[test]
    fn odd_v1_items_never_panic() {
        for text in [
            r#"{}"#,
            r#"{"carousel_media":[]}"#,
            r#"{"video_versions":null,"image_versions2":{"candidates":[]}}"#,
        ] {
            let v = RawValue::from_string(text.into()).unwrap();
            let ex = map_v1(&Object::of(&v).unwrap()).unwrap();
            assert!(ex.media.is_empty());
        }
        let v = RawValue::from_string(r#"{"video_versions":"nope"}"#.into()).unwrap();
        assert_eq!(
            map_v1(&Object::of(&v).unwrap()).unwrap_err().code(),
            "upstream_error"
        );
    }
}
