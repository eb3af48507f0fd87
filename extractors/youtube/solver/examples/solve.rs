//! Learns a player script and answers challenges with it, printing one line
//! per answer and the learning time (to check a player against answers
//! published elsewhere before adding it to `tests/players/`):
//! `cargo run -p mediaparse-youtube-solver --example solve -- base.js n:CHALLENGE sig:CHALLENGE …`

use std::time::Instant;

use mediaparse_youtube_solver::{Solver, prepare};

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: solve PLAYER.js [n:X|sig:X]…");
        return std::process::ExitCode::from(2);
    };
    let script = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let t = Instant::now();
    let program = match prepare(&script) {
        Ok(p) => p,
        Err(e) => {
            println!("{path}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    println!("{path}: learned in {:?}", t.elapsed());
    let mut solver = match Solver::new(&program) {
        Ok(s) => s,
        Err(e) => {
            println!("{path}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    for arg in args {
        let answer = match arg.split_once(':') {
            Some(("n", x)) => solver.n(x),
            Some(("sig", x)) => solver.sig(x),
            _ => {
                eprintln!("{arg}: not n:X or sig:X");
                return std::process::ExitCode::from(2);
            }
        };
        match answer {
            Ok(a) => println!("{arg} -> {a}"),
            Err(e) => println!("{arg} -> error: {e}"),
        }
    }
    std::process::ExitCode::SUCCESS
}
