//! YouTube's player challenges, in the youtube component:
//! - first parse with an unseen player: the last round of the fixture cases
//!   `web_challenges_unseen_player_*` (script tokenized, functions located and
//!   lifted, program loaded into the engine, every format solved);
//! - a known player: the last round of `web_challenges_known_player` (2025
//!   player, program remembered) and `web_challenges_known_player_2026`
//!   (2026 player, pruned program with lazy definitions) against the same
//!   round of `watch_visionos_primary`;
//! - memory: the smallest sandbox memory cap (of a ladder) under which the
//!   unseen 2026 player is still solved — an upper bound of the peak.

use std::time::{Duration, Instant};

use mediaparse::registry::{Registry, Runtime, SandboxLimits, run_blocking};
use mediaparse_extractor_youtube::YouTube;
use mediaparse_sdk::fixture::Case;
use mediaparse_tests::paths;
use serde_json::{Value, json};

const CAP_LADDER_MIB: &[usize] = &[16, 24, 32, 48, 64, 96, 128, 192, 256];

fn case(name: &str) -> anyhow::Result<Case> {
    Ok(Case::load(
        &paths::workspace_root()
            .join("extractors/youtube/fixtures")
            .join(name),
    )?)
}

/// Median wall time of the last round (`map`) of `case` in a fresh instance.
fn last_round(registry: &Registry, case_name: &str, runs: usize) -> anyhow::Result<Duration> {
    let case = case(case_name)?;
    let (target, ctx, done) = mediaparse_sdk::replay::map_inputs::<YouTube>(&case)?
        .ok_or_else(|| anyhow::anyhow!("{case_name}: does not reach map natively"))?;
    let ext = registry
        .get("youtube")
        .ok_or_else(|| anyhow::anyhow!("youtube not installed"))?;
    let mut times = Vec::new();
    for _ in 0..runs {
        let mut session =
            run_blocking(registry.session(&ext)).map_err(|e| anyhow::anyhow!("{e}"))?;
        let t = Instant::now();
        let out = run_blocking(session.map(&target, &ctx, &done));
        let d = t.elapsed();
        match out {
            Ok(Ok(_)) => times.push(d),
            Ok(Err(f)) => anyhow::bail!("{case_name}: failure {} {f}", f.code()),
            Err(e) => anyhow::bail!("{case_name}: {e}"),
        }
    }
    times.sort();
    Ok(times[times.len() / 2])
}

fn registry(memory_bytes: usize) -> anyhow::Result<Registry> {
    let limits = SandboxLimits {
        memory_bytes,
        call_timeout: Duration::from_secs(30),
        ..SandboxLimits::default()
    };
    let registry = Registry::new(Runtime::new(limits)?);
    let ext = registry
        .load_file(&paths::extractors_dir().join("youtube.wasm"))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    registry.install(ext);
    Ok(registry)
}

pub fn challenges(quick: bool) -> anyhow::Result<Value> {
    let runs = if quick { 3 } else { 7 };
    let reg = registry(256 << 20)?;
    let unseen_2025 = last_round(&reg, "web_challenges_unseen_player_2025", runs)?;
    let unseen_2026 = last_round(&reg, "web_challenges_unseen_player_2026", runs)?;
    let known = last_round(&reg, "web_challenges_known_player", runs)?;
    let known_2026 = last_round(&reg, "web_challenges_known_player_2026", runs)?;
    let visionos = last_round(&reg, "watch_visionos_primary", runs)?;
    let mut peak_bound_mib = None;
    for &mib in CAP_LADDER_MIB {
        if last_round(
            &registry(mib << 20)?,
            "web_challenges_unseen_player_2026",
            1,
        )
        .is_ok()
        {
            peak_bound_mib = Some(mib);
            break;
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let added = ms(known) - ms(visionos);
    let added_2026 = ms(known_2026) - ms(visionos);
    eprintln!(
        "  youtube challenges: unseen player 2025 {:.1} ms, 2026 {:.1} ms (target ≤ 1000); known player 2025 {:.2} ms, 2026 {:.2} ms vs VISIONOS {:.2} ms: {added:+.2} ms, {added_2026:+.2} ms (target ≤ 5); solves under a {} MiB cap (target ≤ 64)",
        ms(unseen_2025),
        ms(unseen_2026),
        ms(known),
        ms(known_2026),
        ms(visionos),
        peak_bound_mib.map_or("—".to_string(), |m| m.to_string()),
    );
    Ok(json!({
        "unseen_player_2025_ms": ms(unseen_2025),
        "unseen_player_2026_ms": ms(unseen_2026),
        "known_player_ms": ms(known),
        "visionos_ms": ms(visionos),
        "known_player_added_ms": added,
        "known_player_2026_ms": ms(known_2026),
        "known_player_2026_added_ms": added_2026,
        "smallest_memory_cap_mib": peak_bound_mib,
    }))
}
