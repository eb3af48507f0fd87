//! `mediaparse serve`: assemble the state, bind, serve, shut down gracefully.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwap;

use super::mcp::McpSettings;
use super::state::AppState;
use mediaparse_auth::ratelimit::RateLimits;
use mediaparse_core::{Clock, ParseLimits};
use mediaparse_fetch::{FetchLimits, Fetcher, UpstreamOverride};
use mediaparse_parse::Services;
use mediaparse_registry::{Registry, Runtime, SandboxLimits};
use mediaparse_reload::ConfigSource;
use mediaparse_store::{DbLocation, Store};
use mediaparse_tunnel::{Keyring, TunnelSettings};

pub struct ServeOptions {
    pub listen: SocketAddr,
    /// Where the books are (`--db`: a SQLite file or a PostgreSQL URL).
    pub database: DbLocation,
    /// Per-host files (remembered values, session cookies) are named after
    /// this path: the SQLite file, or `mediaparse.db` in the working
    /// directory on PostgreSQL.
    pub db: PathBuf,
    pub extractors: PathBuf,
    pub upstream: Option<String>,
    pub fixed_clock_ms: Option<u64>,
    pub config: Option<PathBuf>,
    pub admin_token: Option<String>,
    /// `--trusted-proxy`: CIDRs of reverse proxies whose forwarding headers are believed.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Keys one account may have.
    pub max_keys_per_account: u32,
    /// Serve `/metrics` here (no token) instead of on `listen` behind the operator token.
    pub metrics_listen: Option<SocketAddr>,
    /// Password hashes in flight at most (`None`: half the cores).
    pub password_hashes: Option<usize>,
    /// Folder of compiled components (`.cwasm`); `None`: compile every start.
    pub compiled_cache: Option<PathBuf>,
    /// Default requests per minute per key (`--rate-limit`; 0 = unlimited).
    pub rate_limit: Option<u32>,
    /// `--canaries`: run the canaries (`None`: as `[health] canaries` says).
    pub canaries: Option<bool>,
    /// Fixed clock for key expiry, unix seconds (tests only).
    pub fixed_auth_clock: Option<i64>,
    /// Extra `Host` values `/mcp` answers besides loopback (`*`: any).
    pub mcp_allowed_hosts: Vec<String>,
    /// Bounds on open MCP sessions, per key and overall.
    pub mcp_sessions: super::mcp::sessions::SessionLimits,
    /// Bounds on the parses in flight and their wait queue.
    pub admission: mediaparse_parse::admission::AdmissionLimits,
    /// Timeouts and the connection limit for clients.
    pub connections: super::listener::ConnectionLimits,
    /// Public base URL, token TTL and keys of the media tunnel.
    pub tunnel: TunnelOptions,
    /// How long a cached API key is used before it is read again.
    pub key_cache_ttl: std::time::Duration,
    /// Most PostgreSQL connections per host (`None`: sized from admission
    /// and the server's limit alone).
    pub pg_pool_size: Option<u32>,
}

/// The media tunnel's options (`serve --public-base-url`, `--tunnel-ttl-secs`, `--tunnel-keys`).
#[derive(Clone, Debug, Default)]
pub struct TunnelOptions {
    pub public_base_url: Option<String>,
    pub ttl_secs: u64,
    /// `id:base64key[:not_after]`, comma separated, sealing key first.
    pub keys: Option<String>,
    pub limits: mediaparse_tunnel::limits::TunnelLimits,
    /// `ffmpeg` for merges (`off`: none); `None`: look on PATH.
    pub ffmpeg: Option<PathBuf>,
    pub max_merges: usize,
    pub merge_secs: u64,
}

/// How long in-flight requests get to finish after SIGTERM / Ctrl-C.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(40);

/// Shortest operator token accepted, in bytes: a guessable one would open
/// every account's books.
pub const MIN_ADMIN_TOKEN_BYTES: usize = 32;

/// The operator token as configured: trimmed, `None` when empty (admin API
/// off), refused when shorter than [`MIN_ADMIN_TOKEN_BYTES`].
pub fn admin_token(configured: Option<&str>) -> anyhow::Result<Option<String>> {
    match configured.map(str::trim) {
        None | Some("") => Ok(None),
        Some(t) if t.len() < MIN_ADMIN_TOKEN_BYTES => anyhow::bail!(
            "the operator token (--admin-token / MEDIAPARSE_ADMIN_TOKEN) is {} bytes; it must be at least {MIN_ADMIN_TOKEN_BYTES} (e.g. `openssl rand -hex 32`)",
            t.len()
        ),
        Some(t) => Ok(Some(t.to_string())),
    }
}

