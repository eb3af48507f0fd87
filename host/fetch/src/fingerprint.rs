//! Test-only: a loopback TLS server that records what a client sends first
//! — the ClientHello and the HTTP/2 preface — and the fingerprints computed
//! from them: JA4 and JA3 (FoxIO / Salesforce definitions) and the Akamai
//! HTTP/2 fingerprint (`SETTINGS|WINDOW_UPDATE|PRIORITY|pseudo-header order`).
//!
//! The server's certificate comes from a throwaway CA the browser backend
//! trusts only through [`super::Fetcher::with_test_roots`].

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;

/// What the ClientHello says, in the order the client sent it.
#[derive(Clone, Debug, Default)]
pub struct ClientHello {
    pub legacy_version: u16,
    pub ciphers: Vec<u16>,
    pub extensions: Vec<u16>,
    pub groups: Vec<u16>,
    pub point_formats: Vec<u8>,
    pub signature_algorithms: Vec<u16>,
    pub alpn: Vec<String>,
    pub supported_versions: Vec<u16>,
    pub server_name: Option<String>,
}

/// GREASE values (RFC 8701): 0x?a?a with both bytes equal.
fn is_grease(v: u16) -> bool {
    v & 0x0f0f == 0x0a0a && v >> 8 == v & 0xff
}

fn u16s(data: &[u8]) -> Vec<u16> {
    data.chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect()
}

/// A cursor over big-endian TLS structures; `None` when truncated.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()? as usize;
        self.take(n)
    }
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()? as usize;
        self.take(n)
    }
}

impl ClientHello {
    /// Parse a ClientHello handshake message (type, 24-bit length, body).
    pub fn parse(message: &[u8]) -> Option<ClientHello> {
        let mut r = Reader(message);
        if r.u8()? != 1 {
            return None;
        }
        let len = r.take(3)?;
        let len = (len[0] as usize) << 16 | (len[1] as usize) << 8 | len[2] as usize;
        let mut r = Reader(r.take(len)?);
        let mut hello = ClientHello {
            legacy_version: r.u16()?,
            ..ClientHello::default()
        };
        r.take(32)?; // random
        r.vec8()?; // legacy session id
        hello.ciphers = u16s(r.vec16()?);
        r.vec8()?; // compression methods
        let mut exts = Reader(r.vec16().unwrap_or_default());
        while !exts.0.is_empty() {
            let kind = exts.u16()?;
            let data = exts.vec16()?;
            hello.extensions.push(kind);
            let mut d = Reader(data);
            match kind {
                0x0000 => {
                    let mut list = Reader(d.vec16()?);
                    list.u8()?;
                    hello.server_name = Some(String::from_utf8_lossy(list.vec16()?).into());
                }
                0x000a => hello.groups = u16s(d.vec16()?),
                0x000b => hello.point_formats = d.vec8()?.to_vec(),
                0x000d => hello.signature_algorithms = u16s(d.vec16()?),
                0x0010 => {
                    let mut list = Reader(d.vec16()?);
                    while !list.0.is_empty() {
                        hello
                            .alpn
                            .push(String::from_utf8_lossy(list.vec8()?).into());
                    }
                }
                0x002b => hello.supported_versions = u16s(d.vec8()?),
                _ => {}
            }
        }
        Some(hello)
    }

    fn ja3_string(&self, sort_extensions: bool) -> String {
        let dash = |v: Vec<String>| v.join("-");
        let clean = |v: &[u16]| {
            v.iter()
                .copied()
                .filter(|x| !is_grease(*x))
                .collect::<Vec<_>>()
        };
        let mut exts = clean(&self.extensions);
        if sort_extensions {
            exts.sort_unstable();
        }
        format!(
            "{},{},{},{},{}",
            self.legacy_version,
            dash(clean(&self.ciphers).iter().map(u16::to_string).collect()),
            dash(exts.iter().map(u16::to_string).collect()),
            dash(clean(&self.groups).iter().map(u16::to_string).collect()),
            dash(self.point_formats.iter().map(u8::to_string).collect()),
        )
    }

    /// JA3 text as sent (Chrome permutes its extensions, so this varies).
    pub fn ja3_text(&self) -> String {
        self.ja3_string(false)
    }

    /// JA3 with the extensions sorted ("JA3N"), stable across Chrome's permutation.
    pub fn ja3n_text(&self) -> String {
        self.ja3_string(true)
    }

    pub fn ja3n(&self) -> String {
        hex::encode(md5::Md5::digest(self.ja3n_text().as_bytes()))
    }

