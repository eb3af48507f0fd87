//! The command line: `serve`, key and credit management, `detect`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use serde_json::json;

use crate::auth;
use crate::registry::{Registry, Runtime, SandboxLimits};
use crate::store::{KeyRecord, Store};

#[derive(Parser, Debug)]
#[command(
    name = "mediaparse",
    version,
    about = "Turn the URL of one public post into its downloadable media."
)]
pub struct Cli {
    /// SQLite database file.
    #[arg(
        long,
        global = true,
        env = "MEDIAPARSE_DB",
        default_value = "mediaparse.db"
    )]
    pub db: PathBuf,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the HTTP service.
    Serve(ServeArgs),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Manage account credits.
    #[command(subcommand)]
    Credits(CreditsCommand),
    /// Tell which platform and post id a URL is (exit status 0), or why not (2).
    Detect {
        url: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        extractors: ExtractorsArg,
    },
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
    /// Host names (or `host:port`) the MCP endpoint answers besides loopback,
    /// comma-separated; `*` accepts any Host header.
    #[arg(long, env = "MEDIAPARSE_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    pub mcp_allowed_hosts: Vec<String>,
    /// Fix the clock extractors see (replay and tests only).
    #[arg(long, env = "MEDIAPARSE_FIXED_CLOCK_MS", hide = true)]
    pub fixed_clock_ms: Option<u64>,
}

#[derive(Subcommand, Debug)]
pub enum KeysCommand {
    /// Create a key; its token is printed once.
    Create {
        #[arg(long)]
        name: String,
        #[arg(long, default_value = "default")]
        account: String,
        /// Last valid day (UTC), YYYY-MM-DD; omit or `never` for a permanent key.
        #[arg(long)]
        expires: Option<String>,
        /// `all` or a comma list of platform ids.
        #[arg(long, default_value = "all")]
        platforms: String,
        #[arg(long)]
        json: bool,
    },
    /// List keys (token prefixes only).
    List {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum CreditsCommand {
    /// Add credits to an account (created if missing).
    Add {
        #[arg(long, default_value = "default")]
        account: String,
        amount: i64,
        #[arg(long)]
        json: bool,
    },
}

/// Run a non-serve command; returns the process exit code.
pub fn run_admin(db: &Path, command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Serve(_) => unreachable_serve(),
        Command::Keys(KeysCommand::Create {
            name,
            account,
            expires,
            platforms,
            json,
        }) => {
            let store = Store::open(db)?;
            let expires_on = auth::parse_expiry(expires.as_deref().unwrap_or("never"))
                .map_err(anyhow::Error::msg)?;
            let platforms = auth::parse_platforms(&platforms).map_err(anyhow::Error::msg)?;
            let token = auth::mint_token();
            let key = KeyRecord {
                id: auth::new_id("key"),
                account_id: account,
                name,
                token_prefix: auth::display_prefix(&token),
                expires_on,
                platforms,
                created_at: chrono::Utc::now().timestamp(),
                rotated_at: None,
            };
            store.insert_key(&key, &auth::hash_token(&token))?;
            if json {
                println!(
                    "{}",
                    json!({"id": key.id, "token": token, "account": key.account_id, "name": key.name, "expiresOn": key.expires_on, "platforms": key.platforms.clone().map(serde_json::Value::from).unwrap_or("all".into())})
                );
            } else {
                println!(
                    "created key {} ({}) for account {}",
                    key.id, key.name, key.account_id
                );
                println!("token (shown once, store it now): {token}");
            }
            Ok(0)
        }
        Command::Keys(KeysCommand::List { json }) => {
            let store = Store::open(db)?;
            let keys = store.keys()?;
            if json {
                println!("{}", serde_json::to_string(&keys)?);
            } else {
                for k in keys {
                    let platforms = k
                        .platforms
                        .map(|p| p.join(","))
                        .unwrap_or_else(|| "all".into());
                    println!(
                        "{}  {}  account={}  token={}…  expires={}  platforms={}",
                        k.id,
                        k.name,
                        k.account_id,
                        k.token_prefix,
                        k.expires_on.as_deref().unwrap_or("never"),
                        platforms
                    );
                }
            }
            Ok(0)
        }
        Command::Credits(CreditsCommand::Add {
            account,
            amount,
            json,
        }) => {
            let store = Store::open(db)?;
            let balance = store.add_credits(&account, amount, chrono::Utc::now().timestamp())?;
            if json {
                println!(
                    "{}",
                    json!({"account": account, "added": amount, "balance": balance})
                );
            } else {
                println!("account {account}: +{amount} credits, balance {balance}");
            }
            Ok(0)
        }
        Command::Detect {
            url,
            json,
            extractors,
        } => detect(&url, json, &extractors.resolve()),
    }
}

fn unreachable_serve() -> anyhow::Result<i32> {
    anyhow::bail!("serve is run by main")
}

fn detect(input: &str, json: bool, dir: &Path) -> anyhow::Result<i32> {
    let registry = Arc::new(Registry::new(Runtime::new(SandboxLimits::default())?));
    registry
        .load_dir(dir)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", dir.display()))?;
    let detected = crate::pipeline::route(&registry, input, None).and_then(|ext| {
        let mut session = registry.session(&ext)?;
        session
            .detect(input)?
            .map_err(crate::pipeline::ParseError::Failure)
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
            let err = crate::api::envelope::ApiError::from(e);
            if json {
                println!("{}", json!({"code": err.code, "msg": err.msg}));
            } else {
                println!("error {}: {}", err.code, err.msg);
            }
            Ok(2)
        }
    }
}
