//! The replay harness: run an extractor against a fixture case exactly as
//! the host would (detect, plan rounds, redirects, map), with the recorded
//! exchanges standing in for the network.
//!
//! The extractor runs behind a [`Driver`]: [`Native`] calls a Rust type
//! directly (the extractor's own `cargo test`, no wasm), and the host's
//! `mediaparse replay` drives the real wasm component through the same
//! harness, so a case means the same thing natively and in wasm.
//!
//! ```
//! use mediaparse_sdk::fixture::{Case, Expect};
//! use mediaparse_sdk::replay;
//! use mediaparse_sdk::{Context, Exchange, Extraction, Extractor, Failure, Info, Plan, Result, Target};
//!
//! struct Nothing;
//! impl Extractor for Nothing {
//!     fn info() -> Info {
//!         Info { platform: "example".into(), version: "0.1.0".into(), url_hosts: vec![],
//!                api_hosts: vec![], url_shapes: vec![] }
//!     }
//!     fn detect(_: &str) -> Result<Target> { Err(Failure::unsupported("nothing is supported")) }
//!     fn plan(_: &Target, _: &Context, _: &[Exchange]) -> Result<Plan> { Ok(Plan::Ready) }
//!     fn map(_: &Target, _: &Context, _: &[Exchange]) -> Result<Extraction> {
//!         Err(Failure::unsupported("nothing is supported"))
//!     }
//! }
//!
//! let case = Case {
//!     description: "every URL is rejected".into(),
//!     input: "https://example.com/v/1".into(),
//!     now_unix_ms: None,
//!     config: vec![],
//!     remembered: vec![],
//!     helper_hosts: vec![],
//!     exchanges: vec![],
//!     expect: Expect { error: Some("302".into()), ..Default::default() },
//!     provenance: None,
//!     dir: Default::default(),
//! };
//! assert!(replay::check::<Nothing>(&case).is_ok());
//! let wrong = Case { expect: Expect { error: Some("content_unavailable".into()), ..Default::default() }, ..case };
//! assert!(replay::check::<Nothing>(&wrong).unwrap_err().contains("got failure 302"));
//! ```

use std::marker::PhantomData;
use std::path::Path;

use crate::fixture::{Case, FixtureError};
use crate::urls::{InputUrl, host_matches};
use crate::{
    Context, Exchange, Extraction, Extractor, Failure, HttpRequest, HttpResponse, Info, Memo, Plan,
    Step, Stepped, Target, spec,
};

/// The four calls of an extractor, however it runs. The outer `Err` is the
/// runner failing (a wasm trap, a timeout, broken output), the inner
/// `Result` is the extractor's own answer.
pub trait Driver {
    /// `info()`.
    fn info(&mut self) -> Result<Info, String>;
    /// `detect(input)`.
    fn detect(&mut self, input: &str) -> Result<Result<Target, Failure>, String>;
    /// `plan(target, ctx, done)`.
    fn plan(
        &mut self,
        target: &Target,
        ctx: &Context,
        done: &[Exchange],
    ) -> Result<Result<Plan, Failure>, String>;
    /// `map(target, ctx, done)`.
    fn map(
        &mut self,
        target: &Target,
        ctx: &Context,
        done: &[Exchange],
    ) -> Result<Result<Extraction, Failure>, String>;
    /// `step(target, ctx, done)` (WIT 1.1). By default derived from `plan`
    /// then `map`, as a 1.0 component is driven (it remembers nothing).
    fn step(
        &mut self,
        target: &Target,
        ctx: &Context,
        done: &[Exchange],
    ) -> Result<Result<Stepped, Failure>, String> {
        Ok(match self.plan(target, ctx, done)? {
            Err(f) => Err(f),
            Ok(Plan::Fetch(requests)) => Ok(Step::Fetch(requests).into()),
            Ok(Plan::Ready) => self.map(target, ctx, done)?.map(|x| Step::Done(x).into()),
        })
    }
}

