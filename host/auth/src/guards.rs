//! What the doors share to keep expensive or guessable work behind cheap
//! checks: who the client is (behind trusted proxies), the password-hashing
//! pool, the failed-authentication throttles and the unknown-token cache,
//! and the bound on keys per account.

use std::net::IpAddr;
use std::time::Duration;

use http::HeaderMap;
use ipnet::IpNet;

use super::client_ip;
use super::failures::{FailureThrottle, UnknownTokens};
use super::password_pool::PasswordPool;

pub struct Guards {
    /// `--trusted-proxy`: peers whose `Forwarded` / `X-Forwarded-For` is
    /// believed (the configuration file's `trusted_proxies` add to them).
    pub trusted_proxies: Vec<IpNet>,
    /// Where argon2id runs, a few at a time.
    pub passwords: PasswordPool,
    /// Unknown, missing or expired customer tokens per client address.
    pub api_failures: FailureThrottle,
    /// Wrong operator tokens per client address (admin API).
    pub admin_failures: FailureThrottle,
    /// Token hashes recently found unknown.
    pub unknown_tokens: UnknownTokens,
    /// Keys one account may have (`--max-keys-per-account`).
    pub max_keys_per_account: u32,
}

impl Guards {
    pub fn new(
        trusted_proxies: Vec<IpNet>,
        max_keys_per_account: u32,
        password_hashes: usize,
    ) -> Guards {
        Guards {
            trusted_proxies,
            passwords: PasswordPool::new(password_hashes),
            // A client may get 30 401s at once, then one more every 2 s.
            api_failures: FailureThrottle::new(30, Duration::from_secs(2)),
            // The operator token: 10 wrong guesses, then one per 6 s.
            admin_failures: FailureThrottle::new(10, Duration::from_secs(6)),
            unknown_tokens: UnknownTokens::new(10_000, Duration::from_secs(60)),
            max_keys_per_account,
        }
    }

    /// The client's address: the peer, or what trusted proxies (ours and the
    /// configuration file's `more_trusted`) say it is. `None` without a peer
    /// (in-process tests).
    pub fn client_address(
        &self,
        peer: Option<IpAddr>,
        headers: &HeaderMap,
        more_trusted: &[IpNet],
    ) -> Option<IpAddr> {
        let peer = peer?;
        if more_trusted.is_empty() {
            return Some(client_ip::client_address(
                peer,
                headers,
                &self.trusted_proxies,
            ));
        }
        let all: Vec<IpNet> = self
            .trusted_proxies
            .iter()
            .chain(more_trusted)
            .copied()
            .collect();
        Some(client_ip::client_address(peer, headers, &all))
    }
}

impl Default for Guards {
    fn default() -> Self {
        Guards::new(
            Vec::new(),
            mediaparse_store::DEFAULT_MAX_KEYS_PER_ACCOUNT,
            PasswordPool::default_size(),
        )
    }
}
