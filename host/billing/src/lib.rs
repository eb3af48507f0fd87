//! Billing: the price (the only source for charging and for
//! `GET /api/v1/capabilities` `data.billing`: a platform's `platform.toml`
//! `price`, unless the operator configuration sets `[platforms.<id>] price`),
//! the balance pre-check before
//! any upstream request, and the charge — one conditional debit with its
//! ledger row — after a parse that returned media, settled across database
//! outages. This crate names nothing of the host above it but
//! `mediaparse-core` and `mediaparse-store` (and the platform catalogue for
//! the prices).

use mediaparse_catalogue::{Catalogue, Manifest};

use mediaparse_store::{Charge, Store, StoreResult};

/// Whether an account can pay for one parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Funds {
    Covered,
    Short { balance: i64 },
}

/// The pre-check: does `account`'s balance cover `price`? On SQLite it is
/// answered on the calling thread unless it would wait, and never waits for
/// a group of charges being committed ([`Store::balance_for_charge_async`]).
pub async fn precheck(store: &Store, account: &str, price: i64) -> StoreResult<Funds> {
    // Under the write lock: a locked database fails here, before any upstream request.
    let balance = store.balance_for_charge_async(account).await?;
    Ok(if balance < price {
        Funds::Short { balance }
    } else {
        Funds::Covered
    })
}

pub use mediaparse_store::Bill;

/// Take the price and write the ledger row, or nothing if the balance no
/// longer covers it (a concurrent parse spent it). At most once per request
/// id: the retry of a charged request (same idempotency key) takes nothing
/// more. Blocking.
pub fn charge(store: &Store, bill: &Bill, now_unix_s: i64) -> StoreResult<Charge> {
    store.charge_once(
        &bill.account,
        &bill.key_id,
        &bill.platform,
        bill.price,
        &bill.request_id,
        now_unix_s,
    )
}

/// [`charge`] for async callers, settled when the database goes away
/// mid-charge. On SQLite each try queues for the store's writer thread and
/// is awaited (it shares one commit with the charges queued beside it); on
/// PostgreSQL each try runs on a blocking thread. The wait between tries
/// (doubling, at most 1 s) is an async sleep, so a database outage holds no
/// blocking thread per waiting charge. Tries stop after
/// [`mediaparse_store::CHARGE_SETTLE_BUDGET`]; then the error reaches the caller.
pub async fn charge_settled(store: &Store, bill: Bill, now_unix_s: i64) -> StoreResult<Charge> {
    settled(&bill, || store.charge_attempt_async(&bill, now_unix_s)).await
}

/// [`charge_settled`] for a parse with credits set aside: hold `hold`
/// becomes the charge (`Store::charge_held_async`), settled the same way.
pub async fn charge_held_settled(
    store: &Store,
    hold: &str,
    bill: Bill,
    now_unix_s: i64,
) -> StoreResult<Charge> {
    settled(&bill, || store.charge_held_async(hold, &bill, now_unix_s)).await
}

/// Try `attempt` until its outcome is known or the budget is spent.
async fn settled<'a, F, Fut>(bill: &Bill, attempt: F) -> StoreResult<Charge>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = StoreResult<Charge>> + 'a,
{
    use mediaparse_store::{CHARGE_SETTLE_BUDGET, StoreError};
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(50);
    loop {
        // A trip to the writer thread (SQLite) or a blocking thread (PostgreSQL).
        mediaparse_core::handoffs::trip();
        match attempt().await {
            Err(StoreError::Unavailable(why)) if started.elapsed() < CHARGE_SETTLE_BUDGET => {
                tracing::warn!(request_id = %bill.request_id, error = %why, "charge outcome unknown; retrying to settle it");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(std::time::Duration::from_secs(1));
            }
            settled => return settled,
        }
    }
}

/// How often expired credit holds are looked for.
pub const HOLD_SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// Give back, at start and then every [`HOLD_SWEEP_EVERY`], the credits of
/// holds whose parse never settled them (the process running it died;
/// `store::holds`). Runs for the life of the service.
pub async fn sweep_expired_holds(store: Store) {
    let mut tick = tokio::time::interval(HOLD_SWEEP_EVERY);
    loop {
        tick.tick().await;
        let now = mediaparse_core::clock::unix_now_s();
        match store.release_expired_holds_async(now).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(released = n, "expired credit holds given back"),
            Err(e) => tracing::warn!(error = %e, "expired credit holds not swept"),
        }
    }
}

/// Credits one successful parse (at least one media URL) of `manifest`'s
/// platform costs: the operator's override (`[platforms.<id>] price`,
/// `OperatorConfig::price_override`) or the file's price.
pub fn price(manifest: &Manifest, override_price: Option<i64>) -> i64 {
    override_price.unwrap_or(manifest.price)
}

/// `{platform: credits}` for every platform of `catalogue`, in listing order.
pub fn price_table(
    catalogue: &Catalogue,
    override_price: impl Fn(&str) -> Option<i64>,
) -> serde_json::Map<String, serde_json::Value> {
    catalogue
        .iter()
        .map(|m| (m.id.clone(), price(m, override_price(&m.id)).into()))
        .collect()
}

#[cfg(test)]
mod settle_tests;

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn bundled() -> Catalogue {
        Catalogue::from_source_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extractors"))
            .unwrap()
    }

    #[test]
    fn spec_prices() {
        let t = price_table(&bundled(), |_| None);
        assert_eq!(t["youtube"], 3);
        assert_eq!(t["threads"], 2);
        assert_eq!(t["kuaishou"], 2);
        assert_eq!(t["xiaohongshu"], 10);
        assert_eq!(t["tiktok"], 1);
        assert_eq!(t.keys().next().map(String::as_str), Some("tiktok"));
    }

    #[test]
    fn the_operator_overrides_a_price() {
        let t = price_table(&bundled(), |id| (id == "youtube").then_some(5));
        assert_eq!(
            (t["youtube"].clone(), t["threads"].clone()),
            (5.into(), 2.into())
        );
    }
}
