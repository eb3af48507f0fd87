//! Reading a player response (guide sections 4–6): classify its
//! `playabilityStatus`, pick the downloadable formats, build the media
//! object and platform data.

use mediaparse_sdk::cascade::Attempt;
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::fields::{self, RawValue};
use mediaparse_sdk::{
    Audio, Exchange, Extraction, Failure, Header, HttpResponse, Media, MediaSource, ObjectWriter,
    Target, Video, ids,
};
use serde::Deserialize;
use serde_json::Value;

use crate::PLATFORM;

/// The members of a player response the extractor reads or passes on.
/// Everything else (`responseContext` with visitorData, `playbackTracking`,
/// `attestation`, `playerConfig`, ad data) is skipped unread. The small
/// members read here are trees; the large ones only passed on (or read
/// format by format) stay their JSON text.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Player {
    #[serde(default)]
    pub playability_status: Option<Value>,
    #[serde(default)]
    pub streaming_data: Option<Box<RawValue>>,
    #[serde(default)]
    pub video_details: Option<Value>,
    #[serde(default)]
    pub captions: Option<Box<RawValue>>,
    #[serde(default)]
    pub microformat: Option<Box<RawValue>>,
}

impl Player {
    /// Change `streamingData` as a tree (challenges solved, tokens added)
    /// and keep its new text; nothing when the answer has none.
    pub fn edit_streaming_data(
        &mut self,
        edit: impl FnOnce(&mut Value) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let Some(text) = self.streaming_data.as_deref() else {
            return Ok(());
        };
        let mut data: Value = serde_json::from_str(text.get())
            .map_err(|e| Failure::changed(format!("streamingData: {e}")))?;
        edit(&mut data)?;
        let text = serde_json::value::to_raw_value(&data)
            .map_err(|e| Failure::changed(format!("streamingData: {e}")))?;
        self.streaming_data = Some(text);
        Ok(())
    }
}

/// The ANDROID `reel_item_watch` wrapper.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reel {
    #[serde(default)]
    player_response: Option<Player>,
}

/// One entry of `formats` / `adaptiveFormats`. Numbers arrive as numbers
/// or as strings (`contentLength`, `approxDurationMs`); both are accepted.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Format {
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub mime_type: String,
    #[serde(default, deserialize_with = "ids::maybe_u64")]
    pub bitrate: Option<u64>,
    #[serde(default, deserialize_with = "ids::maybe_u64")]
    pub width: Option<u64>,
    #[serde(default, deserialize_with = "ids::maybe_u64")]
    pub height: Option<u64>,
    #[serde(default)]
    pub quality: Option<String>,
    #[serde(default)]
    pub quality_label: Option<String>,
    #[serde(default)]
    pub audio_quality: Option<String>,
    #[serde(default, deserialize_with = "ids::maybe_u64")]
    pub approx_duration_ms: Option<u64>,
    #[serde(default)]
    pub drm_families: Option<Value>,
    #[serde(default, rename = "type")]
    pub stream_type: Option<String>,
    #[serde(default)]
    pub target_duration_sec: Option<Value>,
    #[serde(default)]
    pub audio_track: Option<AudioTrack>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioTrack {
    #[serde(default)]
    pub display_name: Option<String>,
}

/// Parse a VISIONOS answer (a bare player response).
pub fn parse_player(response: &HttpResponse) -> Result<Player, Failure> {
    response
        .json::<Player>()
        .map_err(|e| Failure::changed(format!("player answer is not the expected JSON: {e}")))
}

/// Parse an ANDROID answer: the player response inside `playerResponse`;
/// an empty object (what unknown ids get) reads as an empty player.
pub fn parse_reel(response: &HttpResponse) -> Result<Player, Failure> {
    response
        .json::<Reel>()
        .map(|r| r.player_response.unwrap_or_default())
        .map_err(|e| Failure::changed(format!("reel answer is not the expected JSON: {e}")))
}

