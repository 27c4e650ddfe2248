//! The registry in SQLite (`$AUTOCTL_STATE_DIR/autoctl.db`): WAL so readers (`run status`)
//! never wait for a tick, a busy timeout so overlapping writers queue instead of failing, and
//! schema migrations numbered by `PRAGMA user_version`.
//!
//! The table keeps seed 000's `task_auto` columns and names. One deliberate change: the seed's
//! `timeout_minutes` is a generated column computed from `timeout_ms`, because the command line
//! takes durations such as `90s` that whole minutes cannot hold.
//!
//! What the database file must be before autoctl writes to it: absent (it is created), or an
//! autoctl registry (application id `auto`). Anything else — a corrupted file, someone else's
//! SQLite database, a registry from a newer autoctl — is refused with one line and left as it
//! is.

use std::fs;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, TransactionBehavior, params};

use crate::supervise::stall::StallState;

use super::DB_FILE;
use crate::pane::Agent;
use crate::supervise::run::{
    AgentReading, DispatchInto, DispatchStep, Mode, NewRun, Run, SeenSignal, Status,
};
use crate::supervise::stall::Limits;
use crate::supervise::store::{Claim, LEASE, Registry, Selection, StartConflict, claimable};
use crate::supervise::typed::Source;
use crate::supervise::wait::{WaitLimits, WaitState};
use crate::taskai::compaction::CompactionCount;
use crate::time::{Time, format_time, parse_time, plus};

/// `PRAGMA application_id` of an autoctl registry: "auto" in ASCII.
const APPLICATION_ID: i64 = 0x6175_746f;

/// How long a writer waits for another writer before giving up. Ticks hold the write lock for
/// milliseconds; five seconds is a wedged process, not contention.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Migrations, in order; the database's `user_version` is how many have run.
const MIGRATIONS: &[&str] = &[
    // 1: the seed's task_auto table and what the tick needs.
    r#"
CREATE TABLE task_auto (
  session_name         TEXT PRIMARY KEY,
  task_dir             TEXT NOT NULL UNIQUE,
  status               TEXT NOT NULL DEFAULT 'running'
                       CHECK (status IN ('running', 'finished', 'stopped', 'exited', 'lost')),
  max_iterations       INTEGER NOT NULL DEFAULT 20 CHECK (max_iterations > 0),
  timeout_ms           INTEGER NOT NULL DEFAULT 1800000 CHECK (timeout_ms > 0),
  timeout_minutes      REAL GENERATED ALWAYS AS (timeout_ms / 60000.0) VIRTUAL,
  iteration_count      INTEGER NOT NULL DEFAULT 0,
  recovery_count_step  INTEGER NOT NULL DEFAULT 0,
  recovery_count_total INTEGER NOT NULL DEFAULT 0,
  last_capture_hash    TEXT NOT NULL DEFAULT '',
  stall_count          INTEGER NOT NULL DEFAULT 0,
  quota_wait_since     TEXT NOT NULL DEFAULT '',
  started_at           TEXT NOT NULL,
  last_signal_at       TEXT,

  target               TEXT NOT NULL,
  mode                 TEXT NOT NULL DEFAULT 'observe' CHECK (mode IN ('observe', 'dispatch')),
  agent                TEXT NOT NULL DEFAULT 'claude',
  launch_command       TEXT,
  command_template     TEXT NOT NULL,
  routing_table        TEXT NOT NULL,
  stall_threshold      INTEGER NOT NULL DEFAULT 3,
  max_recoveries_step  INTEGER NOT NULL DEFAULT 3,
  max_recoveries_total INTEGER NOT NULL DEFAULT 10,
  quota_waited_seconds INTEGER NOT NULL DEFAULT 0,
  stall_signal_iteration INTEGER,
  stall_signal_timestamp TEXT,
  answered_hash        TEXT,
  escalated_hash       TEXT,
  stall_limit_reached  INTEGER NOT NULL DEFAULT 0,
  stall_checks         INTEGER NOT NULL DEFAULT 0,
  last_check_at        TEXT,
  signals_seen         INTEGER NOT NULL DEFAULT 0,
  signal_fingerprint   TEXT NOT NULL DEFAULT '',
  signal_step          TEXT NOT NULL DEFAULT '',
  signal_result        TEXT NOT NULL DEFAULT '',
  signal_next          TEXT NOT NULL DEFAULT '',
  signal_checkpoint    TEXT NOT NULL DEFAULT '',
  signal_iteration     INTEGER,
  pending_next         TEXT,
  pending_checkpoint   TEXT NOT NULL DEFAULT '',
  dispatched_next      TEXT,
  dispatched_checkpoint TEXT NOT NULL DEFAULT '',
  dispatched_at        TEXT,
  dispatch_count       INTEGER NOT NULL DEFAULT 0,
  shell_seen           INTEGER NOT NULL DEFAULT 0,
  ticks                INTEGER NOT NULL DEFAULT 0,
  heartbeats           INTEGER NOT NULL DEFAULT 0,
  last_tick_at         TEXT,
  last_heartbeat_at    TEXT,
  last_decision        TEXT NOT NULL DEFAULT '',
  stop_reason          TEXT,
  stop_message         TEXT,
  ended_at             TEXT,
  claimed_by           TEXT,
  claimed_until        TEXT
) STRICT;
CREATE INDEX task_auto_status ON task_auto (status);
"#,
    // 2: seed 002's content-based stalls — reasoning loops and step timeouts.
    r#"
ALTER TABLE task_auto ADD COLUMN repeat_limit INTEGER NOT NULL DEFAULT 3 CHECK (repeat_limit >= 0);
ALTER TABLE task_auto ADD COLUMN step_timeout_ms INTEGER NOT NULL DEFAULT 600000 CHECK (step_timeout_ms > 0);
ALTER TABLE task_auto ADD COLUMN message_hash TEXT;
ALTER TABLE task_auto ADD COLUMN message_repeats INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_auto ADD COLUMN transcript_hash TEXT;
ALTER TABLE task_auto ADD COLUMN status_updated_at TEXT;
ALTER TABLE task_auto ADD COLUMN step_since TEXT;
ALTER TABLE task_auto ADD COLUMN step_waited_base INTEGER NOT NULL DEFAULT 0;
"#,
    // 3: every wait ends — the wait core's state and settings (JSON: they grow with the wait
    // table, and no query looks inside), and the run's own notify command.
    r#"
ALTER TABLE task_auto ADD COLUMN waits TEXT NOT NULL DEFAULT '{}';
ALTER TABLE task_auto ADD COLUMN wait_limits TEXT NOT NULL DEFAULT '{}';
ALTER TABLE task_auto ADD COLUMN notify_command TEXT;
"#,
    // 4: hooks first — the agent's state at the last tick and its source, the iteration's
    // compaction budget (one counter, seed 002), and when the screen last changed.
    r#"
ALTER TABLE task_auto ADD COLUMN agent_state TEXT;
ALTER TABLE task_auto ADD COLUMN agent_state_source TEXT
  CHECK (agent_state_source IN ('hook', 'statusline', 'screen'));
ALTER TABLE task_auto ADD COLUMN agent_state_at TEXT;
ALTER TABLE task_auto ADD COLUMN max_compactions INTEGER NOT NULL DEFAULT 3 CHECK (max_compactions >= 0);
ALTER TABLE task_auto ADD COLUMN compaction_iteration INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_auto ADD COLUMN compaction_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_auto ADD COLUMN compactions_seen INTEGER;
ALTER TABLE task_auto ADD COLUMN screen_changed_after TEXT;
"#,
    // 5: stalls counted by elapsed time — when the unchanged screen was first seen.
    r#"
ALTER TABLE task_auto ADD COLUMN stall_unchanged_since TEXT;
"#,
    // 6: the screen's class at the last heartbeat: the screen-change bound of 4 follows what
    // the screen shows, not its every redraw.
    r#"
ALTER TABLE task_auto ADD COLUMN screen_class TEXT;
"#,
    // 7: answering a harmless prompt is not a stall recovery — its own budget per step.
    r#"
ALTER TABLE task_auto ADD COLUMN max_answers INTEGER NOT NULL DEFAULT 50 CHECK (max_answers >= 0);
ALTER TABLE task_auto ADD COLUMN answer_count_step INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_auto ADD COLUMN answer_count_total INTEGER NOT NULL DEFAULT 0;
"#,
    // 8: dispatch mode types into the agent or at a shell prompt, and keeps the intent record
    // of a dispatch (the command text, saved with the count before the keys are typed).
    r#"
ALTER TABLE task_auto ADD COLUMN dispatch_into TEXT NOT NULL DEFAULT 'shell' CHECK (dispatch_into IN ('agent', 'shell'));
ALTER TABLE task_auto ADD COLUMN dispatch_typing TEXT;
"#,
];

