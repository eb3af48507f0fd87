//! Hot reload: a new version is swapped in, every kind of bad file leaves
//! the old one serving and is reported, removal disables the platform, the
//! compiled cache serves restarts, and the configuration reloads too.

use std::time::{Duration, Instant};

use mediaparse_tests::guest;
use mediaparse_tests::service::{Service, ServiceOptions};

use super::*;

const SWAP_LIMIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn components_swap_and_bad_files_leave_the_old_one_serving() {
    let up = upstream().await;
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let run = start(dir.path(), &up.base_url(), None, None).await;
    assert_eq!(
        run.serving_version("tiktok").await.as_deref(),
        Some("1.0.0")
    );

    // A valid new version: written, then serving (measured: file renamed → new version answers).
    let written = Instant::now();
    guest::install(dir.path(), "tiktok", &guest::component("tiktok", "1.1.0"));
    eventually("1.1.0 serves", SWAP_LIMIT, || async {
        run.serving_version("tiktok").await.as_deref() == Some("1.1.0")
    })
    .await;
    eprintln!(
        "swap: file renamed -> new version serving in {:?}",
        written.elapsed()
    );
    let entry = run.admin_entry("tiktok").await;
    assert_eq!(entry["version"], "1.1.0");
    assert_eq!(entry["witVersion"], mediaparse_sdk::WIT_VERSION);
    assert_eq!(entry["status"], "serving");
    assert!(entry["lastError"].is_null());
    let sha = entry["sha256"].as_str().unwrap_or_default().to_string();
    assert_eq!(sha.len(), 64);

    // Each bad file: refused with a reason, reported, and 1.1.0 keeps serving.
    let v = guest::component("tiktok", "9.9.9");
    let bad: [(&str, Vec<u8>, &str); 3] = [
        ("truncated", guest::truncated(&v), "compiling component"),
        (
            "wrong platform",
            guest::component("youtube", "9.9.9"),
            "but the component says it is \"youtube\"",
        ),
        (
            "wrong WIT major",
            guest::wit_major_2(&v),
            "incompatible WIT version: the component was built against mediaparse:extractor@2.0.0",
        ),
    ];
    for (i, (what, bytes, reason)) in bad.iter().enumerate() {
        guest::install(dir.path(), "tiktok", bytes);
        eventually(what, SWAP_LIMIT, || async {
            run.admin_entry("tiktok").await["lastError"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(reason))
        })
        .await;
        let entry = run.admin_entry("tiktok").await;
        assert_eq!(entry["version"], "1.1.0", "{what}: {entry}");
        assert_eq!(entry["sha256"], sha.as_str());
        assert_eq!(
            run.serving_version("tiktok").await.as_deref(),
            Some("1.1.0"),
            "{what}"
        );
        let m = run.metrics().await;
        assert_eq!(
            metric(
                &m,
                r#"mediaparse_extractor_reloads_total{platform="tiktok",outcome="failed"}"#
            ),
            (i + 1) as f64,
            "{what}"
        );
    }

    // Removing the file disables the platform until it returns.
    std::fs::remove_file(dir.path().join("tiktok.wasm")).expect("remove");
    eventually("removal disables", SWAP_LIMIT, || async {
        let a = run.parse("tiktok", "ok").await;
        a.status == 503 && a.body["code"] == "extractor_unavailable"
    })
    .await;
    // A reload of the broken file that was already under way when it was
    // removed may finish after the removal was seen; the removal's own
    // reload then clears the error.
    eventually(
        "the broken file's error is forgotten",
        SWAP_LIMIT,
        || async { run.admin_entry("tiktok").await["lastError"].is_null() },
    )
    .await;
    let entry = run.admin_entry("tiktok").await;
    assert_eq!(entry["status"], "missing");
    assert!(
        entry["lastError"].is_null(),
        "the broken file is gone: {entry}"
    );
    let caps: Value = run
        .client
        .get(run.service.url("/api/v1/capabilities"))
        .send()
        .await
        .expect("capabilities")
        .json()
        .await
        .expect("json");
    let tiktok = caps["data"]["platforms"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["id"] == "tiktok").cloned())
        .unwrap_or(Value::Null);
    assert_eq!(tiktok["enabled"], false);
    assert!(tiktok["extractorVersion"].is_null());
    guest::install(dir.path(), "tiktok", &guest::component("tiktok", "1.2.0"));
    eventually("back after removal", SWAP_LIMIT, || async {
        run.serving_version("tiktok").await.as_deref() == Some("1.2.0")
    })
    .await;
    // Only successful parses were charged (one credit each); the 503s were free.
    let m = run.metrics().await;
    let ok = metric(
        &m,
        r#"mediaparse_parses_total{platform="tiktok",outcome="ok"}"#,
    ) as i64;
    assert!(
        metric(
            &m,
            r#"mediaparse_parses_total{platform="tiktok",outcome="extractor_unavailable"}"#
        ) >= 1.0
    );
    assert_eq!(run.balance(), 1_000_000 - ok);
}

