//! `cargo xtask fake-upstream [--mirror DIR] [CASES…]`: the test suite's
//! fake upstream as a standalone server, for recording and trying things
//! offline. It honours the upstream-override contract (DESIGN.md §5):
//! point `mediaparse record --upstream` (or `serve --test-mode --upstream`) at it.
//!
//! CASES are case folders, `fixtures/` folders, or nothing (every fixture
//! of every extractor). `--mirror DIR` also answers a GET for
//! `https://HOST/PATH` with the file `DIR/HOST/PATH`.

use std::path::PathBuf;

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut mirror = None;
    let mut dirs = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--mirror" => {
                mirror =
                    Some(PathBuf::from(args.next().ok_or_else(|| {
                        anyhow::anyhow!("--mirror needs a directory")
                    })?))
            }
            "-h" | "--help" => {
                println!("usage: mediaparse-fake-upstream [--mirror DIR] [CASE_OR_FIXTURES_DIR…]");
                return Ok(());
            }
            _ => dirs.push(PathBuf::from(arg)),
        }
    }
    if dirs.is_empty() && mirror.is_none() {
        dirs = paths::fixture_dirs().into_iter().map(|(_, d)| d).collect();
    }
    let mut cases = Vec::new();
    for dir in &dirs {
        if dir.join("case.json").is_file() {
            cases.push(Case::load(dir)?);
        } else {
            cases.extend(Case::load_all(dir)?);
        }
    }
    let mut upstream = FakeUpstream::start(&cases).await?;
    if let Some(dir) = mirror {
        upstream = upstream.with_mirror(dir);
    }
    println!(
        "fake upstream serving {} cases on {}",
        cases.len(),
        upstream.base_url()
    );
    println!("listening on {}", upstream.base_url());
    tokio::signal::ctrl_c().await?;
    for miss in upstream.misses() {
        eprintln!("unanswered: {miss}");
    }
    Ok(())
}
