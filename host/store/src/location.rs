//! Where the database lives: a SQLite file path (the embedded default) or a
//! `postgres://` URL. Anything else that looks like a URL is refused, so a
//! mistyped scheme never turns into a directory named after it.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// The value of `--db` / `MEDIAPARSE_DB`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DbLocation {
    /// A SQLite database file (created if missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`).
    Postgres(String),
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DbLocationError {
    #[error("the database location is empty")]
    Empty,
    #[error(
        "unsupported database scheme `{0}:`: give a SQLite file path (e.g. mediaparse.db) or a \
         postgres:// URL (a file whose name has a colon: write it as ./{1})"
    )]
    UnsupportedScheme(String, String),
}

impl DbLocation {
    /// Where the per-host files (session jar, remembered values) are named
    /// from: the SQLite file itself, or on PostgreSQL `mediaparse.db` in
    /// `MEDIAPARSE_DATA_DIR` (default: the working directory).
    pub fn data_file(&self) -> std::path::PathBuf {
        match self {
            DbLocation::Sqlite(path) => path.clone(),
            DbLocation::Postgres(_) => std::path::PathBuf::from(
                std::env::var_os("MEDIAPARSE_DATA_DIR").unwrap_or(".".into()),
            )
            .join("mediaparse.db"),
        }
    }

    /// The SQLite file, or why this location cannot be opened as one.
    pub fn sqlite_path(&self) -> Result<std::path::PathBuf, super::StoreError> {
        match self {
            DbLocation::Sqlite(path) => Ok(path.clone()),
            DbLocation::Postgres(_) => Err(super::postgres_unavailable(self)),
        }
    }
}

impl FromStr for DbLocation {
    type Err = DbLocationError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        if value.is_empty() {
            return Err(DbLocationError::Empty);
        }
        match url_scheme(value) {
            Some(s)
                if s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql") =>
            {
                Ok(DbLocation::Postgres(value.to_owned()))
            }
            Some(s) => Err(DbLocationError::UnsupportedScheme(
                s.to_owned(),
                value.to_owned(),
            )),
            None => Ok(DbLocation::Sqlite(PathBuf::from(value))),
        }
    }
}

/// The scheme of `value` if it starts like a URL (`scheme:`, RFC 3986
/// letters), else `None`. A path written `./a:b` or `/a:b` is a path.
fn url_scheme(value: &str) -> Option<&str> {
    let (scheme, _) = value.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let is_scheme = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    is_scheme.then_some(scheme)
}

impl fmt::Display for DbLocation {
    /// A PostgreSQL URL is shown without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbLocation::Sqlite(path) => write!(f, "{}", path.display()),
            DbLocation::Postgres(url) => match url::Url::parse(url) {
                Ok(mut u) if u.password().is_some() => {
                    let _ = u.set_password(Some("***"));
                    write!(f, "{u}")
                }
                _ => f.write_str(url),
            },
        }
    }
}
