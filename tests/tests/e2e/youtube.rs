//! `mediaparse youtube solve`: the operator's tool, through the real binary
//! and the real youtube component (the solver runs in its sandbox), on the
//! three real players of `shared/payloads/youtube/players/`.

use mediaparse_tests::paths;
use serde_json::Value;

fn players() -> std::path::PathBuf {
    paths::workspace_root().join("../shared/payloads/youtube/players")
}

fn solve(args: &[String]) -> (i32, String, String) {
    let out = std::process::Command::new(paths::host_binary())
        .arg("youtube")
        .arg("solve")
        .args(args)
        .env("MEDIAPARSE_EXTRACTORS", paths::extractors_dir())
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_answer_of_the_real_players_is_reproduced_by_the_cli() {
    let answers: Value =
        serde_json::from_slice(&std::fs::read(players().join("answers.json")).unwrap()).unwrap();
    for (id, want) in answers.as_object().unwrap() {
        let file = players().join(format!("{id}-main-en_GB.js"));
        let mut args = vec!["--player".to_string(), file.display().to_string()];
        for (kind, flag) in [("n", "--n"), ("sig", "--sig")] {
            for input in want[kind].as_object().unwrap().keys() {
                args.push(flag.into());
                args.push(input.clone());
            }
        }
        let (code, out, err) = solve(&args);
        assert_eq!(code, 0, "{id}: {err}");
        let got: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(got["n"], want["n"], "{id} n");
        assert_eq!(got["sig"], want["sig"], "{id} sig");
    }
}

#[test]
fn a_player_without_an_n_function_exits_1_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("base.js");
    std::fs::write(
        &file,
        "var _yt_player={};(function(g){'use strict';var a=1;})(_yt_player);",
    )
    .unwrap();
    let (code, out, err) = solve(&[
        "--player".into(),
        file.display().to_string(),
        "--n".into(),
        "abc".into(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("n function could not be found"), "{err}");
}
