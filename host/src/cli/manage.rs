//! `mediaparse keys|accounts|credits|usage`: the operator commands. Each
//! parses its arguments, calls `crate::operator` on the database file and
//! prints either a line for people or, with `--json`, the same JSON the admin
//! HTTP API serves. Errors go to stderr with exit status 1.

use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::json;

use crate::auth;
use crate::operator::{self, KeySpec, KeyView};
use crate::store::{DbLocation, KeyEdit, Store, UsageFilter};

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
        /// Requests per minute for this key, or `off`; omit for the service default.
        #[arg(long)]
        rate_limit: Option<String>,
        /// Refuse the key if its account already has this many keys.
        #[arg(
            long,
            env = "MEDIAPARSE_MAX_KEYS_PER_ACCOUNT",
            default_value_t = operator::DEFAULT_MAX_KEYS_PER_ACCOUNT
        )]
        max_keys_per_account: u32,
        #[arg(long)]
        json: bool,
    },
    /// List keys (token prefixes only).
    List {
        /// Only the keys of this account.
        #[arg(long)]
        account: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show one key.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Change name, expiry, platforms, rate limit or media delivery; the token stays the same.
    Edit {
        id: String,
        #[arg(long)]
        name: Option<String>,
        /// YYYY-MM-DD (last valid day, UTC) or `never`.
        #[arg(long)]
        expires: Option<String>,
        /// `all` or a comma list of platform ids.
        #[arg(long)]
        platforms: Option<String>,
        /// Requests per minute, `off`, or `default` (the service default).
        #[arg(long)]
        rate_limit: Option<String>,
        /// Default media delivery when a parse does not say: `direct`, `tunnel`, or `default`.
        #[arg(long)]
        delivery: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Give the key a new token (printed once); the old token stops working at once.
    Reset {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Create or rotate the key's webhook secret (printed once): deliveries
    /// sent from now on are signed with it only.
    WebhookSecret {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete a key; its token stops working at once. Its usage stays in the ledger.
    Delete {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum AccountsCommand {
    /// Create an account with a zero balance.
    Create {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// List accounts with balances.
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
        /// Why (kept in the account's grants log).
        #[arg(long)]
        reason: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Set an account's balance (created if missing); the difference is recorded.
    Set {
        #[arg(long, default_value = "default")]
        account: String,
        amount: i64,
        /// Why (kept in the account's grants log).
        #[arg(long)]
        reason: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show balances: granted, spent, left (every account without --account).
    Show {
        #[arg(long)]
        account: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

/// `mediaparse usage`: the ledger, filtered and summed.
#[derive(Args, Debug)]
pub struct UsageArgs {
    #[arg(long)]
    pub account: Option<String>,
    /// A key id (`key_…`), deleted keys included.
    #[arg(long)]
    pub key: Option<String>,
    #[arg(long)]
    pub platform: Option<String>,
    /// Start: YYYY-MM-DD (from its first second, UTC), RFC 3339 or unix seconds.
    #[arg(long)]
    pub from: Option<String>,
    /// End: YYYY-MM-DD (through its last second, UTC), or an exclusive RFC 3339 time / unix seconds.
    #[arg(long)]
    pub to: Option<String>,
    /// How many of the most recent charges to list.
    #[arg(long, default_value_t = 20)]
    pub entries: usize,
    #[arg(long)]
    pub json: bool,
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string(value)?);
    Ok(())
}

/// `--fixed-auth-clock`: RFC 3339 or unix seconds.
pub fn parse_instant(value: &str) -> Result<i64, String> {
    chrono::DateTime::parse_from_rfc3339(value.trim())
        .map(|t| t.timestamp())
        .or_else(|_| value.trim().parse::<i64>())
        .map_err(|_| format!("expected an RFC 3339 time or unix seconds, got {value:?}"))
}

fn key_line(k: &KeyView) -> String {
    let platforms = match &k.platforms {
        serde_json::Value::Array(list) => list
            .iter()
            .filter_map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(","),
        _ => "all".into(),
    };
    let rate = match k.rate_limit_per_minute {
        None => "default".to_string(),
        Some(0) => "off".to_string(),
        Some(n) => format!("{n}/min"),
    };
    format!(
        "{}  {}  account={}  token={}…  expires={}  platforms={}  rate={}  {}",
        k.id,
        k.name,
        k.account,
        k.token_prefix,
        k.expires_on.as_deref().unwrap_or("never"),
        platforms,
        rate,
        k.status
    )
}

pub fn keys(db: &DbLocation, command: KeysCommand) -> anyhow::Result<i32> {
    let store = Store::connect(db)?;
    match command {
        KeysCommand::Create {
            name,
            account,
            expires,
            platforms,
            rate_limit,
            max_keys_per_account,
            json,
        } => {
            let spec = KeySpec {
                name,
                account,
                expires_on: auth::parse_expiry(expires.as_deref().unwrap_or("never"))
                    .map_err(anyhow::Error::msg)?,
                platforms: auth::parse_platforms(&platforms, &crate::cli::installed_platforms())
                    .map_err(anyhow::Error::msg)?,
                rate_limit_per_minute: match rate_limit.as_deref() {
                    Some(v) => operator::parse_rate_limit(v)?,
                    None => None,
                },
            };
            let issued = awaited(operator::create_key_within(
                &store,
                spec,
                max_keys_per_account,
                now(),
            ))??;
            if json {
                print_json(&issued)?;
            } else {
                println!("created {}", key_line(&issued.key));
                println!("token (shown once, store it now): {}", issued.token);
            }
        }
        KeysCommand::List { account, json } => {
            let keys = awaited(operator::list_keys(&store, account.as_deref(), now()))??;
            if json {
                print_json(&keys)?;
            } else {
                for k in &keys {
                    println!("{}", key_line(k));
                }
            }
        }
        KeysCommand::Show { id, json } => {
            let key = awaited(operator::get_key(&store, &id, now()))??;
            if json {
                print_json(&key)?;
            } else {
                println!("{}", key_line(&key));
            }
        }
        KeysCommand::Edit {
            id,
            name,
            expires,
            platforms,
            rate_limit,
            delivery,
            json,
        } => {
            let edit = KeyEdit {
                name,
                expires_on: expires
                    .as_deref()
                    .map(auth::parse_expiry)
                    .transpose()
                    .map_err(anyhow::Error::msg)?,
                platforms: platforms
                    .as_deref()
                    .map(|p| auth::parse_platforms(p, &crate::cli::installed_platforms()))
                    .transpose()
                    .map_err(anyhow::Error::msg)?,
                rate_limit_per_minute: rate_limit
                    .as_deref()
                    .map(operator::parse_rate_limit)
                    .transpose()?,
            };
            if let Some(delivery) = delivery {
                // Delivery alone is an edit too; the other fields go through edit_key.
                if !edit.is_empty() {
                    awaited(operator::edit_key(&store, &id, edit, now()))??;
                }
                let key = awaited(operator::set_key_delivery(&store, &id, &delivery, now()))??;
                if json {
                    print_json(&key)?;
                } else {
                    let shown = key.delivery.as_deref().unwrap_or("default (direct)");
                    println!("edited {}  delivery {shown}", key_line(&key.key));
                }
                return Ok(0);
            }
            let key = awaited(operator::edit_key(&store, &id, edit, now()))??;
            if json {
                print_json(&key)?;
            } else {
                println!("edited {}", key_line(&key));
            }
        }
        KeysCommand::Reset { id, json } => {
            let issued = awaited(operator::reset_key(&store, &id, now()))??;
            if json {
                print_json(&issued)?;
            } else {
                println!("reset {}", key_line(&issued.key));
                println!(
                    "new token (shown once, the old one no longer works): {}",
                    issued.token
                );
            }
        }
        KeysCommand::WebhookSecret { id, json } => {
            let issued = awaited(operator::rotate_webhook_secret(&store, &id, now()))??;
            if json {
                print_json(&issued)?;
            } else {
                let verb = if issued.rotated { "rotated" } else { "created" };
                println!("{verb} the webhook secret of {}", issued.key_id);
                println!(
                    "webhook secret (shown once, store it now): {}",
                    issued.secret
                );
            }
        }
        KeysCommand::Delete { id, json } => {
            let key = awaited(operator::delete_key(&store, &id, now()))??;
            if json {
                print_json(&json!({"deleted": key}))?;
            } else {
                println!("deleted {}", key_line(&key));
            }
        }
    }
    Ok(0)
}

pub fn accounts(db: &DbLocation, command: AccountsCommand) -> anyhow::Result<i32> {
    let store = Store::connect(db)?;
    match command {
        AccountsCommand::Create { id, json } => {
            let created = store.create_account(&id, now())?;
            if !created {
                anyhow::bail!("account {id} already exists");
            }
            let account = awaited(operator::account(&store, &id, now()))??;
            if json {
                print_json(&account)?;
            } else {
                println!("created account {id} (balance 0)");
            }
        }
        AccountsCommand::List { json } => show_accounts(&store, None, json)?,
    }
    Ok(0)
}

fn show_accounts(store: &Store, account: Option<&str>, json: bool) -> anyhow::Result<()> {
    match account {
        Some(id) => {
            let view = awaited(operator::account(store, id, now()))??;
            if json {
                print_json(&view)?;
            } else {
                let a = &view.account;
                println!(
                    "account {}: balance {} (granted {}, spent {}, held {}), {} keys",
                    a.id, a.balance, a.granted, a.spent, a.held, a.keys
                );
                for k in &view.key_list {
                    println!("  {}", key_line(k));
                }
            }
        }
        None => {
            let all = store.accounts()?;
            if json {
                print_json(&all)?;
            } else {
                for a in &all {
                    println!(
                        "{}  balance={}  granted={}  spent={}  held={}  keys={}",
                        a.id, a.balance, a.granted, a.spent, a.held, a.keys
                    );
                }
            }
        }
    }
    Ok(())
}

pub fn credits(db: &DbLocation, command: CreditsCommand) -> anyhow::Result<i32> {
    let store = Store::connect(db)?;
    let (verb, change, json) = match command {
        CreditsCommand::Show { account, json } => {
            show_accounts(&store, account.as_deref(), json)?;
            return Ok(0);
        }
        CreditsCommand::Add {
            account,
            amount,
            reason,
            json,
        } => (
            "added",
            awaited(operator::add_credits(
                &store,
                &account,
                amount,
                reason.as_deref(),
                now(),
            ))??,
            json,
        ),
        CreditsCommand::Set {
            account,
            amount,
            reason,
            json,
        } => (
            "set",
            awaited(operator::set_credits(
                &store,
                &account,
                amount,
                reason.as_deref(),
                now(),
            ))??,
            json,
        ),
    };
    if json {
        print_json(&change)?;
    } else {
        println!(
            "account {}: {verb} ({:+}), balance {} → {}",
            change.account, change.change, change.previous, change.balance
        );
    }
    Ok(0)
}

pub fn usage(db: &DbLocation, args: UsageArgs) -> anyhow::Result<i32> {
    let store = Store::connect(db)?;
    let filter = UsageFilter {
        account: args.account,
        key: args.key,
        platform: args.platform.map(|p| p.to_ascii_lowercase()),
        from: args
            .from
            .as_deref()
            .map(|v| operator::parse_time_bound(v, false))
            .transpose()?,
        until: args
            .to
            .as_deref()
            .map(|v| operator::parse_time_bound(v, true))
            .transpose()?,
        entries: args.entries.min(10_000),
    };
    let view = awaited(operator::usage(
        &store,
        &filter,
        &crate::cli::installed_platforms(),
    ))??;
    if args.json {
        print_json(&view)?;
        return Ok(0);
    }
    let u = &view.usage;
    println!(
        "{} charged parses, {} credits ({} … {})",
        u.requests,
        u.credits,
        view.from.as_deref().unwrap_or("start"),
        view.until.as_deref().unwrap_or("now")
    );
    for (title, groups) in [("by platform", &u.by_platform), ("by key", &u.by_key)] {
        if !groups.is_empty() {
            println!("{title}:");
            for g in groups {
                println!(
                    "  {:<20} {:>8} parses {:>10} credits",
                    g.name, g.requests, g.credits
                );
            }
        }
    }
    let t = &view.tunnel;
    if t.streams > 0 {
        println!(
            "tunnel: {} bytes in {} streams (no credits)",
            t.bytes, t.streams
        );
        for (title, groups) in [("by platform", &t.by_platform), ("by key", &t.by_key)] {
            println!("  {title}:");
            for g in groups {
                println!(
                    "    {:<18} {:>14} bytes {:>8} streams",
                    g.name, g.bytes, g.streams
                );
            }
        }
    }
    if !u.entries.is_empty() {
        println!("most recent:");
        for e in &u.entries {
            println!(
                "  {}  {}  {}  {}  {} credits  {}",
                operator::rfc3339(e.time),
                e.account,
                e.key,
                e.platform,
                e.credits,
                e.request_id
            );
        }
    }
    Ok(0)
}

/// Run an operator call (`operator::*` awaits the store) to its end on a
/// runtime of this command's own: the CLI itself is blocking.
fn awaited<T>(call: impl std::future::Future<Output = T>) -> anyhow::Result<T> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(call))
}
