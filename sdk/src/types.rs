//! Plain Rust mirrors of the WIT types, with the conveniences authors need.
//! The serde shapes of [`Media`] and its items are the public JSON of the API.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A name/value pair: an HTTP header, or one operator config entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Header or setting name (compared case-insensitively).
    pub name: String,
    /// Its value.
    pub value: String,
}

impl Header {
    /// A header from anything string-like.
    ///
    /// ```
    /// let h = mediaparse_sdk::Header::new("Referer", "https://example.com/");
    /// assert_eq!(h.name, "Referer");
    /// ```
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Header {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// First value of a header, by case-insensitive name.
pub fn header_value<'a>(headers: &'a [Header], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str())
}

/// One upstream request for the host to perform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    /// `GET`, `POST`, … (the host sends it as given).
    pub method: String,
    /// Absolute https URL on one of the extractor's declared `api-hosts`.
    pub url: String,
    /// Headers to send; transport headers (`Host`, `Content-Length`, …) are the host's.
    pub headers: Vec<Header>,
    /// The request body, if any.
    pub body: Option<Vec<u8>>,
    /// Follow 3xx answers (re-checked at every hop), or return them as they are.
    pub follow_redirects: bool,
    /// Greater than zero: a session bootstrap call the host may answer from its cache for that long.
    pub cache_ttl_seconds: u32,
}

impl HttpRequest {
    /// A GET that follows redirects and is never cached.
    pub fn get(url: impl Into<String>) -> Self {
        HttpRequest {
            method: "GET".into(),
            url: url.into(),
            headers: Vec::new(),
            body: None,
            follow_redirects: true,
            cache_ttl_seconds: 0,
        }
    }

    /// A POST with a body; follows redirects, never cached.
    pub fn post(url: impl Into<String>, body: impl Into<Vec<u8>>) -> Self {
        HttpRequest {
            method: "POST".into(),
            body: Some(body.into()),
            ..HttpRequest::get(url)
        }
    }

    /// Add a header (builder style).
    ///
    /// ```
    /// use mediaparse_sdk::HttpRequest;
    /// let r = HttpRequest::get("https://api.example.com/v/1")
    ///     .header("Referer", "https://example.com/")
    ///     .no_redirects()
    ///     .cache_for(600);
    /// assert_eq!(r.header_value("referer"), Some("https://example.com/"));
    /// assert!(!r.follow_redirects);
    /// assert_eq!(r.cache_ttl_seconds, 600);
    /// ```
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push(Header::new(name, value));
        self
    }

    /// Return a 3xx answer as it is, so its `Location` can be read.
    pub fn no_redirects(mut self) -> Self {
        self.follow_redirects = false;
        self
    }

    /// Mark a session bootstrap call the host may cache for `seconds`.
    pub fn cache_for(mut self, seconds: u32) -> Self {
        self.cache_ttl_seconds = seconds;
        self
    }

    /// First value of a header of this request, by case-insensitive name.
    pub fn header_value(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }
}

/// An upstream answer as the host received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    /// The URL the extractor asked for.
    pub request_url: String,
    /// The URL that answered, after any redirects the host followed.
    pub final_url: String,
    /// HTTP status.
    pub status: u16,
    /// Response headers in order (repeated names kept, e.g. `Set-Cookie`).
    pub headers: Vec<Header>,
    /// The body, already decoded (gzip, br, deflate).
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// First value of a header, by case-insensitive name.
    ///
    /// ```
    /// use mediaparse_sdk::{Header, HttpResponse};
    /// let r = HttpResponse {
    ///     request_url: "https://t.example/abc".into(),
    ///     final_url: "https://t.example/abc".into(),
    ///     status: 302,
    ///     headers: vec![Header::new("Location", "/video/1")],
    ///     body: vec![],
    /// };
    /// assert_eq!(r.header("location"), Some("/video/1"));
    /// assert!(r.is_redirect() && !r.is_success());
    /// assert_eq!(r.location().as_deref(), Some("https://t.example/video/1"));
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }

    /// Every value of a header (for example each `Set-Cookie`).
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.as_str())
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> Cow<'_, str> {
        // `from_utf8` checks valid (mostly ASCII) bodies several times
        // faster than the lossy decoder, which only invalid ones need.
        match std::str::from_utf8(&self.body) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(&self.body),
        }
    }

    /// Deserialize the body as JSON into a typed struct.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    /// Status 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// Status 301, 302, 303, 307 or 308.
    pub fn is_redirect(&self) -> bool {
        matches!(self.status, 301 | 302 | 303 | 307 | 308)
    }

    /// The `Location` of a redirect, resolved against the URL that answered.
    pub fn location(&self) -> Option<String> {
        let raw = self.header("location")?.trim();
        let base = url::Url::parse(&self.final_url).ok()?;
        base.join(raw).ok().map(String::from)
    }
}

