//! Open sign-up verified by e-mail, against the real service and a real
//! mail command: a script that appends its argument and its standard input
//! to a file. No credits before the link is used, once after; one account
//! per address; the same answer for a new, a waiting and a registered
//! address; no start without a mail command.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use reqwest::StatusCode;
use serde_json::Value;

use super::support::{Browser, between};

/// A mail command writing each message to its own file (mail commands run
/// concurrently), and the configuration that uses it.
struct Mailbox {
    dir: tempfile::TempDir,
    folder: PathBuf,
}

impl Mailbox {
    fn new() -> Mailbox {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("mailbox");
        std::fs::create_dir(&folder).unwrap();
        let script = dir.path().join("mail.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh
f=$(mktemp '{0}/msg.XXXXXX')
{{ printf 'Recipient-Argument: %s\\n' \"$1\"; cat; }} > \"$f\"
mv \"$f\" \"$f.eml\"
",
                folder.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        Mailbox { dir, folder }
    }

    fn config(&self, extra: &str) -> PathBuf {
        let config = self.dir.path().join("mediaparse.toml");
        std::fs::write(&config, extra).unwrap();
        config
    }

    /// Where the service's log goes.
    fn log(&self) -> PathBuf {
        self.dir.path().join("service.log")
    }

    fn script(&self) -> PathBuf {
        self.dir.path().join("mail.sh")
    }

    /// The messages delivered so far, oldest first.
    fn messages(&self) -> Vec<String> {
        let mut found: Vec<(std::time::SystemTime, String)> = std::fs::read_dir(&self.folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "eml"))
            .map(|p| {
                let modified = std::fs::metadata(&p).unwrap().modified().unwrap();
                (modified, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        found.sort();
        found.into_iter().map(|(_, m)| m).collect()
    }

    /// The mailbox once it holds `n` messages (polled, 30 s deadline).
    async fn wait_for(&self, n: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.messages();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{} of {n} messages: {got:?}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn start(mailbox: &Mailbox) -> Service {
    let config = mailbox.config(&format!(
        "[console]\nsignup = \"open\"\nstarting_credits = 7\nmail_command = [\"{}\"]\n",
        mailbox.script().display()
    ));
    Service::start(ServiceOptions {
        config: Some(config),
        log_file: Some(mailbox.log()),
        extra_env: vec![("RUST_LOG".into(), "debug".into())],
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Post the sign-up form for `email`; the answer's status and page.
async fn sign_up(browser: &mut Browser, email: &str) -> (StatusCode, String) {
    let (status, page) = browser.get("/console/sign-up").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let csrf = between(&page, "name=\"csrf\" value=\"", "\"");
    browser
        .post_raw("/console/sign-up", &[("email", email), ("csrf", &csrf)])
        .await
}

/// The account `id` as `accounts list --json` shows it, if it exists.
fn account(service: &Service, id: &str) -> Option<Value> {
    let (code, out) = service.cli(&["accounts", "list", "--json"]).unwrap();
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let list = v.as_array().or_else(|| v["accounts"].as_array()).cloned();
    list.unwrap_or_default().into_iter().find(|a| a["id"] == id)
}

/// The users with `email`, from `users list --json`.
fn users_with(service: &Service, email: &str) -> Vec<Value> {
    let (code, out) = service.cli(&["users", "list", "--json"]).unwrap();
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let list = v.as_array().or_else(|| v["users"].as_array()).cloned();
    list.unwrap_or_default()
        .into_iter()
        .filter(|u| u["email"] == email)
        .collect()
}

fn link_in(message: &str, base: &str) -> String {
    let start = format!("{base}/console/invite/");
    let link = message
        .lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no link in {message}"));
    link.trim_start_matches(base).to_string()
}

fn balance_and_granted(service: &Service, id: &str) -> (i64, i64) {
    let a = account(service, id).unwrap_or_else(|| panic!("no account {id}"));
    (
        a["balance"].as_i64().unwrap(),
        a["granted"].as_i64().unwrap(),
    )
}

#[tokio::test]
async fn open_sign_up_grants_credits_once_after_the_mailed_link() {
    let mailbox = Mailbox::new();
    let service = start(&mailbox).await;
    let base = service.base_url.clone();
    let mut fay = Browser::new(&service);

    let first = sign_up(&mut fay, "Fay@Example.com").await;
    assert_eq!(first.0, StatusCode::OK, "{}", first.1);
    assert!(
        first.1.contains("a link to confirm it is on its way"),
        "{}",
        first.1
    );
    let mail = mailbox.wait_for(1).await;
    assert!(
        mail[0].starts_with("Recipient-Argument: fay@example.com\nTo: fay@example.com\n"),
        "{}",
        mail[0]
    );
    let early_link = link_in(&mail[0], &base);
    // Not verified: no credits, no password to sign in with.
    assert_eq!(balance_and_granted(&service, "fay@example.com"), (0, 0));
    assert_eq!(
        fay.sign_in("fay@example.com", "any long password").await.0,
        StatusCode::UNAUTHORIZED
    );

    // Again while waiting: the same answer, a fresh link, still one user.
    let again = sign_up(&mut fay, "fay@example.com").await;
    assert_eq!((again.0, &again.1), (first.0, &first.1));
    let mail = mailbox.wait_for(2).await;
    let link = link_in(&mail[1], &base);
    assert_ne!(link, early_link);
    assert_eq!(fay.get(&early_link).await.0, StatusCode::NOT_FOUND);
    assert_eq!(users_with(&service, "fay@example.com").len(), 1);
    assert_eq!(balance_and_granted(&service, "fay@example.com"), (0, 0));

    // The link verifies the address: the password is set, the credits granted.
    fay.set_password(&link, "fay's long password").await;
    assert!(fay.get("/console").await.1.contains("7 credits"));
    assert_eq!(balance_and_granted(&service, "fay@example.com"), (7, 7));
    assert_eq!(fay.get(&link).await.0, StatusCode::NOT_FOUND, "used up");

    // Registered now: the same answer, a reminder without a link, nothing granted.
    let taken = sign_up(&mut Browser::new(&service), "fay@example.com").await;
    assert_eq!((taken.0, &taken.1), (first.0, &first.1));
    let mail = mailbox.wait_for(3).await;
    assert!(mail[2].contains("has an account already"), "{}", mail[2]);
    assert!(!mail[2].contains("/console/invite/"), "{}", mail[2]);
    assert_eq!(users_with(&service, "fay@example.com").len(), 1);
    assert_eq!(balance_and_granted(&service, "fay@example.com"), (7, 7));
    let user = &users_with(&service, "fay@example.com")[0];
    assert_eq!(user["active"], true, "{user}");
    // The links' secrets never reach the log.
    let log = std::fs::read_to_string(mailbox.log()).unwrap();
    for secret in [&early_link, &link].map(|l| l.trim_start_matches("/console/invite/")) {
        assert!(!log.contains(secret), "{log}");
    }
    assert!(log.contains("console: sign-up link issued"), "{log}");
    assert!(log.contains("/console/invite/{redacted}"), "{log}");
}

#[tokio::test]
async fn sign_up_answers_a_registered_address_as_a_new_one() {
    let mailbox = Mailbox::new();
    let service = start(&mailbox).await;
    let base = service.base_url.clone();
    let (code, out) = service
        .cli(&[
            "users",
            "invite",
            "--account",
            "acme",
            "--email",
            "eve@example.com",
            "--base-url",
            &base,
            "--json",
        ])
        .unwrap();
    assert_eq!(code, 0, "{out}");
    let invited: Value = serde_json::from_str(&out).unwrap();
    let invite = invited["link"].as_str().unwrap().trim_start_matches(&base);
    Browser::new(&service)
        .set_password(invite, "eve's long password")
        .await;

    let new = sign_up(&mut Browser::new(&service), "gus@example.com").await;
    let taken = sign_up(&mut Browser::new(&service), "eve@example.com").await;
    // An account named like an address, without a user, is taken too.
    let (code, out) = service
        .cli(&["accounts", "create", "hal@example.com"])
        .unwrap();
    assert_eq!(code, 0, "{out}");
    let account_only = sign_up(&mut Browser::new(&service), "hal@example.com").await;
    assert_eq!(new.0, StatusCode::OK, "{}", new.1);
    assert_eq!((taken.0, &taken.1), (new.0, &new.1));
    assert_eq!((account_only.0, &account_only.1), (new.0, &new.1));

    let mail = mailbox.wait_for(3).await;
    let to = |who: &str| {
        mail.iter()
            .find(|m| m.starts_with(&format!("Recipient-Argument: {who}\n")))
            .unwrap_or_else(|| panic!("no mail to {who}: {mail:?}"))
            .clone()
    };
    assert!(to("gus@example.com").contains("/console/invite/"));
    for registered in ["eve@example.com", "hal@example.com"] {
        let m = to(registered);
        assert!(m.contains("has an account already"), "{m}");
        assert!(!m.contains("/console/invite/"), "{m}");
    }
    // Nothing changed for the registered addresses.
    assert_eq!(
        users_with(&service, "eve@example.com")[0]["accountId"],
        "acme"
    );
    assert!(users_with(&service, "hal@example.com").is_empty());
    assert_eq!(balance_and_granted(&service, "hal@example.com"), (0, 0));
}

/// Run `serve` with `config` until it exits or 20 s pass; its exit code
/// (None: it was serving, then killed) and standard error.
fn serve_with(config: &Path) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(paths::host_binary())
        .arg("--db")
        .arg(dir.path().join("db.sqlite"))
        .arg("serve")
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--extractors")
        .arg(paths::extractors_dir())
        .arg("--config")
        .arg(config)
        .env_remove("MEDIAPARSE_CONFIG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code(), err);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    (None, String::new())
}

#[test]
fn open_sign_up_without_a_mail_command_refuses_to_start() {
    let mailbox = Mailbox::new();
    let config = mailbox.config("[console]\nsignup = \"open\"\nstarting_credits = 7\n");
    let (code, err) = serve_with(&config);
    assert!(code.is_some_and(|c| c != 0), "it started: {code:?} {err}");
    assert!(
        err.contains("signup = \"open\" needs mail_command"),
        "{err}"
    );
}
