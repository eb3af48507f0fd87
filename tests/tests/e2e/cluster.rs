//! Several hosts on one PostgreSQL: three real `mediaparse serve`
//! processes on the test PostgreSQL server (Debian's binaries, started by the
//! host crate's test harness), 64 clients spread across them.
//!
//! 1. 2,000 parses of one credit against 1,000 credits: 1,000 successes and
//!    1,000 `402`s, Σ ledger = credits taken = Σ `X-Credits-Charged`.
//! 2. A key edited through the CLI is honoured by host C.
//! 3. SIGKILL one host while it has parses in flight and restart it: the
//!    books still balance.
//! 4. PostgreSQL stopped mid-load until every host has answered `503
//!    database_unavailable` (never 500), and the hosts recover by themselves.
//!
//! Every phase waits for events (answers counted as they come, polled with
//! deadlines no load reaches), never for a fixed time.
//!
//! This is the only end-to-end test that uses PostgreSQL: it stops the
//! shared server, so it must stay the only one (or own its server).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

use mediaparse::store::{DbLocation, Store, test_pg};
use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// What a load has done so far, per host, as it happens.
#[derive(Default)]
struct Progress {
    in_flight: [AtomicUsize; 3],
    ok: [AtomicUsize; 3],
    unavailable: [AtomicUsize; 3],
    /// Set to stop a load that runs until told.
    stop: std::sync::atomic::AtomicBool,
}

impl Progress {
    fn get(counter: &[AtomicUsize; 3], host: usize) -> usize {
        counter[host].load(SeqCst)
    }
}

/// Wait until `done`, failing after a deadline no load reaches.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within 120 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// One parse's outcome as a client saw it: status (0 = no answer), code, credits charged.
#[derive(Clone, Debug)]
struct Outcome {
    status: u16,
    code: String,
    charged: i64,
    host: usize,
    /// When the request was sent, and when its outcome was known.
    sent: Instant,
    at: Instant,
}

struct Cluster {
    url: String,
    db: PathBuf,
    upstream: FakeUpstream,
    cache: tempfile::TempDir,
    hosts: Vec<Service>,
    data: Vec<tempfile::TempDir>,
}

impl Cluster {
    async fn start_host(&self, i: usize) -> Service {
        Service::start(ServiceOptions {
            upstream: Some(self.upstream.base_url()),
            db: Some(self.db.clone()),
            extra_env: vec![(
                "MEDIAPARSE_DATA_DIR".into(),
                self.data[i].path().display().to_string(),
            )],
            extra_args: vec![
                "--compiled-cache".into(),
                self.cache.path().display().to_string(),
            ],
            ..Default::default()
        })
        .await
        .unwrap()
    }
}

fn photo_case() -> Case {
    Case::load(
        &paths::workspace_root()
            .join("extractors/tiktok/fixtures")
            .join("photo_post"),
    )
    .expect("fixture case")
}

/// `n` parses by `clients` concurrent clients; parse `i` goes to host `i % hosts`.
/// `n` parses (or, with `n` = `usize::MAX`, until `progress.stop`) by
/// `clients` clients, round robin over the hosts.
async fn load(
    hosts: Arc<Mutex<Vec<String>>>,
    token: String,
    input: String,
    n: usize,
    clients: usize,
    progress: Arc<Progress>,
) -> Vec<Outcome> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (client, next, hosts, progress) = (
            client.clone(),
            next.clone(),
            hosts.clone(),
            progress.clone(),
        );
        let (token, input) = (token.to_string(), input.to_string());
        tasks.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            loop {
                let i = next.fetch_add(1, SeqCst);
                if i >= n || progress.stop.load(SeqCst) {
                    return seen;
                }
                let (host, base) = {
                    let hosts = hosts.lock().await;
                    (i % hosts.len(), hosts[i % hosts.len()].clone())
                };
                progress.in_flight[host].fetch_add(1, SeqCst);
                let outcome = parse_once(&client, &base, &token, &input, host).await;
                progress.in_flight[host].fetch_sub(1, SeqCst);
                match (outcome.status, outcome.code.as_str()) {
                    (200, _) => progress.ok[host].fetch_add(1, SeqCst),
                    (503, "database_unavailable") => {
                        progress.unavailable[host].fetch_add(1, SeqCst)
                    }
                    _ => 0,
                };
                seen.push(outcome);
            }
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all
}

async fn parse_once(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    input: &str,
    host: usize,
) -> Outcome {
    let sent_at = Instant::now();
    let sent = client
        .post(format!("{base}/api/v1/parse"))
        .bearer_auth(token)
        .json(&json!({ "url": input }))
        .send()
        .await;
    let Ok(resp) = sent else {
        return Outcome {
            status: 0,
            code: "no answer".into(),
            charged: 0,
            host,
            sent: sent_at,
            at: Instant::now(),
        };
    };
    let status = resp.status().as_u16();
    let charged = resp
        .headers()
        .get("x-credits-charged")
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .unwrap_or(0);
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    Outcome {
        status,
        code: body["code"].as_str().unwrap_or("").to_string(),
        charged,
        host,
        sent: sent_at,
        at: Instant::now(),
    }
}

