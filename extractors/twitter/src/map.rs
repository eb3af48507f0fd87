//! Reading the post (guide sections 4–6): the GraphQL `tweetResult`, the
//! focal entry of a `TweetDetail` conversation and the flat syndication
//! shape, all mapped to media and platformData.

use mediaparse_sdk::fields::{self, RawValue, Text, kind_of};
use mediaparse_sdk::html::decode_entities;
use mediaparse_sdk::{
    Extraction, Failure, HttpResponse, Image, Media, MediaSource, ObjectWriter, PlatformData, Video,
};

use crate::PLATFORM;
use serde::Deserialize;

/// `{"data": {"tweetResult": {"result": ...}}, "errors": [...]}`, or for
/// `TweetDetail` `{"data": {"threaded_conversation_with_injections_v2": {"instructions": [...]}}}`;
/// the result is kept as its text, read once it is known to be the post.
#[derive(Debug, Default, Deserialize)]
pub struct Envelope<'a> {
    #[serde(default, borrow)]
    pub data: Option<Data<'a>>,
    #[serde(default)]
    pub errors: Vec<ApiError>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Data<'a> {
    #[serde(default, rename = "tweetResult", borrow)]
    pub tweet_result: Option<Holder<'a>>,
    #[serde(default, borrow)]
    pub threaded_conversation_with_injections_v2: Option<Conversation<'a>>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Conversation<'a> {
    #[serde(default, borrow)]
    pub instructions: Vec<&'a RawValue>,
}

/// The members of a timeline instruction and of its entries the focal
/// entry is found by.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Instruction<'a> {
    #[serde(rename = "type", borrow, deserialize_with = "fields::string")]
    kind: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    entries: Option<&'a RawValue>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Entry<'a> {
    #[serde(borrow, deserialize_with = "fields::string")]
    entry_id: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    content: Option<&'a RawValue>,
}

impl<'a> Conversation<'a> {
    /// The `tweet_results.result` of the entry `tweet-{id}` in the
    /// `TimelineAddEntries` instructions: `None` when the post is not
    /// among them.
    fn focal_result(&self, id: &str) -> Option<&'a RawValue> {
        let entry_id = format!("tweet-{id}");
        self.instructions
            .iter()
            .map(|i| object::<Instruction>(Some(i)))
            .filter(|i| i.kind.as_str() == "TimelineAddEntries")
            .flat_map(|i| list(i.entries))
            .map(|e| object::<Entry>(Some(e)))
            .find(|e| e.entry_id.as_str() == entry_id)
            .and_then(|e| fields::at(e.content, &["itemContent", "tweet_results", "result"]))
    }
}

/// `tweetResult`: its `result` read as the post in the envelope's one pass
/// over the answer, `None` when it is no object with members (what
/// [`classify`] calls missing).
#[derive(Debug, Default, Deserialize)]
pub struct Holder<'a> {
    #[serde(default, borrow, deserialize_with = "filled_post")]
    pub result: Option<Post<'a>>,
}

/// `deserialize_with`: an object with at least one member read as a
/// [`Post`]; `None` for an empty object and for any other value, which is
/// passed over.
fn filled_post<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Post<'de>>, D::Error> {
    use serde::de::{self, MapAccess, Visitor};

    /// A map that counts the members it hands on.
    struct Counted<A> {
        map: A,
        members: usize,
    }
    impl<'de, A: MapAccess<'de>> MapAccess<'de> for &mut Counted<A> {
        type Error = A::Error;
        fn next_key_seed<K: de::DeserializeSeed<'de>>(
            &mut self,
            seed: K,
        ) -> Result<Option<K::Value>, A::Error> {
            let key = self.map.next_key_seed(seed)?;
            self.members += usize::from(key.is_some());
            Ok(key)
        }
        fn next_value_seed<V: de::DeserializeSeed<'de>>(
            &mut self,
            seed: V,
        ) -> Result<V::Value, A::Error> {
            self.map.next_value_seed(seed)
        }
        fn size_hint(&self) -> Option<usize> {
            self.map.size_hint()
        }
    }

    struct FilledPost;
    impl<'de> Visitor<'de> for FilledPost {
        type Value = Option<Post<'de>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any value")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let mut counted = Counted { map, members: 0 };
            let post = Post::deserialize(de::value::MapAccessDeserializer::new(&mut counted))?;
            Ok((counted.members > 0).then_some(post))
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(FilledPost)
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
pub enum Outcome<'a> {
    /// A readable post (unwrapped from `TweetWithVisibilityResults`).
    Post(Box<Post<'a>>),
    /// Sensitive media: a logged-in session can see it.
    Sensitive(String),
    /// Deleted, withheld, protected, suspended.
    Gone(String),
    /// No result at all: not found for guests (syndication may still know it).
    Missing,
}

/// The object `raw` read as `T`; the empty `T` when it is no object (as
/// `Value::get` finds nothing in a non-object).
fn object<'a, T: Deserialize<'a> + Default>(raw: Option<&'a RawValue>) -> T {
    raw.filter(|r| kind_of(r) == b'{')
        .and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default()
}

/// The elements of the array `raw`; none when it is no array.
fn list(raw: Option<&RawValue>) -> Vec<&RawValue> {
    raw.filter(|r| kind_of(r) == b'[')
        .and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default()
}

/// The string `raw` holds; empty for any other value.
fn string_at<'a>(raw: Option<&'a RawValue>, path: &[&str]) -> Text<'a> {
    fields::at(raw, path)
        .filter(|r| kind_of(r) == b'"')
        .and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default()
}

