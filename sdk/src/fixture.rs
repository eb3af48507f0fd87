//! Fixture cases (DESIGN.md §6): one recorded parse per folder,
//! `fixtures/<case>/case.json` plus response bodies as files beside it.
//! The same case drives the native replay harness and the end-to-end tests.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use crate::Header;

#[derive(Debug, thiserror::Error)]
/// Why a case could not be loaded.
pub enum FixtureError {
    #[error("{path}: {source}")]
    /// A file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    /// `case.json` is not valid JSON of the case format.
    Json {
        /// The file.
        path: PathBuf,
        /// The JSON error.
        source: serde_json::Error,
    },
    #[error("{path}: {message}")]
    /// The case breaks a rule of the format (both `media` and `error`, …).
    Invalid {
        /// The `case.json`.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// A whole case as written in `case.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// What this case proves, in one sentence.
    pub description: String,
    /// The caller's input (URL or share text).
    pub input: String,
    /// `context.now-unix-ms` for the extractor (defaults to [`DEFAULT_NOW_MS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now_unix_ms: Option<u64>,
    /// Operator config for the platform (`context.config`).
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "pairs")]
    pub config: Vec<Header>,
    /// Values remembered from earlier parses (`context.remembered`, WIT 1.1):
    /// `[key, value]` pairs.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "pairs")]
    pub remembered: Vec<Header>,
    /// The operator's helper hosts for the platform (`[platforms.X]
    /// helper_hosts`): hosts the extractor may call besides its api-hosts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub helper_hosts: Vec<String>,
    /// The upstream exchanges, as raw HTTP hops (a followed redirect is two).
    #[serde(default)]
    pub exchanges: Vec<RecordedExchange>,
    /// What the parse must produce.
    pub expect: Expect,
    /// Where the recorded bodies come from, when they are not verbatim
    /// captures of the platform's answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The folder holding `case.json` (set when loading).
    #[serde(skip)]
    pub dir: PathBuf,
}

/// Where a case's recorded bodies come from.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The bodies (or parts of them) were written or rebuilt by hand, from
    /// a platform guide's field list or around a real value, rather than
    /// captured verbatim.
    pub reconstructed: bool,
    /// What was reconstructed and from what.
    pub note: String,
}

impl Case {
    /// Whether the case says its payload is not a verbatim capture.
    pub fn is_reconstructed(&self) -> bool {
        self.provenance.as_ref().is_some_and(|p| p.reconstructed)
    }
}

/// The clock of a case that does not say (and of the end-to-end service).
pub const DEFAULT_NOW_MS: u64 = 1_700_000_000_000;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// One raw HTTP hop: what was asked and what came back.
pub struct RecordedExchange {
    /// What was asked.
    pub request: RecordedRequest,
    /// What came back.
    pub response: RecordedResponse,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// How a planned request is recognised.
pub struct RecordedRequest {
    #[serde(default = "get")]
    /// The HTTP method (default `GET`).
    pub method: String,
    /// The exact URL the extractor plans (platform URL, not the override's).
    pub url: String,
    /// Headers the request must carry: name (any case) → a substring of the value.
    /// Used to tell apart requests to the same URL (for example with a cookie).
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "pairs")]
    pub headers: Vec<Header>,
    /// The exact body, as text, when the request has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

fn get() -> String {
    "GET".into()
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// The recorded answer.
pub struct RecordedResponse {
    /// HTTP status.
    pub status: u16,
    /// Response headers in order (repeated names allowed, e.g. `Set-Cookie`).
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "pairs")]
    pub headers: Vec<Header>,
    /// Body file beside `case.json` (real upstream form: HTML stays HTML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_file: Option<String>,
    /// Inline body, for short answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// What the parse must produce.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Checks on the detected target (`id`, `canonicalUrl`, `platform`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<serde_json::Map<String, serde_json::Value>>,
    /// The exact media object (golden JSON, `platform` included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<serde_json::Value>,
    /// Checks on platform data: JSON pointer → expected value.
    #[serde(
        default,
        rename = "platformData",
        skip_serializing_if = "Option::is_none"
    )]
    pub platform_data: Option<serde_json::Map<String, serde_json::Value>>,
    /// The expected error code instead of media (`302`, `content_unavailable`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Exactly the values the extractor must ask the host to remember over
    /// the whole parse, in order (WIT 1.1); absent: not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remember: Option<Vec<crate::Memo>>,
}

