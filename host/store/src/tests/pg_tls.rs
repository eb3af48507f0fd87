//! PostgreSQL over TLS: `sslmode=require` encrypts and verifies the server.

use crate::pg::Connector;
use crate::{DbLocation, Store, test_pg};

/// A test CA and a certificate for `localhost`/127.0.0.1 it signed: (CA PEM, cert PEM, key PEM).
fn test_ca_and_server_cert() -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "mediaparse PostgreSQL test CA");
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])
        .unwrap()
        .signed_by(&key, &*ca)
        .unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

#[test]
fn sslmode_require_encrypts_and_verifies_the_server() {
    let (ca, cert, key) = test_ca_and_server_cert();
    test_pg::enable_tls(&cert, &key);
    let url = test_pg::fresh_database();
    let ca_file = std::env::temp_dir().join(format!("mediaparse-pg-ca-{}.pem", std::process::id()));
    std::fs::write(&ca_file, &ca).unwrap();
    let tls_url = format!("{url}?sslmode=require&sslrootcert={}", ca_file.display());

    // The store works over it, and its sessions are encrypted.
    let store = Store::connect(&DbLocation::Postgres(tls_url.clone())).unwrap();
    store.add_credits("acme", 5, 0).unwrap();
    assert_eq!(store.balance("acme").unwrap(), 5);
    let ssl_of = |url: &str| -> bool {
        let mut client = Connector::from_url(url).unwrap().connect().unwrap();
        client
            .query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .unwrap()
            .get(0)
    };
    assert!(ssl_of(&tls_url), "sslmode=require is encrypted");
    assert!(!ssl_of(&url), "no sslmode stays in the clear");

    // A server the roots do not vouch for is refused, not trusted.
    let refused = Store::connect(&DbLocation::Postgres(format!("{url}?sslmode=require")))
        .err()
        .expect("an unverifiable server is refused")
        .to_string();
    assert!(refused.to_lowercase().contains("certificate"), "{refused}");
    // Nor a name the certificate does not carry (same address, other name).
    let other_name = format!(
        "{}&hostaddr=127.0.0.1",
        tls_url.replace("@127.0.0.1:", "@db.invalid:")
    );
    let mismatch = Connector::from_url(&other_name)
        .unwrap()
        .connect()
        .err()
        .expect("a certificate for another name is refused");
    let mismatch = crate::StoreError::from(mismatch).to_string();
    assert!(
        mismatch.to_lowercase().contains("certificate"),
        "{mismatch}"
    );
    std::fs::remove_file(&ca_file).unwrap();
}
