//! Upstream requests and how their answers are judged.

use std::borrow::Cow;

use mediaparse_sdk::fields::{self, Object, RawValue};
use mediaparse_sdk::html;
use mediaparse_sdk::serde_json::{self, Map, Value};
use mediaparse_sdk::{Context, Exchange, Failure, HttpRequest};
use serde::Deserialize;

use crate::map::Dash;
use crate::{fingerprint, wbi};

pub const VIEW: &str = "https://api.bilibili.com/x/web-interface/view?";
pub const NAV: &str = "https://api.bilibili.com/x/web-interface/nav";
pub const WBI_PLAYURL: &str = "https://api.bilibili.com/x/player/wbi/playurl?";
pub const LEGACY_PLAYURL: &str = "https://api.bilibili.com/x/player/playurl?";
pub const VIDEO_PAGE: &str = "https://www.bilibili.com/video/";
pub const PGC_SECTION: &str = "https://api.bilibili.com/pgc/web/season/section?";
pub const PGC_SEASON: &str = "https://api.bilibili.com/pgc/view/web/season?";
pub const PGC_PLAYURL_V2: &str = "https://api.bilibili.com/pgc/player/web/v2/playurl?";
pub const PGC_PLAYURL_OLD: &str = "https://api.bilibili.com/pgc/player/web/playurl?";
pub const PUGV_SEASON: &str = "https://api.bilibili.com/pugv/view/web/season?";
pub const PUGV_PLAYURL: &str = "https://api.bilibili.com/pugv/player/web/playurl?";

/// A desktop browser; the API and the stream CDNs want a non-empty UA.
pub const USER_AGENT: &str = mediaparse_sdk::ua::CHROME_131_WINDOWS;
pub const REFERER: &str = "https://www.bilibili.com/";
pub const ORIGIN: &str = "https://www.bilibili.com";
/// cobalt fetches the video page with this UA (fewer risk-control pages).
pub const PAGE_USER_AGENT: &str =
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)";

/// How long the host may reuse a `nav` answer (the WBI keys rotate about daily).
pub const NAV_CACHE_SECONDS: u32 = 1800;

/// `fnval` asking for every DASH option (HDR, 4K, Dolby, 8K, AV1).
pub const FNVAL_DASH: &str = "4048";

const WEB_LOCATION: &str = "1315873";

/// An API request with the headers every Bilibili API call wants.
pub fn api_get(url: impl Into<String>) -> HttpRequest {
    HttpRequest::get(url)
        .header("User-Agent", USER_AGENT)
        .header("Referer", REFERER)
        .header("Origin", ORIGIN)
}

/// Attach the operator's optional session cookie (qualities above the guest limit).
pub fn with_operator_cookie(request: HttpRequest, ctx: &Context) -> HttpRequest {
    match ctx.config("cookie") {
        Some(cookie) => request.header("Cookie", cookie.trim()),
        None => request,
    }
}

pub fn view_request(bvid: &str) -> HttpRequest {
    api_get(format!("{VIEW}bvid={bvid}"))
}

pub fn nav_request(cache_seconds: u32) -> HttpRequest {
    api_get(NAV).cache_for(cache_seconds)
}

/// The WBI-signed playurl request of the primary strategy.
pub fn wbi_playurl_request(bvid: &str, cid: &str, keys: &wbi::Keys, ctx: &Context) -> HttpRequest {
    let mut params: Vec<(&str, String)> = vec![
        ("bvid", bvid.into()),
        ("cid", cid.into()),
        ("fnval", FNVAL_DASH.into()),
        ("fnver", "0".into()),
        ("fourk", "1".into()),
        ("otype", "json".into()),
        ("web_location", WEB_LOCATION.into()),
    ];
    params.extend(fingerprint::dm_params(bvid, cid, ctx.now_unix_ms));
    if ctx.config("cookie").is_none() {
        // Guests get 720P/1080P with it (yt-dlp #10554).
        params.push(("try_look", "1".into()));
    }
    let query = wbi::signed_query(&params, keys, ctx.now_unix_ms / 1000);
    with_operator_cookie(api_get(format!("{WBI_PLAYURL}{query}")), ctx)
}

