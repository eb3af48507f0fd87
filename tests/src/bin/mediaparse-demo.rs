//! `cargo xtask demo`: the whole service working offline. A fake upstream
//! replays every fixture case, the real service is pointed at it, a key with
//! credits is created, and a curl line shows a TikTok photo post parsed.

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut cases = Vec::new();
    for (_, dir) in paths::fixture_dirs() {
        cases.extend(Case::load_all(&dir)?);
    }
    let upstream = FakeUpstream::start(&cases).await?;
    let listen = std::env::var("MEDIAPARSE_LISTEN").unwrap_or_else(|_| "127.0.0.1:8080".into());
    let dir = tempfile::tempdir()?;
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        db: Some(dir.path().join("demo.db")),
        listen: Some(listen),
        ..Default::default()
    })
    .await?;
    service.add_credits("demo", 100)?;
    let token = service.create_key(&["--account", "demo"])?;
    let photo = cases
        .iter()
        .find(|c| {
            c.dir.to_string_lossy().contains("tiktok")
                && c.name().contains("photo")
                && c.expect.media.is_some()
        })
        .map(|c| c.input.clone())
        .unwrap_or_else(|| "https://www.tiktok.com/@someone/photo/7240568259186019630".into());
    println!();
    println!(
        "mediaparse demo: {} fixture cases served by a fake upstream at {}",
        cases.len(),
        upstream.base_url()
    );
    println!(
        "service at {} (account `demo`, 100 credits)",
        service.base_url
    );
    println!();
    println!("Parse a TikTok photo post:");
    println!();
    println!(
        "  curl -s -X POST {}/api/v1/parse -H 'Authorization: Bearer {token}' -H 'Content-Type: application/json' -d '{{\"url\":\"{photo}\"}}'",
        service.base_url
    );
    println!();
    println!(
        "With platform data: replace /api/v1/parse with /api/v1/platforms/tiktok/parse. Ctrl-C stops the demo."
    );
    tokio::signal::ctrl_c().await?;
    Ok(())
}
