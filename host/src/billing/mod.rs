//! Billing: the price table (the only source for charging and for
//! `GET /api/v1/capabilities` `data.billing`), the balance pre-check before
//! any upstream request, and the charge — one conditional debit with its
//! ledger row — after a parse that returned media.

use crate::store::{Charge, Store, StoreResult};

/// Whether an account can pay for one parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Funds {
    Covered,
    Short { balance: i64 },
}

/// The pre-check: does `account`'s balance cover `price`? (Blocking: reads the store.)
pub fn precheck(store: &Store, account: &str, price: i64) -> StoreResult<Funds> {
    let balance = store.balance(account)?;
    Ok(if balance < price {
        Funds::Short { balance }
    } else {
        Funds::Covered
    })
}

/// What one successful parse is billed for.
#[derive(Clone, Debug)]
pub struct Bill {
    pub account: String,
    pub key_id: String,
    pub platform: String,
    pub price: i64,
    pub request_id: String,
}

/// Take the price and write the ledger row, or nothing if the balance no
/// longer covers it (a concurrent parse spent it). Blocking.
pub fn charge(store: &Store, bill: &Bill, now_unix_s: i64) -> StoreResult<Charge> {
    store.charge(
        &bill.account,
        &bill.key_id,
        &bill.platform,
        bill.price,
        &bill.request_id,
        now_unix_s,
    )
}

/// Credits one successful parse (at least one media URL) costs (SPEC.md Limits).
pub fn price(platform: &str) -> i64 {
    match platform {
        "youtube" => 3,
        "threads" | "kuaishou" => 2,
        "xiaohongshu" => 10,
        _ => 1,
    }
}

/// `{platform: credits}` for every platform, in SPEC order.
pub fn price_table() -> serde_json::Map<String, serde_json::Value> {
    mediaparse_sdk::spec::PLATFORMS
        .iter()
        .map(|p| ((*p).to_string(), price(p).into()))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn spec_prices() {
        let t = super::price_table();
        assert_eq!(t["youtube"], 3);
        assert_eq!(t["threads"], 2);
        assert_eq!(t["kuaishou"], 2);
        assert_eq!(t["xiaohongshu"], 10);
        assert_eq!(t["tiktok"], 1);
        assert_eq!(t.len(), 11);
    }
}
