//! The per-platform cache for session bootstrap calls (DESIGN.md §3): a
//! request marked `cache-ttl-seconds > 0` may be answered from here for that
//! long, keyed by platform, method, URL, body and headers.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mediaparse_sdk::{HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};

pub struct BootstrapCache {
    entries: Mutex<HashMap<[u8; 32], (Instant, HttpResponse)>>,
    capacity: usize,
}

impl BootstrapCache {
    pub fn new(capacity: usize) -> Self {
        BootstrapCache {
            entries: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    fn key(platform: &str, request: &HttpRequest) -> [u8; 32] {
        let mut h = Sha256::new();
        for part in [
            platform.as_bytes(),
            request.method.as_bytes(),
            request.url.as_bytes(),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        let mut headers: Vec<(String, &str)> = request
            .headers
            .iter()
            .map(|x| (x.name.to_ascii_lowercase(), x.value.as_str()))
            .collect();
        headers.sort();
        for (name, value) in headers {
            h.update((name.len() as u64).to_le_bytes());
            h.update(name.as_bytes());
            h.update((value.len() as u64).to_le_bytes());
            h.update(value.as_bytes());
        }
        if let Some(body) = &request.body {
            h.update(body);
        }
        h.finalize().into()
    }

    pub fn get(&self, platform: &str, request: &HttpRequest) -> Option<HttpResponse> {
        let key = Self::key(platform, request);
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        match entries.get(&key) {
            Some((expires, response)) if *expires > Instant::now() => Some(response.clone()),
            Some(_) => {
                entries.remove(&key);
                None
            }
            None => None,
        }
    }

    pub fn put(
        &self,
        platform: &str,
        request: &HttpRequest,
        response: &HttpResponse,
        ttl: Duration,
    ) {
        let key = Self::key(platform, request);
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.capacity {
            entries.retain(|_, (expires, _)| *expires > now);
            if entries.len() >= self.capacity {
                return;
            }
        }
        entries.insert(key, (now + ttl, response.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(body: &str) -> HttpResponse {
        HttpResponse {
            request_url: "u".into(),
            final_url: "u".into(),
            status: 200,
            headers: vec![],
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn keyed_by_platform_request_and_headers_and_expires() {
        let cache = BootstrapCache::new(4);
        let req = HttpRequest::get("https://a.example/token").cache_for(60);
        cache.put("twitter", &req, &response("t1"), Duration::from_secs(60));
        assert_eq!(cache.get("twitter", &req).unwrap().body, b"t1");
        assert!(cache.get("tiktok", &req).is_none());
        assert!(
            cache
                .get("twitter", &req.clone().header("x", "1"))
                .is_none()
        );
        cache.put("weibo", &req, &response("t2"), Duration::from_millis(0));
        assert!(cache.get("weibo", &req).is_none());
    }
}