/// Fallback a: the video page, for `window.__playinfo__`.
pub fn page_request(bvid: &str, page: u32, ctx: &Context) -> HttpRequest {
    let request = HttpRequest::get(format!("{VIDEO_PAGE}{bvid}/?p={page}"))
        .header("User-Agent", PAGE_USER_AGENT)
        .header("Referer", REFERER);
    with_operator_cookie(request, ctx)
}

/// Fallback b: the legacy unsigned playurl in its `platform=html5` form, a
/// single H.264 MP4 with the audio muxed in.
pub fn html5_playurl_request(aid: &str, bvid: &str, cid: &str, ctx: &Context) -> HttpRequest {
    with_operator_cookie(
        api_get(format!(
            "{LEGACY_PLAYURL}avid={aid}&bvid={bvid}&cid={cid}&qn=80&fnval=1&fnver=0&fourk=1&platform=html5&high_quality=1&otype=json"
        )),
        ctx,
    )
}

pub fn pgc_section_request(season: u64) -> HttpRequest {
    api_get(format!("{PGC_SECTION}season_id={season}"))
}

pub fn pgc_season_request(ep: u64) -> HttpRequest {
    api_get(format!("{PGC_SEASON}ep_id={ep}"))
}

pub fn pgc_playurl_v2_request(ep: u64, ctx: &Context) -> HttpRequest {
    with_operator_cookie(
        api_get(format!(
            "{PGC_PLAYURL_V2}ep_id={ep}&fnval={FNVAL_DASH}&fnver=0&fourk=1&support_multi_audio=true&from_client=BROWSER"
        )),
        ctx,
    )
}

pub fn pgc_playurl_old_request(ep: u64, cid: Option<&str>, ctx: &Context) -> HttpRequest {
    let cid = cid.map(|c| format!("&cid={c}")).unwrap_or_default();
    with_operator_cookie(
        api_get(format!(
            "{PGC_PLAYURL_OLD}ep_id={ep}{cid}&fnval={FNVAL_DASH}&fnver=0&fourk=1"
        )),
        ctx,
    )
}

pub fn pugv_season_request(by: &str, id: u64) -> HttpRequest {
    api_get(format!("{PUGV_SEASON}{by}={id}"))
}

pub fn pugv_playurl_request(aid: &str, cid: &str, ep: &str, ctx: &Context) -> HttpRequest {
    with_operator_cookie(
        api_get(format!(
            "{PUGV_PLAYURL}avid={aid}&cid={cid}&ep_id={ep}&fnval={FNVAL_DASH}&fnver=0&fourk=1"
        )),
        ctx,
    )
}

/// Every exchange whose URL starts with `prefix`, oldest first.
pub fn answers<'a>(done: &'a [Exchange], prefix: &str) -> Vec<&'a Exchange> {
    done.iter()
        .filter(|e| e.request.url.starts_with(prefix))
        .collect()
}

/// The common `{code, message, data|result}` envelope; `data` and `result`
/// stay JSON text borrowed from the answer, read later as what they are.
#[derive(Debug, Default, Deserialize)]
pub struct Envelope<'a> {
    #[serde(default)]
    pub code: i64,
    #[serde(default)]
    pub message: String,
    #[serde(default, borrow)]
    pub data: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub result: Option<&'a RawValue>,
}

/// A JSON object member's text as its object, `None` for any other value.
pub fn object_of(raw: Option<&RawValue>) -> Option<Map<String, Value>> {
    let raw = raw?;
    if !raw.get().trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// Risk-control codes: wrong or missing WBI / fingerprint, or a rate limit.
pub fn is_risk_code(code: i64) -> bool {
    matches!(code, -352 | -351 | -401 | -412 | -509 | -799)
}

/// Codes that say the post itself cannot be shown.
pub fn unavailable_reason(code: i64) -> Option<&'static str> {
    Some(match code {
        -404 => "the video does not exist or was deleted",
        62002 => "the video is hidden (invisible)",
        62004 => "the video is under review",
        62012 => "the video is visible to its uploader only",
        -400 => "the video id was rejected",
        -403 => "access to the video is forbidden",
        -10403 => "premium-only or region-restricted content",
        87007 | 87008 => "paid (charge-only) content",
        _ => return None,
    })
}

