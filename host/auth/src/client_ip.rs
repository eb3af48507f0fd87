//! The client's address as throttles count it. The peer of the TCP
//! connection, unless that peer is a trusted reverse proxy (`--trusted-proxy`,
//! `trusted_proxies` in the configuration file): then the `Forwarded` (or,
//! without it, `X-Forwarded-For`) chain is read from the right and the first
//! address that is not itself a trusted proxy is the client. A header from an
//! untrusted peer is ignored, so a client cannot pick its own address.
//!
//! Throttles count IPv6 clients per /64 ([`bucket`]): one host usually holds
//! a whole /64, and counting single addresses would let it rotate freely.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use http::HeaderMap;
use ipnet::IpNet;

/// Parse `--trusted-proxy` values: CIDRs (`10.0.0.0/8`, `fd00::/8`) or bare
/// addresses (a single host).
pub fn parse_cidr(value: &str) -> Result<IpNet, String> {
    let v = value.trim();
    v.parse::<IpNet>()
        .or_else(|_| v.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("not a CIDR or an IP address: {v:?}"))
}

/// Whether `address` is in one of `trusted`.
fn trusted_in(trusted: &[IpNet], address: IpAddr) -> bool {
    let address = canonical(address);
    trusted.iter().any(|net| net.contains(&address))
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// The client address of a request that came from `peer`.
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let peer = canonical(peer);
    if !trusted_in(trusted, peer) {
        return peer;
    }
    let chain = forwarded_chain(headers);
    let mut client = peer;
    for hop in chain.iter().rev() {
        match hop {
            // An obfuscated or unknown hop: the last trusted proxy is all we know.
            None => return client,
            Some(address) => {
                client = canonical(*address);
                if !trusted_in(trusted, client) {
                    return client;
                }
            }
        }
    }
    client
}

/// The forwarded-for chain, oldest first: `Forwarded`'s `for=` values when
/// the header is present, else `X-Forwarded-For`. `None`: a hop that is not
/// an address (`unknown`, `_hidden`).
fn forwarded_chain(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let forwarded: Vec<&str> = headers
        .get_all("forwarded")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|v| v.split(','))
            .map(|element| {
                element
                    .split(';')
                    .filter_map(|pair| pair.trim().split_once('='))
                    .find(|(k, _)| k.trim().eq_ignore_ascii_case("for"))
                    .and_then(|(_, v)| node_address(v))
            })
            .collect();
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(node_address)
        .collect()
}

/// An address out of a `Forwarded` node or an `X-Forwarded-For` entry:
/// `1.2.3.4`, `1.2.3.4:80`, `"[2001:db8::1]:4711"`, `2001:db8::1`.
fn node_address(value: &str) -> Option<IpAddr> {
    let v = value.trim().trim_matches('"');
    if let Ok(ip) = v.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(socket) = v.parse::<SocketAddr>() {
        return Some(socket.ip());
    }
    v.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(inside, _)| inside.parse::<Ipv6Addr>().ok())
        .map(IpAddr::V6)
}

/// The throttles' key for an address: IPv4 as is, IPv6 its /64.
pub fn bucket(address: IpAddr) -> IpAddr {
    match canonical(address) {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(bits))
        }
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn headers_from_an_untrusted_peer_are_ignored() {
        let h = headers(&[("x-forwarded-for", "9.9.9.9"), ("forwarded", "for=8.8.8.8")]);
        assert_eq!(
            client_address(ip("203.0.113.5"), &h, &[]),
            ip("203.0.113.5")
        );
        let trusted = [parse_cidr("10.0.0.0/8").unwrap()];
        assert_eq!(
            client_address(ip("203.0.113.5"), &h, &trusted),
            ip("203.0.113.5")
        );
    }

    #[test]
    fn the_right_most_untrusted_hop_is_the_client() {
        let trusted = [
            parse_cidr("10.0.0.0/8").unwrap(),
            parse_cidr("fd00::/8").unwrap(),
        ];
        // A client-forged left-most entry is not believed.
        let h = headers(&[("x-forwarded-for", "1.1.1.1, 198.51.100.7, 10.0.0.3")]);
        assert_eq!(
            client_address(ip("10.0.0.2"), &h, &trusted),
            ip("198.51.100.7")
        );
        // `Forwarded` wins over X-Forwarded-For; ports and brackets are read.
        let h = headers(&[
            ("x-forwarded-for", "1.1.1.1"),
            (
                "forwarded",
                "for=\"[2001:db8::1]:4711\";proto=https, for=10.0.0.9:80",
            ),
        ]);
        assert_eq!(
            client_address(ip("::ffff:10.0.0.2"), &h, &trusted),
            ip("2001:db8::1")
        );
        // Only trusted hops: the left-most one; an unknown hop: the proxy before it.
        let h = headers(&[("x-forwarded-for", "10.1.1.1, 10.0.0.3")]);
        assert_eq!(client_address(ip("10.0.0.2"), &h, &trusted), ip("10.1.1.1"));
        let h = headers(&[("forwarded", "for=unknown, for=10.0.0.3")]);
        assert_eq!(client_address(ip("10.0.0.2"), &h, &trusted), ip("10.0.0.3"));
        // No header at all: the proxy itself.
        assert_eq!(
            client_address(ip("10.0.0.2"), &HeaderMap::new(), &trusted),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn ipv6_is_counted_per_64() {
        assert_eq!(bucket(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(
            bucket(ip("2001:db8:1:2:ffff::9")),
            bucket(ip("2001:db8:1:2::7"))
        );
        assert_ne!(bucket(ip("2001:db8:1:3::1")), bucket(ip("2001:db8:1:2::1")));
        assert_eq!(bucket(ip("192.0.2.1")), ip("192.0.2.1"));
        assert_eq!(bucket(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
        assert!(parse_cidr("192.0.2.1").is_ok() && parse_cidr("nope").is_err());
    }
}
