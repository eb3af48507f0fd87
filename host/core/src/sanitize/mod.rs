//! Platform data cleaning (DESIGN.md §8): one reviewed list of member names
//! that carry secrets or a person's private data, removed recursively for
//! every platform; integers beyond 2^53 become strings.
//!
//! Two readings of the same rules: [`sanitize`] walks a `Value` tree, and
//! [`text`] copies JSON text to JSON text in one pass without building one
//! (the way platform data travels from the guest to the answer).

pub mod text;

use serde_json::Value;

/// Normalized names (lower case, `_`/`-` removed) that are removed wherever
/// they occur as a member name.
const EXACT: &[&str] = &[
    "auth",
    "sig",
    "email",
    "phone",
    "mobile",
    "tel",
    "ip",
    "clientip",
    "userip",
    "remoteip",
    "ipaddr",
    "ipaddress",
    "iplocation",
    "latitude",
    "longitude",
    "lat",
    "lng",
    "lon",
    "coordinates",
    "geo",
    "geopoint",
    "gps",
    "birthday",
    "dateofbirth",
    "pwd",
];

/// Fragments that make a member name sensitive wherever they appear in it.
const CONTAINS: &[&str] = &[
    "cookie",
    "token",
    "password",
    "passwd",
    "secret",
    "session",
    "authorization",
    "csrf",
    "xsrf",
    "signature",
    "apikey",
    "privatekey",
    "credential",
    "email",
    "phonenumber",
    "mobilephone",
    "ipaddress",
    "iplocation",
];

/// Is a member with this name removed?
pub fn is_sensitive(key: &str) -> bool {
    // Member names are short ASCII: normalize on the stack (no allocation
    // per member); anything else takes the general path.
    let mut buf = [0u8; 64];
    let mut len = 0;
    for b in key.bytes() {
        if b == b'_' || b == b'-' {
            continue;
        }
        if !b.is_ascii() || len == buf.len() {
            return is_sensitive_normalized(&normalize(key));
        }
        buf[len] = b.to_ascii_lowercase();
        len += 1;
    }
    // Only ASCII bytes were copied: always valid UTF-8.
    std::str::from_utf8(&buf[..len]).is_ok_and(is_sensitive_normalized)
}

fn normalize(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn is_sensitive_normalized(norm: &str) -> bool {
    EXACT.contains(&norm) || CONTAINS.iter().any(|f| norm.contains(f))
}

/// Remove sensitive members recursively and stringify unsafe integers, in
/// one walk of the tree.
pub fn sanitize(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| !is_sensitive(k));
            map.values_mut().for_each(sanitize);
        }
        Value::Array(items) => items.iter_mut().for_each(sanitize),
        Value::Number(n) if is_large_integer(n) => *value = Value::String(n.to_string()),
        _ => {}
    }
}

/// [`mediaparse_sdk::bigints::is_large_integer`], answering the common case
/// (an integer that fits 64 bits) without formatting the number.
fn is_large_integer(n: &serde_json::Number) -> bool {
    use mediaparse_sdk::bigints::MAX_SAFE;
    if let Some(u) = n.as_u64() {
        return u > MAX_SAFE;
    }
    if let Some(i) = n.as_i64() {
        return i.unsigned_abs() > MAX_SAFE;
    }
    mediaparse_sdk::bigints::is_large_integer(n)
}

