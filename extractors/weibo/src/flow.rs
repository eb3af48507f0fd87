//! The requests, re-derived from the exchanges on every call: `t.cn` and
//! app-share hops, the cookie-less video component for `1034:` links, then
//! the post lookup (visitor cookie, PC ajax, the mobile API).

use mediaparse_sdk::encode::strict;
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::fields::{MaybeObject, Object, RawValue};
use mediaparse_sdk::links::{Followed, Landing, ShortLinks};
use mediaparse_sdk::serde_json::{self, Value};
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{
    Context, Exchange, Failure, HttpRequest, HttpResponse, Result, Step, Target, cookies, ua,
};

use crate::map::{self, DESKTOP_UA};
use crate::urls::{self, Link, mblogid_of};

/// Where the visitor cookie comes from (Sina Visitor System).
pub const VISITOR_URL: &str = "https://passport.weibo.com/visitor/genvisitor2";
const VISITOR_BODY: &str = "cb=visitor_gray_callback&ver=20250916&tid=&from=weibo&webdriver=false&return_url=https%3A%2F%2Fweibo.com%2F";
/// Visitor cookies are long-lived; the host may share one for this long.
const VISITOR_CACHE_SECONDS: u32 = 6 * 3600;
const MOBILE_UA: &str = ua::SAFARI_17_IPHONE;
/// App share pages answer a WeChat in-app browser.
const WECHAT_UA: &str = ua::WECHAT_CHROME_120_WINDOWS;

const LINKS: ShortLinks = ShortLinks {
    link: "the short link",
    post: "a Weibo post",
    max_hops: 4,
    hosts: &["t.cn", "www.t.cn", "mapp.api.weibo.cn"],
};

/// The flow: the next request, or the post mapped.
pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let start = urls::parse_url(&target.canonical_url)?;
    let resolved = match resolve(&start, done)? {
        Hop::Fetch(request) => return Ok(Step::one(request)),
        Hop::Done(link) => link,
    };
    match resolved {
        Link::Video { oid, mid } => {
            let url = component_url(&oid);
            let Some(exchange) = done.last_at(&url) else {
                return Ok(Step::one(component_request(&oid, None)));
            };
            // weibo.com sends a cookie-less visitor to the Sina Visitor
            // System: ask once more with a cookie (the operator's, else a
            // visitor cookie minted for it).
            if is_visitor_redirect(&exchange.response)
                && exchange.request.header_value("Cookie").is_none()
            {
                let cookie = match ctx.config("cookie") {
                    Some(configured) => Some(configured.trim().to_string()),
                    None => match done.last_at(VISITOR_URL) {
                        None => return Ok(Step::one(visitor_request())),
                        Some(visitor) => visitor_cookie(&visitor.response),
                    },
                };
                if let Some(cookie) = cookie {
                    return Ok(Step::one(component_request(&oid, Some(&cookie))));
                }
            }
            let play = component_play(&exchange.response);
            let mut mid = mid;
            if let Some(play) = play {
                if let Some(extraction) = map::extract_component(&play, &oid)? {
                    return Ok(Step::Done(extraction));
                }
                let named = play.get("mid").and_then(mediaparse_sdk::ids::id_text);
                mid = named.filter(|m| urls::is_mid(m)).or(mid);
            }
            match mid {
                Some(mid) => post(&mid, ctx, done),
                None if is_visitor_redirect(&exchange.response) => Err(Failure::RateLimited(
                    "weibo.com sent the video request to its visitor system even with a cookie"
                        .into(),
                )),
                None => Err(Failure::unavailable(
                    "the video has no playable media and names no post",
                )),
            }
        }
        Link::Post { mid } => post(&mid, ctx, done),
        Link::Short { .. } | Link::AppShare { .. } => Err(Failure::changed(
            "a short link resolved to another short link",
        )),
    }
}

enum Hop {
    Fetch(HttpRequest),
    Done(Link),
}

