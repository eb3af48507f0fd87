//! The web console's page cost: server render time (p50/p95,
//! measured on loopback by the client, so an upper bound) of each customer
//! page for an account with 10,000 ledger rows, and each page's weight
//! (HTML + the stylesheet and script it loads). Targets: p95 ≤ 20 ms,
//! weight ≤ 150 KB.

use std::time::{Duration, Instant};

use mediaparse::store::Store;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

const LEDGER_ROWS: usize = 10_000;
const PAGES: &[&str] = &[
    "/console",
    "/console/keys",
    "/console/usage",
    "/console/playground",
    "/console/docs",
];

/// Fill a database: one account, three keys' worth of charges over 30 days.
fn seed(db: &std::path::Path) -> anyhow::Result<String> {
    let store = Store::open(db)?;
    let now = chrono_now();
    store.add_credits("bench", 1_000_000, now - 40 * 86_400)?;
    let platforms = ["tiktok", "youtube", "instagram", "twitter"];
    for i in 0..LEDGER_ROWS {
        let t = now - (i as i64 * 30 * 86_400 / LEDGER_ROWS as i64);
        // As the service charges: the ledger row and its daily aggregate
        // (`Store::charge` writes the ledger row only).
        store.charge_once(
            "bench",
            &format!("key_{}", i % 3),
            platforms[i % 4],
            1,
            &format!("req_{i}"),
            t,
        )?;
    }
    let invited = mediaparse::http::console::invitation(
        &store,
        "http://unused",
        "bench",
        "bench@example.com",
        now,
    )?;
    Ok(invited.link)
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn between(text: &str, start: &str, end: &str) -> Option<String> {
    let from = text.find(start)? + start.len();
    let to = text[from..].find(end)? + from;
    Some(text[from..to].to_string())
}

pub async fn measure(quick: bool) -> anyhow::Result<Value> {
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("console.db");
    let seeding = Instant::now();
    let link = tokio::task::spawn_blocking({
        let db = db.clone();
        move || seed(&db)
    })
    .await??;
    eprintln!(
        "  seeded {LEDGER_ROWS} ledger rows in {:.1} s",
        seeding.elapsed().as_secs_f64()
    );
    let service = Service::start(ServiceOptions {
        db: Some(db),
        ..Default::default()
    })
    .await?;
    let path = &link[link.find("/console/").unwrap_or(0)..];
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    // Open the link, set a password: the answer carries the session cookie.
    let page = client.get(service.url(path)).send().await?;
    let form_cookie = page
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok()?.split(';').next().map(String::from))
        .collect::<Vec<_>>()
        .join("; ");
    let html = page.text().await?;
    let csrf = between(&html, "name=\"csrf\" value=\"", "\"").unwrap_or_default();
    let signed = client
        .post(service.url(path))
        .header("cookie", &form_cookie)
        .form(&[("password", "bench password 123"), ("csrf", csrf.as_str())])
        .send()
        .await?;
    let session = signed
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok()?.split(';').next().map(String::from))
        .find(|c| c.starts_with("mp_session="))
        .ok_or_else(|| anyhow::anyhow!("no session cookie"))?;
    let assets: usize = {
        let mut n = 0;
        for a in ["/console/assets/console.css", "/console/assets/console.js"] {
            n += client
                .get(service.url(a))
                .send()
                .await?
                .bytes()
                .await?
                .len();
        }
        n
    };
    let runs = if quick { 30 } else { 200 };
    let mut rows = Vec::new();
    for page in PAGES {
        let mut times = Vec::with_capacity(runs);
        let mut bytes = 0;
        for _ in 0..runs + 5 {
            let started = Instant::now();
            let r = client
                .get(service.url(page))
                .header("cookie", &session)
                .send()
                .await?;
            anyhow::ensure!(r.status() == 200, "{page}: {}", r.status());
            bytes = r.bytes().await?.len();
            times.push(started.elapsed());
        }
        let mut times: Vec<Duration> = times.split_off(5);
        times.sort();
        let pct = |p: f64| times[((times.len() as f64 * p).ceil() as usize).saturating_sub(1)];
        rows.push(json!({
            "page": page,
            "p50_ms": pct(0.50).as_secs_f64() * 1000.0,
            "p95_ms": pct(0.95).as_secs_f64() * 1000.0,
            "html_bytes": bytes,
            "weight_bytes": bytes + assets,
        }));
    }
    println!("\n### Console pages ({LEDGER_ROWS} ledger rows, {runs} requests each, loopback)\n");
    println!("| page | p50 ms | p95 ms | HTML bytes | page weight (with CSS+JS) |");
    println!("|---|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {:.2} | {:.2} | {} | {} |",
            r["page"].as_str().unwrap_or(""),
            r["p50_ms"].as_f64().unwrap_or(0.0),
            r["p95_ms"].as_f64().unwrap_or(0.0),
            r["html_bytes"],
            r["weight_bytes"]
        );
    }
    Ok(json!({"ledger_rows": LEDGER_ROWS, "pages": rows}))
}
