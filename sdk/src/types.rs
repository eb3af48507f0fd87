//! Plain Rust mirrors of the WIT types, with the conveniences authors need.
//! The serde shapes of [`Media`] and its items are the public JSON of the API.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A name/value pair: an HTTP header, or one operator config entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub name: String,
    pub value: String,
}

impl Header {
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
    pub method: String,
    pub url: String,
    pub headers: Vec<Header>,
    pub body: Option<Vec<u8>>,
    pub follow_redirects: bool,
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

    pub fn header_value(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }
}

/// An upstream answer as the host received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    pub request_url: String,
    pub final_url: String,
    pub status: u16,
    pub headers: Vec<Header>,
    pub body: Vec<u8>,
}

impl HttpResponse {
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
        String::from_utf8_lossy(&self.body)
    }

    /// Deserialize the body as JSON into a typed struct.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

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
    pub request: HttpRequest,
    pub response: HttpResponse,
}

/// What `detect` recognised.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    pub platform: String,
    /// Post id, or a short-link code until the link is resolved.
    pub id: String,
    pub canonical_url: String,
    #[serde(default, skip_serializing)]
    pub input: String,
}

/// Per-call facts from the host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Context {
    pub now_unix_ms: u64,
    /// Operator settings for this platform (for example `cookie`).
    pub config: Vec<Header>,
}

impl Context {
    /// An operator setting by name; empty values count as absent.
    pub fn config(&self, name: &str) -> Option<&str> {
        header_value(&self.config, name).filter(|v| !v.trim().is_empty())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaSource {
    Direct,
    Adaptive,
    Dash,
    LivePhoto,
    NativeVoice,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Image {
    pub url: String,
    pub width: u32,
    pub height: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Video {
    pub url: String,
    pub quality: String,
    pub mime_type: String,
    pub width: u32,
    pub height: u32,
    pub has_audio: bool,
    pub source: MediaSource,
    #[serde(with = "header_map", default)]
    pub headers: Vec<Header>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Audio {
    pub url: String,
    pub quality: String,
    pub mime_type: String,
    pub bitrate: u32,
    pub source: MediaSource,
    #[serde(with = "header_map", default)]
    pub headers: Vec<Header>,
}

/// The normalized media object (without `platform`, which the host adds).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Media {
    pub title: String,
    pub thumbnail: String,
    /// Seconds.
    pub duration: f64,
    pub images: Vec<Image>,
    pub videos: Vec<Video>,
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
    pub media: Media,
    pub platform_data: serde_json::Value,
}

/// Why an extraction could not produce media.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    #[error("unsupported url: {0}")]
    UnsupportedUrl(String),
    #[error("content unavailable: {0}")]
    Unavailable(String),
    #[error("login required: {0}")]
    LoginRequired(String),
    #[error("rate limited by the platform: {0}")]
    RateLimited(String),
    #[error("the upstream changed shape: {0}")]
    UpstreamChanged(String),
    #[error("upstream error: {0}")]
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

    /// The HTTP status of the error envelope.
    pub fn http_status(&self) -> u16 {
        match self {
            Failure::UnsupportedUrl(_) => 400,
            Failure::Unavailable(_) => 404,
            Failure::LoginRequired(_) => 422,
            Failure::RateLimited(_) => 503,
            Failure::UpstreamChanged(_) | Failure::UpstreamError(_) => 502,
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

    pub fn unsupported(message: impl Into<String>) -> Self {
        Failure::UnsupportedUrl(message.into())
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Failure::Unavailable(message.into())
    }
    pub fn changed(message: impl Into<String>) -> Self {
        Failure::UpstreamChanged(message.into())
    }
    pub fn upstream(message: impl Into<String>) -> Self {
        Failure::UpstreamError(message.into())
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
    pub fn one(request: HttpRequest) -> Self {
        Plan::Fetch(vec![request])
    }
}

/// Who an extractor is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    pub platform: String,
    pub version: String,
    pub url_hosts: Vec<String>,
    pub api_hosts: Vec<String>,
    pub url_shapes: Vec<String>,
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