/// Follow `t.cn` and app-share hops through their redirects. An app share
/// page may instead answer with the post in its HTML.
fn resolve(start: &Link, done: &[Exchange]) -> Result<Hop> {
    let (Link::Short { url, .. } | Link::AppShare { url, .. }) = start else {
        return Ok(Hop::Done(start.clone()));
    };
    if let Some(page) = done.last_where(|e| is_app_share(&e.request.url))
        && !page.response.is_redirect()
        && page.response.is_success()
    {
        return id_in_page(&page.response.text())
            .map(|mid| Hop::Done(Link::Post { mid }))
            .ok_or_else(|| Failure::changed("the app share page names no post"));
    }
    let request = |url: &str, _: &[&Exchange]| {
        let user_agent = if is_app_share(url) {
            WECHAT_UA
        } else {
            DESKTOP_UA
        };
        HttpRequest::get(url)
            .header("User-Agent", user_agent)
            .no_redirects()
    };
    match LINKS.follow_judging(url, done, request, land, no_redirect)? {
        Followed::Fetch(request) => Ok(Hop::Fetch(request)),
        Followed::Arrived { post, .. } => Ok(Hop::Done(post)),
    }
}

/// A hop that did not redirect: 403/418/429/432 are rate limits, anything
/// else an expired link.
fn no_redirect(response: &HttpResponse) -> Failure {
    match response.status {
        403 | 418 | 429 | 432 => {
            Failure::RateLimited(format!("the link host answered {}", response.status))
        }
        _ => Failure::unsupported("the short link is expired or invalid"),
    }
}

/// A hop's redirect target: another link to follow, or where it arrived.
fn land(url: &InputUrl) -> Landing<Link> {
    match urls::parse_url(url.url.as_str()) {
        Ok(Link::Short { url, .. } | Link::AppShare { url, .. }) => Landing::Hop(url),
        Ok(link) => Landing::Arrived(link),
        // Expired, or a profile, the home page or another site.
        Err(_) => Landing::Elsewhere,
    }
}

fn is_app_share(url: &str) -> bool {
    matches!(urls::parse_url(url), Ok(Link::AppShare { .. }))
}

/// A post id in an app share page (`…/status/{id}` or `…/detail/{id}`).
fn id_in_page(page: &str) -> Option<String> {
    for marker in [
        "weibo.cn/status/",
        "weibo.cn/detail/",
        "\"mid\":\"",
        "\"mid\": \"",
    ] {
        let mut rest = page;
        while let Some(pos) = rest.find(marker) {
            let after = &rest[pos + marker.len()..];
            let id: String = after
                .chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect();
            if let Ok(Link::Post { mid }) =
                urls::parse_url(&format!("https://m.weibo.cn/detail/{id}"))
            {
                return Some(mid);
            }
            rest = after;
        }
    }
    None
}

/// The post lookup: visitor cookie (unless configured), PC ajax, then the
/// mobile API.
fn post(mid: &str, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let pc_url = pc_url(mid);
    // The operator's cookie goes to weibo.com only; an anonymous visitor
    // cookie is also offered to m.weibo.cn.
    let (cookie, visitor) = match ctx.config("cookie") {
        Some(configured) => (Some(configured.trim().to_string()), None),
        None => match done.last_at(VISITOR_URL) {
            None => return Ok(Step::one(visitor_request())),
            Some(exchange) => {
                let visitor = visitor_cookie(&exchange.response);
                (visitor.clone(), visitor)
            }
        },
    };
    if let Some(cookie) = cookie {
        let Some(exchange) = done.last_at(&pc_url) else {
            return Ok(Step::one(pc_request(&pc_url, &cookie)));
        };
        if let Some(status) = read_pc(&exchange.response)? {
            return map::extract_status(&status).map(Step::Done);
        }
    }
    let m_url = m_url(mid);
    match done.last_at(&m_url) {
        None => Ok(Step::one(m_request(&m_url, mid, visitor.as_deref()))),
        Some(exchange) => map::extract_status(&read_m(&exchange.response)?).map(Step::Done),
    }
}

