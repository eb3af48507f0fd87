//! Recognising YouTube video URLs (guide section 1) with plain string work.

use crate::PLATFORM;
use mediaparse_sdk::share::first_url;
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Failure, Target};

/// Hosts of the main site that serve `/watch`, `/shorts/`, `/live/`, ...
const SITE_HOSTS: [&str; 3] = ["youtube.com", "www.youtube.com", "m.youtube.com"];
const MUSIC_HOST: &str = "music.youtube.com";
const SHORT_HOSTS: [&str; 2] = ["youtu.be", "www.youtu.be"];
const NOCOOKIE_HOSTS: [&str; 2] = ["youtube-nocookie.com", "www.youtube-nocookie.com"];

/// Eleven-character names that are not videos: `/embed/videoseries?list=`
/// and `/embed/live_stream?channel=` have the shape of an id.
const NOT_IDS: [&str; 2] = ["videoseries", "live_stream"];

/// Recognise a caller's input: one video.
pub fn detect(input: &str) -> Result<Target, Failure> {
    let id = video_id(input)?;
    Ok(Target::new(
        PLATFORM,
        &id,
        format!("https://www.youtube.com/watch?v={id}"),
        input,
    ))
}

/// A video id is exactly 11 characters of `[A-Za-z0-9_-]`.
pub fn is_video_id(s: &str) -> bool {
    s.len() == 11
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !NOT_IDS.contains(&s)
}

/// The video id in the caller's input, or `unsupported-url`.
pub fn video_id(input: &str) -> Result<String, Failure> {
    // A pasted sentence around the link is tolerated; a bare URL (with or
    // without scheme) is taken as it is.
    let raw = first_url(input).unwrap_or_else(|| input.trim().to_string());
    // yt-dlp's tests contain `&amp;amp;v=`: HTML-escaped query separators.
    let mut raw = raw;
    while raw.contains("&amp;") {
        raw = raw.replace("&amp;", "&");
    }
    let url = InputUrl::parse(&raw)?;
    match id_in(&url)? {
        Some(id) => Ok(id),
        None => {
            // `watch%3Fv%3D...`: a wholly percent-encoded path and query.
            if raw.contains('%') {
                let decoded = percent_decode(&raw);
                if decoded != raw
                    && let Ok(url) = InputUrl::parse(&decoded)
                    && let Some(id) = id_in(&url)?
                {
                    return Ok(id);
                }
            }
            Err(Failure::unsupported(
                "not a single YouTube video (watch, shorts, live, youtu.be, embed)",
            ))
        }
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// `Ok(None)`: a YouTube URL, but not one video. `Err`: not YouTube at all.
fn id_in(url: &InputUrl) -> Result<Option<String>, Failure> {
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    let host = url.host.as_str();
    let checked = |id: &str| is_video_id(id).then(|| id.to_string());

    if SHORT_HOSTS.contains(&host) {
        // youtu.be tolerates junk after the first segment; read only that.
        return Ok(segs.first().and_then(|id| checked(id)));
    }
    if NOCOOKIE_HOSTS.contains(&host) {
        return Ok(match segs.as_slice() {
            ["embed", id, ..] => checked(id),
            _ => None,
        });
    }
    let is_music = host == MUSIC_HOST;
    if !is_music && !SITE_HOSTS.contains(&host) {
        return Err(Failure::unsupported(format!(
            "{host} is not a YouTube host"
        )));
    }
    let from_query = || url.query("v").and_then(|v| checked(&v));
    Ok(match segs.as_slice() {
        ["watch"] | ["watch_popup"] => from_query(),
        _ if is_music => None,
        ["shorts", id, ..] | ["live", id, ..] | ["embed", id, ..] | ["v", id, ..] => checked(id),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_eleven_url_safe_characters() {
        assert!(is_video_id("M4gD1WSo5mA"));
        assert!(is_video_id("_PL2HJKxnOM"));
        assert!(is_video_id("don-t-exist"));
        assert!(!is_video_id("M4gD1WSo5m"));
        assert!(!is_video_id("M4gD1WSo5mAA"));
        assert!(!is_video_id("M4gD1WSo5m!"));
        assert!(!is_video_id("videoseries"));
    }

    #[test]
    fn percent_decoding_is_bytewise() {
        assert_eq!(percent_decode("a%3Fv%3Db%zz%4"), "a?v=b%zz%4");
    }
}
