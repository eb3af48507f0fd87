//! Secrets, the outbound proxy, metrics, request ids and graceful shutdown.

use super::*;

const COOKIE: &str = "sessionid=S3CRET-cookie-4242; csrftoken=T0KEN-csrf-777";
const PROXY_PASSWORD: &str = "PR0XY-pass-999";

#[tokio::test]
async fn secrets_never_leave_and_the_proxy_carries_upstream_traffic() {
    // The upstream override points nowhere; only the configured proxy (the
    // fake upstream, answering absolute-form requests) can serve tiktok.
    let up = upstream().await;
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let work = tempfile::tempdir().expect("tempdir");
    let conf = work.path().join("config.toml");
    std::fs::write(
        &conf,
        format!(
            "[platforms.tiktok]\nproxy = \"http://ops:{PROXY_PASSWORD}@{}\"\n\
             [platforms.tiktok.config]\ncookie = \"{COOKIE}\"\n",
            up.addr
        ),
    )
    .expect("config");
    let log = work.path().join("service.log");
    let dead = "http://127.0.0.1:9";
    let run = start(dir.path(), dead, Some(conf), Some(log.clone())).await;

    let ok = run.parse("tiktok", "ok").await;
    assert_eq!(ok.status, 200, "through the proxy: {}", ok.body);
    assert!(
        up.hits()
            .iter()
            .any(|h| h.ends_with("api.mptest.example/ok")),
        "{:?}",
        up.hits()
    );

    let mut seen = vec![ok.body.to_string()];
    for mode in ["leak", "leakerr", "trap"] {
        let a = run.parse("tiktok", mode).await;
        seen.push(a.body.to_string());
        match mode {
            "leak" => {
                assert_eq!(a.status, 200, "{}", a.body);
                let headers = &a.body["data"]["videos"][0]["headers"];
                assert_eq!(headers["Cookie"], "[redacted]", "{}", a.body);
            }
            "leakerr" => assert_eq!(a.status, 502, "{}", a.body),
            _ => assert_eq!(a.status, 500, "{}", a.body),
        }
        // The platform endpoint carries platformData: scrubbed there too.
        let resp = run
            .client
            .post(run.service.url("/api/v1/platforms/tiktok/parse"))
            .bearer_auth(&run.token)
            .json(&json!({"url": format!("https://tiktok.mptest.example/{mode}")}))
            .send()
            .await
            .expect("platform parse");
        seen.push(resp.text().await.expect("text"));
    }
    seen.push(run.metrics().await);
    seen.push(run.admin_extractors().await.to_string());
    // The whole log: stop the service and wait for it to exit, so every
    // line it will ever write is in the file.
    let mut run = run;
    run.service.terminate().expect("SIGTERM");
    run.service
        .wait_exit(Duration::from_secs(60))
        .await
        .expect("the service exits");
    let log_text = std::fs::read_to_string(&log).expect("log");
    assert!(
        log_text.contains("mptest leaking [redacted]"),
        "the guest's log line is kept, scrubbed"
    );
    seen.push(log_text);
    for text in &seen {
        for secret in ["S3CRET-cookie-4242", "T0KEN-csrf-777", PROXY_PASSWORD] {
            assert!(!text.contains(secret), "{secret} leaked in: {text}");
        }
    }
}

#[tokio::test]
async fn metrics_count_parses_and_every_response_has_a_request_id() {
    let up = upstream().await;
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let run = start(dir.path(), &up.base_url(), None, None).await;
    for mode in ["ok", "ok", "trap"] {
        let a = run.parse("tiktok", mode).await;
        assert!(a.request_id.as_deref().is_some_and(|id| !id.is_empty()));
    }
    let m = run.metrics().await;
    for (series, want) in [
        (
            r#"mediaparse_parses_total{platform="tiktok",outcome="ok"}"#,
            2.0,
        ),
        (
            r#"mediaparse_parses_total{platform="tiktok",outcome="extractor_failed"}"#,
            1.0,
        ),
        (
            r#"mediaparse_credits_charged_total{platform="tiktok"}"#,
            2.0,
        ),
        (
            r#"mediaparse_sandbox_kills_total{platform="tiktok",reason="trap"}"#,
            1.0,
        ),
        (
            r#"mediaparse_upstream_request_duration_seconds_count{platform="tiktok",outcome="ok"}"#,
            2.0,
        ),
        (
            r#"mediaparse_extractor_reloads_total{platform="tiktok",outcome="loaded"}"#,
            1.0,
        ),
        ("mediaparse_extractors_loaded", 1.0),
    ] {
        assert_eq!(metric(&m, series), want, "{series} in\n{m}");
    }
    let health = run
        .client
        .get(run.service.url("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status().as_u16(), 200);
    assert!(health.headers().contains_key("x-request-id"));
}

#[tokio::test]
async fn sigterm_finishes_parses_in_flight_then_exits() {
    let up = upstream().await;
    up.set_delay("https://api.mptest.example/slow", Duration::from_secs(2));
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let mut run = start(dir.path(), &up.base_url(), None, None).await;
    let base = run.service.base_url.clone();
    let (client, token) = (run.client.clone(), run.token.clone());
    let in_flight = tokio::spawn(async move {
        client
            .post(format!("{base}/api/v1/parse"))
            .bearer_auth(token)
            .json(&json!({"url": "https://tiktok.mptest.example/slow"}))
            .send()
            .await
    });
    // Wait until the slow upstream request is under way, then ask to stop.
    eventually(
        "slow request reaches upstream",
        Duration::from_secs(20),
        || async { !up.delayed_arrivals().is_empty() },
    )
    .await;
    run.service.terminate().expect("SIGTERM");
    // No new connections once stopping.
    eventually(
        "a new connection refused after SIGTERM",
        Duration::from_secs(30),
        || async {
            reqwest::Client::new()
                .get(run.service.url("/healthz"))
                .timeout(Duration::from_secs(5))
                .send()
                .await
                .is_err()
        },
    )
    .await;
    let resp = in_flight
        .await
        .expect("join")
        .expect("the in-flight parse got its answer");
    assert_eq!(resp.status().as_u16(), 200);
    let body: Value = resp.json().await.expect("json");
    assert_eq!(body["data"]["title"], "mptest 1.0.0");
    let status = run
        .service
        .wait_exit(Duration::from_secs(30))
        .await
        .expect("exits");
    assert!(status.success(), "{status:?}");
    assert_eq!(
        run.balance(),
        1_000_000 - 1,
        "the finished parse was charged"
    );
}
