//! The upstream requests (guide section 3): guest-token activation,
//! `TweetResultByRestId` (guest or with the operator's session cookie),
//! the syndication fallback and, after it, `TweetDetail` as a guest.

use mediaparse_sdk::encode::strict as encode;
use mediaparse_sdk::{Context, HttpRequest, ua};
use serde_json::{Map, Value, json};

use crate::token::syndication_token;

pub const API_HOST: &str = "api.x.com";
pub const SYNDICATION_HOST: &str = "cdn.syndication.twimg.com";

pub const ACTIVATE_URL: &str = "https://api.x.com/1.1/guest/activate.json";
pub const GRAPHQL_BASE: &str = "https://api.x.com/graphql/";
pub const SYNDICATION_URL: &str = "https://cdn.syndication.twimg.com/tweet-result";

/// The public bearer of X's own web app (not a secret; every project uses it).
pub const BEARER: &str = "AAAAAAAAAAAAAAAAAAAAANRILgAAAAAAnNwIzUejRCOuH5E6I8xnZz4puTs%3D1Zv7ttfk8LF81IUq16cHjhLTvJu4FA33AGWWjCpTnA";
/// `TweetResultByRestId` query id (FxEmbed's, 2026-08). Rotates: operator
/// setting `query_id` overrides it, `features` / `field_toggles` the flags.
pub const QUERY_ID: &str = "f2sagi1jweVHFkTUIHzmMQ";
/// How long the host may reuse one guest token (other projects: 1–3 h).
pub const GUEST_TOKEN_TTL: u32 = 3600;

/// The feature flags FxEmbed sends with [`QUERY_ID`] (X answers 400 when
/// one it expects is missing).
const FEATURES: &[(&str, bool)] = &[
    ("rweb_video_screen_enabled", false),
    ("profile_label_improvements_pcf_label_in_post_enabled", true),
    ("responsive_web_profile_redirect_enabled", false),
    ("rweb_tipjar_consumption_enabled", false),
    ("verified_phone_label_enabled", false),
    ("creator_subscriptions_tweet_preview_api_enabled", true),
    ("responsive_web_graphql_timeline_navigation_enabled", true),
    (
        "responsive_web_graphql_skip_user_profile_image_extensions_enabled",
        false,
    ),
    ("premium_content_api_read_enabled", false),
    ("communities_web_enable_tweet_community_results_fetch", true),
    ("c9s_tweet_anatomy_moderator_badge_enabled", true),
    (
        "responsive_web_grok_analyze_button_fetch_trends_enabled",
        false,
    ),
    ("responsive_web_grok_analyze_post_followups_enabled", true),
    ("responsive_web_jetfuel_frame", true),
    ("responsive_web_grok_share_attachment_enabled", true),
    ("responsive_web_grok_annotations_enabled", true),
    ("articles_preview_enabled", true),
    ("responsive_web_edit_tweet_api_enabled", true),
    (
        "graphql_is_translatable_rweb_tweet_is_translatable_enabled",
        true,
    ),
    ("view_counts_everywhere_api_enabled", true),
    ("longform_notetweets_consumption_enabled", true),
    (
        "responsive_web_twitter_article_tweet_consumption_enabled",
        true,
    ),
    ("content_disclosure_indicator_enabled", true),
    ("content_disclosure_ai_generated_indicator_enabled", true),
    ("responsive_web_grok_show_grok_translated_post", true),
    ("responsive_web_grok_analysis_button_from_backend", true),
    ("post_ctas_fetch_enabled", true),
    ("freedom_of_speech_not_reach_fetch_enabled", true),
    ("standardized_nudges_misinfo", true),
    (
        "tweet_with_visibility_results_prefer_gql_limited_actions_policy_enabled",
        true,
    ),
    ("longform_notetweets_rich_text_read_enabled", true),
    ("longform_notetweets_inline_media_enabled", true),
    ("responsive_web_grok_image_annotation_enabled", true),
    ("responsive_web_grok_imagine_annotation_enabled", true),
    (
        "responsive_web_grok_community_note_auto_translation_is_enabled",
        true,
    ),
    ("responsive_web_enhance_cards_enabled", false),
    ("tweet_awards_web_tipping_enabled", false),
];

