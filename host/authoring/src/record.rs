//! `mediaparse record URL --out DIR`: one real parse through the host's own
//! parts (component, fetcher with the allowlist and redirect rules, the
//! pipeline's plan/fetch loop), written as a fixture case (DESIGN.md §6):
//! every raw HTTP hop, the response bodies as files, and the result as the
//! expectation, with the facts read from the bodies beside it
//! ([`FACTS_FILE`]: where each expected media URL occurs) for review.
//! Secrets are scrubbed (see [`super::scrub`]), then the written case is
//! replayed through the same component to prove it says what the live
//! parse said.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mediaparse_sdk::fixture::{
    Case, DEFAULT_NOW_MS, Expect, RecordedExchange, RecordedRequest, RecordedResponse,
};
use mediaparse_sdk::{Context, Header};
use serde_json::{Map, Value};

use super::replay::{ComponentChoice, component_for, replay_loaded};
use super::scrub::Scrubber;
use mediaparse_config::OperatorConfig;
use mediaparse_fetch::{FetchLimits, Fetcher, Hop, HopLog, UpstreamOverride};
use mediaparse_parse::{self as parse, ParseError, ParseLimits};

/// What to record, and where.
pub struct RecordOptions {
    /// The caller's input (URL or share text).
    pub input: String,
    /// The case folder to write (`extractors/<platform>/fixtures/<case>`).
    pub out: PathBuf,
    pub component: ComponentChoice,
    /// The upstream override (a fake upstream on loopback), if any.
    pub upstream: Option<String>,
    /// Operator configuration file: `context.config` for the platform.
    pub config: Option<PathBuf>,
    /// `context.now-unix-ms` for the live parse (default: the real clock).
    pub now_ms: Option<u64>,
    pub description: Option<String>,
    /// Overwrite an existing `case.json`.
    pub force: bool,
}

/// Response headers that describe the transfer, not the answer: the body
/// is stored decoded, so its length and encoding are the fake upstream's.
const TRANSPORT_HEADERS: &[&str] = &[
    "content-length",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "keep-alive",
];