/// A play-URL answer's envelope: `data` and `result` read as their members
/// in the one pass over the answer, `None` when they are no object.
#[derive(Debug, Default, Deserialize)]
pub struct PlayEnvelope<'a> {
    #[serde(default)]
    pub code: i64,
    #[serde(default)]
    pub message: String,
    #[serde(default, borrow, deserialize_with = "fields::object_members")]
    pub data: Option<Object<'a>>,
    #[serde(default, borrow, deserialize_with = "fields::object_members")]
    pub result: Option<Object<'a>>,
}

/// Parse an API answer's envelope (an [`Envelope`] or a
/// [`PlayEnvelope`]), mapping transport-level failures.
pub fn envelope<'a, E: Deserialize<'a>>(
    exchange: &'a Exchange,
    what: &str,
) -> Result<E, Outcome<'a>> {
    let response = &exchange.response;
    if response.status == 412 || response.status == 429 {
        return Err(Outcome::Retry {
            risk: true,
            message: format!("{what}: HTTP {} (risk control)", response.status),
        });
    }
    if !response.is_success() {
        return Err(Outcome::Retry {
            risk: false,
            message: format!("{what}: HTTP {}", response.status),
        });
    }
    serde_json::from_slice::<E>(&response.body).map_err(|e| Outcome::Retry {
        risk: false,
        message: format!("{what}: not the JSON envelope we know ({e})"),
    })
}

/// The verdict on a play-URL answer.
#[derive(Debug)]
pub enum Outcome<'a> {
    /// Streams found: the play-URL object (`data`, or pgc `video_info`).
    Streams(Box<PlayUrl<'a>>),
    /// A final answer about the post (unavailable, login wall).
    Fatal(Failure),
    /// Try the next strategy; `risk` when it was risk control.
    Retry { risk: bool, message: String },
}

/// A play-URL object, its members found in the pass over the answer, and
/// its `dash` read when it is an object.
#[derive(Debug)]
pub struct PlayUrl<'a> {
    pub object: Object<'a>,
    pub dash: Option<serde_json::Result<Dash<'a>>>,
    /// A pgc `result` whose `video_info` was no object: that member is not
    /// part of the play-URL object.
    pub without_video_info: bool,
}

/// The members of a play-URL object (or of the pgc `result` around it) the
/// verdict reads, as their text.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Verdict<'a> {
    #[serde(borrow, deserialize_with = "fields::raw")]
    video_info: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    plugins: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    is_preview: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    play_check: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    play_video_type: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    dash: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    durl: Option<&'a RawValue>,
}

/// `dash.video`, as its text: whether a `dash` that is not the known
/// shape lists video streams.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct DashVideos<'a> {
    #[serde(borrow, deserialize_with = "fields::raw")]
    video: Option<&'a RawValue>,
}

