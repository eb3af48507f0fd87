//! Accounts and their balances: creation, adding and setting credits,
//! summaries, the ledger's totals. Each backend's body is in
//! `sqlite/accounts.rs` and `pg/accounts.rs`.
//!
//! Every change to a balance other than a charge writes a `credit_grants` row
//! with the signed amount it made (`add`: the amount; `set`: new − old), and
//! every charge writes a ledger row, both in the transaction that moves the
//! balance. So for every account, at every commit:
//! `Σ credit_grants − Σ ledger − Σ credit_holds = balance` (holds: `holds.rs`) ([`AccountSummary::consistent`]).

use crate::{Backend, Store, StoreError, StoreResult, dispatch, dispatch_tx, sqlite};

/// The largest balance an account may hold (keeps SQLite integer arithmetic exact).
pub const MAX_CREDITS: i64 = 1_000_000_000_000;

/// An account with its balance and the totals that explain it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountSummary {
    pub id: String,
    pub balance: i64,
    /// Σ of credit grants (adds, and the signed differences of sets).
    pub granted: i64,
    /// Σ of the ledger: credits taken by successful parses.
    pub spent: i64,
    pub keys: i64,
    pub created_at: i64,
    /// Σ of credit holds: credits set aside for parses running now.
    pub held: i64,
}

impl AccountSummary {
    /// The books balance: what was granted minus what was spent and what
    /// is held for parses running now is what is left.
    pub fn consistent(&self) -> bool {
        self.granted - self.spent - self.held == self.balance
    }
}

/// The result of adding to or setting a balance.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreditChange {
    pub account: String,
    pub previous: i64,
    pub balance: i64,
    /// Signed difference recorded in `credit_grants`.
    pub change: i64,
}

/// One row of an account's grants log: an `add`, or a `set` recorded as the
/// signed difference it made, with the operator's reason when one was given.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantRecord {
    pub id: i64,
    pub kind: String,
    pub credits: i64,
    pub reason: Option<String>,
    pub created_at: i64,
}

/// The longest reason kept with a grant, in characters.
pub const MAX_REASON_CHARS: usize = 200;

/// A reason trimmed, `None` when blank, refused when longer than [`MAX_REASON_CHARS`].
pub fn checked_reason(reason: Option<&str>) -> StoreResult<Option<&str>> {
    let Some(r) = reason.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    if r.chars().count() > MAX_REASON_CHARS || r.chars().any(char::is_control) {
        return Err(StoreError::Invalid(format!(
            "a reason is at most {MAX_REASON_CHARS} characters on one line"
        )));
    }
    Ok(Some(r))
}

/// Account ids are short printable names: letters, digits, `-`, `_`, `.`, `@`.
pub fn validate_account_id(id: &str) -> StoreResult<()> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'@'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "account id {id:?} must be 1-64 characters of letters, digits, '-', '_', '.', '@'"
        )))
    }
}

impl Store {
    /// Create an account with a zero balance; `false` when it already exists.
    pub fn create_account(&self, id: &str, now: i64) -> StoreResult<bool> {
        validate_account_id(id)?;
        dispatch!(
            self,
            |c| sqlite::accounts::create_account(c, id, now),
            |p| p.create_account(id, now)
        )
    }

    /// Set the balance to `amount` (creating the account), recording the
    /// difference as a grant, in one transaction.
    pub fn set_credits(&self, account: &str, amount: i64, now: i64) -> StoreResult<CreditChange> {
        self.set_credits_noted(account, amount, None, now)
    }

    /// Set the balance with the operator's reason, kept in the grants log.
    pub fn set_credits_noted(
        &self,
        account: &str,
        amount: i64,
        reason: Option<&str>,
        now: i64,
    ) -> StoreResult<CreditChange> {
        let reason = checked_set(account, amount, reason)?;
        dispatch_tx!(
            self,
            |c| sqlite::accounts::set_credits_noted(c, account, amount, reason, now),
            |p| p.set_credits(account, amount, reason, now)
        )
    }

    /// An account's grants log, newest first (at most `limit` rows).
    pub fn grants(&self, account: &str, limit: usize) -> StoreResult<Vec<GrantRecord>> {
        dispatch!(self, |c| sqlite::accounts::grants(c, account, limit), |p| p
            .grants(account, limit))
    }

    pub fn account(&self, id: &str) -> StoreResult<AccountSummary> {
        dispatch!(self, |c| sqlite::accounts::account(c, id), |p| p
            .account(id))
    }

    pub fn accounts(&self) -> StoreResult<Vec<AccountSummary>> {
        dispatch!(self, |c| sqlite::accounts::accounts(c), |p| p.accounts())
    }
}

impl Store {
    /// Create the account if it does not exist.
    pub fn ensure_account(&self, account: &str, now: i64) -> StoreResult<()> {
        dispatch!(
            self,
            |c| sqlite::accounts::ensure_account(c, account, now),
            |p| p.ensure_account(account, now)
        )
    }

    pub fn balance(&self, account: &str) -> StoreResult<i64> {
        dispatch!(self, |c| sqlite::accounts::balance(c, account), |p| p
            .balance(account))
    }

