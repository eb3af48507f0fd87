//! Proof-of-origin (PO) tokens from the operator's provider, in the protocol
//! of the common open-source provider's HTTP server
//! (bgutil-ytdlp-pot-provider): `POST <provider>/get_pot` with the JSON body
//! `{"content_binding": …}`, answered by `{"poToken": "…", …}` (older
//! releases: `po_token`). The request goes through the host's normal fetch;
//! the operator lists the provider's host in `[platforms.youtube]
//! helper_hosts` so the host lets the extractor reach it.
//!
//! A client marked `po_token` sends the token as
//! `serviceIntegrityDimensions.poToken` in its `player` call and adds it as
//! `&pot=` to every media URL it hands out. Without a provider such clients
//! are skipped, and the failure says so when no other client worked.

use mediaparse_sdk::exchanges::checked;
use mediaparse_sdk::{Context, Failure, HttpRequest, HttpResponse, Result};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

/// The setting naming the provider's base URL (`http://host:port`).
pub const SETTING: &str = "po_token_provider";

/// Why PO-token clients were not asked, appended to the final failure.
pub const SKIPPED: &str = "no po_token_provider configured";

const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The configured provider's base URL, checked strictly.
pub fn provider(ctx: &Context) -> Result<Option<String>> {
    let Some(raw) = ctx.config(SETTING).map(str::trim) else {
        return Ok(None);
    };
    let bad = || {
        Failure::upstream(format!(
            "YouTube setting `{SETTING}`: expected http://host[:port][/path] or https://…"
        ))
    };
    let rest = raw
        .strip_prefix("http://")
        .or_else(|| raw.strip_prefix("https://"))
        .ok_or_else(bad)?;
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty()
        || rest.contains(['?', '#', ' ', '@'])
        || !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
    {
        return Err(bad());
    }
    Ok(Some(raw.trim_end_matches('/').to_string()))
}

/// What the token is bound to: the operator's visitor data when set (what
/// a logged-out browser's token is bound to), else the video id.
pub fn content_binding(ctx: &Context, video_id: &str) -> String {
    ctx.config("visitor_data")
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| video_id.to_string())
}

/// The provider request for one content binding.
pub fn request(provider: &str, binding: &str) -> HttpRequest {
    HttpRequest::post(
        format!("{provider}/get_pot"),
        json!({"content_binding": binding}).to_string(),
    )
    .header("Content-Type", "application/json")
    .header("Accept", "application/json")
}

/// The token from the provider's answer.
pub fn token(response: &HttpResponse) -> Result<String> {
    let response = checked(response, "the PO token provider")?;
    let body: Value = response
        .json()
        .map_err(|_| Failure::upstream("the PO token provider answered no JSON"))?;
    let token = body
        .get("poToken")
        .or_else(|| body.get("po_token"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| Failure::upstream("the PO token provider answered no poToken"))?;
    // Tokens are base64url; anything else would corrupt a URL or a body.
    if !token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'=' | b'+' | b'/'))
    {
        return Err(Failure::upstream(
            "the PO token provider answered a token that is not base64",
        ));
    }
    Ok(token.to_string())
}

/// Adds `&pot=<token>` to every format URL of `streaming_data`.
pub fn add_to_urls(streaming_data: &mut Value, token: &str) {
    let value = utf8_percent_encode(token, QUERY_VALUE).to_string();
    for member in ["formats", "adaptiveFormats"] {
        let Some(list) = streaming_data.get_mut(member).and_then(Value::as_array_mut) else {
            continue;
        };
        for url in list
            .iter_mut()
            .filter_map(|f| f.get_mut("url"))
            .filter(|u| u.is_string())
        {
            let old = url.as_str().unwrap_or_default();
            let sep = if old.contains('?') { '&' } else { '?' };
            *url = Value::String(format!("{old}{sep}pot={value}"));
        }
    }
}

/// `failure` with the skipped clients named (same kind, longer message).
pub fn with_skipped(failure: Failure, skipped: &[String]) -> Failure {
    let note = format!(
        "; clients needing a PO token were skipped ({}): {SKIPPED}",
        skipped.join(", ")
    );
    match failure {
        Failure::UnsupportedUrl(m) => Failure::UnsupportedUrl(m + &note),
        Failure::Unavailable(m) => Failure::Unavailable(m + &note),
        Failure::LoginRequired(m) => Failure::LoginRequired(m + &note),
        Failure::RateLimited(m) => Failure::RateLimited(m + &note),
        Failure::UpstreamChanged(m) => Failure::UpstreamChanged(m + &note),
        Failure::UpstreamError(m) => Failure::UpstreamError(m + &note),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::testing::exchange;

    use mediaparse_sdk::testing::context as ctx;

    #[test]
    fn provider_setting_is_checked() {
        assert_eq!(provider(&ctx(&[])).ok(), Some(None));
        assert_eq!(
            provider(&ctx(&[(SETTING, "http://127.0.0.1:4416/")])).ok(),
            Some(Some("http://127.0.0.1:4416".into()))
        );
        for bad in [
            "127.0.0.1:4416",
            "ftp://x",
            "http://",
            "http://a b",
            "http://u@h",
        ] {
            assert!(provider(&ctx(&[(SETTING, bad)])).is_err(), "{bad}");
        }
    }

    #[test]
    fn tokens_are_read_in_both_spellings_and_checked() {
        let req = request("http://127.0.0.1:4416", "vid");
        assert_eq!(req.url, "http://127.0.0.1:4416/get_pot");
        let answer = |body: &str| exchange(req.clone(), 200, body).response;
        assert_eq!(
            token(&answer(r#"{"poToken":"MnE-_x=="}"#)).ok().as_deref(),
            Some("MnE-_x==")
        );
        assert_eq!(
            token(&answer(r#"{"po_token":"abc"}"#)).ok().as_deref(),
            Some("abc")
        );
        assert!(token(&answer(r#"{"poToken":""}"#)).is_err());
        assert!(token(&answer(r#"{"poToken":"a&b"}"#)).is_err());
        assert!(token(&answer("<html>")).is_err());
    }

    #[test]
    fn urls_get_the_token() {
        let mut data = json!({"adaptiveFormats": [{"url": "https://r.googlevideo.com/videoplayback?a=1"}, {"signatureCipher": "s=x"}]});
        add_to_urls(&mut data, "a/b+");
        assert_eq!(
            data["adaptiveFormats"][0]["url"],
            "https://r.googlevideo.com/videoplayback?a=1&pot=a%2Fb%2B"
        );
        assert!(data["adaptiveFormats"][1].get("url").is_none());
    }
}
