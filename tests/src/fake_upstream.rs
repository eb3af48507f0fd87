//! A fake upstream on loopback that knows only the public override contract
//! (DESIGN.md §5): `http://127.0.0.1:PORT/HOST/PATH?QUERY` stands for
//! `https://HOST/PATH?QUERY`. It answers from recorded fixture exchanges and
//! counts what it was asked, so tests can prove what was (not) fetched.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Response, StatusCode, Uri};
use mediaparse_sdk::Header;
use mediaparse_sdk::fixture::Case;

/// One answer the fake upstream can give.
#[derive(Clone, Debug)]
pub struct Route {
    pub method: String,
    pub url: String,
    pub header_constraints: Vec<Header>,
    pub body_constraint: Option<String>,
    pub status: u16,
    pub headers: Vec<Header>,
    pub body: Vec<u8>,
}

#[derive(Default)]
struct Inner {
    routes: Vec<Route>,
    /// Answers GETs no route matches from `DIR/HOST/PATH` files.
    mirror: Option<std::path::PathBuf>,
    hits: Vec<String>,
    misses: Vec<String>,
    /// Answer these logical URLs only after a pause (slow upstream).
    delays: HashMap<String, Duration>,
    /// Delayed requests received so far (logical URLs), on arrival.
    delayed_arrivals: Vec<String>,
    /// While set, every request is answered with this status instead of
    /// its recorded exchange (a platform that broke).
    /// Every request answered with this instead of the recorded answers:
    /// (status, content type, body).
    outage: Option<(u16, &'static str, &'static str)>,
}