fn pc_url(mid: &str) -> String {
    let mblogid = mblogid_of(mid);
    let id = if mblogid.is_empty() { mid } else { &mblogid };
    format!("https://weibo.com/ajax/statuses/show?id={id}&isGetLongText=true&locale=zh-CN")
}

fn m_url(mid: &str) -> String {
    format!("https://m.weibo.cn/statuses/show?id={mid}")
}

fn component_url(oid: &str) -> String {
    format!(
        "https://weibo.com/tv/api/component?page={}",
        strict(&format!("/tv/show/{oid}"))
    )
}

/// A redirect to `passport.weibo.com` (the Sina Visitor System): the
/// request lacked an accepted cookie.
fn is_visitor_redirect(response: &HttpResponse) -> bool {
    response.is_redirect()
        && response
            .location()
            .is_some_and(|l| l.starts_with("https://passport.weibo.com/"))
}

fn visitor_request() -> HttpRequest {
    HttpRequest::post(VISITOR_URL, VISITOR_BODY)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Referer", "https://passport.weibo.com/visitor/visitor?entry=miniblog&a=enter&url=https%3A%2F%2Fweibo.com%2F&domain=weibo.com")
        .header("User-Agent", DESKTOP_UA)
        .no_redirects()
        .cache_for(VISITOR_CACHE_SECONDS)
}

fn pc_request(url: &str, cookie: &str) -> HttpRequest {
    HttpRequest::get(url)
        .header("User-Agent", DESKTOP_UA)
        .header("Referer", "https://weibo.com/")
        .header("Accept", "application/json, text/plain, */*")
        .header("X-Requested-With", "XMLHttpRequest")
        .header("Cookie", cookie)
        .no_redirects()
}

fn m_request(url: &str, mid: &str, visitor: Option<&str>) -> HttpRequest {
    let request = HttpRequest::get(url)
        .header("User-Agent", MOBILE_UA)
        .header("Referer", format!("https://m.weibo.cn/detail/{mid}"))
        .header("Accept", "application/json, text/plain, */*")
        .header("MWeibo-Pwa", "1")
        .header("X-Requested-With", "XMLHttpRequest")
        .no_redirects();
    match visitor {
        Some(cookie) => request.header("Cookie", cookie),
        None => request,
    }
}

fn component_request(oid: &str, cookie: Option<&str>) -> HttpRequest {
    let data = format!("{{\"Component_Play_Playinfo\":{{\"oid\":\"{oid}\"}}}}");
    let request = HttpRequest::post(component_url(oid), format!("data={}", strict(&data)))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Referer", format!("https://weibo.com/tv/show/{oid}"))
        .header("Origin", "https://weibo.com")
        .header("User-Agent", DESKTOP_UA)
        .no_redirects();
    match cookie {
        Some(cookie) => request.header("Cookie", cookie),
        None => request,
    }
}

/// `SUB=…; SUBP=…` from the visitor answer (JSONP `data.sub`/`data.subp`,
/// else its `Set-Cookie`); `None` when the visitor system failed.
pub fn visitor_cookie(response: &HttpResponse) -> Option<String> {
    if !response.is_success() {
        return None;
    }
    let text = response.text();
    let json = text
        .find('(')
        .zip(text.rfind(')'))
        .filter(|(a, b)| a < b)
        .and_then(|(a, b)| serde_json::from_str::<Value>(&text[a + 1..b]).ok());
    let from_body = json.as_ref().and_then(|v| {
        let sub = v.pointer("/data/sub")?.as_str().filter(|s| !s.is_empty())?;
        let subp = v
            .pointer("/data/subp")
            .and_then(Value::as_str)
            .unwrap_or("");
        Some((sub.to_string(), subp.to_string()))
    });
    let (sub, subp) = from_body.or_else(|| {
        let sub = cookies::cookie_value(response, "SUB").filter(|s| !s.is_empty())?;
        Some((
            sub,
            cookies::cookie_value(response, "SUBP").unwrap_or_default(),
        ))
    })?;
    Some(if subp.is_empty() {
        format!("SUB={sub}")
    } else {
        format!("SUB={sub}; SUBP={subp}")
    })
}

