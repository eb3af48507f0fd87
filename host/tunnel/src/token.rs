//! Tunnel tokens: the claims of one media URL sealed with XChaCha20-Poly1305
//! under a service key. The caller can neither read (upstream URL, cookie,
//! exit) nor alter them; the token is the capability.
//!
//! Wire form, base64url without padding:
//! `version (1) ‖ key id (1) ‖ nonce (24) ‖ ciphertext+tag` — the version and
//! key id are the AEAD's associated data, so they cannot be swapped either.
//!
//! Keys rotate: the first key of the [`Keyring`] seals; every key is accepted
//! for opening until its own `not_after` (so tokens sealed before a rotation
//! keep working until the old key is retired).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use mediaparse_sdk::Header;
use serde::{Deserialize, Serialize};

const VERSION: u8 = 1;
const NONCE_LEN: usize = 24;

/// What a token carries. Short field names: tokens end up in URLs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    /// The upstream media URL.
    #[serde(rename = "u")]
    pub url: String,
    /// Headers (cookie included) the extractor said the media needs.
    #[serde(rename = "h", default)]
    pub headers: Vec<(String, String)>,
    /// The exit/session label of the parse (opaque; the fetcher resolves it).
    #[serde(rename = "e", default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<String>,
    #[serde(rename = "p")]
    pub platform: String,
    #[serde(rename = "a")]
    pub account: String,
    #[serde(rename = "k")]
    pub key_id: String,
    /// The key's `rotated_at` when the token was issued: a reset since
    /// (a different value at stream time) revokes the token.
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub key_rotated_at: Option<i64>,
    /// The key's token display prefix when the token was issued (a reset
    /// changes it, even within the second `rotated_at` counts in).
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub key_token_prefix: Option<String>,
    /// Unix seconds after which the token answers `410 tunnel_expired`.
    #[serde(rename = "x")]
    pub expires_at: i64,
}

impl Claims {
    pub fn sdk_headers(&self) -> Vec<Header> {
        self.headers
            .iter()
            .map(|(n, v)| Header::new(n.clone(), v.clone()))
            .collect()
    }
}

/// Why a token was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not a token, altered, or sealed by a key the service no longer accepts.
    #[error("unknown or altered tunnel token")]
    Invalid,
    #[error("tunnel token expired")]
    Expired,
    /// The API key it was issued to was reset, deleted or has expired since.
    #[error("the tunnel token's API key was reset, deleted or expired")]
    Revoked,
}

/// One service key.
#[derive(Clone)]
pub struct TunnelKey {
    pub id: u8,
    cipher: XChaCha20Poly1305,
    /// Unix seconds after which tokens under this key are refused; `None`: never.
    pub not_after: Option<i64>,
}

impl std::fmt::Debug for TunnelKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TunnelKey")
            .field("id", &self.id)
            .field("not_after", &self.not_after)
            .finish_non_exhaustive()
    }
}

/// Why a key specification was refused (never quotes key material).
#[derive(Debug, thiserror::Error)]
pub enum KeySpecError {
    #[error("tunnel key #{0}: expected id:base64key[:not_after_unix_seconds]")]
    Format(usize),
    #[error("tunnel key #{0}: the key must be 32 bytes of base64")]
    Key(usize),
    #[error("tunnel key #{0}: id must be 0..=255 and unique")]
    Id(usize),
}

/// The service keys: the first seals, all open.
#[derive(Clone, Debug)]
pub struct Keyring {
    keys: Vec<TunnelKey>,
}

impl Keyring {
    /// A single fresh random key (tokens do not survive a restart).
    pub fn random() -> Keyring {
        let key = XChaCha20Poly1305::generate_key(&mut OsRng);
        Keyring {
            keys: vec![TunnelKey {
                id: 0,
                cipher: XChaCha20Poly1305::new(&key),
                not_after: None,
            }],
        }
    }