#[tokio::test]
async fn restarts_load_compiled_components_from_the_cache() {
    // The real bundled components: cold start with and without the cache.
    let dir = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(mediaparse_tests::paths::extractors_dir()).expect("extractors") {
        let path = entry.expect("entry").path();
        let manifest = path.extension().is_some_and(|x| x == "toml");
        if mediaparse::registry::is_component_path(&path) || manifest {
            std::fs::copy(&path, dir.path().join(path.file_name().expect("name"))).expect("copy");
        }
    }
    let cache = dir.path().join("cache");
    let db = dir.path().join("db.sqlite");
    let mut starts = Vec::new();
    for round in ["empty cache", "warm cache"] {
        let started = Instant::now();
        let service = Service::start(ServiceOptions {
            extractors: Some(dir.path().to_path_buf()),
            db: Some(db.clone()),
            admin_token: Some(ADMIN.into()),
            extra_args: vec!["--compiled-cache".into(), cache.display().to_string()],
            ..Default::default()
        })
        .await
        .expect("service");
        starts.push((round, started.elapsed()));
        let listing: Value = reqwest::Client::new()
            .get(service.url("/api/v1/admin/extractors"))
            .bearer_auth(ADMIN)
            .send()
            .await
            .expect("listing")
            .json()
            .await
            .expect("json");
        let from: Vec<&str> = listing["data"]["extractors"]
            .as_array()
            .expect("array")
            .iter()
            .filter_map(|e| e["compiledFrom"].as_str())
            .collect();
        assert_eq!(from.len(), 11, "{listing}");
        let want = if round == "empty cache" {
            "compiled"
        } else {
            "cache"
        };
        assert!(from.iter().all(|f| *f == want), "{round}: {from:?}");
        drop(service);
    }
    for (round, t) in &starts {
        eprintln!("cold start with {round} (11 components, process start -> listening): {t:?}");
    }
}

#[tokio::test]
async fn the_configuration_file_reloads_and_a_bad_one_is_refused() {
    let up = upstream().await;
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let conf_dir = tempfile::tempdir().expect("tempdir");
    let conf = conf_dir.path().join("mediaparse.toml");
    std::fs::write(&conf, "[platforms.tiktok]\nenabled = true\n").expect("write");
    let run = start(dir.path(), &up.base_url(), Some(conf.clone()), None).await;
    assert_eq!(run.parse("tiktok", "ok").await.status, 200);

    let write = |text: &str| {
        let tmp = conf_dir.path().join(".mediaparse.toml.tmp");
        std::fs::write(&tmp, text).expect("write");
        std::fs::rename(&tmp, &conf).expect("rename");
    };
    write("[platforms.tiktok]\nenabled = false\n");
    eventually("disabled by config", SWAP_LIMIT, || async {
        run.parse("tiktok", "ok").await.body["code"] == "extractor_unavailable"
    })
    .await;
    assert_eq!(run.admin_entry("tiktok").await["status"], "disabled");

    // Broken: the previous configuration stays in force, the error is
    // reported without quoting the file's values.
    write(
        "[platforms.tiktok]\nenabled = false\n[platforms.tiktok.config]\ncookie = \"sid=TOPSECRET-42\n",
    );
    eventually("refusal reported", SWAP_LIMIT, || async {
        !run.admin_extractors().await["data"]["config"]["lastError"].is_null()
    })
    .await;
    let listing = run.admin_extractors().await;
    assert!(!listing.to_string().contains("TOPSECRET"), "{listing}");
    assert_eq!(run.parse("tiktok", "ok").await.status, 503);
    let m = run.metrics().await;
    assert_eq!(
        metric(&m, r#"mediaparse_config_reloads_total{outcome="failed"}"#),
        1.0
    );

    // Direct edit in place (no rename) is picked up too.
    std::fs::write(&conf, "[platforms.tiktok]\nenabled = true\n").expect("write");
    eventually("re-enabled", SWAP_LIMIT, || async {
        run.parse("tiktok", "ok").await.status == 200
    })
    .await;
    assert!(run.admin_extractors().await["data"]["config"]["lastError"].is_null());
}

#[tokio::test]
async fn a_parse_in_flight_finishes_on_the_component_it_started_with() {
    let up = upstream().await;
    // The slow answer is held until the swap is done (released below).
    up.set_delay("https://api.mptest.example/slow", Duration::from_secs(100));
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let conf_dir = tempfile::tempdir().expect("tempdir");
    let conf = conf_dir.path().join("config.toml");
    std::fs::write(
        &conf,
        "[platforms.tiktok.limits]\nparse_timeout_ms = 120000\nrequest_timeout_ms = 120000\n",
    )
    .expect("config");
    let run = std::sync::Arc::new(start(dir.path(), &up.base_url(), Some(conf), None).await);
    let slow = tokio::spawn({
        let run = run.clone();
        async move { run.parse("tiktok", "slow").await }
    });
    eventually("slow parse under way", SWAP_LIMIT, || async {
        !up.delayed_arrivals().is_empty()
    })
    .await;
    guest::install(dir.path(), "tiktok", &guest::component("tiktok", "2.0.0"));
    eventually("2.0.0 serves", SWAP_LIMIT, || async {
        run.serving_version("tiktok").await.as_deref() == Some("2.0.0")
    })
    .await;
    assert!(
        !slow.is_finished(),
        "the swap happened while the slow parse was in flight"
    );
    up.release_delayed();
    let a = slow.await.expect("join");
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.body["data"]["title"], "mptest 1.0.0",
        "finished on the old component"
    );
}
