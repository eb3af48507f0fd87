//! A fake media CDN on loopback for the tunnel tests and bench.
//! It speaks the upstream-override contract (`http://127.0.0.1:PORT/HOST/PATH?Q`
//! stands for `https://HOST/PATH?Q`), so the service's `--upstream` can point
//! at it: media URLs it knows are answered here, with `Range`, hotlink rules
//! (refused with `403` without the expected headers; a `cookie` rule needs the
//! pair inside the Cookie header) and IP binding (only one client address is
//! served); every other request is passed to a fallback upstream (the fixture
//! replay), so parses work through it too.
//!
//! It records what it served, and notices when a client goes away before a
//! body ends (the body stream is dropped unfinished).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, Method, Response, StatusCode, Uri};
use mediaparse_sdk::Header;
use tokio::io::{AsyncReadExt, AsyncSeekExt};

/// Where a file's bytes come from.
#[derive(Clone, Debug)]
pub enum Source {
    Bytes(Bytes),
    /// Read from disk as it is sent (large files).
    File(PathBuf),
    /// `len` bytes of a fixed pattern ([`pattern_byte`]), made as they are sent.
    Pattern(u64),
}

/// Byte `i` of a [`Source::Pattern`].
pub fn pattern_byte(i: u64) -> u8 {
    (i.wrapping_mul(31) ^ (i >> 13)) as u8
}

/// One media file and the rules it is served under.
#[derive(Clone, Debug)]
pub struct CdnFile {
    pub source: Source,
    pub content_type: String,
    pub etag: Option<String>,
    /// Headers the request must carry (`cookie`: the value appears in the Cookie header).
    pub required: Vec<Header>,
    /// Only this client address is served (an IP-bound URL).
    pub bound_to: Option<IpAddr>,
}

impl CdnFile {
    pub fn new(source: Source, content_type: &str) -> CdnFile {
        CdnFile {
            source,
            content_type: content_type.into(),
            etag: None,
            required: Vec::new(),
            bound_to: None,
        }
    }
}

/// What a logical URL answers.
#[derive(Clone, Debug)]
pub enum Answer {
    File(CdnFile),
    /// `302` to this location (a logical URL or any other).
    Redirect(String),
}

/// What happened to one body the CDN sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    pub url: String,
    pub status: u16,
    /// Bytes handed to the connection.
    pub sent: u64,
    /// Bytes the answer had.
    pub length: u64,
    /// The client went away before the end.
    pub aborted: bool,
    pub client: IpAddr,
}

#[derive(Default)]
struct Inner {
    routes: HashMap<String, Answer>,
    served: Vec<Served>,
}

/// A running fake CDN; stops when dropped.
pub struct FakeCdn {
    pub addr: SocketAddr,
    inner: Arc<Mutex<Inner>>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl FakeCdn {
    /// Start on `127.0.0.1`, passing unknown URLs to `fallback` (an
    /// upstream-override base URL), or answering `404` without one.
    pub async fn start(fallback: Option<String>) -> anyhow::Result<FakeCdn> {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = inner.clone();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let app = axum::Router::new().fallback(
            move |ConnectInfo(peer): ConnectInfo<SocketAddr>,
                  method: Method,
                  uri: Uri,
                  headers: HeaderMap,
                  body: Bytes| {
                let state = state.clone();
                let fallback = fallback.clone();
                let client = client.clone();
                async move {
                    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
                    let logical = format!("https:/{path}");
                    let answer = state
                        .lock()
                        .ok()
                        .and_then(|i| i.routes.get(&logical).cloned());
                    match answer {
                        Some(Answer::Redirect(to)) => Response::builder()
                            .status(StatusCode::FOUND)
                            .header("location", to)
                            .body(Body::empty())
                            .unwrap_or_default(),
                        Some(Answer::File(file)) => {
                            serve_file(&state, logical, &file, &method, &headers, peer.ip()).await
                        }
                        None => match fallback {
                            Some(base) => {
                                forward(&client, &base, path, method, headers, body).await
                            }
                            None => status_only(StatusCode::NOT_FOUND),
                        },
                    }
                }
            },
        );
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(
                listener,
                app.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await;
        });
        Ok(FakeCdn {
            addr,
            inner,
            _shutdown: tx,
        })
    }

