//! The public JSON shapes as Rust types with `ToSchema`: the request body and
//! the media object (SPEC.md "Resources and their fields"). The serializers
//! that produce this JSON live in the SDK (`Media::to_json`); the contract
//! tests validate every end-to-end response against these schemas, so the two
//! cannot drift apart unnoticed.

#![allow(dead_code)] // The types exist for their schemas; nothing constructs them.

use std::collections::BTreeMap;

use utoipa::ToSchema;

/// Parse request body: send `url` (or its alias `link`), nothing else.
/// (The service also accepts both with the same value; both with different
/// values, neither, a blank value or any other member is `400 invalid_request`.)
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(min_properties = 1, max_properties = 1, examples(json!({"url": "https://example.com/p/1"})))]
pub struct ParseRequest {
    /// Public media URL to parse (at most 4096 bytes). (The document says
    /// which platforms accept share text: `openapi::public_value`.)
    #[schema(
        format = "uri",
        min_length = 1,
        max_length = 4096,
        pattern = r"\S",
        nullable = false
    )]
    pub url: Option<String>,
    /// Compatibility alias for `url`.
    #[schema(min_length = 1, max_length = 4096, pattern = r"\S", nullable = false)]
    pub link: Option<String>,
}

/// Where a video stream comes from.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum VideoSource {
    Direct,
    Adaptive,
    Dash,
    LivePhoto,
}

/// Where an audio stream comes from.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum AudioSource {
    Direct,
    Adaptive,
    Dash,
    NativeVoice,
}

/// One image of the post.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Image {
    #[schema(format = "uri")]
    pub url: String,
    /// Pixels; 0 when unknown.
    pub width: u32,
    /// Pixels; 0 when unknown.
    pub height: u32,
}

/// One video rendition. Separate-stream video (`source` `dash`, or
/// `hasAudio` false) must be merged with an audio stream by the caller.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(rename_all = "camelCase")]
pub struct Video {
    #[schema(format = "uri")]
    pub url: String,
    /// Free-form label (a resolution or a bitrate label).
    pub quality: String,
    pub mime_type: String,
    /// Pixels; 0 when unknown.
    pub width: u32,
    /// Pixels; 0 when unknown.
    pub height: u32,
    /// False for separate-stream video.
    pub has_audio: bool,
    pub source: VideoSource,
    /// Headers to send when fetching this media (for example a Referer); may be empty.
    #[schema(required = false)]
    pub headers: BTreeMap<String, String>,
}

/// One audio rendition.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(rename_all = "camelCase")]
pub struct Audio {
    #[schema(format = "uri")]
    pub url: String,
    pub quality: String,
    pub mime_type: String,
    /// Bits per second; 0 when unknown.
    pub bitrate: u32,
    pub source: AudioSource,
    /// Headers to send when fetching this media; may be empty.
    #[schema(required = false)]
    pub headers: BTreeMap<String, String>,
}

/// The normalized media object. Duplicate renditions are preserved and the
/// order follows the source. Media URLs point at the platform's servers and
/// expire: parse the post again to refresh them.
#[derive(ToSchema)]
pub struct Media {
    /// Normalized platform id.
    #[schema(schema_with = platform_id)]
    pub platform: String,
    /// Title or caption; may be empty.
    pub title: String,
    /// Preview image URL; may be empty.
    pub thumbnail: String,
    /// Seconds; images and galleries usually 0.
    #[schema(minimum = 0)]
    pub duration: f64,
    pub images: Vec<Image>,
    pub videos: Vec<Video>,
    pub audios: Vec<Audio>,
}

/// A platform id; the document lists the loaded ones as its `enum`
/// (`openapi::public_value`, from the catalogue).
pub fn platform_id() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .build()
}
