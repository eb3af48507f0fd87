//! Tests of `location`.

use crate::location::*;

#[test]
fn a_path_is_sqlite_and_a_postgres_url_is_postgres() {
    assert_eq!(
        "mediaparse.db".parse(),
        Ok(DbLocation::Sqlite("mediaparse.db".into()))
    );
    assert_eq!(
        "/var/lib/m/db.sqlite".parse(),
        Ok(DbLocation::Sqlite("/var/lib/m/db.sqlite".into()))
    );
    assert_eq!(
        "./a:b.db".parse(),
        Ok(DbLocation::Sqlite("./a:b.db".into()))
    );
    for url in [
        "postgres://u@127.0.0.1/m",
        "postgresql://h/m",
        "POSTGRES://h/m",
    ] {
        assert_eq!(url.parse(), Ok(DbLocation::Postgres(url.into())));
    }
}

#[test]
fn other_schemes_are_refused_by_name() {
    for (value, scheme) in [
        ("mysql://h/m", "mysql"),
        ("sqlite://m.db", "sqlite"),
        ("file:m.db", "file"),
        ("postgres+tls://h/m", "postgres+tls"),
    ] {
        let err = value.parse::<DbLocation>().unwrap_err();
        assert_eq!(
            err,
            DbLocationError::UnsupportedScheme(scheme.into(), value.into())
        );
        assert!(err.to_string().contains("postgres://"), "{err}");
    }
    assert_eq!("".parse::<DbLocation>(), Err(DbLocationError::Empty));
}

#[test]
fn the_password_is_never_shown() {
    let db: DbLocation = "postgres://u:secret@h/m".parse().unwrap();
    assert!(!db.to_string().contains("secret"), "{db}");
}