/// `TweetDetail` query id (cobalt's guest fallback, 2025-09 to 2026-04).
/// Rotates: operator setting `detail_query_id` overrides it.
pub const DETAIL_QUERY_ID: &str = "4Siu98E55GquhG52zHdY5w";

/// The feature flags cobalt sends with [`DETAIL_QUERY_ID`].
const DETAIL_FEATURES: &[(&str, bool)] = &[
    ("rweb_video_screen_enabled", false),
    ("payments_enabled", false),
    ("rweb_xchat_enabled", false),
    ("profile_label_improvements_pcf_label_in_post_enabled", true),
    ("rweb_tipjar_consumption_enabled", true),
    ("verified_phone_label_enabled", false),
    ("creator_subscriptions_tweet_preview_api_enabled", true),
    ("responsive_web_graphql_timeline_navigation_enabled", true),
    (
        "responsive_web_graphql_skip_user_profile_image_extensions_enabled",
        false,
    ),
    ("premium_content_api_read_enabled", false),
    ("communities_web_enable_tweet_community_results_fetch", true),
    ("c9s_tweet_anatomy_moderator_badge_enabled", true),
    (
        "responsive_web_grok_analyze_button_fetch_trends_enabled",
        false,
    ),
    ("responsive_web_grok_analyze_post_followups_enabled", true),
    ("responsive_web_jetfuel_frame", true),
    ("responsive_web_grok_share_attachment_enabled", true),
    ("articles_preview_enabled", true),
    ("responsive_web_edit_tweet_api_enabled", true),
    (
        "graphql_is_translatable_rweb_tweet_is_translatable_enabled",
        true,
    ),
    ("view_counts_everywhere_api_enabled", true),
    ("longform_notetweets_consumption_enabled", true),
    (
        "responsive_web_twitter_article_tweet_consumption_enabled",
        true,
    ),
    ("tweet_awards_web_tipping_enabled", false),
    ("responsive_web_grok_show_grok_translated_post", false),
    ("responsive_web_grok_analysis_button_from_backend", true),
    ("creator_subscriptions_quote_tweet_preview_enabled", false),
    ("freedom_of_speech_not_reach_fetch_enabled", true),
    ("standardized_nudges_misinfo", true),
    (
        "tweet_with_visibility_results_prefer_gql_limited_actions_policy_enabled",
        true,
    ),
    ("longform_notetweets_rich_text_read_enabled", true),
    ("longform_notetweets_inline_media_enabled", true),
    ("responsive_web_grok_image_annotation_enabled", true),
    ("responsive_web_grok_imagine_annotation_enabled", true),
    (
        "responsive_web_grok_community_note_auto_translation_is_enabled",
        false,
    ),
    ("responsive_web_enhance_cards_enabled", false),
];

const FIELD_TOGGLES: &str = r#"{"withArticleRichContentState":true,"withArticlePlainText":false,"withGrokAnalyze":false,"withDisallowedReplyControls":false}"#;

fn bearer(ctx: &Context) -> String {
    format!("Bearer {}", ctx.config("bearer").unwrap_or(BEARER).trim())
}

/// A JSON object from operator config, compacted; the default otherwise.
fn config_json(ctx: &Context, name: &str, default: String) -> String {
    ctx.config(name)
        .and_then(|v| serde_json::from_str::<Map<String, Value>>(v).ok())
        .map(|m| Value::Object(m).to_string())
        .unwrap_or(default)
}

fn default_features() -> String {
    features_json(FEATURES)
}

fn features_json(flags: &[(&str, bool)]) -> String {
    let map: Map<String, Value> = flags
        .iter()
        .map(|(k, v)| ((*k).to_string(), Value::Bool(*v)))
        .collect();
    Value::Object(map).to_string()
}

