//! The console in a real browser: headless Chromium driven over WebDriver
//! (Debian's `chromium` and `chromium-driver`; `cargo xtask test` installs
//! them where missing). The flow — a customer signs in, creates a
//! key limited to two platforms, copies the token, parses a fixture link in
//! the playground, sees the credit go, edits the key (token unchanged),
//! resets it (old token refused by the API), downloads the usage CSV; the
//! operator invites a user and grants credits. Every page is written as a
//! screenshot to `target/screenshots/`. Under `CI=true` a missing browser
//! is an error, never a skip.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mediaparse_tests::paths;
use serde_json::json;

use super::support::invite;
use super::webdriver::Session;
use crate::accounts::support::{self, ADMIN};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// A chromedriver process on a free loopback port, killed on drop.
struct Driver {
    child: tokio::process::Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// The driver, or `None` when the browser is not installed outside CI (the
/// skip is recorded; under `CI=true` it fails).
async fn driver() -> Option<Driver> {
    if !Path::new(CHROMEDRIVER).is_file() || !Path::new(CHROMIUM).is_file() {
        mediaparse_tests::skip::missing(
            "console::browser::customer_and_operator_flows_in_headless_chromium",
            &format!("{CHROMIUM} and {CHROMEDRIVER} (Debian: chromium, chromium-driver)"),
        );
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = tokio::process::Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("chromedriver starts");
    let url = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        if reqwest::get(format!("{url}/status")).await.is_ok() {
            return Some(Driver { child, url });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not answer on {url}");
}

async fn browser(driver: &Driver) -> Session {
    Session::start(
        &driver.url,
        json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1200,1000", "--no-first-run", "--disable-extensions"],
            },
        }),
    )
    .await
}

