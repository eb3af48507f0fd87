//! `mediaparse replay CASE_DIR [--component FILE]`: a fixture case run
//! through the real wasm component with the SDK's replay harness (the same
//! matching rules as the extractor's native tests), and the difference from
//! the expected result printed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mediaparse_sdk::fixture::Case;
use mediaparse_sdk::replay::{self, Driver};
use mediaparse_sdk::{Context, Exchange, Extraction, Failure, Info, Plan, Target};

use mediaparse_registry::{
    LoadedExtractor, Registry, Runtime, SandboxLimits, Session, run_blocking,
};

/// A [`Driver`] backed by one instance of a wasm component.
pub struct WasmDriver {
    session: Session,
}

impl WasmDriver {
    pub fn new(registry: &Registry, ext: &LoadedExtractor) -> anyhow::Result<WasmDriver> {
        Ok(WasmDriver {
            session: run_blocking(registry.session(ext))?,
        })
    }
}

impl Driver for WasmDriver {
    fn info(&mut self) -> Result<Info, String> {
        run_blocking(self.session.info()).map_err(|e| e.to_string())
    }

    fn detect(&mut self, input: &str) -> Result<Result<Target, Failure>, String> {
        let detected = run_blocking(self.session.detect(input)).map_err(|e| e.to_string())?;
        // The host hands the extractor the caller's input with the target.
        Ok(detected.map(|mut t| {
            t.input = input.to_string();
            t
        }))
    }

    fn plan(
        &mut self,
        target: &Target,
        ctx: &Context,
        done: &[Exchange],
    ) -> Result<Result<Plan, Failure>, String> {
        run_blocking(self.session.plan(target, ctx, done)).map_err(|e| e.to_string())
    }

    fn map(
        &mut self,
        target: &Target,
        ctx: &Context,
        done: &[Exchange],
    ) -> Result<Result<Extraction, Failure>, String> {
        let mapped =
            run_blocking(self.session.map(target, ctx, done)).map_err(|e| e.to_string())?;
        match mapped {
            Ok((media, data)) => {
                let platform_data = serde_json::from_str(&data)
                    .map_err(|e| format!("platform data is not JSON: {e}"))?;
                Ok(Ok(Extraction {
                    media,
                    platform_data,
                }))
            }
            Err(f) => Ok(Err(f)),
        }
    }
    fn step(
        &mut self,
        target: &Target,
        ctx: &Context,
        done: &[Exchange],
    ) -> Result<Result<mediaparse_sdk::Stepped, Failure>, String> {
        use mediaparse_registry::Next;
        let round =
            match run_blocking(self.session.step(target, ctx, done)).map_err(|e| e.to_string())? {
                Ok(round) => round,
                Err(f) => return Ok(Err(f)),
            };
        let next = match round.next {
            Next::Fetch(requests) => mediaparse_sdk::Step::Fetch(requests),
            Next::Done(media, data) => {
                let platform_data = serde_json::from_str(&data)
                    .map_err(|e| format!("platform data is not JSON: {e}"))?;
                mediaparse_sdk::Step::Done(Extraction {
                    media,
                    platform_data,
                })
            }
        };
        Ok(Ok(mediaparse_sdk::Stepped {
            next,
            remember: round.remember,
        }))
    }
}

/// Which component a case runs through.
pub enum ComponentChoice {
    /// This file, whatever its name (a candidate build), and the compiled
    /// cache it may be found in (a candidate is never written to it).
    File(PathBuf, Option<PathBuf>),
    /// The service's directory: the case's own platform (from its path
    /// `extractors/<platform>/fixtures/<case>`), else routed by input host;
    /// and its compiled cache (`None`: compile).
    Dir(PathBuf, Option<PathBuf>),
}

impl ComponentChoice {
    fn compiled_cache(&self) -> Option<PathBuf> {
        match self {
            ComponentChoice::File(_, cache) | ComponentChoice::Dir(_, cache) => cache.clone(),
        }
    }
}

/// Load the component a case should run through.
pub fn component_for(
    case: &Case,
    choice: &ComponentChoice,
) -> anyhow::Result<(Arc<Registry>, Arc<LoadedExtractor>)> {
    let registry = Arc::new(Registry::with_cache(
        Runtime::new(SandboxLimits::default())?,
        choice.compiled_cache(),
    ));
    let ext = match choice {
        ComponentChoice::File(path, _) => Arc::new(registry.load_candidate(path)?),
        ComponentChoice::Dir(dir, _) => {
            // The case's own platform: compile just that component.
            if let Some(p) = platform_of_case_dir(&case.dir)
                && dir.join(format!("{p}.wasm")).is_file()
            {
                let ext = Arc::new(registry.load_file(&dir.join(format!("{p}.wasm")))?);
                register_members(case, &ext);
                return Ok((registry, ext));
            }
            registry
                .load_dir(dir)
                .map_err(|e| anyhow::anyhow!("reading {}: {e}", dir.display()))?;
            mediaparse_parse::route(&registry, &case.input, None).map_err(|e| {
                anyhow::anyhow!(
                    "no component in {} for this case ({e}); pass --component FILE",
                    dir.display()
                )
            })?
        }
    };
    register_members(case, &ext);
    Ok((registry, ext))
}