    /// Add credits (creating the account); returns the new balance.
    pub fn add_credits(&self, account: &str, amount: i64, now: i64) -> StoreResult<i64> {
        self.add_credits_noted(account, amount, None, now)
    }

    /// Add credits with the operator's reason, kept in the grants log.
    pub fn add_credits_noted(
        &self,
        account: &str,
        amount: i64,
        reason: Option<&str>,
        now: i64,
    ) -> StoreResult<i64> {
        let reason = checked_add(account, amount, reason)?;
        dispatch_tx!(
            self,
            |c| sqlite::accounts::add_credits_noted(c, account, amount, reason, now),
            |p| p.add_credits(account, amount, reason, now)
        )
    }

    /// Sum of credits in the ledger for an account (or all accounts).
    pub fn ledger_sum(&self, account: Option<&str>) -> StoreResult<i64> {
        dispatch!(self, |c| sqlite::accounts::ledger_sum(c, account), |p| p
            .ledger_sum(account))
    }

    pub fn ledger_count(&self, account: Option<&str>) -> StoreResult<i64> {
        dispatch!(self, |c| sqlite::accounts::ledger_count(c, account), |p| p
            .ledger_count(account))
    }
}

/// The awaited twins of the account reads (see `awaited`).
impl Store {
    /// [`Store::balance`], awaited.
    pub async fn balance_async(&self, account: &str) -> StoreResult<i64> {
        let account = account.to_string();
        self.off_thread(move |s| s.balance(&account)).await
    }
}

/// A balance to set: the account id, the amount and the reason checked.
fn checked_set<'r>(
    account: &str,
    amount: i64,
    reason: Option<&'r str>,
) -> StoreResult<Option<&'r str>> {
    let reason = checked_reason(reason)?;
    if !(0..=MAX_CREDITS).contains(&amount) {
        return Err(StoreError::Invalid(format!(
            "a balance must be a number from 0 to {MAX_CREDITS}"
        )));
    }
    validate_account_id(account)?;
    Ok(reason)
}

/// Credits to add: the account id, the amount and the reason checked.
fn checked_add<'r>(
    account: &str,
    amount: i64,
    reason: Option<&'r str>,
) -> StoreResult<Option<&'r str>> {
    validate_account_id(account)?;
    let reason = checked_reason(reason)?;
    if amount <= 0 || amount > MAX_CREDITS {
        return Err(StoreError::Invalid(format!(
            "credits to add must be a number from 1 to {MAX_CREDITS}"
        )));
    }
    Ok(reason)
}

/// The awaited twins of the account writes and reports (see `awaited`).
impl Store {
    /// [`Store::create_account`], awaited.
    pub async fn create_account_async(&self, id: &str, now: i64) -> StoreResult<bool> {
        validate_account_id(id)?;
        let (a, b) = (id.to_string(), id.to_string());
        self.write_or_off_thread(
            move |c| sqlite::accounts::create_account(c, &a, now),
            move |s| s.create_account(&b, now),
        )
        .await
    }

    /// [`Store::set_credits_noted`], awaited.
    pub async fn set_credits_noted_async(
        &self,
        account: &str,
        amount: i64,
        reason: Option<&str>,
        now: i64,
    ) -> StoreResult<CreditChange> {
        let reason = checked_set(account, amount, reason)?.map(str::to_string);
        let (a, r) = (account.to_string(), reason.clone());
        let (b, q) = (account.to_string(), reason);
        self.write_or_off_thread(
            move |c| sqlite::accounts::set_credits_noted(c, &a, amount, r.as_deref(), now),
            move |s| s.set_credits_noted(&b, amount, q.as_deref(), now),
        )
        .await
    }

    /// [`Store::add_credits_noted`], awaited.
    pub async fn add_credits_noted_async(
        &self,
        account: &str,
        amount: i64,
        reason: Option<&str>,
        now: i64,
    ) -> StoreResult<i64> {
        let reason = checked_add(account, amount, reason)?.map(str::to_string);
        let (a, r) = (account.to_string(), reason.clone());
        let (b, q) = (account.to_string(), reason);
        self.write_or_off_thread(
            move |c| sqlite::accounts::add_credits_noted(c, &a, amount, r.as_deref(), now),
            move |s| s.add_credits_noted(&b, amount, q.as_deref(), now),
        )
        .await
    }

    /// [`Store::grants`], awaited.
    pub async fn grants_async(&self, account: &str, limit: usize) -> StoreResult<Vec<GrantRecord>> {
        let account = account.to_string();
        self.off_thread(move |s| s.grants(&account, limit)).await
    }

    /// [`Store::account`], awaited.
    pub async fn account_async(&self, id: &str) -> StoreResult<AccountSummary> {
        let id = id.to_string();
        self.off_thread(move |s| s.account(&id)).await
    }

    /// [`Store::accounts`], awaited.
    pub async fn accounts_async(&self) -> StoreResult<Vec<AccountSummary>> {
        self.off_thread(|s| s.accounts()).await
    }
}