fn tally(outcomes: &[Outcome]) -> BTreeMap<(u16, String), usize> {
    let mut t = BTreeMap::new();
    for o in outcomes {
        *t.entry((o.status, o.code.clone())).or_insert(0) += 1;
    }
    t
}

fn count(t: &BTreeMap<(u16, String), usize>, status: u16) -> usize {
    t.iter()
        .filter(|((s, _), _)| *s == status)
        .map(|(_, n)| n)
        .sum()
}

fn charged(outcomes: &[Outcome]) -> i64 {
    outcomes.iter().map(|o| o.charged).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_hosts_on_one_postgres_keep_exact_books() {
    let url = tokio::task::spawn_blocking(test_pg::fresh_database)
        .await
        .unwrap();
    let case = photo_case();
    let mut cluster = Cluster {
        db: PathBuf::from(&url),
        url,
        upstream: FakeUpstream::start(std::slice::from_ref(&case))
            .await
            .unwrap(),
        cache: tempfile::tempdir().unwrap(),
        hosts: Vec::new(),
        data: (0..3).map(|_| tempfile::tempdir().unwrap()).collect(),
    };
    // The first host compiles the components into the shared cache.
    for i in 0..3 {
        let host = cluster.start_host(i).await;
        cluster.hosts.push(host);
    }
    let (code, out) = cluster.hosts[0]
        .cli(&[
            "keys",
            "create",
            "--name",
            "cluster",
            "--rate-limit",
            "off",
            "--json",
        ])
        .unwrap();
    assert_eq!(code, 0, "{out}");
    let created: Value = serde_json::from_str(out.trim()).unwrap();
    let token = created["token"].as_str().unwrap().to_string();
    let key_id = created["id"].as_str().unwrap().to_string();
    cluster.hosts[0].add_credits("default", 1000).unwrap();
    let urls = Arc::new(Mutex::new(
        cluster
            .hosts
            .iter()
            .map(|h| h.base_url.clone())
            .collect::<Vec<_>>(),
    ));
    // Read the books on a blocking thread with a store of its own.
    let books = || {
        let url = cluster.url.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let store = Store::connect(&DbLocation::Postgres(url)).unwrap();
                (
                    store.ledger_sum(None).unwrap(),
                    store.account("default").unwrap(),
                )
            })
            .await
            .unwrap()
        }
    };

    // 1. 2,000 parses against 1,000 credits across three hosts.
    let started = Instant::now();
    let outcomes = load(
        urls.clone(),
        token.clone(),
        case.input.clone(),
        2000,
        64,
        Arc::default(),
    )
    .await;
    let elapsed = started.elapsed();
    let t = tally(&outcomes);
    eprintln!("cluster phase 1: {t:?} in {elapsed:.1?}");
    assert_eq!(count(&t, 200), 1000, "{t:?}");
    assert_eq!(count(&t, 402), 1000, "{t:?}");
    assert_eq!(t.len(), 2, "only successes and 402s: {t:?}");
    let (ledger, account) = books().await;
    assert_eq!(ledger, 1000);
    assert_eq!(charged(&outcomes), ledger);
    assert_eq!((account.balance, account.spent), (0, 1000));
    assert!(account.consistent());
    for h in 0..3 {
        assert!(
            outcomes.iter().any(|o| o.host == h && o.status == 200),
            "host {h} served parses"
        );
    }

    // 2. A key edited through the CLI (any host's database) reaches host C.
    cluster.hosts[0].add_credits("default", 100).unwrap();
    let c_url = urls.lock().await[2].clone();
    let client = reqwest::Client::new();
    let first = parse_once(&client, &c_url, &token, &case.input, 2).await;
    assert_eq!(first.status, 200, "{first:?}");
    let (code, out) = cluster.hosts[0]
        .cli(&["keys", "edit", &key_id, "--platforms", "youtube"])
        .unwrap();
    assert_eq!(code, 0, "{out}");
    let edited = Instant::now();
    let honoured = loop {
        let o = parse_once(&client, &c_url, &token, &case.input, 2).await;
        if o.status == 403 {
            break edited.elapsed();
        }
        assert!(
            edited.elapsed() < Duration::from_secs(120),
            "host C still allowed the key after 120 s: {o:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    eprintln!("cluster phase 2: key edit honoured on host C after {honoured:?}");
    let (code, out) = cluster.hosts[0]
        .cli(&["keys", "edit", &key_id, "--platforms", "all"])
        .unwrap();
    assert_eq!(code, 0, "{out}");
    // Every host honours "all" again before the next phase.
    for host in 0..3 {
        let url = urls.lock().await[host].clone();
        let edited = Instant::now();
        loop {
            let o = parse_once(&client, &url, &token, &case.input, host).await;
            if o.status == 200 {
                break;
            }
            assert!(
                edited.elapsed() < Duration::from_secs(120),
                "host {host} still refused the key after 120 s: {o:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    // 3. SIGKILL host B mid-load, restart it: the books still balance.
    cluster.hosts[0].add_credits("default", 1000).unwrap();
    let (ledger_before, _) = books().await;
    let progress = Arc::new(Progress::default());
    let running = tokio::spawn(load(
        urls.clone(),
        token.clone(),
        case.input.clone(),
        600,
        64,
        progress.clone(),
    ));
    // Host B has served parses and has some in flight when the kill lands.
    until("host B serving under load", || {
        Progress::get(&progress.ok, 1) >= 10 && Progress::get(&progress.in_flight, 1) > 0
    })
    .await;
    let in_flight_at_kill = Progress::get(&progress.in_flight, 1);
    let killed = Instant::now();
    cluster.hosts[1].kill().await;
    let outcomes = running.await.unwrap();
    // Cut off: sent to host B before the kill, never answered.
    let cut = outcomes
        .iter()
        .filter(|o| o.host == 1 && o.status == 0 && o.sent < killed && o.at >= killed)
        .count();
    eprintln!(
        "cluster phase 3: {in_flight_at_kill} parses in flight on host B at the kill, {cut} cut off"
    );
    assert!(in_flight_at_kill > 0);
    assert!(cut > 0, "the kill cut off parses in flight on host B");
    let restarted = cluster.start_host(1).await;
    urls.lock().await[1] = restarted.base_url.clone();
    cluster.hosts[1] = restarted;
    let after = load(
        urls.clone(),
        token.clone(),
        case.input.clone(),
        300,
        64,
        Arc::default(),
    )
    .await;
    let t = tally(&outcomes);
    let t_after = tally(&after);
    eprintln!(
        "cluster phase 3: during {t:?}; after restart ({:.1?} after the kill) {t_after:?}",
        killed.elapsed()
    );
    let (ledger, account) = books().await;
    let taken = ledger - ledger_before;
    let answered = charged(&outcomes) + charged(&after);
    let unanswered = outcomes
        .iter()
        .filter(|o| o.status != 200 && o.status != 402)
        .count() as i64;
    assert!(account.consistent(), "{account:?}");
    assert!(
        answered <= taken && taken <= answered + unanswered,
        "ledger {taken} vs answered {answered} (+{unanswered} unanswered)"
    );
    assert_eq!(count(&t_after, 200), 300, "{t_after:?}");

    // 4. PostgreSQL stopped for 5 s mid-load: 503 database_unavailable, never 500; recovery.
    cluster.hosts[0].add_credits("default", 100_000).unwrap();
    let (ledger_before, _) = books().await;
    let progress = Arc::new(Progress::default());
    let running = tokio::spawn(load(
        urls.clone(),
        token.clone(),
        case.input.clone(),
        usize::MAX,
        16,
        progress.clone(),
    ));
    until("every host serving under load", || {
        (0..3).all(|h| Progress::get(&progress.ok, h) >= 5)
    })
    .await;
    tokio::task::spawn_blocking(test_pg::stop_server)
        .await
        .unwrap();
    let stopped = Instant::now();
    until("every host answering 503 database_unavailable", || {
        (0..3).all(|h| Progress::get(&progress.unavailable, h) > 0)
    })
    .await;
    tokio::task::spawn_blocking(test_pg::start_server)
        .await
        .unwrap();
    let back = Instant::now();
    let ok_at_back: Vec<usize> = (0..3).map(|h| Progress::get(&progress.ok, h)).collect();
    until("every host serving again", || {
        // A few more than at the restart: an answer counted just after
        // `back` may have arrived just before it.
        (0..3).all(|h| Progress::get(&progress.ok, h) > ok_at_back[h] + 3)
    })
    .await;
    progress.stop.store(true, SeqCst);
    let outcomes = running.await.unwrap();
    let t = tally(&outcomes);
    let recovery: Vec<Option<Duration>> = (0..3)
        .map(|h| {
            outcomes
                .iter()
                .filter(|o| o.host == h && o.status == 200 && o.at > back)
                .map(|o| o.at - back)
                .min()
        })
        .collect();
    eprintln!(
        "cluster phase 4: {t:?}; PostgreSQL down {:.1?}; first success per host after it returned: {recovery:?}",
        back - stopped
    );
    for ((status, code), n) in &t {
        assert!(
            *status == 200 || (*status == 503 && code == "database_unavailable"),
            "unexpected answer {status} {code} x{n}: {t:?}"
        );
    }
    assert!(count(&t, 503) > 0, "the outage was seen: {t:?}");
    for (h, r) in recovery.iter().enumerate() {
        assert!(r.is_some(), "host {h} recovered: {t:?}");
    }
    let (ledger, account) = books().await;
    assert!(account.consistent(), "{account:?}");
    assert_eq!(
        ledger - ledger_before,
        charged(&outcomes),
        "every charge has its answer"
    );
}
