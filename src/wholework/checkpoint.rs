//! wholework's checkpoint files (seed 003, "Checkpoint Design"), schema v1, in a directory
//! (`.tmp/` by default):
//!
//! - `auto-state-N.json` — one issue's verify iteration count (`--resume N`);
//! - `auto-batch-state-ID.json` — a batch's remaining/completed/failed lists (`ID` = `default`
//!   maps to `auto-batch-state.json` and is not indexed);
//! - `auto-batch-active.json` — the index of active batch ids.
//!
//! Checkpoints are hints: labels win. A single checkpoint whose `issue_number` does not match
//! is stale and reads as 0; a live `phase/done` label discards it. Every write is atomic, and
//! each read-modify-write (a batch update, the active index) holds a lock on a side file so
//! two batches running at once never lose each other's update.

use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::fsx::{self, FileLock};
use crate::protocol::document::{self, Problem};

/// The only schema version this autoctl reads and writes.
pub const VERSION: &str = "v1";

/// The batch id that maps to the pre-BATCH_ID file name.
pub const DEFAULT_BATCH: &str = "default";

/// The active index's file name.
pub const ACTIVE_FILE: &str = "auto-batch-active.json";

/// The default checkpoint directory.
pub const DEFAULT_DIR: &str = ".tmp";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Single {
    pub schema_version: String,
    pub issue_number: u64,
    pub verify_iteration_count: u64,
    pub last_update: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Batch {
    pub schema_version: String,
    pub mode: String,
    pub remaining: Vec<u64>,
    pub completed: Vec<u64>,
    pub failed: Vec<u64>,
    pub last_update: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Active {
    pub schema_version: String,
    pub active_batch_ids: Vec<String>,
    pub last_update: String,
}

/// A batch issue's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Finish {
    /// Move the issue to `completed`
    Complete,
    /// Move the issue to `failed`
    Fail,
}

pub fn single_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("auto-state-{number}.json"))
}

pub fn batch_path(dir: &Path, id: &str) -> PathBuf {
    if id == DEFAULT_BATCH {
        dir.join("auto-batch-state.json")
    } else {
        dir.join(format!("auto-batch-state-{id}.json"))
    }
}

pub fn active_path(dir: &Path) -> PathBuf {
    dir.join(ACTIVE_FILE)
}

/// Why a batch id cannot name a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchIdError {
    #[error("a batch id is 1 to 128 characters")]
    Length,
    #[error("{0:?}: a batch id has only letters, digits, '-' and '_' (such as 12345-1718336400)")]
    Characters(String),
}

/// Batch ids become file names: letters, digits, `-`, `_` only (`${PPID}-$(date +%s)`).
pub fn check_batch_id(id: &str) -> Result<(), BatchIdError> {
    if id.is_empty() || id.len() > 128 {
        return Err(BatchIdError::Length);
    }
    if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(BatchIdError::Characters(id.to_string()));
    }
    Ok(())
}

/// Parse a checkpoint document: its schema version first (so another version gets a plain
/// answer instead of a list of schema complaints), then the schema, then the type.
pub fn parse<T: serde::de::DeserializeOwned>(bytes: &[u8], schema: &str) -> Result<T, Problem> {
    let value = document::parse_json(bytes).map_err(|mut p| {
        if p.message.contains("EOF") {
            p.message.push_str(" (truncated?)");
        }
        p
    })?;
    match value.get("schema_version") {
        Some(serde_json::Value::String(v)) if v == VERSION => {}
        Some(other) => {
            return Err(Problem::at(
                "/schema_version",
                format!("schema version {other}; this autoctl reads {VERSION:?}"),
            ));
        }
        None if value.is_object() => {
            return Err(Problem::at("/", "no schema_version (expected \"v1\")"));
        }
        None => {}
    }
    if let Some(v) = crate::schema::violations(schema, &value).into_iter().next() {
        return Err(Problem::at(v.pointer, v.message));
    }
    document::parse_typed(bytes).map_err(|mut problems| problems.remove(0))
}