impl<'a> Verdict<'a> {
    /// The verdict's members (none of an object that names one twice).
    fn of(object: &Object<'a>) -> Verdict<'a> {
        object.read("the play-URL object").unwrap_or_default()
    }
}

/// A member's text read as `T` (`None` when it is of another type).
pub fn read<'a, T: Deserialize<'a>>(raw: Option<&'a RawValue>) -> Option<T> {
    serde_json::from_str(raw?.get()).ok()
}

/// Judge a play-URL envelope whose object sits in `data` (ugc, pugv) or in
/// `result` / `result.video_info` (pgc).
pub fn judge_playurl<'a>(env: PlayEnvelope<'a>, what: &str, ctx: &Context) -> Outcome<'a> {
    let code = env.code;
    if code != 0 {
        let message = format!("{what}: code {code} {}", env.message);
        if is_risk_code(code) {
            return Outcome::Retry {
                risk: true,
                message,
            };
        }
        if code == -101 {
            return Outcome::Fatal(if ctx.config("cookie").is_some() {
                Failure::upstream(format!(
                    "{what}: the configured session was rejected (code -101)"
                ))
            } else {
                Failure::LoginRequired(format!("{what}: Bilibili asks for a signed-in session"))
            });
        }
        if let Some(reason) = unavailable_reason(code) {
            return Outcome::Fatal(Failure::unavailable(format!("{reason} ({message})")));
        }
        return Outcome::Retry {
            risk: false,
            message,
        };
    }
    let (outer, object, without_video_info) = match (env.data, env.result) {
        (Some(data), _) => (None, data, false),
        (_, Some(result)) => match Verdict::of(&result).video_info {
            Some(info) => match Object::of(info) {
                Some(info) => (Some(result), info, false),
                None => (None, result, true),
            },
            None => (None, result, false),
        },
        _ => {
            return Outcome::Retry {
                risk: false,
                message: format!("{what}: no data object"),
            };
        }
    };
    let mut verdict = Verdict::of(&object);
    // The DASH streams are read once, here; whether a `dash` of another
    // shape lists video streams, from its text. A `dash` naming `video`
    // twice makes the object unknown, as a whole.
    let dash = verdict
        .dash
        .filter(|d| fields::kind_of(d) == b'{')
        .map(|d| serde_json::from_str::<Dash>(d.get()));
    let dash_video = match (&dash, verdict.dash) {
        (Some(Ok(dash)), _) => dash.has_video(),
        (Some(Err(_)), Some(text)) => match serde_json::from_str::<DashVideos>(text.get()) {
            Ok(videos) => non_empty_list(videos.video),
            Err(_) => {
                verdict = Verdict::default();
                false
            }
        },
        _ => false,
    };
    if let Some(outer) = outer
        && let Some(reason) = restriction(&Verdict::of(&outer))
    {
        return Outcome::Fatal(Failure::unavailable(format!("{what}: {reason}")));
    }
    if let Some(reason) = restriction(&verdict) {
        return Outcome::Fatal(Failure::unavailable(format!("{what}: {reason}")));
    }
    if dash_video || non_empty_list(verdict.durl) {
        Outcome::Streams(Box::new(PlayUrl {
            object,
            dash,
            without_video_info,
        }))
    } else {
        Outcome::Retry {
            risk: false,
            message: format!("{what}: neither DASH streams nor durl in the answer"),
        }
    }
}

/// Region blocks and preview-only answers (paid content).
fn restriction(level: &Verdict) -> Option<&'static str> {
    let plugins: Option<Vec<Value>> = read(level.plugins);
    let blocked = plugins.into_iter().flatten().any(|p| {
        p.get("name").and_then(Value::as_str) == Some("AreaLimitPanel")
            && p.pointer("/config/is_block").and_then(Value::as_bool) == Some(true)
    });
    if blocked {
        return Some("not available in this region");
    }
    let play_check: Option<Value> = read(level.play_check);
    let preview = read::<i64>(level.is_preview) == Some(1)
        || play_check
            .as_ref()
            .and_then(|c| c.get("play_detail"))
            .and_then(Value::as_str)
            == Some("PLAY_PREVIEW")
        || read::<Cow<str>>(level.play_video_type).as_deref() == Some("preview");
    preview.then_some("only a preview is available (paid content)")
}

/// An array with an element (serde_json wrote or checked the text).
fn non_empty_list(raw: Option<&RawValue>) -> bool {
    raw.and_then(|r| r.get().strip_prefix('['))
        .is_some_and(|rest| !rest.trim_start().starts_with(']'))
}

