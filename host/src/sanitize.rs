//! Platform data cleaning (DESIGN.md §8): one reviewed list of member names
//! that carry secrets or a person's private data, removed recursively for
//! every platform; integers beyond 2^53 become strings.

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
    let norm: String = key
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    EXACT.contains(&norm.as_str()) || CONTAINS.iter().any(|f| norm.contains(f))
}

/// Remove sensitive members recursively and stringify unsafe integers.
pub fn sanitize(value: &mut Value) {
    remove_sensitive(value);
    mediaparse_sdk::bigints::stringify_large_integers(value);
}

fn remove_sensitive(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| !is_sensitive(k));
            map.values_mut().for_each(remove_sensitive);
        }
        Value::Array(items) => items.iter_mut().for_each(remove_sensitive),
        _ => {}
    }
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
