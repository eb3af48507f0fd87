//! URL-encoded form bodies (repeated fields kept, as for platform checkboxes).

use axum::body::Bytes;

pub struct Form(Vec<(String, String)>);

impl Form {
    pub fn parse(body: &Bytes) -> Form {
        Form(url::form_urlencoded::parse(body).into_owned().collect())
    }

    /// The first value of `name`, trimmed; empty when absent.
    pub fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
            .unwrap_or("")
    }

    /// Every non-empty value of `name`.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, v)| k == name && !v.trim().is_empty())
            .map(|(_, v)| v.trim().to_string())
            .collect()
    }
}
