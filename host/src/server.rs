//! `mediaparse serve`: assemble the state, bind, serve, shut down gracefully.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use crate::config::OperatorConfig;
use crate::fetch::{FetchLimits, Fetcher, UpstreamOverride};
use crate::pipeline::ParseLimits;
use crate::registry::{Registry, Runtime, SandboxLimits};
use crate::state::AppState;
use crate::store::Store;

pub struct ServeOptions {
    pub listen: SocketAddr,
    pub db: PathBuf,
    pub extractors: PathBuf,
    pub upstream: Option<String>,
    pub fixed_clock_ms: Option<u64>,
    pub config: Option<PathBuf>,
    pub admin_token: Option<String>,
}

pub async fn serve(options: ServeOptions) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let store = Store::open(&options.db)?;
    let config = match &options.config {
        Some(path) => OperatorConfig::load(path)?,
        None => OperatorConfig::default(),
    };
    let runtime = Runtime::new(SandboxLimits::default())?;
    let registry = Arc::new(Registry::new(runtime));
    let loaded = {
        let (registry, dir) = (registry.clone(), options.extractors.clone());
        tokio::task::spawn_blocking(move || registry.load_dir(&dir)).await?
    };
    match loaded {
        Ok(n) => {
            tracing::info!(count = n, dir = %options.extractors.display(), "extractors loaded")
        }
        Err(e) => {
            tracing::warn!(dir = %options.extractors.display(), error = %e, "cannot read the extractors directory; no platform is available")
        }
    }
    let upstream = options
        .upstream
        .as_deref()
        .map(UpstreamOverride::parse)
        .transpose()?;
    if let Some(up) = &upstream {
        tracing::warn!(upstream = %up.base(), "upstream override: every platform request goes to this address");
    }
    let fetcher = Arc::new(Fetcher::new(upstream, FetchLimits::from_env())?);
    let state = Arc::new(AppState {
        store,
        registry,
        fetcher,
        limits: ParseLimits::default(),
        config: arc_swap::ArcSwap::from_pointee(config),
        admin_token: options.admin_token.filter(|t| !t.trim().is_empty()),
        fixed_clock_ms: options.fixed_clock_ms,
        max_body_bytes: 64 * 1024,
    });
    let app = crate::api::router(state);
    let listener = tokio::net::TcpListener::bind(options.listen).await?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, startup_ms = started.elapsed().as_millis() as u64, "listening");
    // Tests and scripts read the bound address (useful with port 0) from stdout.
    println!("listening on http://{addr}");
    std::io::stdout().flush()?;
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    tracing::info!("shut down");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