/// A request and the answer it got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// What the extractor planned.
    pub request: HttpRequest,
    /// What the host received for it.
    pub response: HttpResponse,
}

/// What `detect` recognised.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// The platform id (one of SPEC.md's, the extractor's own).
    pub platform: String,
    /// Post id, or a short-link code until the link is resolved.
    pub id: String,
    /// A canonical URL of the post (for logs and platform data; not fetched by itself).
    pub canonical_url: String,
    #[serde(default, skip_serializing)]
    /// The caller's input as given (URL or share text); the host sets it.
    pub input: String,
}

impl Target {
    /// A target of `platform` (the host sets `input` again; extractors pass
    /// the caller's input through).
    ///
    /// ```
    /// let t = mediaparse_sdk::Target::new("example", "42", "https://example.com/v/42", "example.com/v/42");
    /// assert_eq!((t.id.as_str(), t.platform.as_str()), ("42", "example"));
    /// ```
    pub fn new(
        platform: &str,
        id: impl Into<String>,
        canonical_url: impl Into<String>,
        input: &str,
    ) -> Self {
        Target {
            platform: platform.into(),
            id: id.into(),
            canonical_url: canonical_url.into(),
            input: input.into(),
        }
    }
}

/// Per-call facts from the host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Context {
    /// The time, in Unix milliseconds: the only clock an extractor has.
    pub now_unix_ms: u64,
    /// Operator settings for this platform (for example `cookie`).
    pub config: Vec<Header>,
    /// Values this platform's extractor asked the host to remember in
    /// earlier parses (name: the memo's key), unexpired (WIT 1.1; empty
    /// under a 1.0 host).
    pub remembered: Vec<Header>,
}

impl Context {
    /// An operator setting by name; empty values count as absent.
    pub fn config(&self, name: &str) -> Option<&str> {
        header_value(&self.config, name).filter(|v| !v.trim().is_empty())
    }

    /// A remembered value by its key (exact, case-sensitive).
    pub fn remembered(&self, key: &str) -> Option<&str> {
        self.remembered
            .iter()
            .find(|h| h.name == key)
            .map(|h| h.value.as_str())
    }
}

/// Largest [`Memo::value`] a host keeps (bytes); a larger memo is dropped.
pub const MAX_MEMO_VALUE_BYTES: usize = 256 << 10;

/// A small value for the host to remember for this platform and hand back
/// in later parses' [`Context::remembered`]. The host bounds them (value
/// size: [`MAX_MEMO_VALUE_BYTES`], count per platform, TTL) and drops a memo
/// over a bound.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Memo {
    /// Chosen by the extractor; a later memo with the same key replaces it.
    pub key: String,
    /// The value (small: the host bounds its size).
    pub value: String,
    /// How long to keep it; zero forgets the key.
    pub ttl_seconds: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
