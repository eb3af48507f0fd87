//! What the WEB client needs besides its `player` call: which player script
//! is current (from the video's embed page, which also names the script's
//! signature timestamp `STS`) and the script itself.

use mediaparse_sdk::{HttpRequest, Result};

use crate::innertube::{WEB_HOST, WEB_USER_AGENT};

pub const EMBED_URL: &str = "https://www.youtube.com/embed/";

/// The current player as the embed page names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerRef {
    /// `/s/player/<id>/…/base.js`: the id keys what is remembered.
    pub id: String,
    /// Path of the script on www.youtube.com.
    pub path: String,
    /// `signatureTimestamp` to send with the `player` call.
    pub sts: u32,
}

pub fn embed_page(video_id: &str) -> HttpRequest {
    HttpRequest::get(format!("{EMBED_URL}{video_id}"))
        .header("User-Agent", WEB_USER_AGENT)
        .header("Accept-Language", "en-US,en;q=0.9")
        .header("Cookie", "SOCS=CAE=")
}

/// The player script (`/s/player/<id>/player_ias.vflset/<lang>/base.js`).
pub fn script(player: &PlayerRef) -> HttpRequest {
    HttpRequest::get(format!("https://{WEB_HOST}{}", player.path))
        .header("User-Agent", WEB_USER_AGENT)
}

/// Reads `"jsUrl":"/s/player/…/base.js"` and `"STS":12345` from an embed page.
pub fn player_ref(html: &str) -> Result<PlayerRef> {
    let missing =
        |what: &str| mediaparse_sdk::Failure::changed(format!("the embed page names no {what}"));
    let path =
        quoted_after(html, "\"jsUrl\":\"").ok_or_else(|| missing("player script (jsUrl)"))?;
    let id = path
        .strip_prefix("/s/player/")
        .and_then(|rest| rest.split('/').next())
        .filter(|id| {
            !id.is_empty()
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
        .ok_or_else(|| missing("player id in jsUrl"))?;
    let sts = number_after(html, "\"STS\":").ok_or_else(|| missing("signature timestamp (STS)"))?;
    Ok(PlayerRef {
        id: id.to_string(),
        path: path.replace("\\/", "/"),
        sts,
    })
}

fn quoted_after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let start = text.find(marker)? + marker.len();
    let len = text[start..].find('"')?;
    Some(&text[start..start + len])
}

fn number_after(text: &str, marker: &str) -> Option<u32> {
    let start = text.find(marker)? + marker.len();
    let digits: String = text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_player_and_timestamp() {
        let html = r#"<script>ytcfg.set({"STS":20131,"PLAYER_JS_URL":"x","WEB_PLAYER_CONTEXT_CONFIGS":{"A":{"jsUrl":"\/s\/player\/e7567ecf\/player_ias.vflset\/en_GB\/base.js"}}})"#;
        let html = html.replace("\\/", "/");
        let p = player_ref(&html).unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(p.id, "e7567ecf");
        assert_eq!(p.sts, 20131);
        assert_eq!(p.path, "/s/player/e7567ecf/player_ias.vflset/en_GB/base.js");
        assert!(player_ref("<html></html>").is_err());
    }
}