/// A running fake upstream; stops when dropped.
pub struct FakeUpstream {
    pub addr: SocketAddr,
    inner: Arc<Mutex<Inner>>,
    release: Arc<tokio::sync::Notify>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl FakeUpstream {
    /// Serve every exchange of the given cases.
    pub async fn start(cases: &[Case]) -> anyhow::Result<FakeUpstream> {
        let mut routes = Vec::new();
        for case in cases {
            for ex in &case.exchanges {
                routes.push(Route {
                    method: ex.request.method.to_ascii_uppercase(),
                    url: ex.request.url.clone(),
                    header_constraints: ex.request.headers.clone(),
                    body_constraint: ex.request.body.clone(),
                    status: ex.response.status,
                    headers: ex.response.headers.clone(),
                    body: case.body(ex)?,
                });
            }
        }
        Self::with_routes(routes).await
    }

    pub async fn with_routes(routes: Vec<Route>) -> anyhow::Result<FakeUpstream> {
        let inner = Arc::new(Mutex::new(Inner {
            routes,
            ..Default::default()
        }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = inner.clone();
        let release = Arc::new(tokio::sync::Notify::new());
        let released = release.clone();
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let state = state.clone();
                let released = released.clone();
                async move {
                    let logical = format!(
                        "https:/{}",
                        uri.path_and_query().map(|p| p.as_str()).unwrap_or("/")
                    );
                    let delay = state.lock().ok().and_then(|mut i| {
                        let d = i.delays.get(&logical).copied();
                        if d.is_some() {
                            i.delayed_arrivals.push(logical.clone());
                        }
                        d
                    });
                    if let Some(d) = delay {
                        tokio::select! {
                            _ = tokio::time::sleep(d) => {}
                            _ = released.notified() => {}
                        }
                    }
                    answer(&state, method, uri, headers, body)
                }
            },
        );
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(FakeUpstream {
            addr,
            inner,
            release,
            _shutdown: tx,
        })
    }

    /// Answer `url` (a logical `https://host/path?q`) only after `delay`.
    pub fn set_delay(&self, url: &str, delay: Duration) {
        if let Ok(mut i) = self.inner.lock() {
            i.delays.insert(url.to_string(), delay);
        }
    }

    /// Delayed requests that have arrived (answered or still waiting).
    pub fn delayed_arrivals(&self) -> Vec<String> {
        self.inner
            .lock()
            .map(|i| i.delayed_arrivals.clone())
            .unwrap_or_default()
    }

    /// Answer every request now waiting out a delay.
    pub fn release_delayed(&self) {
        self.release.notify_waiters();
    }

    /// Also answer a GET that no recorded exchange matches from the file
    /// `dir/HOST/PATH` (query ignored), status 200: the quickest way to put
    /// a saved upstream answer behind the override before any case exists.
    pub fn with_mirror(self, dir: std::path::PathBuf) -> Self {
        if let Ok(mut i) = self.inner.lock() {
            i.mirror = Some(dir);
        }
        self
    }

    /// From now on answer every request with `status` and a short text
    /// body, whatever was recorded: the platform broke. Still counted.
    pub fn break_with(&self, status: u16) {
        if let Ok(mut i) = self.inner.lock() {
            i.outage = Some((status, "text/plain", "fake upstream: outage"));
        }
    }

    /// From now on answer every request `200` with `body` as JSON, whatever
    /// was recorded: the platform changed its answers' shape. Still counted.
    pub fn reshape_with(&self, body: &'static str) {
        if let Ok(mut i) = self.inner.lock() {
            i.outage = Some((200, "application/json", body));
        }
    }

    /// Answer from the recorded exchanges again.
    pub fn restore(&self) {
        if let Ok(mut i) = self.inner.lock() {
            i.outage = None;
        }
    }

    /// Every request received so far, answered from a route or not.
    pub fn requests(&self) -> usize {
        self.inner
            .lock()
            .map(|i| i.hits.len() + i.misses.len())
            .unwrap_or_default()
    }

    /// Answer one more route from now on (media behind a parse's URLs).
    pub fn add_route(&self, route: Route) {
        if let Ok(mut i) = self.inner.lock() {
            i.routes.push(route);
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Logical URLs requested so far (`METHOD https://host/path?q`).
    pub fn hits(&self) -> Vec<String> {
        self.inner
            .lock()
            .map(|i| i.hits.clone())
            .unwrap_or_default()
    }

    /// Requests no route matched.
    pub fn misses(&self) -> Vec<String> {
        self.inner
            .lock()
            .map(|i| i.misses.clone())
            .unwrap_or_default()
    }

    pub fn clear_hits(&self) {
        if let Ok(mut i) = self.inner.lock() {
            i.hits.clear();
            i.misses.clear();
        }
    }
}

fn answer(
    state: &Mutex<Inner>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let path_and_query = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let logical = format!("https:/{path_and_query}");
    let request_headers: Vec<Header> = headers
        .iter()
        .map(|(k, v)| Header::new(k.as_str(), String::from_utf8_lossy(v.as_bytes())))
        .collect();
    let Ok(mut inner) = state.lock() else {
        return Response::builder()
            .status(500)
            .body(Body::empty())
            .unwrap_or_default();
    };
    let line = format!("{method} {logical}");
    if let Some((status, content_type, body)) = inner.outage {
        inner.hits.push(line);
        return Response::builder()
            .status(status)
            .header("content-type", content_type)
            .body(Body::from(body))
            .unwrap_or_default();
    }
    // The most specific route wins: the one with the most header constraints.
    let route = inner
        .routes
        .iter()
        .filter(|r| {
            r.method == method.as_str()
                && r.url == logical
                && r.header_constraints.iter().all(|want| {
                    request_headers.iter().any(|h| {
                        h.name.eq_ignore_ascii_case(&want.name) && h.value.contains(&want.value)
                    })
                })
                && r.body_constraint
                    .as_ref()
                    .is_none_or(|b| b.as_bytes() == body.as_ref())
        })
        .max_by_key(|r| r.header_constraints.len() + usize::from(r.body_constraint.is_some()))
        .cloned();
    match route {
        Some(route) => {
            inner.hits.push(line);
            let mut builder = Response::builder().status(route.status);
            for h in &route.headers {
                // Bodies are served as recorded (already decoded): the length is ours to set.
                if !h.name.eq_ignore_ascii_case("content-length")
                    && !h.name.eq_ignore_ascii_case("content-encoding")
                    && !h.name.eq_ignore_ascii_case("transfer-encoding")
                {
                    builder = builder.header(&h.name, &h.value);
                }
            }
            builder.body(Body::from(route.body)).unwrap_or_default()
        }
        None if method == Method::GET
            && let Some(body) = inner.mirror.as_ref().and_then(|dir| {
                std::fs::read(dir.join(uri.path().trim_start_matches('/'))).ok()
            }) =>
        {
            inner.hits.push(line);
            let ct = match body.iter().find(|b| !b.is_ascii_whitespace()) {
                Some(b'{' | b'[') => "application/json",
                Some(b'<') => "text/html; charset=utf-8",
                _ => "application/octet-stream",
            };
            Response::builder()
                .status(200)
                .header("content-type", ct)
                .body(Body::from(body))
                .unwrap_or_default()
        }
        None => {
            inner.misses.push(line.clone());
            Response::builder()
                .status(StatusCode::NOT_FOUND)
                .header("content-type", "text/plain")
                .body(Body::from(format!(
                    "fake upstream: no recorded exchange for {line}"
                )))
                .unwrap_or_default()
        }
    }
}
