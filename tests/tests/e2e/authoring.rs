//! The author's tools end to end: `mediaparse record` through the upstream
//! override against the fake upstream, then `mediaparse replay` of what it
//! wrote, through the real wasm components; and the WIT-major refusal.

use std::path::{Path, PathBuf};

use mediaparse_sdk::fixture::{Case, DEFAULT_NOW_MS};
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use serde_json::Value;

/// Run the host binary; (exit code, stdout + stderr).
async fn mediaparse(args: &[&str]) -> (i32, String) {
    let out = tokio::process::Command::new(paths::host_binary())
        .args(args)
        .env("MEDIAPARSE_EXTRACTORS", paths::extractors_dir())
        .env_remove("MEDIAPARSE_UPSTREAM")
        .env_remove("MEDIAPARSE_CONFIG")
        .output()
        .await
        .expect("mediaparse runs");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn fixture(platform: &str, case: &str) -> Case {
    let dir = paths::workspace_root()
        .join("extractors")
        .join(platform)
        .join("fixtures")
        .join(case);
    Case::load(&dir).unwrap_or_else(|e| panic!("{e}"))
}

/// Recorded into a platform's fixtures folder (`out`'s parent), a case is
/// checked against its payload with the platform's declared rewrites, as
/// in the source tree.
fn with_rewrites_of(platform: &str, out: &Path) {
    let rewrites = paths::workspace_root()
        .join("extractors")
        .join(platform)
        .join("fixtures/rewrites.json");
    let fixtures = out.parent().unwrap();
    std::fs::create_dir_all(fixtures).unwrap();
    if rewrites.is_file() {
        std::fs::copy(&rewrites, fixtures.join("rewrites.json")).unwrap();
    }
}

/// Whether the case recorded in `dir` expects media.
fn recorded_media(dir: &Path) -> bool {
    Case::load(dir).is_ok_and(|c| c.expect.media.is_some())
}

/// Every file of a folder, as text.
fn all_text(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        text.push_str(&String::from_utf8_lossy(&bytes));
    }
    text
}

/// Values that must never reach a recorded case: operator cookies, cookies
/// the platform set, tokens.
fn secrets_of(case: &Case) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for h in &case.config {
        for pair in h.value.split(';') {
            if let Some((_, v)) = pair.split_once('=') {
                out.push(v.trim().to_string());
            }
        }
    }
    for ex in &case.exchanges {
        for h in &ex.response.headers {
            if h.name.eq_ignore_ascii_case("set-cookie")
                && let Some((_, v)) = h.value.split(';').next().unwrap_or("").split_once('=')
            {
                out.push(v.trim().to_string());
            }
        }
    }
    out.retain(|s| s.len() >= 6);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_cases_scrub_secrets_and_replay_to_the_same_result() {
    // An operator cookie; Set-Cookie and followed redirects; a challenge
    // answered differently on the second, cookie-carrying request.
    let picks = [
        ("weibo", "pc_pictures_livephoto_cookie"),
        ("instagram", "share_two_hops"),
        ("tiktok", "challenge_then_page"),
        ("bilibili", "video_deleted"),
    ];
    let work = tempfile::tempdir().unwrap();
    for (platform, name) in picks {
        let original = fixture(platform, name);
        let upstream = FakeUpstream::start(std::slice::from_ref(&original))
            .await
            .unwrap();
        // Under `extractors/<platform>/fixtures/`: only that component is compiled.
        let out = work
            .path()
            .join("extractors")
            .join(platform)
            .join("fixtures")
            .join(name);
        let mut args: Vec<String> = vec![
            "record".into(),
            original.input.clone(),
            "--out".into(),
            out.display().to_string(),
            "--upstream".into(),
            upstream.base_url(),
            "--now-ms".into(),
            original.now_unix_ms.unwrap_or(DEFAULT_NOW_MS).to_string(),
        ];
        if !original.config.is_empty() {
            let mut toml = format!("[platforms.{platform}.config]\n");
            for h in &original.config {
                toml.push_str(&format!(
                    "{} = {}\n",
                    Value::String(h.name.clone()),
                    Value::String(h.value.clone())
                ));
            }
            let file = work.path().join(format!("{platform}.toml"));
            std::fs::write(&file, toml).unwrap();
            args.extend(["--config".into(), file.display().to_string()]);
        }
        with_rewrites_of(platform, &out);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, output) = mediaparse(&argv).await;
        assert_eq!(code, 0, "{platform}/{name}: record failed:\n{output}");
        if recorded_media(&out) {
            // Beside the result, the facts read from the exchange: every
            // expected media URL and where it was found.
            let facts: Value =
                serde_json::from_str(&std::fs::read_to_string(out.join("facts.json")).unwrap())
                    .unwrap();
            let urls = facts["urls"].as_array().unwrap();
            assert!(!urls.is_empty(), "{platform}/{name}: {facts}");
            assert!(
                urls.iter().all(|u| u["found"]["body"].is_string()),
                "{platform}/{name}: {facts}"
            );
        }
        assert!(upstream.misses().is_empty(), "{:?}", upstream.misses());

        let recorded = Case::load(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            recorded.exchanges.len(),
            upstream.hits().len(),
            "{platform}/{name}: one exchange per hop"
        );
        assert_eq!(recorded.expect.error, original.expect.error, "{name}");
        if let (Some(want), Some(got)) = (&original.expect.media, &recorded.expect.media) {
            // The expectation is the live result; scrubbing may only have
            // replaced secret values inside it.
            let diffs = mediaparse_sdk::replay::json_diff("", want, got);
            assert!(
                diffs.iter().all(|d| d.contains("scrubbed")),
                "{platform}/{name}: {diffs:#?}"
            );
        }
        let text = all_text(&out);
        for secret in secrets_of(&original) {
            assert!(
                !text.contains(&secret),
                "{platform}/{name}: secret {secret:?} was recorded"
            );
        }

        let (code, output) = mediaparse(&["replay", &out.display().to_string()]).await;
        assert_eq!(code, 0, "{platform}/{name}: replay:\n{output}");
        assert!(output.starts_with("PASS"), "{output}");
    }
}