/// The members of a GraphQL result: how `classify` judges it, and what
/// `from_graphql` reads of a post.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Post<'a> {
    #[serde(rename = "__typename", borrow, deserialize_with = "fields::string")]
    typename: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::string")]
    reason: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    tombstone: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    tweet: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "present")]
    legacy: Option<Legacy<'a>>,
    #[serde(borrow, deserialize_with = "fields::string")]
    rest_id: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    note_tweet: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "present")]
    core: Option<PostCore<'a>>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    views: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    card: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    source: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    quoted_status_result: Option<&'a RawValue>,
}

/// `legacy` of a GraphQL post.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Legacy<'a> {
    #[serde(borrow, deserialize_with = "fields::string")]
    full_text: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::string")]
    id_str: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    extended_entities: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    retweeted_status_result: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    favorite_count: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    retweet_count: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    reply_count: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    quote_count: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    bookmark_count: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    created_at: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    lang: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    conversation_id_str: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    possibly_sensitive: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    quoted_status_id_str: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    entities: Option<&'a RawValue>,
}

/// A GraphQL user (`core.user_results.result`), and the names it carries
/// in `core` (the newer shape) or `legacy`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct User<'a> {
    #[serde(borrow, deserialize_with = "fields::string")]
    rest_id: Text<'a>,
    #[serde(borrow, deserialize_with = "present")]
    core: Option<UserNames<'a>>,
    #[serde(borrow, deserialize_with = "present")]
    legacy: Option<UserNames<'a>>,
    #[serde(borrow, deserialize_with = "present")]
    avatar: Option<UserNames<'a>>,
    #[serde(deserialize_with = "boolean")]
    is_blue_verified: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct UserNames<'a> {
    #[serde(borrow, deserialize_with = "fields::string")]
    id_str: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::string")]
    screen_name: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::string")]
    name: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::string")]
    profile_image_url_https: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::string")]
    image_url: Text<'a>,
    #[serde(deserialize_with = "boolean")]
    is_blue_verified: bool,
}

/// `deserialize_with`: a present member as `Some`, read as `T` when it is
/// an object and as the empty `T` otherwise (`Value::get` finds nothing in
/// a non-object), in the one pass over the text.
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    struct Lenient<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de> + Default> serde::de::Visitor<'de> for Lenient<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any value")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(T::default())
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<T, E> {
            Ok(T::default())
        }
    }
    d.deserialize_any(Lenient(std::marker::PhantomData))
        .map(Some)
}

/// `core` of a GraphQL post: `user_results.result` is the user.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PostCore<'a> {
    #[serde(borrow, deserialize_with = "present")]
    user_results: Option<UserResults<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct UserResults<'a> {
    #[serde(borrow, deserialize_with = "present")]
    result: Option<User<'a>>,
}

/// `deserialize_with`: `true` only for JSON `true` (`Value::as_bool`
/// with `false` for anything else).
fn boolean<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(<&RawValue>::deserialize(d)?.get() == "true")
}