pub async fn serve(mut options: ServeOptions) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let admin_token = admin_token(options.admin_token.as_deref())?;
    let store = {
        let database = options.database.clone();
        // PostgreSQL: one pooled connection per admitted parse (and a reserve).
        let (max_parses, cap) = (
            options
                .admission
                .max_in_flight
                .clamp(1, mediaparse_parse::admission::INSTANCE_POOL),
            options.pg_pool_size,
        );
        Store::connect_for_parses_async(&database, max_parses, cap).await?
    };
    tracing::info!(backend = store.backend_name(), "database open");
    if let Some(pool) = store.pg_pool_size() {
        // A pool bounded below admission: admit only the parses it can lend
        // a connection to, so an admitted parse never waits for one.
        let parses = mediaparse_store::parses_for_pool(pool);
        if parses < options.admission.max_in_flight {
            tracing::warn!(
                pool,
                max_parses = options.admission.max_in_flight,
                admitted = parses,
                "the PostgreSQL pool is bounded (--pg-pool-size or the server's max_connections): parses in flight clamped to it"
            );
            options.admission.max_in_flight = parses;
        }
        tracing::info!(pool, "PostgreSQL pool sized");
    }
    store.set_key_cache_ttl(options.key_cache_ttl);
    // Several hosts share one PostgreSQL: their rate limits are counted there.
    let (rate_limits, account_rate_limits) = if store.backend_name() == "postgres" {
        (
            RateLimits::shared(options.rate_limit, store.clone(), "parse"),
            RateLimits::shared(options.rate_limit, store.clone(), "account"),
        )
    } else {
        (
            RateLimits::new(options.rate_limit, "parse"),
            RateLimits::new(options.rate_limit, "account"),
        )
    };
    let (config_source, config) = ConfigSource::open(options.config.clone())?;
    let runtime = Runtime::new(SandboxLimits::default())?;
    // Remembered values live beside the database, in the data folder.
    let registry = Arc::new(
        Registry::with_cache(runtime, options.compiled_cache.clone())
            .remember_in(&options.db.with_file_name("remembered.json")),
    );
    let loaded = {
        let (registry, dir) = (registry.clone(), options.extractors.clone());
        // Blocks: reads and compiles the extractors' WebAssembly (not a store call).
        tokio::task::spawn_blocking(move || {
            let loaded = registry.load_dir(&dir);
            registry.prune_cache();
            loaded
        })
        .await?
    };
    match loaded {
        Ok(n) => {
            tracing::info!(count = n, dir = %options.extractors.display(), elapsed_ms = started.elapsed().as_millis() as u64, "extractors loaded")
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
    let upstream_override_set = upstream.is_some();
    let fetcher = Arc::new(Fetcher::new(upstream, FetchLimits::from_env())?);
    let listener = super::listener::bind(options.listen)?;
    let addr = listener.local_addr()?;
    let tunnel = Arc::new(tunnel_settings(
        &options.tunnel,
        addr,
        fetcher.clone(),
        store.clone(),
    )?);
    let config = Arc::new(ArcSwap::from_pointee(config));
    // A platform's change of health goes to the alerts task (`[health] alert_urls`).
    let (health_changes, changes) = tokio::sync::mpsc::channel(mediaparse_alerts::QUEUE);
    tokio::spawn(mediaparse_alerts::run(config.clone(), changes));
    let services = Arc::new(Services {
        store,
        registry,
        fetcher,
        limits: ParseLimits::default(),
        config,
        clock: Clock {
            fixed_parse_ms: options.fixed_clock_ms,
            fixed_auth_s: options.fixed_auth_clock,
        },
        exits: Default::default(),
        pacer: Default::default(),
        // Rotated session cookies, beside the database (owner-only file).
        sessions: Arc::new(mediaparse_fetch::Sessions::open(Some(
            options.db.with_extension("sessions.json"),
        ))),
        admission: mediaparse_parse::admission::Admission::new(options.admission),
        cache: mediaparse_parse::cache::ParseCache::new(),
        health: {
            let health = mediaparse_parse::health::PlatformHealth::with_changes(health_changes);
            if upstream_override_set {
                health.breaker_off_unless_configured()
            } else {
                health
            }
        },
        // Failing parses kept as fixture cases, beside the database.
        failures: Some(std::sync::Arc::new(
            mediaparse_authoring::failures::FailureDir::new(
                mediaparse_authoring::failures::dir_for(&options.db),
            ),
        )),
    });
    let canary_host = mediaparse_canary::host_id();
    if options
        .canaries
        .unwrap_or_else(|| services.config.load().health.canaries_on())
    {
        tokio::spawn(mediaparse_canary::run(
            services.clone(),
            canary_host.clone(),
        ));
    }
    // Several hosts share one PostgreSQL: each counts the canaries another ran.
    if services.store.backend_name() == "postgres" {
        tokio::spawn(mediaparse_canary::follow(services.clone(), canary_host));
    }
    tokio::spawn(mediaparse_billing::sweep_expired_holds(
        services.store.clone(),
    ));
    // Webhooks to loopback (plain http) only in test mode, as the upstream override.
    let webhooks = mediaparse_webhooks::Webhooks::new(
        services.store.clone(),
        services.config.clone(),
        if upstream_override_set {
            mediaparse_webhooks::Mode::Test
        } else {
            mediaparse_webhooks::Mode::Production
        },
    );
    webhooks.spawn_worker();
    let jobs = mediaparse_jobs::Jobs::new(services.clone(), tunnel.clone(), webhooks.clone());
    jobs.spawn_runner();
    let state = Arc::new(AppState {
        jobs,
        services: services.clone(),
        config_source: Arc::new(config_source),
        admin_token,
        max_body_bytes: 64 * 1024,
        rate_limits,
        account_rate_limits,
        mcp: McpSettings {
            sessions: options.mcp_sessions,
            ..McpSettings::new(options.mcp_allowed_hosts)
        },
        tunnel,
        guards: mediaparse_auth::Guards::new(
            options.trusted_proxies,
            options.max_keys_per_account,
            options
                .password_hashes
                .unwrap_or_else(mediaparse_auth::password_pool::PasswordPool::default_size),
        ),
        metrics_elsewhere: options.metrics_listen.is_some(),
        webhooks,
    });
    // The unknown-e-mail sign-in takes as long as a verification: measure one.
    state
        .guards
        .passwords
        .calibrate(super::console::calibrate_password_check);
    if let Some(metrics_addr) = options.metrics_listen {
        let metrics_listener = super::listener::bind(metrics_addr)?;
        tracing::info!(addr = %metrics_listener.local_addr()?, "metrics listening");
        tokio::spawn(async move {
            if let Err(e) = axum::serve(metrics_listener, super::ops::metrics_router()).await {
                tracing::error!(error = %e, "the metrics listener stopped");
            }
        });
    }
    let mcp_shutdown = state.mcp.shutdown.clone();
    let watched = mediaparse_reload::Watched {
        registry: services.registry.clone(),
        config: services.config.clone(),
        config_source: state.config_source.clone(),
    };
    if let Err(e) = mediaparse_reload::spawn(watched, &options.extractors) {
        tracing::warn!(error = %e, "hot reload is off: cannot watch the extractors or configuration folder");
    }
    let app = super::router(state);
    tracing::info!(%addr, startup_ms = started.elapsed().as_millis() as u64, "listening");
    // Tests and scripts read the bound address (useful with port 0) from stdout.
    println!("listening on http://{addr}");
    std::io::stdout().flush()?;
    // On SIGTERM / Ctrl-C: stop accepting, let in-flight requests (parses
    // included) finish, then exit; give up on stragglers after the grace.
    let (stopping_tx, stopping_rx) = tokio::sync::oneshot::channel::<()>();
    let server = super::listener::run(listener, app, options.connections, async move {
        shutdown_signal().await;
        tracing::info!("shutting down: no new connections, finishing requests in flight");
        // End open MCP streams, or graceful shutdown would wait for them forever.
        mcp_shutdown.cancel();
        let _ = stopping_tx.send(());
    });
    let grace = async move {
        if stopping_rx.await.is_ok() {
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = server => {}
        _ = grace => tracing::warn!(grace_s = SHUTDOWN_GRACE.as_secs(), "requests still in flight after the grace period; exiting anyway"),
    }
    tracing::info!("shut down");
    Ok(())
}

/// The tunnel's settings from the command line; the base URL defaults to the bound address.
fn tunnel_settings(
    args: &TunnelOptions,
    addr: SocketAddr,
    fetcher: Arc<Fetcher>,
    store: Store,
) -> anyhow::Result<TunnelSettings> {
    let public_base_url = match &args.public_base_url {
        Some(u) => {
            let parsed =
                url::Url::parse(u).map_err(|e| anyhow::anyhow!("--public-base-url: {e}"))?;
            anyhow::ensure!(
                matches!(parsed.scheme(), "http" | "https"),
                "--public-base-url must be an http(s) URL"
            );
            u.trim_end_matches('/').to_string()
        }
        None => format!("http://{addr}"),
    };
    let keys = match &args.keys {
        Some(spec) => Keyring::parse(spec)?,
        None => {
            tracing::warn!(
                "no --tunnel-keys: tunnel URLs are sealed with a random key and stop working at restart"
            );
            Keyring::random()
        }
    };
    let ffmpeg = mediaparse_tunnel::merge::find_ffmpeg(args.ffmpeg.as_deref());
    match (&ffmpeg, &args.ffmpeg) {
        (Some(p), _) => tracing::info!(ffmpeg = %p.display(), "tunnel merge available"),
        (None, Some(p)) if p.as_os_str() != "off" => {
            anyhow::bail!("--ffmpeg {}: no such program", p.display())
        }
        (None, _) => tracing::info!("no ffmpeg: tunnel merges answer 501 merge_unavailable"),
    }
    // ffmpeg reads the merge's inputs from this service's own tunnel, on loopback.
    let loopback = match addr.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, addr.port()))
        }
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, addr.port()))
        }
        _ => addr,
    };
    Ok(TunnelSettings {
        public_base_url,
        ttl: std::time::Duration::from_secs(args.ttl_secs),
        keys,
        fetcher,
        meter: mediaparse_tunnel::limits::Meter::new(args.limits, store),
        merge: mediaparse_tunnel::merge::MergeSettings::new(
            ffmpeg,
            format!("http://{loopback}"),
            args.max_merges,
            std::time::Duration::from_secs(args.merge_secs.max(1)),
        ),
    })
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