    /// Parse `id:base64key[:not_after]`, comma separated, sealing key first
    /// (`MEDIAPARSE_TUNNEL_KEYS`). The key is 32 bytes, standard or URL-safe base64.
    pub fn parse(spec: &str) -> Result<Keyring, KeySpecError> {
        let mut keys: Vec<TunnelKey> = Vec::new();
        for (i, part) in spec
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .enumerate()
        {
            let n = i + 1;
            let mut fields = part.split(':');
            let (Some(id), Some(key)) = (fields.next(), fields.next()) else {
                return Err(KeySpecError::Format(n));
            };
            let not_after = match fields.next() {
                Some(s) => Some(s.parse::<i64>().map_err(|_| KeySpecError::Format(n))?),
                None => None,
            };
            if fields.next().is_some() {
                return Err(KeySpecError::Format(n));
            }
            let id: u8 = id.parse().map_err(|_| KeySpecError::Id(n))?;
            if keys.iter().any(|k| k.id == id) {
                return Err(KeySpecError::Id(n));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(key)
                .or_else(|_| URL_SAFE_NO_PAD.decode(key))
                .map_err(|_| KeySpecError::Key(n))?;
            let cipher =
                XChaCha20Poly1305::new_from_slice(&bytes).map_err(|_| KeySpecError::Key(n))?;
            keys.push(TunnelKey {
                id,
                cipher,
                not_after,
            });
        }
        if keys.is_empty() {
            return Err(KeySpecError::Format(1));
        }
        Ok(Keyring { keys })
    }

    /// Seal `claims` with the current (first) key.
    pub fn seal(&self, claims: &Claims) -> String {
        let key = &self.keys[0];
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let aad = [VERSION, key.id];
        // Serializing plain strings and integers cannot fail; an empty
        // plaintext would only make a token that never opens.
        let plain = serde_json::to_vec(claims).unwrap_or_default();
        let sealed = key
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: &plain,
                    aad: &aad,
                },
            )
            .unwrap_or_default();
        let mut out = Vec::with_capacity(2 + NONCE_LEN + sealed.len());
        out.extend_from_slice(&aad);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        URL_SAFE_NO_PAD.encode(out)
    }

    /// Open a token at `now` (unix seconds).
    pub fn open(&self, token: &str, now: i64) -> Result<Claims, TokenError> {
        let raw = URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| TokenError::Invalid)?;
        if raw.len() < 2 + NONCE_LEN || raw[0] != VERSION {
            return Err(TokenError::Invalid);
        }
        let key = self
            .keys
            .iter()
            .find(|k| k.id == raw[1])
            .filter(|k| k.not_after.is_none_or(|t| now <= t))
            .ok_or(TokenError::Invalid)?;
        let nonce = XNonce::from_slice(&raw[2..2 + NONCE_LEN]);
        let plain = key
            .cipher
            .decrypt(
                nonce,
                Payload {
                    msg: &raw[2 + NONCE_LEN..],
                    aad: &raw[..2],
                },
            )
            .map_err(|_| TokenError::Invalid)?;
        let claims: Claims = serde_json::from_slice(&plain).map_err(|_| TokenError::Invalid)?;
        if now > claims.expires_at {
            return Err(TokenError::Expired);
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(expires_at: i64) -> Claims {
        Claims {
            url: "https://v16.cdn.example/secret/video.mp4".into(),
            headers: vec![("cookie".into(), "tt_chain_token=SECRETCOOKIE".into())],
            egress: Some("exit-7".into()),
            platform: "tiktok".into(),
            account: "acct".into(),
            key_id: "key1".into(),
            key_rotated_at: None,
            key_token_prefix: Some("mp_live_ab".into()),
            expires_at,
        }
    }

    const K1: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const K2: &str = "HxweHRwbGhkYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgE=";

    #[test]
    fn round_trip_hides_the_claims() {
        let ring = Keyring::parse(&format!("1:{K1}")).unwrap();
        let token = ring.seal(&claims(1000));
        assert_eq!(ring.open(&token, 999).unwrap(), claims(1000));
        let raw = URL_SAFE_NO_PAD.decode(&token).unwrap();
        let text = String::from_utf8_lossy(&raw);
        assert!(
            !text.contains("cdn.example")
                && !text.contains("SECRETCOOKIE")
                && !text.contains("exit-7")
        );
    }

    #[test]
    fn expired_altered_and_unknown_key_are_refused() {
        let ring = Keyring::parse(&format!("1:{K1}")).unwrap();
        let token = ring.seal(&claims(1000));
        assert_eq!(ring.open(&token, 1001), Err(TokenError::Expired));
        let mut raw = URL_SAFE_NO_PAD.decode(&token).unwrap();
        for i in [1, 5, raw.len() - 1] {
            raw[i] ^= 1;
            assert_eq!(
                ring.open(&URL_SAFE_NO_PAD.encode(&raw), 0),
                Err(TokenError::Invalid),
                "byte {i}"
            );
            raw[i] ^= 1;
        }
        let other = Keyring::parse(&format!("1:{K2}")).unwrap();
        assert_eq!(other.open(&token, 0), Err(TokenError::Invalid));
        assert_eq!(ring.open("not a token", 0), Err(TokenError::Invalid));
        assert_eq!(ring.open("", 0), Err(TokenError::Invalid));
    }

    #[test]
    fn rotation_keeps_old_tokens_until_the_old_key_retires() {
        let old = Keyring::parse(&format!("1:{K1}")).unwrap();
        let token = old.seal(&claims(10_000));
        let rotated = Keyring::parse(&format!("2:{K2},1:{K1}:5000")).unwrap();
        assert_eq!(rotated.open(&token, 4000).unwrap().url, claims(0).url);
        assert_eq!(rotated.open(&token, 5001), Err(TokenError::Invalid));
        // New tokens are sealed with key 2, which the old ring does not know.
        let fresh = rotated.seal(&claims(10_000));
        assert_eq!(URL_SAFE_NO_PAD.decode(&fresh).unwrap()[1], 2);
        assert_eq!(old.open(&fresh, 0), Err(TokenError::Invalid));
    }

    #[test]
    fn key_specs_are_checked_without_echoing_keys() {
        for bad in [
            "",
            "1",
            "x:AAAA",
            "1:AAAA",
            &format!("1:{K1},1:{K2}"),
            &format!("1:{K1}:soon"),
        ] {
            let e = Keyring::parse(bad).unwrap_err().to_string();
            assert!(!e.contains(K1), "{e}");
        }
    }
}
