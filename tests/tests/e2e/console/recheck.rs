//! The operator's "re-check" on the extractors page: a POST (CSRF-checked)
//! that re-scans the extractors folder through the registry's own reload
//! and reports, per platform file, what it did.
//!
//! The service's file watcher sees the same changes; each step below is
//! chosen so the report does not depend on who gets there first (a broken
//! file is refused by either; a removed file is gone for either), except
//! the changed manifest, where "loaded" (re-check first) and "unchanged"
//! (watcher first) are both right and the new fact must be in force.

use mediaparse_tests::guest;
use reqwest::StatusCode;

use super::support::{Browser, between};
use crate::operations::{ADMIN, Running, extractors, start, upstream};

/// The report row of `platform` after a re-check.
fn row(page: &str, platform: &str) -> String {
    let table = between(page, "id=\"recheck\"", "</table>");
    between(&table, &format!("<td>{platform}</td><td>"), "</td>")
}

async fn operator(run: &Running) -> Browser {
    let mut op = Browser::new(&run.service);
    let page = op.get("/console/admin/sign-in").await.1;
    let csrf = between(&page, "name=\"csrf\" value=\"", "\"");
    let signed = op
        .post_raw(
            "/console/admin/sign-in",
            &[("token", ADMIN), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(signed.0, StatusCode::SEE_OTHER, "{}", signed.1);
    op
}

#[tokio::test]
async fn recheck_reports_refused_changed_and_removed_platform_files() {
    let up = upstream().await;
    let dir = extractors(&[("tiktok", "1.0.0"), ("youtube", "1.0.0")]);
    let run = start(dir.path(), &up.base_url(), None, None).await;
    let mut op = operator(&run).await;

    let page = op.get("/console/admin/extractors").await;
    assert_eq!(page.0, StatusCode::OK);
    assert!(
        page.1
            .contains("action=\"/console/admin/extractors/recheck\"")
    );
    // Without the session's CSRF token: refused, nothing scanned.
    let forged = op
        .post_raw("/console/admin/extractors/recheck", &[("csrf", "forged")])
        .await;
    assert_eq!(forged.0, StatusCode::FORBIDDEN);
    // A customer's browser (no operator session) is sent to sign in.
    let stranger = Browser::new(&run.service)
        .post_raw("/console/admin/extractors/recheck", &[])
        .await;
    assert_eq!(stranger.0, StatusCode::SEE_OTHER);

    // Nothing changed: every file unchanged.
    let quiet = op.post("/console/admin/extractors/recheck", &[]).await;
    assert_eq!(quiet.0, StatusCode::OK, "{}", quiet.1);
    assert_eq!(row(&quiet.1, "tiktok"), "unchanged");
    assert_eq!(row(&quiet.1, "youtube"), "unchanged");
    assert!(quiet.1.contains("Re-checked 2 platform files."));

    // A broken component: refused with its reason; 1.0.0 keeps serving.
    let broken = guest::truncated(&guest::component("tiktok", "9.9.9"));
    guest::install(dir.path(), "tiktok", &broken);
    let refused = op.post("/console/admin/extractors/recheck", &[]).await;
    let tiktok = row(&refused.1, "tiktok");
    assert!(
        tiktok.contains("error: ") && tiktok.contains("compiling component"),
        "{tiktok}"
    );
    assert_eq!(row(&refused.1, "youtube"), "unchanged");
    assert!(refused.1.contains("1 refused"), "{}", refused.1);
    assert_eq!(run.admin_entry("tiktok").await["version"], "1.0.0");

    // A changed manifest (the platform's display name): in force after the re-check.
    let toml = dir.path().join("youtube.toml");
    let renamed: String = std::fs::read_to_string(&toml)
        .expect("youtube.toml")
        .lines()
        .map(|l| {
            if l.starts_with("name = ") {
                "name = \"YouTube (renamed)\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let tmp = dir.path().join(".youtube.toml.tmp");
    std::fs::write(&tmp, renamed + "\n").expect("write");
    std::fs::rename(&tmp, &toml).expect("rename");
    let changed = op.post("/console/admin/extractors/recheck", &[]).await;
    let youtube = row(&changed.1, "youtube");
    assert!(
        youtube == "loaded (version 1.0.0)" || youtube == "unchanged",
        "{youtube}"
    );
    assert_eq!(
        run.admin_entry("youtube").await["name"],
        "YouTube (renamed)"
    );

    // A removed component: reported, and the platform is no longer served.
    std::fs::remove_file(dir.path().join("tiktok.wasm")).expect("remove");
    let removed = op.post("/console/admin/extractors/recheck", &[]).await;
    assert_eq!(row(&removed.1, "tiktok"), "not served (no component file)");
    assert_eq!(run.admin_entry("tiktok").await["status"], "missing");
}