/// A [`Driver`] calling an [`Extractor`] type natively.
pub struct Native<E>(PhantomData<E>);

impl<E> Default for Native<E> {
    fn default() -> Self {
        Native(PhantomData)
    }
}

impl<E: Extractor> Driver for Native<E> {
    fn info(&mut self) -> Result<Info, String> {
        Ok(E::info())
    }
    fn detect(&mut self, input: &str) -> Result<Result<Target, Failure>, String> {
        Ok(E::detect(input))
    }
    fn plan(
        &mut self,
        target: &Target,
        ctx: &Context,
        done: &[Exchange],
    ) -> Result<Result<Plan, Failure>, String> {
        Ok(E::plan(target, ctx, done))
    }
    fn map(
        &mut self,
        target: &Target,
        ctx: &Context,
        done: &[Exchange],
    ) -> Result<Result<Extraction, Failure>, String> {
        Ok(E::map(target, ctx, done))
    }
    fn step(
        &mut self,
        target: &Target,
        ctx: &Context,
        done: &[Exchange],
    ) -> Result<Result<Stepped, Failure>, String> {
        Ok(E::stepped(target, ctx, done))
    }
}

/// Plan rounds the host allows per parse.
pub const MAX_ROUNDS: usize = 8;
/// Redirect hops the host follows for one request.
pub const MAX_REDIRECTS: usize = 10;

/// What one replayed parse produced.
#[derive(Debug)]
pub struct Outcome {
    /// What `detect` recognised (`None` when it failed).
    pub target: Option<Target>,
    /// The extraction, or the failure of detect, plan or map.
    pub result: Result<Extraction, Failure>,
    /// Every request the extractor planned, in order.
    pub requests: Vec<HttpRequest>,
    /// Recorded exchanges no request used (a case should record only what happens).
    pub unused: Vec<String>,
    /// Every value the extractor asked the host to remember, in order.
    pub remember: Vec<Memo>,
}

/// Why a case could not be replayed at all (as opposed to replaying with
/// a result that differs from the expectation).
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The case folder could not be read.
    #[error(transparent)]
    Fixture(#[from] FixtureError),
    /// The runner failed: a wasm trap, a deadline, output that breaks the contract.
    #[error("the extractor failed: {0}")]
    Driver(String),
    /// A planned request matches no unused recorded exchange.
    #[error("the extractor planned a request the case did not record: {method} {url}")]
    Unrecorded {
        /// The planned method.
        method: String,
        /// The planned URL (or redirect hop).
        url: String,
    },
    /// A planned URL is outside the extractor's `api-hosts`.
    #[error("the extractor asked for {0}, which is not on its declared api-hosts")]
    UndeclaredHost(String),
    /// `plan` never said ready.
    #[error("more than {MAX_ROUNDS} plan rounds")]
    TooManyRounds,
    /// A redirect chain longer than the host follows.
    #[error("more than {MAX_REDIRECTS} redirects from {0}")]
    TooManyRedirects(String),
}

/// Replay one case natively: the exchanges are matched to planned requests in order.
pub fn run<E: Extractor>(case: &Case) -> Result<Outcome, HarnessError> {
    run_with(&mut Native::<E>::default(), case)
}

