//! The requests, and what their answers mean: one `decide` function that
//! `plan` and `map` both call (the extractor keeps no state), so the choice
//! of strategy is made the same way each time from the exchanges so far.

use mediaparse_sdk::serde_json::Value;
use mediaparse_sdk::{Exchange, Failure, HttpRequest, HttpResponse, Result, cookies};

use crate::link::{self, Link, mblogid_of};
use crate::status::{self, DESKTOP_UA};

/// Where the visitor cookie comes from (Sina Visitor System).
pub const VISITOR_URL: &str = "https://passport.weibo.com/visitor/genvisitor2";
const VISITOR_BODY: &str = "cb=visitor_gray_callback&ver=20250916&tid=&from=weibo&webdriver=false&return_url=https%3A%2F%2Fweibo.com%2F";
/// Visitor cookies are long-lived; the host may share one for this long.
const VISITOR_CACHE_SECONDS: u32 = 6 * 3600;
const MOBILE_UA: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
/// App share pages answer a WeChat in-app browser.
const WECHAT_UA: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 MicroMessenger/7.0.20.1781(0x6700143B) NetType/WIFI WindowsWechat";
const MAX_HOPS: usize = 4;

/// What to do next, or what to map.
pub enum Decision {
    Fetch(HttpRequest),
    /// A status object (PC or m.weibo.cn schema).
    Status(Value),
    /// The video component's `Component_Play_Playinfo`, which has media.
    Component {
        play: Value,
        oid: String,
    },
}