/// The PC answer: the status (its members), `None` to fall back to the
/// mobile API, or a final failure (deleted, login-only).
fn read_pc(response: &HttpResponse) -> Result<Option<Object<'_>>> {
    if response.is_redirect() {
        let location = response.location().unwrap_or_default();
        if location.contains("sorry") || location.contains("pagenotfound") {
            return Err(Failure::unavailable("the post does not exist (deleted)"));
        }
        // passport.weibo.com/visitor/…: the visitor cookie is missing or stale
        return Ok(None);
    }
    if response.status == 404 {
        return Err(Failure::unavailable("the post does not exist"));
    }
    if !response.is_success() {
        return Ok(None);
    }
    let (body, object) = match Answer::of(response) {
        Answer::Object(body, object) => (body, object),
        Answer::Other(tree) => return Err(refusal(&tree)),
        Answer::NoJson => return Ok(None),
    };
    let head = Head::of(&object);
    if is_ok(head.ok.as_ref()) || (head.ok.is_none() && head.has_id) {
        return Ok(head.has_id.then_some(object));
    }
    // `{"ok":-100,"url":"https://weibo.com/login.php?…"}`: the cookie
    // (visitor or operator) is not, or no longer, accepted; the mobile API
    // still answers anonymous readers.
    if ok_code(head.ok.as_ref()).is_some_and(|code| code < 0) {
        return Ok(None);
    }
    Err(refusal(&serde_json::from_str(body).unwrap_or_default()))
}

/// A JSON answer: an object's members, found in one pass (the status is
/// the PC answer itself, or the mobile answer's `data`); any other JSON
/// as its tree; or no JSON at all.
enum Answer<'a> {
    Object(&'a str, Object<'a>),
    Other(Value),
    NoJson,
}

impl<'a> Answer<'a> {
    fn of(response: &'a HttpResponse) -> Answer<'a> {
        let Ok(body) = std::str::from_utf8(&response.body) else {
            return Answer::NoJson;
        };
        match serde_json::from_str::<MaybeObject>(body) {
            Ok(MaybeObject::Object(object)) => Answer::Object(body, object),
            Ok(_) => Answer::Other(serde_json::from_str(body).unwrap_or_default()),
            Err(_) => Answer::NoJson,
        }
    }
}

/// What decides whether an answer holds a status: its `ok` and whether it
/// names an id. Of a member named twice, the last (as a tree reads it).
#[derive(Debug, Default)]
struct Head<'a> {
    ok: Option<Value>,
    has_id: bool,
    data: Option<&'a RawValue>,
}

impl<'a> Head<'a> {
    fn of(object: &Object<'a>) -> Head<'a> {
        Head {
            ok: object
                .get("ok")
                .and_then(|o| serde_json::from_str(o.get()).ok()),
            has_id: ["idstr", "id", "mid"]
                .iter()
                .any(|k| object.get(k).is_some_and(|v| v.get() != "null")),
            data: object.get("data"),
        }
    }
}

/// The mobile API answer: `{ok: 1, data: {...}}`; the status is `data`
/// (its members).
fn read_m(response: &HttpResponse) -> Result<Object<'_>> {
    if response.is_redirect() || matches!(response.status, 403 | 418 | 429 | 432) {
        return Err(Failure::RateLimited(format!(
            "m.weibo.cn refused the request (status {}, anti-crawl)",
            response.status
        )));
    }
    if response.status == 404 {
        return Err(Failure::unavailable("the post does not exist"));
    }
    if !response.is_success() {
        return Err(Failure::upstream(format!(
            "m.weibo.cn answered with status {}",
            response.status
        )));
    }
    let (body, object) = match Answer::of(response) {
        Answer::Object(body, object) => (body, object),
        Answer::Other(tree) => return Err(refusal(&tree)),
        Answer::NoJson => {
            return Err(Failure::upstream(
                "m.weibo.cn answered with a non-JSON page",
            ));
        }
    };
    let head = Head::of(&object);
    if is_ok(head.ok.as_ref())
        && let Some(data) = head.data.and_then(Object::of)
        && Head::of(&data).has_id
    {
        return Ok(data);
    }
    Err(refusal(&serde_json::from_str(body).unwrap_or_default()))
}

