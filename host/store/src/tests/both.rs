//! Store tests run on both backends: [`each_backend`] runs one test body on
//! a fresh SQLite file and on a fresh PostgreSQL database.

use crate::{DbLocation, Store};

/// A store on a fresh database of one backend, with what keeps it alive.
pub struct TestStore {
    pub store: Store,
    pub location: DbLocation,
    _dir: Option<tempfile::TempDir>,
}

pub fn sqlite() -> TestStore {
    let dir = tempfile::tempdir().unwrap();
    let location = DbLocation::Sqlite(dir.path().join("t.db"));
    TestStore {
        store: Store::connect(&location).unwrap(),
        location,
        _dir: Some(dir),
    }
}

pub fn postgres() -> TestStore {
    let location = DbLocation::Postgres(crate::test_pg::fresh_database());
    TestStore {
        store: Store::connect(&location).unwrap(),
        location,
        _dir: None,
    }
}

/// Run `body` on SQLite, then on PostgreSQL; a failure names the backend.
pub fn each_backend(body: impl Fn(&TestStore)) {
    for make in [sqlite as fn() -> TestStore, postgres] {
        let t = make();
        let name = t.store.backend_name();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&t)));
        if let Err(panic) = outcome {
            eprintln!("-- the failure above is on the {name} backend --");
            std::panic::resume_unwind(panic);
        }
    }
}