/// Decide from the link and the exchanges so far.
pub fn decide(start: &Link, ctx: &mediaparse_sdk::Context, done: &[Exchange]) -> Result<Decision> {
    let resolved = match resolve(start, done)? {
        Hop::Fetch(request) => return Ok(Decision::Fetch(request)),
        Hop::Done(link) => link,
    };
    match resolved {
        Link::Video { oid, mid } => {
            let url = component_url(&oid);
            let Some(exchange) = find(done, &url) else {
                return Ok(Decision::Fetch(component_request(&oid)));
            };
            let play = component_play(&exchange.response);
            let mut mid = mid;
            if let Some(play) = play {
                if status::extract_component(&play, &oid)?.is_some() {
                    return Ok(Decision::Component { play, oid });
                }
                let named = match play.get("mid") {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    _ => None,
                };
                mid = named.filter(|m| link::is_mid(m)).or(mid);
            }
            match mid {
                Some(mid) => post(&mid, ctx, done),
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

/// Follow `t.cn` and app-share hops through their redirects.
fn resolve(start: &Link, done: &[Exchange]) -> Result<Hop> {
    let mut current = start.clone();
    for _ in 0..MAX_HOPS {
        let (url, user_agent) = match &current {
            Link::Short { url, .. } => (url.clone(), DESKTOP_UA),
            Link::AppShare { url, .. } => (url.clone(), WECHAT_UA),
            other => return Ok(Hop::Done(other.clone())),
        };
        let Some(exchange) = find(done, &url) else {
            return Ok(Hop::Fetch(
                HttpRequest::get(url)
                    .header("User-Agent", user_agent)
                    .no_redirects(),
            ));
        };
        let response = &exchange.response;
        current = match response.location().filter(|_| response.is_redirect()) {
            Some(location) => link::parse_url(&location).map_err(|_| {
                Failure::unsupported(
                    "the short link does not lead to a Weibo post (expired, or it points at \
                     a profile, the home page or another site)",
                )
            })?,
            None if matches!(current, Link::AppShare { .. }) && response.is_success() => {
                id_in_page(&response.text())
                    .map(|mid| Link::Post { mid })
                    .ok_or_else(|| Failure::changed("the app share page names no post"))?
            }
            None if matches!(response.status, 403 | 418 | 429 | 432) => {
                return Err(Failure::RateLimited(format!(
                    "the link host answered {}",
                    response.status
                )));
            }
            None => return Err(Failure::unsupported("the short link is expired or invalid")),
        };
    }
    Err(Failure::unsupported(
        "the short link redirects too many times",
    ))
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
                link::parse_url(&format!("https://m.weibo.cn/detail/{id}"))
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
fn post(mid: &str, ctx: &mediaparse_sdk::Context, done: &[Exchange]) -> Result<Decision> {
    let pc_url = pc_url(mid);
    // The operator's cookie goes to weibo.com only; an anonymous visitor
    // cookie is also offered to m.weibo.cn.
    let (cookie, visitor) = match ctx.config("cookie") {
        Some(configured) => (Some(configured.trim().to_string()), None),
        None => match find(done, VISITOR_URL) {
            None => return Ok(Decision::Fetch(visitor_request())),
            Some(exchange) => {
                let visitor = visitor_cookie(&exchange.response);
                (visitor.clone(), visitor)
            }
        },
    };
    if let Some(cookie) = cookie {
        let Some(exchange) = find(done, &pc_url) else {
            return Ok(Decision::Fetch(pc_request(&pc_url, &cookie)));
        };
        if let Some(status) = read_pc(&exchange.response)? {
            return Ok(Decision::Status(status));
        }
    }
    let m_url = m_url(mid);
    match find(done, &m_url) {
        None => Ok(Decision::Fetch(m_request(&m_url, mid, visitor.as_deref()))),
        Some(exchange) => read_m(&exchange.response).map(Decision::Status),
    }
}

fn find<'a>(done: &'a [Exchange], url: &str) -> Option<&'a Exchange> {
    done.iter().rev().find(|e| e.request.url == url)
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
        "https://h5.video.weibo.com/api/component?page={}",
        encode(&format!("/show/{oid}"))
    )
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

fn component_request(oid: &str) -> HttpRequest {
    let data = format!("{{\"Component_Play_Playinfo\":{{\"oid\":\"{oid}\"}}}}");
    HttpRequest::post(component_url(oid), format!("data={}", encode(&data)))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Referer", format!("https://h5.video.weibo.com/show/{oid}"))
        .header("User-Agent", DESKTOP_UA)
        .no_redirects()
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

/// The PC answer: the status, `None` to fall back to the mobile API, or a
/// final failure (deleted, login-only).
fn read_pc(response: &HttpResponse) -> Result<Option<Value>> {
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
    let Ok(body) = response.json::<Value>() else {
        return Ok(None);
    };
    if is_ok(&body) || (body.get("ok").is_none() && has_id(&body)) {
        if has_id(&body) {
            return Ok(Some(body));
        }
        return Ok(None);
    }
    Err(refusal(&body))
}

/// The mobile API answer: `{ok: 1, data: {...}}`.
fn read_m(response: &HttpResponse) -> Result<Value> {
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
    let body: Value = response
        .json()
        .map_err(|_| Failure::upstream("m.weibo.cn answered with a non-JSON page"))?;
    if is_ok(&body)
        && let Some(data) = body.get("data").filter(|d| has_id(d))
    {
        return Ok(data.clone());
    }
    Err(refusal(&body))
}

fn is_ok(body: &Value) -> bool {
    match body.get("ok") {
        Some(Value::Number(n)) => n.as_i64() == Some(1),
        Some(Value::String(s)) => s == "1",
        Some(Value::Bool(b)) => *b,
        _ => false,
    }
}

fn has_id(v: &Value) -> bool {
    ["idstr", "id", "mid"]
        .iter()
        .any(|k| v.get(*k).is_some_and(|x| !x.is_null()))
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

/// Percent-encode, leaving RFC 3986 unreserved characters.
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
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
        let r = component_request("1034:4857848069554290");
        assert_eq!(
            r.url,
            "https://h5.video.weibo.com/api/component?page=%2Fshow%2F1034%3A4857848069554290"
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
    fn refusals() {
        let login = serde_json::json!({"ok": 0, "message": "current status can only be seen by login user"});
        assert_eq!(refusal(&login).code(), "login_required");
        let gone = serde_json::json!({"ok": 0, "message": "该微博不存在"});
        assert_eq!(refusal(&gone).code(), "content_unavailable");
    }
}
