//! Where a webhook may be sent: the policy for a callback URL.
//!
//! - [`check_syntax`] (cheap, no network; what an endpoint taking a
//!   `callback_url` answers `400` with): `https` only, or plain `http` in
//!   test mode to a loopback address; no user-info, no fragment, a host, at
//!   most [`MAX_URL_BYTES`].
//! - [`resolve`] (at every attempt, since DNS may change): the host's
//!   addresses from a [`Resolver`]; **every** one must be public (or, in
//!   test mode, loopback). The request is then made to exactly these
//!   addresses ([`Destination::client`] pins them, so nothing resolves the
//!   name a second time), follows no redirect and takes at most
//!   [`TIMEOUT`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use ipnet::{Ipv4Net, Ipv6Net};
use url::{Host, Url};

use super::WebhookError;

/// The longest callback URL accepted.
pub const MAX_URL_BYTES: usize = 2048;

/// How long one delivery attempt may take, connection included.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Addresses resolved for one host at most (the rest are not tried).
const MAX_ADDRESSES: usize = 16;

/// Whether loopback receivers are allowed: only in test mode (the upstream
/// override is on and the service listens on loopback).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Production,
    Test,
}

/// Check `url`'s form without touching the network.
pub fn check_syntax(url: &str, mode: Mode) -> Result<Url, WebhookError> {
    let refuse = |why: &str| Err(WebhookError::Destination(why.to_string()));
    if url.len() > MAX_URL_BYTES {
        return refuse("the URL is longer than 2048 bytes");
    }
    let parsed =
        Url::parse(url).map_err(|e| WebhookError::Destination(format!("not a URL: {e}")))?;
    match (parsed.scheme(), mode) {
        ("https", _) => {}
        ("http", Mode::Test) => {}
        ("http", Mode::Production) => return refuse("only https URLs are accepted"),
        _ => return refuse("only https URLs are accepted"),
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return refuse("the URL may not carry a user name or password");
    }
    if parsed.fragment().is_some() {
        return refuse("the URL may not carry a fragment");
    }
    if parsed.port() == Some(0) {
        return refuse("port 0 is not a destination");
    }
    match parsed.host() {
        None => return refuse("the URL has no host"),
        Some(Host::Domain("")) => return refuse("the URL has no host"),
        _ => {}
    }
    if parsed.scheme() == "http" {
        let loopback = match parsed.host() {
            Some(Host::Ipv4(ip)) => ip.is_loopback(),
            Some(Host::Ipv6(ip)) => ip.is_loopback(),
            Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        if !loopback {
            return refuse("plain http is accepted in test mode only, to a loopback address");
        }
    }
    Ok(parsed)
}

/// Looks names up. The service uses the system's resolver ([`SystemResolver`]);
/// tests inject fixed answers.
pub trait Resolver: Send + Sync {
    fn lookup(
        &self,
        host: &str,
        port: u16,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = std::io::Result<Vec<SocketAddr>>> + Send + '_>,
    >;
}

/// The system's resolver (`getaddrinfo` through tokio).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup(
        &self,
        host: &str,
        port: u16,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = std::io::Result<Vec<SocketAddr>>> + Send + '_>,
    > {
        let target = format!("{host}:{port}");
        Box::pin(async move { Ok(tokio::net::lookup_host(target).await?.collect()) })
    }
}

/// A checked destination: the URL and the addresses it may be sent to.
#[derive(Clone, Debug)]
pub struct Destination {
    pub url: Url,
    pub addresses: Vec<SocketAddr>,
}

/// Check `url`, resolve its host and check every address it resolves to.
pub async fn resolve(
    url: &str,
    mode: Mode,
    resolver: &dyn Resolver,
) -> Result<Destination, WebhookError> {
    let url = check_syntax(url, mode)?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| WebhookError::Destination("the URL has no port".into()))?;
    let mut addresses: Vec<SocketAddr> = match url.host() {
        Some(Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
        Some(Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
        Some(Host::Domain(name)) => {
            let looked_up = tokio::time::timeout(TIMEOUT, resolver.lookup(name, port))
                .await
                .map_err(|_| {
                    WebhookError::Destination("the host name did not resolve in time".into())
                })?
                .map_err(|e| {
                    WebhookError::Destination(format!("the host name does not resolve: {e}"))
                })?;
            looked_up
                .into_iter()
                .map(|a| SocketAddr::new(a.ip(), port))
                .collect()
        }
        None => return Err(WebhookError::Destination("the URL has no host".into())),
    };
    if addresses.is_empty() {
        return Err(WebhookError::Destination(
            "the host name resolves to no address".into(),
        ));
    }
    addresses.truncate(MAX_ADDRESSES);
    for a in &addresses {
        let ip = canonical(a.ip());
        let allowed = is_public(ip) || (mode == Mode::Test && ip.is_loopback());
        if !allowed {
            return Err(WebhookError::Destination(format!(
                "the host resolves to {ip}, which is not a public address"
            )));
        }
    }
    Ok(Destination { url, addresses })
}

impl Destination {
    /// An HTTP client that reaches this destination's host only at the
    /// checked addresses, follows no redirect and gives up after [`TIMEOUT`].
    pub fn client(&self) -> Result<reqwest::Client, WebhookError> {
        let mut builder = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve the name itself.
            .no_proxy()
            .user_agent(concat!("mediaparse-webhooks/", env!("CARGO_PKG_VERSION")));
        if let Some(Host::Domain(name)) = self.url.host() {
            builder = builder.resolve_to_addrs(name, &self.addresses);
        }
        builder
            .build()
            .map_err(|e| WebhookError::Destination(format!("no HTTP client: {e}")))
    }
}

/// An IPv4 address inside IPv6 (mapped `::ffff:a.b.c.d`, or NAT64
/// `64:ff9b::a.b.c.d`) is judged as the IPv4 address it reaches.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                let o = v6.octets();
                return IpAddr::V4(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
            }
            IpAddr::V6(v6)
        }
        v4 => v4,
    }
}

