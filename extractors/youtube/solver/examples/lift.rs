//! Prints the program the solver lifts from a player script (what the
//! extractor remembers for that player id), e.g. to write a fixture's
//! `remembered` value: `cargo run -p mediaparse-youtube-solver --example lift -- base.js`.

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: lift PLAYER.js");
        return std::process::ExitCode::from(2);
    };
    let script = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match mediaparse_youtube_solver::prepare(&script) {
        Ok(p) => {
            print!("{}", p.source);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