/// The schema version this autoctl writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

const COLUMN_COUNT: usize = 80;

const COLUMNS: &str = "session_name, task_dir, status, max_iterations, timeout_ms, \
    iteration_count, recovery_count_step, recovery_count_total, last_capture_hash, stall_count, \
    quota_wait_since, started_at, last_signal_at, target, mode, agent, launch_command, \
    command_template, routing_table, stall_threshold, max_recoveries_step, max_recoveries_total, \
    quota_waited_seconds, stall_signal_iteration, stall_signal_timestamp, answered_hash, \
    escalated_hash, stall_limit_reached, stall_checks, last_check_at, signals_seen, signal_fingerprint, signal_step, signal_result, \
    signal_next, signal_checkpoint, signal_iteration, pending_next, pending_checkpoint, \
    dispatched_next, dispatched_checkpoint, dispatched_at, dispatch_count, shell_seen, ticks, \
    heartbeats, last_tick_at, last_heartbeat_at, last_decision, stop_reason, stop_message, \
    ended_at, claimed_by, claimed_until, repeat_limit, step_timeout_ms, message_hash, \
    message_repeats, transcript_hash, status_updated_at, step_since, step_waited_base, waits, \
    wait_limits, notify_command, agent_state, agent_state_source, agent_state_at, \
    max_compactions, compaction_iteration, compaction_count, compactions_seen, \
    screen_changed_after, stall_unchanged_since, screen_class, max_answers, answer_count_step, \
    answer_count_total, dispatch_into, dispatch_typing";

/// The registry of one state directory.
pub struct SqliteRegistry {
    conn: Connection,
    path: PathBuf,
}

/// How a command uses the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Create the state dir and the database when missing; migrate an older schema.
    ReadWrite,
    /// Only read: a missing database means "no runs" (see [`SqliteRegistry::open_existing`]).
    ReadOnly,
}

