//! Hostile components: each fails only its own request, with the right 5xx
//! envelope and no charge, and the next request to another platform is
//! served. Deadlines (epoch interruption), memory (store limits) and output
//! size come from the configuration file, here tightened for tiktok.

use super::*;

#[tokio::test]
async fn hostile_components_fail_only_their_own_request() {
    let up = upstream().await;
    // tiktok and douyin are hostile on demand; youtube is the same guest behaving.
    let dir = extractors(&[
        ("tiktok", "6.6.6"),
        ("douyin", "6.6.6"),
        ("youtube", "1.0.0"),
    ]);
    let conf_dir = tempfile::tempdir().expect("tempdir");
    let conf = conf_dir.path().join("config.toml");
    std::fs::write(
        &conf,
        // Tight deadline and memory for tiktok; douyin gets room to build
        // its 100 MB answer so that the output cap is what stops it.
        "[platforms.tiktok.limits]\n\
         call_timeout_ms = 1000\n\
         memory_bytes = 67108864\n\
         [platforms.douyin.limits]\n\
         call_timeout_ms = 60000\n\
         memory_bytes = 536870912\n\
         max_output_bytes = 1048576\n",
    )
    .expect("config");
    let run = start(dir.path(), &up.base_url(), Some(conf), None).await;

    // (platform, mode, status, code, sandbox kill reason)
    let cases = [
        ("tiktok", "loop", 500, "extractor_failed", Some("deadline")),
        ("tiktok", "oom", 500, "extractor_failed", Some("memory")),
        ("tiktok", "trap", 500, "extractor_failed", Some("trap")),
        ("tiktok", "host", 500, "extractor_failed", None),
        (
            "douyin",
            "big",
            500,
            "extractor_failed",
            Some("output_limit"),
        ),
        ("tiktok", "badurl", 500, "extractor_failed", None),
        ("tiktok", "badenum", 500, "extractor_failed", None),
    ];
    for (platform, mode, status, code, kill) in cases {
        let before = run.metrics().await;
        let a = run.parse(platform, mode).await;
        assert_eq!(
            (a.status, a.body["code"].as_str()),
            (status, Some(code)),
            "{mode}: {}",
            a.body
        );
        assert_eq!(a.body["status"], status);
        assert!(a.body["data"].is_null());
        assert_eq!(a.credits.as_deref(), Some("0"), "{mode}");
        // Internal detail stays in the log.
        let msg = a.body["msg"].as_str().unwrap_or_default();
        assert!(
            !msg.contains("trap") && !msg.contains("mptest"),
            "{mode}: {msg}"
        );
        if mode == "loop" {
            // Stopped at its 1 s call deadline, far from the 30 s parse deadline.
            assert!(
                a.elapsed < Duration::from_secs(10),
                "loop took {:?}",
                a.elapsed
            );
        }
        if let Some(reason) = kill {
            let series = format!(
                r#"mediaparse_sandbox_kills_total{{platform="{platform}",reason="{reason}"}}"#
            );
            let after = run.metrics().await;
            assert_eq!(
                metric(&after, &series),
                metric(&before, &series) + 1.0,
                "{mode}"
            );
        }
        // The next request, to another platform, is served.
        let next = run.parse("youtube", "ok").await;
        assert_eq!(next.status, 200, "after {mode}: {}", next.body);
        assert_eq!(next.credits.as_deref(), Some("3"));
    }
    // The undeclared host was never contacted.
    assert!(
        up.hits().iter().all(|h| !h.contains("undeclared.example")),
        "{:?}",
        up.hits()
    );
    assert!(up.misses().is_empty(), "{:?}", up.misses());
    // And tiktok itself still works for a well-formed post.
    let ok = run.parse("tiktok", "ok").await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    // Only the successful parses were charged: 7 youtube (3 each) + 1 tiktok.
    assert_eq!(run.balance(), 1_000_000 - 7 * 3 - 1);
    let store = mediaparse::store::Store::open(&run.service.db).expect("store");
    assert_eq!(store.ledger_count(None).expect("ledger"), 8);
}