/// Round 1: activate a guest token. Cached by the host for an hour; a
/// retry after X refused the token asks with `fresh` (no cache).
pub fn activate(ctx: &Context, fresh: bool) -> HttpRequest {
    HttpRequest::post(ACTIVATE_URL, Vec::new())
        .header("Authorization", bearer(ctx))
        .header("User-Agent", ua::CHROME_139_WINDOWS)
        .cache_for(if fresh { 0 } else { GUEST_TOKEN_TTL })
}

/// The `TweetResultByRestId` URL for a post (the same for guest and session).
pub fn graphql_url(id: &str, ctx: &Context) -> String {
    let query_id = ctx.config("query_id").unwrap_or(QUERY_ID).trim();
    let variables = json!({
        "tweetId": id,
        "withCommunity": false,
        "includePromotedContent": false,
        "withVoice": false
    })
    .to_string();
    let features = config_json(ctx, "features", default_features());
    let toggles = config_json(ctx, "field_toggles", FIELD_TOGGLES.to_string());
    format!(
        "{GRAPHQL_BASE}{query_id}/TweetResultByRestId?variables={}&features={}&fieldToggles={}",
        encode(&variables),
        encode(&features),
        encode(&toggles)
    )
}

/// The `TweetDetail` URL for a post: the conversation around it, the post
/// itself as the entry `tweet-{id}`.
pub fn tweet_detail_url(id: &str, ctx: &Context) -> String {
    let query_id = ctx
        .config("detail_query_id")
        .unwrap_or(DETAIL_QUERY_ID)
        .trim();
    let variables = json!({
        "focalTweetId": id,
        "with_rux_injections": false,
        "rankingMode": "Relevance",
        "includePromotedContent": true,
        "withCommunity": true,
        "withQuickPromoteEligibilityTweetFields": true,
        "withBirdwatchNotes": true,
        "withVoice": true
    })
    .to_string();
    format!(
        "{GRAPHQL_BASE}{query_id}/TweetDetail?variables={}&features={}&fieldToggles={}",
        encode(&variables),
        encode(&features_json(DETAIL_FEATURES)),
        encode(FIELD_TOGGLES)
    )
}

fn graphql_common(id: &str, ctx: &Context) -> HttpRequest {
    graphql_headers(HttpRequest::get(graphql_url(id, ctx)), ctx)
}

fn graphql_headers(request: HttpRequest, ctx: &Context) -> HttpRequest {
    request
        .header("Authorization", bearer(ctx))
        .header("User-Agent", ua::CHROME_139_WINDOWS)
        .header("Content-Type", "application/json")
        .header("x-twitter-active-user", "yes")
        .header("x-twitter-client-language", "en")
        .header("Origin", "https://x.com")
        .header("Referer", "https://x.com/")
}

/// A 32-hex-digit `ct0` derived from the guest token (FxEmbed sends a
/// random one with the same value in `x-csrf-token`; extractors derive).
pub fn guest_ct0(guest_token: &str) -> String {
    let mut out = String::with_capacity(32);
    for salt in [0x9e37_79b9_7f4a_7c15u64, 0xc2b2_ae3d_27d4_eb4f] {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ salt;
        for b in guest_token.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
    }
    out
}

/// Round 2: the post as a guest.
pub fn graphql_guest(id: &str, guest_token: &str, ctx: &Context) -> HttpRequest {
    with_guest_token(graphql_common(id, ctx), guest_token)
}

/// The last fallback: the post's conversation as a guest.
pub fn tweet_detail_guest(id: &str, guest_token: &str, ctx: &Context) -> HttpRequest {
    let request = graphql_headers(HttpRequest::get(tweet_detail_url(id, ctx)), ctx);
    with_guest_token(request, guest_token)
}

fn with_guest_token(request: HttpRequest, guest_token: &str) -> HttpRequest {
    let ct0 = guest_ct0(guest_token);
    let gt = encode(&format!("v1:{guest_token}"));
    request
        .header("x-guest-token", guest_token)
        .header("x-csrf-token", ct0.clone())
        .header(
            "Cookie",
            format!("guest_id={gt}; guest_id_ads={gt}; guest_id_marketing={gt}; ct0={ct0}"),
        )
}

