//! Reading the post (guide sections 4–6): the GraphQL `tweetResult`, the
//! focal entry of a `TweetDetail` conversation and the flat syndication
//! shape, all mapped to media and platformData.

use mediaparse_sdk::html::decode_entities;
use mediaparse_sdk::spec::fill_missing_members;
use mediaparse_sdk::{Extraction, Failure, HttpResponse, Image, Media, MediaSource, Video};

use crate::PLATFORM;
use serde::Deserialize;
use serde_json::{Map, Value};

/// `{"data": {"tweetResult": {"result": ...}}, "errors": [...]}`, or for
/// `TweetDetail` `{"data": {"threaded_conversation_with_injections_v2": {"instructions": [...]}}}`
#[derive(Debug, Default, Deserialize)]
pub struct Envelope {
    #[serde(default)]
    pub data: Option<Data>,
    #[serde(default)]
    pub errors: Vec<ApiError>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Data {
    #[serde(default, rename = "tweetResult")]
    pub tweet_result: Option<Holder>,
    #[serde(default)]
    pub threaded_conversation_with_injections_v2: Option<Conversation>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Conversation {
    #[serde(default)]
    pub instructions: Vec<Value>,
}

impl Conversation {
    /// The `tweet_results.result` of the entry `tweet-{id}` in the
    /// `TimelineAddEntries` instructions: `None` when the post is not
    /// among them.
    fn focal_result(&self, id: &str) -> Option<Value> {
        let entry_id = format!("tweet-{id}");
        self.instructions
            .iter()
            .filter(|i| str_at(i, "/type") == "TimelineAddEntries")
            .filter_map(|i| i.get("entries").and_then(Value::as_array))
            .flatten()
            .find(|e| str_at(e, "/entryId") == entry_id)
            .and_then(|e| e.pointer("/content/itemContent/tweet_results/result"))
            .cloned()
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct Holder {
    #[serde(default)]
    pub result: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ApiError {
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub code: Option<i64>,
}

/// What a GraphQL `result` says.
#[derive(Debug)]
pub enum Outcome {
    /// A readable post (unwrapped from `TweetWithVisibilityResults`).
    Post(Value),
    /// Sensitive media: a logged-in session can see it.
    Sensitive(String),
    /// Deleted, withheld, protected, suspended.
    Gone(String),
    /// No result at all: not found for guests (syndication may still know it).
    Missing,
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Unwrap `TweetWithVisibilityResults` (possibly nested) to the post.
fn unwrap_visibility(mut v: Value) -> Value {
    for _ in 0..4 {
        if str_at(&v, "/__typename") != "TweetWithVisibilityResults" {
            break;
        }
        match v.get_mut("tweet").map(Value::take) {
            Some(inner) => v = inner,
            None => break,
        }
    }
    v
}

/// Classify `data.tweetResult.result` (guide section 4 and 6).
pub fn classify(result: Option<Value>) -> Outcome {
    let Some(result) = result.filter(|r| r.as_object().is_some_and(|o| !o.is_empty())) else {
        return Outcome::Missing;
    };
    let result = unwrap_visibility(result);
    let kind = str_at(&result, "/__typename");
    match kind {
        "TweetUnavailable" => {
            let reason = str_at(&result, "/reason");
            if reason.starts_with("Nsfw") {
                Outcome::Sensitive(format!(
                    "sensitive post ({reason}): X shows it only to signed-in adults"
                ))
            } else if reason == "Protected" {
                Outcome::Gone("the post is from a protected (private) account".into())
            } else if reason == "Suspended" {
                Outcome::Gone("the post is from a suspended account".into())
            } else {
                Outcome::Gone(format!("the post is unavailable ({reason})"))
            }
        }
        "BlurredMediaTombstone" => {
            Outcome::Sensitive("age-restricted media: X shows it only to signed-in adults".into())
        }
        "TweetTombstone" => {
            let text = str_at(&result, "/tombstone/text/text");
            if text.is_empty() {
                // A bare tombstone is what the guest query answers for
                // age-gated posts (measured by vxtwitter, see docs).
                Outcome::Sensitive("the post is hidden from guests (bare tombstone)".into())
            } else {
                Outcome::Gone(text.to_string())
            }
        }
        _ if result.get("legacy").is_some() || kind == "Tweet" => Outcome::Post(result),
        _ => Outcome::Missing,
    }
}

// ---------------------------------------------------------------- media

#[derive(Debug, Default, Deserialize)]
struct MediaItem {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    media_url_https: String,
    #[serde(default)]
    original_info: Option<OriginalInfo>,
    #[serde(default)]
    video_info: Option<VideoInfo>,
    #[serde(default)]
    ext_media_availability: Option<Availability>,
}

#[derive(Debug, Default, Deserialize)]
struct OriginalInfo {
    #[serde(default)]
    width: u32,
    #[serde(default)]
    height: u32,
}

#[derive(Debug, Default, Deserialize)]
struct VideoInfo {
    #[serde(default)]
    duration_millis: Option<u64>,
    #[serde(default)]
    variants: Vec<Variant>,
}

#[derive(Debug, Default, Deserialize)]
struct Variant {
    #[serde(default)]
    content_type: String,
    #[serde(default)]
    bitrate: Option<u64>,
    #[serde(default)]
    url: String,
}

#[derive(Debug, Default, Deserialize)]
struct Availability {
    #[serde(default)]
    status: Option<String>,
}

/// `https://pbs.twimg.com/media/<base>.<ext>` → the original-size form.
pub fn original_photo_url(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("https://pbs.twimg.com/media/")
        && !rest.contains(['?', '/'])
        && let Some((base, ext)) = rest.rsplit_once('.')
        && !base.is_empty()
        && !ext.is_empty()
    {
        return format!("https://pbs.twimg.com/media/{base}?format={ext}&name=orig");
    }
    url.to_string()
}

/// `(width, height)` from a `/WxH/` path segment of a video URL.
pub fn size_in_url(url: &str) -> Option<(u32, u32)> {
    let path = url.split('?').next().unwrap_or(url);
    path.split('/').find_map(|seg| {
        let (w, h) = seg.split_once('x')?;
        let w = w
            .parse()
            .ok()
            .filter(|_| w.bytes().all(|b| b.is_ascii_digit()))?;
        let h = h
            .parse()
            .ok()
            .filter(|_| h.bytes().all(|b| b.is_ascii_digit()))?;
        Some((w, h))
    })
}

/// Media items of a legacy `media` list. The flag says whether there was
/// media that is all geo-blocked (`ext_media_availability` Unavailable).
pub struct Mapped {
    pub images: Vec<Image>,
    pub videos: Vec<Video>,
    pub thumbnail: String,
    pub duration: f64,
    pub all_blocked: bool,
}

pub fn map_media(list: &[Value]) -> Mapped {
    let mut out = Mapped {
        images: Vec::new(),
        videos: Vec::new(),
        thumbnail: String::new(),
        duration: 0.0,
        all_blocked: false,
    };
    let mut blocked = 0;
    for raw in list {
        let Ok(item) = MediaItem::deserialize(raw) else {
            continue;
        };
        let unavailable = item
            .ext_media_availability
            .as_ref()
            .and_then(|a| a.status.as_deref())
            == Some("Unavailable");
        if unavailable {
            blocked += 1;
            continue;
        }
        if out.thumbnail.is_empty() && item.media_url_https.starts_with("http") {
            out.thumbnail = item.media_url_https.clone();
        }
        match item.kind.as_str() {
            "photo" if item.media_url_https.starts_with("http") => {
                let (width, height) = item
                    .original_info
                    .as_ref()
                    .map(|o| (o.width, o.height))
                    .unwrap_or((0, 0));
                out.images.push(Image {
                    url: original_photo_url(&item.media_url_https),
                    width,
                    height,
                });
            }
            "video" | "animated_gif" => {
                let has_audio = item.kind == "video";
                let Some(info) = item.video_info.as_ref() else {
                    continue;
                };
                if out.duration == 0.0 {
                    out.duration = info.duration_millis.unwrap_or(0) as f64 / 1000.0;
                }
                let mp4_count = info
                    .variants
                    .iter()
                    .filter(|v| v.content_type == "video/mp4")
                    .count();
                // A single mp4 (how GIFs come) is the original size.
                let original = item
                    .original_info
                    .as_ref()
                    .filter(|_| mp4_count == 1)
                    .map(|o| (o.width, o.height));
                for v in &info.variants {
                    if !v.url.starts_with("http") {
                        continue;
                    }
                    if v.content_type == "video/mp4" {
                        let (width, height) = size_in_url(&v.url).or(original).unwrap_or((0, 0));
                        let quality = if width > 0 {
                            format!("{width}x{height}")
                        } else {
                            format!("{}k", v.bitrate.unwrap_or(0) / 1000)
                        };
                        out.videos.push(Video {
                            url: v.url.clone(),
                            quality,
                            mime_type: "video/mp4".into(),
                            width,
                            height,
                            has_audio,
                            source: MediaSource::Direct,
                            headers: Vec::new(),
                        });
                    } else if v.content_type.eq_ignore_ascii_case("application/x-mpegURL") {
                        out.videos.push(Video {
                            url: v.url.clone(),
                            quality: "HLS".into(),
                            mime_type: "application/x-mpegURL".into(),
                            width: 0,
                            height: 0,
                            has_audio,
                            source: MediaSource::Adaptive,
                            headers: Vec::new(),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out.all_blocked = blocked > 0 && blocked == list.len();
    out
}

/// Drop trailing t.co links that stand for the post's media, then decode
/// the HTML entities X leaves in `full_text`.
pub fn clean_title(text: &str, media_links: &[String]) -> String {
    let mut t = text.trim_end();
    while let Some(link) = media_links
        .iter()
        .find(|l| !l.is_empty() && t.ends_with(l.as_str()))
    {
        t = t[..t.len() - link.len()].trim_end();
    }
    decode_entities(t).trim().to_string()
}

fn media_list(holder: Option<&Value>) -> Vec<Value> {
    holder
        .and_then(|h| h.get("media"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn links_of(list: &[Value]) -> Vec<String> {
    list.iter()
        .filter_map(|m| m.get("url").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

fn put(map: &mut Map<String, Value>, name: &str, value: Option<&Value>) {
    if let Some(v) = value.filter(|v| !v.is_null()) {
        map.insert(name.into(), v.clone());
    }
}

// ---------------------------------------------------------------- GraphQL

/// A post's own media list, or its reposted / quoted post's when it has none.
fn graphql_media(post: &Value) -> (Vec<Value>, Value) {
    let own = post.pointer("/legacy/extended_entities");
    if !media_list(own).is_empty() {
        return (media_list(own), own.cloned().unwrap_or(Value::Null));
    }
    for pointer in [
        "/legacy/retweeted_status_result/result",
        "/quoted_status_result/result",
    ] {
        if let Some(inner) = post.pointer(pointer).cloned().map(unwrap_visibility) {
            let holder = inner.pointer("/legacy/extended_entities");
            if !media_list(holder).is_empty() {
                return (media_list(holder), holder.cloned().unwrap_or(Value::Null));
            }
        }
    }
    (Vec::new(), Value::Object(Map::new()))
}

/// Media and platformData of a GraphQL post.
pub fn from_graphql(post: &Value) -> Result<(Media, Value), Failure> {
    let legacy = post.get("legacy").cloned().unwrap_or(Value::Null);
    let (list, media_holder) = graphql_media(post);
    let mapped = map_media(&list);
    if mapped.all_blocked {
        return Err(Failure::unavailable(
            "the post's media is not available in the fetching region",
        ));
    }
    let note = str_at(post, "/note_tweet/note_tweet_results/result/text");
    let full_text = if note.is_empty() {
        str_at(&legacy, "/full_text")
    } else {
        note
    };
    let mut links = links_of(&list);
    links.extend(links_of(&media_list(legacy.get("entities"))));
    let title = clean_title(full_text, &links);

    let user = post
        .pointer("/core/user_results/result")
        .cloned()
        .unwrap_or(Value::Null);
    let pick = |a: &str, b: &str| -> Value {
        let v = str_at(&user, a);
        Value::String(if v.is_empty() { str_at(&user, b) } else { v }.to_string())
    };
    let mut user_out = Map::new();
    user_out.insert(
        "id_str".into(),
        Value::String(str_at(&user, "/rest_id").to_string()),
    );
    user_out.insert(
        "screen_name".into(),
        pick("/core/screen_name", "/legacy/screen_name"),
    );
    user_out.insert("name".into(), pick("/core/name", "/legacy/name"));
    user_out.insert(
        "profile_image_url_https".into(),
        pick("/avatar/image_url", "/legacy/profile_image_url_https"),
    );
    user_out.insert(
        "is_blue_verified".into(),
        Value::Bool(
            user.get("is_blue_verified")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
    );

    let mut metrics = Map::new();
    for name in [
        "favorite_count",
        "retweet_count",
        "reply_count",
        "quote_count",
        "bookmark_count",
    ] {
        put(&mut metrics, name, legacy.get(name));
    }
    put(&mut metrics, "view_count", post.pointer("/views/count"));

    let id = match str_at(&legacy, "/id_str") {
        "" => str_at(post, "/rest_id"),
        id => id,
    };
    let mut data = Map::new();
    data.insert("id_str".into(), Value::String(id.to_string()));
    data.insert("text".into(), Value::String(full_text.to_string()));
    data.insert("full_text".into(), Value::String(full_text.to_string()));
    data.insert("user".into(), Value::Object(user_out));
    data.insert(
        "media".into(),
        if media_holder.is_object() {
            media_holder
        } else {
            Value::Object(Map::new())
        },
    );
    data.insert("metrics".into(), Value::Object(metrics));
    for name in [
        "created_at",
        "lang",
        "conversation_id_str",
        "possibly_sensitive",
        "quoted_status_id_str",
        "entities",
    ] {
        put(&mut data, name, legacy.get(name));
    }
    put(&mut data, "card", post.get("card"));
    put(&mut data, "source", post.get("source"));

    let media = Media {
        title,
        thumbnail: mapped.thumbnail,
        duration: mapped.duration,
        images: mapped.images,
        videos: mapped.videos,
        audios: Vec::new(),
    };
    Ok((media, Value::Object(data)))
}

// ---------------------------------------------------------------- syndication

/// Media and platformData of a syndication answer (flat shape).
pub fn from_syndication(post: &Value) -> Result<(Media, Value), Failure> {
    let own = post
        .get("mediaDetails")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let list = if own.is_empty() {
        post.pointer("/quoted_tweet/mediaDetails")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    } else {
        own
    };
    let mapped = map_media(&list);
    if mapped.all_blocked {
        return Err(Failure::unavailable(
            "the post's media is not available in the fetching region",
        ));
    }
    let text = str_at(post, "/text");
    let mut links = links_of(&list);
    links.extend(links_of(&media_list(post.get("entities"))));
    let title = clean_title(text, &links);

    let user = post.get("user").cloned().unwrap_or(Value::Null);
    let mut user_out = Map::new();
    for name in ["id_str", "screen_name", "name", "profile_image_url_https"] {
        user_out.insert(
            name.into(),
            Value::String(str_at(&user, &format!("/{name}")).to_string()),
        );
    }
    user_out.insert(
        "is_blue_verified".into(),
        Value::Bool(
            user.get("is_blue_verified")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
    );
    let mut metrics = Map::new();
    put(&mut metrics, "favorite_count", post.get("favorite_count"));
    put(&mut metrics, "reply_count", post.get("conversation_count"));

    let mut data = Map::new();
    data.insert(
        "id_str".into(),
        Value::String(str_at(post, "/id_str").to_string()),
    );
    data.insert("text".into(), Value::String(text.to_string()));
    data.insert("full_text".into(), Value::String(text.to_string()));
    data.insert("user".into(), Value::Object(user_out));
    let mut media_obj = Map::new();
    media_obj.insert("media".into(), Value::Array(list));
    data.insert("media".into(), Value::Object(media_obj));
    data.insert("metrics".into(), Value::Object(metrics));
    for name in [
        "created_at",
        "lang",
        "possibly_sensitive",
        "entities",
        "card",
    ] {
        put(&mut data, name, post.get(name));
    }

    let media = Media {
        title,
        thumbnail: mapped.thumbnail,
        duration: mapped.duration,
        images: mapped.images,
        videos: mapped.videos,
        audios: Vec::new(),
    };
    Ok((media, Value::Object(data)))
}

/// Where the post comes from once it is known.
pub enum Source {
    GraphQl(Value),
    Syndication(Value),
}

/// What a GraphQL answer means for the strategy.
pub enum GqlAnswer {
    Result(Outcome),
    /// The guest token was refused (401/403, "Bad guest token").
    BadToken,
    /// Failed in a way syndication may get around; the failure is the
    /// answer when it does not.
    Fallback(Failure),
}

/// The HTTP-level verdict shared by both GraphQL operations; `None` when
/// the body must be read.
fn read_status(response: &HttpResponse, envelope: Option<&Envelope>) -> Option<GqlAnswer> {
    let bad_token = envelope.is_some_and(|e| {
        e.errors
            .iter()
            .any(|err| err.code == Some(239) || err.message.contains("Bad guest token"))
    });
    match response.status {
        401 | 403 => Some(GqlAnswer::BadToken),
        429 => Some(GqlAnswer::Fallback(Failure::RateLimited(
            "X answered 429 Too Many Requests".into(),
        ))),
        400 | 404 | 422 => Some(GqlAnswer::Fallback(Failure::changed(format!(
            "X GraphQL answered HTTP {} (stale query id or feature flags?)",
            response.status
        )))),
        s if !(200..300).contains(&s) => Some(GqlAnswer::Fallback(Failure::upstream(format!(
            "X GraphQL answered HTTP {s}"
        )))),
        _ if bad_token => Some(GqlAnswer::BadToken),
        _ => None,
    }
}

/// An answer without the expected data: its `errors`, or a changed shape.
fn no_data(envelope: Option<Envelope>) -> GqlAnswer {
    match envelope {
        Some(e) if !e.errors.is_empty() => GqlAnswer::Fallback(Failure::upstream(format!(
            "X GraphQL error: {}",
            e.errors
                .iter()
                .map(|x| x.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ))),
        _ => GqlAnswer::Fallback(Failure::changed(
            "X GraphQL answer is not the expected JSON",
        )),
    }
}

/// A `TweetResultByRestId` answer.
pub fn read_graphql(response: &HttpResponse) -> GqlAnswer {
    let envelope: Option<Envelope> = response.json().ok();
    if let Some(verdict) = read_status(response, envelope.as_ref()) {
        return verdict;
    }
    match envelope {
        // `errors` next to data ("Dependency: Unspecified") is ignored when
        // the data is there (yt-dlp #15963).
        Some(Envelope {
            data:
                Some(Data {
                    tweet_result: Some(holder),
                    ..
                }),
            ..
        }) => GqlAnswer::Result(classify(holder.result)),
        Some(Envelope { data: Some(_), .. }) => GqlAnswer::Result(Outcome::Missing),
        other => no_data(other),
    }
}

/// A `TweetDetail` answer: the conversation's entry `tweet-{id}`; a
/// conversation without it is `Missing`.
pub fn read_tweet_detail(response: &HttpResponse, id: &str) -> GqlAnswer {
    let envelope: Option<Envelope> = response.json().ok();
    if let Some(verdict) = read_status(response, envelope.as_ref()) {
        return verdict;
    }
    match envelope {
        Some(Envelope {
            data:
                Some(Data {
                    threaded_conversation_with_injections_v2: Some(conversation),
                    ..
                }),
            ..
        }) => GqlAnswer::Result(classify(conversation.focal_result(id))),
        Some(Envelope { data: Some(_), .. }) => GqlAnswer::Result(Outcome::Missing),
        other => no_data(other),
    }
}

/// Media and platform data of the post, from whichever source has it.
pub fn extraction(source: &Source) -> Result<Extraction, Failure> {
    let (media, data) = match source {
        Source::GraphQl(post) => from_graphql(post)?,
        Source::Syndication(post) => from_syndication(post)?,
    };
    let mut data = match data {
        Value::Object(map) => map,
        _ => Default::default(),
    };
    fill_missing_members(PLATFORM, &mut data);
    Ok(Extraction {
        media,
        platform_data: Value::Object(data).into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn photo_urls_go_to_original_size() {
        assert_eq!(
            original_photo_url("https://pbs.twimg.com/media/GahebgHbEAEevTU.jpg"),
            "https://pbs.twimg.com/media/GahebgHbEAEevTU?format=jpg&name=orig"
        );
        assert_eq!(
            original_photo_url("https://pbs.twimg.com/media/G0HULMeWMAA-IGM.png"),
            "https://pbs.twimg.com/media/G0HULMeWMAA-IGM?format=png&name=orig"
        );
        assert_eq!(
            original_photo_url("https://pbs.twimg.com/tweet_video_thumb/X.jpg"),
            "https://pbs.twimg.com/tweet_video_thumb/X.jpg"
        );
    }

    #[test]
    fn sizes_from_variant_urls() {
        assert_eq!(
            size_in_url("https://video.twimg.com/ext_tw_video/1/pu/vid/avc1/576x1280/y.mp4?tag=12"),
            Some((576, 1280))
        );
        assert_eq!(
            size_in_url("https://video.twimg.com/tweet_video/AbC.mp4"),
            None
        );
    }

    #[test]
    fn titles_lose_media_links_and_entities() {
        let links = vec!["https://t.co/RoMxHhAo9X".to_string()];
        assert_eq!(
            clean_title("birds &amp; bees https://t.co/RoMxHhAo9X", &links),
            "birds & bees"
        );
        assert_eq!(clean_title("https://t.co/RoMxHhAo9X", &links), "");
        assert_eq!(clean_title("no media", &links), "no media");
    }

    #[test]
    fn classifies_results() {
        let kind = |v: Value| match classify(Some(v)) {
            Outcome::Post(_) => "post",
            Outcome::Sensitive(_) => "sensitive",
            Outcome::Gone(_) => "gone",
            Outcome::Missing => "missing",
        };
        assert_eq!(kind(json!({})), "missing");
        assert_eq!(
            kind(json!({"__typename": "TweetUnavailable", "reason": "Suspended"})),
            "gone"
        );
        assert_eq!(
            kind(json!({"__typename": "TweetUnavailable", "reason": "Protected"})),
            "gone"
        );
        assert_eq!(
            kind(json!({"__typename": "TweetUnavailable", "reason": "NsfwLoggedOut"})),
            "sensitive"
        );
        assert_eq!(
            kind(json!({"__typename": "BlurredMediaTombstone"})),
            "sensitive"
        );
        assert_eq!(kind(json!({"__typename": "TweetTombstone"})), "sensitive");
        assert_eq!(
            kind(
                json!({"__typename": "TweetTombstone", "tombstone": {"text": {"text": "This Post was deleted by the Post author."}}})
            ),
            "gone"
        );
        assert_eq!(
            kind(
                json!({"__typename": "TweetWithVisibilityResults", "tweet": {"rest_id": "1", "legacy": {}}})
            ),
            "post"
        );
        assert!(matches!(classify(None), Outcome::Missing));
    }

    #[test]
    fn retweets_use_the_original_media_and_gifs_have_no_audio() {
        let post = json!({
            "__typename": "Tweet",
            "rest_id": "2",
            "legacy": {
                "id_str": "2",
                "full_text": "RT @a: look",
                "retweeted_status_result": {"result": {"__typename": "Tweet", "legacy": {"extended_entities": {"media": [{
                    "type": "animated_gif",
                    "media_url_https": "https://pbs.twimg.com/tweet_video_thumb/AbC.jpg",
                    "video_info": {"variants": [{"bitrate": 0, "content_type": "video/mp4", "url": "https://video.twimg.com/tweet_video/AbC.mp4"}]}
                }]}}}}
            }
        });
        let (media, data) = from_graphql(&post).unwrap_or_default_for_test();
        assert_eq!(media.videos.len(), 1);
        assert!(!media.videos[0].has_audio);
        assert_eq!(media.videos[0].quality, "0k");
        assert_eq!(media.videos[0].width, 0);
        assert_eq!(data["media"]["media"][0]["type"], "animated_gif");
    }

    #[test]
    fn geo_blocked_media_is_unavailable() {
        let post = json!({"legacy": {"extended_entities": {"media": [
            {"type": "photo", "media_url_https": "https://pbs.twimg.com/media/A.jpg", "ext_media_availability": {"status": "Unavailable"}}
        ]}}});
        assert!(matches!(from_graphql(&post), Err(Failure::Unavailable(_))));
    }

    trait OrDefault {
        fn unwrap_or_default_for_test(self) -> (Media, Value);
    }
    impl OrDefault for Result<(Media, Value), Failure> {
        fn unwrap_or_default_for_test(self) -> (Media, Value) {
            self.unwrap_or_else(|f| panic!("{f}"))
        }
    }
}

#[cfg(test)]
mod tweet_detail_tests {
    use super::*;
    use mediaparse_sdk::HttpRequest;
    use mediaparse_sdk::testing::exchange;

    const ANSWER: &str =
        include_str!("../fixtures/tweetdetail_after_syndication_429/TweetDetail.json");

    fn read(id: &str) -> GqlAnswer {
        let e = exchange(
            HttpRequest::get("https://api.x.com/graphql/q/TweetDetail"),
            200,
            ANSWER,
        );
        read_tweet_detail(&e.response, id)
    }

    #[test]
    fn the_focal_entry_is_the_post_and_replies_are_not() {
        match read("1671508600538161153") {
            GqlAnswer::Result(Outcome::Post(post)) => {
                assert_eq!(str_at(&post, "/rest_id"), "1671508600538161153");
            }
            _ => panic!("expected the focal post"),
        }
        // A reply inside the conversation is no `tweet-{id}` entry.
        assert!(matches!(
            read("1671834254790086657"),
            GqlAnswer::Result(Outcome::Missing)
        ));
    }
}
