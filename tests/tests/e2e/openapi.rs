//! The OpenAPI document as served, the offline docs page, and schemathesis
//! (PyPI) running every check against the demo-mode service.

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::service::{Service, ServiceOptions};
use mediaparse_tests::{paths, python};
use serde_json::Value;

async fn plain_service() -> (FakeUpstream, Service) {
    let upstream = FakeUpstream::with_routes(vec![]).await.unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        ..Default::default()
    })
    .await
    .unwrap();
    (upstream, service)
}

#[tokio::test]
async fn served_documents_are_the_committed_ones() {
    let (_upstream, service) = plain_service().await;
    for (path, file) in [
        ("/openapi.json", "docs/openapi.json"),
        ("/openapi/admin.json", "docs/openapi-admin.json"),
    ] {
        let resp = reqwest::get(service.url(path)).await.unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{path}");
        let served: Value = resp.json().await.unwrap();
        let committed: Value = serde_json::from_str(
            &std::fs::read_to_string(paths::workspace_root().join(file)).unwrap(),
        )
        .unwrap();
        assert_eq!(served, committed, "{path} serves {file}");
        assert_eq!(served["openapi"], "3.1.0");
        assert_eq!(served["info"]["version"], "1.0.0");
    }
}

#[tokio::test]
async fn docs_page_needs_no_internet() {
    let (_upstream, service) = plain_service().await;
    let client = reqwest::Client::new();
    let page = client.get(service.url("/docs/")).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("swagger-ui"), "{html}");
    // Every script and stylesheet the page loads is served by the binary itself.
    let mut assets = Vec::new();
    for attr in ["src=\"", "href=\""] {
        for piece in html.split(attr).skip(1) {
            let target = piece.split('"').next().unwrap_or_default();
            assert!(
                !target.starts_with("http:")
                    && !target.starts_with("https:")
                    && !target.starts_with("//"),
                "the docs page loads {target} from the network"
            );
            assets.push(target.trim_start_matches("./").to_string());
        }
    }
    assert!(assets.iter().any(|a| a.ends_with(".js")), "{assets:?}");
    for asset in &assets {
        let resp = client
            .get(service.url(&format!("/docs/{asset}")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "/docs/{asset}");
        let body = resp.text().await.unwrap();
        assert!(!body.is_empty(), "/docs/{asset} is empty");
        if asset.contains("initializer") {
            assert!(body.contains("/openapi.json"), "{body}");
            assert!(!body.contains("petstore"), "{body}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_nothing_against_the_demo_service() {
    let Some(python) =
        python::venv_python("openapi::schemathesis_finds_nothing_against_the_demo_service")
    else {
        return;
    };
    let mut cases = Vec::new();
    for (_, dir) in paths::fixture_dirs() {
        cases.extend(Case::load_all(&dir).unwrap());
    }
    let upstream = FakeUpstream::start(&cases).await.unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 1_000_000).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let report = tempfile::tempdir().unwrap();
    let py_dir = paths::workspace_root().join("tests/py");
    let schemathesis = python.with_file_name("schemathesis");
    let mut command = tokio::process::Command::new(schemathesis);
    command
        .arg("--config-file")
        .arg(py_dir.join("schemathesis.toml"))
        .arg("run")
        .arg(service.url("/openapi.json"))
        .args(["--checks", "all"])
        // The demo's fake upstream serves no media bytes, so every tunnel URL
        // answers 502 there; the tunnel has its own end-to-end tests (tunnel.rs).
        .args(["--exclude-path", "/api/v1/tunnel/{token}"])
        .args(["--max-examples", "300"])
        .args(["--seed", "20261122"])
        // One worker: with two, hypothesis parses lambda sources from two threads at
        // once and CPython 3.11's `ast` fails ("AST constructor recursion depth
        // mismatch") on query-parameter mutations.
        .args(["--workers", "1"])
        .args(["--request-timeout", "30"])
        .args(["--generation-database", "none"])
        .args(["--no-color"])
        .arg("--header")
        .arg(format!("Authorization: Bearer {token}"))
        .arg("--report")
        .arg("junit")
        .arg("--report-dir")
        .arg(report.path())
        .env("PYTHONPATH", &py_dir)
        .env("SCHEMATHESIS_HOOKS", "schemathesis_hooks")
        // Its `.schemathesis/` cache goes to the temporary directory, not the tree.
        .current_dir(report.path())
        .kill_on_drop(true);
    // Bounded: the run ends after --max-examples per operation; a hang is killed.
    let run = tokio::time::timeout(std::time::Duration::from_secs(900), command.output())
        .await
        .expect("schemathesis finished within 15 minutes")
        .expect("schemathesis runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let summary: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.contains("SUMMARY"))
        .collect();
    eprintln!(
        "schemathesis (exit {:?}):\n{}",
        run.status.code(),
        summary.join("\n")
    );
    assert!(
        run.status.success(),
        "schemathesis found problems:\n{stdout}\n{stderr}"
    );
    let summary = summary.join("\n");
    for section in ["Failures:", "Errors:"] {
        assert!(
            !summary.contains(section),
            "schemathesis reported {section}\n{stdout}"
        );
    }
    // Every selected operation was tested (the count follows the document).
    let selected = summary
        .lines()
        .find_map(|l| l.trim().strip_prefix("Selected: "))
        .and_then(|s| s.split('/').next())
        .map(str::trim)
        .unwrap_or("none");
    assert!(
        summary.contains(&format!("Tested: {selected}")),
        "every operation was tested:\n{summary}"
    );
}

/// Every answer of the console's users API (`/api/v1/admin/users`) is one
/// `docs/openapi-admin.json` documents: its status listed for the
/// operation, its body valid under that response's schema.
#[tokio::test]
async fn admin_users_answers_are_the_admin_documents() {
    const OPERATOR: &str = "operator-token-for-the-admin-document";
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(paths::workspace_root().join("docs/openapi-admin.json")).unwrap(),
    )
    .unwrap();
    let check = |method: &str, status: u16, body: &Value| {
        let responses = &doc["paths"]["/api/v1/admin/users"][method]["responses"];
        let documented = &responses[status.to_string()];
        assert!(
            documented.is_object(),
            "{method} {status} is not documented: {responses}"
        );
        let mut root = documented["content"]["application/json"]["schema"]
            .as_object()
            .cloned()
            .unwrap();
        root.insert("components".into(), doc["components"].clone());
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&Value::Object(root))
            .unwrap();
        let errors: Vec<String> = validator.iter_errors(body).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{method} {status} {body}: {errors:?}");
    };
    let (_upstream, off) = plain_service().await;
    let upstream = FakeUpstream::with_routes(vec![]).await.unwrap();
    let on = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        admin_token: Some(OPERATOR.into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let client = reqwest::Client::new();
    let mut seen = Vec::new();
    /// Service, method, path, bearer token, JSON body, expected status.
    type Call<'a> = (
        &'a Service,
        &'a str,
        &'a str,
        Option<&'a str>,
        Option<Value>,
        u16,
    );
    let calls: Vec<Call> = vec![
        (
            &on,
            "post",
            "/api/v1/admin/users",
            Some(OPERATOR),
            Some(serde_json::json!({"account": "acme", "email": "ann@example.com"})),
            201,
        ),
        (
            &on,
            "post",
            "/api/v1/admin/users",
            Some(OPERATOR),
            Some(serde_json::json!({"account": "acme", "email": "not an address"})),
            400,
        ),
        (
            &on,
            "post",
            "/api/v1/admin/users",
            Some(OPERATOR),
            Some(serde_json::json!({"account": "acme"})),
            400,
        ),
        (
            &on,
            "post",
            "/api/v1/admin/users",
            Some("wrong"),
            Some(serde_json::json!({"account": "acme", "email": "bob@example.com"})),
            401,
        ),
        (&on, "get", "/api/v1/admin/users", Some(OPERATOR), None, 200),
        (
            &on,
            "get",
            "/api/v1/admin/users?account=acme",
            Some(OPERATOR),
            None,
            200,
        ),
        (
            &on,
            "get",
            "/api/v1/admin/users?bogus=1",
            Some(OPERATOR),
            None,
            400,
        ),
        (&on, "get", "/api/v1/admin/users", None, None, 401),
        (
            &off,
            "get",
            "/api/v1/admin/users",
            Some(OPERATOR),
            None,
            404,
        ),
    ];
    for (service, method, path, token, body, expected) in calls {
        let mut request = match method {
            "post" => client.post(service.url(path)),
            _ => client.get(service.url(path)),
        };
        if let Some(t) = token {
            request = request.bearer_auth(t);
        }
        if let Some(b) = &body {
            request = request.json(b);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let answer: Value = response.json().await.unwrap();
        assert_eq!(status, expected, "{method} {path}: {answer}");
        check(method, status, &answer);
        if status == 200 && path.ends_with("=acme") {
            assert_eq!(answer["data"][0]["email"], "ann@example.com");
        }
        seen.push((method, status));
    }
    assert_eq!(seen.len(), 9);
}
