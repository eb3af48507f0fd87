//! A receiver of signed POSTs on loopback, for every suite that checks them
//! (job callbacks, webhook deliveries, platform alerts): it answers the
//! statuses of its script in turn, then `200`, and keeps every POST with its
//! Standard Webhooks headers and when it arrived.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;

/// One POST as received.
#[derive(Clone, Debug)]
pub struct Received {
    pub at: Instant,
    pub id: String,
    pub timestamp: i64,
    pub signature: String,
    pub body: Vec<u8>,
}

impl Received {
    /// Whether its `webhook-signature` is the host's signature of it with `secret`.
    pub fn verifies_with(&self, secret: &str) -> bool {
        let key = mediaparse::signing::secret_key(secret).expect("a whsec_ secret");
        mediaparse::signing::verify(&key, &self.id, self.timestamp, &self.body, &self.signature)
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

/// A receiver's URL and what it got.
pub struct Receiver {
    pub url: String,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    /// A receiver on a fresh loopback port.
    pub async fn start(script: &[u16]) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Receiver::on(listener, script).await
    }

    /// A receiver on `listener` (a port chosen before the receiver runs).
    pub async fn on(listener: tokio::net::TcpListener, script: &[u16]) -> Receiver {
        let got = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(
            script.iter().copied().collect::<VecDeque<u16>>(),
        ));
        let sink = got.clone();
        let app = axum::Router::new().route(
            "/hooks/in",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let (sink, script) = (sink.clone(), script.clone());
                async move {
                    let header = |n: &str| {
                        headers
                            .get(n)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default()
                            .to_string()
                    };
                    sink.lock().unwrap().push(Received {
                        at: Instant::now(),
                        id: header("webhook-id"),
                        timestamp: header("webhook-timestamp").parse().unwrap_or(-1),
                        signature: header("webhook-signature"),
                        body: body.to_vec(),
                    });
                    let status = script.lock().unwrap().pop_front().unwrap_or(200);
                    StatusCode::from_u16(status).unwrap()
                }
            }),
        );
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver {
            url: format!("http://{addr}/hooks/in"),
            got,
        }
    }

    /// Every POST so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// Wait (at most 60 s) until `n` POSTs arrived; returns them.
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        self.wait_until(|got| got.len() >= n, &format!("{n} POSTs"))
            .await
    }

    /// Wait (at most 60 s) until what arrived satisfies `done`; returns it.
    pub async fn wait_until(
        &self,
        done: impl Fn(&[Received]) -> bool,
        what: &str,
    ) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let got = self.received();
            if done(&got) {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{} POSTs received, waiting for {what}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