impl SqliteRegistry {
    /// Open (creating when needed) the registry in `state_dir`.
    pub fn open(state_dir: &Path) -> Result<SqliteRegistry> {
        create_state_dir(state_dir)?;
        let path = state_dir.join(DB_FILE);
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|err| describe(&path, err))?;
        // SQLite quietly opens a file it may not write read-only; say so before any work.
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            bail!(
                "registry {}: the database is read-only for this user; check the permissions of the file and its directory",
                path.display()
            );
        }
        let mut registry = SqliteRegistry { conn, path };
        registry.configure(Access::ReadWrite)?;
        registry.migrate()?;
        Ok(registry)
    }

    /// Open the registry for reading only; `None` when there is no database yet (a status
    /// query must not create state).
    pub fn open_existing(state_dir: &Path) -> Result<Option<SqliteRegistry>> {
        let path = state_dir.join(DB_FILE);
        match fs::metadata(&path) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(err).with_context(|| format!("cannot open {}", path.display())),
            Ok(meta) if !meta.is_file() => bail!("{}: not a database file", path.display()),
            Ok(_) => {}
        }
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|err| describe(&path, err))?;
        let mut registry = SqliteRegistry { conn, path };
        registry.configure(Access::ReadOnly)?;
        registry.check_version()?;
        Ok(Some(registry))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How long a statement waits for another writer before failing with "database is
    /// locked" (5 s by default). `run watch` waits less and retries with backoff, so it stays
    /// responsive to signals while the registry is held.
    pub fn set_busy_timeout(&mut self, timeout: Duration) -> Result<()> {
        self.conn
            .busy_timeout(timeout)
            .map_err(|err| describe(&self.path, err))
    }

    fn configure(&mut self, access: Access) -> Result<()> {
        let path = self.path.clone();
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|err| describe(&path, err))?;
        // The first statement that reads the file is where a corrupted or foreign file shows.
        let application_id: i64 = self
            .conn
            .pragma_query_value(None, "application_id", |row| row.get(0))
            .map_err(|err| describe(&path, err))?;
        let user_version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|err| describe(&path, err))?;
        if application_id != APPLICATION_ID && !(application_id == 0 && user_version == 0) {
            bail!(
                "{} is not an autoctl registry (application id {application_id:#x}); move it aside",
                path.display()
            );
        }
        // Checked before anything is written (even the journal mode lives in the file header).
        if application_id == 0 && foreign_tables(&self.conn).map_err(|err| describe(&path, err))? {
            bail!(
                "{} is a SQLite database that autoctl did not create; move it aside",
                path.display()
            );
        }
        if access == Access::ReadWrite {
            // WAL lets `run status` read while a tick writes; NORMAL is durable at checkpoints
            // and never corrupts, which is the right trade for a heartbeat table.
            let mode: String = self
                .conn
                .pragma_update_and_check(None, "journal_mode", "wal", |row| row.get(0))
                .map_err(|err| describe(&path, err))?;
            if !mode.eq_ignore_ascii_case("wal") {
                crate::output::warn(&format!(
                    "{}: the file system does not support WAL; using journal mode {mode}",
                    path.display()
                ));
            }
            self.conn
                .pragma_update(None, "synchronous", "NORMAL")
                .map_err(|err| describe(&path, err))?;
        }
        Ok(())
    }

    fn user_version(&self) -> Result<i64> {
        self.conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|err| describe(&self.path, err))
    }

    fn check_version(&self) -> Result<()> {
        let version = self.user_version()?;
        if version > SCHEMA_VERSION {
            bail!(
                "{} has schema version {version}, newer than this autoctl understands ({SCHEMA_VERSION}); upgrade autoctl",
                self.path.display()
            );
        }
        if version < SCHEMA_VERSION && version > 0 {
            bail!(
                "{} has schema version {version}; run any writing command (e.g. `autoctl run tick --all`) to migrate it to {SCHEMA_VERSION}",
                self.path.display()
            );
        }
        if version == 0 {
            bail!(
                "{} is empty (not initialised yet); start a run first",
                self.path.display()
            );
        }
        Ok(())
    }

    /// Bring the schema to [`SCHEMA_VERSION`], under a write lock so two processes that open a
    /// fresh database at once migrate it once.
    fn migrate(&mut self) -> Result<()> {
        if self.user_version()? == SCHEMA_VERSION {
            return Ok(());
        }
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| describe(&path, err))?;
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|err| describe(&path, err))?;
        if version > SCHEMA_VERSION {
            bail!(
                "{} has schema version {version}, newer than this autoctl understands ({SCHEMA_VERSION}); upgrade autoctl",
                path.display()
            );
        }
        if version == 0 {
            if foreign_tables(&tx).map_err(|err| describe(&path, err))? {
                bail!(
                    "{} is a SQLite database that autoctl did not create; move it aside",
                    path.display()
                );
            }
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(|err| describe(&path, err))?;
        }
        for migration in &MIGRATIONS[version as usize..] {
            tx.execute_batch(migration)
                .map_err(|err| describe(&path, err))?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(|err| describe(&path, err))?;
        tx.commit().map_err(|err| describe(&path, err))
    }

    /// Store a claimed run's row if `owner` still holds the claim; release the claim unless
    /// `keep_claim` (an intent recorded before keys are typed).
    fn store(&mut self, run: &Run, owner: &str, keep_claim: bool) -> Result<bool> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| describe(&path, err))?;
        let held: Option<(Option<String>, Option<String>)> = tx
            .query_row(
                "SELECT claimed_by, claimed_until FROM task_auto WHERE session_name = ?1",
                [&run.session],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(|err| describe(&path, err))?;
        let Some((Some(holder), until)) = held else {
            return Ok(false);
        };
        if holder != owner {
            return Ok(false);
        }
        let mut stored = run.clone();
        if keep_claim {
            stored.claimed_by = Some(holder);
            stored.claimed_until = until.as_deref().and_then(parse_time);
        } else {
            stored.claimed_by = None;
            stored.claimed_until = None;
        }
        tx.execute(
            "DELETE FROM task_auto WHERE session_name = ?1",
            [&run.session],
        )
        .map_err(|err| describe(&path, err))?;
        insert(&tx, &stored).map_err(|err| describe(&path, err))?;
        tx.commit().map_err(|err| describe(&path, err))?;
        Ok(true)
    }

    fn select_one(&self, clause: &str, value: &str) -> Result<Option<Run>> {
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM task_auto WHERE {clause}"),
                [value],
                from_row,
            )
            .optional()
            .map_err(|err| describe(&self.path, err))
    }
}

