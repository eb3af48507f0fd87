//! The sealed sandbox: a guest's WASI clocks read the parse's context time
//! and its random sources are seeded from the parse, so two parses of the
//! same post at the same context time see exactly the same world — neither
//! the wall clock nor OS entropy reaches an extractor.

use super::*;
use mediaparse_tests::service::FIXED_CLOCK_MS;

/// The test guest's `sealed` readings, through the platform endpoint (which carries platformData).
async fn readings(run: &Running) -> Value {
    let resp = run
        .client
        .post(run.service.url("/api/v1/platforms/tiktok/parse"))
        .bearer_auth(&run.token)
        .json(&json!({"url": "https://tiktok.mptest.example/sealed"}))
        .send()
        .await
        .expect("platform parse");
    assert_eq!(resp.status().as_u16(), 200);
    let body: Value = resp.json().await.expect("json");
    let wasi = body["data"]["platformData"]["wasi"].clone();
    assert!(wasi.is_object(), "no WASI readings in {body}");
    wasi
}

#[tokio::test]
async fn wasi_clocks_and_randomness_come_from_the_parse() {
    let up = upstream().await;
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let run = start(dir.path(), &up.base_url(), None, None).await;

    let first = readings(&run).await;
    // The wall clock, std's SystemTime over it and the monotonic clock all
    // stand at the context time (the service runs on a fixed test clock).
    assert_eq!(first["wall_ms"], FIXED_CLOCK_MS.to_string(), "{first}");
    assert_eq!(first["std_system_time_ms"], FIXED_CLOCK_MS.to_string());
    assert_eq!(
        first["monotonic_ns"],
        (u128::from(FIXED_CLOCK_MS) * 1_000_000).to_string()
    );
    // Randomness is a stream, not a constant...
    assert_ne!(first["random"], first["insecure"], "{first}");
    assert_ne!(first["insecure_seed"][0], first["insecure_seed"][1]);

    // ...and the same parse again, in a fresh instance, sees the same world.
    let again = readings(&run).await;
    assert_eq!(first, again);

    // So does a second service process: no OS entropy leaks in.
    let other = start(dir.path(), &up.base_url(), None, None).await;
    assert_eq!(first, readings(&other).await);
}