/// Replay one case through any [`Driver`] (the host passes a wasm component).
pub fn run_with(driver: &mut dyn Driver, case: &Case) -> Result<Outcome, HarnessError> {
    let info = driver.info().map_err(HarnessError::Driver)?;
    let mut used = vec![false; case.exchanges.len()];
    let mut outcome = Outcome {
        target: None,
        result: Err(Failure::changed("not run")),
        requests: Vec::new(),
        unused: Vec::new(),
        remember: Vec::new(),
    };
    let unused = |used: &[bool]| -> Vec<String> {
        case.exchanges
            .iter()
            .zip(used)
            .filter(|(_, u)| !**u)
            .map(|(e, _)| format!("{} {}", e.request.method, e.request.url))
            .collect()
    };
    let target = match driver.detect(&case.input).map_err(HarnessError::Driver)? {
        Ok(t) => t,
        Err(f) => {
            outcome.result = Err(f);
            outcome.unused = unused(&used);
            return Ok(outcome);
        }
    };
    let ctx = Context {
        now_unix_ms: case.now_unix_ms(),
        config: case.config.clone(),
        remembered: case.remembered.clone(),
    };
    let mut done: Vec<Exchange> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let stepped = driver
            .step(&target, &ctx, &done)
            .map_err(HarnessError::Driver)?;
        let result = match stepped {
            Err(f) => Err(f),
            Ok(Stepped { next, remember }) => {
                outcome.remember.extend(remember);
                match next {
                    Step::Done(x) => Ok(x),
                    Step::Fetch(batch) => {
                        for request in batch {
                            outcome.requests.push(request.clone());
                            let response = perform(case, &info.api_hosts, &request, &mut used)?;
                            done.push(Exchange { request, response });
                        }
                        continue;
                    }
                }
            }
        };
        outcome.target = Some(target);
        outcome.result = result;
        outcome.unused = unused(&used);
        return Ok(outcome);
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
        remembered: case.remembered.clone(),
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

/// The median wall time of `map` alone over `runs` calls (after three
/// warm-up calls) on the case in `dir`: what the bench's "Extractor cost"
/// table measures natively, for an extractor crate's own timing example
/// (`cargo run --release --example map_cost`). `None` when the case never
/// reaches map.
pub fn median_map_time<E: Extractor>(
    dir: &Path,
    runs: usize,
) -> Result<Option<std::time::Duration>, HarnessError> {
    let case = Case::load(dir)?;
    let Some((target, ctx, done)) = map_inputs::<E>(&case)? else {
        return Ok(None);
    };
    E::map(&target, &ctx, &done).map_err(|f| HarnessError::Driver(f.to_string()))?;
    let mut samples: Vec<std::time::Duration> = (0..runs.max(1) + 3)
        .map(|_| {
            let started = std::time::Instant::now();
            std::hint::black_box(E::map(&target, &ctx, &done)).ok();
            started.elapsed()
        })
        .skip(3)
        .collect();
    samples.sort();
    Ok(Some(samples[samples.len() / 2]))
}

/// An extractor crate's `map_cost` example: `map`'s median native time on
/// each case named on the command line (`[case ...] [--runs N]`; default:
/// `default_cases` under `fixtures`, 2000 runs), one line each.
pub fn map_cost_main<E: Extractor>(fixtures: &Path, default_cases: &[&str]) {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let runs = match args.iter().position(|a| a == "--runs") {
        Some(i) => {
            let n = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(2000);
            args.drain(i..(i + 2).min(args.len()));
            n
        }
        None => 2000,
    };
    if args.is_empty() {
        args = default_cases.iter().map(|c| c.to_string()).collect();
    }
    for case in args {
        match median_map_time::<E>(&fixtures.join(&case), runs) {
            Ok(Some(t)) => println!(
                "{case}: map {:.1} µs (median of {runs})",
                t.as_secs_f64() * 1e6
            ),
            Ok(None) => println!("{case}: never reaches map"),
            Err(e) => println!("{case}: {e}"),
        }
    }
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
        let helper = case
            .helper_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(&host));
        if !helper && !api_hosts.iter().any(|p| host_matches(&host, p)) {
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

/// Replay a case natively and compare with its expectations; `Err` holds a
/// readable report, one problem per line.
pub fn check<E: Extractor>(case: &Case) -> Result<(), String> {
    check_with(&mut Native::<E>::default(), case)
}

/// [`check`] through any [`Driver`].
pub fn check_with(driver: &mut dyn Driver, case: &Case) -> Result<(), String> {
    let outcome = run_with(driver, case).map_err(|e| e.to_string())?;
    compare(case, &outcome)
}

/// Compare a replayed outcome with the case's expectations.
pub fn compare(case: &Case, outcome: &Outcome) -> Result<(), String> {
    let mut problems = Vec::new();
    for request in &outcome.unused {
        problems.push(format!("recorded but never requested: {request}"));
    }
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
            let mut data = ex.platform_data.to_value();
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
    if let Some(want) = &case.expect.remember
        && want != &outcome.remember
    {
        problems.push(format!(
            "remember: expected {}, got {}",
            serde_json::to_string(want).unwrap_or_default(),
            serde_json::to_string(&outcome.remember).unwrap_or_default()
        ));
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

/// What [`assert_fixtures`] checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Cases replayed.
    pub cases: usize,
    /// Cases expecting media, each anchored to its payload.
    pub media_cases: usize,
    /// Expected media URLs found in a recorded body.
    pub anchored_urls: usize,
    /// Of those, found only through a declared rewrite.
    pub rewritten_urls: usize,
    /// Of those, with a width or height stated around them (compared).
    pub sized_urls: usize,
    /// Media cases whose duration was compared with durations the payload states.
    pub durations_checked: usize,
    /// Cases whose payload is reconstructed (`provenance.reconstructed`).
    pub reconstructed: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} cases replayed; {} media cases anchored to their payloads ({} URLs, {} through a declared rewrite, {} with a stated size; {} durations compared); {} cases with a reconstructed payload",
            self.cases,
            self.media_cases,
            self.anchored_urls,
            self.rewritten_urls,
            self.sized_urls,
            self.durations_checked,
            self.reconstructed
        )
    }
}

