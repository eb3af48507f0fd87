//! `cargo xtask layers`: the host's module graph, checked for cycles.
//!
//! Reads every `.rs` file under `host/src`, maps it to its top-level module
//! (`lib.rs` is the crate root, `main.rs` the binary's wiring), and collects
//! the top-level modules it names through `crate::…` (or `mediaparse::…` in
//! `main.rs`), including `use crate::{a, b::c}` groups. Comments, the
//! trailing `#[cfg(test)]` module and test-module files (`tests.rs`,
//! `*_tests.rs`) are
//! skipped: tests may reach across layers to build their fixtures.
//! It prints the graph, then fails on any import cycle and on any module
//! naming `AppState` outside the HTTP layer and the wiring.
//!
//! Layers that are crates of their own (`pub use mediaparse_x as x;` in
//! `lib.rs`: `core`, `metrics`, `store`, …) are not host modules: the
//! compiler already holds their edges (a crate cannot name the host), so
//! they are listed beside each module's edges, not as nodes of the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::Result;

/// Modules allowed to name `AppState`: the HTTP layer and the binary's wiring.
const APP_STATE_ALLOWED: &[&str] = &["http", "main"];

pub type Graph = BTreeMap<String, BTreeSet<String>>;

pub fn run(root: &Path) -> Result {
    let src = root.join("host/src");
    let files = rust_files(&src)?;
    let mut graph = Graph::new();
    let mut app_state: BTreeSet<String> = BTreeSet::new();
    for file in files.iter().filter(|f| !is_test_module(f)) {
        let module = module_of(&src, file);
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let code = code_only(&text);
        let prefix = if module == "main" {
            "mediaparse"
        } else {
            "crate"
        };
        let deps = graph.entry(module.clone()).or_default();
        for dep in referenced_modules(&code, prefix) {
            if dep != module {
                deps.insert(dep);
            }
        }
        if names_word(&code, "AppState") && !APP_STATE_ALLOWED.contains(&module.as_str()) {
            app_state.insert(format!("{module} ({})", relative(&src, file)));
        }
    }
    // The crate root only declares modules; it is not a layer.
    graph.remove("lib");
    for deps in graph.values_mut() {
        deps.remove("lib");
    }
    let lib = std::fs::read_to_string(src.join("lib.rs")).map_err(|e| format!("lib.rs: {e}"))?;
    let crates = crate_layers(&code_only(&lib));
    let mut uses_crates = Graph::new();
    for (module, deps) in graph.iter_mut() {
        let named: BTreeSet<String> = deps.intersection(&crates).cloned().collect();
        deps.retain(|d| !crates.contains(d));
        uses_crates.insert(module.clone(), named);
    }
    if let Some(name) = crates.iter().find(|c| graph.contains_key(*c)) {
        return Err(format!(
            "{name} is a crate (lib.rs) and also has files under host/src"
        ));
    }
    print!("{}", render_with_crates(&graph, &uses_crates));
    let cycles = cycles(&graph);
    for cycle in &cycles {
        println!("cycle: {}", cycle.join(" ⇄ "));
    }
    for place in &app_state {
        println!("AppState named below the HTTP layer: {place}");
    }
    println!(
        "crates of their own (their edges held by the compiler): {}",
        crates.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    println!(
        "{} modules, {} edges, {} cycles, {} AppState violations",
        graph.len(),
        graph.values().map(BTreeSet::len).sum::<usize>(),
        cycles.len(),
        app_state.len()
    );
    if cycles.is_empty() && app_state.is_empty() {
        Ok(())
    } else {
        Err("the host's modules are not one-way".into())
    }
}

pub fn rust_files(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            out.extend(rust_files(&path)?);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// A `#[cfg(test)] mod tests;` kept in its own file.
/// `tests.rs` and `*_tests.rs`: modules declared under `#[cfg(test)]`.
fn is_test_module(file: &Path) -> bool {
    file.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == "tests.rs" || n.ends_with("_tests.rs"))
}

pub fn relative(src: &Path, file: &Path) -> String {
    file.strip_prefix(src).unwrap_or(file).display().to_string()
}

/// `api/parse.rs` → `api`, `cli.rs` → `cli`, `lib.rs` → `lib`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.strip_suffix(".rs").unwrap_or(&first).to_string()
}

/// The text without comments and without the `#[cfg(test)]` module (by
/// house style the last item of a file).
fn code_only(text: &str) -> String {
    code_without_comments(text, true)
}

/// The text without comments, tests included.
pub fn code_only_keeping_tests(text: &str) -> String {
    code_without_comments(text, false)
}