/// Read and parse a checkpoint file; `None` when it does not exist.
pub fn read<T: serde::de::DeserializeOwned>(path: &Path, schema: &str) -> Result<Option<T>> {
    let Some(bytes) = fsx::read_document(path, "a checkpoint (delete it)")? else {
        return Ok(None);
    };
    parse(&bytes, schema)
        .map(Some)
        .map_err(|p| anyhow::anyhow!("{}: {p} (fix or delete the checkpoint)", path.display()))
}

fn write<T: Serialize>(path: &Path, doc: &T) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(doc).expect("checkpoints serialize");
    bytes.push(b'\n');
    fsx::atomic_write(path, &bytes)
}

/// Create the checkpoint directory if needed (like `mkdir -p .tmp`).
/// Remove the lock side files of checkpoints (`auto-*.json.lock`) a killed holder left in
/// `dir`: every batch command sweeps them, so none outlives the next command (a batch id is
/// often never used again, and its lock would otherwise stay for good).
fn sweep_leftover_locks(dir: &Path) {
    fsx::sweep_side_locks(dir, |name| {
        name.starts_with("auto-") && name.ends_with(".json.lock")
    });
}

pub fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    fsx::require_dir(dir)
}

/// What `read-single` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SingleRead {
    pub issue_number: u64,
    pub verify_iteration_count: u64,
    /// Why the stored value was not used, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discarded: Option<String>,
    /// The stale checkpoint was deleted (label conflict).
    pub deleted: bool,
}

/// The stale rules, as a pure decision: the stored checkpoint (if any), the issue asked for,
/// and whether live labels show `phase/done`. Returns the answer and whether to delete.
pub fn decide_single(stored: Option<&Single>, number: u64, live_done: bool) -> SingleRead {
    let mut read = SingleRead {
        issue_number: number,
        verify_iteration_count: 0,
        discarded: None,
        deleted: false,
    };
    match stored {
        None => {}
        Some(doc) if doc.issue_number != number => {
            read.discarded = Some(format!(
                "stale: the checkpoint is for issue {}, not {number}",
                doc.issue_number
            ));
        }
        Some(_) if live_done => {
            read.discarded = Some("Checkpoint discarded: live labels show phase/done.".to_string());
            read.deleted = true;
        }
        Some(doc) => read.verify_iteration_count = doc.verify_iteration_count,
    }
    read
}

pub fn write_single(dir: &Path, number: u64, count: u64, now: &str) -> Result<Single> {
    ensure_dir(dir)?;
    let doc = Single {
        schema_version: VERSION.to_string(),
        issue_number: number,
        verify_iteration_count: count,
        last_update: now.to_string(),
    };
    write(&single_path(dir, number), &doc)?;
    Ok(doc)
}

/// An issue number the batch does not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("issue {0} is not part of this batch")]
pub struct NotInBatch(pub u64);

/// Move `number` into the outcome's list. An issue the batch does not hold is an error; one
/// already in the target list is left as it is.
pub fn update(batch: &Batch, number: u64, outcome: Finish, now: &str) -> Result<Batch, NotInBatch> {
    let known = batch.remaining.contains(&number)
        || batch.completed.contains(&number)
        || batch.failed.contains(&number);
    if !known {
        return Err(NotInBatch(number));
    }
    let mut next = batch.clone();
    next.remaining.retain(|&n| n != number);
    next.completed.retain(|&n| n != number);
    next.failed.retain(|&n| n != number);
    match outcome {
        Finish::Complete => next.completed.push(number),
        Finish::Fail => next.failed.push(number),
    }
    next.last_update = now.to_string();
    Ok(next)
}

/// Add or remove an id in the active index (pure).
pub fn index_with(active: Option<Active>, id: &str, present: bool, now: &str) -> Active {
    let mut index = active.unwrap_or(Active {
        schema_version: VERSION.to_string(),
        active_batch_ids: Vec::new(),
        last_update: now.to_string(),
    });
    let has = index.active_batch_ids.iter().any(|i| i == id);
    if present && !has {
        index.active_batch_ids.push(id.to_string());
    } else if !present {
        index.active_batch_ids.retain(|i| i != id);
    }
    index.last_update = now.to_string();
    index
}