/// Where a media URL comes from (SPEC.md's `source`).
pub enum MediaSource {
    /// A plain progressive file.
    Direct,
    /// One rendition of an adaptive (HLS or similar) set.
    Adaptive,
    /// A DASH stream: video and audio separate.
    Dash,
    /// The video part of a live photo.
    LivePhoto,
    /// A voice note (Xiaohongshu).
    NativeVoice,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// An image item of the media object (no other properties allowed).
pub struct Image {
    /// Absolute http(s) URL.
    pub url: String,
    /// Pixels, 0 when unknown.
    pub width: u32,
    /// Pixels, 0 when unknown.
    pub height: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
/// A video item of the media object.
pub struct Video {
    /// Absolute http(s) URL.
    pub url: String,
    /// A free-form label (`1080p`, a bitrate).
    pub quality: String,
    /// `video/mp4`, `application/x-mpegURL`, …
    pub mime_type: String,
    /// Pixels, 0 when unknown.
    pub width: u32,
    /// Pixels, 0 when unknown.
    pub height: u32,
    /// False for a separate video-only stream.
    pub has_audio: bool,
    /// Where the URL comes from.
    pub source: MediaSource,
    #[serde(with = "header_map", default)]
    /// Headers the caller must send to download it (anonymous values only).
    pub headers: Vec<Header>,
}

impl Video {
    /// A progressive MP4 with sound, served as it is (`source: direct`):
    /// what most platforms hand out.
    ///
    /// ```
    /// let v = mediaparse_sdk::Video::mp4("https://cdn.example.com/1.mp4", "720p", (1280, 720), vec![]);
    /// assert!(v.has_audio && v.mime_type == "video/mp4");
    /// ```
    pub fn mp4(
        url: impl Into<String>,
        quality: impl Into<String>,
        (width, height): (u32, u32),
        headers: Vec<Header>,
    ) -> Self {
        Video {
            url: url.into(),
            quality: quality.into(),
            mime_type: "video/mp4".into(),
            width,
            height,
            has_audio: true,
            source: MediaSource::Direct,
            headers,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
/// An audio item of the media object.
pub struct Audio {
    /// Absolute http(s) URL.
    pub url: String,
    /// A free-form label.
    pub quality: String,
    /// `audio/mp4`, `audio/mpeg`, …
    pub mime_type: String,
    /// Bits per second, 0 when unknown.
    pub bitrate: u32,
    /// Where the URL comes from.
    pub source: MediaSource,
    #[serde(with = "header_map", default)]
    /// Headers the caller must send to download it (anonymous values only).
    pub headers: Vec<Header>,
}

/// The normalized media object (without `platform`, which the host adds).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Media {
    /// Title or caption; may be empty.
    pub title: String,
    /// Preview image URL; may be empty.
    pub thumbnail: String,
    /// Seconds.
    pub duration: f64,
    /// Every image, in source order, duplicates kept.
    pub images: Vec<Image>,
    /// Every video rendition, in source order, duplicates kept.
    pub videos: Vec<Video>,
    /// Every audio rendition, in source order.
    pub audios: Vec<Audio>,
}

impl Media {
    /// True when no image, video or audio URL is present (SPEC: code 304).
    pub fn is_empty(&self) -> bool {
        self.images.is_empty() && self.videos.is_empty() && self.audios.is_empty()
    }

    /// The public JSON media object of SPEC.md, `platform` first.
    pub fn to_json(&self, platform: &str) -> serde_json::Value {
        let mut object = serde_json::Map::new();
        object.insert("platform".into(), platform.into());
        if let Ok(serde_json::Value::Object(rest)) = serde_json::to_value(self) {
            object.extend(rest);
        }
        serde_json::Value::Object(object)
    }
}

/// `map`'s answer: the media and the final target object.
#[derive(Clone, Debug, PartialEq)]
pub struct Extraction {
    /// The media object.
    pub media: Media,
    /// The final target object, as JSON text (the host sanitizes it).
    pub platform_data: crate::PlatformData,
}

/// Why an extraction could not produce media.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    #[error("unsupported url: {0}")]
    /// Not a single supported post of this platform (HTTP 400, code `302`).
    UnsupportedUrl(String),
    #[error("content unavailable: {0}")]
    /// Private, deleted, region- or age-restricted, live (404 `content_unavailable`).
    Unavailable(String),
    #[error("login required: {0}")]
    /// Only for signed-in users and no operator session is configured (422 `login_required`).
    LoginRequired(String),
    #[error("rate limited by the platform: {0}")]
    /// The platform is rate-limiting or challenging us (503 `upstream_rate_limited`).
    RateLimited(String),
    #[error("the upstream changed shape: {0}")]
    /// The upstream answer no longer has the shape we know (502 `upstream_error`).
    UpstreamChanged(String),
    #[error("upstream error: {0}")]
    /// The upstream answered with an error (502 `upstream_error`).
    UpstreamError(String),
}

impl Failure {
    /// The machine-readable code of the error envelope (SPEC.md, DESIGN.md §9).
    pub fn code(&self) -> &'static str {
        match self {
            Failure::UnsupportedUrl(_) => "302",
            Failure::Unavailable(_) => "content_unavailable",
            Failure::LoginRequired(_) => "login_required",
            Failure::RateLimited(_) => "upstream_rate_limited",
            Failure::UpstreamChanged(_) | Failure::UpstreamError(_) => "upstream_error",
        }
    }