/// Unwrap `TweetWithVisibilityResults` (possibly nested) to the post.
fn unwrap_visibility(mut post: Post<'_>) -> Post<'_> {
    for _ in 0..4 {
        if post.typename.as_str() != "TweetWithVisibilityResults" {
            break;
        }
        match post.tweet {
            Some(inner) => post = object(Some(inner)),
            None => break,
        }
    }
    post
}

/// Is `raw` an object with at least one member?
fn is_filled_object(raw: &RawValue) -> bool {
    kind_of(raw) == b'{' && !raw.get()[1..].trim_start().starts_with('}')
}

/// Classify a GraphQL result given as its text (a conversation's focal
/// entry): as [`classify_post`] once it is read.
pub fn classify(result: Option<&RawValue>) -> Outcome<'_> {
    classify_post(
        result
            .filter(|r| is_filled_object(r))
            .map(|r| object(Some(r))),
    )
}

/// Classify a GraphQL result read as a post (guide section 4 and 6):
/// `None` is no object with members.
pub fn classify_post(result: Option<Post<'_>>) -> Outcome<'_> {
    let Some(result) = result else {
        return Outcome::Missing;
    };
    let post = unwrap_visibility(result);
    let kind = post.typename.as_str();
    match kind {
        "TweetUnavailable" => {
            let reason = post.reason.as_str();
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
            let text = string_at(post.tombstone, &["text", "text"]);
            if text.as_str().is_empty() {
                // A bare tombstone is what the guest query answers for
                // age-gated posts (measured by vxtwitter, see docs).
                Outcome::Sensitive("the post is hidden from guests (bare tombstone)".into())
            } else {
                Outcome::Gone(text.into_string())
            }
        }
        _ if post.legacy.is_some() || kind == "Tweet" => Outcome::Post(Box::new(post)),
        _ => Outcome::Missing,
    }
}

// ---------------------------------------------------------------- media

#[derive(Debug, Default, Deserialize)]
struct MediaItem<'a> {
    #[serde(default, borrow, deserialize_with = "fields::string")]
    url: Text<'a>,
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
    /// The items' t.co links (`url`), which the post's text ends with.
    pub links: Vec<String>,
}

pub fn map_media(list: &[&RawValue]) -> Mapped {
    let mut out = Mapped {
        images: Vec::new(),
        videos: Vec::new(),
        thumbnail: String::new(),
        duration: 0.0,
        all_blocked: false,
        links: Vec::new(),
    };
    let mut blocked = 0;
    for raw in list {
        let Ok(item) = serde_json::from_str::<MediaItem>(raw.get()) else {
            out.links.push(string_at(Some(raw), &["url"]).into_string());
            continue;
        };
        out.links.push(item.url.into_string());
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

/// The `media` list of a holder (`extended_entities`, `entities`).
fn media_list(holder: Option<&RawValue>) -> Vec<&RawValue> {
    list(fields::at(holder, &["media"]))
}

/// The t.co links (`url`) of media items.
fn links_of(list: &[&RawValue]) -> Vec<String> {
    list.iter()
        .map(|m| string_at(Some(m), &["url"]).into_string())
        .collect()
}

/// Write `value` as member `name` unless it is absent or `null`.
fn put<'a>(out: &mut ObjectWriter<'a>, name: &'a str, value: Option<&RawValue>) {
    if let Some(v) = value.filter(|v| v.get() != "null") {
        out.raw(name, v);
    }
}

// ---------------------------------------------------------------- GraphQL

/// A post's own media list and its holder, or its reposted / quoted
/// post's when it has none.
fn graphql_media<'a>(
    post: &Post<'a>,
    legacy: &Legacy<'a>,
) -> (Vec<&'a RawValue>, Option<&'a RawValue>) {
    let own = media_list(legacy.extended_entities);
    if !own.is_empty() {
        return (own, legacy.extended_entities);
    }
    for inner in [
        fields::at(legacy.retweeted_status_result, &["result"]),
        fields::at(post.quoted_status_result, &["result"]),
    ]
    .into_iter()
    .flatten()
    {
        let inner = unwrap_visibility(object(Some(inner)));
        let holder = inner.legacy.and_then(|l| l.extended_entities);
        let media = media_list(holder);
        if !media.is_empty() {
            return (media, holder);
        }
    }
    (Vec::new(), None)
}