/// What one client's answer allows.
#[derive(Debug)]
pub enum Verdict {
    /// Playable with downloadable formats.
    Usable(Box<Player>),
    /// Not usable from this client; another client may do better. The
    /// failure is the answer when no client is left.
    TryNext(Failure),
    /// The video itself cannot be served (private, removed, region, live...).
    Final(Failure),
}

impl Verdict {
    /// As a step of the client cascade: usable stops it, try-next moves on,
    /// final fails the parse.
    pub fn attempt(self) -> mediaparse_sdk::Result<Attempt<Box<Player>>> {
        match self {
            Verdict::Usable(player) => Ok(Attempt::Got(player)),
            Verdict::TryNext(failure) => Ok(Attempt::Missed(failure)),
            Verdict::Final(failure) => Err(failure),
        }
    }
}

fn text(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or_default()
}

/// Classify an HTTP answer from a player call (guide section 6).
pub fn judge(
    response: &HttpResponse,
    video_id: &str,
    parse: impl Fn(&HttpResponse) -> Result<Player, Failure>,
) -> Verdict {
    match response.status {
        200..=299 => {}
        429 => {
            return Verdict::TryNext(Failure::RateLimited(
                "YouTube answered 429 Too Many Requests".into(),
            ));
        }
        s => {
            return Verdict::TryNext(Failure::upstream(format!(
                "YouTube player answered HTTP {s}"
            )));
        }
    }
    match parse(response) {
        Ok(player) => judge_player(player, video_id),
        Err(f) => Verdict::TryNext(f),
    }
}

