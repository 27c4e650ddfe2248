//! What a stall heartbeat reads besides the pane, shared by `stall check --task` and
//! `run tick`: the task's `.status.json` update time (the step clock), the quota-wait record
//! `hook stop-failure` keeps for the task's project, and the continuation's compare-and-swap.
//!
//! Problems reading these are reported to the caller as text, never fatal: a heartbeat that
//! cannot read a status file still watches the pane.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use chrono::{DateTime, Utc};

use super::stall::StatusMark;
use super::stall::step_timeout::{Continuation, continuation, status_updated_at};
use crate::fsx::{self, Bounded};
use crate::hook::quota;
use crate::hook::state::DIR_NAME;
use crate::protocol::{document, status};
use crate::supervise::channels::TaskCompaction;
use crate::taskai::profile;

/// When the task's status last changed: `.status.json`'s `updated_at` (in `DIR/.working/`
/// or `DIR/`), else the file's modification time. `Ok(None)` when the task has no status
/// file; `Err` when it cannot be read or its `updated_at` is not a time (guessing would fire
/// or mask a step timeout).
pub fn status_mark(dir: &Path) -> Result<Option<StatusMark>> {
    let Some(path) = status::locate(dir) else {
        return Ok(None);
    };
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(anyhow!("cannot read {}: {err}", path.display())),
    };
    let meta = file
        .metadata()
        .map_err(|err| anyhow!("cannot read {}: {err}", path.display()))?;
    let bytes = match fsx::read_bounded_sized(file, fsx::DOCUMENT_LIMIT, meta.len()) {
        Ok(Bounded::Complete(bytes)) => bytes,
        Ok(Bounded::TooLarge { limit }) => {
            return Err(anyhow!(
                "{} is larger than the {} limit",
                path.display(),
                fsx::human_size(limit)
            ));
        }
        Err(err) => return Err(anyhow!("cannot read {}: {err}", path.display())),
    };
    let value = document::parse_json(&bytes).map_err(|p| anyhow!("{}: {p}", path.display()))?;
    match status_updated_at(&value).map_err(|e| anyhow!("{}: {e}", path.display()))? {
        Some(at) => Ok(Some(StatusMark {
            updated_at: value["updated_at"].as_str().unwrap_or_default().to_string(),
            at,
        })),
        None => {
            let at = DateTime::<Utc>::from_timestamp(meta.mtime(), meta.mtime_nsec() as u32)
                .unwrap_or_default();
            Ok(Some(StatusMark {
                updated_at: at.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true),
                at,
            }))
        }
    }
}

/// The `updated_at` the compare-and-swap compares with, read now (`None` when the file or
/// the value is gone or unreadable: the continuation can no longer be confirmed).
pub fn current_updated_at(dir: &Path) -> Option<String> {
    status_mark(dir).ok().flatten().map(|mark| mark.updated_at)
}

/// The compare-and-swap before a continuation: re-read `updated_at` now and compare it with
/// the value the decision saw.
pub fn continuation_cas(expected: &str, task: &Path) -> Continuation {
    continuation(expected, current_updated_at(task).as_deref())
}

/// The project whose `.autoctl/` holds the loop files of a task: the nearest directory at or
/// above the task dir that has one (`hook stop-failure` writes its quota-wait record there).
pub fn project_of(task: &Path) -> Option<PathBuf> {
    let start = std::path::absolute(task).ok()?;
    start
        .ancestors()
        .find(|dir| dir.join(DIR_NAME).is_dir())
        .map(Path::to_path_buf)
}

/// An active quota wait recorded by `hook stop-failure` for the task's project, as the reason
/// a heartbeat gives (`Ok(None)`: no project, no record, or a record whose reset time has
/// passed). A record that cannot be read is an `Err`, and no wait.
pub fn quota_wait(task: &Path, now: DateTime<Utc>) -> Result<Option<String>> {
    Ok(quota_record(task)?
        .filter(|record| active(record, now))
        .map(|(why, _)| why))
}

/// A record is a wait until its reset time (or, without one, until a finished turn removes
/// it).
pub fn active(record: &QuotaRecord, now: DateTime<Utc>) -> bool {
    record.1.is_none_or(|reset| now < reset)
}

/// A quota-wait record: the reason a heartbeat gives, and its reset time if it names one.
pub type QuotaRecord = (String, Option<DateTime<Utc>>);