/// Media and platformData of a GraphQL post.
pub fn from_graphql(post: &Post) -> Result<(Media, PlatformData), Failure> {
    let no_legacy = Legacy::default();
    let legacy = post.legacy.as_ref().unwrap_or(&no_legacy);
    let (list, media_holder) = graphql_media(post, legacy);
    let mapped = map_media(&list);
    if mapped.all_blocked {
        return Err(Failure::unavailable(
            "the post's media is not available in the fetching region",
        ));
    }
    let note = string_at(post.note_tweet, &["note_tweet_results", "result", "text"]);
    let full_text = if note.as_str().is_empty() {
        legacy.full_text.as_str()
    } else {
        note.as_str()
    };
    let mut links = mapped.links;
    links.extend(links_of(&media_list(legacy.entities)));
    let title = clean_title(full_text, &links);

    let user = post
        .core
        .as_ref()
        .and_then(|c| c.user_results.as_ref())
        .and_then(|u| u.result.as_ref());
    let no_user = User::default();
    let user = user.unwrap_or(&no_user);
    let no_names = UserNames::default();
    let core = user.core.as_ref().unwrap_or(&no_names);
    let user_legacy = user.legacy.as_ref().unwrap_or(&no_names);
    let avatar = user.avatar.as_ref().unwrap_or(&no_names);
    let pick = |a: &'_ Text, b: &'_ Text| -> String {
        if a.as_str().is_empty() { b } else { a }
            .as_str()
            .to_string()
    };

    let id = match legacy.id_str.as_str() {
        "" => post.rest_id.as_str(),
        id => id,
    };
    let mut data = ObjectWriter::new();
    data.str("id_str", id)
        .str("text", full_text)
        .str("full_text", full_text)
        .object("user", |u| {
            u.str("id_str", user.rest_id.as_str())
                .str(
                    "screen_name",
                    &pick(&core.screen_name, &user_legacy.screen_name),
                )
                .str("name", &pick(&core.name, &user_legacy.name))
                .str(
                    "profile_image_url_https",
                    &pick(&avatar.image_url, &user_legacy.profile_image_url_https),
                )
                .value("is_blue_verified", &user.is_blue_verified);
        });
    match media_holder.filter(|h| kind_of(h) == b'{') {
        Some(holder) => data.raw("media", holder),
        None => data.object("media", |_| {}),
    };
    data.object("metrics", |m| {
        put(m, "favorite_count", legacy.favorite_count);
        put(m, "retweet_count", legacy.retweet_count);
        put(m, "reply_count", legacy.reply_count);
        put(m, "quote_count", legacy.quote_count);
        put(m, "bookmark_count", legacy.bookmark_count);
        put(m, "view_count", fields::at(post.views, &["count"]));
    });
    put(&mut data, "created_at", legacy.created_at);
    put(&mut data, "lang", legacy.lang);
    put(&mut data, "conversation_id_str", legacy.conversation_id_str);
    put(&mut data, "possibly_sensitive", legacy.possibly_sensitive);
    put(
        &mut data,
        "quoted_status_id_str",
        legacy.quoted_status_id_str,
    );
    put(&mut data, "entities", legacy.entities);
    put(&mut data, "card", post.card);
    put(&mut data, "source", post.source);

    let media = Media {
        title,
        thumbnail: mapped.thumbnail,
        duration: mapped.duration,
        images: mapped.images,
        videos: mapped.videos,
        audios: Vec::new(),
    };
    Ok((media, data.finish(PLATFORM)))
}

// ---------------------------------------------------------------- syndication

/// The members of a syndication answer (flat shape) that are read.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Syndication<'a> {
    #[serde(rename = "__typename", borrow, deserialize_with = "fields::raw")]
    typename: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    id_str: Option<&'a RawValue>,
    #[serde(rename = "mediaDetails", borrow, deserialize_with = "fields::raw")]
    media_details: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    quoted_tweet: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::string")]
    text: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    entities: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    user: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    favorite_count: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    conversation_count: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    created_at: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    lang: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    possibly_sensitive: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    card: Option<&'a RawValue>,
}

/// What a syndication answer is: a post (it has a string `id_str`), a
/// tombstone, or neither.
pub enum SyndicationKind {
    Post,
    Tombstone,
    Unknown,
}

/// Judge a syndication answer by its `__typename` and `id_str`.
pub fn syndication_kind(answer: &RawValue) -> SyndicationKind {
    let post: Syndication = object(Some(answer));
    if string_at(post.typename, &[]).as_str() == "TweetTombstone" {
        SyndicationKind::Tombstone
    } else if post.id_str.is_some_and(|id| kind_of(id) == b'"') {
        SyndicationKind::Post
    } else {
        SyndicationKind::Unknown
    }
}

