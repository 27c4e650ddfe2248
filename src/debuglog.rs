//! The debug log of the hook commands (seed 004: `CAVEKIT_DEBUG=1` makes the Stop hook write
//! `.cavekit/.debug.log`): with `AUTOCTL_LOG=debug` in the hook's environment, or `--log
//! FILE`, every `hook stop` / `hook stop-failure` appends one JSON line saying what it read
//! and what it answered — so a loop that stopped, or would not stop, can be explained after
//! the fact without re-running the session. The default file is the project's
//! `.autoctl/debug.log`, written only where a loop directory exists.
//!
//! Best effort and bounded: a line is appended with one `write(2)` on an `O_APPEND` file (so
//! hooks running at once never interleave within a line), the file is rotated to `FILE.1` past
//! [`LIMIT`], a symlink at the path is refused, and a failure is a warning — a debug log
//! never changes a hook's answer.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The environment variable that turns the log on.
pub const ENV: &str = "AUTOCTL_LOG";
/// The default file's name inside the project's `.autoctl/`.
pub const FILE_NAME: &str = "debug.log";
/// Past this size the log is moved to `FILE.1` (the one before is dropped).
pub const LIMIT: u64 = 1024 * 1024;

/// Where (and whether) to log: `--log FILE` wins; else `AUTOCTL_LOG=debug` logs to
/// `default` (when the caller has one). An `AUTOCTL_LOG` value other than `debug`, `off`, `0`
/// or empty is reported and ignored.
pub fn target(
    flag: Option<&Path>,
    env: Option<&str>,
    default: Option<PathBuf>,
) -> (Option<PathBuf>, Option<String>) {
    if let Some(file) = flag {
        return (Some(file.to_path_buf()), None);
    }
    match env.map(str::trim) {
        None | Some("" | "off" | "0") => (None, None),
        Some("debug") => (default, None),
        Some(other) => (
            None,
            Some(format!(
                "{ENV}={:?} is not a log level (use {ENV}=debug); not logging",
                crate::output::printable(other)
            )),
        ),
    }
}

/// Append `record` as one line to `path`, rotating first when the file is past [`LIMIT`].
pub fn append(path: &Path, record: &Value) -> Result<()> {
    if fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
        bail!("refusing to log to {}: it is a symlink", path.display());
    }
    if fs::metadata(path).is_ok_and(|meta| meta.len() > LIMIT) {
        let mut rotated = path.as_os_str().to_os_string();
        rotated.push(".1");
        fs::rename(path, &rotated).with_context(|| format!("cannot rotate {}", path.display()))?;
    }
    let mut line = serde_json::to_vec(record).expect("a log record serializes");
    line.push(b'\n');
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("cannot open the debug log {}", path.display()))?;
    file.write_all(&line)
        .with_context(|| format!("cannot write the debug log {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_and_the_variable_needs_debug() {
        let default = Some(PathBuf::from("/p/.autoctl/debug.log"));
        assert_eq!(
            target(Some(Path::new("/tmp/x.log")), None, default.clone()).0,
            Some(PathBuf::from("/tmp/x.log"))
        );
        assert_eq!(target(None, Some("debug"), default.clone()).0, default);
        assert_eq!(target(None, None, default.clone()), (None, None));
        assert_eq!(target(None, Some("off"), default.clone()), (None, None));
        let (none, warning) = target(None, Some("verbose"), default);
        assert!(none.is_none() && warning.unwrap().contains("AUTOCTL_LOG=\"verbose\""));
    }

    #[test]
    fn lines_are_appended_rotated_and_symlinks_refused() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("debug.log");
        append(&log, &serde_json::json!({"n": 1})).unwrap();
        append(&log, &serde_json::json!({"n": 2})).unwrap();
        assert_eq!(fs::read_to_string(&log).unwrap(), "{\"n\":1}\n{\"n\":2}\n");
        fs::write(&log, vec![b'x'; LIMIT as usize + 1]).unwrap();
        append(&log, &serde_json::json!({"n": 3})).unwrap();
        assert_eq!(fs::read_to_string(&log).unwrap(), "{\"n\":3}\n");
        assert!(dir.path().join("debug.log.1").exists());
        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink(dir.path().join("target"), &link).unwrap();
        assert!(append(&link, &serde_json::json!({})).is_err());
        assert!(!dir.path().join("target").exists());
    }
}