/// IPv4 ranges that are not the public internet.
const V4_REFUSED: &[(Ipv4Addr, u8)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8),       // "this network", unspecified
    (Ipv4Addr::new(10, 0, 0, 0), 8),      // private
    (Ipv4Addr::new(100, 64, 0, 0), 10),   // carrier-grade NAT
    (Ipv4Addr::new(127, 0, 0, 0), 8),     // loopback
    (Ipv4Addr::new(169, 254, 0, 0), 16),  // link-local (cloud metadata)
    (Ipv4Addr::new(172, 16, 0, 0), 12),   // private
    (Ipv4Addr::new(192, 0, 0, 0), 24),    // IETF protocol assignments
    (Ipv4Addr::new(192, 0, 2, 0), 24),    // documentation
    (Ipv4Addr::new(192, 88, 99, 0), 24),  // 6to4 relay anycast
    (Ipv4Addr::new(192, 168, 0, 0), 16),  // private
    (Ipv4Addr::new(198, 18, 0, 0), 15),   // benchmarking
    (Ipv4Addr::new(198, 51, 100, 0), 24), // documentation
    (Ipv4Addr::new(203, 0, 113, 0), 24),  // documentation
    (Ipv4Addr::new(224, 0, 0, 0), 4),     // multicast
    (Ipv4Addr::new(240, 0, 0, 0), 4),     // reserved, broadcast
];

/// IPv6 ranges inside global unicast (2000::/3) that are not the public internet.
const V6_REFUSED: &[(Ipv6Addr, u8)] = &[
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23), // IETF protocol assignments, Teredo
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32), // documentation
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16), // 6to4 (reaches any IPv4 address)
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20), // documentation
];