/// Record one parse; returns the exit code (0: the case replays to the
/// live result, 1: it does not, or the parse could not be recorded).
pub async fn record(options: RecordOptions) -> anyhow::Result<i32> {
    let case_json = options.out.join("case.json");
    if case_json.exists() && !options.force {
        anyhow::bail!(
            "{} exists; pass --force to overwrite it",
            case_json.display()
        );
    }
    // Load through a stand-in case so `component_for` can route by input.
    let probe = Case {
        description: String::new(),
        input: options.input.clone(),
        now_unix_ms: None,
        config: Vec::new(),
        remembered: Vec::new(),
        helper_hosts: Vec::new(),
        exchanges: Vec::new(),
        expect: Expect::default(),
        provenance: None,
        dir: options.out.clone(),
    };
    let (registry, ext) = component_for(&probe, &options.component)?;
    let platform = ext.platform().to_string();
    // The operator's file, when given, configures the live parse as the
    // service would: the extractor's settings and the platform's limits
    // (its helper hosts among them, which the case then carries).
    let operator = match &options.config {
        Some(path) => OperatorConfig::load(path)?,
        None => OperatorConfig::default(),
    };
    let config = operator.extractor_config(&platform);
    let mut platform_limits = operator.limits_for(&platform);
    platform_limits.fetch.profile =
        operator.fetch_profile(&platform, ext.manifest.fetch_profile.as_deref());
    let upstream = options
        .upstream
        .as_deref()
        .map(UpstreamOverride::parse)
        .transpose()?;
    let log = Arc::new(HopLog::default());
    let fetcher = Fetcher::new(upstream, FetchLimits::default())?.with_recorder(log.clone());
    let now_ms = options
        .now_ms
        .unwrap_or_else(|| chrono::Utc::now().timestamp_millis().max(0) as u64);

    // The live parse: detect, then the pipeline's rounds.
    let guest = parse::Guest::unplanned(&registry, &ext);
    let detected = guest.detect(&options.input).await?;
    let (target, result) = match detected {
        Err(failure) => (None, Err(failure)),
        Ok(mut target) => {
            target.input = options.input.clone();
            let ctx = Context {
                now_unix_ms: now_ms,
                config: config.clone(),
                remembered: Vec::new(),
            };
            let limits = ParseLimits::default();
            // Recording leaves direct: no operator pool.
            let exits = mediaparse_fetch::ExitPools::new();
            let exit = exits
                .lease(ext.platform(), &[])
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let outbound = parse::Outbound {
                limits: &platform_limits,
                exit: &exit,
                exits: &exits,
                session: None,
                sessions: &mediaparse_fetch::Sessions::default(),
                pacer: &mediaparse_fetch::Pacer::new(),
                deadline: std::time::Instant::now() + platform_limits.parse_timeout,
            };
            let extracted = tokio::time::timeout(
                platform_limits.parse_timeout,
                parse::extract(
                    &parse::Rounds {
                        fetcher: &fetcher,
                        limits: &limits,
                        ext: &ext,
                        outbound: &outbound,
                        // A recording starts with nothing remembered (a
                        // case's `remembered` is written by hand).
                        memos: &mediaparse_registry::Memos::in_memory(),
                        capture: None,
                    },
                    &guest,
                    target.clone(),
                    ctx,
                ),
            )
            .await
            .map_err(|_| ParseError::UpstreamTimeout)
            .and_then(|r| r);
            match extracted {
                Ok(done) => (Some(target), Ok(done)),
                Err(ParseError::Failure(f)) => (Some(target), Err(f)),
                Err(other) => anyhow::bail!(
                    "the parse failed outside the extractor ({other}); nothing a fixture can hold was recorded"
                ),
            }
        }
    };
    let hops = log.hops();

    // Learn every secret first, then write everything through the scrubber.
    let mut scrub = Scrubber::new();
    // Settings the operator declared not secret (`public_config`) stay in
    // the case, as they stay in the service's answers.
    scrub.learn_config(&operator.secret_settings(&platform));
    for hop in &hops {
        scrub.learn_request_headers(&hop.request_headers);
        scrub.learn_response_headers(&hop.response_headers);
        scrub.learn_json_body(&hop.response_body);
        if let Some(body) = &hop.request_body {
            scrub.learn_json_body(body);
        }
    }

    std::fs::create_dir_all(&options.out)?;
    let exchanges = write_exchanges(&options.out, &hops, &scrub)?;
    let mut expect = Expect::default();
    if let Some(t) = &target {
        let mut checks = Map::new();
        checks.insert("id".into(), Value::String(scrub.text(&t.id)));
        checks.insert(
            "canonicalUrl".into(),
            Value::String(scrub.text(&t.canonical_url)),
        );
        expect.target = Some(checks);
    }
    let outcome = match &result {
        Ok((media, data)) => {
            expect.media = Some(scrub.json(&media.to_json(&platform)));
            let data = data.sanitized().map_err(|e| {
                anyhow::anyhow!("the extractor's platform data cannot be shown: {e}")
            })?;
            let checks = platform_data_checks(&ext.manifest, &data.to_value(), &scrub);
            expect.platform_data = (!checks.is_empty()).then_some(checks);
            format!(
                "{} images, {} videos, {} audios",
                media.images.len(),
                media.videos.len(),
                media.audios.len()
            )
        }
        Err(f) => {
            expect.error = Some(f.code().to_string());
            format!("error {} ({f})", f.code())
        }
    };
    let mut case = Case {
        description: options.description.clone().unwrap_or_else(|| {
            format!(
                "Recorded from {} on {}.",
                options.input,
                chrono::Utc::now().format("%Y-%m-%d")
            )
        }),
        input: options.input.clone(),
        now_unix_ms: None,
        config: scrub.headers(&config),
        remembered: Vec::new(),
        helper_hosts: platform_limits.fetch.helper_hosts.clone(),
        exchanges,
        expect,
        provenance: None,
        dir: options.out.clone(),
    };
    println!(
        "recorded {} exchanges for {platform} into {}: {outcome}; {} secret values scrubbed",
        hops.len(),
        options.out.display(),
        scrub.len()
    );

    // Prove the case: replay it through the same component. The fixtures'
    // default clock is kept when the result does not depend on the time.
    write_case(&case_json, &case, &scrub)?;
    let mut report = replay_loaded(&Case::load(&options.out)?, &registry, &ext)?;
    if !report.replayed && now_ms != DEFAULT_NOW_MS {
        case.now_unix_ms = Some(now_ms);
        write_case(&case_json, &case, &scrub)?;
        report = replay_loaded(&Case::load(&options.out)?, &registry, &ext)?;
    }
    if let Some(facts) = &report.facts {
        write_facts(&options.out.join(FACTS_FILE), facts, &scrub)?;
        let found = facts.urls.iter().filter(|u| u.found.is_some()).count();
        println!(
            "{FACTS_FILE}: {found} of {} expected media URLs found in the recorded bodies; review it before committing the case",
            facts.urls.len()
        );
        for line in super::replay::facts_lines(facts) {
            println!("  {line}");
        }
    }
    if !report.replayed {
        println!(
            "the recorded case does not replay to the live result (scrubbing may have removed a value the extractor needs):\n  {}",
            report.problems
        );
        return Ok(1);
    }
    println!(
        "replayed {} through {}: same result",
        options.out.display(),
        report.component
    );
    if !report.passed {
        // The case says what the live parse said; whether the payload backs
        // it is for the author to settle (a rewrite to declare in the
        // platform's fixtures/rewrites.json, or a wrong result) before the
        // case can pass `replay` and the extractor's tests.
        println!(
            "to review before committing: the expectation disagrees with the payload:\n  {}",
            report.problems
        );
    }
    Ok(0)
}

