//! Registries for other crates' tests (feature `testing`): the test guest
//! (`tests/guests/mptest`, built by `cargo xtask test`) served under a
//! bundled platform's id and facts, or that platform declared with no
//! component.

use std::path::PathBuf;
use std::sync::Arc;

use crate::{Registry, Runtime};

/// The workspace's root folder (this crate is `host/registry`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A bundled platform's `platform.toml` (`extractors/<id>/platform.toml`).
pub fn bundled_toml(platform: &str) -> PathBuf {
    workspace_root()
        .join("extractors")
        .join(platform)
        .join("platform.toml")
}

/// The test guest, where `cargo xtask test` builds it.
pub fn test_guest() -> PathBuf {
    let path = std::env::var_os("MEDIAPARSE_TEST_GUESTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/test-guests"))
        .join("mptest.wasm");
    assert!(
        path.is_file(),
        "{} is missing: run the tests with `cargo xtask test`, which builds the test guests",
        path.display()
    );
    path
}

/// A registry on `runtime` serving the test guest as `platform`, with that
/// platform's bundled `platform.toml`.
pub fn serving_test_guest(runtime: Arc<Runtime>, platform: &str) -> Arc<Registry> {
    loaded(runtime, platform, true)
}

/// A registry on `runtime` that knows `platform` from its bundled
/// `platform.toml` but serves no component for it.
pub fn declaring(runtime: Arc<Runtime>, platform: &str) -> Arc<Registry> {
    loaded(runtime, platform, false)
}

fn loaded(runtime: Arc<Runtime>, platform: &str, component: bool) -> Arc<Registry> {
    let registry = Arc::new(Registry::new(runtime));
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        bundled_toml(platform),
        dir.path().join(format!("{platform}.toml")),
    )
    .expect("copy platform.toml");
    if component {
        std::fs::copy(test_guest(), dir.path().join(format!("{platform}.wasm")))
            .expect("copy the test guest");
    }
    let served = registry.load_dir(dir.path()).expect("load");
    assert_eq!(served, usize::from(component), "components served");
    assert!(registry.knows(platform), "{platform} is declared");
    registry
}