/// Judge the video page, `html` its text: `window.__playinfo__` (same
/// shape as playurl).
pub fn judge_page<'a>(exchange: &Exchange, html: &'a str, ctx: &Context) -> Outcome<'a> {
    let response = &exchange.response;
    if response.status == 412 || response.status == 429 {
        return Outcome::Retry {
            risk: true,
            message: format!("video page: HTTP {} (risk control)", response.status),
        };
    }
    if response.status == 404 {
        return Outcome::Fatal(Failure::unavailable("the video page does not exist"));
    }
    if !response.is_success() {
        return Outcome::Retry {
            risk: false,
            message: format!("video page: HTTP {}", response.status),
        };
    }
    if let Some(json) = mediaparse_sdk::html::assigned_value(html, "window.__playinfo__") {
        return match serde_json::from_str::<PlayEnvelope>(json) {
            Ok(env) => judge_playurl(env, "__playinfo__", ctx),
            Err(e) => Outcome::Retry {
                risk: false,
                message: format!("__playinfo__ is not the JSON we know ({e})"),
            },
        };
    }
    if html::contains(html, "_riskdata_") || html::contains(html, "v_voucher") {
        return Outcome::Retry {
            risk: true,
            message: "video page: risk-control page (v_voucher)".into(),
        };
    }
    Outcome::Retry {
        risk: false,
        message: "video page: no window.__playinfo__".into(),
    }
}

