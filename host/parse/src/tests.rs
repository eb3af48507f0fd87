//! The parse path with its services named: the test guest component
//! (`tests/guests/mptest`, built by `cargo xtask test`) as the `tiktok`
//! extractor, a fake upstream in place of the fetcher (the [`Upstream`]
//! seam) that counts its calls, and a real SQLite store in a temporary
//! folder. Checks the order of the checks, and that credits move only once,
//! only for media.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;
use mediaparse_sdk::{HttpRequest, HttpResponse};

use super::{ParseError, Services, parse};
use mediaparse_auth::AuthError;
use mediaparse_config::OperatorConfig;
use mediaparse_core::{Clock, ParseLimits};
use mediaparse_fetch::{FetchError, FetchLimits, Upstream};
use mediaparse_registry::testing::{bundled_toml, workspace_root};
use mediaparse_registry::{Registry, Runtime, SandboxLimits, testing};
use mediaparse_store::{KeyRecord, Store};

/// One registry holding the test guest as `tiktok`, compiled once.
fn registry() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(fresh_registry).clone()
}

/// A registry of its own holding the test guest as `tiktok` (with tiktok's
/// platform.toml: a component is served with its manifest).
fn fresh_registry() -> Arc<Registry> {
    let runtime = Runtime::new(SandboxLimits::default()).expect("wasm runtime");
    testing::serving_test_guest(runtime, "tiktok")
}

/// Answers every request with `status` (or a timeout), counting calls.
struct FakeUpstream {
    calls: AtomicUsize,
    answer: Result<u16, ()>,
    /// A registry whose live instances each fetch notes in `live_at_fetch`.
    probe: OnceLock<Arc<Registry>>,
    live_at_fetch: std::sync::Mutex<Vec<usize>>,
}

impl Upstream for FakeUpstream {
    fn fetch<'a>(
        &'a self,
        _platform: &'a str,
        _api_hosts: &'a [String],
        request: &'a HttpRequest,
        _limits: &'a FetchLimits,
        _proxy: Option<&'a str>,
    ) -> futures::future::BoxFuture<'a, Result<HttpResponse, FetchError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(registry) = self.probe.get() {
            let live = registry.runtime().live_instances();
            self.live_at_fetch.lock().unwrap().push(live);
        }
        let answer = self.answer.map(|status| HttpResponse {
            request_url: request.url.clone(),
            final_url: request.url.clone(),
            status,
            headers: Vec::new(),
            body: b"fake body".to_vec(),
        });
        Box::pin(async move { answer.map_err(|()| FetchError::Timeout) })
    }
}

struct World {
    _dir: tempfile::TempDir,
    store: Store,
    upstream: Arc<FakeUpstream>,
    services: Services,
}

fn world(config: &str, answer: Result<u16, ()>) -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.db")).expect("store");
    let upstream = Arc::new(FakeUpstream {
        calls: AtomicUsize::new(0),
        answer,
        probe: OnceLock::new(),
        live_at_fetch: Default::default(),
    });
    let services = Services {
        store: store.clone(),
        registry: registry(),
        fetcher: upstream.clone(),
        limits: ParseLimits::default(),
        config: Arc::new(ArcSwap::from_pointee(
            OperatorConfig::parse(config).expect("config"),
        )),
        clock: Clock {
            fixed_parse_ms: Some(1_000),
            fixed_auth_s: Some(1_000),
        },
        exits: Default::default(),
        pacer: Default::default(),
        sessions: Default::default(),
        admission: crate::admission::Admission::new(Default::default()),
        cache: crate::cache::ParseCache::new(),
        health: Default::default(),
        failures: None,
    };
    World {
        _dir: dir,
        store,
        upstream,
        services,
    }
}

impl World {
    fn key(&self, platforms: Option<&[&str]>, credits: i64) -> KeyRecord {
        let mut key = KeyRecord::for_tests("key_test", "acme");
        key.platforms = platforms.map(|p| p.iter().map(|s| s.to_string()).collect());
        let token = mediaparse_auth::mint_token();
        self.store
            .insert_key(&key, &mediaparse_auth::hash_token(&token))
            .expect("key");
        if credits > 0 {
            self.store.add_credits("acme", credits, 0).expect("credits");
        }
        self.store.key(&key.id).expect("stored key")
    }