    /// JA4 (FoxIO, TLS over TCP).
    pub fn ja4(&self) -> String {
        let version = self
            .supported_versions
            .iter()
            .copied()
            .filter(|v| !is_grease(*v))
            .max()
            .unwrap_or(self.legacy_version);
        let version = match version {
            0x0304 => "13",
            0x0303 => "12",
            0x0302 => "11",
            0x0301 => "10",
            _ => "00",
        };
        let sni = if self.extensions.contains(&0) {
            'd'
        } else {
            'i'
        };
        let mut ciphers: Vec<u16> = self
            .ciphers
            .iter()
            .copied()
            .filter(|c| !is_grease(*c))
            .collect();
        let mut exts: Vec<u16> = self
            .extensions
            .iter()
            .copied()
            .filter(|e| !is_grease(*e))
            .collect();
        let alpn = match self.alpn.first().map(String::as_bytes) {
            Some([first, .., last]) => format!("{}{}", *first as char, *last as char),
            Some([only]) => format!("{0}{0}", *only as char),
            _ => "00".into(),
        };
        let a = format!(
            "t{version}{sni}{:02}{:02}{alpn}",
            ciphers.len().min(99),
            exts.len().min(99)
        );
        ciphers.sort_unstable();
        exts.retain(|e| *e != 0x0000 && *e != 0x0010);
        exts.sort_unstable();
        let hex4 = |v: &[u16]| {
            v.iter()
                .map(|x| format!("{x:04x}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let hash12 = |s: &str| {
            if s.is_empty() {
                "000000000000".to_string()
            } else {
                hex::encode(Sha256::digest(s.as_bytes()))[..12].to_string()
            }
        };
        let mut c = hex4(&exts);
        if !self.signature_algorithms.is_empty() {
            c.push('_');
            c.push_str(&hex4(&self.signature_algorithms));
        }
        format!("{a}_{}_{}", hash12(&hex4(&ciphers)), hash12(&c))
    }
}

/// Read TLS handshake records until one whole ClientHello message is in.
/// Returns the message and every byte read (to replay into a TLS acceptor).
async fn read_client_hello(stream: &mut TcpStream) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut raw = Vec::new();
    let mut message = Vec::new();
    loop {
        let mut header = [0u8; 5];
        stream.read_exact(&mut header).await.ok()?;
        raw.extend_from_slice(&header);
        if header[0] != 22 {
            return None;
        }
        let mut body = vec![0u8; u16::from_be_bytes([header[3], header[4]]) as usize];
        stream.read_exact(&mut body).await.ok()?;
        raw.extend_from_slice(&body);
        message.extend_from_slice(&body);
        if message.len() >= 4 {
            let len =
                (message[1] as usize) << 16 | (message[2] as usize) << 8 | message[3] as usize;
            if message.len() >= 4 + len {
                message.truncate(4 + len);
                return Some((message, raw));
            }
        }
    }
}

/// The Akamai HTTP/2 fingerprint of a client connection preface.
#[derive(Clone, Debug, Default)]
pub struct Http2Preface {
    pub settings: Vec<(u16, u32)>,
    pub window_update: Option<u32>,
    /// (stream, exclusive, depends on, weight + 1), as Akamai writes them.
    pub priorities: Vec<(u32, u8, u32, u16)>,
    /// `m`, `a`, `s`, `p` in the order of the first HEADERS frame.
    pub pseudo_headers: Vec<char>,
}

impl Http2Preface {
    pub fn akamai(&self) -> String {
        let settings = self
            .settings
            .iter()
            .map(|(k, v)| format!("{k}:{v}"))
            .collect::<Vec<_>>()
            .join(";");
        let window = self
            .window_update
            .map_or_else(|| "00".to_string(), |w| w.to_string());
        let priorities = if self.priorities.is_empty() {
            "0".to_string()
        } else {
            self.priorities
                .iter()
                .map(|(s, e, d, w)| format!("{s}:{e}:{d}:{w}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let pseudo = self
            .pseudo_headers
            .iter()
            .map(char::to_string)
            .collect::<Vec<_>>()
            .join(",");
        format!("{settings}|{window}|{priorities}|{pseudo}")
    }
}

/// Read the client preface, its frames up to and including the first
/// HEADERS frame, and summarise them.
async fn read_http2_preface<S: AsyncRead + Unpin>(stream: &mut S) -> Option<Http2Preface> {
    let mut magic = [0u8; 24];
    stream.read_exact(&mut magic).await.ok()?;
    if &magic != b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" {
        return None;
    }
    let mut preface = Http2Preface::default();
    loop {
        let mut head = [0u8; 9];
        stream.read_exact(&mut head).await.ok()?;
        let len = (head[0] as usize) << 16 | (head[1] as usize) << 8 | head[2] as usize;
        let (kind, flags) = (head[3], head[4]);
        let stream_id = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; len];
        stream.read_exact(&mut payload).await.ok()?;
        match kind {
            // SETTINGS (not an ACK)
            4 if flags & 1 == 0 => {
                for s in payload.chunks_exact(6) {
                    preface.settings.push((
                        u16::from_be_bytes([s[0], s[1]]),
                        u32::from_be_bytes([s[2], s[3], s[4], s[5]]),
                    ));
                }
            }
            8 if stream_id == 0 && payload.len() == 4 => {
                preface.window_update = Some(
                    u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]])
                        & 0x7fff_ffff,
                );
            }
            2 if payload.len() == 5 => {
                let dep = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                preface.priorities.push((
                    stream_id,
                    (dep >> 31) as u8,
                    dep & 0x7fff_ffff,
                    payload[4] as u16 + 1,
                ));
            }
            1 => {
                let mut block = payload.as_slice();
                if flags & 0x08 != 0 {
                    let pad = *block.first()? as usize;
                    block = block.get(1..block.len().checked_sub(pad)?)?;
                }
                if flags & 0x20 != 0 {
                    block = block.get(5..)?;
                }
                preface.pseudo_headers = pseudo_header_order(block);
                return Some(preface);
            }
            _ => {}
        }
    }
}