fn screenshots_dir() -> PathBuf {
    let dir = paths::workspace_root().join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn shot(c: &Session, name: &str) {
    let png = c.screenshot_png().await;
    std::fs::write(screenshots_dir().join(format!("{name}.png")), png).unwrap();
    eprintln!("console browser: {name} ({})", c.path().await);
}

async fn fill(c: &Session, css: &str, text: &str) {
    c.fill(css, text).await;
}

async fn click(c: &Session, css: &str) {
    c.click(css).await;
}

async fn text(c: &Session, css: &str) -> String {
    c.text(css).await
}

/// Wait for a form's navigation to land on `path` (a click may return before it).
async fn wait_path(c: &Session, path: &str) {
    for _ in 0..50 {
        if c.path().await == path {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("never reached {path}; at {}", c.path().await);
}

async fn body(c: &Session) -> String {
    c.text("body").await
}

/// Wait (up to 5 s) for the page to show `needle`: a submitted form's next
/// page may still be loading when the click returns.
async fn shows(c: &Session, needle: &str) {
    let mut page = String::new();
    for _ in 0..50 {
        page = body(c).await;
        if page.contains(needle) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the page never showed {needle:?}: {page}");
}

#[tokio::test]
async fn customer_and_operator_flows_in_headless_chromium() {
    let Some(driver) = driver().await else { return };
    let env = support::start(&[]).await;
    let service = &env.service;
    let base = service.base_url.clone();
    let link = invite(service, "acme", "ann@example.com").await;
    service.add_credits("acme", 10).unwrap();
    let c = browser(&driver).await;

    // Sign in: the one-time link sets the password and opens a session.
    c.goto(&link).await;
    shot(&c, "set-password").await;
    fill(&c, "#password", "a long enough password").await;
    click(&c, "form button[type=submit]").await;
    shows(&c, "10 credits").await;
    // And signing in again by the form works too.
    click(&c, "form[action='/console/sign-out'] button").await;
    wait_path(&c, "/console/sign-in").await;
    c.goto(&format!("{base}/console/sign-in")).await;
    shot(&c, "sign-in").await;
    fill(&c, "#email", "ann@example.com").await;
    fill(&c, "#password", "a long enough password").await;
    click(&c, "form[action='/console/sign-in'] button").await;
    wait_path(&c, "/console").await;

    // A key limited to two platforms; copy its token.
    c.goto(&format!("{base}/console/keys")).await;
    fill(&c, "#name", "browser app").await;
    click(&c, "input[name=scope][value=chosen]").await;
    click(&c, "input[name=platform][value=tiktok]").await;
    click(&c, "input[name=platform][value=youtube]").await;
    click(&c, "form[action='/console/keys'] button[type=submit]").await;
    let token = text(&c, "#new-token").await;
    assert!(token.starts_with("mp_live_"), "{token}");
    click(&c, "button[data-copy=new-token]").await;
    // The clipboard answers asynchronously ("Copied", or the fallback advice).
    let mut copy_label = String::new();
    for _ in 0..30 {
        copy_label = text(&c, "button[data-copy=new-token]").await;
        if copy_label != "Copy token" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_ne!(copy_label, "Copy token", "the copy button reacted");
    shows(&c, "tiktok, youtube").await;
    shot(&c, "keys").await;

    // The playground parses a fixture link (fake upstream), charged.
    let url = &support::tiktok_urls()[1];
    c.goto(&format!("{base}/console/playground")).await;
    fill(&c, "#link", url).await;
    click(&c, "form[action='/console/playground'] button[type=submit]").await;
    shows(&c, "1 credit charged").await;
    shot(&c, "playground").await;

    // The credit is gone from the overview.
    c.goto(&format!("{base}/console")).await;
    shows(&c, "9 credits").await;
    shot(&c, "overview").await;

    // Edit: the token stays.
    c.goto(&format!("{base}/console/keys")).await;
    click(&c, "a[aria-label='Edit key browser app']").await;
    fill(&c, "#name", "browser app 2").await;
    click(&c, "form[action^='/console/keys/'] button[type=submit]").await;
    shows(&c, "The token is unchanged").await;
    shot(&c, "key-edit").await;
    assert_eq!(support::parse(service, Some(&token), url).await.status, 200);

    // Reset: confirm, new token shown; the old one is refused by the API.
    click(&c, "form[action$='/reset'] input[name=confirm]").await;
    click(&c, "form[action$='/reset'] button").await;
    let new_token = text(&c, "#new-token").await;
    assert_ne!(new_token, token);
    support::parse(service, Some(&token), url)
        .await
        .assert_error(401, "invalid_token");

    // Usage and its CSV, downloaded with the browser's session.
    c.goto(&format!("{base}/console/usage")).await;
    shows(&c, "2 charged parses").await;
    shot(&c, "usage").await;
    let csv = c
        .execute("return fetch('/console/usage.csv').then(r => r.text());")
        .await;
    let csv = csv.as_str().unwrap_or_default();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.starts_with("time,platform,key,credits,request_id\n"));

    c.goto(&format!("{base}/console/docs")).await;
    shows(&c, "/api/v1/parse").await;
    shot(&c, "docs").await;
    click(&c, "form[action='/console/sign-out'] button").await;
    wait_path(&c, "/console/sign-in").await;

    // The operator: invite a user, grant credits.
    c.goto(&format!("{base}/console/admin/sign-in")).await;
    fill(&c, "#token", ADMIN).await;
    click(&c, "form button[type=submit]").await;
    shows(&c, "acme").await;
    fill(&c, "#inv-account", "beta").await;
    fill(&c, "#inv-email", "dee@example.com").await;
    click(&c, "form[action='/console/admin/invite'] button").await;
    let invite_link = text(&c, "#invite-link").await;
    assert!(invite_link.contains("/console/invite/"), "{invite_link}");
    shot(&c, "admin-accounts").await;
    c.goto(&format!("{base}/console/admin/accounts/beta")).await;
    fill(&c, "#amount", "25").await;
    fill(&c, "#reason", "trial").await;
    click(&c, "form[action$='/credits'] button").await;
    shows(&c, "25 credits").await;
    shot(&c, "admin-account").await;
    c.goto(&format!("{base}/console/admin/extractors")).await;
    shows(&c, "tiktok").await;
    shot(&c, "admin-extractors").await;
    c.goto(&format!("{base}/console/admin/failures")).await;
    shot(&c, "admin-failures").await;

    // 360 px wide: the overview still reads (no horizontal page scroll).
    c.window_size(360, 800).await;
    c.goto(&format!("{base}/console/admin")).await;
    let fits = c
        .execute("return document.documentElement.scrollWidth <= window.innerWidth + 1;")
        .await;
    assert_eq!(fits, json!(true), "page wider than 360 px");
    shot(&c, "admin-360px").await;
    c.close().await;
}
