//! The command line: `serve`, key, account and credit management (`cli/manage.rs`), `detect`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use serde_json::json;

use crate::registry::{Registry, Runtime, SandboxLimits};

mod database;
mod diagnose;
mod failures;
mod manage;
mod tool;
mod users;
pub use database::{BackupArgs, MigrateArgs};
pub use diagnose::DiagnoseArgs;
pub use manage::{AccountsCommand, CreditsCommand, KeysCommand, UsageArgs};
pub use users::UsersCommand;

use crate::store::DbLocation;

#[derive(Parser, Debug)]
#[command(
    name = "mediaparse",
    version,
    about = "Turn the URL of one public post into its downloadable media."
)]
pub struct Cli {
    /// The database: a SQLite file path, or a `postgres://` URL (other schemes are refused).
    #[arg(
        long,
        global = true,
        env = "MEDIAPARSE_DB",
        default_value = "mediaparse.db",
        hide_env_values = true
    )]
    pub db: DbLocation,
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once at start and matched once: the size of `Serve` costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the HTTP service.
    Serve(ServeArgs),
    /// Check what `serve` with the same options would meet (configuration,
    /// database, extractors, exits, tunnel keys, ffmpeg, clock, file modes),
    /// changing nothing; exit status 1 when a check fails.
    Diagnose(DiagnoseArgs),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Manage accounts.
    #[command(subcommand)]
    Accounts(AccountsCommand),
    /// Manage account credits.
    #[command(subcommand)]
    Credits(CreditsCommand),
    /// Read usage: charged parses by account, key, platform and time range.
    Usage(UsageArgs),
    /// Console users: invite (one-time link to set a password), list.
    #[command(subcommand)]
    Users(UsersCommand),
    /// Failing parses kept as fixture cases: list them, export one for `replay`.
    #[command(subcommand)]
    Failures(failures::FailuresCommand),
    /// Bring the database's schema up to this binary's version.
    Migrate(MigrateArgs),
    /// Take a consistent online backup of the SQLite database into a new file.
    Backup(BackupArgs),
    /// Tell which platform and post id a URL is (exit status 0), or why not (2).
    Detect {
        url: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        extractors: ExtractorsArg,
        #[command(flatten)]
        compiled_cache: CompiledCacheArg,
    },
    /// Parse URL for real and write it as a fixture case (secrets scrubbed).
    Record(RecordArgs),
    /// Run a fixture case through the wasm component; print the diff (exit 0 same, 1 differs).
    Replay(ReplayArgs),
    /// `mediaparse <platform> ARGS…`: the platform's own operator tool, run in its sandbox
    /// (e.g. `mediaparse youtube solve --player base.js --n VALUE --sig VALUE`). Components from
    /// `MEDIAPARSE_EXTRACTORS` or the default folder.
    #[command(external_subcommand)]
    Tool(Vec<String>),
}

#[derive(Args, Debug)]
pub struct ComponentArgs {
    /// Use this component file (a candidate build, any name) instead of the extractors directory.
    #[arg(long)]
    pub component: Option<PathBuf>,
    #[command(flatten)]
    pub extractors: ExtractorsArg,
    #[command(flatten)]
    pub compiled_cache: CompiledCacheArg,
}

impl ComponentArgs {
    fn choice(&self) -> crate::authoring::replay::ComponentChoice {
        use crate::authoring::replay::ComponentChoice;
        let dir = self.extractors.resolve();
        let cache = self.compiled_cache.resolve(&dir);
        match &self.component {
            Some(file) => ComponentChoice::File(file.clone(), cache),
            None => ComponentChoice::Dir(dir, cache),
        }
    }
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// The post URL (or share text) to parse.
    pub url: String,
    /// The case folder to write, e.g. `extractors/<platform>/fixtures/<case>`.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub component: ComponentArgs,
    /// Send upstream requests to this fake upstream (DESIGN.md §5) instead of the internet.
    #[arg(long, env = "MEDIAPARSE_UPSTREAM")]
    pub upstream: Option<String>,
    /// Operator configuration file (TOML) whose `[platforms.<id>.config]` the extractor receives.
    #[arg(long, env = "MEDIAPARSE_CONFIG")]
    pub config: Option<PathBuf>,
    /// The clock the extractor sees, in Unix milliseconds (default: now).
    #[arg(long)]
    pub now_ms: Option<u64>,
    /// What the case proves, in one sentence (default: where and when it was recorded).
    #[arg(long)]
    pub description: Option<String>,
    /// Overwrite an existing case.json.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A fixture case folder (holding case.json).
    pub case_dir: PathBuf,
    #[command(flatten)]
    pub component: ComponentArgs,
}

