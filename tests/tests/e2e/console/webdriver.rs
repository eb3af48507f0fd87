//! The few W3C WebDriver commands the console's browser test needs, over
//! reqwest (already in the suite) to a local chromedriver. A client crate
//! (fantoccini) was tried: its dependencies changed the workspace's feature
//! set and rebuilt most of the dependency tree, minutes of CI for ~80 lines.

use base64::Engine as _;
use serde_json::{Value, json};

/// The W3C element reference key.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Session {
    http: reqwest::Client,
    base: String,
}

impl Session {
    /// A new browser session with these capabilities (`alwaysMatch`).
    pub async fn start(driver: &str, capabilities: Value) -> Session {
        let http = reqwest::Client::new();
        let answer: Value = http
            .post(format!("{driver}/session"))
            .json(&json!({"capabilities": {"alwaysMatch": capabilities}}))
            .send()
            .await
            .expect("chromedriver answers")
            .json()
            .await
            .expect("JSON from chromedriver");
        let id = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {answer}"));
        Session {
            base: format!("{driver}/session/{id}"),
            http,
        }
    }

    async fn try_call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, Value> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        if answer["value"].get("error").is_some() {
            return Err(answer["value"].clone());
        }
        Ok(answer["value"].clone())
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        self.try_call(method, path, body)
            .await
            .unwrap_or_else(|e| panic!("WebDriver {path}: {e}"))
    }

    /// Find `css` and read its text, again while a submitted form's next
    /// page is still loading (a click may return before the navigation).
    async fn settled_text(&self, css: &str) -> String {
        let mut last = Value::Null;
        for _ in 0..50 {
            let found = self
                .try_call(
                    reqwest::Method::POST,
                    "/element",
                    Some(json!({"using": "css selector", "value": css})),
                )
                .await;
            if let Ok(found) = found
                && let Some(id) = found[ELEMENT].as_str()
            {
                match self
                    .try_call(reqwest::Method::GET, &format!("/element/{id}/text"), None)
                    .await
                {
                    Ok(text) => return text.as_str().unwrap_or_default().to_string(),
                    Err(e) => last = e,
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("no text for {css}: {last}");
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    async fn get(&self, path: &str) -> Value {
        self.call(reqwest::Method::GET, path, None).await
    }

    pub async fn goto(&self, url: &str) {
        self.post("/url", json!({"url": url})).await;
    }

    pub async fn path(&self) -> String {
        let url = self.get("/url").await;
        let url = url.as_str().unwrap_or_default();
        url.splitn(4, '/')
            .nth(3)
            .map(|p| format!("/{p}"))
            .unwrap_or_default()
    }

    /// The element `css`, waiting up to 5 s for it (the next page may be loading).
    async fn find(&self, css: &str) -> String {
        let mut last = Value::Null;
        for _ in 0..50 {
            let found = self
                .try_call(
                    reqwest::Method::POST,
                    "/element",
                    Some(json!({"using": "css selector", "value": css})),
                )
                .await;
            match found {
                Ok(v) if v[ELEMENT].is_string() => {
                    return v[ELEMENT].as_str().unwrap_or_default().to_string();
                }
                Ok(v) | Err(v) => last = v,
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("no element {css}: {last}");
    }

    pub async fn click(&self, css: &str) {
        let id = self.find(css).await;
        self.post(&format!("/element/{id}/click"), json!({})).await;
    }

    /// Clear a field and type into it.
    pub async fn fill(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.post(&format!("/element/{id}/clear"), json!({})).await;
        self.post(&format!("/element/{id}/value"), json!({"text": text}))
            .await;
    }

    pub async fn text(&self, css: &str) -> String {
        self.settled_text(css).await
    }

    /// Run a script (a returned promise is awaited) and return its value.
    pub async fn execute(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": []}))
            .await
    }

    pub async fn screenshot_png(&self) -> Vec<u8> {
        let b64 = self.get("/screenshot").await;
        base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().unwrap_or_default())
            .expect("base64 PNG")
    }

    pub async fn window_size(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({"width": width, "height": height}))
            .await;
    }

    pub async fn close(self) {
        let _ = self.http.delete(&self.base).send().await;
    }
}