impl Registry for SqliteRegistry {
    fn start(&mut self, new: &NewRun, now: Time) -> Result<Run> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| describe(&path, err))?;
        let owners = {
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT {COLUMNS} FROM task_auto WHERE session_name = ?1 OR task_dir = ?2"
                ))
                .map_err(|err| describe(&path, err))?;
            stmt.query_map(params![new.session, new.task_dir], from_row)
                .and_then(Iterator::collect::<rusqlite::Result<Vec<Run>>>)
                .map_err(|err| describe(&path, err))?
        };
        let active = |r: &&Run| r.status.is_active();
        let owner = owners
            .iter()
            .filter(active)
            .find(|r| r.session == new.session)
            .or_else(|| owners.iter().find(active));
        if let Some(owner) = owner {
            return Err(StartConflict::error(new, owner));
        }
        // Ended rows keep their outcome until the session or the task dir is reused.
        tx.execute(
            "DELETE FROM task_auto WHERE session_name = ?1 OR task_dir = ?2",
            params![new.session, new.task_dir],
        )
        .map_err(|err| describe(&path, err))?;
        let run = Run::new(new, now);
        insert(&tx, &run).map_err(|err| describe(&path, err))?;
        tx.commit().map_err(|err| describe(&path, err))?;
        Ok(run)
    }

    fn get(&mut self, session: &str) -> Result<Option<Run>> {
        self.select_one("session_name = ?1", session)
    }

    fn find_task(&mut self, task_dir: &str) -> Result<Option<Run>> {
        self.select_one("task_dir = ?1", task_dir)
    }

    fn list(&mut self) -> Result<Vec<Run>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM task_auto ORDER BY session_name"
            ))
            .map_err(|err| describe(&self.path, err))?;
        stmt.query_map([], from_row)
            .and_then(Iterator::collect::<rusqlite::Result<Vec<Run>>>)
            .map_err(|err| describe(&self.path, err))
    }

    fn claim(&mut self, selection: Selection<'_>, owner: &str, now: Time) -> Result<Vec<Claim>> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| describe(&path, err))?;
        let runs = {
            let (sql, arg) = match selection {
                Selection::Session(session) => (
                    format!("SELECT {COLUMNS} FROM task_auto WHERE session_name = ?1"),
                    Some(session),
                ),
                Selection::All => (
                    format!(
                        "SELECT {COLUMNS} FROM task_auto WHERE status = 'running' ORDER BY session_name"
                    ),
                    None,
                ),
            };
            let mut stmt = tx.prepare(&sql).map_err(|err| describe(&path, err))?;
            let rows = match arg {
                Some(arg) => stmt.query_map([arg], from_row),
                None => stmt.query_map([], from_row),
            };
            rows.and_then(Iterator::collect::<rusqlite::Result<Vec<Run>>>)
                .map_err(|err| describe(&path, err))?
        };
        let until = plus(now, LEASE);
        let mut claims = Vec::with_capacity(runs.len());
        {
            let mut update = tx
                .prepare(
                    "UPDATE task_auto SET claimed_by = ?2, claimed_until = ?3 WHERE session_name = ?1",
                )
                .map_err(|err| describe(&path, err))?;
            for mut run in runs {
                match claimable(&run, now) {
                    Ok(()) => {
                        update
                            .execute(params![run.session, owner, format_time(until)])
                            .map_err(|err| describe(&path, err))?;
                        run.claimed_by = Some(owner.to_string());
                        run.claimed_until = Some(until);
                        claims.push(Claim::Claimed(Box::new(run)));
                    }
                    Err(why) => claims.push(Claim::Skipped(Box::new(run), why)),
                }
            }
        }
        tx.commit().map_err(|err| describe(&path, err))?;
        Ok(claims)
    }

    fn save(&mut self, run: &Run, owner: &str) -> Result<bool> {
        self.store(run, owner, false)
    }

    fn record(&mut self, run: &Run, owner: &str) -> Result<bool> {
        self.store(run, owner, true)
    }

    fn amend(
        &mut self,
        session: &str,
        change: &mut dyn FnMut(&mut Run) -> bool,
    ) -> Result<Option<Run>> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| describe(&path, err))?;
        let stored = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM task_auto WHERE session_name = ?1"),
                [session],
                from_row,
            )
            .optional()
            .map_err(|err| describe(&path, err))?;
        let Some(mut run) = stored else {
            return Ok(None);
        };
        if change(&mut run) {
            run.claimed_by = None;
            run.claimed_until = None;
            tx.execute("DELETE FROM task_auto WHERE session_name = ?1", [session])
                .map_err(|err| describe(&path, err))?;
            insert(&tx, &run).map_err(|err| describe(&path, err))?;
            tx.commit().map_err(|err| describe(&path, err))?;
        }
        Ok(Some(run))
    }

    fn release(&mut self, session: &str, owner: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE task_auto SET claimed_by = NULL, claimed_until = NULL \
                 WHERE session_name = ?1 AND claimed_by = ?2",
                params![session, owner],
            )
            .map_err(|err| describe(&self.path, err))?;
        Ok(())
    }

    fn end(
        &mut self,
        session: &str,
        status: Status,
        reason: &str,
        message: Option<&str>,
        now: Time,
    ) -> Result<Option<Run>> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| describe(&path, err))?;
        let stored = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM task_auto WHERE session_name = ?1"),
                [session],
                from_row,
            )
            .optional()
            .map_err(|err| describe(&path, err))?;
        let Some(mut run) = stored else {
            return Ok(None);
        };
        if run.status.is_active() {
            run.end(status, reason, message.map(str::to_string), now);
            run.claimed_by = None;
            run.claimed_until = None;
            tx.execute("DELETE FROM task_auto WHERE session_name = ?1", [session])
                .map_err(|err| describe(&path, err))?;
            insert(&tx, &run).map_err(|err| describe(&path, err))?;
            tx.commit().map_err(|err| describe(&path, err))?;
        }
        Ok(Some(run))
    }
}

