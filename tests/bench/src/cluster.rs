//! The several-hosts rows: parses/s and p50/p99 for one host on SQLite, one host
//! on PostgreSQL and three hosts on one PostgreSQL (same machine, so they
//! share its cores: CPU per parse per host is reported), and the database
//! transactions per parse on PostgreSQL: the count of committed and
//! rolled-back transactions in `pg_stat_database`. A statement sent on its
//! own is its own transaction; the parse path's async calls pipeline several
//! such statements in one round trip, so this counts statements and
//! transactions, not round trips.
//!
//! PostgreSQL is the test server of the host crate (Debian's binaries,
//! `initdb` into a temporary directory): no configuration needed.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mediaparse::store::test_pg;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

use super::{E2E_CASE, Run, load};

/// One row: which setup, and what its load run measured.
async fn row(
    setup: &str,
    db: PathBuf,
    hosts: usize,
    pg_url: Option<&str>,
    quick: bool,
) -> anyhow::Result<Value> {
    let case = mediaparse_sdk::fixture::Case::load(
        &mediaparse_tests::paths::workspace_root()
            .join("extractors")
            .join(E2E_CASE),
    )?;
    let upstream = FakeUpstream::start(std::slice::from_ref(&case)).await?;
    let cache = tempfile::tempdir()?;
    let data: Vec<tempfile::TempDir> = (0..hosts)
        .map(|_| tempfile::tempdir())
        .collect::<Result<_, _>>()?;
    let mut services = Vec::new();
    for dir in &data {
        services.push(
            Service::start(ServiceOptions {
                upstream: Some(upstream.base_url()),
                db: Some(db.clone()),
                extra_env: vec![(
                    "MEDIAPARSE_DATA_DIR".into(),
                    dir.path().display().to_string(),
                )],
                // A real limit (counted in the database on PostgreSQL), high
                // enough never to refuse.
                extra_args: vec![
                    "--compiled-cache".into(),
                    cache.path().display().to_string(),
                    "--rate-limit".into(),
                    "1000000".into(),
                ],
                ..Default::default()
            })
            .await?,
        );
    }
    let first = &services[0];
    first.add_credits("default", 10_000_000)?;
    let token = first.create_key(&[])?;
    let bases: Arc<Vec<String>> = Arc::new(services.iter().map(|s| s.base_url.clone()).collect());
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let input = case.input.clone();
    let request: Arc<dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync> =
        Arc::new(move |c: &reqwest::Client| {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            c.post(format!("{}/api/v1/parse", bases[i % bases.len()]))
                .bearer_auth(&token)
                // Each parse extracts and charges: the database's share is the point.
                .header("cache-control", "no-cache")
                .json(&json!({ "url": input }))
        });
    let client = reqwest::Client::new();
    // Warm up (caches, pools), then measure.
    load(&client, request.clone(), 8, 64).await;
    let total = if quick { 400 } else { 2000 };
    let cpu_before: Vec<u64> = services.iter().map(cpu_ticks).collect();
    let xacts_before = match pg_url {
        Some(url) => Some(transactions(url).await?),
        None => None,
    };
    let run: Run = load(&client, request, 64, total).await;
    let xacts = match (pg_url, xacts_before) {
        (Some(url), Some(before)) => Some(transactions(url).await? - before),
        _ => None,
    };
    let ticks_per_s = 100.0;
    let cpu_ms_per_parse: Vec<f64> = services
        .iter()
        .zip(&cpu_before)
        .map(|(s, before)| {
            let used = cpu_ticks(s).saturating_sub(*before) as f64 / ticks_per_s;
            used * 1000.0 / (total as f64 / hosts as f64)
        })
        .collect();
    Ok(json!({
        "setup": setup,
        "hosts": hosts,
        "parses": total,
        "errors": run.failures.values().sum::<usize>(),
        "parsesPerSecond": run.per_second(),
        "p50Ms": run.pct(0.50).as_secs_f64() * 1000.0,
        "p99Ms": run.pct(0.99).as_secs_f64() * 1000.0,
        "cpuMsPerParsePerHost": cpu_ms_per_parse,
        "dbRoundTripsPerParse": xacts.map(|x| x as f64 / total as f64),
    }))
}

/// utime + stime of a host process, in clock ticks.
fn cpu_ticks(service: &Service) -> u64 {
    let Some(pid) = service.id() else { return 0 };
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // Fields after the command name (which may hold spaces) start after ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of stat; 11 and 12 after ')'.
    field(11) + field(12)
}

/// Committed plus rolled-back transactions of the bench database so far.
async fn transactions(url: &str) -> anyhow::Result<i64> {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || {
        // Statistics are flushed by backends at most once a second.
        std::thread::sleep(Duration::from_millis(1200));
        let mut c = postgres::Client::connect(&url, postgres::NoTls)?;
        let row = c.query_one(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )?;
        Ok(row.get(0))
    })
    .await?
}

/// The three rows.
pub async fn several_hosts(quick: bool) -> anyhow::Result<Vec<Value>> {
    let dir = tempfile::tempdir()?;
    let mut rows = vec![
        row(
            "1 host, SQLite",
            dir.path().join("bench.db"),
            1,
            None,
            quick,
        )
        .await?,
    ];
    for hosts in [1, 3] {
        let url = tokio::task::spawn_blocking(test_pg::fresh_database).await?;
        let setup = format!(
            "{hosts} host{}, PostgreSQL",
            if hosts > 1 { "s" } else { "" }
        );
        rows.push(row(&setup, PathBuf::from(&url), hosts, Some(&url), quick).await?);
    }
    Ok(rows)
}

pub fn print(rows: &[Value]) {
    if rows.is_empty() {
        return;
    }
    println!("\n## Several hosts\n");
    println!(
        "| setup | parses/s | p50 ms | p99 ms | CPU ms per parse per host | DB transactions per parse | errors |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in rows {
        let cpu: Vec<String> = r["cpuMsPerParsePerHost"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| format!("{:.1}", v.as_f64().unwrap_or(0.0)))
                    .collect()
            })
            .unwrap_or_default();
        println!(
            "| {} | {:.0} | {:.1} | {:.1} | {} | {} | {} |",
            r["setup"].as_str().unwrap_or(""),
            r["parsesPerSecond"].as_f64().unwrap_or(0.0),
            r["p50Ms"].as_f64().unwrap_or(0.0),
            r["p99Ms"].as_f64().unwrap_or(0.0),
            cpu.join(" / "),
            r["dbRoundTripsPerParse"]
                .as_f64()
                .map(|x| format!("{x:.2}"))
                .unwrap_or_else(|| "-".into()),
            r["errors"],
        );
    }
}