/// Replay every case under `fixtures_dir` and check each media case's
/// expectation against its payload ([`crate::anchors`]); panic with a
/// report of all failures. Returns (and prints) what was checked.
pub fn assert_fixtures<E: Extractor>(fixtures_dir: impl AsRef<Path>) -> Summary {
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
    let rewrites = crate::anchors::Rewrites::load(fixtures_dir.as_ref())
        .unwrap_or_else(|e| panic!("loading rewrites: {e}"));
    let mut summary = Summary {
        cases: cases.len(),
        ..Summary::default()
    };
    let mut failures: Vec<String> = Vec::new();
    for case in &cases {
        let mut report: Vec<String> = check::<E>(case).err().into_iter().collect();
        summary.reconstructed += usize::from(case.is_reconstructed());
        if case.expect.media.is_some() {
            summary.media_cases += 1;
            let facts = crate::anchors::facts(case, &rewrites);
            for u in &facts.urls {
                if let Some(found) = &u.found {
                    summary.anchored_urls += 1;
                    summary.rewritten_urls +=
                        usize::from(found.via != "raw" && found.via != "unescaped");
                    summary.sized_urls +=
                        usize::from(!u.stated_widths.is_empty() || !u.stated_heights.is_empty());
                }
            }
            let duration = case
                .expect
                .media
                .as_ref()
                .and_then(|m| m["duration"].as_f64());
            summary.durations_checked += usize::from(
                duration.is_some_and(|d| d > 0.0) && !facts.stated_durations.is_empty(),
            );
            if !facts.problems.is_empty() {
                report.push(format!(
                    "the expectation disagrees with the payload:\n  {}",
                    facts.problems.join("\n  ")
                ));
            }
        }
        if !report.is_empty() {
            failures.push(format!("{}:\n  {}", case.name(), report.join("\n  ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!("{}: {summary}", fixtures_dir.as_ref().display());
    summary
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{Expect, RecordedExchange, RecordedRequest, RecordedResponse};
    use crate::{Info, Media};

    /// Fetches one page, then maps it to one image.
    struct OnePage;

    impl Extractor for OnePage {
        fn info() -> Info {
            Info {
                platform: "onepage".into(),
                version: "0".into(),
                url_hosts: vec!["a.example".into()],
                api_hosts: vec!["a.example".into()],
                url_shapes: vec![],
            }
        }
        fn detect(input: &str) -> crate::Result<Target> {
            Ok(Target {
                platform: "onepage".into(),
                id: "1".into(),
                canonical_url: input.into(),
                input: input.into(),
            })
        }
        fn step(_: &Target, _: &Context, done: &[Exchange]) -> crate::Result<Step> {
            if done.is_empty() {
                return Ok(Step::one(HttpRequest::get("https://a.example/page")));
            }
            let url = done[0].response.text().trim().to_string();
            let media = Media {
                images: vec![crate::Image {
                    url,
                    width: 1,
                    height: 2,
                }],
                ..Media::default()
            };
            let mut data = serde_json::Map::new();
            spec::fill_missing_members("onepage", &mut data);
            Ok(Step::Done(Extraction {
                media,
                platform_data: data.into(),
            }))
        }
    }

    fn exchange(url: &str, body: &str) -> RecordedExchange {
        RecordedExchange {
            request: RecordedRequest {
                method: "GET".into(),
                url: url.into(),
                headers: vec![],
                body: None,
            },
            response: RecordedResponse {
                status: 200,
                headers: vec![],
                body_file: None,
                body: Some(body.into()),
            },
        }
    }

    /// OnePage's `platform.toml` (an extractor crate's own file is found in
    /// `$CARGO_MANIFEST_DIR`; the SDK's tests register theirs).
    fn register_onepage() {
        let toml = r#"
            id = "onepage"
            name = "One page"
            price = 1
            example_url = "https://a.example/p/1"
            members = [{ name = "page", type = "string" }]
        "#;
        spec::register(crate::spec::Manifest::parse(toml).unwrap());
    }

    fn case(exchanges: Vec<RecordedExchange>) -> Case {
        register_onepage();
        let media = serde_json::json!({"platform":"onepage","title":"","thumbnail":"","duration":0.0,
            "images":[{"url":"https://cdn.example/1.jpg","width":1,"height":2}],"videos":[],"audios":[]});
        Case {
            description: String::new(),
            input: "https://a.example/p/1".into(),
            now_unix_ms: None,
            config: vec![],
            remembered: vec![],
            helper_hosts: vec![],
            exchanges,
            expect: Expect {
                media: Some(media),
                ..Expect::default()
            },
            provenance: None,
            dir: std::path::PathBuf::new(),
        }
    }

    #[test]
    fn listed_members_come_from_the_platform_toml() {
        let c = case(vec![exchange(
            "https://a.example/page",
            "https://cdn.example/1.jpg",
        )]);
        let mut outcome = run::<OnePage>(&c).unwrap();
        let ex = outcome.result.as_mut().unwrap();
        ex.platform_data = serde_json::json!({"page": 1}).into();
        let report = compare(&c, &outcome).unwrap_err();
        assert!(
            report.contains("listed member `page` should be String"),
            "{report}"
        );
        if let Some(t) = outcome.target.as_mut() {
            t.platform = "unknown".into();
        }
        let report = compare(&c, &outcome).unwrap_err();
        assert!(
            report.contains("no platform.toml for \"unknown\""),
            "{report}"
        );
    }

    #[test]
    fn a_matching_case_passes() {
        let c = case(vec![exchange(
            "https://a.example/page",
            "https://cdn.example/1.jpg",
        )]);
        assert_eq!(check::<OnePage>(&c), Ok(()));
    }

    #[test]
    fn unused_recordings_and_unrecorded_requests_fail() {
        let c = case(vec![
            exchange("https://a.example/page", "https://cdn.example/1.jpg"),
            exchange("https://a.example/never", ""),
        ]);
        let report = check::<OnePage>(&c).unwrap_err();
        assert!(
            report.contains("recorded but never requested: GET https://a.example/never"),
            "{report}"
        );
        let c = case(vec![exchange("https://a.example/other", "")]);
        assert!(check::<OnePage>(&c).unwrap_err().contains("did not record"));
    }

    #[test]
    fn a_different_media_object_is_reported_by_path() {
        let c = case(vec![exchange(
            "https://a.example/page",
            "https://cdn.example/2.jpg",
        )]);
        let report = check::<OnePage>(&c).unwrap_err();
        assert!(report.contains("media/images/0/url"), "{report}");
    }
}