/// The quota-wait record with its reset time, whether or not the reset has passed: `run
/// tick`'s wait core resumes an agent still idle on it once the reset has passed, and bounds
/// a record without one by `--max-quota-wait`. The record lasts until a finished turn
/// (`hook stop`) removes it.
pub fn quota_record(task: &Path) -> Result<Option<QuotaRecord>> {
    let Some(project) = project_of(task) else {
        return Ok(None);
    };
    let Some(wait) = quota::read_quota_wait(&project).map_err(|p| anyhow!(p.0))? else {
        return Ok(None);
    };
    let until = match (&wait.reset_at, &wait.reset_text) {
        (Some(at), _) => format!("until {at}"),
        (None, Some(text)) => format!("until the limit resets ({text})"),
        (None, None) => "until the next finished turn".to_string(),
    };
    Ok(Some((
        format!(
            "quota: {} records a {} wait since {} {until}",
            project.join(DIR_NAME).join(quota::QUOTA_FILE).display(),
            wait.kind,
            wait.since
        ),
        wait.reset_time(),
    )))
}

/// What the task says about its compaction threshold (seed 002): its `.type-profile.md`
/// "## Auto Adaptation" `compaction_threshold`, and whether it is a task-ai module (it has a
/// `.status.json`). A profile that cannot be read is reported and not used (the run goes
/// on at the fallback).
pub fn task_compaction(dir: &Path) -> (TaskCompaction, Option<String>) {
    let task_ai = status::locate(dir).is_some();
    let path = dir.join(profile::FILE_NAME);
    let read = fsx::read_document(&path, "a profile")
        .map_err(|e| e.to_string())
        .and_then(|bytes| match bytes {
            None => Ok(None),
            Some(bytes) => {
                let text = String::from_utf8(bytes)
                    .map_err(|_| format!("{}: not UTF-8", path.display()))?;
                profile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
            }
        });
    let (adaptation, note) = match read {
        Ok(adaptation) => (adaptation, None),
        Err(why) => (
            None,
            Some(format!("{why}; its compaction_threshold is not used")),
        ),
    };
    let profile = adaptation
        .and_then(|a| a.compaction_threshold)
        // Whole percent, rounded up: the status line reports whole percent.
        .map(|score| u8::try_from(score.units().div_ceil(100)).unwrap_or(100));
    (TaskCompaction { profile, task_ai }, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_time_is_updated_at_else_the_mtime_and_bad_values_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(status_mark(dir.path()).unwrap(), None);
        std::fs::create_dir(dir.path().join(".working")).unwrap();
        let file = dir.path().join(".working/.status.json");
        std::fs::write(
            &file,
            r#"{"status":"executing","updated_at":"2026-01-01T10:00:00+02:00"}"#,
        )
        .unwrap();
        let mark = status_mark(dir.path()).unwrap().unwrap();
        assert_eq!(mark.updated_at, "2026-01-01T10:00:00+02:00");
        assert_eq!(mark.at.to_rfc3339(), "2026-01-01T08:00:00+00:00");
        std::fs::write(&file, r#"{"status":"executing"}"#).unwrap();
        let mark = status_mark(dir.path()).unwrap().unwrap();
        let modified: DateTime<Utc> = std::fs::metadata(&file).unwrap().modified().unwrap().into();
        assert_eq!(
            mark.at.timestamp_micros(),
            modified.timestamp_micros(),
            "{mark:?}"
        );
        for bad in [r#"{"updated_at":"yesterday"}"#, "{", r#"{"updated_at":7}"#] {
            std::fs::write(&file, bad).unwrap();
            assert!(status_mark(dir.path()).is_err(), "{bad}");
            assert_eq!(current_updated_at(dir.path()), None);
        }
    }

    #[test]
    fn the_quota_record_is_found_above_the_task_and_expires() {
        let root = tempfile::tempdir().unwrap();
        let task = root.path().join("tasks/auth");
        std::fs::create_dir_all(&task).unwrap();
        let now: DateTime<Utc> = "2026-01-01T10:00:00Z".parse().unwrap();
        assert_eq!(quota_wait(&task, now).unwrap(), None);
        std::fs::create_dir(root.path().join(DIR_NAME)).unwrap();
        assert_eq!(project_of(&task).as_deref(), Some(root.path()));
        assert_eq!(quota_wait(&task, now).unwrap(), None, "no record");
        std::fs::write(
            root.path().join(".autoctl/quota-wait.json"),
            r#"{"since":"2026-01-01T09:00:00Z","kind":"rate_limit","reset_at":"2026-01-01T11:00:00Z"}"#,
        )
        .unwrap();
        let why = quota_wait(&task, now).unwrap().unwrap();
        assert!(why.contains("until 2026-01-01T11:00:00Z"), "{why}");
        let later: DateTime<Utc> = "2026-01-01T11:00:01Z".parse().unwrap();
        assert_eq!(quota_wait(&task, later).unwrap(), None, "reset passed");
        std::fs::write(root.path().join(".autoctl/quota-wait.json"), "{").unwrap();
        assert!(quota_wait(&task, now).is_err());
    }
}