/// Media and platformData of a syndication answer (flat shape).
pub fn from_syndication(raw: &RawValue) -> Result<(Media, PlatformData), Failure> {
    let post: Syndication = object(Some(raw));
    let own = list(post.media_details);
    let (list, list_raw) = if own.is_empty() {
        let quoted = fields::at(post.quoted_tweet, &["mediaDetails"]);
        (list(quoted), quoted)
    } else {
        (own, post.media_details)
    };
    let mapped = map_media(&list);
    if mapped.all_blocked {
        return Err(Failure::unavailable(
            "the post's media is not available in the fetching region",
        ));
    }
    let text = post.text.as_str();
    let mut links = mapped.links;
    links.extend(links_of(&media_list(post.entities)));
    let title = clean_title(text, &links);

    let user: UserNames = object(post.user);
    let mut data = ObjectWriter::new();
    data.str("id_str", string_at(post.id_str, &[]).as_str())
        .str("text", text)
        .str("full_text", text)
        .object("user", |u| {
            u.str("id_str", user.id_str.as_str())
                .str("screen_name", user.screen_name.as_str())
                .str("name", user.name.as_str())
                .str(
                    "profile_image_url_https",
                    user.profile_image_url_https.as_str(),
                )
                .value("is_blue_verified", &user.is_blue_verified);
        })
        .object("media", |m| match list_raw.filter(|_| !list.is_empty()) {
            Some(items) => {
                m.raw("media", items);
            }
            None => {
                m.value("media", &[] as &[u8]);
            }
        })
        .object("metrics", |m| {
            put(m, "favorite_count", post.favorite_count);
            put(m, "reply_count", post.conversation_count);
        });
    put(&mut data, "created_at", post.created_at);
    put(&mut data, "lang", post.lang);
    put(&mut data, "possibly_sensitive", post.possibly_sensitive);
    put(&mut data, "entities", post.entities);
    put(&mut data, "card", post.card);

    let media = Media {
        title,
        thumbnail: mapped.thumbnail,
        duration: mapped.duration,
        images: mapped.images,
        videos: mapped.videos,
        audios: Vec::new(),
    };
    Ok((media, data.finish(PLATFORM)))
}

/// Where the post comes from once it is known (its text in the answer).
pub enum Source<'a> {
    GraphQl(Box<Post<'a>>),
    Syndication(&'a RawValue),
}

/// What a GraphQL answer means for the strategy.
pub enum GqlAnswer<'a> {
    Result(Outcome<'a>),
    /// The guest token was refused (401/403, "Bad guest token").
    BadToken,
    /// Failed in a way syndication may get around; the failure is the
    /// answer when it does not.
    Fallback(Failure),
}

/// The HTTP-level verdict shared by both GraphQL operations; `None` when
/// the body must be read.
fn read_status<'a>(response: &HttpResponse, envelope: Option<&Envelope>) -> Option<GqlAnswer<'a>> {
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
fn no_data<'a>(envelope: Option<Envelope>) -> GqlAnswer<'a> {
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

/// The answer's envelope; `None` when it is not JSON of that shape.
fn read_envelope(response: &HttpResponse) -> Option<Envelope<'_>> {
    let text = std::str::from_utf8(&response.body).ok()?;
    serde_json::from_str(text).ok()
}

/// A `TweetResultByRestId` answer.
pub fn read_graphql(response: &HttpResponse) -> GqlAnswer<'_> {
    let envelope = read_envelope(response);
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
        }) => GqlAnswer::Result(classify_post(holder.result)),
        Some(Envelope { data: Some(_), .. }) => GqlAnswer::Result(Outcome::Missing),
        other => no_data(other),
    }
}

