//! The last failing parses of each platform, kept as fixture cases: when a
//! parse fails on the platform's side with a failure its extractor reported
//! (a changed upstream, an upstream error, a login wall, a rate limit), the
//! exchanges the parse already held for its guest are written, secrets
//! scrubbed (see [`super::scrub`]), as a case expecting that failure's code,
//! so `mediaparse replay` on it reproduces the failure and an author keeps
//! it as a regression fixture. Failures outside the extractor (a timeout, a
//! refused connection) have nothing a fixture can replay and are not kept.
//!
//! Where: a folder beside the database file (`failures/`, like the session
//! jar and the remembered values), one sub-folder per failure named by its
//! id, holding `case.json`, the response bodies, and [`META_FILE`]. The
//! service writes it off the request path; `mediaparse failures` reads it.
//! Bounded: at most `per_platform` failures per platform (the oldest go),
//! and a failure whose bodies exceed `max_bytes` is not kept (counted).

use std::path::{Path, PathBuf};

use mediaparse_sdk::Exchange;
use mediaparse_sdk::fixture::{Case, Expect};
use rand::RngCore;
use serde::{Deserialize, Serialize};

use super::scrub::Scrubber;
use mediaparse_fetch::Hop;
pub use mediaparse_parse::failures::FailedParse;
use mediaparse_parse::failures::{FailureBounds, FailureSink};

/// The file beside `case.json` saying what failed, when, and why.
pub const META_FILE: &str = "failure.json";

/// Failing parses kept as fixture cases in one folder, written off the
/// request path.
pub struct FailureDir {
    dir: PathBuf,
}

impl FailureDir {
    pub fn new(dir: PathBuf) -> FailureDir {
        FailureDir { dir }
    }
}

impl FailureSink for FailureDir {
    fn dir(&self) -> &Path {
        &self.dir
    }

    fn keep(&self, failed: FailedParse, bounds: FailureBounds) {
        let keeper = FailureKeeper {
            dir: self.dir.clone(),
            per_platform: bounds.per_platform,
            max_bytes: bounds.max_bytes,
        };
        // Blocks: writes the fixture case's files to disk (not a store call).
        tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            let outcome = match keeper.keep(&failed) {
                Ok(Kept::Kept(id)) => {
                    tracing::info!(platform = %failed.platform, code = failed.code, id, exchanges = failed.exchanges.len(), elapsed_us = started.elapsed().as_micros() as u64, "failing parse kept as a fixture case");
                    "kept"
                }
                Ok(Kept::TooLarge(bytes)) => {
                    tracing::info!(platform = %failed.platform, bytes, "failing parse not kept: larger than failure_max_bytes");
                    "too_large"
                }
                Err(e) => {
                    tracing::warn!(platform = %failed.platform, error = %e, "failing parse not kept");
                    "failed"
                }
            };
            mediaparse_metrics::global().failure_kept(&failed.platform, outcome);
        });
    }
}

/// The folder failures are kept in for a data file (`mediaparse.db` → `failures/` beside it).
pub fn dir_for(data_file: &Path) -> PathBuf {
    data_file.with_file_name("failures")
}

