//! The only code that talks to the network. Every upstream request an
//! extractor plans goes through [`Fetcher::fetch`]: allowlist per extractor,
//! redirects re-checked at every hop, timeouts, a response-size cap,
//! refusal of non-public destinations in production, the bootstrap cache,
//! and the upstream override (DESIGN.md §5).

mod browser;
mod cache;
mod exits;
#[cfg(test)]
mod fingerprint;
mod guard;
mod identity;
mod media;
mod pacing;
mod profile;
mod sessions;
mod upstream;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mediaparse_sdk::urls::host_matches;
use mediaparse_sdk::{Header, HttpRequest, HttpResponse};

pub use browser::BrowserTrust;
pub use cache::BootstrapCache;
pub use exits::{AllCooling, Cooling, ExitLease, ExitPools, ExitSpec, ExitStatus, Outcome};
pub use identity::{Identity, RequestKind};
pub use media::MediaRequest;
pub use pacing::{Pace, Paced, Pacer, Slot};
pub use profile::{Device, FetchProfile, ProfileSetting, UnknownProfile};
pub use sessions::{SessionLease, SessionSpec, Sessions};
pub use upstream::UpstreamOverride;

/// Limits on upstream traffic.
#[derive(Clone, Debug)]
pub struct FetchLimits {
    /// Per request (one hop), connect through the last body byte.
    pub request_timeout: Duration,
    /// Largest response body accepted.
    pub max_body_bytes: usize,
    /// Redirect hops followed for one request.
    pub max_redirects: usize,
    /// The TLS/HTTP2 identity requests leave with (platform default or operator override).
    pub profile: ProfileSetting,
    /// Operator-run helper services the platform's extractor may call
    /// besides its declared api-hosts (`[platforms.X] helper_hosts`): exact
    /// host names or IP literals, reached directly (never through an exit),
    /// private addresses allowed — the operator vouches for them.
    pub helper_hosts: Vec<String>,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            request_timeout: Duration::from_secs(10),
            max_body_bytes: 8 * 1024 * 1024,
            max_redirects: 10,
            profile: ProfileSetting::default(),
            helper_hosts: Vec::new(),
        }
    }
}

impl FetchLimits {
    /// Is `url`'s host one of the operator's helper hosts?
    pub fn is_helper(&self, url: &url::Url) -> bool {
        let host = url.host_str().unwrap_or_default();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.helper_hosts.iter().any(|h| {
            h.trim_start_matches('[')
                .trim_end_matches(']')
                .eq_ignore_ascii_case(host)
        })
    }
}

impl FetchLimits {
    /// The defaults, with two undocumented-in-`--help` knobs read from the
    /// environment so the fault tests stay fast: `MEDIAPARSE_UPSTREAM_TIMEOUT_MS`
    /// and `MEDIAPARSE_UPSTREAM_MAX_BODY_BYTES`. Unparsable values are ignored.
    pub fn from_env() -> FetchLimits {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|v| *v > 0)
        };
        let mut limits = FetchLimits::default();
        if let Some(ms) = var("MEDIAPARSE_UPSTREAM_TIMEOUT_MS") {
            limits.request_timeout = Duration::from_millis(ms);
        }
        if let Some(bytes) = var("MEDIAPARSE_UPSTREAM_MAX_BODY_BYTES") {
            limits.max_body_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        }
        limits
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The extractor asked for a host it did not declare: an extractor bug.
    #[error("{0} is not on the extractor's declared api-hosts")]
    HostNotAllowed(String),
    #[error("invalid upstream URL {0:?}")]
    InvalidUrl(String),
    #[error("redirected to a non-public address ({0})")]
    PrivateDestination(String),
    #[error("more than {0} redirects")]
    TooManyRedirects(usize),
    #[error("the upstream did not answer in time")]
    Timeout,
    #[error("upstream response larger than {0} bytes")]
    TooLarge(usize),
    #[error("upstream connection failed: {0}")]
    Connect(String),
}