fn judge_player(player: Player, video_id: &str) -> Verdict {
    let Some(status) = player.playability_status.as_ref() else {
        // `{}`: what InnerTube answers for ids that do not exist.
        return Verdict::Final(Failure::unavailable("this video does not exist"));
    };
    let state = text(status.get("status"));
    let reason = text(status.get("reason")).trim();
    let lower = reason.to_lowercase();
    let said = |why: &str| {
        if reason.is_empty() {
            why.to_string()
        } else {
            format!("{why}: {reason}")
        }
    };
    if state != "OK" {
        let age = state == "AGE_VERIFICATION_REQUIRED"
            || lower.trim_end_matches('.').ends_with("age")
            || lower.contains("inappropriate for some users");
        return if age {
            Verdict::Final(Failure::LoginRequired(said("age-restricted video")))
        } else if lower.contains("not a bot") || lower.trim_end_matches('.').ends_with("bot") {
            Verdict::TryNext(Failure::RateLimited(said("YouTube bot check")))
        } else if lower.contains("request limit") {
            Verdict::TryNext(Failure::RateLimited(said("YouTube request limit")))
        } else if lower.contains("private") {
            Verdict::Final(Failure::unavailable(said("private video")))
        } else if lower.contains("your country") {
            Verdict::Final(Failure::unavailable(said("region-restricted video")))
        } else if lower.contains("members") {
            Verdict::Final(Failure::unavailable(said("paid or members-only video")))
        } else if state == "ERROR" {
            Verdict::Final(Failure::unavailable(said("video unavailable")))
        } else if state == "LIVE_STREAM_OFFLINE" {
            Verdict::Final(Failure::unavailable(said(
                "live content is not supported (the stream has not finished)",
            )))
        } else if state == "LOGIN_REQUIRED" {
            Verdict::TryNext(Failure::LoginRequired(said("YouTube requires sign-in")))
        } else {
            // UNPLAYABLE "This video is not available" is VISIONOS's answer
            // for made-for-kids videos that ANDROID plays.
            Verdict::TryNext(Failure::unavailable(said("video unplayable")))
        };
    }
    let details = player.video_details.as_ref();
    let answered_id = text(details.and_then(|d| d.get("videoId")));
    if !answered_id.is_empty() && answered_id != video_id {
        return Verdict::Final(Failure::upstream(format!(
            "YouTube answered for video {answered_id}, not {video_id}"
        )));
    }
    let flag = |name: &str| {
        details
            .and_then(|d| d.get(name))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    if flag("isLive") || flag("isUpcoming") {
        return Verdict::Final(Failure::unavailable(
            "live content is not supported (this stream is live or upcoming)",
        ));
    }
    let (muxed, adaptive) = formats(&player);
    let all = muxed.iter().chain(&adaptive);
    let with_url = all.clone().filter(|f| f.url.is_some()).count();
    let drm = all.clone().filter(|f| f.drm_families.is_some()).count();
    if with_url == 0 {
        return Verdict::TryNext(Failure::changed(
            "YouTube returned no format with a URL (SABR-only answer)",
        ));
    }
    if drm > 0 && usable(&player, &muxed).count() + usable(&player, &adaptive).count() == 0 {
        return Verdict::Final(Failure::unavailable("DRM-protected video"));
    }
    Verdict::Usable(Box::new(player))
}

fn formats_of(player: &Player, member: &str) -> Vec<Format> {
    fields::at(player.streaming_data.as_deref(), &[member])
        .filter(|list| fields::kind_of(list) == b'[')
        .and_then(|list| serde_json::from_str::<Vec<&RawValue>>(list.get()).ok())
        .map(|list| {
            list.iter()
                .filter_map(|f| serde_json::from_str::<Format>(f.get()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// `(formats, adaptiveFormats)` in source order.
pub fn formats(player: &Player) -> (Vec<Format>, Vec<Format>) {
    (
        formats_of(player, "formats"),
        formats_of(player, "adaptiveFormats"),
    )
}

/// Length of the video in seconds (`lengthSeconds` is a string).
pub fn duration_seconds(player: &Player) -> u64 {
    player
        .video_details
        .as_ref()
        .and_then(|d| d.get("lengthSeconds"))
        .and_then(ids::whole)
        .unwrap_or(0)
}

/// Formats a caller can download: a URL, no DRM, not OTF or live
/// segments, and not "damaged" (shorter than half the video, as yt-dlp drops).
fn usable<'a>(player: &Player, list: &'a [Format]) -> impl Iterator<Item = &'a Format> + 'a {
    let half_ms = duration_seconds(player) * 500;
    list.iter().filter(move |f| {
        f.url.as_deref().is_some_and(|u| u.starts_with("http"))
            && f.drm_families.is_none()
            && f.stream_type.as_deref() != Some("FORMAT_STREAM_TYPE_OTF")
            && f.target_duration_sec.is_none()
            && !matches!(f.approx_duration_ms, Some(ms) if half_ms > 0 && ms < half_ms)
    })
}

fn u32_of(v: Option<u64>) -> u32 {
    v.and_then(|n| u32::try_from(n).ok()).unwrap_or(0)
}

fn video_quality(f: &Format) -> String {
    f.quality_label
        .clone()
        .or_else(|| f.height.map(|h| format!("{h}p")))
        .or_else(|| f.quality.clone())
        .unwrap_or_default()
}

fn audio_quality(f: &Format) -> String {
    let base = f
        .audio_quality
        .clone()
        .or_else(|| f.bitrate.map(|b| format!("{}k", b / 1000)))
        .unwrap_or_default();
    match f
        .audio_track
        .as_ref()
        .and_then(|t| t.display_name.as_deref())
    {
        Some(track) if !track.is_empty() => format!("{base} ({track})"),
        _ => base,
    }
}

/// The media items of a usable answer, with the download headers of the
/// client that produced them.
pub fn media_items(player: &Player, headers: &[Header]) -> (Vec<Video>, Vec<Audio>) {
    let (muxed, adaptive) = formats(player);
    let mut videos = Vec::new();
    let mut audios = Vec::new();
    for f in usable(player, &muxed) {
        videos.push(Video {
            url: f.url.clone().unwrap_or_default(),
            quality: video_quality(f),
            mime_type: f.mime_type.clone(),
            width: u32_of(f.width),
            height: u32_of(f.height),
            has_audio: true,
            source: MediaSource::Direct,
            headers: headers.to_vec(),
        });
    }
    for f in usable(player, &adaptive) {
        if f.mime_type.starts_with("video/") {
            videos.push(Video {
                url: f.url.clone().unwrap_or_default(),
                quality: video_quality(f),
                mime_type: f.mime_type.clone(),
                width: u32_of(f.width),
                height: u32_of(f.height),
                has_audio: false,
                source: MediaSource::Adaptive,
                headers: headers.to_vec(),
            });
        } else if f.mime_type.starts_with("audio/") {
            audios.push(Audio {
                url: f.url.clone().unwrap_or_default(),
                quality: audio_quality(f),
                mime_type: f.mime_type.clone(),
                bitrate: u32_of(f.bitrate),
                source: MediaSource::Adaptive,
                headers: headers.to_vec(),
            });
        }
    }
    (videos, audios)
}

/// Every `{url, width, height}` of a `thumbnail.thumbnails` list.
pub fn thumbnails(holder: Option<&Value>) -> Vec<(String, u64)> {
    holder
        .and_then(|v| v.pointer("/thumbnail/thumbnails"))
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|t| {
                    let url = t.get("url")?.as_str()?.to_string();
                    let w = t.get("width").and_then(ids::whole).unwrap_or(0);
                    let h = t.get("height").and_then(ids::whole).unwrap_or(0);
                    Some((url, w * h))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Media and platform data from the chosen client's player answer, with
/// the WEB `$fields` answer's microformat and thumbnails when it has them.
pub fn extraction(
    target: &Target,
    done: &[Exchange],
    player: Player,
    client: &crate::clients::ClientDef,
) -> Extraction {
    let web = web_answer(target, done);
    let headers = download_headers(client);
    let (videos, audios) = media_items(&player, &headers);

    let details = player.video_details.as_ref();
    let title = details
        .and_then(|d| d.get("title"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    // The largest thumbnail of the player answer or of the WEB answer
    // (which lists maxresdefault when it exists); never probed.
    let mut thumbs = thumbnails(details);
    thumbs.extend(thumbnails(
        web.as_ref().and_then(|w| w.video_details.as_ref()),
    ));
    let thumbnail = thumbs
        .iter()
        .fold(None::<&(String, u64)>, |best, t| match best {
            Some(b) if b.1 > t.1 => Some(b),
            _ => Some(t),
        })
        .map(|t| t.0.clone())
        .unwrap_or_default();

    let media = Media {
        title,
        thumbnail,
        duration: duration_seconds(&player) as f64,
        images: Vec::new(),
        videos,
        audios,
    };

    let mut data = ObjectWriter::new();
    let object = |raw: &&RawValue| fields::kind_of(raw) == b'{';
    if let Some(details) = player.video_details.as_ref().filter(|v| v.is_object()) {
        data.value("videoDetails", details);
    }
    if let Some(streams) = player.streaming_data.as_deref().filter(object) {
        data.raw("streamingData", streams);
    }
    if let Some(status) = player.playability_status.as_ref().filter(|v| v.is_object()) {
        data.value("playabilityStatus", status);
    }
    let microformat = web.and_then(|w| w.microformat).or(player.microformat);
    if let Some(microformat) = microformat.as_deref().filter(object) {
        data.raw("microformat", microformat);
    }
    if let Some(captions) = player.captions.as_deref().filter(object) {
        data.raw("captions", captions);
    }
    Extraction {
        media,
        platform_data: data.finish(PLATFORM),
    }
}

/// The WEB `$fields` answer, when it succeeded and is about this video.
fn web_answer(target: &Target, done: &[Exchange]) -> Option<Player> {
    let exchange = done.last_to(crate::innertube::WEB_FIELDS_URL)?;
    if !exchange.response.is_success() {
        return None;
    }
    let web: Player = exchange.response.json().ok()?;
    let id = web
        .video_details
        .as_ref()
        .and_then(|d| d.get("videoId"))
        .and_then(Value::as_str);
    (id.is_none() || id == Some(target.id.as_str())).then_some(web)
}

fn download_headers(client: &crate::clients::ClientDef) -> Vec<Header> {
    vec![
        Header::new("User-Agent", client.user_agent()),
        Header::new("Referer", "https://www.youtube.com/"),
        Header::new("Origin", "https://www.youtube.com"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn player(v: Value) -> Player {
        serde_json::from_str(&v.to_string()).unwrap_or_default()
    }

    #[test]
    fn lenient_numbers() {
        assert_eq!(ids::whole(&json!("721")), Some(721));
        assert_eq!(ids::whole(&json!(1500751)), Some(1500751));
        assert_eq!(ids::whole(&json!(2.5)), Some(2));
        assert_eq!(ids::whole(&json!("x")), None);
        assert_eq!(ids::whole(&json!(-1)), None);
    }

    #[test]
    fn classifies_reasons() {
        let status = |s: &str, r: &str| {
            judge_player(
                player(json!({"playabilityStatus": {"status": s, "reason": r}})),
                "M4gD1WSo5mA",
            )
        };
        let code = |v: Verdict| match v {
            Verdict::Usable(_) => "usable".to_string(),
            Verdict::TryNext(f) => format!("next:{}", f.code()),
            Verdict::Final(f) => format!("final:{}", f.code()),
        };
        assert_eq!(
            code(status("LOGIN_REQUIRED", "This video is private")),
            "final:content_unavailable"
        );
        assert_eq!(
            code(status(
                "LOGIN_REQUIRED",
                "Sign in to confirm you\u{2019}re not a bot"
            )),
            "next:upstream_rate_limited"
        );
        assert_eq!(
            code(status("LOGIN_REQUIRED", "Sign in to confirm your age")),
            "final:login_required"
        );
        assert_eq!(
            code(status(
                "UNPLAYABLE",
                "This video may be inappropriate for some users."
            )),
            "final:login_required"
        );
        assert_eq!(
            code(status("UNPLAYABLE", "This video is not available")),
            "next:content_unavailable"
        );
        assert_eq!(
            code(status(
                "UNPLAYABLE",
                "The uploader has not made this video available in your country"
            )),
            "final:content_unavailable"
        );
        assert_eq!(
            code(status(
                "UNPLAYABLE",
                "Playback on other websites has been disabled. You have exceeded your request limit."
            )),
            "next:upstream_rate_limited"
        );
        assert_eq!(
            code(status("ERROR", "Video unavailable")),
            "final:content_unavailable"
        );
        assert_eq!(
            code(judge_player(player(json!({})), "M4gD1WSo5mA")),
            "final:content_unavailable"
        );
    }

    #[test]
    fn drops_unusable_formats() {
        let p = player(json!({
            "playabilityStatus": {"status": "OK"},
            "videoDetails": {"videoId": "M4gD1WSo5mA", "lengthSeconds": "100"},
            "streamingData": {"adaptiveFormats": [
                {"url": "https://a/1", "mimeType": "video/mp4", "approxDurationMs": "100000"},
                {"url": "https://a/2", "mimeType": "video/mp4", "drmFamilies": ["WIDEVINE"]},
                {"url": "https://a/3", "mimeType": "video/mp4", "type": "FORMAT_STREAM_TYPE_OTF"},
                {"url": "https://a/4", "mimeType": "video/mp4", "approxDurationMs": "20000"},
                {"mimeType": "audio/mp4"},
                {"url": "https://a/6", "mimeType": "audio/mp4", "bitrate": "130762"}
            ]}
        }));
        let (v, a) = media_items(&p, &[]);
        assert_eq!(
            v.iter().map(|x| x.url.as_str()).collect::<Vec<_>>(),
            ["https://a/1"]
        );
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].bitrate, 130762);
        assert_eq!(a[0].quality, "130k");
    }

    #[test]
    fn drm_only_is_unavailable() {
        let p = player(json!({
            "playabilityStatus": {"status": "OK"},
            "streamingData": {"adaptiveFormats": [
                {"url": "https://a/2", "mimeType": "video/mp4", "drmFamilies": ["WIDEVINE"]}
            ]}
        }));
        assert!(matches!(
            judge_player(p, "x"),
            Verdict::Final(Failure::Unavailable(_))
        ));
    }
}