/// The PO-token case with its WEB answer's `signatureCipher` formats left
/// out (the scrubber takes a value under a key named like a signature for a
/// secret, so a recorded cipher could not be solved on replay).
fn po_token_case_without_ciphers() -> Case {
    let mut case = fixture("youtube", "po_token_provider_web");
    for ex in &mut case.exchanges {
        let Some(file) = ex.response.body_file.take() else {
            continue;
        };
        let path = case.dir.join(&file);
        if !file.ends_with("web_player.json") {
            ex.response.body_file = Some(path.display().to_string());
            continue;
        }
        let mut body: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for member in ["formats", "adaptiveFormats"] {
            if let Some(list) = body["streamingData"][member].as_array_mut() {
                list.retain(|f| f.get("signatureCipher").is_none());
            }
        }
        ex.response.body = Some(body.to_string());
    }
    case
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_case_carries_the_helper_hosts_and_public_settings_it_used() {
    let original = po_token_case_without_ciphers();
    assert_eq!(original.helper_hosts, ["pot.internal"]);
    let upstream = FakeUpstream::start(std::slice::from_ref(&original))
        .await
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = work
        .path()
        .join("extractors/youtube/fixtures/po_token_recorded");
    // The operator allows the provider's host and declares the settings
    // (client list, provider address) not secret.
    let mut toml = String::from(
        "[platforms.youtube]\nhelper_hosts = [\"pot.internal\"]\n\
         public_config = [\"clients\", \"web_po_token\", \"po_token_provider\"]\n\
         [platforms.youtube.config]\n",
    );
    for h in &original.config {
        toml.push_str(&format!(
            "{} = {}\n",
            h.name,
            Value::String(h.value.clone())
        ));
    }
    let file = work.path().join("youtube.toml");
    std::fs::write(&file, toml).unwrap();
    with_rewrites_of("youtube", &out);
    let (code, output) = mediaparse(&[
        "record",
        &original.input,
        "--out",
        &out.display().to_string(),
        "--upstream",
        &upstream.base_url(),
        "--now-ms",
        &DEFAULT_NOW_MS.to_string(),
        "--config",
        &file.display().to_string(),
    ])
    .await;
    assert_eq!(code, 0, "record failed:\n{output}");
    assert!(upstream.misses().is_empty(), "{:?}", upstream.misses());
    let recorded = Case::load(&out).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(recorded.helper_hosts, ["pot.internal"]);
    assert!(
        recorded
            .exchanges
            .iter()
            .any(|e| e.request.url == "https://pot.internal:4416/get_pot"),
        "the provider's exchange is recorded under its own address"
    );
    let sorted = |c: &Case| {
        let mut v: Vec<(String, String)> = c
            .config
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        sorted(&recorded),
        sorted(&original),
        "public settings are kept as they are"
    );
    let (code, output) = mediaparse(&["replay", &out.display().to_string()]).await;
    assert_eq!(code, 0, "replay:\n{output}");
}

#[tokio::test]
async fn replay_prints_the_difference_and_fails() {
    let work = tempfile::tempdir().unwrap();
    let case = fixture("weibo", "short_link_tcn_share_text");
    let copy = work.path().join("case");
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(&case.dir).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    let path = copy.join("case.json");
    let mut json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json["expect"]["media"]["title"] = "a title the component does not produce".into();
    std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();

    let (code, output) = mediaparse(&["replay", &copy.display().to_string()]).await;
    assert_eq!(code, 1, "{output}");
    assert!(output.starts_with("FAIL"), "{output}");
    assert!(
        output.contains("media/title: expected \"a title the component does not produce\""),
        "{output}"
    );
    // The facts read from the payload are printed, not the actual result
    // to paste over the expectation.
    assert!(output.contains("payload facts:"), "{output}");
    assert!(!output.contains("actual result"), "{output}");
}

/// The component's result equals the expectation, but the expected URL is
/// not in the payload as recorded: `replay` fails until the platform's
/// rewrite (`playwm → play`) is declared beside the case.
#[tokio::test]
async fn replay_fails_when_the_payload_does_not_hold_an_expected_url() {
    let work = tempfile::tempdir().unwrap();
    let case = fixture("douyin", "direct_playwm_url");
    let copy = work.path().join("fixtures").join("direct_playwm_url");
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(&case.dir).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    let (code, output) = mediaparse(&["replay", &copy.display().to_string()]).await;
    assert_eq!(code, 1, "{output}");
    assert!(output.starts_with("FAIL"), "{output}");
    assert!(output.contains("occurs in no recorded body"), "{output}");
    assert!(output.contains("videos/0: NOT FOUND"), "{output}");
    assert!(
        !output.contains("media/"),
        "the result itself matches: {output}"
    );

    with_rewrites_of("douyin", &copy);
    let (code, output) = mediaparse(&["replay", &copy.display().to_string()]).await;
    assert_eq!(code, 0, "{output}");
    assert!(
        output.contains("[playwm→play]") || output.contains("[no watermark parameters]"),
        "{output}"
    );
}

/// A real component that names another WIT major: the weibo component with
/// its interface names rewritten from `@1.1.0` to `@2.0.0` (same length, so
/// the binary stays well-formed).
fn component_of_wit_major_2(dir: &Path) -> PathBuf {
    let bytes = std::fs::read(paths::extractors_dir().join("weibo.wasm")).unwrap();
    let from = b"mediaparse:extractor/types@1.1.0";
    let to = b"mediaparse:extractor/types@2.0.0";
    let mut patched = bytes.clone();
    let mut n = 0;
    let mut i = 0;
    while i + from.len() <= patched.len() {
        if &patched[i..i + from.len()] == from {
            patched[i..i + from.len()].copy_from_slice(to);
            n += 1;
            i += from.len();
        } else {
            i += 1;
        }
    }
    assert!(n > 0, "the component names its WIT interface");
    let path = dir.join("weibo.wasm");
    std::fs::write(&path, patched).unwrap();
    path
}

#[tokio::test]
async fn a_component_of_another_wit_major_is_refused_by_name() {
    let work = tempfile::tempdir().unwrap();
    let v2 = component_of_wit_major_2(work.path());
    let case = fixture("weibo", "short_link_tcn_share_text");
    let (code, output) = mediaparse(&[
        "replay",
        &case.dir.display().to_string(),
        "--component",
        &v2.display().to_string(),
    ])
    .await;
    assert_eq!(code, 1, "{output}");
    assert!(
        output.contains("incompatible WIT version")
            && output.contains("mediaparse:extractor@2.0.0")
            && output.contains(&format!(
                "this host implements mediaparse:extractor@{}",
                mediaparse_sdk::WIT_VERSION
            )),
        "{output}"
    );
    // The service refuses it too, and reports why.
    let out = std::process::Command::new(paths::host_binary())
        .args([
            "detect",
            "https://weibo.com/7827771738/N4xlMvjhI",
            "--extractors",
        ])
        .arg(work.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("incompatible WIT version"), "{stderr}");
}
