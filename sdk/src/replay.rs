//! The native replay harness: run an extractor against a fixture case
//! exactly as the host would (detect, plan rounds, redirects, map), with the
//! recorded exchanges standing in for the network. No wasm involved.

use std::path::Path;

use crate::fixture::{Case, FixtureError};
use crate::urls::{InputUrl, host_matches};
use crate::{
    Context, Exchange, Extraction, Extractor, Failure, HttpRequest, HttpResponse, Plan, Target,
    spec,
};

/// Plan rounds the host allows per parse.
pub const MAX_ROUNDS: usize = 8;
/// Redirect hops the host follows for one request.
pub const MAX_REDIRECTS: usize = 10;

/// What one replayed parse produced.
#[derive(Debug)]
pub struct Outcome {
    pub target: Option<Target>,
    pub result: Result<Extraction, Failure>,
    /// Every request the extractor planned, in order.
    pub requests: Vec<HttpRequest>,
}

#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error(transparent)]
    Fixture(#[from] FixtureError),
    #[error("the extractor planned a request the case did not record: {method} {url}")]
    Unrecorded { method: String, url: String },
    #[error("the extractor asked for {0}, which is not on its declared api-hosts")]
    UndeclaredHost(String),
    #[error("more than {MAX_ROUNDS} plan rounds")]
    TooManyRounds,
    #[error("more than {MAX_REDIRECTS} redirects from {0}")]
    TooManyRedirects(String),
}

/// Replay one case: the exchanges are matched to planned requests in order.
pub fn run<E: Extractor>(case: &Case) -> Result<Outcome, HarnessError> {
    let info = E::info();
    let mut used = vec![false; case.exchanges.len()];
    let mut requests = Vec::new();
    let target = match E::detect(&case.input) {
        Ok(t) => t,
        Err(f) => {
            return Ok(Outcome {
                target: None,
                result: Err(f),
                requests,
            });
        }
    };
    let ctx = Context {
        now_unix_ms: case.now_unix_ms(),
        config: case.config.clone(),
    };
    let mut done: Vec<Exchange> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        match E::plan(&target, &ctx, &done) {
            Err(f) => {
                return Ok(Outcome {
                    target: Some(target),
                    result: Err(f),
                    requests,
                });
            }
            Ok(Plan::Ready) => {
                let result = E::map(&target, &ctx, &done);
                return Ok(Outcome {
                    target: Some(target),
                    result,
                    requests,
                });
            }
            Ok(Plan::Fetch(batch)) => {
                for request in batch {
                    requests.push(request.clone());
                    let response = perform(case, &info.api_hosts, &request, &mut used)?;
                    done.push(Exchange { request, response });
                }
            }
        }
    }
    Err(HarnessError::TooManyRounds)
}

/// Everything `map` receives for a case that reaches `Plan::Ready`: the
/// target, the context and the exchanges, in the order the host would hand
/// them over. `None` when detect or plan fails first (the case has no map
/// step). Benchmarks use it to time `map` alone, natively and in wasm.
pub fn map_inputs<E: Extractor>(
    case: &Case,
) -> Result<Option<(Target, Context, Vec<Exchange>)>, HarnessError> {
    let info = E::info();
    let mut used = vec![false; case.exchanges.len()];
    let Ok(target) = E::detect(&case.input) else {
        return Ok(None);
    };
    let ctx = Context {
        now_unix_ms: case.now_unix_ms(),
        config: case.config.clone(),
    };
    let mut done: Vec<Exchange> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        match E::plan(&target, &ctx, &done) {
            Err(_) => return Ok(None),
            Ok(Plan::Ready) => return Ok(Some((target, ctx, done))),
            Ok(Plan::Fetch(batch)) => {
                for request in batch {
                    let response = perform(case, &info.api_hosts, &request, &mut used)?;
                    done.push(Exchange { request, response });
                }
            }
        }
    }
    Err(HarnessError::TooManyRounds)
}

/// Answer one request from the case, following redirects when asked.
fn perform(
    case: &Case,
    api_hosts: &[String],
    request: &HttpRequest,
    used: &mut [bool],
) -> Result<HttpResponse, HarnessError> {
    let mut url = request.url.clone();
    let mut method = request.method.clone();
    for _ in 0..=MAX_REDIRECTS {
        let host = InputUrl::parse(&url).map(|u| u.host).unwrap_or_default();
        if !api_hosts.iter().any(|p| host_matches(&host, p)) {
            return Err(HarnessError::UndeclaredHost(url));
        }
        let body = request.body.as_deref().filter(|_| method == request.method);
        let index = (0..case.exchanges.len())
            .find(|&i| {
                !used[i]
                    && case.exchanges[i]
                        .request
                        .matches(&method, &url, &request.headers, body)
            })
            .ok_or_else(|| HarnessError::Unrecorded {
                method: method.clone(),
                url: url.clone(),
            })?;
        used[index] = true;
        let recorded = &case.exchanges[index];
        let response = HttpResponse {
            request_url: request.url.clone(),
            final_url: url.clone(),
            status: recorded.response.status,
            headers: recorded.response.headers.clone(),
            body: case.body(recorded).map_err(|source| FixtureError::Io {
                path: case.dir.clone(),
                source,
            })?,
        };
        if !(request.follow_redirects && response.is_redirect()) {
            return Ok(response);
        }
        let Some(next) = response.location() else {
            return Ok(response);
        };
        if response.status == 303 {
            method = "GET".into();
        }
        url = next;
    }
    Err(HarnessError::TooManyRedirects(request.url.clone()))
}