/// A `TweetDetail` answer: the conversation's entry `tweet-{id}`; a
/// conversation without it is `Missing`.
pub fn read_tweet_detail<'a>(response: &'a HttpResponse, id: &str) -> GqlAnswer<'a> {
    let envelope = read_envelope(response);
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
    let (media, platform_data) = match source {
        Source::GraphQl(post) => from_graphql(post)?,
        Source::Syndication(post) => from_syndication(post)?,
    };
    Ok(Extraction {
        media,
        platform_data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn raw(v: &Value) -> Box<RawValue> {
        RawValue::from_string(v.to_string()).unwrap()
    }

    fn graphql(v: &Value) -> Result<(Media, PlatformData), Failure> {
        let text = raw(v);
        from_graphql(&object(Some(&text)))
    }

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

    fn kind_of_outcome(outcome: &Outcome) -> &'static str {
        match outcome {
            Outcome::Post(_) => "post",
            Outcome::Sensitive(_) => "sensitive",
            Outcome::Gone(_) => "gone",
            Outcome::Missing => "missing",
        }
    }

    /// A `TweetResultByRestId` answer whose `tweetResult.result` is `result`.
    fn graphql_answer(result: &Value) -> HttpResponse {
        HttpResponse {
            request_url: "https://api.x.com/graphql/q/TweetResultByRestId".into(),
            final_url: "https://api.x.com/graphql/q/TweetResultByRestId".into(),
            status: 200,
            headers: Vec::new(),
            body: json!({"data": {"tweetResult": {"result": result}}})
                .to_string()
                .into_bytes(),
        }
    }

    #[test]
    fn classifies_results() {
        // The result read in the envelope's one pass is classified as the
        // same result read from its own text.
        let kind = |v: Value| {
            let from_text = kind_of_outcome(&classify(Some(&raw(&v))));
            let answer = graphql_answer(&v);
            let GqlAnswer::Result(outcome) = read_graphql(&answer) else {
                panic!("{v}: the answer has a result");
            };
            assert_eq!(kind_of_outcome(&outcome), from_text, "{v}");
            from_text
        };
        assert_eq!(kind(json!({})), "missing");
        assert_eq!(kind(json!(null)), "missing");
        assert_eq!(kind(json!([{"__typename": "Tweet"}])), "missing");
        assert_eq!(kind(json!("Tweet")), "missing");
        assert_eq!(kind(json!(7)), "missing");
        assert_eq!(kind(json!({"__typename": "Tweet"})), "post");
        assert_eq!(kind(json!({"rest_id": "1", "legacy": {}})), "post");
        assert_eq!(kind(json!({"rest_id": "1"})), "missing");
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
        assert_eq!(
            kind(json!({"__typename": "TweetWithVisibilityResults", "tweet": {}})),
            "missing"
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
        let (media, data) = graphql(&post).unwrap_or_default_for_test();
        let data = data.to_value();
        assert_eq!(media.videos.len(), 1);
        assert!(!media.videos[0].has_audio);
        assert_eq!(media.videos[0].quality, "0k");
        assert_eq!(media.videos[0].width, 0);
        assert_eq!(data["media"]["media"][0]["type"], "animated_gif");
    }

    #[test]
    fn members_of_an_unexpected_type_read_as_absent() {
        let post = json!({
            "__typename": "Tweet",
            "rest_id": 7,
            "legacy": "not an object",
            "core": {"user_results": {"result": {"rest_id": "9", "legacy": [1], "core": {"screen_name": 3, "name": "N"}, "is_blue_verified": "true"}}}
        });
        let text = raw(&post);
        let Outcome::Post(read) = classify(Some(&text)) else {
            panic!("a Tweet with legacy is a post");
        };
        let (media, data) = from_graphql(&read).unwrap_or_default_for_test();
        assert!(media.videos.is_empty() && media.images.is_empty());
        let data = data.to_value();
        assert_eq!(data["id_str"], "");
        assert_eq!(
            data["user"],
            json!({"id_str": "9", "screen_name": "", "name": "N", "profile_image_url_https": "", "is_blue_verified": false})
        );
        assert_eq!(data["media"], json!({}));
    }

    #[test]
    fn geo_blocked_media_is_unavailable() {
        let post = json!({"legacy": {"extended_entities": {"media": [
            {"type": "photo", "media_url_https": "https://pbs.twimg.com/media/A.jpg", "ext_media_availability": {"status": "Unavailable"}}
        ]}}});
        assert!(matches!(graphql(&post), Err(Failure::Unavailable(_))));
    }

    trait OrDefault {
        fn unwrap_or_default_for_test(self) -> (Media, PlatformData);
    }
    impl OrDefault for Result<(Media, PlatformData), Failure> {
        fn unwrap_or_default_for_test(self) -> (Media, PlatformData) {
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

    /// The focal post's `rest_id`, `None` when the conversation lacks it.
    fn focal(id: &str) -> Option<String> {
        let e = exchange(
            HttpRequest::get("https://api.x.com/graphql/q/TweetDetail"),
            200,
            ANSWER,
        );
        match read_tweet_detail(&e.response, id) {
            GqlAnswer::Result(Outcome::Post(post)) => Some(post.rest_id.into_string()),
            GqlAnswer::Result(Outcome::Missing) => None,
            _ => panic!("expected the focal post or none"),
        }
    }

    #[test]
    fn the_focal_entry_is_the_post_and_replies_are_not() {
        assert_eq!(
            focal("1671508600538161153").as_deref(),
            Some("1671508600538161153")
        );
        // A reply inside the conversation is no `tweet-{id}` entry.
        assert_eq!(focal("1671834254790086657"), None);
    }
}