/// What [`META_FILE`] holds: one kept failure, as `failures list` shows it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct KeptFailure {
    pub id: String,
    pub platform: String,
    pub code: String,
    pub message: String,
    /// Scrubbed like the case.
    pub input: String,
    pub at_unix_s: i64,
    pub exchanges: usize,
    pub bytes: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum FailureError {
    #[error("no kept failure {0:?}")]
    NotFound(String),
    #[error("{0:?} is not a failure id")]
    BadId(String),
    #[error("{0} exists; pass --force to overwrite it")]
    Exists(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Write(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FailureError + '_ {
    move |source| FailureError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Where failures are written, and how many and how large.
#[derive(Clone, Debug)]
pub struct FailureKeeper {
    pub dir: PathBuf,
    pub per_platform: usize,
    pub max_bytes: usize,
}

/// Did [`FailureKeeper::keep`] keep it?
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kept {
    Kept(String),
    TooLarge(usize),
}

impl FailureKeeper {
    /// Write `failed` as a case (blocking: file I/O); the oldest of its
    /// platform beyond the bound are removed.
    pub fn keep(&self, failed: &FailedParse) -> Result<Kept, FailureError> {
        let bytes: usize = failed
            .exchanges
            .iter()
            .map(|e| e.response.body.len() + e.request.body.as_ref().map_or(0, Vec::len))
            .sum();
        if bytes > self.max_bytes {
            return Ok(Kept::TooLarge(bytes));
        }
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let mut suffix = [0u8; 3];
        rand::rng().fill_bytes(&mut suffix);
        let id = format!(
            "{}-{}-{}",
            failed.platform,
            failed.at_unix_s,
            suffix
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        // Written aside, then renamed: a reader never sees half a case.
        let partial = self.dir.join(format!(".partial-{id}"));
        let result = write_case(&partial, &id, failed, bytes);
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&partial);
            return Err(e);
        }
        let done = self.dir.join(&id);
        std::fs::rename(&partial, &done).map_err(io(&done))?;
        self.prune(&failed.platform)?;
        Ok(Kept::Kept(id))
    }

    /// Remove `platform`'s oldest failures beyond the bound.
    fn prune(&self, platform: &str) -> Result<(), FailureError> {
        let kept = list(&self.dir, Some(platform))?;
        for old in kept.iter().skip(self.per_platform.max(1)) {
            let dir = self.dir.join(&old.id);
            std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
        }
        Ok(())
    }
}

/// The exchanges as the recorder's hops (one hop each: the answer the
/// extractor received for the request it planned).
fn hops(exchanges: &[Exchange]) -> Vec<Hop> {
    exchanges
        .iter()
        .enumerate()
        .map(|(call, e)| Hop {
            call,
            method: e.request.method.to_ascii_uppercase(),
            url: e.request.url.clone(),
            request_headers: e.request.headers.clone(),
            request_body: e.request.body.clone(),
            status: e.response.status,
            response_headers: e.response.headers.clone(),
            response_body: e.response.body.clone(),
        })
        .collect()
}

fn write_case(
    dir: &Path,
    id: &str,
    failed: &FailedParse,
    bytes: usize,
) -> Result<(), FailureError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let hops = hops(&failed.exchanges);
    let mut scrub = Scrubber::new();
    scrub.learn_config(&failed.secrets);
    for hop in &hops {
        scrub.learn_request_headers(&hop.request_headers);
        scrub.learn_response_headers(&hop.response_headers);
        scrub.learn_json_body(&hop.response_body);
        if let Some(body) = &hop.request_body {
            scrub.learn_json_body(body);
        }
    }
    let write = |e: anyhow::Error| FailureError::Write(format!("{e:#}"));
    let exchanges = super::record::write_exchanges(dir, &hops, &scrub).map_err(write)?;
    let at = chrono::DateTime::from_timestamp(failed.at_unix_s, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default();
    let message = scrub.text(&failed.message);
    let case = Case {
        description: format!(
            "A {} parse that failed in the service on {at}: {} ({message}).",
            failed.platform, failed.code
        ),
        input: scrub.text(&failed.input),
        now_unix_ms: Some(failed.now_unix_ms),
        // Configured values travel only as their placeholders.
        config: scrub.headers(&failed.config),
        remembered: Vec::new(),
        helper_hosts: failed.helper_hosts.clone(),
        exchanges,
        expect: Expect {
            error: Some(failed.code.to_string()),
            ..Expect::default()
        },
        provenance: None,
        dir: dir.to_path_buf(),
    };
    super::record::write_case(&dir.join("case.json"), &case, &scrub).map_err(write)?;
    let meta = KeptFailure {
        id: id.to_string(),
        platform: failed.platform.clone(),
        code: failed.code.to_string(),
        message,
        input: case.input.clone(),
        at_unix_s: failed.at_unix_s,
        exchanges: hops.len(),
        bytes,
    };
    let text =
        serde_json::to_string_pretty(&meta).map_err(|e| FailureError::Write(e.to_string()))?;
    if scrub.leaks(&text) {
        return Err(FailureError::Write(
            "internal error: a secret survived scrubbing".into(),
        ));
    }
    let path = dir.join(META_FILE);
    std::fs::write(&path, text + "\n").map_err(io(&path))
}

/// Ids are `<platform>-<unix s>-<hex>`: nothing that names another folder.
fn check_id(id: &str) -> Result<(), FailureError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(FailureError::BadId(id.to_string()))
    }
}

/// The failures kept in `dir` (of `platform` only, if given), newest first.
/// A missing folder holds none.
pub fn list(dir: &Path, platform: Option<&str>) -> Result<Vec<KeptFailure>, FailureError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if check_id(name).is_err() {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path().join(META_FILE)) else {
            continue;
        };
        let Ok(meta) = serde_json::from_str::<KeptFailure>(&text) else {
            continue;
        };
        if meta.id == name && platform.is_none_or(|p| p == meta.platform) {
            out.push(meta);
        }
    }
    out.sort_by(|a, b| b.at_unix_s.cmp(&a.at_unix_s).then(b.id.cmp(&a.id)));
    Ok(out)
}