fn code_without_comments(text: &str, skip_tests: bool) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if skip_tests && trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        // A trailing comment; `//` inside a string literal (URLs) is rare
        // enough in `use` lines that cutting there loses nothing we need.
        let line = match line.find("// ") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn names_word(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(i, _)| {
        let before = code.as_bytes().get(i.wrapping_sub(1)).copied();
        let after = code.as_bytes().get(i + word.len()).copied();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Top-level modules named as `<prefix>::name` or `<prefix>::{name, …}`.
fn referenced_modules(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let needle = format!("{prefix}::");
    let bytes = code.as_bytes();
    for (i, _) in code.match_indices(&needle) {
        if i > 0 && is_ident(bytes[i - 1]) {
            continue;
        }
        let rest = &code[i + needle.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            found.extend(group_heads(group));
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

/// The first path segment of every item of a `{…}` use group (up to its `}`).
fn group_heads(group: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut depth = 0usize;
    for c in group.chars() {
        match c {
            '}' if depth == 0 => break,
            ',' if depth == 0 => items.push(String::new()),
            _ => {
                depth = match c {
                    '{' => depth + 1,
                    '}' => depth - 1,
                    _ => depth,
                };
                if let Some(item) = items.last_mut() {
                    item.push(c);
                }
            }
        }
    }
    items
        .iter()
        .map(|item| {
            item.trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|head| !head.is_empty() && head != "self")
        .collect()
}

/// Layers `lib.rs` re-exports from crates of their own
/// (`pub use mediaparse_store as store;` → `store`).
pub fn crate_layers(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("pub use mediaparse_")?;
            let (_, alias) = rest.split_once(" as ")?;
            let alias = alias.trim().strip_suffix(';')?;
            alias.bytes().all(is_ident).then(|| alias.to_string())
        })
        .collect()
}

/// [`render`], each line followed by the crates the module names.
fn render_with_crates(graph: &Graph, crates: &Graph) -> String {
    let mut out = String::new();
    for line in render(graph).lines() {
        let module = line.split(" -> ").next().unwrap_or_default();
        out.push_str(line.trim_end());
        if let Some(named) = crates.get(module).filter(|n| !n.is_empty()) {
            let named: Vec<&str> = named.iter().map(String::as_str).collect();
            out.push_str(&format!(" [crates: {}]", named.join(", ")));
        }
        out.push('\n');
    }
    out
}

/// `module -> dep, dep` lines, one per module, sorted.
pub fn render(graph: &Graph) -> String {
    let mut out = String::new();
    for (module, deps) in graph {
        let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
        out.push_str(&format!("{module} -> {}\n", deps.join(", ")));
    }
    out
}

/// Strongly connected components with more than one module (Tarjan).
pub fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.graph.contains_key(w) {
                    continue;
                }
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).map(|l| {
                        *l = (*l).min(lw);
                        *l
                    });
                    let _ = lv;
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    if let Some(l) = self.low.get_mut(v) {
                        *l = (*l).min(iw);
                    }
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> Graph {
        edges
            .iter()
            .map(|(m, deps)| (m.to_string(), deps.iter().map(|d| d.to_string()).collect()))
            .collect()
    }

    #[test]
    fn finds_use_paths_groups_and_inline_paths() {
        let code = code_only(
            "use crate::store::{KeyRecord, Store};\nuse crate::{auth, billing::price, core::{a, b}};\n\
             // use crate::commented;\nfn f() { crate::metrics::global(); my_crate::x(); }\n\
             #[cfg(test)]\nmod tests { use crate::testonly; }\n",
        );
        let found: Vec<String> = referenced_modules(&code, "crate").into_iter().collect();
        assert_eq!(found, ["auth", "billing", "core", "metrics", "store"]);
        assert!(names_word("x: &AppState", "AppState"));
        assert!(!names_word("AppStateful", "AppState"));
    }

    #[test]
    fn crate_layers_are_the_re_exported_crates() {
        let lib = code_only(
            "pub mod auth;\n/// Doc.\npub use mediaparse_core as core;\n\
             pub use mediaparse_store as store;\nuse other_crate as o;\n\
             // pub use mediaparse_old as old;\n",
        );
        let found: Vec<String> = crate_layers(&lib).into_iter().collect();
        assert_eq!(found, ["core", "store"]);
    }

    #[test]
    fn cycles_are_found_and_one_way_graphs_pass() {
        let circle = graph(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"]), ("d", &["a"])]);
        assert_eq!(cycles(&circle), vec![vec!["a", "b", "c"]]);
        let layered = graph(&[
            ("http", &["parse", "core"]),
            ("parse", &["core"]),
            ("core", &[]),
        ]);
        assert!(cycles(&layered).is_empty());
    }
}