/// Read-modify-write the active index under its lock.
fn update_index(dir: &Path, id: &str, present: bool, now: &str) -> Result<()> {
    if id == DEFAULT_BATCH {
        return Ok(());
    }
    let path = active_path(dir);
    // Dropping an id from an index that does not exist changes nothing: create neither the
    // index nor its lock for it.
    if !present && !exists(&path)? {
        return Ok(());
    }
    let _lock = FileLock::acquire(&fsx::side_lock_path(&path))?;
    let active: Option<Active> = read(&path, "auto-batch-active")?;
    if !present
        && !active
            .as_ref()
            .is_some_and(|a| a.active_batch_ids.iter().any(|i| i == id))
    {
        return Ok(());
    }
    write(&path, &index_with(active, id, present, now))
}

/// Whether something is at `path` (a dangling symlink counts: it is for `read` to refuse).
fn exists(path: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err).with_context(|| format!("cannot stat {}", path.display())),
    }
}

pub fn write_batch(
    dir: &Path,
    id: &str,
    remaining: Vec<u64>,
    completed: Vec<u64>,
    failed: Vec<u64>,
    now: &str,
) -> Result<Batch> {
    check_batch_id(id)?;
    for (name, list) in [
        ("remaining", &remaining),
        ("completed", &completed),
        ("failed", &failed),
    ] {
        let mut sorted = list.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            bail!("--{name} lists an issue twice");
        }
    }
    let all: Vec<u64> = remaining
        .iter()
        .chain(&completed)
        .chain(&failed)
        .copied()
        .collect();
    let mut sorted = all.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        bail!(
            "issue {} is in more than one of --remaining, --completed, --failed",
            w[0]
        );
    }
    ensure_dir(dir)?;
    sweep_leftover_locks(dir);
    // Refuse before creating anything (a lock file included) when the index is unreadable.
    if id != DEFAULT_BATCH {
        let _: Option<Active> = read(&active_path(dir), "auto-batch-active")?;
    }
    let path = batch_path(dir, id);
    let existed = exists(&path)?;
    let _lock = FileLock::acquire(&fsx::side_lock_path(&path))?;
    let doc = Batch {
        schema_version: VERSION.to_string(),
        mode: "list".to_string(),
        remaining,
        completed,
        failed,
        last_update: now.to_string(),
    };
    // The index first, then the batch: a crash between the two leaves an index naming a
    // batch that does not exist, which `list_batches` repairs (it waits for this lock, so a
    // write in progress is never mistaken for a crashed one). The other order would leave
    // a batch no index names, which a resume can never find.
    let written = update_index(dir, id, true, now).and_then(|()| {
        crate::failpoint::hit("checkpoint-write-batch-indexed");
        write(&path, &doc)
    });
    if let Err(err) = written {
        if !existed && !exists(&path).unwrap_or(true) {
            // Nothing was created: leave no index entry behind (the lock's side file goes
            // when the lock is released).
            let _ = update_index(dir, id, false, now);
        }
        return Err(err);
    }
    Ok(doc)
}

pub fn update_batch(
    dir: &Path,
    id: &str,
    number: u64,
    outcome: Finish,
    now: &str,
) -> Result<Batch> {
    check_batch_id(id)?;
    let path = batch_path(dir, id);
    fsx::require_dir(dir)?;
    sweep_leftover_locks(dir);
    let missing = || anyhow::anyhow!("no batch {id} in {} (write-batch first)", dir.display());
    // No lock side file for a batch that does not exist (a typo would leave one behind).
    if !exists(&path)? {
        return Err(missing());
    }
    let _lock = FileLock::acquire(&fsx::side_lock_path(&path))?;
    let Some(batch) = read::<Batch>(&path, "auto-batch-state")? else {
        // Deleted while we waited.
        return Err(missing());
    };
    let next =
        update(&batch, number, outcome, now).map_err(|e| anyhow::anyhow!("batch {id}: {e}"))?;
    write(&path, &next)?;
    Ok(next)
}

