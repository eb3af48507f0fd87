//! Exit pools through real proxies: one exit per parse, rotation across
//! parses, cooling-off of a failing exit, `503 upstream_rate_limited` with
//! `Retry-After` when every exit cools, health kept across a reload, and
//! labels (never URLs) in the admin listing and `/metrics`.

use std::time::Duration;

use serde_json::Value;

use super::proxies::{Proxy, free_port};
use crate::operations::{eventually, extractors, metric, start, upstream};

const OK_URL: &str = "api.mptest.example/ok";

fn config_file(dir: &tempfile::TempDir, text: &str) -> std::path::PathBuf {
    let path = dir.path().join("mediaparse.toml");
    let tmp = dir.path().join(".mediaparse.toml.tmp");
    std::fs::write(&tmp, text).expect("write config");
    std::fs::rename(&tmp, &path).expect("rename config");
    path
}

fn exit(label: &str, url: &str) -> String {
    format!("[[platforms.tiktok.exits]]\nlabel = \"{label}\"\nurl = \"{url}\"\n")
}

/// The admin listing's exits for tiktok, by label.
fn exits_of(entry: &Value) -> Vec<Value> {
    entry["exits"].as_array().cloned().unwrap_or_default()
}

/// Each parse leaves through one exit; healthy exits take turns; the HTTP
/// proxy's log and the SOCKS server's log show exactly the requests each
/// one carried to the fake upstream.
#[tokio::test]
async fn parses_take_turns_through_an_http_and_a_socks5_proxy() {
    let up = upstream().await;
    let up_port = up
        .base_url()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let tiny = Proxy::tinyproxy();
    let dante = Proxy::dante();
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let conf_dir = tempfile::tempdir().unwrap();
    let conf = config_file(
        &conf_dir,
        &format!(
            "{}{}",
            exit("tiny", &format!("http://127.0.0.1:{}", tiny.port)),
            exit("dante", &format!("socks5h://127.0.0.1:{}", dante.port)),
        ),
    );
    let run = start(dir.path(), &up.base_url(), Some(conf), None).await;
    // tinyproxy logs each forwarded request; danted each relayed connection
    // (one request per connection here: the pools of both differ per exit).
    let through_tiny = || tiny.count(OK_URL);
    let through_dante = || {
        dante
            .log()
            .lines()
            .filter(|l| l.contains("tcp/connect") && l.contains(&format!("127.0.0.1.{up_port}")))
            .count()
    };
    let mut seen = Vec::new();
    for _ in 0..4 {
        let answer = run.parse("tiktok", "ok").await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        seen.push((through_tiny(), through_dante() > 0));
    }
    assert_eq!(up.hits().iter().filter(|h| h.contains(OK_URL)).count(), 4);
    // First the first exit, then the other, alternating.
    assert_eq!(seen[0], (1, false), "{seen:?}\n{}", dante.log());
    assert_eq!(seen[1].0, 1, "{seen:?}");
    assert!(seen[1].1, "the second parse went through danted: {seen:?}");
    assert_eq!(seen[2].0, 2, "{seen:?}");
    assert_eq!(seen[3].0, 2, "{seen:?}");

    let entry = run.admin_entry("tiktok").await;
    let exits = exits_of(&entry);
    let labels: Vec<&str> = exits.iter().filter_map(|e| e["label"].as_str()).collect();
    assert_eq!(labels, ["tiny", "dante"], "{entry}");
    for e in &exits {
        assert_eq!(e["requests"], 2, "{e}");
        assert_eq!(e["outcomes"]["ok"], 2, "{e}");
        assert_eq!(e["cooling"], false, "{e}");
    }
    let listing = run.admin_extractors().await.to_string();
    let metrics = run.metrics().await;
    for port in [tiny.port, dante.port] {
        assert!(
            !listing.contains(&format!(":{port}")),
            "a URL leaked: {listing}"
        );
        assert!(!metrics.contains(&format!(":{port}")), "a URL leaked");
    }
    assert_eq!(
        metric(
            &metrics,
            r#"mediaparse_egress_outcomes_total{platform="tiktok",pool="exit",label="dante",outcome="ok"}"#
        ),
        2.0,
        "{metrics}"
    );
}

