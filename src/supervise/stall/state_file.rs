//! Where `stall check` keeps its [`StallState`]s: one JSON document (`--state FILE`) holding
//! the state of every target it watches, keyed by the target as given.
//!
//! Every read-modify-write happens under an exclusive lock on a side file (`FILE.lock`), so
//! overlapping cron runs serialize and never lose an update; the write is atomic (temp file,
//! fsync, rename). A state file that does not parse is an error, never a silent reset: the
//! counters it holds are what enforce the recovery limits. A state file that is a symlink is
//! refused, since reading through it would trust whatever it points at and replacing it
//! would silently drop the counters behind it.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use serde::{Deserialize, Serialize};

use super::StallState;
use crate::fsx::{self, FileLock};
use crate::protocol::document;
use crate::supervise::wait::WaitState;

/// The document version this build reads and writes.
pub const VERSION: u32 = 1;

/// The largest state file read (thousands of targets).
pub const STATE_LIMIT: u64 = 4 * fsx::DOCUMENT_LIMIT;

/// The stored document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateDocument {
    pub version: u32,
    pub targets: BTreeMap<String, StallState>,
    /// The wait core's state of each target in a wait (or that was resumed in this step), by
    /// the same key as `targets`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub waits: BTreeMap<String, WaitState>,
}

impl Default for StateDocument {
    fn default() -> Self {
        StateDocument {
            version: VERSION,
            targets: BTreeMap::new(),
            waits: BTreeMap::new(),
        }
    }
}

/// A state document read under its lock; [`LockedState::save`] writes it back.
#[derive(Debug)]
pub struct LockedState {
    _lock: FileLock,
    path: PathBuf,
    pub doc: StateDocument,
}

/// The side file that serializes access to `path`.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

fn refuse_symlink(path: &Path) -> Result<()> {
    fsx::refuse_symlink(path, "state file", "--state")
}

/// Lock and read the state at `path` (a missing file is an empty state).
pub fn open(path: &Path) -> Result<LockedState> {
    refuse_symlink(path)?;
    let lock = FileLock::acquire(&lock_path(path))?;
    // Checked again under the lock: the file may have been swapped while we waited.
    refuse_symlink(path)?;
    let doc = match fsx::read_bounded(path, STATE_LIMIT) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => StateDocument::default(),
        Err(err) => {
            return Err(err).with_context(|| format!("cannot read state file {}", path.display()));
        }
        Ok(bounded) => parse(path, bounded)?,
    };
    Ok(LockedState {
        _lock: lock,
        path: path.to_path_buf(),
        doc,
    })
}

fn corrupt(path: &Path, problem: impl std::fmt::Display) -> anyhow::Error {
    anyhow!(
        "state file {} is corrupt ({problem}); fix it or remove it to start over (removing resets the stall counters)",
        path.display()
    )
}

fn parse(path: &Path, bounded: fsx::Bounded) -> Result<StateDocument> {
    let bytes = document::bounded_bytes(bounded).map_err(|p| corrupt(path, p))?;
    let value = document::parse_json(&bytes).map_err(|p| corrupt(path, p))?;
    if let Some(violation) = crate::schema::violations("stall-state", &value).first() {
        return Err(corrupt(
            path,
            format!("{}: {}", violation.pointer, violation.message),
        ));
    }
    document::parse_typed(&bytes).map_err(|problems| corrupt(path, &problems[0]))
}

impl LockedState {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write the document back atomically (still under the lock).
    pub fn save(&self) -> Result<()> {
        refuse_symlink(&self.path)?;
        let mut bytes =
            serde_json::to_vec_pretty(&self.doc).expect("a state document always serializes");
        bytes.push(b'\n');
        fsx::atomic_write(&self.path, &bytes)
            .with_context(|| format!("cannot save state file {}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn round_trip_and_missing_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stall.json");
        let mut state = open(&path).unwrap();
        assert!(state.doc.targets.is_empty());
        state.doc.targets.insert(
            "agent".into(),
            StallState {
                unchanged: 2,
                recoveries_total: 4,
                ..StallState::default()
            },
        );
        state.save().unwrap();
        drop(state);
        let again = open(&path).unwrap();
        assert_eq!(again.doc.targets["agent"].recoveries_total, 4);
        let value: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert!(crate::schema::violations("stall-state", &value).is_empty());
    }

    #[test]
    fn corrupt_truncated_and_symlinked_files_are_errors_not_resets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stall.json");
        for (text, expected) in [
            ("", "empty document"),
            (
                "{\"version\": 1, \"targets\": {\"a\": {\"unchanged\": 2",
                "invalid JSON",
            ),
            ("{\"version\": 2, \"targets\": {}}", "/version"),
            (
                "{\"version\": 1, \"targets\": {\"a\": {\"unchanged\": -1}}}",
                "/targets/a/unchanged",
            ),
        ] {
            fs::write(&path, text).unwrap();
            let err = open(&path).unwrap_err().to_string();
            assert!(
                err.contains("is corrupt") && err.contains(expected),
                "{err}"
            );
            assert_eq!(fs::read_to_string(&path).unwrap(), text, "left as it was");
        }
        fs::remove_file(&path).unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "{}").unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let err = open(&path).unwrap_err().to_string();
        assert!(err.contains("is a symlink"), "{err}");
    }
}
