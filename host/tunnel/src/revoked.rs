//! A tunnel token lives only as long as the API key it was issued to: at
//! every stream (not only when the token is minted) the key is read from the
//! store, and a key that was deleted, reset (its `rotated_at` or token prefix
//! changed) or has expired revokes the token (`410 tunnel_expired`).

use super::{Claims, TokenError};
use mediaparse_store::{KeyRecord, Store, StoreError};

/// Why a key's state could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Revoked(#[from] TokenError),
    #[error(transparent)]
    Store(StoreError),
}

/// Whether `key` (as read now) still honours tokens issued under `claims`,
/// `key_clock_s` being the key-expiry clock.
pub fn honours(key: &KeyRecord, claims: &Claims, key_clock_s: i64) -> bool {
    key.account_id == claims.account
        && key.rotated_at == claims.key_rotated_at
        && claims
            .key_token_prefix
            .as_ref()
            .is_none_or(|p| *p == key.token_prefix)
        && !mediaparse_auth::is_expired(key, key_clock_s)
}

/// Read the key of `claims` (off the async threads) and refuse the token
/// if the key no longer honours it.
pub async fn check(store: &Store, claims: &Claims, key_clock_s: i64) -> Result<(), CheckError> {
    match store.key_async(&claims.key_id).await {
        Ok(key) if honours(&key, claims, key_clock_s) => Ok(()),
        Ok(_) | Err(StoreError::NotFound(..)) => Err(TokenError::Revoked.into()),
        Err(e) => Err(CheckError::Store(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> KeyRecord {
        KeyRecord::for_tests("k1", "acme")
    }

    fn claims() -> Claims {
        Claims {
            url: "https://cdn.example/v.mp4".into(),
            headers: Vec::new(),
            egress: None,
            platform: "tiktok".into(),
            account: "acme".into(),
            key_id: "k1".into(),
            key_rotated_at: None,
            key_token_prefix: Some("mp_live_ab".into()),
            expires_at: i64::MAX,
        }
    }

    #[test]
    fn reset_expiry_and_another_account_revoke() {
        let now = 1_800_000_000;
        assert!(honours(&key(), &claims(), now));
        let reset = KeyRecord {
            rotated_at: Some(now),
            ..key()
        };
        assert!(!honours(&reset, &claims(), now));
        let same_second_reset = KeyRecord {
            token_prefix: "mp_live_cd".into(),
            ..key()
        };
        assert!(!honours(&same_second_reset, &claims(), now));
        let expired = KeyRecord {
            expires_on: Some("2020-01-01".into()),
            ..key()
        };
        assert!(!honours(&expired, &claims(), now));
        let moved = KeyRecord {
            account_id: "other".into(),
            ..key()
        };
        assert!(!honours(&moved, &claims(), now));
        // A token sealed before the prefix was a claim still opens until a reset.
        let old = Claims {
            key_token_prefix: None,
            ..claims()
        };
        assert!(honours(&key(), &old, now));
    }
}