    /// The variant's name as in the WIT (`unsupported-url`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::UnsupportedUrl(_) => "unsupported-url",
            Failure::Unavailable(_) => "unavailable",
            Failure::LoginRequired(_) => "login-required",
            Failure::RateLimited(_) => "rate-limited",
            Failure::UpstreamChanged(_) => "upstream-changed",
            Failure::UpstreamError(_) => "upstream-error",
        }
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        match self {
            Failure::UnsupportedUrl(m)
            | Failure::Unavailable(m)
            | Failure::LoginRequired(m)
            | Failure::RateLimited(m)
            | Failure::UpstreamChanged(m)
            | Failure::UpstreamError(m) => m,
        }
    }

    /// [`Failure::UnsupportedUrl`].
    ///
    /// ```
    /// use mediaparse_sdk::Failure;
    /// let f = Failure::unsupported("profiles are not posts");
    /// assert_eq!((f.code(), f.kind()), ("302", "unsupported-url"));
    /// ```
    pub fn unsupported(message: impl Into<String>) -> Self {
        Failure::UnsupportedUrl(message.into())
    }
    /// [`Failure::Unavailable`].
    pub fn unavailable(message: impl Into<String>) -> Self {
        Failure::Unavailable(message.into())
    }
    /// [`Failure::UpstreamChanged`].
    pub fn changed(message: impl Into<String>) -> Self {
        Failure::UpstreamChanged(message.into())
    }
    /// [`Failure::UpstreamError`].
    pub fn upstream(message: impl Into<String>) -> Self {
        Failure::UpstreamError(message.into())
    }
}

/// An upstream body that does not deserialize into the types an extractor
/// expects means the upstream changed shape, so `answer.json::<T>()?` just
/// works in `map`.
///
/// ```
/// use mediaparse_sdk::Failure;
/// fn title(body: &[u8]) -> mediaparse_sdk::Result<String> {
///     #[derive(serde::Deserialize)]
///     struct Post { title: String }
///     Ok(serde_json::from_slice::<Post>(body)?.title)
/// }
/// assert_eq!(title(br#"{"title":"ok"}"#), Ok("ok".to_string()));
/// assert!(matches!(title(b"<html>"), Err(Failure::UpstreamChanged(_))));
/// ```
impl From<serde_json::Error> for Failure {
    fn from(e: serde_json::Error) -> Self {
        Failure::UpstreamChanged(format!("unexpected upstream JSON: {e}"))
    }
}

/// `plan`'s answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Perform these requests concurrently, then call `plan` again.
    Fetch(Vec<HttpRequest>),
    /// Call `map`.
    Ready,
}

impl Plan {
    /// A round of exactly one request.
    pub fn one(request: HttpRequest) -> Self {
        Plan::Fetch(vec![request])
    }
}

/// Who an extractor is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    /// One of SPEC.md's platform ids; the component file must be `<platform>.wasm`.
    pub platform: String,
    /// The extractor's own version (semver), shown in capabilities and logs.
    pub version: String,
    /// Hosts whose URLs the extractor accepts as input (`*.example.com` matches the domain and its subdomains).
    pub url_hosts: Vec<String>,
    /// Hosts the extractor may ask the host to fetch (same pattern rules).
    pub api_hosts: Vec<String>,
    /// Human-readable accepted URL shapes (capabilities, documentation).
    pub url_shapes: Vec<String>,
}

impl Info {
    /// An `Info` from string lists, the extractor's version being its
    /// crate's (`env!("CARGO_PKG_VERSION")`).
    ///
    /// ```
    /// let i = mediaparse_sdk::Info::new("example", "0.1.0", &["*.example.com"], &["api.example.com"], &["/v/{id}"]);
    /// assert_eq!(i.api_hosts, ["api.example.com"]);
    /// ```
    pub fn new(
        platform: &str,
        version: &str,
        url_hosts: &[&str],
        api_hosts: &[&str],
        url_shapes: &[&str],
    ) -> Self {
        let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        Info {
            platform: platform.into(),
            version: version.into(),
            url_hosts: owned(url_hosts),
            api_hosts: owned(api_hosts),
            url_shapes: owned(url_shapes),
        }
    }
}

/// Headers serialize as a JSON object (SPEC.md: string to string).
mod header_map {
    use super::Header;
    use serde::{Deserialize, Deserializer, Serializer, ser::SerializeMap};

    pub fn serialize<S: Serializer>(headers: &[Header], s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(headers.len()))?;
        for h in headers {
            map.serialize_entry(&h.name, &h.value)?;
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Header>, D::Error> {
        let map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        Ok(map
            .into_iter()
            .map(|(name, v)| Header {
                name,
                value: v.as_str().unwrap_or_default().to_string(),
            })
            .collect())
    }
}
