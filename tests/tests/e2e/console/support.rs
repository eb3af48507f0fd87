//! A plain-HTTP "browser" for console tests: a cookie jar of its own,
//! redirects reported (not followed), forms posted with the page's CSRF token.

use std::collections::BTreeMap;

use mediaparse_tests::service::Service;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::accounts::support::ADMIN;

pub struct Browser {
    base: String,
    client: reqwest::Client,
    cookies: BTreeMap<String, String>,
    /// The CSRF token of the last page that had one.
    csrf: String,
    /// Extra headers sent with every request (a browser extension's, say).
    headers: Vec<(String, String)>,
}

/// The text between `start` and the next `end` after it (panics if absent).
pub fn between(text: &str, start: &str, end: &str) -> String {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{start:?} not in {text}"))
        + start.len();
    let to = text[from..].find(end).map_or(text.len(), |i| from + i);
    text[from..to].to_string()
}

/// The token shown once on a page.
pub fn token_in(page: &str) -> String {
    let token = between(page, "id=\"new-token\">", "<");
    assert!(token.starts_with("mp_live_"), "{token}");
    token
}

/// Invite through the admin API; returns the one-time link.
pub async fn invite(service: &Service, account: &str, email: &str) -> String {
    let answer: Value = reqwest::Client::new()
        .post(service.url("/api/v1/admin/users"))
        .bearer_auth(ADMIN)
        .json(&json!({"account": account, "email": email}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["status"], 201, "{answer}");
    answer["data"]["link"].as_str().unwrap().to_string()
}

impl Browser {
    pub fn new(service: &Service) -> Browser {
        Browser {
            base: service.base_url.clone(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: BTreeMap::new(),
            csrf: String::new(),
            headers: Vec::new(),
        }
    }

    /// Send `name: value` with every later request (replacing an earlier value).
    pub fn set_header(&mut self, name: &str, value: &str) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.into(), value.into()));
    }

    fn with_headers(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        request.header("cookie", self.cookie_header())
    }

    pub fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    pub fn set_cookie(&mut self, name: &str, value: &str) {
        self.cookies.insert(name.into(), value.into());
    }

    pub fn session_token(&self) -> String {
        self.cookies.get("mp_session").cloned().unwrap_or_default()
    }

    /// Keep the response's cookies; returns the raw `Set-Cookie` values.
    fn absorb(&mut self, response: &reqwest::Response) -> String {
        let mut raw = Vec::new();
        for v in response.headers().get_all("set-cookie") {
            let v = v.to_str().unwrap().to_string();
            let pair = v.split(';').next().unwrap_or("");
            if let Some((k, val)) = pair.split_once('=') {
                if val.is_empty() {
                    self.cookies.remove(k);
                } else {
                    self.cookies.insert(k.into(), val.into());
                }
            }
            raw.push(v);
        }
        raw.join("\n")
    }

    fn url(&self, path: &str) -> String {
        if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        }
    }

    pub async fn get(&mut self, path: &str) -> (StatusCode, String) {
        let response = self
            .with_headers(self.client.get(self.url(path)))
            .send()
            .await
            .unwrap();
        self.absorb(&response);
        let status = response.status();
        let body = response.text().await.unwrap();
        if body.contains("name=\"csrf\" value=\"") {
            self.csrf = between(&body, "name=\"csrf\" value=\"", "\"");
        }
        (status, body)
    }

    /// Post a form as given (no CSRF added).
    pub async fn post_raw(&mut self, path: &str, form: &[(&str, &str)]) -> (StatusCode, String) {
        let response = self
            .with_headers(self.client.post(self.url(path)))
            .form(form)
            .send()
            .await
            .unwrap();
        self.absorb(&response);
        let status = response.status();
        (status, response.text().await.unwrap())
    }

    /// Post a form with the session's CSRF token (read from the last page).
    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> (StatusCode, String) {
        if self.csrf.is_empty() {
            self.get("/console").await;
        }
        let csrf = self.csrf.clone();
        let mut fields: Vec<(&str, &str)> = form.to_vec();
        fields.push(("csrf", &csrf));
        self.post_raw(path, &fields).await
    }

    /// Open a one-time link and set the password; returns the session's `Set-Cookie`.
    pub async fn set_password(&mut self, link: &str, password: &str) -> String {
        let (status, page) = self.get(link).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let csrf = self.csrf.clone();
        let response = self
            .client
            .post(self.url(link))
            .header("cookie", self.cookie_header())
            .form(&[("password", password), ("csrf", &csrf)])
            .send()
            .await
            .unwrap();
        let raw = self.absorb(&response);
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{raw}");
        // The session's own CSRF token comes with the next page.
        self.csrf.clear();
        self.get("/console").await;
        raw.lines()
            .find(|l| l.starts_with("mp_session="))
            .unwrap_or_default()
            .to_string()
    }

    /// Sign in through the form; returns the answer.
    pub async fn sign_in(&mut self, email: &str, password: &str) -> (StatusCode, String) {
        self.get("/console/sign-in").await;
        let csrf = self.csrf.clone();
        self.post_raw(
            "/console/sign-in",
            &[("email", email), ("password", password), ("csrf", &csrf)],
        )
        .await
    }
}
