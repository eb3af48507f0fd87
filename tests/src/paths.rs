//! Where the built artifacts are: `cargo xtask test` builds them and sets
//! the variables; the defaults are the workspace's own `target/` folders.

use std::path::PathBuf;

pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The cargo target folder (`CARGO_TARGET_DIR`, default `target/`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// The `mediaparse` binary (`MEDIAPARSE_BIN`, default `target/debug/mediaparse`).
pub fn host_binary() -> PathBuf {
    let path = std::env::var_os("MEDIAPARSE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/debug/mediaparse"));
    assert!(
        path.is_file(),
        "{} is missing: run the tests with `cargo xtask test`, which builds it",
        path.display()
    );
    path
}

/// The compiled-component cache a service keeps for the built components by
/// default (`.cwasm-cache` inside their folder). Tests that load the
/// components in their own process share it, so a test run compiles each
/// component once per engine configuration rather than once per test.
pub fn compiled_cache_dir() -> PathBuf {
    extractors_dir().join(".cwasm-cache")
}

/// The built components (`MEDIAPARSE_EXTRACTORS`, default `target/extractors`).
pub fn extractors_dir() -> PathBuf {
    let dir = std::env::var_os("MEDIAPARSE_EXTRACTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/extractors"));
    assert!(
        dir.is_dir(),
        "{} is missing: run the tests with `cargo xtask test`, which builds the extractors",
        dir.display()
    );
    dir
}

/// Test-only components (`MEDIAPARSE_TEST_GUESTS`, default `target/test-guests`).
pub fn test_guest(name: &str) -> PathBuf {
    let path = std::env::var_os("MEDIAPARSE_TEST_GUESTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/test-guests"))
        .join(format!("{name}.wasm"));
    assert!(
        path.is_file(),
        "{} is missing: run the tests with `cargo xtask test`, which builds the test guests",
        path.display()
    );
    path
}

/// The template's example extractor as `cargo xtask test` builds it
/// (`check_template`, platform `templatecheck`): its component and its
/// `platform.toml` (`MEDIAPARSE_TEMPLATE_WASM`, `MEDIAPARSE_TEMPLATE_TOML`).
pub fn template_extractor() -> (PathBuf, PathBuf) {
    let path = |var: &str, default: &str| {
        let path = std::env::var_os(var)
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join(default));
        assert!(
            path.is_file(),
            "{} is missing: run the tests with `cargo xtask test`, which renders and builds the template",
            path.display()
        );
        path
    };
    (
        path(
            "MEDIAPARSE_TEMPLATE_WASM",
            "target/wasm32-wasip2/extractor/mediaparse_extractor_templatecheck.wasm",
        ),
        path(
            "MEDIAPARSE_TEMPLATE_TOML",
            "target/template-check/extractors/templatecheck/platform.toml",
        ),
    )
}

/// The bundled platforms: every `extractors/<platform>/platform.toml`.
pub fn bundled_catalogue() -> mediaparse_catalogue::Catalogue {
    let dir = workspace_root().join("extractors");
    mediaparse_catalogue::Catalogue::from_source_tree(&dir)
        .unwrap_or_else(|e| panic!("reading the bundled platform.toml files: {e}"))
}

/// Every `extractors/<platform>/fixtures` folder, by platform.
pub fn fixture_dirs() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(workspace_root().join("extractors"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.join("fixtures").is_dir())
                .map(|p| {
                    (
                        p.file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                        p.join("fixtures"),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}