/// `ok` as a number (`-100`, `"-100"`), when it is one.
fn ok_code(ok: Option<&Value>) -> Option<i64> {
    match ok? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn is_ok(ok: Option<&Value>) -> bool {
    match ok {
        Some(Value::Number(n)) => n.as_i64() == Some(1),
        Some(Value::String(s)) => s == "1",
        Some(Value::Bool(b)) => *b,
        _ => false,
    }
}

/// `ok: 0`: login-only posts, else deleted or hidden.
fn refusal(body: &Value) -> Failure {
    let message = ["message", "msg", "errmsg"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str))
        .unwrap_or("")
        .to_string();
    let lower = message.to_lowercase();
    if lower.contains("login") || message.contains("登录") {
        Failure::LoginRequired(format!(
            "Weibo shows this post only to signed-in users: {message}"
        ))
    } else if message.is_empty() {
        Failure::unavailable("the post is deleted or hidden")
    } else {
        Failure::unavailable(format!("Weibo refused the post: {message}"))
    }
}

/// The component's `data.Component_Play_Playinfo` when it answered `100000`.
fn component_play(response: &HttpResponse) -> Option<Value> {
    if !response.is_success() {
        return None;
    }
    let body: Value = response.json().ok()?;
    let code_ok = match body.get("code") {
        Some(Value::String(s)) => s == "100000",
        Some(Value::Number(n)) => n.as_u64() == Some(100000),
        _ => false,
    };
    if !code_ok {
        return None;
    }
    body.pointer("/data/Component_Play_Playinfo")
        .filter(|p| p.is_object())
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::Header;

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> HttpResponse {
        HttpResponse {
            request_url: VISITOR_URL.into(),
            final_url: VISITOR_URL.into(),
            status,
            headers: headers.iter().map(|(n, v)| Header::new(*n, *v)).collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn visitor_cookie_from_jsonp_or_set_cookie() {
        let jsonp = r#"window.visitor_gray_callback && visitor_gray_callback({"retcode":20000000,"msg":"succ","data":{"sub":"_2AkMA","subp":"0033W","tid":"x"}});"#;
        assert_eq!(
            visitor_cookie(&response(200, &[], jsonp)).as_deref(),
            Some("SUB=_2AkMA; SUBP=0033W")
        );
        let set = response(
            200,
            &[
                ("Set-Cookie", "SUB=_2AkMB; path=/; domain=.weibo.com"),
                ("Set-Cookie", "SUBP=0033X; path=/"),
            ],
            "{}",
        );
        assert_eq!(
            visitor_cookie(&set).as_deref(),
            Some("SUB=_2AkMB; SUBP=0033X")
        );
        assert_eq!(visitor_cookie(&response(500, &[], jsonp)), None);
    }

    #[test]
    fn component_url_and_body_are_encoded() {
        let r = component_request("1034:4857848069554290", None);
        assert_eq!(
            r.url,
            "https://weibo.com/tv/api/component?page=%2Ftv%2Fshow%2F1034%3A4857848069554290"
        );
        assert_eq!(
            String::from_utf8(r.body.unwrap()).unwrap(),
            "data=%7B%22Component_Play_Playinfo%22%3A%7B%22oid%22%3A%221034%3A4857848069554290%22%7D%7D"
        );
    }

    #[test]
    fn ids_in_app_share_pages() {
        assert_eq!(
            id_in_page("<a href=\"https://m.weibo.cn/status/MohObmHwb?x\">").as_deref(),
            Some("4857883315410503")
        );
        assert_eq!(
            id_in_page("var $render_data = [{\"status\": {\"mid\": \"4857881961438732\"}}]")
                .as_deref(),
            Some("4857881961438732")
        );
        assert_eq!(id_in_page("nothing"), None);
    }

    #[test]
    fn a_refused_cookie_falls_back_to_the_mobile_api() {
        // gallery-dl #9279: what weibo.com/ajax answered a visitor in 2026-03.
        let body = r#"{"ok":-100,"url":"https://weibo.com/login.php?url=https%3A%2F%2Fweibo.com%2Fu%2F7117031969"}"#;
        let answer = response(200, &[("Content-Type", "application/json")], body);
        assert!(matches!(read_pc(&answer), Ok(None)));
    }

    /// What each reader makes of an answer: the status's `idstr`, a
    /// fallback (`none`), or the failure's code.
    fn verdicts(body: &str) -> (String, String) {
        let answer = response(200, &[("Content-Type", "application/json")], body);
        let id = |status: &Object| {
            status
                .get("idstr")
                .map(|v| v.get().to_string())
                .unwrap_or_default()
        };
        let pc = match read_pc(&answer) {
            Ok(Some(status)) => id(&status),
            Ok(None) => "none".into(),
            Err(f) => f.code().to_string(),
        };
        let m = match read_m(&answer) {
            Ok(status) => id(&status),
            Err(f) => f.code().to_string(),
        };
        (pc, m)
    }

    #[test]
    fn answers_read_in_one_pass() {
        let v = |body: &str| {
            let (pc, m) = verdicts(body);
            format!("{pc} | {m}")
        };
        // The PC answer is the status; the mobile answer's `data` is.
        assert_eq!(
            v(r#"{"ok":1,"idstr":"1","text_raw":"a"}"#),
            r#""1" | content_unavailable"#
        );
        assert_eq!(v(r#"{"idstr":"1"}"#), r#""1" | content_unavailable"#);
        assert_eq!(
            v(r#"{"ok":1,"data":{"idstr":"2","mid":"2"}}"#),
            r#"none | "2""#
        );
        // Of a member named twice, the last (as a tree reads it).
        assert_eq!(
            v(r#"{"ok":0,"data":{"idstr":"2"},"ok":1,"data":{"idstr":"3"}}"#),
            r#"none | "3""#
        );
        assert_eq!(
            v(r#"{"ok":1,"idstr":null,"mid":null}"#),
            "none | content_unavailable"
        );
        // `data` that is no object, or names no id, is no status.
        assert_eq!(
            v(r#"{"ok":1,"data":[{"idstr":"2"}]}"#),
            "none | content_unavailable"
        );
        assert_eq!(
            v(r#"{"ok":1,"data":{"idstr":null}}"#),
            "none | content_unavailable"
        );
        // Refusals, other JSON, no JSON.
        assert_eq!(
            v(r#"{"ok":0,"message":"current status can only be seen by login user"}"#),
            "login_required | login_required"
        );
        assert_eq!(v("[1]"), "content_unavailable | content_unavailable");
        assert_eq!(v("<html>"), "none | upstream_error");
    }

    #[test]
    fn refusals() {
        let login = serde_json::json!({"ok": 0, "message": "current status can only be seen by login user"});
        assert_eq!(refusal(&login).code(), "login_required");
        let gone = serde_json::json!({"ok": 0, "message": "该微博不存在"});
        assert_eq!(refusal(&gone).code(), "content_unavailable");
    }
}