#[derive(Args, Debug)]
pub struct ExtractorsArg {
    /// Directory of `<platform>.wasm` components (default: `extractors/` beside the binary's folder).
    #[arg(long = "extractors", env = "MEDIAPARSE_EXTRACTORS")]
    pub dir: Option<PathBuf>,
}

impl ExtractorsArg {
    pub fn resolve(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(default_extractors_dir)
    }
}

/// The platform ids installed in the extractors folder (`<id>.toml` files;
/// `MEDIAPARSE_EXTRACTORS` or the default folder): what the management
/// commands accept where a platform id is asked for.
pub fn installed_platforms() -> Vec<String> {
    let dir = ExtractorsArg {
        dir: std::env::var_os("MEDIAPARSE_EXTRACTORS").map(PathBuf::from),
    }
    .resolve();
    mediaparse_catalogue::Catalogue::from_installed_dir(&dir)
        .ids()
        .into_iter()
        .map(String::from)
        .collect()
}

/// `target/debug/mediaparse` → `target/extractors`, where `cargo xtask build-extractors` puts them.
fn default_extractors_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.parent()
                .and_then(Path::parent)
                .map(|p| p.join("extractors"))
        })
        .unwrap_or_else(|| PathBuf::from("extractors"))
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[arg(long, env = "MEDIAPARSE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub extractors: ExtractorsArg,
    /// Send every upstream request to this fake upstream (DESIGN.md §5).
    #[arg(long, env = "MEDIAPARSE_UPSTREAM")]
    pub upstream: Option<String>,
    /// Operator configuration file (TOML): platform switches and extractor settings.
    #[arg(long, env = "MEDIAPARSE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Operator token for `/api/v1/admin/` (the admin API is off without one).
    #[arg(long, env = "MEDIAPARSE_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    #[command(flatten)]
    pub compiled_cache: CompiledCacheArg,
    /// Host names (or `host:port`) the MCP endpoint answers besides loopback,
    /// comma-separated; `*` accepts any Host header.
    #[arg(long, env = "MEDIAPARSE_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    pub mcp_allowed_hosts: Vec<String>,
    /// Open MCP sessions at most per API key.
    #[arg(
        long,
        env = "MEDIAPARSE_MCP_MAX_SESSIONS_PER_KEY",
        default_value_t = 16
    )]
    pub mcp_max_sessions_per_key: usize,
    /// Open MCP sessions at most in all.
    #[arg(long, env = "MEDIAPARSE_MCP_MAX_SESSIONS", default_value_t = 1024)]
    pub mcp_max_sessions: usize,
    /// Honour the test knobs (fixed clocks, the upstream override and its
    /// limits); listens on a loopback address only. Also `MEDIAPARSE_TEST_MODE=1`.
    #[arg(long)]
    pub test_mode: bool,
    /// Fix the clock extractors see (replay and tests only).
    #[arg(long, env = "MEDIAPARSE_FIXED_CLOCK_MS", hide = true)]
    pub fixed_clock_ms: Option<u64>,
    /// Default requests per minute per key (0 = unlimited); a key's own limit wins.
    /// Without it: the config file's `[limits] rate_limit_per_minute`, else 600.
    #[arg(long, env = "MEDIAPARSE_RATE_LIMIT")]
    pub rate_limit: Option<u32>,
    /// Parse each platform's canary posts on schedule (`on`/`off`); without
    /// it: the config file's `[health] canaries`, else off.
    #[arg(long, env = "MEDIAPARSE_CANARIES", value_parser = ["on", "off"])]
    pub canaries: Option<String>,
    /// Fix the clock key expiry is checked against: RFC 3339 or unix seconds (tests only).
    #[arg(long, env = "MEDIAPARSE_FIXED_AUTH_CLOCK", hide = true, value_parser = manage::parse_instant)]
    pub fixed_auth_clock: Option<i64>,
    /// Milliseconds a client has to send a request's headers; also how long
    /// an idle keep-alive connection stays open.
    #[arg(long, env = "MEDIAPARSE_HEADER_TIMEOUT_MS", default_value_t = 10_000)]
    pub header_timeout_ms: u64,
    /// Milliseconds a client has to send a request's whole body.
    #[arg(long, env = "MEDIAPARSE_BODY_TIMEOUT_MS", default_value_t = 30_000)]
    pub body_timeout_ms: u64,
    /// Milliseconds a response write may stay blocked on a client that reads
    /// nothing; then the connection is closed and what the response held
    /// (a tunnel stream, a platform slot, a merge) is released.
    #[arg(
        long,
        env = "MEDIAPARSE_RESPONSE_WRITE_TIMEOUT_MS",
        default_value_t = 30_000
    )]
    pub response_write_timeout_ms: u64,
    /// Parses in flight at most, REST and MCP together (clamped to the
    /// instance pool, 1000).
    #[arg(long, env = "MEDIAPARSE_MAX_PARSES", default_value_t = 256)]
    pub max_parses: usize,
    /// PostgreSQL connections per pool at most (two pools per host: the
    /// parse path's async one and the blocking one). Each holds one
    /// connection per parse in flight (`--max-parses`) plus 8, bounded by
    /// this and by half the server's `max_connections`; a smaller pool
    /// lowers `--max-parses` to it less 8. Default: no bound but the server's.
    #[arg(long, env = "MEDIAPARSE_PG_POOL_SIZE", value_parser = clap::value_parser!(u32).range(1..))]
    pub pg_pool_size: Option<u32>,
    /// Parses in flight at most per account.
    #[arg(long, env = "MEDIAPARSE_MAX_PARSES_PER_ACCOUNT", default_value_t = 64)]
    pub max_parses_per_account: usize,
    /// Parses waiting for a slot at most; beyond it `503 overloaded` at once.
    #[arg(long, env = "MEDIAPARSE_PARSE_QUEUE", default_value_t = 1024)]
    pub parse_queue: usize,
    /// Milliseconds a parse waits for a slot before `503 overloaded`.
    #[arg(long, env = "MEDIAPARSE_PARSE_QUEUE_WAIT_MS", default_value_t = 2_000)]
    pub parse_queue_wait_ms: u64,
    /// Seconds a cached API key is used before it is read from the database
    /// again, even when no change notification arrived (0: no cache).
    #[arg(long, env = "MEDIAPARSE_KEY_CACHE_TTL_SECS", default_value_t = 30)]
    pub key_cache_ttl_secs: u64,
    /// Open client connections at most; more wait in the accept queue.
    #[arg(long, env = "MEDIAPARSE_MAX_CONNECTIONS", default_value_t = 16_384)]
    pub max_connections: usize,
    /// Reverse proxies whose `Forwarded` / `X-Forwarded-For` header names
    /// the client (CIDRs or addresses, comma-separated); the right-most
    /// address not in them is the client the throttles count.
    #[arg(long = "trusted-proxy", env = "MEDIAPARSE_TRUSTED_PROXIES", value_delimiter = ',', value_parser = crate::auth::client_ip::parse_cidr)]
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Keys one account may have; creating more answers `409 key_limit_reached`.
    #[arg(
        long,
        env = "MEDIAPARSE_MAX_KEYS_PER_ACCOUNT",
        default_value_t = crate::operator::DEFAULT_MAX_KEYS_PER_ACCOUNT
    )]
    pub max_keys_per_account: u32,
    /// Password hashes (argon2id) computed at once at most; sign-ins beyond
    /// it answer `503` with `Retry-After`. Default: half the cores, at least 1.
    #[arg(long, env = "MEDIAPARSE_PASSWORD_HASHES")]
    pub password_hashes: Option<usize>,
    /// Serve `/metrics` on this address only, without a token (default:
    /// on the main address, behind the operator token).
    #[arg(long, env = "MEDIAPARSE_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    #[command(flatten)]
    pub tunnel: TunnelArgs,
}