/// Copy failure `id`'s case into `to` (created): `case.json` and its
/// bodies, ready for `mediaparse replay` and an extractor's `fixtures/`.
pub fn export(dir: &Path, id: &str, to: &Path, force: bool) -> Result<PathBuf, FailureError> {
    check_id(id)?;
    let from = dir.join(id);
    if !from.join(META_FILE).is_file() {
        return Err(FailureError::NotFound(id.to_string()));
    }
    let case_json = to.join("case.json");
    if case_json.exists() && !force {
        return Err(FailureError::Exists(case_json));
    }
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(&from).map_err(io(&from))?.flatten() {
        if entry.file_name() == META_FILE {
            continue;
        }
        let target = to.join(entry.file_name());
        std::fs::copy(entry.path(), &target).map_err(io(&target))?;
    }
    Ok(to.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::{Header, HttpRequest, HttpResponse};
    use std::sync::Arc;

    fn failed(platform: &str, at: i64, body: &str) -> FailedParse {
        let request = HttpRequest {
            method: "GET".into(),
            url: "https://www.example.com/p/1".into(),
            headers: vec![Header::new("Cookie", "sid=abcdef123456")],
            body: None,
            follow_redirects: true,
            cache_ttl_seconds: 0,
        };
        let response = HttpResponse {
            request_url: request.url.clone(),
            final_url: request.url.clone(),
            status: 200,
            headers: vec![Header::new("content-type", "application/json")],
            body: body.as_bytes().to_vec(),
        };
        FailedParse {
            platform: platform.into(),
            code: "upstream_changed",
            message: "no post data".into(),
            input: "https://www.example.com/p/1".into(),
            now_unix_ms: 1_700_000_000_000,
            config: vec![Header::new("token", "operator-secret-token")],
            secrets: vec![Header::new("token", "operator-secret-token")],
            helper_hosts: Vec::new(),
            exchanges: Arc::new(vec![Exchange { request, response }]),
            at_unix_s: at,
        }
    }

    fn keeper(dir: &Path) -> FailureKeeper {
        FailureKeeper {
            dir: dir.to_path_buf(),
            per_platform: 2,
            max_bytes: 64,
        }
    }

    #[test]
    fn a_kept_failure_is_a_scrubbed_case_expecting_its_error() {
        let tmp = tempfile::tempdir().unwrap();
        let k = keeper(tmp.path());
        let Kept::Kept(id) = k
            .keep(&failed("demo", 10, r#"{"echo":"operator-secret-token"}"#))
            .unwrap()
        else {
            panic!("not kept")
        };
        let out = tmp.path().join("export");
        export(tmp.path(), &id, &out, false).unwrap();
        let case = Case::load(&out).unwrap();
        assert_eq!(case.expect.error.as_deref(), Some("upstream_changed"));
        assert_eq!(case.exchanges.len(), 1);
        assert_eq!(case.now_unix_ms, Some(1_700_000_000_000));
        let mut all = String::new();
        for entry in std::fs::read_dir(&out).unwrap().flatten() {
            all += &std::fs::read_to_string(entry.path()).unwrap();
        }
        assert!(!all.contains("operator-secret-token"), "{all}");
        assert!(!all.contains("abcdef123456"), "{all}");
        assert!(!out.join(META_FILE).exists());
        assert!(matches!(
            export(tmp.path(), &id, &out, false),
            Err(FailureError::Exists(_))
        ));
    }

    #[test]
    fn failures_are_bounded_per_platform_and_in_size() {
        let tmp = tempfile::tempdir().unwrap();
        let k = keeper(tmp.path());
        for at in 1..=3 {
            k.keep(&failed("demo", at, "{}")).unwrap();
        }
        k.keep(&failed("other", 5, "{}")).unwrap();
        let demo = list(tmp.path(), Some("demo")).unwrap();
        assert_eq!(
            demo.iter().map(|f| f.at_unix_s).collect::<Vec<_>>(),
            [3, 2],
            "the oldest went"
        );
        assert_eq!(list(tmp.path(), None).unwrap().len(), 3);
        let big = "x".repeat(65);
        assert_eq!(
            k.keep(&failed("demo", 9, &big)).unwrap(),
            Kept::TooLarge(65)
        );
        assert!(matches!(
            export(tmp.path(), "../etc", &tmp.path().join("o"), false),
            Err(FailureError::BadId(_))
        ));
        assert!(matches!(
            export(tmp.path(), "demo-1-000000", &tmp.path().join("o"), false),
            Err(FailureError::NotFound(_))
        ));
    }
}