/// Whether a database that autoctl never initialised already holds tables.
fn foreign_tables(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table'",
        [],
        |row| row.get(0),
    )
}

fn create_state_dir(dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => bail!("state directory {}: not a directory", dir.display()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => {
            return Err(err).with_context(|| format!("state directory {}", dir.display()));
        }
    }
    // Private by default: the registry names sessions and task paths.
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create state directory {}", dir.display()))
}

/// One line that says which file and what SQLite said, with a hint for the cases a user can
/// fix.
fn describe(path: &Path, err: rusqlite::Error) -> anyhow::Error {
    use rusqlite::ErrorCode;
    let hint = match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => {
            "; the file is not a usable autoctl registry: move it aside to start fresh"
        }
        Some(ErrorCode::ReadOnly) => "; check the permissions of the file and its directory",
        Some(ErrorCode::CannotOpen) | Some(ErrorCode::PermissionDenied) => {
            "; check that the state directory exists and is writable"
        }
        Some(ErrorCode::DiskFull) => "; free some space (nothing was changed)",
        // SQLite reports a full disk met while growing its WAL index as an I/O error.
        Some(ErrorCode::SystemIoFailure) if disk_is_full(path) => {
            "; the disk is full: free some space (nothing was changed)"
        }
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => {
            "; another autoctl held the registry for too long"
        }
        _ => "",
    };
    anyhow!("registry {}: {err}{hint}", path.display())
}

/// Probe the file system of the registry with a small temporary write: the only portable way
/// (without `statvfs`) to tell a full disk from another I/O failure.
fn disk_is_full(db: &Path) -> bool {
    let dir = crate::fsx::parent_dir(db);
    let Ok(mut probe) = tempfile::Builder::new()
        .prefix(".autoctl-space-probe.")
        .tempfile_in(&dir)
    else {
        return false;
    };
    let block = [0u8; 16 * 1024];
    let written =
        std::io::Write::write_all(&mut probe, &block).and_then(|()| probe.as_file().sync_all());
    matches!(written, Err(err) if err.kind() == io::ErrorKind::StorageFull)
}

fn insert(conn: &Connection, run: &Run) -> rusqlite::Result<usize> {
    let placeholders: Vec<String> = (1..=COLUMN_COUNT).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO task_auto ({COLUMNS}) VALUES ({})",
        placeholders.join(", ")
    );
    let signal = run.last_signal.as_ref();
    let mut stmt = conn.prepare_cached(&sql)?;
    stmt.execute(params![
        run.session,
        run.task_dir,
        run.status.as_str(),
        to_i64(run.max_iterations),
        to_i64(run.timeout.as_millis() as u64),
        to_i64(run.iteration_count),
        run.stall.recoveries_iteration,
        run.stall.recoveries_total,
        run.stall.last_hash.as_deref().unwrap_or(""),
        run.stall.unchanged,
        run.stall.quota_wait_since.as_deref().unwrap_or(""),
        format_time(run.started_at),
        run.last_signal_at.map(format_time),
        run.target,
        run.mode.as_str(),
        run.agent.as_str(),
        run.launch_command,
        run.command_template,
        run.table,
        run.limits.threshold,
        run.limits.recoveries_per_iteration,
        run.limits.recoveries_total,
        to_i64(run.stall.quota_waited_seconds),
        run.stall.signal_iteration.map(to_i64),
        run.stall.signal_timestamp,
        run.stall.answered_hash,
        run.stall.escalated_hash,
        run.stall.limit_reached,
        to_i64(run.stall.checks),
        run.stall.last_check_at,
        to_i64(run.signals_seen),
        signal.map(|s| s.fingerprint.as_str()).unwrap_or(""),
        signal.map(|s| s.step.as_str()).unwrap_or(""),
        signal.map(|s| s.result.as_str()).unwrap_or(""),
        signal.map(|s| s.next.as_str()).unwrap_or(""),
        signal.map(|s| s.checkpoint.as_str()).unwrap_or(""),
        signal.and_then(|s| s.iteration).map(to_i64),
        run.pending.as_ref().map(|p| p.next.as_str()),
        run.pending
            .as_ref()
            .map(|p| p.checkpoint.as_str())
            .unwrap_or(""),
        run.dispatched.as_ref().map(|d| d.next.as_str()),
        run.dispatched
            .as_ref()
            .map(|d| d.checkpoint.as_str())
            .unwrap_or(""),
        run.dispatched_at.map(format_time),
        to_i64(run.dispatch_count),
        run.shell_seen,
        to_i64(run.ticks),
        to_i64(run.heartbeats),
        run.last_tick_at.map(format_time),
        run.last_heartbeat_at.map(format_time),
        run.last_decision,
        run.stop_reason,
        run.stop_message,
        run.ended_at.map(format_time),
        run.claimed_by,
        run.claimed_until.map(format_time),
        run.limits.repeat_limit,
        to_i64(run.limits.step_timeout.as_millis() as u64),
        run.stall.message_hash,
        run.stall.message_repeats,
        run.stall.transcript,
        run.stall.status_updated_at,
        run.stall.step_since,
        to_i64(run.stall.step_waited_base),
        run.waits.to_json(),
        run.wait_limits.to_json(),
        run.notify,
        run.agent_state.as_ref().map(|a| a.state.as_str()),
        run.agent_state.as_ref().map(|a| a.source.as_str()),
        run.agent_state.as_ref().map(|a| format_time(a.at)),
        run.max_compactions,
        to_i64(run.compactions.iteration),
        run.compactions.count,
        run.compactions_seen.map(to_i64),
        run.stall.screen_changed_after,
        run.stall.unchanged_since,
        run.stall.screen_class,
        run.limits.max_answers,
        run.stall.answers_step,
        run.stall.answers_total,
        run.into.as_str(),
        run.dispatch_typing,
    ])
}

fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<Run> {
    let text = |name: &str| -> rusqlite::Result<String> { row.get(name) };
    let opt_text = |name: &str| -> rusqlite::Result<Option<String>> { row.get(name) };
    let count = |name: &str| -> rusqlite::Result<u64> {
        row.get::<_, i64>(name)
            .map(|v| u64::try_from(v).unwrap_or(0))
    };
    let small = |name: &str| -> rusqlite::Result<u32> {
        row.get::<_, i64>(name)
            .map(|v| u32::try_from(v).unwrap_or(u32::MAX))
    };
    let time = |name: &str| -> rusqlite::Result<Option<Time>> {
        Ok(opt_text(name)?
            .filter(|t| !t.is_empty())
            .and_then(|t| parse_time(&t)))
    };
    let invalid = |name: &str, value: String| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            format!("column {name} holds {value:?}").into(),
        )
    };
    let status_text = text("status")?;
    let status = Status::parse(&status_text).ok_or_else(|| invalid("status", status_text))?;
    let mode_text = text("mode")?;
    let mode = Mode::parse(&mode_text).ok_or_else(|| invalid("mode", mode_text))?;
    let agent_text = text("agent")?;
    let agent = Agent::parse(&agent_text).ok_or_else(|| invalid("agent", agent_text))?;
    let into_text = text("dispatch_into")?;
    let into =
        DispatchInto::parse(&into_text).ok_or_else(|| invalid("dispatch_into", into_text))?;
    let started_text = text("started_at")?;
    let started_at =
        parse_time(&started_text).ok_or_else(|| invalid("started_at", started_text))?;
    let fingerprint = text("signal_fingerprint")?;
    let last_signal = if fingerprint.is_empty() {
        None
    } else {
        Some(SeenSignal {
            fingerprint,
            step: text("signal_step")?,
            result: text("signal_result")?,
            next: text("signal_next")?,
            checkpoint: text("signal_checkpoint")?,
            iteration: row
                .get::<_, Option<i64>>("signal_iteration")?
                .map(|v| u64::try_from(v).unwrap_or(0)),
        })
    };
    let step = |next: &str, checkpoint: &str| -> rusqlite::Result<Option<DispatchStep>> {
        Ok(opt_text(next)?.map(|next| DispatchStep {
            next,
            checkpoint: text(checkpoint).unwrap_or_default(),
        }))
    };
    Ok(Run {
        session: text("session_name")?,
        task_dir: text("task_dir")?,
        status,
        mode,
        target: text("target")?,
        agent,
        launch_command: opt_text("launch_command")?,
        command_template: text("command_template")?,
        into,
        table: text("routing_table")?,
        max_iterations: count("max_iterations")?,
        timeout: Duration::from_millis(count("timeout_ms")?),
        limits: Limits {
            threshold: small("stall_threshold")?,
            recoveries_per_iteration: small("max_recoveries_step")?,
            recoveries_total: small("max_recoveries_total")?,
            max_answers: small("max_answers")?,
            repeat_limit: small("repeat_limit")?,
            step_timeout: Duration::from_millis(count("step_timeout_ms")?),
            period: None,
        },
        wait_limits: WaitLimits::from_json(&text("wait_limits")?),
        notify: opt_text("notify_command")?,
        max_compactions: small("max_compactions")?,
        iteration_count: count("iteration_count")?,
        signals_seen: count("signals_seen")?,
        last_signal,
        last_signal_at: time("last_signal_at")?,
        stall: StallState {
            last_hash: Some(text("last_capture_hash")?).filter(|h| !h.is_empty()),
            unchanged: small("stall_count")?,
            recoveries_iteration: small("recovery_count_step")?,
            recoveries_total: small("recovery_count_total")?,
            answers_step: small("answer_count_step")?,
            answers_total: small("answer_count_total")?,
            quota_wait_since: Some(text("quota_wait_since")?).filter(|t| !t.is_empty()),
            quota_waited_seconds: count("quota_waited_seconds")?,
            signal_iteration: row
                .get::<_, Option<i64>>("stall_signal_iteration")?
                .map(|v| u64::try_from(v).unwrap_or(0)),
            signal_timestamp: opt_text("stall_signal_timestamp")?,
            answered_hash: opt_text("answered_hash")?,
            escalated_hash: opt_text("escalated_hash")?,
            limit_reached: row.get("stall_limit_reached")?,
            checks: count("stall_checks")?,
            last_check_at: opt_text("last_check_at")?,
            message_hash: opt_text("message_hash")?,
            message_repeats: small("message_repeats")?,
            transcript: opt_text("transcript_hash")?,
            status_updated_at: opt_text("status_updated_at")?,
            step_since: opt_text("step_since")?,
            step_waited_base: count("step_waited_base")?,
            screen_changed_after: opt_text("screen_changed_after")?,
            unchanged_since: opt_text("stall_unchanged_since")?,
            screen_class: opt_text("screen_class")?,
        },
        waits: WaitState::from_json(&text("waits")?),
        agent_state: match (
            opt_text("agent_state")?,
            opt_text("agent_state_source")?
                .as_deref()
                .and_then(Source::parse),
            time("agent_state_at")?,
        ) {
            (Some(state), Some(source), Some(at)) => Some(AgentReading { state, source, at }),
            _ => None,
        },
        compactions: CompactionCount {
            iteration: count("compaction_iteration")?,
            count: small("compaction_count")?,
        },
        compactions_seen: row
            .get::<_, Option<i64>>("compactions_seen")?
            .map(|v| u64::try_from(v).unwrap_or(0)),
        pending: step("pending_next", "pending_checkpoint")?,
        dispatched: step("dispatched_next", "dispatched_checkpoint")?,
        dispatched_at: time("dispatched_at")?,
        dispatch_count: count("dispatch_count")?,
        dispatch_typing: opt_text("dispatch_typing")?,
        shell_seen: small("shell_seen")?,
        started_at,
        ticks: count("ticks")?,
        heartbeats: count("heartbeats")?,
        last_tick_at: time("last_tick_at")?,
        last_heartbeat_at: time("last_heartbeat_at")?,
        last_decision: text("last_decision")?,
        stop_reason: opt_text("stop_reason")?,
        stop_message: opt_text("stop_message")?,
        ended_at: time("ended_at")?,
        claimed_by: opt_text("claimed_by")?,
        claimed_until: time("claimed_until")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::memory::MemoryRegistry;
    use crate::taskai::compaction::DEFAULT_MAX_COMPACTIONS;
    use chrono::DateTime;
    use proptest::prelude::*;

    fn at(secs: i64) -> Time {
        DateTime::from_timestamp(1_700_000_000 + secs, 0).unwrap()
    }

    fn new_run(session: &str, task: &str) -> NewRun {
        NewRun {
            session: session.into(),
            task_dir: task.into(),
            target: session.into(),
            mode: Mode::Dispatch,
            agent: crate::pane::Agent::Generic,
            launch_command: Some("agent --go".into()),
            command_template: crate::routing::command::DEFAULT_TEMPLATE.into(),
            into: DispatchInto::Agent,
            table: "ai-cli-task".into(),
            max_iterations: 7,
            timeout: Duration::from_millis(90_500),
            limits: Limits {
                threshold: 2,
                recoveries_per_iteration: 1,
                recoveries_total: 4,
                max_answers: 6,
                repeat_limit: 5,
                step_timeout: Duration::from_secs(90),
                period: None,
            },
            wait_limits: crate::supervise::wait::WaitLimits::default(),
            notify: None,
            max_compactions: 3,
        }
    }

    #[test]
    fn every_field_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut reg = SqliteRegistry::open(dir.path()).unwrap();
        let mut run = reg.start(&new_run("a b;$(x)", "/t/1"), at(0)).unwrap();
        let claims = reg.claim(Selection::All, "me", at(1)).unwrap();
        assert!(matches!(&claims[..], [Claim::Claimed(_)]));
        run.iteration_count = 3;
        run.signals_seen = 4;
        run.last_signal = Some(SeenSignal {
            fingerprint: "f".into(),
            step: "exec".into(),
            result: "(step-3)".into(),
            next: "exec".into(),
            checkpoint: "mid-exec".into(),
            iteration: Some(3),
        });
        run.last_signal_at = Some(at(2));
        run.stall = StallState {
            last_hash: Some("h".into()),
            unchanged: 2,
            recoveries_iteration: 1,
            recoveries_total: 3,
            answers_step: 5,
            answers_total: 9,
            quota_wait_since: Some("2026-01-01T00:00:00Z".into()),
            quota_waited_seconds: 12,
            signal_iteration: Some(3),
            signal_timestamp: Some("2026-01-01T00:00:01Z".into()),
            answered_hash: Some("a".into()),
            escalated_hash: Some("e".into()),
            limit_reached: true,
            checks: 8,
            last_check_at: Some("2026-01-01T00:00:02Z".into()),
            message_hash: Some("00000000deadbeef".into()),
            message_repeats: 2,
            transcript: Some("0123456789abcdef".into()),
            status_updated_at: Some("2026-01-01T00:00:03+02:00".into()),
            step_since: Some("2026-01-01T00:00:04Z".into()),
            step_waited_base: 7,
            screen_changed_after: Some("2026-01-01T00:00:05Z".into()),
            unchanged_since: Some("2026-01-01T00:00:05.250Z".into()),
            screen_class: Some("permission".into()),
        };
        run.agent_state = Some(AgentReading {
            state: "failed:rate_limit".into(),
            source: Source::Statusline,
            at: at(5),
        });
        run.compactions = CompactionCount {
            iteration: 3,
            count: 2,
        };
        run.compactions_seen = Some(7);
        run.max_compactions = 5;
        run.pending = Some(DispatchStep {
            next: "check".into(),
            checkpoint: "post-exec".into(),
        });
        run.dispatched = Some(DispatchStep {
            next: "exec".into(),
            checkpoint: String::new(),
        });
        run.dispatched_at = Some(at(4));
        run.dispatch_count = 2;
        run.dispatch_typing = Some("/ai-cli-task exec /t".into());
        run.shell_seen = 1;
        run.ticks = 9;
        run.heartbeats = 5;
        run.last_tick_at = Some(at(5));
        run.last_heartbeat_at = Some(at(5));
        run.last_decision = "wait".into();
        run.claimed_by = Some("me".into());
        assert!(reg.save(&run, "me").unwrap());
        run.claimed_by = None;
        assert_eq!(reg.get("a b;$(x)").unwrap().unwrap(), run);
        run.end(Status::Stopped, "user_stop", Some("lunch".into()), at(6));
        let ended = reg
            .end(
                "a b;$(x)",
                Status::Stopped,
                "user_stop",
                Some("lunch"),
                at(6),
            )
            .unwrap()
            .unwrap();
        assert_eq!(ended, run);
        assert_eq!(reg.find_task("/t/1").unwrap().unwrap(), run);
    }

    #[test]
    fn the_seed_columns_are_there() {
        let dir = tempfile::tempdir().unwrap();
        let mut reg = SqliteRegistry::open(dir.path()).unwrap();
        reg.start(&new_run("s", "/t"), at(0)).unwrap();
        let (minutes, status): (f64, String) = reg
            .conn
            .query_row(
                "SELECT timeout_minutes, status FROM task_auto WHERE session_name = 's'",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap();
        assert!((minutes - 90.5 / 60.0).abs() < 1e-9);
        assert_eq!(status, "running");
        for column in [
            "session_name",
            "task_dir",
            "max_iterations",
            "iteration_count",
            "recovery_count_step",
            "recovery_count_total",
            "last_capture_hash",
            "stall_count",
            "quota_wait_since",
            "started_at",
            "last_signal_at",
        ] {
            reg.conn
                .prepare(&format!("SELECT {column} FROM task_auto"))
                .unwrap_or_else(|e| panic!("{column}: {e}"));
        }
    }

    #[test]
    fn a_registry_of_each_older_version_migrates_and_keeps_its_runs() {
        for version in 1..SCHEMA_VERSION {
            let dir = tempfile::tempdir().unwrap();
            let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
            conn.pragma_update(None, "application_id", APPLICATION_ID)
                .unwrap();
            for migration in &MIGRATIONS[..version as usize] {
                conn.execute_batch(migration).unwrap();
            }
            conn.pragma_update(None, "user_version", version).unwrap();
            conn.execute(
                "INSERT INTO task_auto (session_name, task_dir, started_at, target, \
                 command_template, routing_table, iteration_count) \
                 VALUES ('old', '/t/old', '2026-01-01T00:00:00Z', 'old', '', 'ai-cli-task', 2)",
                [],
            )
            .unwrap();
            drop(conn);
            let mut reg = SqliteRegistry::open(dir.path()).unwrap();
            assert_eq!(reg.user_version().unwrap(), SCHEMA_VERSION);
            let run = reg.get("old").unwrap().unwrap();
            assert_eq!(run.iteration_count, 2, "from version {version}");
            assert_eq!(run.agent_state, None);
            assert_eq!(run.max_compactions, DEFAULT_MAX_COMPACTIONS);
            assert_eq!(run.compactions, CompactionCount::default());
            assert_eq!(run.stall.screen_changed_after, None);
            assert_eq!(run.stall.screen_class, None);
        }
    }

    #[test]
    fn a_foreign_database_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let other = Connection::open(&path).unwrap();
        other.execute_batch("CREATE TABLE notes (x TEXT);").unwrap();
        drop(other);
        let before = fs::read(&path).unwrap();
        let err = SqliteRegistry::open(dir.path()).err().unwrap().to_string();
        assert!(err.contains("did not create"), "{err}");
        assert!(
            fs::read(&path).unwrap() == before,
            "the foreign database was modified"
        );
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(SqliteRegistry::open(dir.path()).unwrap());
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        drop(conn);
        let err = SqliteRegistry::open(dir.path()).err().unwrap().to_string();
        assert!(err.contains("newer than this autoctl"), "{err}");
    }

    #[derive(Debug, Clone)]
    enum Op {
        Start(u8, u8),
        Claim(Option<u8>, u8, i64),
        Save(u8, u8),
        Release(u8, u8),
        End(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..3, 0u8..3).prop_map(|(s, t)| Op::Start(s, t)),
            (proptest::option::of(0u8..3), 0u8..2, 0i64..400)
                .prop_map(|(s, o, t)| Op::Claim(s, o, t)),
            (0u8..3, 0u8..2).prop_map(|(s, o)| Op::Save(s, o)),
            (0u8..3, 0u8..2).prop_map(|(s, o)| Op::Release(s, o)),
            (0u8..3).prop_map(Op::End),
        ]
    }

    fn summary(claims: Vec<Claim>) -> Vec<(String, bool)> {
        claims
            .into_iter()
            .map(|c| match c {
                Claim::Claimed(run) => (run.session, true),
                Claim::Skipped(run, _) => (run.session, false),
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        /// SQLite behaves like the in-memory model: same conflicts, same claims, same saves.
        #[test]
        fn sqlite_matches_the_model(ops in proptest::collection::vec(op(), 1..25)) {
            let dir = tempfile::tempdir().unwrap();
            let mut real = SqliteRegistry::open(dir.path()).unwrap();
            let mut model = MemoryRegistry::default();
            let mut clock = 0;
            for op in ops {
                clock += 1;
                match op {
                    Op::Start(s, t) => {
                        let new = new_run(&format!("s{s}"), &format!("/t{t}"));
                        let a = real.start(&new, at(clock)).map_err(|e| e.to_string());
                        let b = model.start(&new, at(clock)).map_err(|e| e.to_string());
                        prop_assert_eq!(a, b);
                    }
                    Op::Claim(s, o, t) => {
                        let name = s.map(|s| format!("s{s}"));
                        let sel = match &name { Some(n) => Selection::Session(n), None => Selection::All };
                        let owner = format!("o{o}");
                        let a = summary(real.claim(sel, &owner, at(t)).unwrap());
                        let b = summary(model.claim(sel, &owner, at(t)).unwrap());
                        prop_assert_eq!(a, b);
                    }
                    Op::Save(s, o) => {
                        if let Some(mut run) = model.get(&format!("s{s}")).unwrap() {
                            run.ticks += 1;
                            let owner = format!("o{o}");
                            prop_assert_eq!(real.save(&run, &owner).unwrap(), model.save(&run, &owner).unwrap());
                        }
                    }
                    Op::Release(s, o) => {
                        real.release(&format!("s{s}"), &format!("o{o}")).unwrap();
                        model.release(&format!("s{s}"), &format!("o{o}")).unwrap();
                    }
                    Op::End(s) => {
                        let a = real.end(&format!("s{s}"), Status::Stopped, "user_stop", None, at(clock)).unwrap();
                        let b = model.end(&format!("s{s}"), Status::Stopped, "user_stop", None, at(clock)).unwrap();
                        prop_assert_eq!(a, b);
                    }
                }
                prop_assert_eq!(real.list().unwrap(), model.list().unwrap());
            }
        }
    }
}
