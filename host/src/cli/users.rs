//! `mediaparse users invite|list`: console users. An invitation
//! prints a one-time link that sets the user's password; the same function
//! serves `POST /api/v1/admin/users` and the operator console.

use clap::Subcommand;

use crate::http::console::invitation;
use crate::store::{DbLocation, Store};

#[derive(Subcommand, Debug)]
pub enum UsersCommand {
    /// Invite a user to an account (created if new); prints a one-time link
    /// to set a password. Inviting a known user again issues a new link.
    Invite {
        #[arg(long)]
        account: String,
        #[arg(long)]
        email: String,
        /// The service's public address, the start of the link.
        #[arg(
            long,
            env = "MEDIAPARSE_PUBLIC_BASE_URL",
            default_value = "http://127.0.0.1:8080"
        )]
        base_url: String,
        #[arg(long)]
        json: bool,
    },
    /// List users (no secrets).
    List {
        #[arg(long)]
        account: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

pub fn users(db: &DbLocation, command: UsersCommand) -> anyhow::Result<i32> {
    let store = Store::connect(db)?;
    let now = chrono::Utc::now().timestamp();
    match command {
        UsersCommand::Invite {
            account,
            email,
            base_url,
            json,
        } => {
            let invited = invitation(&store, &base_url, &account, &email, now)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&invited)?);
            } else {
                println!(
                    "invited {} to account {}; one-time link (valid until {}):\n{}",
                    invited.user.email, invited.user.account_id, invited.expires_at, invited.link
                );
            }
        }
        UsersCommand::List { account, json } => {
            let users = store.users(account.as_deref())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&users)?);
            } else {
                for u in &users {
                    let state = if u.active { "active" } else { "invited" };
                    println!("{} {} account {} ({state})", u.id, u.email, u.account_id);
                }
            }
        }
    }
    Ok(0)
}