    /// The base URL for `--upstream`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Where a client fetches `logical` (`https://HOST/PATH?Q`) from this CDN directly.
    pub fn wire_url(&self, logical: &str) -> String {
        let rest = logical
            .strip_prefix("https://")
            .or_else(|| logical.strip_prefix("http://"))
            .unwrap_or(logical);
        format!("{}/{rest}", self.base_url())
    }

    /// Answer `logical` (an `http://` URL is keyed as `https://`, as the override sends it).
    pub fn add(&self, logical: &str, answer: Answer) {
        let key = match logical.strip_prefix("http://") {
            Some(rest) => format!("https://{rest}"),
            None => logical.to_string(),
        };
        if let Ok(mut i) = self.inner.lock() {
            i.routes.insert(key, answer);
        }
    }

    /// Every body sent so far (finished or aborted).
    pub fn served(&self) -> Vec<Served> {
        self.inner
            .lock()
            .map(|i| i.served.clone())
            .unwrap_or_default()
    }
}

fn status_only(status: StatusCode) -> Response<Body> {
    Response::builder()
        .status(status)
        .body(Body::empty())
        .unwrap_or_default()
}

/// Whether `headers` satisfy the hotlink rule `rule`.
fn allowed(headers: &HeaderMap, rule: &Header) -> bool {
    let got = headers
        .get_all(rule.name.as_str())
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>();
    if rule.name.eq_ignore_ascii_case("cookie") {
        let sent: Vec<&str> = got
            .iter()
            .flat_map(|v| v.split(';'))
            .map(str::trim)
            .collect();
        rule.value
            .split(';')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .all(|pair| sent.contains(&pair))
    } else {
        got.iter().any(|v| *v == rule.value)
    }
}

/// `Range: bytes=…` against `len`: `Ok(None)` whole, `Ok(Some((start, end)))` inclusive, `Err(())` unsatisfiable.
#[allow(clippy::result_unit_err)]
pub fn parse_range(header: Option<&str>, len: u64) -> Result<Option<(u64, u64)>, ()> {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
        return Ok(None);
    };
    let (a, b) = spec.split_once('-').ok_or(())?;
    let (start, end) = match (a.trim(), b.trim()) {
        ("", suffix) => {
            let n: u64 = suffix.parse().map_err(|_| ())?;
            if n == 0 {
                return Err(());
            }
            (len.saturating_sub(n), len.checked_sub(1).ok_or(())?)
        }
        (s, "") => (s.parse().map_err(|_| ())?, len.checked_sub(1).ok_or(())?),
        (s, e) => {
            let e: u64 = e.parse().map_err(|_| ())?;
            (s.parse().map_err(|_| ())?, e.min(len.saturating_sub(1)))
        }
    };
    if start > end || start >= len {
        return Err(());
    }
    Ok(Some((start, end)))
}

