//! `.auto-retry`: how many times in a row a step gave the result a routing row retries (seed
//! 000: "merge conflict unresolvable (after 3 retries)").
//!
//! The seed keeps this counter in the agent's memory, which a context compaction wipes.
//! `autoctl signal write` keeps it in the module instead, next to the signal it explains:
//! `{"step","result","attempt","timestamp"}`, rewritten while the same step keeps giving the
//! same result and removed by the first signal that is not a retry (and by `signal clear`).
//! It is written before the signal: a crash between the two costs at most one retry, never
//! an endless one.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::document;
use crate::fsx;

/// The file name inside a task module.
pub const FILE_NAME: &str = ".auto-retry";

/// The counter of one retried (step, result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryCount {
    pub step: String,
    /// The result family (`conflict`).
    pub result: String,
    /// How many times in a row the step gave the result (1 = the first time).
    pub attempt: u32,
    pub timestamp: String,
}

pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// Read the counter; `None` when there is none. A counter that does not validate is an error
/// naming the file: guessing would either retry forever or stop a loop that may go on.
pub fn read(dir: &Path) -> Result<Option<RetryCount>> {
    let path = path_in(dir);
    let Some(bytes) = fsx::read_document(&path, "a retry counter (delete it)")? else {
        return Ok(None);
    };
    let value = document::parse_with_schema(&bytes, "auto-retry").map_err(|problems| {
        anyhow::anyhow!(
            "{}: {} (delete it to count from 1 again)",
            path.display(),
            problems[0]
        )
    })?;
    document::typed_from_value(&value)
        .map(Some)
        .map_err(|problems| anyhow::anyhow!("{}: {}", path.display(), problems[0]))
}

/// The attempt a step that just gave `result` is at: one more than the stored count when the
/// counter is for the same (step, result), else 1.
pub fn next_attempt(stored: Option<&RetryCount>, step: &str, result: &str) -> u32 {
    match stored {
        Some(count) if count.step == step && count.result == result => {
            count.attempt.saturating_add(1)
        }
        _ => 1,
    }
}

pub fn write(dir: &Path, count: &RetryCount) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(count).expect("a retry counter serializes");
    bytes.push(b'\n');
    fsx::atomic_write(&path_in(dir), &bytes)
}

pub fn clear(dir: &Path) -> Result<bool> {
    fsx::remove_if_exists(&path_in(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(step: &str, result: &str, attempt: u32) -> RetryCount {
        RetryCount {
            step: step.into(),
            result: result.into(),
            attempt,
            timestamp: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn attempts_count_only_the_same_step_and_result() {
        assert_eq!(next_attempt(None, "merge", "conflict"), 1);
        let stored = count("merge", "conflict", 2);
        assert_eq!(next_attempt(Some(&stored), "merge", "conflict"), 3);
        assert_eq!(next_attempt(Some(&stored), "merge", "success"), 1);
        assert_eq!(next_attempt(Some(&stored), "check", "conflict"), 1);
    }

    #[test]
    fn the_counter_round_trips_and_a_bad_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        write(dir.path(), &count("merge", "conflict", 1)).unwrap();
        assert_eq!(
            read(dir.path()).unwrap(),
            Some(count("merge", "conflict", 1))
        );
        std::fs::write(path_in(dir.path()), "{\"attempt\": -1}").unwrap();
        let err = read(dir.path()).unwrap_err().to_string();
        assert!(err.contains(".auto-retry"), "{err}");
        assert!(clear(dir.path()).unwrap());
        assert_eq!(read(dir.path()).unwrap(), None);
    }
}