/// The file, beside `case.json`, holding the facts read from the recorded
/// bodies: each expected media URL and where it was found (or not), the
/// sizes and durations stated around it. For the reviewer: the expectation
/// is the live result, and these say whether the payload backs it.
pub const FACTS_FILE: &str = "facts.json";

fn write_facts(
    path: &Path,
    facts: &mediaparse_sdk::anchors::Facts,
    scrub: &Scrubber,
) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(facts)? + "\n";
    anyhow::ensure!(
        !scrub.leaks(&text),
        "internal error: a secret survived scrubbing"
    );
    std::fs::write(path, text)?;
    Ok(())
}

pub(super) fn write_case(path: &Path, case: &Case, scrub: &Scrubber) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(case)? + "\n";
    anyhow::ensure!(
        !scrub.leaks(&text),
        "internal error: a secret survived scrubbing"
    );
    std::fs::write(path, text)?;
    Ok(())
}

/// The hops as recorded exchanges, bodies written beside `case.json`.
pub(super) fn write_exchanges(
    dir: &Path,
    hops: &[Hop],
    scrub: &Scrubber,
) -> anyhow::Result<Vec<RecordedExchange>> {
    let mut out = Vec::new();
    for (i, hop) in hops.iter().enumerate() {
        let headers: Vec<Header> = hop
            .response_headers
            .iter()
            .filter(|h| {
                !TRANSPORT_HEADERS
                    .iter()
                    .any(|t| h.name.eq_ignore_ascii_case(t))
            })
            .cloned()
            .collect();
        let body_file = if hop.response_body.is_empty() {
            None
        } else {
            let host = url::Url::parse(&hop.url)
                .ok()
                .and_then(|u| u.host_str().map(String::from))
                .unwrap_or_else(|| "body".into());
            let ext = extension(mediaparse_sdk::header_value(&headers, "content-type"));
            let name = format!("{:02}-{host}.{ext}", i + 1);
            std::fs::write(dir.join(&name), scrub.bytes(&hop.response_body))?;
            Some(name)
        };
        out.push(RecordedExchange {
            request: RecordedRequest {
                method: hop.method.clone(),
                url: scrub.text(&hop.url),
                headers: constraints(hops, i)
                    .iter()
                    .map(|h| constraint(h, scrub))
                    .collect(),
                body: hop
                    .request_body
                    .as_ref()
                    .map(|b| scrub.text(&String::from_utf8_lossy(b))),
            },
            response: RecordedResponse {
                status: hop.status,
                headers: scrub.headers(&headers),
                body_file,
                body: None,
            },
        });
    }
    Ok(out)
}