async fn serve_file(
    state: &Arc<Mutex<Inner>>,
    url: String,
    file: &CdnFile,
    method: &Method,
    headers: &HeaderMap,
    client: IpAddr,
) -> Response<Body> {
    if !file.required.iter().all(|rule| allowed(headers, rule)) {
        return status_only(StatusCode::FORBIDDEN);
    }
    if file.bound_to.is_some_and(|ip| ip != client) {
        return status_only(StatusCode::FORBIDDEN);
    }
    let len = match &file.source {
        Source::Bytes(b) => b.len() as u64,
        Source::Pattern(n) => *n,
        Source::File(p) => match tokio::fs::metadata(p).await {
            Ok(m) => m.len(),
            Err(_) => return status_only(StatusCode::NOT_FOUND),
        },
    };
    let range = headers.get("range").and_then(|v| v.to_str().ok());
    let (status, start, end) = match parse_range(range, len) {
        Ok(None) => (StatusCode::OK, 0, len),
        Ok(Some((s, e))) => (StatusCode::PARTIAL_CONTENT, s, e + 1),
        Err(()) => {
            return Response::builder()
                .status(StatusCode::RANGE_NOT_SATISFIABLE)
                .header("content-range", format!("bytes */{len}"))
                .body(Body::empty())
                .unwrap_or_default();
        }
    };
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", &file.content_type)
        .header("content-length", end - start)
        .header("accept-ranges", "bytes");
    if status == StatusCode::PARTIAL_CONTENT {
        builder = builder.header("content-range", format!("bytes {start}-{}/{len}", end - 1));
    }
    if let Some(etag) = &file.etag {
        builder = builder.header("etag", etag);
    }
    if method == Method::HEAD {
        return builder.body(Body::empty()).unwrap_or_default();
    }
    let record = Recorder {
        state: state.clone(),
        served: Served {
            url,
            status: status.as_u16(),
            sent: 0,
            length: end - start,
            aborted: true,
            client,
        },
    };
    let body = body_from(file.source.clone(), start, end, record);
    builder.body(body).unwrap_or_default()
}

/// Records a body's fate when dropped (finished or not).
struct Recorder {
    state: Arc<Mutex<Inner>>,
    served: Served,
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Ok(mut i) = self.state.lock() {
            i.served.push(self.served.clone());
        }
    }
}

const CHUNK: u64 = 64 * 1024;

/// Bytes `start..end` of `source`, made or read chunk by chunk as the client reads.
fn body_from(source: Source, start: u64, end: u64, record: Recorder) -> Body {
    struct State {
        source: Source,
        file: Option<tokio::fs::File>,
        at: u64,
        end: u64,
        record: Recorder,
    }
    let stream = futures::stream::unfold(
        State {
            source,
            file: None,
            at: start,
            end,
            record,
        },
        |mut s| async move {
            if s.at >= s.end {
                let State { mut record, .. } = s;
                record.served.aborted = false;
                drop(record);
                return None;
            }
            let n = CHUNK.min(s.end - s.at);
            let chunk = match &s.source {
                Source::Bytes(b) => b.slice(s.at as usize..(s.at + n) as usize),
                Source::Pattern(_) => (s.at..s.at + n)
                    .map(pattern_byte)
                    .collect::<Vec<_>>()
                    .into(),
                Source::File(path) => {
                    if s.file.is_none() {
                        let mut f = match tokio::fs::File::open(path).await {
                            Ok(f) => f,
                            Err(e) => return Some((Err(e), s)),
                        };
                        if let Err(e) = f.seek(std::io::SeekFrom::Start(s.at)).await {
                            return Some((Err(e), s));
                        }
                        s.file = Some(f);
                    }
                    let mut buf = vec![0; n as usize];
                    let read = match s.file.as_mut() {
                        Some(f) => f.read_exact(&mut buf).await,
                        None => Err(std::io::Error::other("no file")),
                    };
                    if let Err(e) = read {
                        return Some((Err(e), s));
                    }
                    Bytes::from(buf)
                }
            };
            s.at += n;
            s.record.served.sent += n;
            Some((Ok(chunk), s))
        },
    );
    Body::from_stream(stream)
}

/// Pass a request the CDN does not know to the fallback upstream.
async fn forward(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let url = format!("{}{path}", base.trim_end_matches('/'));
    let Ok(method) = reqwest::Method::from_bytes(method.as_str().as_bytes()) else {
        return status_only(StatusCode::METHOD_NOT_ALLOWED);
    };
    let mut request = client.request(method, url).body(body.to_vec());
    for (name, value) in &headers {
        if !matches!(name.as_str(), "host" | "content-length" | "connection") {
            request = request.header(name.as_str(), value.as_bytes());
        }
    }
    let Ok(response) = request.send().await else {
        return status_only(StatusCode::BAD_GATEWAY);
    };
    let mut builder = Response::builder().status(response.status().as_u16());
    for (name, value) in response.headers() {
        if !matches!(
            name.as_str(),
            "content-length" | "transfer-encoding" | "connection"
        ) {
            builder = builder.header(name.as_str(), value.as_bytes());
        }
    }
    let bytes = response.bytes().await.unwrap_or_default();
    builder.body(Body::from(bytes)).unwrap_or_default()
}

