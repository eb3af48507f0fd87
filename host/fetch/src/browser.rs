//! The impersonating backend: wreq on BoringSSL with wreq-util's browser
//! emulations reproduces a browser's ClientHello (cipher and extension
//! order, GREASE, ALPN, key shares, certificate compression) and HTTP/2
//! preface (SETTINGS, WINDOW_UPDATE, pseudo-header order, priority).
//!
//! The transport is emulated here; the headers come from
//! [`super::identity`] (the profile's User-Agent, client hints and header
//! order around the extractor's planned headers), and go out in the order
//! given, planned names in their planned spelling over HTTP/1.1.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use futures::StreamExt;
use mediaparse_sdk::Header;
use wreq_util::{Emulation, Platform, Profile};

use super::guard::{self, PrivateAddress};
use super::profile::{Device, FetchProfile};
use super::{FetchError, is_forwardable};

/// The browser versions each profile reproduces. Their published
/// fingerprints are the constants the fingerprint tests check against.
fn wreq_profile(profile: FetchProfile, device: Device) -> Option<Profile> {
    Some(match (profile, device) {
        (FetchProfile::Chrome, _) => Profile::Chrome143,
        (FetchProfile::Safari, Device::Ios) => Profile::SafariIos18_1_1,
        (FetchProfile::Safari, _) => Profile::Safari18_2,
        (FetchProfile::Firefox, _) => Profile::Firefox133,
        (FetchProfile::OkHttp, _) => Profile::OkHttp4_9,
        (FetchProfile::Rustls, _) => return None,
    })
}

fn platform(device: Device) -> Platform {
    match device {
        Device::Windows => Platform::Windows,
        Device::MacOs => Platform::MacOS,
        Device::Linux => Platform::Linux,
        Device::Android => Platform::Android,
        Device::Ios => Platform::IOS,
    }
}

/// How the clients verify and resolve.
#[derive(Clone, Default)]
pub struct BrowserTrust {
    /// Production: names resolving to non-public addresses are refused.
    pub public_only: bool,
    /// Tests only: PEM certificates trusted *instead of* the public roots
    /// (the loopback fingerprint server's CA). `None` in production.
    pub test_roots: Option<Vec<u8>>,
}

/// What one client is for: an identity, the device it claims, the exit.
type ClientKey = (FetchProfile, Device, Option<String>);

/// One wreq client per (profile, device, outbound proxy), built on first use.
pub struct BrowserClients {
    trust: BrowserTrust,
    connect_timeout: Duration,
    clients: Mutex<HashMap<ClientKey, wreq::Client>>,
}

impl BrowserClients {
    pub fn new(trust: BrowserTrust, connect_timeout: Duration) -> BrowserClients {
        BrowserClients {
            trust,
            connect_timeout,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The client for `profile` on `device`, through `proxy` if given.
    pub fn client(
        &self,
        profile: FetchProfile,
        device: Device,
        proxy: Option<&str>,
    ) -> Result<wreq::Client, FetchError> {
        let key = (profile, device, proxy.map(str::to_string));
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = clients.get(&key) {
            return Ok(c.clone());
        }
        let Some(wreq_profile) = wreq_profile(profile, device) else {
            return Err(FetchError::Connect(
                "rustls is not a browser profile".into(),
            ));
        };
        let emulation = Emulation::builder()
            .profile(wreq_profile)
            .platform(platform(device))
            .headers(false)
            .build();
        let mut builder = wreq::Client::builder()
            .emulation(emulation)
            .redirect(wreq::redirect::Policy::none())
            .connect_timeout(self.connect_timeout)
            .pool_max_idle_per_host(32)
            // No implicit proxies: only the operator's, named per platform.
            .no_proxy();
        if self.trust.public_only {
            builder = builder.dns_resolver(PublicOnly);
        }
        if let Some(pem) = &self.trust.test_roots {
            let store = wreq::tls::trust::CertStore::from_pem_stack(pem.as_slice())
                .map_err(|e| FetchError::Connect(format!("test roots: {e}")))?;
            builder = builder.tls_cert_store(store);
        }
        if let Some(proxy) = proxy {
            // The URL was checked when the configuration was loaded; the
            // error names no part of it (it may hold credentials).
            let proxy = wreq::Proxy::all(proxy)
                .map_err(|_| FetchError::Connect("the configured proxy is unusable".into()))?;
            builder = builder.proxy(proxy);
        }
        let client = builder
            .build()
            .map_err(|e| FetchError::Connect(format!("browser client: {e}")))?;
        clients.insert(key, client.clone());
        Ok(client)
    }
}

/// One request through `client`: status, response headers and the body,
/// capped at `max_body_bytes`.
pub async fn send(
    client: &wreq::Client,
    method: &str,
    url: &url::Url,
    headers: &[Header],
    body: Option<&[u8]>,
    timeout: Duration,
    max_body_bytes: usize,
) -> Result<(u16, Vec<Header>, Vec<u8>), FetchError> {
    let method = wreq::Method::from_bytes(method.as_bytes())
        .map_err(|_| FetchError::InvalidUrl(format!("bad method {method}")))?;
    let mut builder = client
        .request(method, url.as_str())
        .timeout(timeout)
        .orig_headers(planned_spelling(headers));
    for h in headers.iter().filter(|h| is_forwardable(&h.name)) {
        builder = builder.header(h.name.as_str(), h.value.as_str());
    }
    if let Some(body) = body {
        builder = builder.body(body.to_vec());
    }
    let response = builder.send().await.map_err(classify)?;
    let status = response.status().as_u16();
    let response_headers = response
        .headers()
        .iter()
        .map(|(k, v)| Header::new(k.as_str(), String::from_utf8_lossy(v.as_bytes())))
        .collect();
    if let Some(len) = response.content_length()
        && len as usize > max_body_bytes
    {
        return Err(FetchError::TooLarge(max_body_bytes));
    }
    let mut bytes = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(classify)?;
        if bytes.len() + chunk.len() > max_body_bytes {
            return Err(FetchError::TooLarge(max_body_bytes));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((status, response_headers, bytes))
}

/// HTTP/1.1 header names go out spelled and ordered as given (HTTP/2
/// lowercases them, as browsers do).
fn planned_spelling(headers: &[Header]) -> wreq::header::OrigHeaderMap {
    let mut orig = wreq::header::OrigHeaderMap::new();
    for h in headers.iter().filter(|h| is_forwardable(&h.name)) {
        orig.insert(h.name.clone());
    }
    orig
}

fn classify(e: wreq::Error) -> FetchError {
    // Without the URL: its query may carry tokens.
    let e = e.without_uri();
    if e.is_timeout() {
        return FetchError::Timeout;
    }
    let mut source: Option<&dyn std::error::Error> = Some(&e);
    while let Some(err) = source {
        if let Some(private) = err.downcast_ref::<PrivateAddress>() {
            return FetchError::PrivateDestination(private.0.clone());
        }
        source = err.source();
    }
    FetchError::Connect(e.to_string())
}

/// [`guard::PublicOnlyResolver`]'s rule for wreq's resolver trait.
struct PublicOnly;

impl wreq::dns::Resolve for PublicOnly {
    fn resolve(&self, name: wreq::dns::Name) -> wreq::dns::Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| guard::is_public(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err(
                    Box::new(PrivateAddress(host)) as Box<dyn std::error::Error + Send + Sync>
                );
            }
            Ok(Box::new(addrs.into_iter()) as wreq::dns::Addrs)
        })
    }
}