/// One raw HTTP hop as it was performed (`mediaparse record`): a followed
/// redirect is two hops. URLs are the platform's, never the override's.
#[derive(Clone, Debug)]
pub struct Hop {
    /// Which [`Fetcher::fetch`] call made it, in the order the calls began.
    pub call: usize,
    pub method: String,
    pub url: String,
    pub request_headers: Vec<Header>,
    pub request_body: Option<Vec<u8>>,
    pub status: u16,
    pub response_headers: Vec<Header>,
    pub response_body: Vec<u8>,
}

/// Where a recording fetcher writes its hops.
#[derive(Default)]
pub struct HopLog {
    calls: AtomicUsize,
    hops: Mutex<Vec<Hop>>,
}

impl HopLog {
    /// Every hop so far, grouped by call in the order the calls began.
    pub fn hops(&self) -> Vec<Hop> {
        let mut hops = self.hops.lock().map(|h| h.clone()).unwrap_or_default();
        hops.sort_by_key(|h| h.call);
        hops
    }
}

/// Told about every answer of one fetch — each redirect hop, then the final
/// answer — with the platform URL it came from and its headers: where a
/// session picks up the `Set-Cookie` of intermediate hops.
pub type HopObserver<'a> = dyn Fn(&str, &[Header]) + Sync + 'a;

/// One upstream request for an extractor, as the parse layer sees it: the
/// seam where tests put a fake upstream in place of [`Fetcher`].
pub trait Upstream: Send + Sync {
    /// [`Fetcher::fetch_with`]'s contract: `request` for `platform`, only to
    /// its `api_hosts`, within `limits`, through `proxy` if given.
    fn fetch<'a>(
        &'a self,
        platform: &'a str,
        api_hosts: &'a [String],
        request: &'a HttpRequest,
        limits: &'a FetchLimits,
        proxy: Option<&'a str>,
    ) -> futures::future::BoxFuture<'a, Result<HttpResponse, FetchError>>;

    /// [`Upstream::fetch`], telling `observer` about every answer on the way.
    /// An upstream that follows no redirects itself shows only the final one.
    fn fetch_observed<'a>(
        &'a self,
        platform: &'a str,
        api_hosts: &'a [String],
        request: &'a HttpRequest,
        limits: &'a FetchLimits,
        proxy: Option<&'a str>,
        observer: &'a HopObserver<'a>,
    ) -> futures::future::BoxFuture<'a, Result<HttpResponse, FetchError>> {
        Box::pin(async move {
            let answer = self
                .fetch(platform, api_hosts, request, limits, proxy)
                .await;
            if let Ok(response) = &answer {
                observer(&response.final_url, &response.headers);
            }
            answer
        })
    }
}

impl Upstream for Fetcher {
    fn fetch<'a>(
        &'a self,
        platform: &'a str,
        api_hosts: &'a [String],
        request: &'a HttpRequest,
        limits: &'a FetchLimits,
        proxy: Option<&'a str>,
    ) -> futures::future::BoxFuture<'a, Result<HttpResponse, FetchError>> {
        Box::pin(self.fetch_with(platform, api_hosts, request, limits, proxy))
    }

    fn fetch_observed<'a>(
        &'a self,
        platform: &'a str,
        api_hosts: &'a [String],
        request: &'a HttpRequest,
        limits: &'a FetchLimits,
        proxy: Option<&'a str>,
        observer: &'a HopObserver<'a>,
    ) -> futures::future::BoxFuture<'a, Result<HttpResponse, FetchError>> {
        Box::pin(self.fetch_hops(platform, api_hosts, request, limits, proxy, Some(observer)))
    }
}

/// Performs upstream requests for extractors.
pub struct Fetcher {
    client: reqwest::Client,
    /// One client per configured outbound proxy URL.
    proxied: Mutex<HashMap<String, reqwest::Client>>,
    /// The impersonating clients, per (profile, device, proxy).
    browser: browser::BrowserClients,
    upstream: Option<UpstreamOverride>,
    limits: FetchLimits,
    cache: BootstrapCache,
    recorder: Option<Arc<HopLog>>,
    /// [`UPSTREAM_CA_ENV`]'s root, trusted by the rustls clients (only with an override).
    upstream_root: Option<reqwest::Certificate>,
}