/// [`is_large_integer`] on a number's text as serde_json writes it.
fn is_large_integer_text(text: &str) -> bool {
    use mediaparse_sdk::bigints::MAX_SAFE;
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    digits.len() > 16 || digits.parse::<u64>().map_or(true, |n| n > MAX_SAFE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn removes_secrets_and_private_data_at_any_depth() {
        let mut v: Value = serde_json::from_str(
            r#"{"aweme_id":"1","author":{"uniqueId":"a","secUid":"MS4","email":"x@y","phone_number":"1","cookies":"c"},
                "list":[{"xsec_token":"t","ip_location":"北京","latitude":1.5,"title":"ok","Authorization":"b"}],
                "video":{"playAddr":"https://v/?tk=tt_chain_token","sessionId":"s","tip":"keep","vip":1,"clip":"keep"}}"#,
        )
        .unwrap();
        sanitize(&mut v);
        assert_eq!(
            v,
            json!({"aweme_id":"1","author":{"uniqueId":"a","secUid":"MS4"},"list":[{"title":"ok"}],
                   "video":{"playAddr":"https://v/?tk=tt_chain_token","tip":"keep","vip":1,"clip":"keep"}})
        );
    }

    #[test]
    fn the_fast_number_check_agrees_with_the_sdk() {
        for text in [
            "0",
            "9007199254740992",
            "9007199254740993",
            "-9007199254740992",
            "-9007199254740993",
            "18446744073709551615",
            "18446744073709551616",
            "1.5",
            "1e300",
            "-0",
        ] {
            let n: serde_json::Number = serde_json::from_str(text).unwrap();
            assert_eq!(
                is_large_integer(&n),
                mediaparse_sdk::bigints::is_large_integer(&n),
                "{text}"
            );
            assert_eq!(
                is_large_integer_text(&n.to_string()),
                mediaparse_sdk::bigints::is_large_integer(&n),
                "{text}"
            );
        }
    }

    #[test]
    fn non_ascii_and_long_names_take_the_general_path() {
        assert!(is_sensitive("Ｅmail_токен_cookie"));
        assert!(is_sensitive(&format!("{}_token", "x".repeat(80))));
        assert!(!is_sensitive(&"x".repeat(80)));
        assert!(is_sensitive("IP-Address"));
        assert!(!is_sensitive("tip"));
    }

    #[test]
    fn big_integers_become_strings() {
        let mut v: Value = serde_json::from_str(r#"{"a":9007199254740991,"b":9007199254740993,"c":-7305827432509082913,"d":1.5,"e":123456789012345678901234567890}"#).unwrap();
        sanitize(&mut v);
        assert_eq!(v["a"], json!(9007199254740991u64));
        assert_eq!(v["b"], "9007199254740993");
        assert_eq!(v["c"], "-7305827432509082913");
        assert_eq!(v["d"], json!(1.5));
        assert_eq!(v["e"], "123456789012345678901234567890");
    }
}

/// The sanitizer as a property: secret-looking members planted at random
/// depths of random platform data are all removed, and everything else is
/// kept exactly.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Spellings of secret-looking names as platforms write them.
    const SECRETS: &[&str] = &[
        "cookie",
        "Cookie",
        "set_cookie",
        "cookies",
        "tt_chain_token",
        "xsec_token",
        "token",
        "accessToken",
        "access-token",
        "msToken",
        "csrfToken",
        "session",
        "sessionId",
        "SESSION_KEY",
        "password",
        "user_password",
        "passwd",
        "pwd",
        "email",
        "Email",
        "user_email",
        "phone",
        "phone_number",
        "phoneNumber",
        "mobile",
        "tel",
        "ip",
        "IP",
        "client_ip",
        "ipAddress",
        "ip_location",
        "latitude",
        "lng",
        "authorization",
        "api_key",
        "apiKey",
        "secret",
        "client_secret",
        "signature",
        "x-signature",
        "credentials",
        "birthday",
        "auth",
    ];

    /// Public member names, including near misses the sanitizer must keep.
    fn public_key() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "id",
                "title",
                "desc",
                "author",
                "video",
                "playAddr",
                "width",
                "height",
                "tip",
                "vip",
                "clip",
                "zip",
                "ship",
                "recipe",
                "description",
                "stats",
                "nickname",
                "uniqueId",
                "secUid",
                "music",
                "images",
                "duration",
                "cover",
                "likes",
                "ipsum",
                "tipping",
                "sign",
                "authorName",
                "authority",
            ])
            .prop_map(String::from),
            "[a-zA-Z_][a-zA-Z0-9_-]{0,12}",
        ]
        .prop_filter("not a sensitive name", |k| !is_sensitive(k))
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-1_000_000i64..1_000_000).prop_map(Value::from),
            "[ -~]{0,20}".prop_map(Value::from),
        ]
    }

    /// Random platform data made only of public names.
    fn public_data() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((public_key(), inner), 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn removes_every_planted_secret_and_keeps_the_rest(
            data in public_data(),
            plants in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(SECRETS), leaf()), 1..12),
        ) {
            let root = |d: Value| match d {
                Value::Object(_) => d,
                other => serde_json::json!({ "item": other }),
            };
            let expected = root(data);
            let mut planted = expected.clone();
            for (at, name, value) in &plants {
                let mut paths = Vec::new();
                object_paths(&planted, String::new(), &mut paths);
                let path = at.get(&paths).clone();
                if let Some(Value::Object(map)) = planted.pointer_mut(&path) {
                    map.insert((*name).to_string(), value.clone());
                }
            }
            prop_assert_ne!(&planted, &expected);
            sanitize(&mut planted);
            prop_assert_eq!(planted, expected);
        }
    }

    /// JSON pointers of every object in `v` (the root is `""`).
    fn object_paths(v: &Value, here: String, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                out.push(here.clone());
                for (k, child) in m {
                    let k = k.replace('~', "~0").replace('/', "~1");
                    object_paths(child, format!("{here}/{k}"), out);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    object_paths(child, format!("{here}/{i}"), out);
                }
            }
            _ => {}
        }
    }
}
