//! `Catalogue`: the platforms a process knows, id → manifest.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::{Manifest, ManifestError};

/// The platforms known to a process (the host: the loaded ones), listed in
/// `order`, then by id.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    platforms: BTreeMap<String, Arc<Manifest>>,
}

impl Catalogue {
    pub fn new() -> Catalogue {
        Catalogue::default()
    }

    /// Every `<dir>/*/platform.toml` of a source tree (the `extractors/`
    /// folder): the bundled set, for tests and tools. A folder must be named
    /// after the id its file declares.
    pub fn from_source_tree(dir: &Path) -> Result<Catalogue, ManifestError> {
        let read = |e: std::io::Error| ManifestError::Read {
            path: dir.display().to_string(),
            source: e,
        };
        let mut catalogue = Catalogue::new();
        for entry in std::fs::read_dir(dir).map_err(read)? {
            let folder = entry.map_err(read)?.path();
            let file = folder.join("platform.toml");
            if !file.is_file() {
                continue;
            }
            let manifest = Manifest::load(&file)?;
            if folder.file_name().and_then(|n| n.to_str()) != Some(manifest.id.as_str()) {
                return Err(ManifestError::Invalid {
                    path: Some(file.display().to_string()),
                    field: "id",
                    reason: format!("{:?} differs from its folder's name", manifest.id),
                });
            }
            catalogue.insert(manifest);
        }
        Ok(catalogue)
    }

    /// Every valid `<id>.toml` in an installed extractors folder (beside the
    /// `<id>.wasm` files): what a tool without the running service's
    /// registry (the CLI) knows. Invalid files are skipped; the service's
    /// registry reports them.
    pub fn from_installed_dir(dir: &Path) -> Catalogue {
        let mut catalogue = Catalogue::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            if path.extension().is_some_and(|e| e == "toml")
                && !stem.starts_with('.')
                && let Ok(m) = Manifest::load(&path)
                && m.id == stem
            {
                catalogue.insert(m);
            }
        }
        catalogue
    }

    /// Add or replace a platform; returns the one it replaced.
    pub fn insert(&mut self, manifest: impl Into<Arc<Manifest>>) -> Option<Arc<Manifest>> {
        let manifest = manifest.into();
        self.platforms.insert(manifest.id.clone(), manifest)
    }

    pub fn remove(&mut self, id: &str) -> Option<Arc<Manifest>> {
        self.platforms.remove(id)
    }

    pub fn get(&self, id: &str) -> Option<&Arc<Manifest>> {
        self.platforms.get(id)
    }

    pub fn contains(&self, id: &str) -> bool {
        self.platforms.contains_key(id)
    }

    pub fn len(&self) -> usize {
        self.platforms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.platforms.is_empty()
    }

    /// The platforms in listing order: by `order` (unnumbered last), then id.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Manifest>> {
        let mut all: Vec<_> = self.platforms.values().collect();
        all.sort_by_key(|m| (m.order.unwrap_or(u32::MAX), m.id.as_str()));
        all.into_iter()
    }

    /// The platform ids in listing order.
    pub fn ids(&self) -> Vec<&str> {
        self.iter().map(|m| m.id.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(id: &str, order: Option<u32>) -> Manifest {
        let order = order.map(|o| format!("order = {o}\n")).unwrap_or_default();
        Manifest::parse(&format!(
            "id = \"{id}\"\nname = \"{id}\"\nprice = 1\n{order}example_url = \"https://{id}.example/\"\n"
        ))
        .unwrap()
    }

    #[test]
    fn listing_order_is_order_then_id() {
        let mut c = Catalogue::new();
        c.insert(manifest("zeta", None));
        c.insert(manifest("beta", Some(2)));
        c.insert(manifest("alpha", None));
        c.insert(manifest("omega", Some(1)));
        assert_eq!(c.ids(), ["omega", "beta", "alpha", "zeta"]);
        assert!(c.insert(manifest("beta", None)).is_some());
        assert_eq!(c.ids(), ["omega", "alpha", "beta", "zeta"]);
        assert!(c.remove("alpha").is_some() && !c.contains("alpha"));
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn an_installed_folder_yields_its_valid_tomls() {
        let dir = std::env::temp_dir().join(format!("catalogue-installed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = |id: &str| {
            format!(
                "id = \"{id}\"\nname = \"x\"\nprice = 2\nexample_url = \"https://x.example/\"\n"
            )
        };
        std::fs::write(dir.join("alpha.toml"), text("alpha")).unwrap();
        std::fs::write(dir.join("beta.toml"), text("other")).unwrap();
        std::fs::write(dir.join("gamma.toml"), "id = 1\n").unwrap();
        std::fs::write(dir.join(".delta.toml"), text("delta")).unwrap();
        std::fs::write(dir.join("alpha.wasm"), b"").unwrap();
        let c = Catalogue::from_installed_dir(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(c.ids(), ["alpha"]);
    }

    #[test]
    fn the_bundled_source_tree_is_specs_eleven() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../extractors");
        let c = Catalogue::from_source_tree(&dir).unwrap();
        assert_eq!(
            c.ids(),
            [
                "tiktok",
                "douyin",
                "toutiao",
                "youtube",
                "twitter",
                "instagram",
                "threads",
                "xiaohongshu",
                "bilibili",
                "kuaishou",
                "weibo"
            ]
        );
        let price = |id: &str| c.get(id).unwrap().price;
        assert_eq!(
            [
                price("youtube"),
                price("threads"),
                price("kuaishou"),
                price("xiaohongshu")
            ],
            [3, 2, 2, 10]
        );
        let ones = [
            "tiktok",
            "douyin",
            "toutiao",
            "twitter",
            "instagram",
            "bilibili",
            "weibo",
        ];
        assert!(ones.iter().all(|id| price(id) == 1));
        assert!(
            c.iter()
                .all(|m| !m.members.is_empty() && !m.media_hosts.is_empty())
        );
    }
}