impl Case {
    /// Load `dir/case.json` and check it (bodies readable, one expectation).
    ///
    /// ```no_run
    /// let case = mediaparse_sdk::fixture::Case::load("extractors/weibo/fixtures/text_only_post".as_ref()).unwrap();
    /// println!("{}: {}", case.name(), case.description);
    /// ```
    pub fn load(dir: &Path) -> Result<Case, FixtureError> {
        let path = dir.join("case.json");
        let text = std::fs::read_to_string(&path).map_err(|source| FixtureError::Io {
            path: path.clone(),
            source,
        })?;
        let mut case: Case = serde_json::from_str(&text).map_err(|source| FixtureError::Json {
            path: path.clone(),
            source,
        })?;
        case.dir = dir.to_path_buf();
        let invalid = |message: String| FixtureError::Invalid {
            path: path.clone(),
            message,
        };
        if case.expect.media.is_some() == case.expect.error.is_some() {
            return Err(invalid(
                "expect needs exactly one of `media` and `error`".into(),
            ));
        }
        for (i, ex) in case.exchanges.iter().enumerate() {
            if ex.response.body_file.is_some() && ex.response.body.is_some() {
                return Err(invalid(format!(
                    "exchange {i}: give body or body_file, not both"
                )));
            }
            case.body(ex)
                .map_err(|e| invalid(format!("exchange {i}: {e}")))?;
        }
        Ok(case)
    }

    /// Every case folder (holding a `case.json`) under `fixtures`, sorted.
    pub fn load_all(fixtures: &Path) -> Result<Vec<Case>, FixtureError> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures)
            .map_err(|source| FixtureError::Io {
                path: fixtures.to_path_buf(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("case.json").is_file())
            .collect();
        dirs.sort();
        dirs.iter().map(|d| Case::load(d)).collect()
    }

    /// The case's name: its folder's name.
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The clock the extractor sees for this case.
    pub fn now_unix_ms(&self) -> u64 {
        self.now_unix_ms.unwrap_or(DEFAULT_NOW_MS)
    }

    /// The response body of a recorded exchange.
    pub fn body(&self, exchange: &RecordedExchange) -> Result<Vec<u8>, std::io::Error> {
        match (&exchange.response.body_file, &exchange.response.body) {
            (Some(file), _) => std::fs::read(self.dir.join(file)),
            (None, Some(text)) => Ok(text.clone().into_bytes()),
            (None, None) => Ok(Vec::new()),
        }
    }
}

/// Requests that two cases record with different answers. The end-to-end
/// fake upstream serves every case of every platform at once, so the same
/// request (method, URL, header constraints, body) must always get the same
/// answer; give each case its own post id, or tell requests apart by headers.
pub fn collisions(cases: &[Case]) -> Vec<String> {
    let mut seen: Vec<(&Case, &RecordedExchange)> = Vec::new();
    let mut out = Vec::new();
    for case in cases {
        for ex in &case.exchanges {
            let key = |e: &RecordedExchange| {
                let mut h: Vec<String> = e
                    .request
                    .headers
                    .iter()
                    .map(|h| format!("{}:{}", h.name.to_ascii_lowercase(), h.value))
                    .collect();
                h.sort();
                (
                    e.request.method.to_ascii_uppercase(),
                    e.request.url.clone(),
                    h,
                    e.request.body.clone(),
                )
            };
            for (other_case, other) in &seen {
                if std::ptr::eq(*other_case, case) || key(other) != key(ex) {
                    continue;
                }
                let same = other.response.status == ex.response.status
                    && other.response.headers == ex.response.headers
                    && other_case.body(other).ok() == case.body(ex).ok();
                if !same {
                    out.push(format!(
                        "{} {} is answered differently in cases `{}` and `{}`",
                        ex.request.method,
                        ex.request.url,
                        other_case.name(),
                        case.name()
                    ));
                }
            }
            seen.push((case, ex));
        }
    }
    out
}

impl RecordedRequest {
    /// Does an actual request match this recorded one?
    pub fn matches(
        &self,
        method: &str,
        url: &str,
        headers: &[Header],
        body: Option<&[u8]>,
    ) -> bool {
        self.method.eq_ignore_ascii_case(method)
            && self.url == url
            && self.headers.iter().all(|want| {
                headers.iter().any(|h| {
                    h.name.eq_ignore_ascii_case(&want.name) && h.value.contains(&want.value)
                })
            })
            && match &self.body {
                Some(want) => body == Some(want.as_bytes()),
                None => true,
            }
    }
}

/// Headers as `[["name", "value"], …]` in JSON: ordered, repeatable.
mod pairs {
    use crate::Header;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(headers: &[Header], s: S) -> Result<S::Ok, S::Error> {
        headers
            .iter()
            .map(|h| [h.name.as_str(), h.value.as_str()])
            .collect::<Vec<_>>()
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Header>, D::Error> {
        Ok(Vec::<(String, String)>::deserialize(d)?
            .into_iter()
            .map(|(name, value)| Header { name, value })
            .collect())
    }
}