/// A JSON number or string id as a string (`85440373`, `"85440373"`).
pub fn id_string(value: Option<&Value>) -> Option<String> {
    mediaparse_sdk::ids::id_text(value?).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    const DASH_ANSWERS: &[&str] = &[
        r#"{"code":0,"data":{"dash":{"video":[{"id":80,"baseUrl":"https://a/v.m4s"}],"audio":[]}}}"#,
        r#"{"code":0,"data":{"dash":{"video":[],"audio":[{"id":30280,"baseUrl":"https://a/a.m4s"}]},"durl":[]}}"#,
        r#"{"code":0,"data":{"dash":{"video":[1]}}}"#,
        r#"{"code":0,"data":{"dash":{"video":[{"id":"x"}]}}}"#,
        r#"{"code":0,"data":{"dash":{"video":[],"video":[{"id":80}]}}}"#,
        r#"{"code":0,"data":{"dash":{"video":[{"id":80}],"audio":[],"audio":[]}}}"#,
        r#"{"code":0,"data":{"dash":null,"durl":[{"url":"https://a/b.mp4"}]}}"#,
        r#"{"code":0,"data":{"dash":[{"video":[1]}]}}"#,
        r#"{"code":0,"data":{"dash":{"video":{"id":80}}}}"#,
        r#"{"code":0,"data":{"dash":{"video":[{"id":80}]},"dash":{"video":[]}}}"#,
        r#"{"code":0,"data":{"is_preview":1,"dash":{"video":[],"video":[{"id":80}]}}}"#,
        r#"{"code":0,"data":{"is_preview":1,"dash":{"video":[{"id":80}]}}}"#,
    ];

    /// The verdict reads `dash` once and `build` makes its streams from
    /// that read: a `dash` of another shape is judged from its text and
    /// fails `build`; `video` named twice in `dash`, or `dash` named twice
    /// in the object, makes the object unknown (no streams).
    #[test]
    fn dash_is_read_once() {
        let expected = [
            "streams 1 videos",
            "retry false t: neither DASH streams nor durl in the answer",
            "streams, build fails upstream_error unexpected DASH object: invalid type: integer `1`, expected struct Stream at line 1 column 11",
            r#"streams, build fails upstream_error unexpected DASH object: invalid type: string "x", expected u64 at line 1 column 19"#,
            "retry false t: neither DASH streams nor durl in the answer",
            "streams, build fails upstream_error unexpected DASH object: duplicate field `audio` at line 1 column 39",
            "streams 1 videos",
            "retry false t: neither DASH streams nor durl in the answer",
            "retry false t: neither DASH streams nor durl in the answer",
            "retry false t: neither DASH streams nor durl in the answer",
            "retry false t: neither DASH streams nor durl in the answer",
            "fatal content_unavailable",
        ];
        for (answer, expected) in DASH_ANSWERS.iter().zip(expected) {
            let env: PlayEnvelope = serde_json::from_str(answer).unwrap();
            let verdict = match judge_playurl(env, "t", &Context::default()) {
                Outcome::Streams(play) => {
                    let view = crate::map::View::of(&play.object);
                    match crate::map::build(&view, play.dash.as_ref(), &Default::default()) {
                        Ok(m) => format!("streams {} videos", m.videos.len()),
                        Err(f) => format!("streams, build fails {} {}", f.code(), f.message()),
                    }
                }
                Outcome::Fatal(f) => format!("fatal {}", f.code()),
                Outcome::Retry { risk, message } => format!("retry {risk} {message}"),
            };
            assert_eq!(verdict, expected, "{answer}");
        }
    }
    use crate::fingerprint::tests::{assert_b64_shape, assert_inter_shape};

    /// The verdict on an answer's text: the play-URL object's member
    /// names and whether `video_info` was left out, or the failure.
    fn verdict(answer: &str) -> String {
        let env: PlayEnvelope = serde_json::from_str(answer).unwrap();
        match judge_playurl(env, "t", &Context::default()) {
            Outcome::Streams(play) => {
                let names: Vec<&str> = play
                    .object
                    .members()
                    .iter()
                    .map(|(n, _)| n.as_ref())
                    .collect();
                format!("streams {} {}", names.join(","), play.without_video_info)
            }
            Outcome::Fatal(f) => format!("fatal {}", f.code()),
            Outcome::Retry { risk, message } => format!("retry {risk} {message}"),
        }
    }

    #[test]
    fn play_url_objects_are_found_where_they_stand() {
        let durl = r#""durl":[{"url":"https://a/b.mp4"}]"#;
        // `data` when it is an object; else `result`, or its `video_info`.
        assert_eq!(
            verdict(&format!(r#"{{"code":0,"data":{{"quality":16,{durl}}}}}"#)),
            "streams quality,durl false"
        );
        assert_eq!(
            verdict(&format!(
                r#"{{"code":0,"data":[1],"result":{{{durl},"x":1}}}}"#
            )),
            "streams durl,x false"
        );
        assert_eq!(
            verdict(&format!(
                r#"{{"code":0,"result":{{"video_info":{{{durl}}},"x":1}}}}"#
            )),
            "streams durl false"
        );
        assert_eq!(
            verdict(&format!(
                r#"{{"code":0,"result":{{"video_info":null,{durl}}}}}"#
            )),
            "streams video_info,durl true"
        );
        assert_eq!(
            verdict(&format!(
                r#"{{"code":0,"result":{{"video_info":[],{durl}}}}}"#
            )),
            "streams video_info,durl true"
        );
        assert_eq!(
            verdict(r#"{"code":0,"data":null,"result":"x"}"#),
            "retry false t: no data object"
        );
        assert_eq!(
            verdict(r#"{"code":0,"data":{"durl":[]}}"#),
            "retry false t: neither DASH streams nor durl in the answer"
        );
        // An outer `result` that says preview-only decides.
        assert_eq!(
            verdict(&format!(
                r#"{{"code":0,"result":{{"is_preview":1,"video_info":{{{durl}}}}}}}"#
            )),
            "fatal content_unavailable"
        );
    }

    #[test]
    fn signed_playurl_carries_browser_shaped_dm_params() {
        let keys = wbi::Keys::from_urls(
            "https://i0.hdslb.com/bfs/wbi/7cd084941338484aae1ad9425b84077c.png",
            "https://i0.hdslb.com/bfs/wbi/4932caff0ff746eab6f01bf08b70ac45.png",
        )
        .unwrap_or_else(|| panic!("keys"));
        let ctx = Context {
            now_unix_ms: 1_700_000_000_000,
            ..Context::default()
        };
        let request = wbi_playurl_request("BV1rp4y1e745", "244954665", &keys, &ctx);
        let url = url::Url::parse(&request.url).unwrap_or_else(|e| panic!("{e}"));
        let param = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
                .unwrap_or_else(|| panic!("{name} missing from {url}"))
        };
        assert_eq!(param("dm_img_list"), "[]");
        assert_b64_shape(&param("dm_img_str"), 16, 64);
        assert_b64_shape(&param("dm_cover_img_str"), 32, 128);
        assert_inter_shape(&param("dm_img_inter")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(param("wts"), "1700000000");
    }
}