impl ServeArgs {
    /// The admission bounds these arguments ask for.
    pub fn admission_limits(&self) -> crate::parse::admission::AdmissionLimits {
        crate::parse::admission::AdmissionLimits {
            max_in_flight: self.max_parses,
            max_per_account: self.max_parses_per_account,
            max_queued: self.parse_queue,
            max_wait: std::time::Duration::from_millis(self.parse_queue_wait_ms),
        }
    }

    /// The client timeouts and connection limit these arguments ask for.
    pub fn connection_limits(&self) -> crate::http::listener::ConnectionLimits {
        crate::http::listener::ConnectionLimits {
            header_read: std::time::Duration::from_millis(self.header_timeout_ms.max(1)),
            body_read: std::time::Duration::from_millis(self.body_timeout_ms.max(1)),
            response_write: std::time::Duration::from_millis(self.response_write_timeout_ms.max(1)),
            max_connections: self.max_connections.max(1),
        }
    }
}

/// Media delivery through the tunnel (`?delivery=tunnel`).
#[derive(Args, Debug)]
pub struct TunnelArgs {
    /// The URL callers reach this service at (behind a reverse proxy); tunnel
    /// URLs start with it. Default: `http://` and the bound address.
    #[arg(long, env = "MEDIAPARSE_PUBLIC_BASE_URL")]
    pub public_base_url: Option<String>,
    /// Longest life of a tunnel URL, in seconds (the media URL's own expiry may be sooner).
    #[arg(long, env = "MEDIAPARSE_TUNNEL_TTL_SECS", default_value_t = 3600)]
    pub tunnel_ttl_secs: u64,
    /// Tunnel token keys, `id:base64(32 bytes)[:not_after_unix_seconds]`, comma
    /// separated, the sealing key first; older keys open tokens until their
    /// `not_after`. Default: a random key per start (tokens die with the process).
    #[arg(long, env = "MEDIAPARSE_TUNNEL_KEYS", hide_env_values = true)]
    pub tunnel_keys: Option<String>,
    /// Tunnel requests (GET and HEAD) one key may make per minute (0: no limit).
    #[arg(
        long,
        env = "MEDIAPARSE_TUNNEL_REQUESTS_PER_MINUTE",
        default_value_t = 600
    )]
    pub tunnel_requests_per_minute: u32,
    /// Tunnel streams one key may have open at once (0: no limit).
    #[arg(long, env = "MEDIAPARSE_TUNNEL_STREAMS_PER_KEY", default_value_t = 8)]
    pub tunnel_streams_per_key: u32,
    /// Tunnel bytes one key may be served per UTC day (0: no limit).
    #[arg(long, env = "MEDIAPARSE_TUNNEL_BYTES_PER_DAY", default_value_t = 0)]
    pub tunnel_bytes_per_day: u64,
    /// Tunnel streams open to one platform's CDN at once, all keys together (0: no limit).
    #[arg(
        long,
        env = "MEDIAPARSE_TUNNEL_UPSTREAM_PER_PLATFORM",
        default_value_t = 256
    )]
    pub tunnel_upstream_per_platform: u32,
    /// The `ffmpeg` program for `/api/v1/tunnel/merge` (`off`: no merging).
    /// Default: `ffmpeg` on PATH, if any.
    #[arg(long, env = "MEDIAPARSE_FFMPEG")]
    pub ffmpeg: Option<PathBuf>,
    /// ffmpeg merges running at once (each takes about one core).
    #[arg(long, env = "MEDIAPARSE_TUNNEL_MAX_MERGES", default_value_t = 2)]
    pub tunnel_max_merges: usize,
    /// Longest life of one merge, in seconds.
    #[arg(long, env = "MEDIAPARSE_TUNNEL_MERGE_SECS", default_value_t = 3600)]
    pub tunnel_merge_secs: u64,
}