/// With an upstream override only (tests, benchmarks): a PEM file whose CA
/// both backends trust besides the public roots, so a fake upstream can
/// speak TLS on loopback. Ignored without `--upstream`: production always
/// verifies with the public roots alone.
pub const UPSTREAM_CA_ENV: &str = "MEDIAPARSE_UPSTREAM_TEST_CA";

/// The PEM of [`UPSTREAM_CA_ENV`], when set (and an override is in use).
fn upstream_test_ca(upstream: Option<&UpstreamOverride>) -> anyhow::Result<Option<Vec<u8>>> {
    let Some(path) = std::env::var_os(UPSTREAM_CA_ENV).filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    if upstream.is_none() {
        tracing::warn!("{UPSTREAM_CA_ENV} ignored: no upstream override");
        return Ok(None);
    }
    std::fs::read(&path)
        .map(Some)
        .map_err(|e| anyhow::anyhow!("{UPSTREAM_CA_ENV} {}: {e}", path.to_string_lossy()))
}

impl Fetcher {
    /// With an override every request goes to the fake upstream on loopback
    /// (tests, demos, replay); without one, only public addresses are reached.
    pub fn new(upstream: Option<UpstreamOverride>, limits: FetchLimits) -> anyhow::Result<Fetcher> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(limits.request_timeout)
            .connect_timeout(connect_timeout(&limits))
            .pool_max_idle_per_host(32)
            // No implicit proxies: `HTTP(S)_PROXY`/`ALL_PROXY` would send
            // requests past the public-only resolver. Proxies are the
            // operator's to name, per platform, in the configuration.
            .no_proxy();
        if upstream.is_none() {
            builder = builder.dns_resolver(Arc::new(guard::PublicOnlyResolver));
        }
        let test_ca = upstream_test_ca(upstream.as_ref())?;
        let upstream_root = test_ca
            .as_deref()
            .map(reqwest::Certificate::from_pem)
            .transpose()?;
        if let Some(root) = &upstream_root {
            builder = builder.add_root_certificate(root.clone());
        }
        let trust = BrowserTrust {
            public_only: upstream.is_none(),
            test_roots: test_ca,
        };
        Ok(Fetcher {
            client: builder.build()?,
            proxied: Mutex::new(HashMap::new()),
            browser: browser::BrowserClients::new(trust, connect_timeout(&limits)),
            upstream,
            limits,
            cache: BootstrapCache::new(1024),
            recorder: None,
            upstream_root,
        })
    }

    /// Tests only: the browser backend trusts these PEM roots instead of the
    /// public ones (the loopback fingerprint server's CA). Production never
    /// calls this; rustls keeps its own roots.
    pub fn with_test_roots(mut self, pem: Vec<u8>) -> Fetcher {
        let trust = BrowserTrust {
            public_only: self.upstream.is_none(),
            test_roots: Some(pem),
        };
        self.browser = browser::BrowserClients::new(trust, connect_timeout(&self.limits));
        self
    }

    /// The impersonating client for `profile` on `device` through `proxy`
    /// (`None` for rustls, which [`Fetcher::fetch_with`] serves itself).
    pub fn browser_client(
        &self,
        profile: FetchProfile,
        device: Device,
        proxy: Option<&str>,
    ) -> Result<Option<wreq::Client>, FetchError> {
        if profile == FetchProfile::Rustls {
            return Ok(None);
        }
        self.browser.client(profile, device, proxy).map(Some)
    }

    /// Record every hop into `log`. A recording fetcher never answers from
    /// the bootstrap cache, so the recording holds every exchange.
    pub fn with_recorder(mut self, log: Arc<HopLog>) -> Fetcher {
        self.recorder = Some(log);
        self
    }

    pub fn upstream(&self) -> Option<&UpstreamOverride> {
        self.upstream.as_ref()
    }

    /// Perform one planned request for `platform`, whose extractor declared `api_hosts`.
    pub async fn fetch(
        &self,
        platform: &str,
        api_hosts: &[String],
        request: &HttpRequest,
    ) -> Result<HttpResponse, FetchError> {
        self.fetch_with(platform, api_hosts, request, &self.limits, None)
            .await
    }

    /// [`Fetcher::fetch`] with the platform's limits and outbound proxy
    /// (operator configuration). With a proxy, the proxy resolves and
    /// reaches the destination; literal non-public addresses are still refused.
    pub async fn fetch_with(
        &self,
        platform: &str,
        api_hosts: &[String],
        request: &HttpRequest,
        limits: &FetchLimits,
        proxy: Option<&str>,
    ) -> Result<HttpResponse, FetchError> {
        self.fetch_hops(platform, api_hosts, request, limits, proxy, None)
            .await
    }

    /// [`Fetcher::fetch_with`], showing `observer` every hop's answer (a
    /// bootstrap-cache hit shows none: nothing new arrived).
    pub async fn fetch_hops(
        &self,
        platform: &str,
        api_hosts: &[String],
        request: &HttpRequest,
        limits: &FetchLimits,
        proxy: Option<&str>,
        observer: Option<&HopObserver<'_>>,
    ) -> Result<HttpResponse, FetchError> {
        // A helper service of the operator's is reached directly.
        let proxy = match parse_logical(&request.url) {
            Ok(url) if limits.is_helper(&url) => None,
            _ => proxy,
        };
        let client = self.client_for(proxy)?;
        let call = Call {
            client: &client,
            platform,
            limits,
            proxied: proxy.is_some(),
            proxy,
            observer,
        };
        if let Some(log) = &self.recorder {
            let n = log.calls.fetch_add(1, Ordering::SeqCst);
            return self
                .fetch_uncached(&call, api_hosts, request, Some(n))
                .await;
        }
        let cacheable = request.cache_ttl_seconds > 0;
        if cacheable && let Some(hit) = self.cache.get(platform, request) {
            return Ok(hit);
        }
        let response = self.fetch_uncached(&call, api_hosts, request, None).await?;
        if cacheable && response.is_success() {
            self.cache.put(
                platform,
                request,
                &response,
                Duration::from_secs(request.cache_ttl_seconds.into()),
            );
        }
        Ok(response)
    }

    fn client_for(&self, proxy: Option<&str>) -> Result<reqwest::Client, FetchError> {
        let Some(proxy) = proxy else {
            return Ok(self.client.clone());
        };
        let mut clients = self.proxied.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = clients.get(proxy) {
            return Ok(c.clone());
        }
        // The URL was checked when the configuration was loaded; the error
        // names no part of it (it may hold credentials).
        let bad = || FetchError::Connect("the configured proxy is unusable".into());
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.limits.request_timeout)
            .connect_timeout(connect_timeout(&self.limits))
            .pool_max_idle_per_host(32)
            .proxy(reqwest::Proxy::all(proxy).map_err(|_| bad())?);
        if let Some(root) = &self.upstream_root {
            builder = builder.add_root_certificate(root.clone());
        }
        let client = builder.build().map_err(|_| bad())?;
        clients.insert(proxy.to_string(), client.clone());
        Ok(client)
    }

    async fn fetch_uncached(
        &self,
        call: &Call<'_>,
        api_hosts: &[String],
        request: &HttpRequest,
        record_call: Option<usize>,
    ) -> Result<HttpResponse, FetchError> {
        let mut url = parse_logical(&request.url)?;
        let mut method = request.method.to_ascii_uppercase();
        let mut body = request.body.clone();
        let to_helper = call.limits.is_helper(&url);
        for hop in 0..=call.limits.max_redirects {
            self.admit(call.limits, api_hosts, to_helper, &url)?;
            if call.proxied
                && self.upstream.is_none()
                && let Some(url::Host::Domain(name)) = url.host()
            {
                guard::check_public_name(name)
                    .await
                    .map_err(|e| FetchError::PrivateDestination(e.0))?;
            }
            let started = Instant::now();
            let sent = self
                .send(call, &method, &url, &request.headers, body.as_deref())
                .await;
            let outcome = match &sent {
                Ok(_) => "ok",
                Err(FetchError::Timeout) => "timeout",
                Err(_) => "error",
            };
            mediaparse_metrics::global().upstream(
                call.platform,
                outcome,
                started.elapsed().as_secs_f64(),
            );
            let (status, headers, bytes) = sent?;
            tracing::debug!(target: "mediaparse::fetch", %method, url = %redact_query(&url), status, elapsed_ms = started.elapsed().as_millis() as u64, "upstream");
            let response = HttpResponse {
                request_url: request.url.clone(),
                final_url: url.to_string(),
                status,
                headers,
                body: bytes,
            };
            if let Some(observe) = call.observer {
                observe(&response.final_url, &response.headers);
            }
            if let (Some(log), Some(record_call)) = (&self.recorder, record_call) {
                let shown = self.presented(response.clone());
                if let Ok(mut hops) = log.hops.lock() {
                    hops.push(Hop {
                        call: record_call,
                        method: method.clone(),
                        // As planned for the first hop (replay matches it exactly).
                        url: if hop == 0 {
                            request.url.clone()
                        } else {
                            url.to_string()
                        },
                        request_headers: request.headers.clone(),
                        request_body: body.clone(),
                        status,
                        response_headers: shown.headers,
                        response_body: shown.body,
                    });
                }
            }
            if !(request.follow_redirects && response.is_redirect()) {
                return Ok(self.presented(response));
            }
            let Some(location) = response.header("location") else {
                return Ok(self.presented(response));
            };
            url = self.next_hop(&url, location)?;
            if status == 303 || ((status == 301 || status == 302) && method == "POST") {
                method = "GET".into();
                body = None;
            }
        }
        Err(FetchError::TooManyRedirects(call.limits.max_redirects))
    }

    /// The response as the extractor sees it: `Location` naming the fake
    /// upstream is turned back into the platform URL it stands for.
    fn presented(&self, mut response: HttpResponse) -> HttpResponse {
        if let Some(up) = &self.upstream {
            for h in response
                .headers
                .iter_mut()
                .filter(|h| h.name.eq_ignore_ascii_case("location"))
            {
                if let Some(logical) = up.to_logical(&h.value) {
                    h.value = logical;
                }
            }
        }
        response
    }

    fn next_hop(&self, current: &url::Url, location: &str) -> Result<url::Url, FetchError> {
        let location = location.trim();
        if let Some(up) = &self.upstream
            && let Some(logical) = up.to_logical(location)
        {
            return parse_logical(&logical);
        }
        let next = current
            .join(location)
            .map_err(|_| FetchError::InvalidUrl(location.into()))?;
        if !matches!(next.scheme(), "http" | "https") {
            return Err(FetchError::InvalidUrl(location.into()));
        }
        Ok(next)
    }

    /// May this hop go to `url`? A request the extractor sent to one of the
    /// operator's helper hosts stays exempt from the platform rules while it
    /// stays on helper hosts; a platform's answer redirecting to a helper
    /// host is checked like any other hop (and refused: not the platform's,
    /// and usually private), so a platform cannot steer a parse into them.
    fn admit(
        &self,
        limits: &FetchLimits,
        api_hosts: &[String],
        to_helper: bool,
        url: &url::Url,
    ) -> Result<(), FetchError> {
        if to_helper && limits.is_helper(url) {
            return Ok(());
        }
        self.check_destination(api_hosts, url)
    }

    fn check_destination(&self, api_hosts: &[String], url: &url::Url) -> Result<(), FetchError> {
        let host = url.host_str().unwrap_or_default();
        if self.upstream.is_none()
            && let Some(ip) = guard::literal_ip(url)
            && !guard::is_public(ip)
        {
            return Err(FetchError::PrivateDestination(ip.to_string()));
        }
        if !api_hosts.iter().any(|p| host_matches(host, p)) {
            return Err(FetchError::HostNotAllowed(host.to_string()));
        }
        Ok(())
    }

    async fn send(
        &self,
        call: &Call<'_>,
        method: &str,
        url: &url::Url,
        headers: &[Header],
        body: Option<&[u8]>,
    ) -> Result<(u16, Vec<Header>, Vec<u8>), FetchError> {
        let wire_url = match &self.upstream {
            Some(up) => up.to_wire(url),
            None => url.clone(),
        };
        let user_agent = headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("user-agent"))
            .map(|h| h.value.as_str());
        // A plain-http destination (only the upstream override sends one) has
        // no TLS to fingerprint; through a proxy the browser backend would
        // tunnel it with CONNECT, which proxies refuse for non-TLS ports, so it
        // is forwarded by the plain client instead.
        let profile = if wire_url.scheme() == "http" && call.proxy.is_some() {
            FetchProfile::Rustls
        } else {
            call.limits.profile.resolve(user_agent)
        };
        // The User-Agent, client hints and header order follow the profile.
        let identity = identity::dress(profile, method, url, headers);
        if let Some(client) = self.browser_client(identity.profile, identity.device, call.proxy)? {
            return browser::send(
                &client,
                method,
                &wire_url,
                &identity.headers,
                body,
                call.limits.request_timeout,
                call.limits.max_body_bytes,
            )
            .await;
        }
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|_| FetchError::InvalidUrl(format!("bad method {method}")))?;
        let mut builder = call
            .client
            .request(method, wire_url)
            .timeout(call.limits.request_timeout);
        for h in headers {
            if is_forwardable(&h.name) {
                builder = builder.header(&h.name, &h.value);
            }
        }
        if let Some(body) = body {
            builder = builder.body(body.to_vec());
        }
        let mut response = builder.send().await.map_err(classify)?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| Header::new(k.as_str(), String::from_utf8_lossy(v.as_bytes())))
            .collect();
        let cap = call.limits.max_body_bytes;
        if let Some(len) = response.content_length()
            && len as usize > cap
        {
            return Err(FetchError::TooLarge(cap));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(classify)? {
            if bytes.len() + chunk.len() > cap {
                return Err(FetchError::TooLarge(cap));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok((status, headers, bytes))
    }
}

/// One request's client, limits and outbound proxy.
struct Call<'a> {
    client: &'a reqwest::Client,
    platform: &'a str,
    limits: &'a FetchLimits,
    /// Through an operator's proxy, which resolves names itself.
    proxied: bool,
    proxy: Option<&'a str>,
    /// Shown every hop's answer (session cookie pick-up).
    observer: Option<&'a HopObserver<'a>>,
}