    async fn parse(&self, key: &KeyRecord, input: &str) -> Result<super::Parsed, ParseError> {
        self.parse_counted(key, input).await.0
    }

    /// A parse through the platform endpoint, whose answer shows platform data.
    async fn parse_platform(
        &self,
        key: &KeyRecord,
        input: &str,
    ) -> Result<super::Parsed, ParseError> {
        parse(&self.services, &request(key, input, Some("tiktok"))).await
    }

    /// A parse and the thread hand-offs it made.
    async fn parse_counted(
        &self,
        key: &KeyRecord,
        input: &str,
    ) -> (Result<super::Parsed, ParseError>, u32) {
        mediaparse_core::handoffs::counted(parse(&self.services, &request(key, input, None))).await
    }

    fn fetches(&self) -> usize {
        self.upstream.calls.load(Ordering::SeqCst)
    }

    fn books(&self) -> (i64, i64) {
        (
            self.store.balance("acme").expect("balance"),
            self.store.ledger_count(Some("acme")).expect("ledger"),
        )
    }
}

const OK: &str = "https://tiktok.mptest.example/ok";

/// A customer's parse of `input` (through the `platform` endpoint, if
/// given) that the parse cache may serve.
fn request<'a>(
    key: &'a KeyRecord,
    input: &'a str,
    platform: Option<&'a str>,
) -> super::ParseRequest<'a> {
    super::ParseRequest {
        key,
        input,
        platform,
        request_id: "req_test",
        cache: super::CacheUse::Allowed,
        purpose: super::Purpose::Customer,
        hold: None,
    }
}

/// Charged the catalogue's price: SPEC.md's Limits table says 1 credit for
/// TikTok (extractors/tiktok/platform.toml), and an operator's `[platforms.
/// tiktok] price` replaces it.
#[tokio::test]
async fn a_parse_with_media_is_charged_once_with_one_ledger_row() {
    let w = world("", Ok(200));
    let key = w.key(None, 5);
    let parsed = w.parse_platform(&key, OK).await.expect("parsed");
    assert_eq!(parsed.platform, "tiktok");
    assert_eq!(parsed.media.images.len(), 1);
    assert_eq!(parsed.charged, 1, "SPEC.md: 1 credit for tiktok");
    let data = parsed
        .platform_data
        .expect("the platform endpoint shows platform data");
    assert_eq!(data.to_value()["body"], "fake body");
    assert_eq!(w.fetches(), 1);
    assert_eq!(w.books(), (4, 1));

    let w = world("[platforms.tiktok]\nprice = 7\n", Ok(200));
    let key = w.key(None, 10);
    let parsed = w.parse(&key, OK).await.expect("parsed");
    assert_eq!(parsed.charged, 7, "the operator's price");
    assert_eq!(w.books(), (3, 1));
}

/// A parse crosses threads once, for its charge (to the SQLite writer
/// thread and back): its guest calls run on the parse's own thread and the
/// pre-check answers there too. The count is held here so a change that
/// adds a trip shows.
#[tokio::test]
async fn a_parse_makes_a_known_number_of_thread_handoffs() {
    let w = world("[limits]\nparse_cache_ttl_ms = 60000\n", Ok(200));
    let key = w.key(None, 5);
    let (parsed, handoffs) = w.parse_counted(&key, OK).await;
    parsed.expect("parsed");
    assert_eq!(handoffs, 2, "the charge, there and back");
    // A cached answer: the same one trip.
    let (parsed, handoffs) = w.parse_counted(&key, OK).await;
    assert_eq!(parsed.expect("parsed").cache, super::CacheOutcome::Hit);
    assert_eq!(handoffs, 2, "the charge, there and back");
}

