//! Tests of `pg::connect`.

use crate::pg::connect::*;
use postgres::config::SslMode;

#[test]
fn libpq_spellings_are_understood_and_prefer_stays_in_the_clear() {
    let mode = |url: &str| Connector::from_url(url).unwrap().config.get_ssl_mode();
    assert_eq!(mode("postgres://u@h/db"), SslMode::Disable);
    assert_eq!(mode("postgres://u@h/db?sslmode=prefer"), SslMode::Disable);
    assert_eq!(mode("postgres://u@h/db?sslmode=require"), SslMode::Require);
    assert_eq!(
        mode("postgres://u@h/db?sslmode=verify-full"),
        SslMode::Require
    );
    let c =
        Connector::from_url("postgres://u@h:5433/db?sslmode=verify-ca&connect_timeout=3").unwrap();
    assert_eq!(c.config.get_ports(), &[5433]);
    assert_eq!(c.config.get_dbname(), Some("db"));
}

#[test]
fn a_missing_or_empty_root_file_is_a_clear_error() {
    let err = Connector::from_url("postgres://u@h/db?sslmode=require&sslrootcert=/nonexistent.pem")
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("sslrootcert /nonexistent.pem"), "{err}");
    let empty = std::env::temp_dir().join(format!("pg-empty-{}.pem", std::process::id()));
    std::fs::write(&empty, "").unwrap();
    let err = Connector::from_url(&format!(
        "postgres://u@h/db?sslmode=require&sslrootcert={}",
        empty.display()
    ))
    .err()
    .unwrap()
    .to_string();
    std::fs::remove_file(&empty).unwrap();
    assert!(err.contains("no certificate"), "{err}");
}
