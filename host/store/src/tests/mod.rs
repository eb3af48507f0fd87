//! The store's tests, by subject. A test of behaviour both backends have
//! runs on both ([`both::each_backend`]: a fresh SQLite file, then a fresh
//! PostgreSQL database from `test_pg`); a test of one backend's own
//! machinery (the SQLite writer thread, the PostgreSQL pool) runs on it alone.

mod accounts;
mod async_writes;
mod awaited;
mod backends;
mod both;
mod canaries;
mod daily;
mod group_commit;
mod holds;
mod idempotency;
mod jobs;
mod key_cache;
mod keys;
mod location;
mod pg_async;
mod pg_connect;
mod pg_pool;
mod pg_tls;
mod readers;
mod schema;
mod sessions;
mod tunnel_usage;
mod usage;
mod usage_daily;
mod users;
mod webhooks;
