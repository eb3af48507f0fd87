//! How to reach the server: the `postgres://` URL's settings and its TLS.
//!
//! TLS follows the URL's `sslmode`: `require`, `verify-ca` and `verify-full`
//! all encrypt AND verify the server's certificate and name (against the
//! public web roots plus the PEM file `sslrootcert=` names, for a private
//! CA); `disable`, `prefer` (libpq's default) or no `sslmode` connect in the
//! clear, as a loopback or private-network database usually is. We never
//! encrypt without verifying: that would only look safe.

use std::path::Path;
use std::sync::Arc;

use postgres::config::SslMode;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::{StoreError, StoreResult};

/// A parsed URL and the TLS connector its connections use; cheap to clone.
#[derive(Clone)]
pub struct Connector {
    /// The blocking client's settings.
    pub config: postgres::Config,
    /// The same settings for the async client (`async_pool`).
    pub async_config: tokio_postgres::Config,
    pub tls: MakeRustlsConnect,
}

impl Connector {
    pub fn from_url(url: &str) -> StoreResult<Connector> {
        let bad = |why: String| StoreError::Invalid(format!("bad PostgreSQL URL: {why}"));
        let mut parsed = url::Url::parse(url).map_err(|e| bad(e.to_string()))?;
        // tokio-postgres knows neither `sslrootcert` nor the verify-* modes:
        // take them out here, the rest of the URL is its to read.
        let mut root_cert = None;
        let mut verify = false;
        let kept: Vec<(String, String)> = parsed
            .query_pairs()
            .filter_map(|(k, v)| match (k.as_ref(), v.as_ref()) {
                ("sslrootcert", _) => {
                    root_cert = Some(v.into_owned());
                    None
                }
                ("sslmode", "verify-ca" | "verify-full") => {
                    verify = true;
                    None
                }
                _ => Some((k.into_owned(), v.into_owned())),
            })
            .collect();
        if kept.is_empty() {
            parsed.set_query(None);
        } else {
            parsed.query_pairs_mut().clear().extend_pairs(kept);
        }
        let mut config: tokio_postgres::Config = parsed
            .as_str()
            .parse()
            .map_err(|e: postgres::Error| bad(e.to_string()))?;
        let encrypted = verify || config.get_ssl_mode() == SslMode::Require;
        config.ssl_mode(if encrypted {
            SslMode::Require
        } else {
            SslMode::Disable
        });
        let roots = verified_roots(root_cert.as_deref().map(Path::new))?;
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::Invalid(format!("TLS setup: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        Ok(Connector {
            config: postgres::Config::from(config.clone()),
            async_config: config,
            tls: MakeRustlsConnect::new(tls),
        })
    }

    /// One connection outside the pool (the key-change listener).
    pub fn connect(&self) -> Result<postgres::Client, postgres::Error> {
        self.config.connect(self.tls.clone())
    }
}

/// The public web roots, plus every certificate of `extra` (a PEM file).
fn verified_roots(extra: Option<&Path>) -> StoreResult<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let Some(path) = extra else {
        return Ok(roots);
    };
    let unreadable = |why: String| {
        StoreError::Invalid(format!(
            "sslrootcert {}: {why} (a PEM file of CA certificates)",
            path.display()
        ))
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| unreadable(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| unreadable(e.to_string()))?;
    if certs.is_empty() {
        return Err(unreadable("no certificate in it".into()));
    }
    for cert in certs {
        roots
            .add(cert)
            .map_err(|e| unreadable(format!("not a CA certificate: {e}")))?;
    }
    Ok(roots)
}