/// Requests are matched by method, URL and body. Only when the case asks
/// the same thing twice with different answers are headers recorded, the
/// ones that tell this request apart from the others.
fn constraints(hops: &[Hop], i: usize) -> Vec<Header> {
    let me = &hops[i];
    let twins: Vec<&Hop> = hops
        .iter()
        .enumerate()
        .filter(|(j, h)| {
            *j != i
                && h.method == me.method
                && h.url == me.url
                && h.request_body == me.request_body
                && (h.status != me.status || h.response_body != me.response_body)
        })
        .map(|(_, h)| h)
        .collect();
    if twins.is_empty() {
        return Vec::new();
    }
    me.request_headers
        .iter()
        .filter(|h| {
            twins.iter().any(|t| {
                !t.request_headers
                    .iter()
                    .any(|o| o.name.eq_ignore_ascii_case(&h.name) && o.value == h.value)
            })
        })
        .cloned()
        .collect()
}

/// A header constraint as written: secret values are never recorded, and
/// may be computed by the extractor (a challenge answer), so a cookie is
/// matched by its name and other secret headers by their presence.
fn constraint(h: &Header, scrub: &Scrubber) -> Header {
    let name = h.name.to_ascii_lowercase();
    let value = if name == "cookie" {
        h.value
            .split(';')
            .next()
            .and_then(|pair| pair.split_once('='))
            .map(|(n, _)| format!("{}=", n.trim()))
            .unwrap_or_default()
    } else if name == "authorization" || mediaparse_core::sanitize::is_sensitive(&name) {
        String::new()
    } else {
        scrub.text(&h.value)
    };
    Header::new(h.name.clone(), value)
}

fn extension(content_type: Option<&str>) -> &'static str {
    let ct = content_type.unwrap_or_default().to_ascii_lowercase();
    if ct.contains("json") {
        "json"
    } else if ct.contains("html") {
        "html"
    } else if ct.contains("javascript") {
        "js"
    } else if ct.contains("xml") {
        "xml"
    } else if ct.starts_with("text/") {
        "txt"
    } else {
        "bin"
    }
}

/// Checks on platform data: the listed members (its `platform.toml`) that
/// are scalars, or, for a platform that lists none, the top-level scalars
/// (at most 12).
fn platform_data_checks(
    manifest: &mediaparse_catalogue::Manifest,
    data: &Value,
    scrub: &Scrubber,
) -> Map<String, Value> {
    let Some(object) = data.as_object() else {
        return Map::new();
    };
    let listed: Vec<&str> = manifest.listed().map(|(n, _)| n).collect();
    object
        .iter()
        .filter(|(k, v)| {
            (listed.is_empty() || listed.contains(&k.as_str()))
                && (v.is_string() || v.is_number() || v.is_boolean())
        })
        .take(12)
        .map(|(k, v)| {
            (
                format!("/{}", k.replace('~', "~0").replace('/', "~1")),
                scrub.json(v),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(url: &str, cookie: Option<&str>, status: u16) -> Hop {
        Hop {
            call: 0,
            method: "GET".into(),
            url: url.into(),
            request_headers: cookie
                .map(|c| vec![Header::new("Cookie", c), Header::new("Referer", "r")])
                .unwrap_or_else(|| vec![Header::new("Referer", "r")]),
            request_body: None,
            status,
            response_headers: vec![],
            response_body: vec![],
        }
    }

    #[test]
    fn headers_are_recorded_only_to_tell_twins_apart() {
        let hops = [
            hop("https://a/x", None, 403),
            hop("https://a/x", Some("SUB=v"), 200),
            hop("https://a/y", Some("SUB=v"), 200),
        ];
        assert!(constraints(&hops, 0).is_empty());
        assert_eq!(constraints(&hops, 1), vec![Header::new("Cookie", "SUB=v")]);
        assert!(constraints(&hops, 2).is_empty());
    }
}
