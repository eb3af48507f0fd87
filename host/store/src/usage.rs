//! Usage: ledger queries by account, key, platform and time range, with
//! totals, breakdowns and the most recent entries.

use crate::{Backend, Store, StoreResult, dispatch_read, sqlite};

/// Which ledger rows to read; every `None` matches all.
#[derive(Clone, Debug, Default)]
pub struct UsageFilter {
    pub account: Option<String>,
    pub key: Option<String>,
    pub platform: Option<String>,
    /// Unix seconds, inclusive.
    pub from: Option<i64>,
    /// Unix seconds, exclusive.
    pub until: Option<i64>,
    /// How many of the most recent entries to return (totals cover all rows).
    pub entries: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub requests: i64,
    pub credits: i64,
    pub by_platform: Vec<UsageGroup>,
    pub by_key: Vec<UsageGroup>,
    /// Most recent first.
    pub entries: Vec<UsageEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageGroup {
    pub name: String,
    pub requests: i64,
    pub credits: i64,
}

/// One charge.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageEntry {
    pub id: i64,
    /// Unix seconds (serialized as RFC 3339).
    #[serde(serialize_with = "as_rfc3339")]
    pub time: i64,
    pub account: String,
    pub key: String,
    pub platform: String,
    pub credits: i64,
    pub request_id: String,
}

fn as_rfc3339<S: serde::Serializer>(t: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&mediaparse_core::clock::rfc3339(*t))
}

/// A bound value of a usage query, converted by each backend.
pub(super) enum UsageParam {
    Text(String),
    Int(i64),
}

impl UsageFilter {
    /// The `WHERE` clause and its values; `placeholder(n)` writes the
    /// backend's n-th parameter (`?n` or `$n`).
    pub(super) fn where_clause(
        &self,
        placeholder: impl Fn(usize) -> String,
    ) -> (String, Vec<UsageParam>) {
        let mut conds = Vec::new();
        let mut params = Vec::new();
        let mut push = |cond: &str, v: UsageParam| {
            params.push(v);
            conds.push(format!("{cond} {}", placeholder(params.len())));
        };
        for (cond, v) in [
            ("account_id =", &self.account),
            ("key_id =", &self.key),
            ("platform =", &self.platform),
        ] {
            if let Some(v) = v {
                push(cond, UsageParam::Text(v.clone()));
            }
        }
        if let Some(from) = self.from {
            push("created_at >=", UsageParam::Int(from));
        }
        if let Some(until) = self.until {
            push("created_at <", UsageParam::Int(until));
        }
        let clause = if conds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conds.join(" AND "))
        };
        (clause, params)
    }
}

impl Store {
    pub fn usage(&self, filter: &UsageFilter) -> StoreResult<Usage> {
        dispatch_read!(self, |c| sqlite::usage::usage(c, filter), |p| p
            .usage(filter))
    }
}

/// Credit groups as the usage report shows them.
pub(crate) fn usage_groups(rows: Vec<(String, i64, i64)>) -> Vec<UsageGroup> {
    rows.into_iter()
        .map(|(name, requests, credits)| UsageGroup {
            name,
            requests,
            credits,
        })
        .collect()
}
