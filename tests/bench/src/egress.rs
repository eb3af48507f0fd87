//! Egress: parse latency through the browser backend (wreq on
//! BoringSSL) vs. rustls, on the same fake upstream behind TLS on loopback.
//!
//! A TLS front (rustls, a throwaway test CA, ALPN `http/1.1`) forwards each
//! connection to the fake upstream serving the TikTok video page; the
//! service trusts that CA through `MEDIAPARSE_UPSTREAM_TEST_CA` (honoured
//! only with `--upstream`). One service per backend, the platform forced to
//! `fetch_profile = "browser"` or `"rustls"`; parses are sequential and
//! alternate between the two, so the figures are one parse's latency: the
//! first (client set-up and TLS handshake included) and p50/p99 of the rest
//! (pooled connection).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;

use crate::{E2E_CASE, percentile};

/// A TLS terminator on loopback in front of `backend` (`127.0.0.1:PORT`).
struct TlsFront {
    port: u16,
    ca_pem: String,
    connections: Arc<AtomicUsize>,
}

impl TlsFront {
    async fn start(backend: String) -> anyhow::Result<TlsFront> {
        let ca_key = rcgen::KeyPair::generate()?;
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "mediaparse bench test CA");
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key)?;
        let leaf_key = rcgen::KeyPair::generate()?;
        let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])?
            .signed_by(&leaf_key, &*ca)?;
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone(), ca.der().clone()], key)?;
        // The fake upstream speaks HTTP/1.1 only; bytes are forwarded as they are.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let connections = Arc::new(AtomicUsize::new(0));
        tokio::spawn({
            let connections = connections.clone();
            async move {
                while let Ok((socket, _)) = listener.accept().await {
                    let _ = socket.set_nodelay(true);
                    connections.fetch_add(1, Ordering::Relaxed);
                    let (acceptor, backend) = (acceptor.clone(), backend.clone());
                    tokio::spawn(async move {
                        let Ok(mut tls) = acceptor.accept(socket).await else {
                            return;
                        };
                        let Ok(mut plain) = TcpStream::connect(&backend).await else {
                            return;
                        };
                        // Without it, Nagle and delayed ACKs add ~40 ms to
                        // every answer the front relays (measured: 44 ms p50).
                        let _ = plain.set_nodelay(true);
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                    });
                }
            }
        });
        Ok(TlsFront {
            port,
            ca_pem: ca.pem(),
            connections,
        })
    }
}

/// A service whose upstream requests for TikTok leave as `profile`.
struct Backend {
    profile: &'static str,
    service: Service,
    token: String,
    _conf: tempfile::TempDir,
}

impl Backend {
    async fn start(
        profile: &'static str,
        front: &TlsFront,
        ca_file: &std::path::Path,
    ) -> anyhow::Result<Backend> {
        let conf_dir = tempfile::tempdir()?;
        let conf = conf_dir.path().join("mediaparse.toml");
        std::fs::write(
            &conf,
            format!("[platforms.tiktok]\nfetch_profile = \"{profile}\"\n"),
        )?;
        let service = Service::start(ServiceOptions {
            upstream: Some(format!("https://127.0.0.1:{}", front.port)),
            config: Some(conf),
            extra_args: vec!["--rate-limit".into(), "0".into()],
            extra_env: vec![(
                "MEDIAPARSE_UPSTREAM_TEST_CA".into(),
                ca_file.display().to_string(),
            )],
            ..Default::default()
        })
        .await?;
        service.add_credits("default", 1_000_000_000)?;
        let token = service.create_key(&[])?;
        Ok(Backend {
            profile,
            service,
            token,
            _conf: conf_dir,
        })
    }

    /// One parse of `body`; its wall time.
    async fn parse(&self, client: &reqwest::Client, body: &[u8]) -> anyhow::Result<Duration> {
        let started = Instant::now();
        let resp = client
            .post(self.service.url("/api/v1/parse"))
            .bearer_auth(&self.token)
            .header("content-type", "application/json")
            // Each parse extracts: the latency of the fetch path is the point.
            .header("cache-control", "no-cache")
            .body(body.to_vec())
            .send()
            .await?;
        let status = resp.status();
        resp.bytes().await?;
        anyhow::ensure!(
            status.is_success(),
            "{}: parse answered {status}",
            self.profile
        );
        Ok(started.elapsed())
    }
}

/// Both backends on one fake upstream and TLS front. Their parses
/// alternate, so a change in the machine's load touches both alike.
pub async fn latency(quick: bool) -> anyhow::Result<Vec<Value>> {
    let case = Case::load(&paths::workspace_root().join("extractors").join(E2E_CASE))?;
    let upstream = FakeUpstream::start(std::slice::from_ref(&case)).await?;
    let backend = upstream
        .base_url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let front = TlsFront::start(backend).await?;
    let dir = tempfile::tempdir()?;
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, &front.ca_pem)?;
    let runs = if quick { 100 } else { 500 };
    let client = reqwest::Client::new();
    let body = serde_json::to_vec(&json!({ "url": case.input }))?;

    let mut rows = Vec::new();
    for profile in ["browser", "rustls"] {
        let backend = Backend::start(profile, &front, &ca_file).await?;
        let connections = front.connections.load(Ordering::Relaxed);
        let first = backend.parse(&client, &body).await?;
        // Only this backend's first parse may have opened a TLS connection.
        let opened = front.connections.load(Ordering::Relaxed) - connections;
        anyhow::ensure!(
            opened > 0,
            "{profile}: the first parse opened no TLS connection"
        );
        rows.push((backend, first, opened, Vec::with_capacity(runs)));
    }
    let hits = upstream.hits().len();
    for _ in 0..runs {
        for (backend, _, _, latencies) in &mut rows {
            latencies.push(backend.parse(&client, &body).await?);
        }
    }
    let upstream_requests = upstream.hits().len() - hits;
    // Every parse crossed the TLS front to the fake upstream.
    anyhow::ensure!(
        upstream_requests >= runs * rows.len(),
        "{upstream_requests} upstream requests for {} parses",
        runs * rows.len()
    );
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    Ok(rows
        .into_iter()
        .map(|(backend, first, opened, mut latencies)| {
            latencies.sort();
            json!({
                "profile": backend.profile,
                "parses": runs + 1,
                "first_us": us(first),
                "p50_us": us(percentile(&latencies, 0.50)),
                "p99_us": us(percentile(&latencies, 0.99)),
                "tls_connections_first_parse": opened,
                "upstream_requests_per_parse": upstream_requests as f64 / (runs * 2) as f64,
            })
        })
        .collect())
}

pub fn print_table(rows: &[Value]) {
    if rows.is_empty() {
        return;
    }
    println!(
        "\n### Egress: one parse's latency by TLS backend (TikTok video page, fake upstream behind TLS on loopback, sequential)\n"
    );
    println!(
        "| fetch_profile | parses | first parse µs (TLS handshake) | p50 µs | p99 µs | upstream requests/parse |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.1} |",
            r["profile"].as_str().unwrap_or(""),
            r["parses"],
            r["first_us"].as_f64().unwrap_or(0.0),
            r["p50_us"].as_f64().unwrap_or(0.0),
            r["p99_us"].as_f64().unwrap_or(0.0),
            r["upstream_requests_per_parse"].as_f64().unwrap_or(0.0),
        );
    }
}