impl TunnelArgs {
    /// The per-key and per-platform tunnel limits these arguments ask for.
    pub fn limits(&self) -> crate::tunnel::limits::TunnelLimits {
        crate::tunnel::limits::TunnelLimits {
            requests_per_key_per_minute: self.tunnel_requests_per_minute,
            streams_per_key: self.tunnel_streams_per_key,
            bytes_per_key_per_day: self.tunnel_bytes_per_day,
            upstream_per_platform: self.tunnel_upstream_per_platform,
        }
    }
}

#[derive(Args, Debug)]
pub struct CompiledCacheArg {
    /// Folder for compiled components (`.cwasm`), so restarts skip compiling;
    /// `off` disables it (default: `.cwasm-cache` inside the extractors folder).
    #[arg(long = "compiled-cache", env = "MEDIAPARSE_COMPILED_CACHE")]
    pub compiled_cache_dir: Option<PathBuf>,
}

impl CompiledCacheArg {
    pub fn resolve(&self, extractors: &Path) -> Option<PathBuf> {
        match &self.compiled_cache_dir {
            Some(d) if d.as_os_str() == "off" => None,
            Some(d) => Some(d.clone()),
            None => Some(extractors.join(".cwasm-cache")),
        }
    }
}

/// Run a non-serve command; returns the process exit code.
pub fn run_admin(db: &DbLocation, command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Serve(_) => unreachable_serve(),
        Command::Keys(c) => manage::keys(db, c),
        Command::Accounts(c) => manage::accounts(db, c),
        Command::Credits(c) => manage::credits(db, c),
        Command::Usage(args) => manage::usage(db, args),
        Command::Users(c) => users::users(db, c),
        Command::Migrate(args) => database::migrate(db, args),
        Command::Diagnose(args) => diagnose::run(db, args),
        Command::Failures(c) => failures::run(db, c),
        Command::Backup(args) => database::backup(db, args),
        Command::Detect {
            url,
            json,
            extractors,
            compiled_cache,
        } => {
            let dir = extractors.resolve();
            let cache = compiled_cache.resolve(&dir);
            detect(&url, json, &dir, cache)
        }
        Command::Record(args) => record(args),
        Command::Replay(args) => Ok(crate::authoring::replay::run(
            &args.case_dir,
            &args.component.choice(),
        )),
        Command::Tool(args) => tool::run(
            &args,
            &ExtractorsArg {
                dir: std::env::var_os("MEDIAPARSE_EXTRACTORS").map(PathBuf::from),
            }
            .resolve(),
        ),
    }
}