/// A parse holds a guest instance only while its guest runs: none is
/// alive while it waits for the platform, so parses waiting on slow
/// upstreams hold no linear memory. Its own registry, so no other test's
/// instances are counted.
#[tokio::test]
async fn no_instance_is_alive_while_a_parse_waits_for_its_upstream() {
    let mut w = world("", Ok(200));
    let registry = fresh_registry();
    w.services.registry = registry.clone();
    assert!(w.upstream.probe.set(registry.clone()).is_ok());
    let key = w.key(None, 5);
    w.parse(&key, OK).await.expect("parsed");
    let seen = w.upstream.live_at_fetch.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the parse fetched");
    assert!(
        seen.iter().all(|&n| n == 0),
        "instances alive during its fetches: {seen:?}"
    );
    assert_eq!(registry.runtime().live_instances(), 0, "none left after it");
}

/// `detect` answers from its input alone, so an input the component has
/// detected before makes no instance for it: a parse-cache hit runs no
/// guest at all, and an extracting parse one instance fewer.
#[tokio::test]
async fn a_detected_input_makes_no_instance_for_detect_again() {
    let mut w = world("[limits]\nparse_cache_ttl_ms = 60000\n", Ok(200));
    let registry = fresh_registry();
    w.services.registry = registry.clone();
    let key = w.key(None, 5);
    // Loading asked the component its `info`: counted from here.
    let loaded = registry.runtime().instances_made();
    let made = || registry.runtime().instances_made() - loaded;

    w.parse(&key, OK).await.expect("parsed");
    let first = made();
    assert!(first >= 2, "detect and at least one round: {first}");

    let hit = w.parse(&key, OK).await.expect("parsed");
    assert_eq!(hit.cache, super::CacheOutcome::Hit);
    assert_eq!(
        made(),
        first,
        "a cache hit of a detected input runs no guest"
    );

    let request = super::ParseRequest {
        request_id: "req_again",
        cache: super::CacheUse::Bypass,
        ..request(&key, OK, None)
    };
    parse(&w.services, &request).await.expect("parsed");
    assert_eq!(made() - first, first - 1, "the same rounds, without detect");
}

/// Growths of a guest's linear memory are counted under its platform when
/// its instance ends (the guest here reserves memory until its cap).
#[tokio::test]
async fn a_guests_memory_growths_are_counted() {
    let w = world("", Ok(200));
    let key = w.key(None, 5);
    let grows = || {
        mediaparse_metrics::global()
            .encode()
            .lines()
            .find_map(|l| {
                l.strip_prefix("mediaparse_guest_memory_grows_total{platform=\"tiktok\"} ")?
                    .parse::<u64>()
                    .ok()
            })
            .unwrap_or(0)
    };
    let before = grows();
    let failed = w.parse(&key, "https://tiktok.mptest.example/oom").await;
    assert!(failed.is_err(), "the guest hit its cap");
    assert!(grows() > before, "no growth counted");
    assert_eq!(w.books(), (5, 0), "nothing charged");
}

#[tokio::test]
async fn a_parse_without_media_is_not_charged() {
    let w = world("", Ok(200));
    let key = w.key(None, 5);
    let parsed = w
        .parse(&key, "https://tiktok.mptest.example/empty")
        .await
        .expect("parsed");
    assert!(parsed.media.is_empty());
    assert_eq!(parsed.charged, 0);
    assert_eq!(w.books(), (5, 0));
}

#[tokio::test]
async fn failures_cost_nothing() {
    let w = world("", Err(()));
    let key = w.key(None, 5);
    let timeout = w.parse(&key, OK).await;
    assert!(
        matches!(timeout, Err(ParseError::UpstreamTimeout)),
        "{:?}",
        timeout.err()
    );
    let trap = w.parse(&key, "https://tiktok.mptest.example/trap").await;
    assert!(
        matches!(trap, Err(ParseError::ExtractorFailed(_))),
        "{:?}",
        trap.err()
    );
    assert_eq!(w.books(), (5, 0));
}

#[tokio::test]
async fn the_balance_is_checked_before_any_upstream_request() {
    let w = world("", Ok(200));
    let key = w.key(None, 0);
    let short = w.parse(&key, OK).await;
    assert!(
        matches!(
            short,
            Err(ParseError::InsufficientCredits { balance: 0, .. })
        ),
        "{:?}",
        short.err()
    );
    assert_eq!(w.fetches(), 0);
    assert_eq!(w.books(), (0, 0));
}