/// The `ct0` value of an operator cookie (`auth_token=...; ct0=...`).
pub fn cookie_ct0(cookie: &str) -> Option<&str> {
    cookie
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| name.trim() == "ct0")
        .map(|(_, value)| value.trim())
        .filter(|v| !v.is_empty())
}

/// The post with the operator's logged-in session (sensitive media only).
pub fn graphql_session(id: &str, cookie: &str, ct0: &str, ctx: &Context) -> HttpRequest {
    graphql_common(id, ctx)
        .header("x-twitter-auth-type", "OAuth2Session")
        .header("x-csrf-token", ct0)
        .header("Cookie", cookie.trim())
}

/// Strategy B: the syndication endpoint, no auth.
pub fn syndication(id: &str) -> HttpRequest {
    HttpRequest::get(format!(
        "{SYNDICATION_URL}?id={id}&token={}",
        syndication_token(id)
    ))
    .header("User-Agent", "Googlebot")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::Header;

    #[test]
    fn url_carries_encoded_json_and_config_overrides() {
        let url = graphql_url("20", &Context::default());
        assert!(url.starts_with(
            "https://api.x.com/graphql/f2sagi1jweVHFkTUIHzmMQ/TweetResultByRestId?variables=%7B%22tweetId%22%3A%2220%22"
        ));
        assert!(url.contains("&features=%7B%22rweb_video_screen_enabled%22%3Afalse"));
        let ctx = Context {
            now_unix_ms: 0,
            config: vec![
                Header::new("query_id", "0aTrQMKgj95K791yXeNDRA"),
                Header::new("features", "{\"a_flag\": true}"),
                Header::new("field_toggles", "not json"),
            ],
            remembered: Vec::new(),
        };
        let url = graphql_url("20", &ctx);
        assert!(url.contains("/0aTrQMKgj95K791yXeNDRA/"));
        assert!(url.contains("&features=%7B%22a_flag%22%3Atrue%7D&"));
        assert!(url.contains("&fieldToggles=%7B%22withArticleRichContentState%22"));
    }

    #[test]
    fn tweet_detail_url_names_the_focal_post_and_takes_an_override() {
        let url = tweet_detail_url("20", &Context::default());
        assert!(url.starts_with(
            "https://api.x.com/graphql/4Siu98E55GquhG52zHdY5w/TweetDetail?variables=%7B%22focalTweetId%22%3A%2220%22%2C%22with_rux_injections%22%3Afalse"
        ));
        assert!(url.contains("%22payments_enabled%22%3Afalse"));
        let ctx = Context {
            now_unix_ms: 0,
            config: vec![Header::new("detail_query_id", "559hs_YZNV4IgA3Z6zIIuw")],
            remembered: Vec::new(),
        };
        assert!(tweet_detail_url("20", &ctx).contains("/559hs_YZNV4IgA3Z6zIIuw/TweetDetail?"));
        let request = tweet_detail_guest("20", "111", &Context::default());
        assert_eq!(request.header_value("x-guest-token"), Some("111"));
        assert!(
            request
                .header_value("Cookie")
                .unwrap_or_default()
                .starts_with("guest_id=v1%3A111;")
        );
    }

    #[test]
    fn ct0_values() {
        let a = guest_ct0("1234567890");
        assert_eq!(a.len(), 32);
        assert_eq!(a, guest_ct0("1234567890"));
        assert_ne!(a, guest_ct0("1234567891"));
        assert_eq!(cookie_ct0("auth_token=abc; ct0=def0"), Some("def0"));
        assert_eq!(cookie_ct0("auth_token=abc"), None);
    }

    #[test]
    fn activation_is_cached_unless_fresh() {
        let ctx = Context::default();
        assert_eq!(activate(&ctx, false).cache_ttl_seconds, GUEST_TOKEN_TTL);
        assert_eq!(activate(&ctx, true).cache_ttl_seconds, 0);
        assert_eq!(activate(&ctx, false).method, "POST");
    }
}
