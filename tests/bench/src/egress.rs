//! Egress (issue 14): parse latency through the browser backend (wreq on
//! BoringSSL) vs. rustls, on the same fake upstream behind TLS on loopback.
//!
//! A TLS front (rustls, a throwaway test CA, ALPN `http/1.1`) forwards each
//! connection to the fake upstream serving the TikTok video page; the
//! service trusts that CA through `MEDIAPARSE_UPSTREAM_TEST_CA` (honoured
//! only with `--upstream`). One service per backend, the platform forced to
//! `fetch_profile = "browser"` or `"rustls"`; parses are sequential, so the
//! figures are one parse's latency: the first (client set-up and TLS
//! handshake included) and p50/p99 of the rest (pooled connection).

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
                    connections.fetch_add(1, Ordering::Relaxed);
                    let (acceptor, backend) = (acceptor.clone(), backend.clone());
                    tokio::spawn(async move {
                        let Ok(mut tls) = acceptor.accept(socket).await else {
                            return;
                        };
                        let Ok(mut plain) = TcpStream::connect(&backend).await else {
                            return;
                        };
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

/// One backend's figures.
async fn measure(
    case: &Case,
    upstream: &FakeUpstream,
    front: &TlsFront,
    ca_file: &std::path::Path,
    profile: &str,
    runs: usize,
) -> anyhow::Result<Value> {
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
    let client = reqwest::Client::new();
    let body = serde_json::to_vec(&json!({ "url": case.input }))?;
    let parse = || async {
        let started = Instant::now();
        let resp = client
            .post(service.url("/api/v1/parse"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await?;
        let status = resp.status();
        resp.bytes().await?;
        anyhow::ensure!(status.is_success(), "{profile}: parse answered {status}");
        Ok::<_, anyhow::Error>(started.elapsed())
    };
    let (connections, hits) = (
        front.connections.load(Ordering::Relaxed),
        upstream.hits().len(),
    );
    let first = parse().await?;
    let mut latencies = Vec::with_capacity(runs);
    for _ in 0..runs {
        latencies.push(parse().await?);
    }
    latencies.sort();
    let tls_connections = front.connections.load(Ordering::Relaxed) - connections;
    let upstream_requests = upstream.hits().len() - hits;
    // Every parse must have crossed the TLS front to the fake upstream.
    anyhow::ensure!(
        tls_connections > 0 && upstream_requests > runs,
        "{profile}: {tls_connections} TLS connections, {upstream_requests} upstream requests"
    );
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    Ok(json!({
        "profile": profile,
        "parses": runs + 1,
        "first_us": us(first),
        "p50_us": us(percentile(&latencies, 0.50)),
        "p99_us": us(percentile(&latencies, 0.99)),
        "tls_connections": tls_connections,
        "upstream_requests_per_parse": upstream_requests as f64 / (runs + 1) as f64,
    }))
}

/// Both backends, one after the other, on one fake upstream and TLS front.
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
    let mut rows = Vec::new();
    for profile in ["browser", "rustls"] {
        rows.push(measure(&case, &upstream, &front, &ca_file, profile, runs).await?);
    }
    Ok(rows)
}

pub fn print_table(rows: &[Value]) {
    if rows.is_empty() {
        return;
    }
    println!(
        "\n### Egress: one parse's latency by TLS backend (TikTok video page, fake upstream behind TLS on loopback, sequential)\n"
    );
    println!(
        "| fetch_profile | parses | first parse µs | p50 µs | p99 µs | TLS connections | upstream requests/parse |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {} | {:.1} |",
            r["profile"].as_str().unwrap_or(""),
            r["parses"],
            r["first_us"].as_f64().unwrap_or(0.0),
            r["p50_us"].as_f64().unwrap_or(0.0),
            r["p99_us"].as_f64().unwrap_or(0.0),
            r["tls_connections"],
            r["upstream_requests_per_parse"].as_f64().unwrap_or(0.0),
        );
    }
}
