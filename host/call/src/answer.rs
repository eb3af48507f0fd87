//! The one answer of a parse call, whatever door it came through: what the
//! door renders (REST's envelope and headers, an MCP tool result, the
//! playground's page) and what an idempotency key stores and replays.

use mediaparse_sdk as sdk;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use mediaparse_core::{ApiError, PlatformData};
use mediaparse_parse::cache::CacheOutcome;
use mediaparse_store::StoredResponse;

/// The message of a parse without media (SPEC code `304`).
pub const NO_MEDIA_MSG: &str = "the link parsed but no downloadable media could be returned";

/// Which answer shape the caller asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Shape {
    /// The media object (`/api/v1/parse`).
    Common,
    /// `{media, platformData, platformDataVersion}` (`/api/v1/platforms/{p}/parse`).
    Platform,
}

/// How a parse call ended. (Stored externally tagged: an internally tagged
/// enum buffers its content, which turns numbers into maps under
/// serde_json's `arbitrary_precision`.)
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// Media, with its delivery applied; platform data only in the platform shape.
    #[serde(rename_all = "camelCase")]
    Media {
        platform: String,
        media: sdk::Media,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        platform_data: Option<PlatformData>,
    },
    /// The link parsed, but held no media (SPEC code `304`, free).
    NoMedia { platform: String },
    /// A refusal or failure, from the error table (free).
    Refused(ApiError),
    /// An answer an earlier version stored as the door's own bytes: the
    /// door gives it back as it was.
    #[serde(skip)]
    Stored(StoredResponse),
}

/// A parse call's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParseAnswer {
    /// The server-minted ledger id the call was (or would have been) charged under.
    pub request_id: String,
    /// Credits taken (0 unless media was returned; a replay says what the
    /// first answer cost).
    pub charged: i64,
    pub shape: Shape,
    pub outcome: Outcome,
    /// How the parse cache served it (none on a replay or a refusal).
    #[serde(skip)]
    pub cache: Option<CacheOutcome>,
    /// The first answer under an idempotency key, given again.
    #[serde(skip)]
    pub replayed: bool,
}

impl ParseAnswer {
    /// A refusal under `request_id`: nothing charged.
    pub fn refused(request_id: &str, shape: Shape, error: ApiError) -> ParseAnswer {
        ParseAnswer {
            request_id: request_id.to_string(),
            charged: 0,
            shape,
            outcome: Outcome::Refused(error),
            cache: None,
            replayed: false,
        }
    }

    /// The HTTP status the answer stands for.
    pub fn status(&self) -> u16 {
        match &self.outcome {
            Outcome::Media { .. } | Outcome::NoMedia { .. } => 200,
            Outcome::Refused(e) => e.code.status(),
            Outcome::Stored(s) => s.status,
        }
    }

    /// The platform the answer is about, when the parse got that far.
    pub fn platform(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Media { platform, .. } | Outcome::NoMedia { platform } => Some(platform),
            Outcome::Refused(_) | Outcome::Stored(_) => None,
        }
    }

    /// The success's `data`: the media object, or the platform shape.
    pub fn data(&self) -> Option<Data<'_>> {
        match &self.outcome {
            Outcome::Media {
                platform,
                media,
                platform_data,
            } => {
                let media = MediaObject { platform, media };
                Some(match (self.shape, platform_data) {
                    (Shape::Platform, Some(data)) => Data::Platform(PlatformResult {
                        media,
                        platform_data: data,
                        platform_data_version: "1",
                    }),
                    (Shape::Platform, None) => Data::Platform(PlatformResult {
                        media,
                        platform_data: &EMPTY_OBJECT,
                        platform_data_version: "1",
                    }),
                    (Shape::Common, _) => Data::Common(media),
                })
            }
            _ => None,
        }
    }

    /// The error the answer carries: a refusal, or the no-media `304`
    /// (whose envelope is a success status with `data: null`).
    pub fn error(&self) -> Option<&ApiError> {
        match &self.outcome {
            Outcome::Refused(e) => Some(e),
            _ => None,
        }
    }

    /// The REST body of the answer, as a JSON text (`Stored`: its own bytes).
    pub fn body(&self) -> String {
        let text = match &self.outcome {
            Outcome::Media { .. } => serde_json::to_string(&Success {
                status: 200,
                data: self.data(),
                msg: "success",
            }),
            Outcome::NoMedia { .. } => serde_json::to_string(&NoMedia {
                status: 200,
                data: (),
                msg: NO_MEDIA_MSG,
                code: "304",
            }),
            Outcome::Refused(e) => Ok(e.envelope().to_string()),
            Outcome::Stored(s) => Ok(s.body.clone()),
        };
        text.unwrap_or_else(|e| {
            mediaparse_core::api_error::internal(e)
                .envelope()
                .to_string()
        })
    }
}