#[tokio::test]
async fn permission_is_checked_before_the_extractor_runs() {
    let w = world("", Ok(200));
    let key = w.key(Some(&["youtube"]), 5);
    // `/` has no mode: the guest's detect would refuse it (302); the
    // permission check answers first, without an instance.
    for input in [OK, "https://tiktok.mptest.example/"] {
        let refused = w.parse(&key, input).await;
        assert!(
            matches!(
                refused,
                Err(ParseError::Auth(AuthError::PlatformNotAllowed(ref p))) if p == "tiktok"
            ),
            "{input}: {:?}",
            refused.err()
        );
    }
    assert_eq!(w.fetches(), 0);
    assert_eq!(w.books(), (5, 0));
}

#[tokio::test]
async fn routing_and_the_platform_switch_come_first() {
    let w = world("[platforms.tiktok]\nenabled = false\n", Ok(200));
    let key = w.key(Some(&["youtube"]), 5);
    // Disabled: 503 even for a key that may not parse it.
    assert!(matches!(
        w.parse(&key, OK).await,
        Err(ParseError::ExtractorUnavailable(p)) if p == "tiktok"
    ));
    assert!(matches!(
        w.parse(&key, "https://example.org/post/1").await,
        Err(ParseError::Unsupported(_))
    ));
    assert!(matches!(
        w.parse(&key, &"x".repeat(5000)).await,
        Err(ParseError::Unsupported(m)) if m.contains("longer than")
    ));
    assert_eq!(w.fetches(), 0);
    assert_eq!(w.books(), (5, 0));
}

/// The test guest as it was built against the frozen WIT 1.0
/// (`tests/artifacts/mptest-wit1.0.wasm`, kept as a binary artifact), as `tiktok`.
fn registry_1_0() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            let runtime = Runtime::new(SandboxLimits::default()).expect("wasm runtime");
            let registry = Arc::new(Registry::new(runtime));
            let dir = tempfile::tempdir().expect("tempdir");
            std::fs::copy(bundled_toml("tiktok"), dir.path().join("tiktok.toml"))
                .expect("copy toml");
            let artifact = workspace_root().join("tests/artifacts/mptest-wit1.0.wasm");
            std::fs::copy(artifact, dir.path().join("tiktok.wasm")).expect("copy guest");
            assert_eq!(registry.load_dir(dir.path()).expect("load"), 1);
            registry
        })
        .clone()
}

/// Two rounds (fetch one page, then finish): a 1.1 guest is called once per
/// round (`step`), a 1.0 guest `plan`, `plan`, then `map` on the same page.
#[tokio::test]
async fn a_1_1_guest_is_called_once_per_round_a_1_0_guest_plans_then_maps() {
    use mediaparse_registry::Next;
    for (registry, wit, wit_version, calls_per_parse) in [
        (registry(), "1.1", "1.1.0", 2),
        (registry_1_0(), "1.0", "1.0.0", 3),
    ] {
        let ext = registry.get("tiktok").expect("loaded");
        assert_eq!(ext.wit_version, wit_version);
        let mut session = registry.session(&ext).await.expect("session");
        assert_eq!(session.wit(), wit);
        let target = session.detect(OK).await.expect("call").expect("detected");
        let ctx = mediaparse_sdk::Context::default();
        let before = session.guest_calls();
        let first = session
            .step(&target, &ctx, &[])
            .await
            .expect("call")
            .expect("step");
        let Next::Fetch(requests) = first.next else {
            panic!("{wit}: the first round fetches")
        };
        let done: Vec<mediaparse_sdk::Exchange> = requests
            .into_iter()
            .map(|request| mediaparse_sdk::Exchange {
                response: HttpResponse {
                    request_url: request.url.clone(),
                    final_url: request.url.clone(),
                    status: 200,
                    headers: Vec::new(),
                    body: b"page".to_vec(),
                },
                request,
            })
            .collect();
        let second = session
            .step(&target, &ctx, &done)
            .await
            .expect("call")
            .expect("step");
        let Next::Done(media, data) = second.next else {
            panic!("{wit}: the second round finishes")
        };
        assert_eq!(media.images.len(), 1, "{wit}");
        assert!(data.contains("\"body\":\"page\""), "{wit}: {data}");
        assert_eq!(session.guest_calls() - before, calls_per_parse, "{wit}");
    }
}