pub fn read_batch(dir: &Path, id: &str) -> Result<Option<Batch>> {
    check_batch_id(id)?;
    read(&batch_path(dir, id), "auto-batch-state")
}

/// Delete a batch and drop it from the index. Returns whether the state file existed.
pub fn delete_batch(dir: &Path, id: &str, now: &str) -> Result<bool> {
    check_batch_id(id)?;
    if !dir.exists() {
        return Ok(false);
    }
    sweep_leftover_locks(dir);
    let path = batch_path(dir, id);
    // Deleting a batch that does not exist takes no lock (its side file would be created
    // for nothing).
    if !exists(&path)? {
        update_index(dir, id, false, now)?;
        return Ok(false);
    }
    let _lock = FileLock::acquire(&fsx::side_lock_path(&path))?;
    // The batch first, then the index: a crash between the two leaves the index naming a
    // batch that is gone, which `list_batches` repairs.
    let existed = fsx::remove_if_exists(&path)?;
    crate::failpoint::hit("checkpoint-delete-batch-removed");
    update_index(dir, id, false, now)?;
    Ok(existed)
}

/// The active batches, and what listing them repaired.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listed {
    /// The indexed batches whose state file exists, in index order.
    pub ids: Vec<String>,
    /// Indexed batches without a state file (an interrupted write-batch or delete-batch),
    /// dropped from the index.
    pub dropped: Vec<String>,
    /// Repairs that could not be made (a read-only directory): the ids are still left out.
    pub problems: Vec<String>,
}

/// List the active batches, repairing the index on the way: an id whose state file does not
/// exist is what a crash between the index and the file leaves (see [`write_batch`] and
/// [`delete_batch`]); it is dropped from the index once its batch lock shows no write is in
/// progress (the side file a crashed holder left goes when that lock is released).
pub fn list_batches(dir: &Path, now: &str) -> Result<Listed> {
    sweep_leftover_locks(dir);
    let ids = read::<Active>(&active_path(dir), "auto-batch-active")?
        .map(|a| a.active_batch_ids)
        .unwrap_or_default();
    let mut listed = Listed::default();
    for id in ids {
        let path = batch_path(dir, &id);
        if exists(&path)? {
            listed.ids.push(id);
            continue;
        }
        match repair(dir, &id, now) {
            // Written meanwhile by a write-batch that held the lock.
            Ok(false) => listed.ids.push(id),
            Ok(true) => listed.dropped.push(id),
            Err(err) => listed
                .problems
                .push(format!("cannot drop batch {id} from the index: {err:#}")),
        }
    }
    Ok(listed)
}

