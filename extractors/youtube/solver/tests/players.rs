//! Every known answer for the three real players in `../shared/payloads/youtube/players/`.

use std::path::PathBuf;

use mediaparse_youtube_solver::{Solver, prepare};

fn players_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/payloads/youtube/players")
}

fn check(id: &str) -> mediaparse_youtube_solver::Program {
    let dir = players_dir();
    let answers: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("answers.json")).expect("answers.json"))
            .expect("json");
    let player = std::fs::read_to_string(dir.join(format!("{id}-main-en_GB.js"))).expect("player");
    let t = std::time::Instant::now();
    let program = prepare(&player).expect("prepare");
    // Remembered with its checked bytecode, so a known player skips compiling.
    assert!(
        program.parts().expect("well formed").bytecode.is_some(),
        "{id}: no bytecode"
    );
    eprintln!(
        "{id}: prepared in {:?}, program {} bytes",
        t.elapsed(),
        program.source.len()
    );
    let t = std::time::Instant::now();
    let mut solver = Solver::new(&program).expect("load");
    eprintln!("{id}: loaded in {:?}", t.elapsed());
    for (input, want) in answers[id]["n"].as_object().expect("n answers") {
        assert_eq!(
            solver.n(input).expect("n"),
            want.as_str().expect("str"),
            "{id} n {input}"
        );
    }
    for (input, want) in answers[id]["sig"].as_object().expect("sig answers") {
        assert_eq!(
            solver.sig(input).expect("sig"),
            want.as_str().expect("str"),
            "{id} sig {input}"
        );
    }
    program
}

#[test]
fn e7567ecf() {
    check("e7567ecf");
}

#[test]
fn p074a8365() {
    check("074a8365");
}

#[test]
fn c9168c90() {
    // The 2026 player's functions sit in dispatchers that reach 146 KB of the
    // player; what the challenges run is compiled at load, the rest lazily.
    let program = check("c9168c90");
    let parts = program.parts().expect("well formed");
    assert!(
        parts.js.len() < 20_000,
        "eager part {} bytes",
        parts.js.len()
    );
    assert!(
        parts.lazy.len() > 500,
        "{} lazy definitions",
        parts.lazy.len()
    );
}