/// What a 1.1 guest asks to remember comes back in the next parse's context.
#[tokio::test]
async fn remembered_values_reach_the_next_parse() {
    let w = world("", Ok(200));
    let key = w.key(None, 5);
    let remember = "https://tiktok.mptest.example/remember";
    let first = w.parse_platform(&key, remember).await.expect("first");
    assert_eq!(
        first.platform_data.expect("shown").to_value()["remembered"],
        serde_json::json!([])
    );
    let second = w.parse_platform(&key, remember).await.expect("second");
    assert_eq!(
        second.platform_data.expect("shown").to_value()["remembered"],
        serde_json::json!([["seen", "0"]])
    );
    let usage = w.services.registry.memos().usage("tiktok", 0);
    assert_eq!((usage.count, usage.bytes), (1, "seen1".len()));
}

/// A guest call shares its thread: a spinning guest yields at every epoch
/// tick, so on a one-thread runtime the parse's deadline still fires, other
/// tasks still run, and the dropped call frees its admission slot and its
/// instance at once. The bound is structural: a guest that held the thread
/// would keep it until its own call budget ran out, however fast the machine.
#[tokio::test(flavor = "current_thread")]
async fn a_spinning_guest_shares_its_thread_and_stops_at_the_parse_deadline() {
    let budget = SandboxLimits::default().call_timeout;
    let mut w = world("[limits]\nparse_timeout_ms = 300\n", Ok(200));
    let registry = fresh_registry();
    w.services.registry = registry.clone();
    let key = w.key(None, 5);
    let ticks = Arc::new(AtomicUsize::new(0));
    let ticker = tokio::spawn({
        let ticks = ticks.clone();
        async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                ticks.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let started = std::time::Instant::now();
    let out = w.parse(&key, "https://tiktok.mptest.example/loop").await;
    let elapsed = started.elapsed();
    ticker.abort();
    assert!(
        matches!(out, Err(ParseError::UpstreamTimeout)),
        "{:?}",
        out.err()
    );
    assert!(
        elapsed < budget,
        "the parse answered after {elapsed:?}, not before the guest's own {budget:?} budget"
    );
    assert!(
        ticks.load(Ordering::SeqCst) > 0,
        "no other task ran while the guest spun"
    );
    assert_eq!(w.services.admission.in_flight(), 0, "the slot is free");
    assert_eq!(
        registry.runtime().live_instances(),
        0,
        "no instance is left"
    );
}

/// Only the platform endpoint's answer shows platform data, so only its
/// parses sanitize it: a common parse of a post whose platform data cannot
/// be shown (nested deeper than any JSON reader here goes) succeeds and is charged,
/// while a platform parse of it — extracted or from the cache — fails
/// before the charge.
#[tokio::test]
async fn platform_data_is_sanitized_only_for_an_answer_that_shows_it() {
    let w = world("[limits]\nparse_cache_ttl_ms = 60000\n", Ok(200));
    let key = w.key(None, 5);
    let deep = "https://tiktok.mptest.example/deep";

    let common = w
        .parse(&key, deep)
        .await
        .expect("a common parse shows no platform data");
    assert_eq!(common.charged, 1);
    assert!(common.platform_data.is_none());
    assert_eq!(w.books(), (4, 1));

    let from_cache = w.parse_platform(&key, deep).await;
    assert!(
        matches!(&from_cache, Err(ParseError::ExtractorFailed(m)) if m.contains("platform data")),
        "{:?}",
        from_cache.err()
    );
    assert_eq!(w.books(), (4, 1), "a parse that fails is not charged");

    let request = super::ParseRequest {
        request_id: "req_again",
        cache: super::CacheUse::Bypass,
        ..request(&key, deep, Some("tiktok"))
    };
    let extracted = parse(&w.services, &request).await;
    assert!(
        matches!(&extracted, Err(ParseError::ExtractorFailed(_))),
        "{:?}",
        extracted.err()
    );
    assert_eq!(w.books(), (4, 1));
}