fn record(args: RecordArgs) -> anyhow::Result<i32> {
    let options = crate::authoring::record::RecordOptions {
        input: args.url,
        out: args.out,
        component: args.component.choice(),
        upstream: args.upstream,
        config: args.config,
        now_ms: args.now_ms,
        description: args.description,
        force: args.force,
    };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(crate::authoring::record::record(options))
}

fn unreachable_serve() -> anyhow::Result<i32> {
    anyhow::bail!("serve is run by main")
}

/// Loads every component (routing needs each one's declared hosts), from the
/// compiled cache when it holds them, as `serve` does.
fn detect(input: &str, json: bool, dir: &Path, cache: Option<PathBuf>) -> anyhow::Result<i32> {
    let registry = Arc::new(Registry::with_cache(
        Runtime::new(SandboxLimits::default())?,
        cache,
    ));
    registry
        .load_dir(dir)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", dir.display()))?;
    let detected = crate::parse::route(&registry, input, None).and_then(|ext| {
        crate::registry::run_blocking(async { registry.session(&ext).await?.detect(input).await })?
            .map_err(crate::parse::ParseError::Failure)
    });
    match detected {
        Ok(t) => {
            if json {
                println!(
                    "{}",
                    json!({"platform": t.platform, "id": t.id, "canonicalUrl": t.canonical_url})
                );
            } else {
                println!("{} {} {}", t.platform, t.id, t.canonical_url);
            }
            Ok(0)
        }
        Err(e) => {
            let err = crate::http::envelope::ApiError::from(e);
            if json {
                println!("{}", json!({"code": err.wire(), "msg": err.msg}));
            } else {
                println!("error {}: {}", err.wire(), err.msg);
            }
            Ok(2)
        }
    }
}
