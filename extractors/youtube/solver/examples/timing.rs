//! Where a known player's time goes, natively: creating the engine and
//! loading (evaluating) the lifted program, and answering challenges.
//! `cargo run --release -p mediaparse-youtube-solver --example timing -- PLAYER.js [ROUNDS]`
//! (players: `shared/payloads/youtube/players/*.js`). Prints the median of
//! each phase over ROUNDS (default 20) and the program's size.

use std::time::{Duration, Instant};

use mediaparse_youtube_solver::{Solver, prepare};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: timing PLAYER.js [ROUNDS]");
        return std::process::ExitCode::from(2);
    };
    let rounds: usize = args
        .next()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20)
        .max(1);
    let script = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let program = match prepare(&script) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let prepare_time = started.elapsed();

    let (mut load, mut first_n, mut second_n, mut sig) = (vec![], vec![], vec![], vec![]);
    for _ in 0..rounds {
        // What a known-player parse pays first: runtime, context, program.
        let t = Instant::now();
        let solver = Solver::new(&program);
        load.push(t.elapsed());
        let Ok(mut solver) = solver else {
            eprintln!("the program does not load");
            return std::process::ExitCode::FAILURE;
        };
        let t = Instant::now();
        let _ = solver.n("ZdZIqFPQK-Ty8wId");
        first_n.push(t.elapsed());
        let t = Instant::now();
        let _ = solver.n("4qdU2oQ0zXtf8W9Bq");
        second_n.push(t.elapsed());
        let t = Instant::now();
        let _ = solver.sig("AOq0QJ8wRAIgXmPlOPSBkkUs1bYFYlJCfe29xx8j7v1pDL0QwbdV96sCIEzpWqMGkFR20CFOg51Tp-7vj_EMu-m37KtXJ2OySqa0q");
        sig.push(t.elapsed());
    }
    println!(
        "{path}: program {} bytes; prepare {:.1} ms (once per player)",
        program.source.len(),
        prepare_time.as_secs_f64() * 1e3
    );
    for (name, v) in [
        ("Solver::new (engine + evaluate program)", load),
        ("first n call", first_n),
        ("second n call (another value)", second_n),
        ("signature call", sig),
    ] {
        println!(
            "  {name:<42} median {:>8.2} ms",
            median(v).as_secs_f64() * 1e3
        );
    }
    std::process::ExitCode::SUCCESS
}
