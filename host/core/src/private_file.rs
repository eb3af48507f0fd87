//! Files only their owner may read (mode 0600): the database and its
//! backups, remembered values, session cookies. They hold credentials and
//! the books, so they are created private rather than left to the umask.

use std::io::Write;
use std::path::Path;

/// Open options that create a file readable and writable by its owner only.
fn private_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Create `path` empty and private if it does not exist (an existing file
/// is left as it is).
pub fn create_private(path: &Path) -> std::io::Result<()> {
    match private_options().create_new(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Write `bytes` to `path`, private, atomically (a temporary file beside
/// it, synced, then renamed over it).
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp_name);
    let mut file = private_options().truncate(true).open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn files_are_created_for_their_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let created = dir.path().join("a.db");
        create_private(&created).unwrap();
        assert_eq!(mode(&created), 0o600);
        let written = dir.path().join("b.json");
        write_private(&written, b"{}").unwrap();
        assert_eq!(mode(&written), 0o600);
        assert_eq!(std::fs::read(&written).unwrap(), b"{}");
        // An existing file keeps its mode and content.
        std::fs::write(dir.path().join("c"), b"x").unwrap();
        std::fs::set_permissions(dir.path().join("c"), std::fs::Permissions::from_mode(0o640))
            .unwrap();
        create_private(&dir.path().join("c")).unwrap();
        assert_eq!(mode(&dir.path().join("c")), 0o640);
    }
}