static EMPTY_OBJECT: std::sync::LazyLock<PlatformData> =
    std::sync::LazyLock::new(PlatformData::empty);

/// A success's `data`, written straight from the typed answer.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Data<'a> {
    Common(MediaObject<'a>),
    Platform(PlatformResult<'a>),
}

/// The media object: `platform` first, then the media's own members.
#[derive(Serialize)]
pub struct MediaObject<'a> {
    pub platform: &'a str,
    #[serde(flatten)]
    pub media: &'a sdk::Media,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlatformResult<'a> {
    pub media: MediaObject<'a>,
    pub platform_data: &'a PlatformData,
    pub platform_data_version: &'static str,
}

#[derive(Serialize)]
struct Success<'a> {
    status: u16,
    data: Option<Data<'a>>,
    msg: &'static str,
}

#[derive(Serialize)]
struct NoMedia {
    status: u16,
    data: (),
    msg: &'static str,
    code: &'static str,
}

/// The no-media answer as an error-shaped envelope (MCP tool errors).
pub fn no_media_envelope() -> Value {
    serde_json::json!({"status": 200, "data": null, "msg": NO_MEDIA_MSG, "code": "304"})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn media() -> sdk::Media {
        sdk::Media {
            title: "t".into(),
            videos: vec![sdk::Video {
                url: "https://v.example/1.mp4".into(),
                quality: "720p".into(),
                mime_type: "video/mp4".into(),
                width: 720,
                height: 1280,
                has_audio: true,
                source: sdk::MediaSource::Direct,
                headers: Vec::new(),
            }],
            audios: vec![sdk::Audio {
                url: "https://a.example/1.mp3".into(),
                quality: "music".into(),
                mime_type: "audio/mpeg".into(),
                bitrate: 0,
                source: sdk::MediaSource::Direct,
                headers: vec![sdk::Header::new("Referer", "https://www.tiktok.com/")],
            }],
            ..Default::default()
        }
    }

    #[test]
    fn the_body_is_the_media_object_the_sdk_writes() {
        let answer = ParseAnswer {
            request_id: "req_1".into(),
            charged: 1,
            shape: Shape::Common,
            outcome: Outcome::Media {
                platform: "tiktok".into(),
                media: media(),
                platform_data: None,
            },
            cache: None,
            replayed: false,
        };
        let body: Value = serde_json::from_str(&answer.body()).unwrap();
        assert_eq!(body["data"], media().to_json("tiktok"));
        assert_eq!(body["msg"], "success");
        let text = answer.body();
        assert!(
            text.starts_with(r#"{"status":200,"data":{"platform":"tiktok","title":"t""#),
            "{text}"
        );
    }

    #[test]
    fn a_stored_answer_reads_back_and_renders_the_same() {
        let answer = ParseAnswer {
            request_id: "req_2".into(),
            charged: 3,
            shape: Shape::Platform,
            outcome: Outcome::Media {
                platform: "bilibili".into(),
                media: media(),
                platform_data: Some(
                    PlatformData::from_guest(r#"{"bvid":"BV1","n":12345678901234567890}"#).unwrap(),
                ),
            },
            cache: Some(CacheOutcome::Miss),
            replayed: false,
        };
        let stored = serde_json::to_string(&answer).unwrap();
        let back: ParseAnswer = serde_json::from_str(&stored).unwrap();
        assert_eq!(back.body(), answer.body());
        assert_eq!((back.charged, back.request_id.as_str()), (3, "req_2"));
        assert_eq!(back.cache, None, "a replay is not a cache answer");
        let body: Value = serde_json::from_str(&back.body()).unwrap();
        assert_eq!(body["data"]["platformData"]["bvid"], "BV1");
        assert_eq!(body["data"]["platformData"]["n"], "12345678901234567890");
        assert_eq!(body["data"]["platformDataVersion"], "1");
        let refused = ParseAnswer::refused(
            "req_3",
            Shape::Common,
            ApiError::of(mediaparse_core::ErrorCode::InsufficientCredits),
        );
        let back: ParseAnswer =
            serde_json::from_str(&serde_json::to_string(&refused).unwrap()).unwrap();
        assert_eq!((back.status(), back.body()), (402, refused.body()));
    }
}
