//! The decision log: every decision a door makes (the hook, a supervisor reading a screen)
//! appended as one JSON line to `$AUTOCTL_STATE_DIR/policy/decisions.jsonl` — time, session or
//! run, door, tool, a one-line summary of the input (the command, path, URL or query; never
//! a file's content), decision and rule. `autoctl policy log` prints it.
//!
//! Bounded: past [`LOG_LIMIT`] bytes the file is renamed to `decisions.jsonl.1` (replacing
//! the older one), so the log never holds more than twice the limit. Each line is written
//! with one `write(2)` on a file opened for appending, so concurrent hooks never interleave
//! lines; the rename is done by whoever takes the rotation lock first. A symlink planted at
//! the log is refused, never written through. Logging is best effort: a hook never fails
//! because its log could not be written.

use std::fs::{self, OpenOptions};
use std::io::{self, BufRead, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::fsx::FileLock;

/// Size at which the log is rotated.
pub const LOG_LIMIT: u64 = 1024 * 1024;
/// Longest line written (a summary is cut to fit).
pub const LINE_LIMIT: usize = 4000;

/// One decision as logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// RFC 3339.
    pub time: String,
    /// The Claude Code session (hook door).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The supervised run (screen door).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// `hook` or `screen`.
    pub door: String,
    pub tool: String,
    /// A one-line summary of the input.
    pub input: String,
    /// `allow`, `deny`, `no-decision`.
    pub decision: String,
    pub rule: String,
}

/// The log's directory under the state directory.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("policy")
}

/// The current log file.
pub fn path(state_dir: &Path) -> PathBuf {
    dir(state_dir).join("decisions.jsonl")
}

fn rotated(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".1");
    PathBuf::from(name)
}

/// Append one entry (creating the directory), rotating past the limit.
pub fn append(state_dir: &Path, entry: &Entry) -> Result<()> {
    let dir = dir(state_dir);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let path = path(state_dir);
    let mut line = serde_json::to_string(entry)?;
    if line.len() > LINE_LIMIT {
        let mut cut = entry.clone();
        let excess = line.len() - LINE_LIMIT + 3;
        let keep = cut.input.len().saturating_sub(excess);
        cut.input = format!("{}…", super::prefix(&cut.input, keep));
        line = serde_json::to_string(&cut)?;
    }
    line.push('\n');
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        anyhow::bail!("{} is not a regular file", path.display());
    }
    file.write_all(line.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    if meta.len() + line.len() as u64 > LOG_LIMIT {
        rotate(&path)?;
    }
    Ok(())
}

fn rotate(path: &Path) -> Result<()> {
    let lock_path = crate::fsx::side_lock_path(path);
    let Some(_lock) = FileLock::try_acquire(&lock_path)? else {
        return Ok(()); // another writer rotates
    };
    // Another writer may have rotated between our write and the lock.
    let len = fs::symlink_metadata(path).map(|m| m.len()).unwrap_or(0);
    if len > LOG_LIMIT {
        fs::rename(path, rotated(path))
            .with_context(|| format!("cannot rotate {}", path.display()))?;
    }
    Ok(())
}

/// Every logged entry, oldest first (the rotated file, then the current one); lines that do
/// not parse are skipped and counted.
pub fn read(state_dir: &Path) -> Result<(Vec<Entry>, usize)> {
    let path = path(state_dir);
    let mut entries = Vec::new();
    let mut bad = 0;
    for file in [rotated(&path), path] {
        let handle = match crate::fsx::open_regular(&file) {
            Ok(handle) => handle,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", file.display())),
        };
        for line in io::BufReader::new(handle).lines() {
            let line = line.with_context(|| format!("cannot read {}", file.display()))?;
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Entry>(&line) {
                Ok(entry) => entries.push(entry),
                Err(_) => bad += 1,
            }
        }
    }
    Ok((entries, bad))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: usize) -> Entry {
        Entry {
            time: "2026-11-26T10:00:00Z".to_string(),
            session: Some("s".to_string()),
            run: None,
            door: "hook".to_string(),
            tool: "Bash".to_string(),
            input: format!("cargo test {n} {}", "x".repeat(200)),
            decision: "allow".to_string(),
            rule: "runner".to_string(),
        }
    }

    #[test]
    fn the_log_rotates_and_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..12_000 {
            append(dir.path(), &entry(n)).unwrap();
        }
        let current = fs::metadata(path(dir.path())).unwrap().len();
        let old = fs::metadata(rotated(&path(dir.path()))).unwrap().len();
        assert!(current <= LOG_LIMIT + LINE_LIMIT as u64 && old <= LOG_LIMIT + LINE_LIMIT as u64);
        let (entries, bad) = read(dir.path()).unwrap();
        assert_eq!(bad, 0);
        assert!(entries.len() > 4000);
        assert!(
            entries
                .last()
                .unwrap()
                .input
                .starts_with("cargo test 11999 ")
        );
    }

    #[test]
    fn long_inputs_are_cut_and_symlinks_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut long = entry(0);
        long.input = "é".repeat(10_000);
        append(dir.path(), &long).unwrap();
        let (entries, _) = read(dir.path()).unwrap();
        assert!(entries[0].input.len() < LINE_LIMIT);
        let other = tempfile::tempdir().unwrap();
        fs::create_dir_all(super::dir(other.path())).unwrap();
        let target = other.path().join("target");
        fs::write(&target, "").unwrap();
        std::os::unix::fs::symlink(&target, path(other.path())).unwrap();
        assert!(append(other.path(), &entry(1)).is_err());
        assert_eq!(fs::read(&target).unwrap(), b"");
    }
}