/// Drop `id` from the index if its state file is still missing once its lock is free.
/// Returns whether it was dropped.
fn repair(dir: &Path, id: &str, now: &str) -> Result<bool> {
    check_batch_id(id).map_err(|e| anyhow::anyhow!("the index names {e}"))?;
    let path = batch_path(dir, id);
    let _lock = FileLock::acquire(&fsx::side_lock_path(&path))?;
    if exists(&path)? {
        return Ok(false);
    }
    update_index(dir, id, false, now)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-04-22T16:10:05Z";

    fn single(n: u64, count: u64) -> Single {
        Single {
            schema_version: VERSION.into(),
            issue_number: n,
            verify_iteration_count: count,
            last_update: NOW.into(),
        }
    }

    /// The stale-checkpoint rules, row by row.
    #[test]
    fn the_stale_rules() {
        assert_eq!(decide_single(None, 317, false).verify_iteration_count, 0);
        let ok = decide_single(Some(&single(317, 2)), 317, false);
        assert_eq!(
            (
                ok.verify_iteration_count,
                ok.discarded.is_none(),
                ok.deleted
            ),
            (2, true, false)
        );
        let mismatch = decide_single(Some(&single(318, 2)), 317, false);
        assert_eq!(
            (mismatch.verify_iteration_count, mismatch.deleted),
            (0, false)
        );
        assert!(mismatch.discarded.unwrap().contains("issue 318"));
        let done = decide_single(Some(&single(317, 2)), 317, true);
        assert_eq!((done.verify_iteration_count, done.deleted), (0, true));
        assert_eq!(
            done.discarded.as_deref(),
            Some("Checkpoint discarded: live labels show phase/done.")
        );
    }

    #[test]
    fn the_seed_examples_parse() {
        let single: Single = parse(br#"{"schema_version": "v1", "issue_number": 317, "verify_iteration_count": 2, "last_update": "2026-04-22T16:10:05Z"}"#, "auto-state").unwrap();
        assert_eq!(single.verify_iteration_count, 2);
        let batch: Batch = parse(br#"{"schema_version": "v1", "mode": "list", "remaining": [104, 105], "completed": [101, 102], "failed": [103], "last_update": "2026-04-22T16:10:05Z"}"#, "auto-batch-state").unwrap();
        assert_eq!(batch.remaining, vec![104, 105]);
        let active: Active = parse(br#"{"schema_version": "v1", "active_batch_ids": ["12345-1718336400", "67890-1718336500"], "last_update": "2026-04-22T16:10:05Z"}"#, "auto-batch-active").unwrap();
        assert_eq!(active.active_batch_ids.len(), 2);
    }

    #[test]
    fn bad_checkpoints_say_why() {
        let truncated = parse::<Single>(
            br#"{"schema_version": "v1", "issue_number": 3"#,
            "auto-state",
        )
        .unwrap_err();
        assert!(truncated.message.contains("truncated"), "{truncated}");
        let v2 = parse::<Single>(
            br#"{"schema_version": "v2", "issue_number": 3}"#,
            "auto-state",
        )
        .unwrap_err();
        assert_eq!(
            v2.to_string(),
            "/schema_version: schema version \"v2\"; this autoctl reads \"v1\""
        );
        let none = parse::<Single>(br#"{"issue_number": 3}"#, "auto-state").unwrap_err();
        assert!(none.message.contains("no schema_version"));
        let extra = parse::<Single>(br#"{"schema_version": "v1", "issue_number": 3, "verify_iteration_count": 1, "last_update": "2026-04-22T16:10:05Z", "pr": 4}"#, "auto-state");
        assert!(extra.is_err());
    }

    #[test]
    fn batch_updates_move_issues_between_lists() {
        let batch = Batch {
            schema_version: VERSION.into(),
            mode: "list".into(),
            remaining: vec![104, 105],
            completed: vec![101],
            failed: vec![],
            last_update: NOW.into(),
        };
        let b = update(&batch, 104, Finish::Complete, NOW).unwrap();
        assert_eq!(
            (b.remaining.clone(), b.completed.clone()),
            (vec![105], vec![101, 104])
        );
        let b = update(&b, 105, Finish::Fail, NOW).unwrap();
        assert_eq!((b.remaining.len(), b.failed.clone()), (0, vec![105]));
        assert_eq!(
            update(&b, 105, Finish::Fail, NOW).unwrap().failed,
            vec![105],
            "idempotent"
        );
        assert!(update(&b, 999, Finish::Fail, NOW).is_err());
    }

    #[test]
    fn the_index_adds_once_and_removes() {
        let a = index_with(None, "1-2", true, NOW);
        let a = index_with(Some(a), "3-4", true, NOW);
        let a = index_with(Some(a), "1-2", true, NOW);
        assert_eq!(a.active_batch_ids, vec!["1-2", "3-4"]);
        assert_eq!(
            index_with(Some(a), "1-2", false, NOW).active_batch_ids,
            vec!["3-4"]
        );
    }

    #[test]
    fn batch_ids_cannot_escape_the_directory() {
        for bad in ["", "../x", "a/b", "a b", ".hidden", "x\n"] {
            assert!(check_batch_id(bad).is_err(), "{bad:?}");
        }
        check_batch_id("12345-1718336400").unwrap();
        assert_eq!(
            batch_path(Path::new(".tmp"), "default"),
            Path::new(".tmp/auto-batch-state.json")
        );
        assert_eq!(
            batch_path(Path::new(".tmp"), "1-2"),
            Path::new(".tmp/auto-batch-state-1-2.json")
        );
    }
}