fn connect_timeout(limits: &FetchLimits) -> Duration {
    limits.request_timeout.min(Duration::from_secs(5))
}

fn parse_logical(raw: &str) -> Result<url::Url, FetchError> {
    let url = url::Url::parse(raw).map_err(|_| FetchError::InvalidUrl(raw.into()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(FetchError::InvalidUrl(raw.into()));
    }
    Ok(url)
}

/// Hop-by-hop and transport headers are the client's to set.
fn is_forwardable(name: &str) -> bool {
    ![
        "host",
        "content-length",
        "connection",
        "transfer-encoding",
        "keep-alive",
        "upgrade",
        "te",
        "trailer",
        "proxy-authorization",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h))
}

fn classify(e: reqwest::Error) -> FetchError {
    if e.is_timeout() {
        return FetchError::Timeout;
    }
    let mut source: Option<&dyn std::error::Error> = Some(&e);
    while let Some(err) = source {
        if let Some(private) = err.downcast_ref::<guard::PrivateAddress>() {
            return FetchError::PrivateDestination(private.0.clone());
        }
        source = err.source();
    }
    FetchError::Connect(e.without_url().to_string())
}

/// Log URLs without their query (it may carry tokens).
fn redact_query(url: &url::Url) -> String {
    format!(
        "{}://{}{}",
        url.scheme(),
        url.host_str().unwrap_or_default(),
        url.path()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Production mode: no upstream override, the public-only resolver.
    fn production() -> Fetcher {
        Fetcher::new(None, FetchLimits::default()).expect("client builds")
    }

    /// A redirect from a platform page to a non-public address is refused
    /// before any connection: every hop goes through `next_hop` and then
    /// `check_destination`, exactly as `fetch_uncached` does.
    #[test]
    fn production_refuses_redirects_to_non_public_addresses() {
        let fetcher = production();
        let from = url::Url::parse("https://www.tiktok.com/@a/video/1").unwrap();
        // Even if an extractor declared these hosts, the address check comes first.
        let hosts: Vec<String> = [
            "www.tiktok.com",
            "127.0.0.1",
            "10.0.0.8",
            "169.254.169.254",
            "[::1]",
            "::1",
        ]
        .map(String::from)
        .to_vec();
        for location in [
            "http://127.0.0.1/",
            "http://127.0.0.1:8080/admin",
            "https://10.0.0.8/internal",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]/",
            "http://[::1]:9000/x",
            "http://[::ffff:127.0.0.1]/",
            "http://2130706433/",
            "http://0x7f.1/",
        ] {
            let next = fetcher.next_hop(&from, location).unwrap();
            match fetcher.check_destination(&hosts, &next) {
                Err(FetchError::PrivateDestination(_)) => {}
                other => panic!("{location} → {next}: {other:?}"),
            }
        }
        // With the override (tests, replay), the address rule is the fake upstream's business.
        let replay = Fetcher::new(
            Some(UpstreamOverride::parse("http://127.0.0.1:9").unwrap()),
            FetchLimits::default(),
        )
        .unwrap();
        let next = replay.next_hop(&from, "http://127.0.0.1/").unwrap();
        assert!(matches!(replay.check_destination(&hosts, &next), Ok(())));
    }

    /// Helper hosts are exempt only for requests the extractor sent to them:
    /// a platform's redirect to one is refused like any private address.
    #[test]
    fn a_platform_cannot_redirect_into_a_helper_host() {
        let fetcher = production();
        let limits = FetchLimits {
            helper_hosts: vec!["127.0.0.1".into()],
            ..FetchLimits::default()
        };
        let hosts = vec!["www.tiktok.com".to_string()];
        let from = url::Url::parse("https://www.tiktok.com/@a/video/1").unwrap();
        let next = fetcher
            .next_hop(&from, "http://127.0.0.1:4416/get_pot")
            .unwrap();
        match fetcher.admit(&limits, &hosts, false, &next) {
            Err(FetchError::PrivateDestination(_)) => {}
            other => panic!("{other:?}"),
        }
        // The extractor's own request to the helper (and its hops on helper hosts) pass.
        assert!(matches!(
            fetcher.admit(&limits, &hosts, true, &next),
            Ok(())
        ));
        // A helper's redirect to a platform host is checked as a platform hop.
        let elsewhere = url::Url::parse("https://evil.example/x").unwrap();
        assert!(matches!(
            fetcher.admit(&limits, &hosts, true, &elsewhere),
            Err(FetchError::HostNotAllowed(_))
        ));
    }

    /// The whole fetch, against a real listener on loopback: refused, and
    /// the listener never sees a connection. Names resolving only to
    /// loopback (`localhost`) are refused by the resolver.
    #[tokio::test]
    async fn production_fetch_never_connects_to_loopback() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let fetcher = production();
        for (host, url) in [
            ("127.0.0.1", format!("http://127.0.0.1:{port}/")),
            ("localhost", format!("http://localhost:{port}/")),
        ] {
            let request = HttpRequest::get(url.clone());
            match fetcher.fetch("tiktok", &[host.to_string()], &request).await {
                Err(FetchError::PrivateDestination(_)) => {}
                other => panic!("{url}: {other:?}"),
            }
        }
        assert!(
            listener.accept().is_err(),
            "the loopback listener was reached"
        );
    }

    /// An operator's helper host (`helper_hosts`) on loopback is reached in
    /// production mode, directly (the platform's proxy is not asked), though
    /// the extractor did not declare it; other loopback ports stay refused.
    #[tokio::test]
    async fn helper_hosts_are_reached_directly_even_on_loopback() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let helper = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = helper.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (mut conn, _) = helper.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            let _ = conn.read(&mut buf).await.unwrap();
            conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 15\r\nconnection: close\r\n\r\n{\"poToken\":\"t\"}")
                .await
                .unwrap();
        });
        let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        proxy.set_nonblocking(true).unwrap();
        let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
        let fetcher = production();
        let limits = FetchLimits {
            helper_hosts: vec!["127.0.0.1".into()],
            ..FetchLimits::default()
        };
        let request = HttpRequest::post(format!("http://127.0.0.1:{port}/get_pot"), "{}");
        let answer = fetcher
            .fetch_with("tiktok", &[], &request, &limits, Some(&proxy_url))
            .await
            .unwrap();
        assert_eq!(
            (answer.status, answer.text().as_ref()),
            (200, "{\"poToken\":\"t\"}")
        );
        server.await.unwrap();
        assert!(proxy.accept().is_err(), "the proxy was asked");
        // Without the setting the same request is refused.
        let request = HttpRequest::get(format!("http://127.0.0.1:{port}/"));
        match fetcher
            .fetch("tiktok", &["127.0.0.1".into()], &request)
            .await
        {
            Err(FetchError::PrivateDestination(_)) => {}
            other => panic!("{other:?}"),
        }
    }

    /// Through an operator's proxy the proxy resolves names, so the fetcher
    /// checks them first: a name resolving to loopback is refused and the
    /// proxy never sees the request.
    #[tokio::test]
    async fn proxied_requests_still_refuse_non_public_names() {
        let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        proxy.set_nonblocking(true).unwrap();
        let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
        let fetcher = production();
        let request = HttpRequest::get("http://localhost:9/".to_string());
        let limits = FetchLimits::default();
        match fetcher
            .fetch_with(
                "tiktok",
                &["localhost".into()],
                &request,
                &limits,
                Some(&proxy_url),
            )
            .await
        {
            Err(FetchError::PrivateDestination(_)) => {}
            other => panic!("{other:?}"),
        }
        assert!(proxy.accept().is_err(), "the proxy was asked");
    }

    /// Set by [`environment_proxies_are_ignored`] for its child process.
    const CHILD: &str = "MEDIAPARSE_TEST_ENV_PROXY_CHILD";

    /// `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` pointing at a loopback
    /// listener are ignored: the request is refused by the public-only
    /// resolver and the "proxy" never sees a connection. reqwest reads the
    /// environment once per process, so the fetch runs in a child process
    /// (this test binary, filtered to the test below) started with them set.
    #[test]
    fn environment_proxies_are_ignored() {
        let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        proxy.set_nonblocking(true).unwrap();
        let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args(["--exact", "tests::env_proxy_child", "--nocapture"])
            .env(CHILD, "1");
        for var in [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            child.env(var, &proxy_url);
        }
        for var in ["NO_PROXY", "no_proxy", "REQUEST_METHOD"] {
            child.env_remove(var);
        }
        let out = child.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "child: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(proxy.accept().is_err(), "the environment's proxy was used");
    }

    #[tokio::test]
    async fn env_proxy_child() {
        if std::env::var_os(CHILD).is_none() {
            return; // only meaningful inside environment_proxies_are_ignored
        }
        let limits = FetchLimits {
            request_timeout: Duration::from_secs(2),
            ..FetchLimits::default()
        };
        let fetcher = Fetcher::new(None, limits).unwrap();
        let request = HttpRequest::get("http://localhost:9/".to_string());
        match fetcher
            .fetch("tiktok", &["localhost".into()], &request)
            .await
        {
            Err(FetchError::PrivateDestination(_)) => {}
            other => panic!("{other:?}"),
        }
    }
}
