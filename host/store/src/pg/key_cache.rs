//! The key cache's listener on PostgreSQL (`key_cache`): one `LISTEN`
//! connection per host that clears the cache on every key change anywhere,
//! and proves its connection with a ping.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;

use super::Connector;
use crate::key_cache::{CHANNEL, KeyCache};

/// How often the listener pings its connection.
const PING_EVERY: Duration = Duration::from_millis(500);

/// Hold a `LISTEN` connection while the store lives; clear the cache on every
/// notification and whenever the connection is lost or regained.
fn listen(cache: Weak<KeyCache>, connector: Connector) {
    let mut backoff = Duration::from_millis(100);
    loop {
        let Some(c) = cache.upgrade() else { return };
        drop(c);
        let client = connector.connect().and_then(|mut client| {
            client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
            Ok(client)
        });
        let mut client = match client {
            Ok(client) => client,
            Err(e) => {
                tracing::warn!(error = %e, "key cache listener cannot connect; keys are read uncached");
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
        };
        backoff = Duration::from_millis(100);
        // Connected: whatever was missed while away is dropped.
        match cache.upgrade() {
            Some(c) => {
                c.invalidate();
                c.listening.store(true, Ordering::SeqCst);
                c.healthy_now();
            }
            None => return,
        }
        loop {
            let mut lost = false;
            {
                let mut notifications = client.notifications();
                let mut it = notifications.timeout_iter(PING_EVERY);
                loop {
                    match it.next() {
                        Ok(Some(_)) => match cache.upgrade() {
                            Some(c) => c.invalidate(),
                            None => return,
                        },
                        Ok(None) => break,
                        Err(_) => {
                            lost = true;
                            break;
                        }
                    }
                }
            }
            let Some(c) = cache.upgrade() else { return };
            drop(c);
            // A cheap ping finds a connection the server dropped quietly; a
            // ping that hangs leaves the health stale, so the cache is
            // bypassed after HEALTH_TIMEOUT while it hangs.
            let answered = !lost && !client.is_closed() && client.simple_query("").is_ok();
            let Some(c) = cache.upgrade() else { return };
            if !answered {
                c.lost();
                break;
            }
            c.healthy_now();
        }
    }
}

impl KeyCache {
    /// PostgreSQL: start the listener thread once for this store.
    pub fn start_listener(self: &Arc<Self>, connector: &Connector) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let (cache, connector) = (Arc::downgrade(self), connector.clone());
        let spawned = std::thread::Builder::new()
            .name("key-cache-listener".into())
            .spawn(move || listen(cache, connector));
        if spawned.is_err() {
            // No listener: the cache stays unusable, lookups go to the database.
            tracing::warn!("could not start the key cache listener; keys are not cached");
        }
    }
}
