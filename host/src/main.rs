use clap::Parser;
use mediaparse::cli::{Cli, Command};
use mediaparse::config::test_mode;
use mediaparse::http::server::{ServeOptions, TunnelOptions, serve};

/// glibc's malloc raises its mmap threshold each time a large mapped block
/// is freed; after that, large blocks (compiled components read at start,
/// 1.4–1.9 MB each) come from its arenas and stay resident once freed.
/// Fixed at 512 KiB, those are mapped and go back to the system when freed,
/// while the HTTP read buffers (hyper grows them to about 400 KiB while
/// streaming tunnel bodies) stay in the arenas, as fast as before.
/// `cargo xtask bench --only e2e`: RSS at rest 57–58 MiB against 91–95
/// without; at 128 KiB the tunnel read 0.75–0.82 of direct, at 512 KiB
/// 0.81–0.83.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn return_large_blocks_to_the_system() {
    // SAFETY: mallopt only sets a parameter of glibc's allocator, and this
    // runs first in `main`, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 512 * 1024);
    }
}

fn main() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    return_large_blocks_to_the_system();
    let cli = Cli::parse();
    // The admin commands print results on stdout; keep their stderr quiet.
    init_tracing(if matches!(cli.command, Command::Serve(_)) {
        "info"
    } else {
        "warn"
    });
    let code = match cli.command {
        Command::Serve(args) => {
            // Per-host files sit beside a SQLite file; on PostgreSQL they
            // go in MEDIAPARSE_DATA_DIR (default: the working directory).
            let db = cli.db.data_file();
            // Test knobs only in test mode, and test mode only on loopback.
            let knobs = test_mode::Knobs::with_env(
                args.upstream.is_some(),
                args.fixed_clock_ms.is_some(),
                args.fixed_auth_clock.is_some(),
            );
            if let Err(e) =
                test_mode::check(test_mode::enabled(args.test_mode), args.listen, &knobs)
            {
                eprintln!("mediaparse: {e}");
                std::process::exit(2);
            }
            let extractors = args.extractors.resolve();
            let options = ServeOptions {
                connections: args.connection_limits(),
                admission: args.admission_limits(),
                listen: args.listen,
                database: cli.db.clone(),
                db,
                compiled_cache: args.compiled_cache.resolve(&extractors),
                extractors,
                upstream: args.upstream,
                fixed_clock_ms: args.fixed_clock_ms,
                config: args.config,
                admin_token: args.admin_token,
                trusted_proxies: args.trusted_proxies,
                max_keys_per_account: args.max_keys_per_account,
                metrics_listen: args.metrics_listen,
                password_hashes: args.password_hashes,
                rate_limit: args.rate_limit,
                canaries: args.canaries.as_deref().map(|c| c == "on"),
                fixed_auth_clock: args.fixed_auth_clock,
                mcp_allowed_hosts: args.mcp_allowed_hosts,
                mcp_sessions: mediaparse::http::mcp::sessions::SessionLimits {
                    per_key: args.mcp_max_sessions_per_key.max(1),
                    overall: args.mcp_max_sessions.max(1),
                },
                key_cache_ttl: std::time::Duration::from_secs(args.key_cache_ttl_secs),
                pg_pool_size: args.pg_pool_size,
                tunnel: TunnelOptions {
                    limits: args.tunnel.limits(),
                    public_base_url: args.tunnel.public_base_url,
                    ttl_secs: args.tunnel.tunnel_ttl_secs,
                    keys: args.tunnel.tunnel_keys,
                    ffmpeg: args.tunnel.ffmpeg,
                    max_merges: args.tunnel.tunnel_max_merges,
                    merge_secs: args.tunnel.tunnel_merge_secs,
                },
            };
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build();
            match runtime
                .map_err(anyhow::Error::from)
                .and_then(|rt| rt.block_on(serve(options)))
            {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("mediaparse: {e:#}");
                    1
                }
            }
        }
        command => match mediaparse::cli::run_admin(&cli.db, command) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("mediaparse: {e:#}");
                1
            }
        },
    };
    std::process::exit(code);
}

/// Logs go to stderr; `RUST_LOG` filters, `MEDIAPARSE_LOG_FORMAT=json` for JSON lines.
fn init_tracing(default_level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| format!("{default_level},wasmtime=warn,cranelift=warn").into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if std::env::var("MEDIAPARSE_LOG_FORMAT").is_ok_and(|v| v == "json") {
        builder.json().init();
    } else {
        builder.init();
    }
}