/// The pseudo-headers at the head of a first HPACK block. Their names are
/// always static-table entries (RFC 7541 Appendix A), so no Huffman
/// decoding is needed: stop at the first field whose name is not one.
fn pseudo_header_order(mut block: &[u8]) -> Vec<char> {
    fn integer(block: &mut &[u8], prefix: u8) -> Option<usize> {
        let mask = (1u16 << prefix) as u8 - 1;
        let first = *block.first()? & mask;
        *block = &block[1..];
        if first < mask {
            return Some(first as usize);
        }
        let (mut value, mut shift) = (mask as usize, 0);
        loop {
            let b = *block.first()?;
            *block = &block[1..];
            value += ((b & 0x7f) as usize) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
    }
    fn skip_string(block: &mut &[u8]) -> Option<()> {
        let len = integer(block, 7)?;
        *block = block.get(len..)?;
        Some(())
    }
    let name = |index: usize| match index {
        1 => Some('a'),
        2 | 3 => Some('m'),
        4 | 5 => Some('p'),
        6 | 7 => Some('s'),
        _ => None,
    };
    let mut order = Vec::new();
    while let Some(&first) = block.first() {
        let index = if first & 0x80 != 0 {
            integer(&mut block, 7)
        } else if first & 0xe0 == 0x20 {
            // dynamic table size update
            if integer(&mut block, 5).is_none() {
                break;
            }
            continue;
        } else if first & 0x40 != 0 {
            integer(&mut block, 6)
        } else {
            integer(&mut block, 4)
        };
        let Some(p) = index.and_then(name) else { break };
        if first & 0x80 == 0 && skip_string(&mut block).is_none() {
            break;
        }
        order.push(p);
    }
    order
}

/// A stream that first yields bytes already read, then the socket.
struct Replayed<S> {
    head: Vec<u8>,
    pos: usize,
    inner: S,
}

impl<S: AsyncRead + Unpin> AsyncRead for Replayed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.pos < self.head.len() {
            let n = buf.remaining().min(self.head.len() - self.pos);
            let start = self.pos;
            buf.put_slice(&self.head[start..start + n]);
            self.pos += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Replayed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A reader that keeps a copy of every byte it hands out (to replay the
/// HTTP/2 preface into a real HTTP/2 server after summarising it).
struct Recording<S> {
    inner: S,
    seen: Vec<u8>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Recording<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let new = buf.filled()[before..].to_vec();
            self.seen.extend_from_slice(&new);
        }
        polled
    }
}

/// What one connection to the fingerprint server showed.
#[derive(Clone, Debug)]
pub struct Observed {
    pub hello: ClientHello,
    /// `None` when the handshake did not complete or ALPN was not h2.
    pub http2: Option<Http2Preface>,
}

/// The loopback fingerprint server: one connection, recorded.
pub struct FingerprintServer {
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    /// The test CA (PEM), to hand to [`super::Fetcher::with_test_roots`].
    pub ca_pem: Vec<u8>,
}

impl FingerprintServer {
    /// A server for `localhost` on a free loopback port, with a new test CA.
    pub async fn start() -> FingerprintServer {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "mediaparse fingerprint test CA");
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .signed_by(&leaf_key, &*ca)
            .unwrap();
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone(), ca.der().clone()], key)
            .unwrap();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        FingerprintServer {
            listener: TcpListener::bind("127.0.0.1:0").await.unwrap(),
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
            ca_pem: ca.pem().into_bytes(),
        }
    }

    pub fn url(&self) -> String {
        format!(
            "https://localhost:{}/fp",
            self.listener.local_addr().unwrap().port()
        )
    }

    /// Accept one connection and record it; the client then sees the
    /// connection close (the server never answers).
    pub async fn observe_one(&self) -> Observed {
        let (mut socket, _) = self.listener.accept().await.unwrap();
        let (message, raw) = read_client_hello(&mut socket).await.expect("a ClientHello");
        let hello = ClientHello::parse(&message).expect("a parsable ClientHello");
        let replayed = Replayed {
            head: raw,
            pos: 0,
            inner: socket,
        };
        let http2 = match self.acceptor.accept(replayed).await {
            Ok(mut tls) if tls.get_ref().1.alpn_protocol() == Some(b"h2") => {
                read_http2_preface(&mut tls).await
            }
            _ => None,
        };
        Observed { hello, http2 }
    }

    /// Accept one connection and record its fingerprints (ClientHello,
    /// HTTP/2 preface) *and* its first request's regular header fields in
    /// the order they arrived, answering that request with an empty `200`.
    /// The fields are `None` when the client did not negotiate h2.
    pub async fn observe_request(&self) -> (Observed, Option<Vec<(String, String)>>) {
        let (mut socket, _) = self.listener.accept().await.unwrap();
        let (message, raw) = read_client_hello(&mut socket).await.expect("a ClientHello");
        let hello = ClientHello::parse(&message).expect("a parsable ClientHello");
        let replayed = Replayed {
            head: raw,
            pos: 0,
            inner: socket,
        };
        let tls = match self.acceptor.accept(replayed).await {
            Ok(tls) if tls.get_ref().1.alpn_protocol() == Some(b"h2") => tls,
            _ => return (Observed { hello, http2: None }, None),
        };
        let mut recording = Recording {
            inner: tls,
            seen: Vec::new(),
        };
        let http2 = read_http2_preface(&mut recording).await;
        let observed = Observed { hello, http2 };
        let again = Replayed {
            head: recording.seen,
            pos: 0,
            inner: recording.inner,
        };
        let Ok(mut conn) = h2::server::handshake(again).await else {
            return (observed, None);
        };
        let Some(Ok((request, mut respond))) = conn.accept().await else {
            return (observed, None);
        };
        let fields = request
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        if let Ok(answer) = http::Response::builder().status(200).body(()) {
            let _ = respond.send_response(answer, true);
        }
        tokio::spawn(async move { while conn.accept().await.is_some() {} });
        (observed, Some(fields))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mediaparse_sdk::{Header, HttpRequest};

    use super::*;
    use crate::identity::named_browser;
    use crate::{FetchLimits, FetchProfile, Fetcher, ProfileSetting, UpstreamOverride};

    // Published fingerprints. Chrome 143: the tls.browserleaks.com/json
    // capture of Chrome 143.0.0.0 (github.com/service0427/v2_cp_app, tls.md).
    const CHROME_143_JA4: &str = "t13d1516h2_8daaf6152771_d8a2da3f94cd";
    const CHROME_143_JA3N: &str = "8e19337e7524d2573be54efb2b0784c9";
    const CHROME_143_AKAMAI: &str = "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p";
    // OkHttp 4 on Android 10: the JA3 and Akamai strings curl_cffi's
    // examples/impersonate_okhttp.py publishes (credited to
    // github.com/bogdanfinn/tls-client profiles/contributed_custom_profiles.go).
    const OKHTTP4_JA3: &str = "771,4865-4866-4867-49195-49196-52393-49199-49200-52392-49171-49172-156-157-47-53,0-23-65281-10-11-35-16-5-13-51-45-43-21,29-23-24,0";
    const OKHTTP4_AKAMAI: &str = "4:16777216|16711681|0|m,p,a,s";
    // Safari through 18.1 (the iOS 18.1.1 profile) offers ecdsa_sha1 (0203)
    // among its signature algorithms: a capture of real Safari 18.1 on macOS
    // at tls.browserleaks.com lists 0203 in its ja4_r. Safari 18.2 and later
    // (the macOS 18.2 profile) dropped it: captures of real Safari 18.2 and
    // 26.0.1 on macOS and of iOS Safari 18.3 all show the second JA4 below,
    // which differs from the 18.0 impersonation's.
    const SAFARI_IOS_18_1_JA4: &str = "t13d2014h2_a09f3c656075_14788d8d241b";
    const SAFARI_18_2_JA4: &str = "t13d2014h2_a09f3c656075_e42f34c56612";
    // Safari on iOS 18.0-18.3: SETTINGS 2,3,4,8,9, window 10420225, no
    // PRIORITY, m,s,a,p. github.com/bogdanfinn/tls-client
    // profiles/internal_browser_profiles.go `Safari_IOS_18_0` (settings,
    // order, connection flow, pseudo-header order); a capture of real
    // Safari 18.0 gives the akamai_hash d4a2dcbfde511b5040ed5a5190a8d78b (the
    // MD5 of this text), and one of 18.4 shows setting 8 dropped
    // (c52879e4…: 2:0;3:100;4:2097152;9:1|…).
    const SAFARI_IOS_18_AKAMAI: &str = "2:0;3:100;4:2097152;8:1;9:1|10420225|0|m,s,a,p";
    // Firefox 133: curl_cffi's impersonation table (`firefox133`).
    const FIREFOX_133_JA4: &str = "t13d1716h2_5b57614c22b0_eeeea6562960";
    // Firefox 133: github.com/bogdanfinn/tls-client
    // profiles/contributed_browser_profiles.go `Firefox_133` (PR #144, from a
    // Firefox 133 capture): SETTINGS 1,2,4,5, window 12517377, no PRIORITY
    // frames, m,p,a,s. Real Firefox keeps it through 147 (browserleaks
    // akamai_hash 6ea73faa8fc5aac76bded7bd238f6433 = MD5 of this text).
    const FIREFOX_133_AKAMAI: &str = "1:65536;2:0;4:131072;5:16384|12517377|0|m,p,a,s";

    const CHROME_UA: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36";
    const IPHONE_UA: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1.1 Mobile/15E148 Safari/604.1";
    const FIREFOX_UA: &str =
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";
    const OKHTTP_UA: &str = "okhttp/4.12.0";
    const MAC_SAFARI_UA: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 Safari/605.1.15";

    /// One request for `https://www.example.com/p` through the Fetcher (the
    /// override sends it to the fingerprint server), as `setting` with
    /// `user_agent`; what the server saw.
    async fn observe(setting: ProfileSetting, user_agent: &str) -> Observed {
        let server = FingerprintServer::start().await;
        let base = server.url().trim_end_matches("/fp").to_string();
        let limits = FetchLimits {
            request_timeout: Duration::from_secs(5),
            profile: setting,
            ..FetchLimits::default()
        };
        let fetcher = Fetcher::new(
            Some(UpstreamOverride::parse(&base).unwrap()),
            limits.clone(),
        )
        .unwrap()
        .with_test_roots(server.ca_pem.clone());
        let mut request = HttpRequest::get("https://www.example.com/p".to_string());
        request.headers = vec![Header::new("User-Agent", user_agent)];
        let hosts = ["www.example.com".to_string()];
        let (observed, _answer) = tokio::join!(
            server.observe_one(),
            fetcher.fetch_with("example", &hosts, &request, &limits, None)
        );
        observed
    }

    #[tokio::test]
    async fn chrome_profile_has_chrome_143s_published_fingerprint() {
        let seen = observe(ProfileSetting::Browser, CHROME_UA).await;
        assert_eq!(seen.hello.server_name.as_deref(), Some("localhost"));
        assert_eq!(seen.hello.ja4(), CHROME_143_JA4, "{:?}", seen.hello);
        assert_eq!(
            seen.hello.ja3n(),
            CHROME_143_JA3N,
            "{}",
            seen.hello.ja3n_text()
        );
        let h2 = seen.http2.expect("an HTTP/2 preface");
        assert_eq!(h2.akamai(), CHROME_143_AKAMAI);
    }

    #[tokio::test]
    async fn okhttp_profile_has_okhttp4s_published_fingerprint() {
        let seen = observe(ProfileSetting::Browser, OKHTTP_UA).await;
        assert_eq!(seen.hello.ja3_text(), OKHTTP4_JA3);
        let h2 = seen.http2.expect("an HTTP/2 preface");
        assert_eq!(h2.akamai(), OKHTTP4_AKAMAI);
    }

    #[tokio::test]
    async fn safari_and_firefox_profiles_have_their_published_fingerprints() {
        for (ua, ja4, akamai) in [
            (IPHONE_UA, SAFARI_IOS_18_1_JA4, SAFARI_IOS_18_AKAMAI),
            (MAC_SAFARI_UA, SAFARI_18_2_JA4, SAFARI_IOS_18_AKAMAI),
            (FIREFOX_UA, FIREFOX_133_JA4, FIREFOX_133_AKAMAI),
        ] {
            let seen = observe(ProfileSetting::Browser, ua).await;
            assert_eq!(seen.hello.ja4(), ja4, "{ua}");
            let h2 = seen.http2.expect("an HTTP/2 preface");
            assert_eq!(h2.akamai(), akamai, "{ua}");
        }
    }

    /// The planned request headers, in order.
    fn planned_headers() -> Vec<Header> {
        vec![
            Header::new("User-Agent", CHROME_UA),
            Header::new("X-IG-App-ID", "936619743392459"),
            Header::new("Accept", "*/*"),
            Header::new("Referer", "https://www.example.com/"),
        ]
    }

    /// Every impersonating profile, forced.
    const PROFILES: [ProfileSetting; 4] = [
        ProfileSetting::Fixed(FetchProfile::Chrome),
        ProfileSetting::Fixed(FetchProfile::Safari),
        ProfileSetting::Fixed(FetchProfile::Firefox),
        ProfileSetting::Fixed(FetchProfile::OkHttp),
    ];

    /// The planned User-Agents the identity test plans, with whether each is
    /// a phone's: a desktop Chrome on Windows (TikTok's), an Android Chrome
    /// (Kuaishou's), an iPhone Safari (Douyin's) and a desktop Firefox.
    const PLANNED_AGENTS: [(&str, bool); 4] = [
        (CHROME_UA, false),
        (ANDROID_CHROME_UA, true),
        (IPHONE_UA, true),
        (FIREFOX_UA, false),
    ];
    const ANDROID_CHROME_UA: &str = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Mobile Safari/537.36";

    /// The browser a profile setting leaves as for a planned agent.
    fn expected_profile(setting: ProfileSetting, planned_agent: &str) -> FetchProfile {
        match setting {
            ProfileSetting::Fixed(p) => p,
            _ => {
                if planned_agent.contains("Firefox/") {
                    FetchProfile::Firefox
                } else if planned_agent.contains("iPhone") {
                    FetchProfile::Safari
                } else {
                    FetchProfile::Chrome
                }
            }
        }
    }

    /// The header names, in order, that the browser sends for the two
    /// planned requests of [`one_identity_per_request`] — a page load
    /// planned with `Cookie` and `X-Token`; an API call planned with
    /// `Accept: application/json`, a same-origin `Referer` and `X-Token`.
    fn expected_order(profile: FetchProfile, page: bool) -> &'static [&'static str] {
        match (profile, page) {
            (FetchProfile::Chrome, true) => &[
                "x-token",
                "sec-ch-ua",
                "sec-ch-ua-mobile",
                "sec-ch-ua-platform",
                "upgrade-insecure-requests",
                "user-agent",
                "accept",
                "sec-fetch-site",
                "sec-fetch-mode",
                "sec-fetch-user",
                "sec-fetch-dest",
                "accept-encoding",
                "accept-language",
                "cookie",
                "priority",
            ],
            (FetchProfile::Chrome, false) => &[
                "sec-ch-ua-platform",
                "user-agent",
                "sec-ch-ua",
                "x-token",
                "sec-ch-ua-mobile",
                "accept",
                "sec-fetch-site",
                "sec-fetch-mode",
                "sec-fetch-dest",
                "referer",
                "accept-encoding",
                "accept-language",
                "priority",
            ],
            (FetchProfile::Firefox, true) => &[
                "user-agent",
                "accept",
                "accept-language",
                "accept-encoding",
                "x-token",
                "cookie",
                "upgrade-insecure-requests",
                "sec-fetch-dest",
                "sec-fetch-mode",
                "sec-fetch-site",
                "sec-fetch-user",
                "priority",
            ],
            (FetchProfile::Firefox, false) => &[
                "user-agent",
                "accept",
                "accept-language",
                "accept-encoding",
                "x-token",
                "referer",
                "sec-fetch-dest",
                "sec-fetch-mode",
                "sec-fetch-site",
                "priority",
            ],
            (FetchProfile::Safari, true) => &[
                "sec-fetch-dest",
                "user-agent",
                "accept",
                "x-token",
                "sec-fetch-site",
                "sec-fetch-mode",
                "accept-language",
                "priority",
                "accept-encoding",
                "cookie",
            ],
            (FetchProfile::Safari, false) => &[
                "sec-fetch-dest",
                "user-agent",
                "accept",
                "x-token",
                "referer",
                "sec-fetch-site",
                "sec-fetch-mode",
                "accept-language",
                "priority",
                "accept-encoding",
            ],
            (_, true) => &["cookie", "x-token", "accept-encoding", "user-agent"],
            (_, false) => &[
                "accept",
                "referer",
                "x-token",
                "accept-encoding",
                "user-agent",
            ],
        }
    }

    /// One identity per request: for every profile setting, a desktop and a
    /// mobile planned User-Agent (of every browser family), a page load and
    /// an API call, one connection to the fingerprint server shows a
    /// handshake (JA4 or JA3, Akamai HTTP/2) and a User-Agent and client
    /// hints of the same browser, that browser's headers for the kind of
    /// request in its order, and the extractor's own headers kept.
    #[tokio::test]
    async fn one_identity_per_request() {
        let settings = [
            ProfileSetting::Fixed(FetchProfile::Chrome),
            ProfileSetting::Fixed(FetchProfile::Safari),
            ProfileSetting::Fixed(FetchProfile::Firefox),
            ProfileSetting::Fixed(FetchProfile::OkHttp),
            ProfileSetting::Browser,
        ];
        for setting in settings {
            for (planned_agent, mobile) in PLANNED_AGENTS {
                for page in [true, false] {
                    let case = format!("{setting:?} planned {planned_agent:?} page={page}");
                    let server = FingerprintServer::start().await;
                    let base = server.url().trim_end_matches("/fp").to_string();
                    let limits = FetchLimits {
                        request_timeout: Duration::from_secs(5),
                        profile: setting,
                        ..FetchLimits::default()
                    };
                    let fetcher = Fetcher::new(
                        Some(UpstreamOverride::parse(&base).unwrap()),
                        limits.clone(),
                    )
                    .unwrap()
                    .with_test_roots(server.ca_pem.clone());
                    let mut request = HttpRequest::get("https://www.example.com/p".to_string());
                    request.headers = if page {
                        vec![
                            Header::new("User-Agent", planned_agent),
                            Header::new("Cookie", "sid=1"),
                            Header::new("X-Token", "t"),
                        ]
                    } else {
                        vec![
                            Header::new("User-Agent", planned_agent),
                            Header::new("Accept", "application/json"),
                            Header::new("Referer", "https://www.example.com/p"),
                            Header::new("X-Token", "t"),
                        ]
                    };
                    let hosts = ["www.example.com".to_string()];
                    let ((seen, fields), answer) = tokio::join!(
                        server.observe_request(),
                        fetcher.fetch_with("example", &hosts, &request, &limits, None)
                    );
                    assert_eq!(answer.unwrap().status, 200, "{case}");
                    let fields = fields.unwrap_or_else(|| panic!("{case}: no h2"));
                    let field = |name: &str| {
                        fields
                            .iter()
                            .find(|(n, _)| n == name)
                            .map(|(_, v)| v.as_str())
                    };
                    let agent = field("user-agent").unwrap_or_default();
                    let hints: Vec<&str> = fields
                        .iter()
                        .filter(|(n, _)| n.starts_with("sec-ch-"))
                        .map(|(n, _)| n.as_str())
                        .collect();
                    let h2 = seen.http2.clone().expect("an HTTP/2 preface");
                    let profile = expected_profile(setting, planned_agent);
                    // The handshake, and a User-Agent and hints of the same browser.
                    match profile {
                        FetchProfile::Chrome => {
                            assert_eq!(seen.hello.ja4(), CHROME_143_JA4, "{case}");
                            assert_eq!(h2.akamai(), CHROME_143_AKAMAI, "{case}");
                            assert!(
                                agent.contains("Chrome/") && !agent.contains("CriOS"),
                                "{case}: {agent}"
                            );
                            assert_eq!(agent.contains("Mobile"), mobile, "{case}: {agent}");
                            assert!(
                                field("sec-ch-ua")
                                    .is_some_and(|v| v.contains("\"Google Chrome\";v=\"143\"")),
                                "{case}: {fields:?}"
                            );
                            let (m, p) = if mobile {
                                ("?1", "\"Android\"")
                            } else {
                                ("?0", "\"Windows\"")
                            };
                            assert_eq!(field("sec-ch-ua-mobile"), Some(m), "{case}");
                            assert_eq!(field("sec-ch-ua-platform"), Some(p), "{case}");
                        }
                        FetchProfile::Safari => {
                            let ja4 = if mobile {
                                SAFARI_IOS_18_1_JA4
                            } else {
                                SAFARI_18_2_JA4
                            };
                            assert_eq!(seen.hello.ja4(), ja4, "{case}");
                            assert_eq!(h2.akamai(), SAFARI_IOS_18_AKAMAI, "{case}");
                            assert!(
                                agent.contains("Version/")
                                    && agent.contains("Safari/")
                                    && !agent.contains("Chrome/"),
                                "{case}: {agent}"
                            );
                            assert_eq!(agent.contains("iPhone"), mobile, "{case}: {agent}");
                            assert_eq!(agent.contains("Macintosh"), !mobile, "{case}: {agent}");
                            assert!(hints.is_empty(), "{case}: {hints:?}");
                        }
                        FetchProfile::Firefox => {
                            assert_eq!(seen.hello.ja4(), FIREFOX_133_JA4, "{case}");
                            assert_eq!(h2.akamai(), FIREFOX_133_AKAMAI, "{case}");
                            assert!(
                                agent.contains("Firefox/133.0") && !agent.contains("Chrome/"),
                                "{case}: {agent}"
                            );
                            assert_eq!(agent.contains("Mobile"), mobile, "{case}: {agent}");
                            assert!(hints.is_empty(), "{case}: {hints:?}");
                        }
                        FetchProfile::OkHttp | FetchProfile::Rustls => {
                            assert_eq!(seen.hello.ja3_text(), OKHTTP4_JA3, "{case}");
                            assert_eq!(h2.akamai(), OKHTTP4_AKAMAI, "{case}");
                            assert!(agent.starts_with("okhttp/"), "{case}: {agent}");
                            assert!(hints.is_empty(), "{case}: {hints:?}");
                        }
                    }
                    // That browser's headers for the kind of request, in its order.
                    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
                    assert_eq!(names, expected_order(profile, page), "{case}");
                    if profile != FetchProfile::OkHttp {
                        let (mode, dest, site) = if page {
                            ("navigate", "document", "none")
                        } else {
                            ("cors", "empty", "same-origin")
                        };
                        assert_eq!(field("sec-fetch-mode"), Some(mode), "{case}");
                        assert_eq!(field("sec-fetch-dest"), Some(dest), "{case}");
                        assert_eq!(field("sec-fetch-site"), Some(site), "{case}");
                    }
                    // The extractor's own headers, kept.
                    assert_eq!(field("x-token"), Some("t"), "{case}");
                    if page {
                        assert_eq!(field("cookie"), Some("sid=1"), "{case}");
                    } else {
                        assert_eq!(field("accept"), Some("application/json"), "{case}");
                        assert_eq!(
                            field("referer"),
                            Some("https://www.example.com/p"),
                            "{case}"
                        );
                    }
                    // A planned agent of the profile's own browser is kept.
                    if named_browser(planned_agent) == Some(profile) {
                        assert_eq!(agent, planned_agent, "{case}");
                    }
                }
            }
        }
    }

    /// HTTP/1.1 (here through the upstream override): every impersonating
    /// profile sends the planned headers in their spelling (the headers the
    /// identity adds are lowercase); rustls (reqwest) lowercases them all,
    /// so the test tells the backends apart.
    #[tokio::test]
    async fn headers_keep_the_planned_spelling() {
        use tokio::io::AsyncWriteExt;
        let planned = ["User-Agent", "X-IG-App-ID", "Accept", "Referer"];
        for setting in PROFILES
            .into_iter()
            .chain([ProfileSetting::Browser, ProfileSetting::Rustls])
        {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let limits = FetchLimits {
                request_timeout: Duration::from_secs(5),
                profile: setting,
                ..FetchLimits::default()
            };
            let fetcher = Fetcher::new(
                Some(UpstreamOverride::parse(&base).unwrap()),
                limits.clone(),
            )
            .unwrap();
            let mut request = HttpRequest::get("https://www.example.com/p".to_string());
            request.headers = planned_headers();
            let server = async {
                let (mut socket, _) = listener.accept().await.unwrap();
                let mut head = Vec::new();
                let mut chunk = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = socket.read(&mut chunk).await.unwrap();
                    if n == 0 {
                        break;
                    }
                    head.extend_from_slice(&chunk[..n]);
                }
                socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                    .await
                    .unwrap();
                String::from_utf8_lossy(&head).into_owned()
            };
            let hosts = ["www.example.com".to_string()];
            let (head, answer) = tokio::join!(
                server,
                fetcher.fetch_with("example", &hosts, &request, &limits, None)
            );
            assert_eq!(answer.unwrap().body, b"ok");
            let names: Vec<&str> = head
                .lines()
                .skip(1)
                .filter_map(|l| l.split_once(':').map(|(n, _)| n))
                .collect();
            if setting == ProfileSetting::Rustls {
                assert!(names.contains(&"user-agent"), "{head}");
                continue;
            }
            // The planned Chrome User-Agent stays only on a Chrome identity.
            let chrome = matches!(
                setting,
                ProfileSetting::Browser | ProfileSetting::Fixed(FetchProfile::Chrome)
            );
            for p in planned.iter().filter(|p| chrome || **p != "User-Agent") {
                assert!(
                    names.contains(p),
                    "{setting:?}: {p} not sent as spelled: {head}"
                );
            }
        }
    }

    /// Today's backend: rustls has none of the browsers' fingerprints (and
    /// does not trust the test CA, so no HTTP/2 preface follows).
    #[tokio::test]
    async fn rustls_has_no_browser_fingerprint() {
        let seen = observe(ProfileSetting::Rustls, CHROME_UA).await;
        eprintln!(
            "rustls ja4 {} ja3 {}",
            seen.hello.ja4(),
            seen.hello.ja3_text()
        );
        assert_ne!(seen.hello.ja4(), CHROME_143_JA4);
        assert_ne!(seen.hello.ja3n(), CHROME_143_JA3N);
        assert_ne!(seen.hello.ja3_text(), OKHTTP4_JA3);
        assert!(seen.http2.is_none());
    }
}