/// An exit that cannot connect cools off and the next parses use the other;
/// after a reload that leaves only the cooling exit (same label and URL: its
/// health is kept), parses are refused at once with `503
/// upstream_rate_limited` and a `Retry-After` from the cooling-off, without
/// any upstream request. A reload that names a working exit serves again.
#[tokio::test]
async fn a_failing_exit_cools_off_and_all_cooling_answers_503_at_once() {
    let up = upstream().await;
    let tiny = Proxy::tinyproxy();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let conf_dir = tempfile::tempdir().unwrap();
    let cooling = "[platforms.tiktok.limits]\nexit_cooldown_ms = 120000\n";
    let both = format!(
        "{}{}{cooling}",
        exit("dead", &dead),
        exit("tiny", &format!("http://127.0.0.1:{}", tiny.port))
    );
    let conf = config_file(&conf_dir, &both);
    let run = start(dir.path(), &up.base_url(), Some(conf), None).await;

    let first = run.parse("tiktok", "ok").await;
    assert_eq!(first.status, 502, "{}", first.body);
    assert_eq!(first.body["code"], "upstream_error");
    assert!(!first.body.to_string().contains(&dead), "{}", first.body);
    for _ in 0..2 {
        let answer = run.parse("tiktok", "ok").await;
        assert_eq!(answer.status, 200, "{}", answer.body);
    }
    assert_eq!(tiny.count(OK_URL), 2);
    let entry = run.admin_entry("tiktok").await;
    let exits = exits_of(&entry);
    assert_eq!(exits[0]["label"], "dead");
    assert_eq!(exits[0]["cooling"], true, "{entry}");
    assert_eq!(exits[0]["outcomes"]["connect_error"], 1, "{entry}");
    assert!(exits[0]["coolingUntil"].is_string(), "{entry}");
    assert_eq!(exits[1]["cooling"], false, "{entry}");

    // Only the cooling exit left: refused at once.
    config_file(&conf_dir, &format!("{}{cooling}", exit("dead", &dead)));
    eventually("all exits cooling", Duration::from_secs(30), || async {
        run.parse("tiktok", "ok").await.status == 503
    })
    .await;
    let hits_before = up.hits().len();
    let started = std::time::Instant::now();
    let refused = run
        .client
        .post(run.service.url("/api/v1/parse"))
        .bearer_auth(&run.token)
        .json(&serde_json::json!({"url": "https://tiktok.mptest.example/ok"}))
        .send()
        .await
        .expect("parse request");
    let elapsed = started.elapsed();
    let retry: u64 = refused
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .expect("Retry-After");
    let body: Value = refused.json().await.expect("json");
    assert_eq!(body["code"], "upstream_rate_limited", "{body}");
    assert!(
        (61..=120).contains(&retry),
        "Retry-After {retry}: from the cooling-off, not the default 60"
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert_eq!(
        up.hits().len(),
        hits_before,
        "no upstream request while every exit cools"
    );
    let metrics = run.metrics().await;
    assert_eq!(
        metric(
            &metrics,
            r#"mediaparse_egress_outcomes_total{platform="tiktok",pool="exit",label="dead",outcome="connect_error"}"#
        ),
        1.0,
        "{metrics}"
    );
    assert!(
        metric(
            &metrics,
            r#"mediaparse_egress_cooling_until_seconds{platform="tiktok",pool="exit",label="dead"}"#
        ) > 0.0,
        "{metrics}"
    );

    // A working exit named again: served without a restart.
    config_file(
        &conf_dir,
        &format!(
            "{}{cooling}",
            exit("tiny", &format!("http://127.0.0.1:{}", tiny.port))
        ),
    );
    eventually("served again", Duration::from_secs(30), || async {
        run.parse("tiktok", "ok").await.status == 200
    })
    .await;
}

/// Pacing: one request per 100 s per exit and a 20 s parse deadline; of
/// three parses sent at once the first is served and the other two cannot
/// start in time, so they are refused with `503 upstream_rate_limited` and a
/// `Retry-After`, not a timeout. The margins (100 s against 20 s, 20 s for
/// three requests to arrive) hold on any machine.
#[tokio::test]
async fn a_burst_beyond_the_pace_is_refused_within_the_deadline() {
    let up = upstream().await;
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let conf_dir = tempfile::tempdir().unwrap();
    let conf = config_file(
        &conf_dir,
        "[platforms.tiktok.limits]\nrequests_per_second = 0.01\nparse_timeout_ms = 20000\n",
    );
    let run = start(dir.path(), &up.base_url(), Some(conf), None).await;
    let started = std::time::Instant::now();
    let (a, b, c) = tokio::join!(
        run.parse("tiktok", "ok"),
        run.parse("tiktok", "ok"),
        run.parse("tiktok", "ok")
    );
    let answers = [a, b, c];
    let mut statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    statuses.sort();
    assert_eq!(
        statuses,
        [200, 503, 503],
        "{:?}",
        answers.iter().map(|a| &a.body).collect::<Vec<_>>()
    );
    for refused in answers.iter().filter(|a| a.status == 503) {
        assert_eq!(
            refused.body["code"], "upstream_rate_limited",
            "{}",
            refused.body
        );
    }
    // Refused before the deadline, not when it ran out.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(up.hits().iter().filter(|h| h.contains(OK_URL)).count(), 1);
}