/// A far-future expiry (2100-01-01) for recorded media URLs.
pub const FAR_FUTURE: &str = "4102444800";

/// `body` with every media-URL expiry parameter the tunnel reads
/// (`x-expires`, `expire`, `expires`, `deadline`: unix seconds; `oe`: hex)
/// moved to the far future, so URLs recorded long ago are still alive.
/// Separators as they appear in JSON, HTML and percent-encoded URLs:
/// `?`, `&`, `\u0026`, `&amp;`, `%3F`, `%26` (and `=` or `%3D`).
pub fn extend_expiries(body: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(body) else {
        return body.to_vec();
    };
    let mut out = text.to_string();
    for sep in ["?", "&", "\\u0026", "&amp;", "%3F", "%26"] {
        for eq in ["=", "%3D"] {
            for (name, hex) in [
                ("x-expires", false),
                ("expire", false),
                ("expires", false),
                ("deadline", false),
                ("oe", true),
            ] {
                let needle = format!("{sep}{name}{eq}");
                let mut from = 0;
                while let Some(at) = out[from..].find(&needle).map(|i| i + from) {
                    let start = at + needle.len();
                    let len = out[start..]
                        .find(|c: char| !(c.is_ascii_digit() || (hex && c.is_ascii_hexdigit())))
                        .unwrap_or(out.len() - start);
                    let value = if hex { "F4865700" } else { FAR_FUTURE };
                    if len > 0 {
                        out.replace_range(start..start + len, value);
                    }
                    from = start + if len > 0 { value.len() } else { 0 };
                }
            }
        }
    }
    out.into_bytes()
}

/// `url` with [`extend_expiries`] applied.
pub fn extend_url_expiry(url: &str) -> String {
    String::from_utf8(extend_expiries(url.as_bytes())).unwrap_or_else(|_| url.to_string())
}

/// Fake-upstream routes replaying `cases` with [`extend_expiries`] applied.
pub fn replay_routes(
    cases: &[mediaparse_sdk::fixture::Case],
) -> anyhow::Result<Vec<crate::fake_upstream::Route>> {
    let mut routes = Vec::new();
    for case in cases {
        for ex in &case.exchanges {
            routes.push(crate::fake_upstream::Route {
                method: ex.request.method.to_ascii_uppercase(),
                url: extend_url_expiry(&ex.request.url),
                header_constraints: ex.request.headers.clone(),
                body_constraint: ex.request.body.clone(),
                status: ex.response.status,
                headers: ex.response.headers.clone(),
                body: extend_expiries(&case.body(ex)?),
            });
        }
    }
    Ok(routes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_expiries() {
        assert_eq!(parse_range(None, 10), Ok(None));
        assert_eq!(parse_range(Some("bytes=2-4"), 10), Ok(Some((2, 4))));
        assert_eq!(parse_range(Some("bytes=7-"), 10), Ok(Some((7, 9))));
        assert_eq!(parse_range(Some("bytes=-3"), 10), Ok(Some((7, 9))));
        assert_eq!(parse_range(Some("bytes=5-99"), 10), Ok(Some((5, 9))));
        assert_eq!(parse_range(Some("bytes=10-"), 10), Err(()));
        let body = br#"{"u":"https://a/b?x=1&deadline=1745411269&y=2","v":"https://c/d?oe=67F1A2B3\u0026e=1"}"#;
        let out = String::from_utf8(extend_expiries(body)).unwrap();
        assert!(out.contains("&deadline=4102444800&y=2"), "{out}");
        assert!(out.contains("?oe=F4865700\\u0026e=1"), "{out}");
        assert_eq!(
            extend_url_expiry("https://a/b.jpg%3Fx-expires%3D1702591200%26x=1"),
            "https://a/b.jpg%3Fx-expires%3D4102444800%26x=1"
        );
    }
}