/// Whether `ip` is a public unicast address. IPv6 must be global unicast
/// (2000::/3), which leaves out loopback, unspecified, unique-local
/// (fc00::/7), link-local, site-local, multicast and the IPv4-compatible forms.
pub fn is_public(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => !V4_REFUSED
            .iter()
            .any(|(net, len)| Ipv4Net::new(*net, *len).is_ok_and(|n| n.contains(&v4))),
        IpAddr::V6(v6) => {
            let global_unicast = (v6.segments()[0] & 0xe000) == 0x2000;
            global_unicast
                && !V6_REFUSED
                    .iter()
                    .any(|(net, len)| Ipv6Net::new(*net, *len).is_ok_and(|n| n.contains(&v6)))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Fixed answers, as a DNS server under the test's control would give.
    struct FixedResolver(HashMap<&'static str, Vec<IpAddr>>);

    impl Resolver for FixedResolver {
        fn lookup(
            &self,
            host: &str,
            port: u16,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = std::io::Result<Vec<SocketAddr>>> + Send + '_>,
        > {
            let found = self.0.get(host).cloned();
            Box::pin(async move {
                found
                    .map(|ips| {
                        ips.into_iter()
                            .map(|ip| SocketAddr::new(ip, port))
                            .collect()
                    })
                    .ok_or_else(|| std::io::Error::other("no such host"))
            })
        }
    }

    fn resolver() -> FixedResolver {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        FixedResolver(HashMap::from([
            ("hooks.example.com", vec![ip("93.184.215.14")]),
            ("inside.example.com", vec![ip("10.1.2.3")]),
            // One public and one private address: refused as a whole.
            (
                "mixed.example.com",
                vec![ip("93.184.215.14"), ip("192.168.1.1")],
            ),
            (
                "v6.example.com",
                vec![ip("2606:2800:21f:cb07:6820:80da:af6b:8b2c")],
            ),
            ("ula.example.com", vec![ip("fd00::1")]),
            ("localhost", vec![ip("127.0.0.1")]),
        ]))
    }

    async fn check(url: &str, mode: Mode) -> Result<Destination, WebhookError> {
        resolve(url, mode, &resolver()).await
    }

    #[tokio::test]
    async fn private_and_special_addresses_are_refused_outside_test_mode() {
        for url in [
            "https://127.0.0.1/hook",
            "https://127.1.2.3:8443/hook",
            "https://10.0.0.1/hook",
            "https://172.16.5.4/hook",
            "https://192.168.0.10/hook",
            "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/hook",
            "https://0.0.0.0/hook",
            "https://224.0.0.1/hook",
            "https://255.255.255.255/hook",
            "https://192.0.2.1/hook",
            "https://[::1]/hook",
            "https://[::]/hook",
            "https://[fc00::1]/hook",
            "https://[fe80::1]/hook",
            "https://[ff02::1]/hook",
            "https://[::ffff:10.0.0.1]/hook",
            "https://[::ffff:127.0.0.1]/hook",
            "https://[64:ff9b::a00:1]/hook",
            "https://[2001:db8::1]/hook",
            "https://[2002:a00:1::]/hook",
            // Spellings the URL parser turns into 127.0.0.1 / 10.0.0.1.
            "https://2130706433/hook",
            "https://0x7f.1/hook",
            "https://012.0.0.1/hook",
            "https://inside.example.com/hook",
            "https://mixed.example.com/hook",
            "https://ula.example.com/hook",
            "https://localhost/hook",
        ] {
            let refused = check(url, Mode::Production).await;
            assert!(
                matches!(refused, Err(WebhookError::Destination(_))),
                "{url} was accepted: {refused:?}"
            );
        }
    }

    #[tokio::test]
    async fn public_addresses_are_accepted_and_pinned() {
        let d = check("https://hooks.example.com/in?x=1", Mode::Production)
            .await
            .unwrap();
        assert_eq!(d.addresses, vec!["93.184.215.14:443".parse().unwrap()]);
        let d = check("https://v6.example.com:8443/in", Mode::Production)
            .await
            .unwrap();
        assert_eq!(d.addresses[0].port(), 8443);
        assert!(
            check("https://8.8.8.8/hook", Mode::Production)
                .await
                .is_ok()
        );
        assert!(
            check("https://[2606:4700:4700::1111]/hook", Mode::Production)
                .await
                .is_ok()
        );
    }

    #[test]
    fn the_form_is_checked_without_the_network() {
        for url in [
            "http://hooks.example.com/in",
            "ftp://hooks.example.com/in",
            "https://user:pw@hooks.example.com/in",
            "https://user@hooks.example.com/in",
            "https://hooks.example.com/in#frag",
            "https://hooks.example.com:0/in",
            "not a url",
            "file:///etc/passwd",
        ] {
            assert!(check_syntax(url, Mode::Production).is_err(), "{url}");
        }
        let long = format!("https://hooks.example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(check_syntax(&long, Mode::Production).is_err());
        assert!(check_syntax("https://hooks.example.com/in", Mode::Production).is_ok());
    }

    #[tokio::test]
    async fn test_mode_allows_loopback_and_plain_http_there_only() {
        assert!(check("http://127.0.0.1:9/hook", Mode::Test).await.is_ok());
        assert!(check("http://[::1]:9/hook", Mode::Test).await.is_ok());
        assert!(check("http://localhost:9/hook", Mode::Test).await.is_ok());
        assert!(check("http://10.0.0.1/hook", Mode::Test).await.is_err());
        assert!(check("https://10.0.0.1/hook", Mode::Test).await.is_err());
        assert!(
            check("http://hooks.example.com/hook", Mode::Test)
                .await
                .is_err()
        );
        assert!(
            check("http://127.0.0.1:9/hook", Mode::Production)
                .await
                .is_err()
        );
    }
}