/// Replay a case and compare with its expectations; `Err` holds a readable report.
pub fn check<E: Extractor>(case: &Case) -> Result<(), String> {
    let outcome = run::<E>(case).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    if let (Some(want), Some(got)) = (&case.expect.target, &outcome.target) {
        let got = serde_json::to_value(got).unwrap_or_default();
        for (k, v) in want {
            if got.get(k) != Some(v) {
                problems.push(format!(
                    "target.{k}: expected {v}, got {}",
                    got.get(k).unwrap_or(&serde_json::Value::Null)
                ));
            }
        }
    }
    match (&outcome.result, &case.expect.error, &case.expect.media) {
        (Err(f), Some(code), _) if f.code() == code => {}
        (Err(f), _, _) => problems.push(format!(
            "expected {}, got failure {} ({})",
            expected(case),
            f.code(),
            f
        )),
        (Ok(_), Some(code), _) => problems.push(format!("expected error {code}, got media")),
        (Ok(ex), None, Some(want)) => {
            let platform = outcome
                .target
                .as_ref()
                .map(|t| t.platform.as_str())
                .unwrap_or_default();
            if let Err(e) = spec::validate_media(&ex.media) {
                problems.push(format!("invalid media: {e}"));
            }
            let got = ex.media.to_json(platform);
            for diff in json_diff("", want, &got).into_iter().take(20) {
                problems.push(format!("media{diff}"));
            }
            // As the host does before answering: ids beyond 2^53 become strings.
            let mut data = ex.platform_data.clone();
            crate::bigints::stringify_large_integers(&mut data);
            for p in spec::check_platform_data(platform, &data) {
                problems.push(format!("platformData: {p}"));
            }
            for (pointer, want) in case.expect.platform_data.iter().flatten() {
                match data.pointer(pointer) {
                    Some(got) if got == want => {}
                    got => problems.push(format!(
                        "platformData{pointer}: expected {want}, got {}",
                        got.unwrap_or(&serde_json::Value::Null)
                    )),
                }
            }
        }
        (Ok(_), None, None) => problems.push("case expects nothing".into()),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n  "))
    }
}

fn expected(case: &Case) -> String {
    match &case.expect.error {
        Some(code) => format!("error {code}"),
        None => "media".into(),
    }
}

/// Replay every case under `fixtures_dir`; panic with a report of all failures.
pub fn assert_fixtures<E: Extractor>(fixtures_dir: impl AsRef<Path>) {
    let cases =
        Case::load_all(fixtures_dir.as_ref()).unwrap_or_else(|e| panic!("loading fixtures: {e}"));
    assert!(
        !cases.is_empty(),
        "no fixture cases under {}",
        fixtures_dir.as_ref().display()
    );
    let clashes = crate::fixture::collisions(&cases);
    assert!(
        clashes.is_empty(),
        "fixture cases disagree about the same request:\n{}",
        clashes.join("\n")
    );
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            check::<E>(case)
                .err()
                .map(|report| format!("{}:\n  {report}", case.name()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Paths where two JSON values differ (`/videos/0/url: expected …, got …`).
pub fn json_diff(path: &str, want: &serde_json::Value, got: &serde_json::Value) -> Vec<String> {
    use serde_json::Value::*;
    match (want, got) {
        (Object(a), Object(b)) => {
            let mut out = Vec::new();
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => out.extend(json_diff(&format!("{path}/{k}"), v, w)),
                    None => out.push(format!("{path}/{k}: missing")),
                }
            }
            out.extend(
                b.keys()
                    .filter(|k| !a.contains_key(*k))
                    .map(|k| format!("{path}/{k}: unexpected")),
            );
            out
        }
        (Array(a), Array(b)) => {
            let mut out: Vec<std::string::String> = a
                .iter()
                .zip(b)
                .enumerate()
                .flat_map(|(i, (x, y))| json_diff(&format!("{path}/{i}"), x, y))
                .collect();
            if a.len() != b.len() {
                out.push(format!(
                    "{path}: expected {} items, got {}",
                    a.len(),
                    b.len()
                ));
            }
            out
        }
        (Number(a), Number(b)) if a.as_f64() == b.as_f64() => vec![],
        _ if want == got => vec![],
        _ => vec![format!("{path}: expected {want}, got {got}")],
    }
}