/// Tell the SDK's checks (`replay::compare`) the platform's listed members:
/// the component's `.toml`, or for a candidate without one, the
/// `platform.toml` of the source tree the case lives in
/// (`extractors/<platform>/fixtures/<case>`).
fn register_members(case: &Case, ext: &LoadedExtractor) {
    let from_tree = || {
        let dir = std::path::absolute(&case.dir).ok()?;
        let file = dir.parent()?.parent()?.join("platform.toml");
        mediaparse_catalogue::Manifest::load(&file)
            .ok()
            .filter(|m| m.id == ext.platform())
    };
    let manifest = if ext.manifest.members.is_empty() {
        from_tree().unwrap_or_else(|| (*ext.manifest).clone())
    } else {
        (*ext.manifest).clone()
    };
    mediaparse_sdk::spec::register(manifest);
}

/// `…/extractors/<platform>/fixtures/<case>` → `<platform>`.
fn platform_of_case_dir(dir: &Path) -> Option<String> {
    // The folder may not exist yet (`record --out`).
    let dir = std::path::absolute(dir).ok()?;
    let fixtures = dir.parent()?;
    if fixtures.file_name()? != "fixtures" {
        return None;
    }
    Some(
        fixtures
            .parent()?
            .file_name()?
            .to_string_lossy()
            .into_owned(),
    )
}

/// What a replay found.
pub struct ReplayReport {
    pub component: String,
    /// The component's result is the case's expectation.
    pub replayed: bool,
    /// Replayed, and the expectation agrees with the payload.
    pub passed: bool,
    /// One problem per line (empty when passed): differences from the
    /// expectation, then disagreements between the expectation and the payload.
    pub problems: String,
    /// What the recorded bodies state about the expected media (where each
    /// URL was found), for review; `None` for a case that expects an error.
    pub facts: Option<mediaparse_sdk::anchors::Facts>,
}

/// Replay one case through a component.
pub fn replay_case(case: &Case, choice: &ComponentChoice) -> anyhow::Result<ReplayReport> {
    let (registry, ext) = component_for(case, choice)?;
    replay_loaded(case, &registry, &ext)
}

/// Replay one case through an already compiled component, and check its
/// expectation against its payload ([`mediaparse_sdk::anchors`], with the
/// rewrites declared beside the case folder).
pub fn replay_loaded(
    case: &Case,
    registry: &Registry,
    ext: &LoadedExtractor,
) -> anyhow::Result<ReplayReport> {
    let mut driver = WasmDriver::new(registry, ext)?;
    let component = format!(
        "{} {} ({}, sha256 {})",
        ext.info.platform,
        ext.info.version,
        ext.source.display(),
        &ext.sha256[..12]
    );
    let rewrites = mediaparse_sdk::anchors::Rewrites::for_case(case)?;
    let facts = case
        .expect
        .media
        .is_some()
        .then(|| mediaparse_sdk::anchors::facts(case, &rewrites));
    let mut problems: Vec<String> = Vec::new();
    match replay::run_with(&mut driver, case) {
        Ok(outcome) => problems.extend(replay::compare(case, &outcome).err()),
        Err(e) => problems.push(e.to_string()),
    }
    let replayed = problems.is_empty();
    if let Some(f) = facts.as_ref().filter(|f| !f.problems.is_empty()) {
        problems.push(format!(
            "the expectation disagrees with the payload:\n  {}",
            f.problems.join("\n  ")
        ));
    }
    Ok(ReplayReport {
        component,
        replayed,
        passed: problems.is_empty(),
        problems: problems.join("\n  "),
        facts,
    })
}

/// The facts read from the payload, one line per expected URL.
pub fn facts_lines(facts: &mediaparse_sdk::anchors::Facts) -> Vec<String> {
    let mut lines: Vec<String> = facts
        .urls
        .iter()
        .map(|u| match &u.found {
            Some(f) => {
                let place = match f.exchange {
                    Some(i) => format!("exchange {i} ({})", f.body),
                    None => "the input".to_string(),
                };
                let mut line = format!(
                    "{}: found in {place} at byte {} [{}]",
                    u.member, f.offset, f.via
                );
                if !u.stated_widths.is_empty() || !u.stated_heights.is_empty() {
                    line.push_str(&format!(
                        "; nearby widths {:?}, heights {:?}",
                        u.stated_widths, u.stated_heights
                    ));
                }
                line
            }
            None => format!("{}: NOT FOUND in any recorded body: {}", u.member, u.url),
        })
        .collect();
    if !facts.stated_durations.is_empty() {
        lines.push(format!(
            "durations the payload states: {:?}",
            facts.stated_durations
        ));
    }
    lines
}

/// The `replay` command: prints the verdict, the differences and the
/// payload facts; exit 0 or 1. It does not print the actual result to paste
/// over the expectation: an expectation is corrected from the payload.
pub fn run(case_dir: &Path, choice: &ComponentChoice) -> i32 {
    let report = Case::load(case_dir)
        .map_err(anyhow::Error::from)
        .and_then(|case| replay_case(&case, choice));
    match report {
        Ok(r) => {
            let verdict = if r.passed { "PASS" } else { "FAIL" };
            println!("{verdict} {} through {}", case_dir.display(), r.component);
            if !r.passed {
                println!("  {}", r.problems);
            }
            if let Some(facts) = &r.facts {
                println!("payload facts:");
                for line in facts_lines(facts) {
                    println!("  {line}");
                }
            }
            i32::from(!r.passed)
        }
        Err(e) => {
            println!("FAIL {}: {e:#}", case_dir.display());
            1
        }
    }
}
