//! The registry in SQLite (`$AUTOCTL_STATE_DIR/autoctl.db`): WAL so readers (`run status`)
//! never wait for a tick, a busy timeout so overlapping writers queue instead of failing, and
//! schema migrations numbered by `PRAGMA user_version`.
//!
//! The table is seed 000's `task_auto`, stored as [`super::row`] lays a run out: columns for
//! identity, limits, status and the claim, one JSON column per core. The seed's counters
//! (`last_capture_hash`, `stall_count`, the recovery counts, `quota_wait_since`) are generated
//! columns read from the stall core's JSON, and `timeout_minutes` from `timeout_ms` (the
//! command line takes durations such as `90s` that whole minutes cannot hold), so the seed's
//! queries still work.
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
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use super::DB_FILE;
use super::backend::{Backend, End, Tx, Which};
use super::row::{self, Cell};
use crate::supervise::governor::Account;
use crate::supervise::run::Run;
use crate::supervise::store::Host;
use crate::time::{Time, format_time, parse_time};

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
    // 9: a row of JSON per core. Columns stay for what a query looks at (identity, limits,
    // status, the claim); each core's state is one JSON column, as it is in Rust; seed 000's
    // counters are generated from the stall core's state, so the seed's queries still work.
    r#"
CREATE TABLE task_auto_v9 (
  session_name         TEXT PRIMARY KEY,
  task_dir             TEXT NOT NULL UNIQUE,
  target               TEXT NOT NULL,
  mode                 TEXT NOT NULL CHECK (mode IN ('observe', 'dispatch')),
  agent                TEXT NOT NULL,
  dispatch_into        TEXT NOT NULL CHECK (dispatch_into IN ('agent', 'shell')),
  launch_command       TEXT,
  command_template     TEXT NOT NULL,
  routing_table        TEXT NOT NULL,
  notify_command       TEXT,

  max_iterations       INTEGER NOT NULL CHECK (max_iterations > 0),
  timeout_ms           INTEGER NOT NULL CHECK (timeout_ms > 0),
  timeout_minutes      REAL GENERATED ALWAYS AS (timeout_ms / 60000.0) VIRTUAL,
  stall_threshold      INTEGER NOT NULL,
  max_recoveries_step  INTEGER NOT NULL,
  max_recoveries_total INTEGER NOT NULL,
  max_answers          INTEGER NOT NULL CHECK (max_answers >= 0),
  repeat_limit         INTEGER NOT NULL CHECK (repeat_limit >= 0),
  step_timeout_ms      INTEGER NOT NULL CHECK (step_timeout_ms > 0),
  max_compactions      INTEGER NOT NULL CHECK (max_compactions >= 0),
  wait_limits          TEXT NOT NULL CHECK (json_valid(wait_limits)),

  status               TEXT NOT NULL
                       CHECK (status IN ('running', 'finished', 'stopped', 'exited', 'lost')),
  started_at           TEXT NOT NULL,
  iteration_count      INTEGER NOT NULL,
  signals_seen         INTEGER NOT NULL,
  last_signal_at       TEXT,
  ticks                INTEGER NOT NULL,
  heartbeats           INTEGER NOT NULL,
  last_tick_at         TEXT,
  last_heartbeat_at    TEXT,
  last_decision        TEXT NOT NULL,
  stop_reason          TEXT,
  stop_message         TEXT,
  ended_at             TEXT,

  claimed_by           TEXT,
  claimed_until        TEXT,

  last_signal          TEXT CHECK (last_signal IS NULL OR json_valid(last_signal)),
  stall                TEXT NOT NULL CHECK (json_valid(stall)),
  waits                TEXT NOT NULL CHECK (json_valid(waits)),
  dispatch             TEXT NOT NULL CHECK (json_valid(dispatch)),
  agent_state          TEXT NOT NULL CHECK (json_valid(agent_state)),

  last_capture_hash    TEXT GENERATED ALWAYS AS (coalesce(json_extract(stall, '$.last_hash'), '')) VIRTUAL,
  stall_count          INTEGER GENERATED ALWAYS AS (json_extract(stall, '$.unchanged')) VIRTUAL,
  recovery_count_step  INTEGER GENERATED ALWAYS AS (json_extract(stall, '$.recoveries_iteration')) VIRTUAL,
  recovery_count_total INTEGER GENERATED ALWAYS AS (json_extract(stall, '$.recoveries_total')) VIRTUAL,
  quota_wait_since     TEXT GENERATED ALWAYS AS (coalesce(json_extract(stall, '$.quota_wait_since'), '')) VIRTUAL
) STRICT;
INSERT INTO task_auto_v9 (
  session_name, task_dir, target, mode, agent, dispatch_into, launch_command, command_template,
  routing_table, notify_command, max_iterations, timeout_ms, stall_threshold,
  max_recoveries_step, max_recoveries_total, max_answers, repeat_limit, step_timeout_ms,
  max_compactions, wait_limits, status, started_at, iteration_count, signals_seen,
  last_signal_at, ticks, heartbeats, last_tick_at, last_heartbeat_at, last_decision,
  stop_reason, stop_message, ended_at, claimed_by, claimed_until, last_signal, stall, waits,
  dispatch, agent_state)
SELECT
  session_name, task_dir, target, mode, agent, dispatch_into, launch_command, command_template,
  routing_table, notify_command, max_iterations, timeout_ms, stall_threshold,
  max_recoveries_step, max_recoveries_total, max_answers, repeat_limit, step_timeout_ms,
  max_compactions, CASE WHEN json_valid(wait_limits) THEN wait_limits ELSE '{}' END, status,
  started_at, iteration_count, signals_seen, NULLIF(last_signal_at, ''), ticks, heartbeats,
  NULLIF(last_tick_at, ''), NULLIF(last_heartbeat_at, ''), last_decision, stop_reason,
  stop_message, NULLIF(ended_at, ''), claimed_by, NULLIF(claimed_until, ''),
  CASE WHEN signal_fingerprint = '' THEN NULL ELSE json_object(
    'fingerprint', signal_fingerprint, 'step', signal_step, 'result', signal_result,
    'next', signal_next, 'checkpoint', signal_checkpoint, 'iteration', signal_iteration) END,
  json_object(
    'last_hash', NULLIF(last_capture_hash, ''),
    'unchanged', stall_count,
    'unchanged_since', NULLIF(stall_unchanged_since, ''),
    'recoveries_iteration', recovery_count_step,
    'recoveries_total', recovery_count_total,
    'answers_step', answer_count_step,
    'answers_total', answer_count_total,
    'quota_wait_since', NULLIF(quota_wait_since, ''),
    'quota_waited_seconds', quota_waited_seconds,
    'signal_iteration', stall_signal_iteration,
    'signal_timestamp', stall_signal_timestamp,
    'answered_hash', answered_hash,
    'escalated_hash', escalated_hash,
    'limit_reached', json(CASE WHEN stall_limit_reached THEN 'true' ELSE 'false' END),
    'checks', stall_checks,
    'last_check_at', NULLIF(last_check_at, ''),
    'message_hash', message_hash,
    'message_repeats', message_repeats,
    'transcript', transcript_hash,
    'status_updated_at', status_updated_at,
    'step_since', NULLIF(step_since, ''),
    'step_waited_base', step_waited_base,
    'screen_class', screen_class,
    'screen_changed_after', NULLIF(screen_changed_after, '')),
  CASE WHEN json_valid(waits) THEN waits ELSE '{}' END,
  json_object(
    'pending', json(CASE WHEN pending_next IS NOT NULL THEN
      json_object('next', pending_next, 'checkpoint', pending_checkpoint) END),
    'dispatched', json(CASE WHEN dispatched_next IS NOT NULL THEN
      json_object('next', dispatched_next, 'checkpoint', dispatched_checkpoint) END),
    'dispatched_at', NULLIF(dispatched_at, ''),
    'count', dispatch_count,
    'typing', dispatch_typing),
  json_object(
    'reading', json(CASE WHEN agent_state IS NOT NULL AND agent_state_source IS NOT NULL
        AND NULLIF(agent_state_at, '') IS NOT NULL THEN
      json_object('state', agent_state, 'source', agent_state_source, 'at', agent_state_at) END),
    'compactions', json_object('iteration', compaction_iteration, 'count', compaction_count),
    'compactions_seen', compactions_seen,
    'shell_seen', shell_seen)
FROM task_auto;
DROP TABLE task_auto;
ALTER TABLE task_auto_v9 RENAME TO task_auto;
CREATE INDEX task_auto_status ON task_auto (status);
"#,
    // 10: accounts and hosts (issue 25). A run spends an account's usage windows and
    // belongs to the host whose tmux runs its pane (empty: the first host that ticks it
    // adopts it); the governor keeps each account's state and each run's permit.
    r#"
ALTER TABLE task_auto ADD COLUMN account TEXT NOT NULL DEFAULT 'default';
ALTER TABLE task_auto ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_auto ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE task_auto ADD COLUMN governor TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(governor));
CREATE INDEX task_auto_account ON task_auto (account, status);
CREATE TABLE accounts (
  name  TEXT PRIMARY KEY,
  state TEXT NOT NULL CHECK (json_valid(state))
) STRICT;
CREATE TABLE hosts (
  name              TEXT PRIMARY KEY,
  seen_at           TEXT NOT NULL,
  lease_until       TEXT NOT NULL,
  lost_announced_at TEXT
) STRICT;
"#,
    // 11: the notification outbox — notices stored with the decision that made them, until
    // delivered (supervise::outbox).
    r#"
ALTER TABLE task_auto ADD COLUMN outbox TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(outbox));
"#,
];

/// The schema version this autoctl writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

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
        // One statement, so one snapshot: read apart, another autoctl's first migration could
        // commit between them, and its tables would look foreign beside the id read before.
        let (application_id, user_version, tables): (i64, i64, bool) = self
            .conn
            .query_row(
                "SELECT (SELECT application_id FROM pragma_application_id()), \
                        (SELECT user_version FROM pragma_user_version()), \
                        (SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table')",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .map_err(|err| describe(&path, err))?;
        if application_id != APPLICATION_ID && !(application_id == 0 && user_version == 0) {
            bail!(
                "{} is not an autoctl registry (application id {application_id:#x}); move it aside",
                path.display()
            );
        }
        // Checked before anything is written (even the journal mode lives in the file header).
        if application_id == 0 && tables {
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
}

impl Backend for SqliteRegistry {
    fn transaction(
        &mut self,
        write: bool,
        work: &mut dyn FnMut(&mut dyn Tx) -> Result<End>,
    ) -> Result<()> {
        let path = self.path.clone();
        // A writer takes the write lock at once, so what it read cannot change before it
        // writes; a reader takes none (WAL: it never waits for a writer).
        let behavior = if write {
            TransactionBehavior::Immediate
        } else {
            TransactionBehavior::Deferred
        };
        let tx = self
            .conn
            .transaction_with_behavior(behavior)
            .map_err(|err| describe(&path, err))?;
        let end = work(&mut SqliteTx {
            tx: &tx,
            path: &path,
        })?;
        match end {
            End::Commit => tx.commit().map_err(|err| describe(&path, err)),
            End::Rollback => tx.rollback().map_err(|err| describe(&path, err)),
        }
    }
}

/// One SQLite transaction.
struct SqliteTx<'a> {
    tx: &'a rusqlite::Transaction<'a>,
    path: &'a Path,
}

impl SqliteTx<'_> {
    fn err(&self, err: rusqlite::Error) -> anyhow::Error {
        describe(self.path, err)
    }
}

/// The `WHERE` clause of a selection, and its arguments.
fn clause<'a>(which: Which<'a>) -> (&'static str, Vec<&'a str>) {
    match which {
        Which::Session(session) => ("WHERE session_name = ?1", vec![session]),
        Which::Task(task) => ("WHERE task_dir = ?1", vec![task]),
        Which::SessionOrTask(session, task) => (
            "WHERE session_name = ?1 OR task_dir = ?2",
            vec![session, task],
        ),
        Which::RunningOn(host) => (
            "WHERE status = 'running' AND (host = ?1 OR host = '')",
            vec![host],
        ),
        Which::RunningOf(account) => ("WHERE status = 'running' AND account = ?1", vec![account]),
        // Rows with an entry not delivered yet (supervise::outbox: `delivered` is absent).
        Which::Outbox => (
            "WHERE EXISTS (SELECT 1 FROM json_each(outbox) \
             WHERE json_type(value, '$.delivered') IS NULL)",
            vec![],
        ),
        Which::All => ("", vec![]),
    }
}

impl Tx for SqliteTx<'_> {
    fn runs(&mut self, which: Which<'_>) -> Result<Vec<Run>> {
        let (clause, args) = clause(which);
        select(
            self.tx,
            self.path,
            &format!("{clause} ORDER BY session_name"),
            rusqlite::params_from_iter(args),
        )
    }

    fn delete(&mut self, which: Which<'_>) -> Result<()> {
        let (clause, args) = clause(which);
        self.tx
            .execute(
                &format!("DELETE FROM task_auto {clause}"),
                rusqlite::params_from_iter(args),
            )
            .map_err(|err| self.err(err))?;
        Ok(())
    }

    fn insert(&mut self, run: &Run) -> Result<()> {
        insert(self.tx, self.path, run)
    }

    fn set_claim(
        &mut self,
        session: &str,
        owner: Option<&str>,
        until: Option<Time>,
        host: Option<&str>,
    ) -> Result<()> {
        self.tx
            .prepare_cached(
                "UPDATE task_auto SET claimed_by = ?2, claimed_until = ?3, \
                 host = coalesce(?4, host) WHERE session_name = ?1",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![session, owner, until.map(format_time), host])
            })
            .map_err(|err| self.err(err))?;
        Ok(())
    }

    fn account(&mut self, name: &str) -> Result<Option<Account>> {
        let text: Option<String> = self
            .tx
            .query_row(
                "SELECT state FROM accounts WHERE name = ?1",
                [name],
                |row| row.get(0),
            )
            .optional()
            .map_err(|err| self.err(err))?;
        text.map(|text| read_account(self.path, name, &text))
            .transpose()
    }

    fn put_account(&mut self, name: &str, state: &Account) -> Result<()> {
        let text = serde_json::to_string(state).expect("an account serializes");
        self.tx
            .execute(
                "INSERT INTO accounts (name, state) VALUES (?1, ?2) \
                 ON CONFLICT (name) DO UPDATE SET state = excluded.state",
                params![name, text],
            )
            .map_err(|err| self.err(err))?;
        Ok(())
    }

    fn accounts(&mut self) -> Result<Vec<(String, Account)>> {
        let mut stmt = self
            .tx
            .prepare("SELECT name, state FROM accounts ORDER BY name")
            .map_err(|err| self.err(err))?;
        let rows: Vec<(String, String)> = stmt
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .and_then(Iterator::collect)
            .map_err(|err| self.err(err))?;
        rows.into_iter()
            .map(|(name, text)| {
                let state = read_account(self.path, &name, &text)?;
                Ok((name, state))
            })
            .collect()
    }

    fn hosts(&mut self) -> Result<Vec<Host>> {
        let mut stmt = self
            .tx
            .prepare(
                "SELECT name, seen_at, lease_until, lost_announced_at FROM hosts ORDER BY name",
            )
            .map_err(|err| self.err(err))?;
        let rows: Vec<(String, String, String, Option<String>)> = stmt
            .query_map([], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })
            .and_then(Iterator::collect)
            .map_err(|err| self.err(err))?;
        let time = |text: &str| {
            parse_time(text).ok_or_else(|| {
                anyhow!(
                    "registry {}: hosts holds {text:?}, not a time",
                    self.path.display()
                )
            })
        };
        rows.into_iter()
            .map(|(name, seen, until, announced)| {
                Ok(Host {
                    seen_at: time(&seen)?,
                    lease_until: time(&until)?,
                    lost_announced_at: announced.as_deref().map(time).transpose()?,
                    name,
                })
            })
            .collect()
    }

    fn put_host(&mut self, host: &Host) -> Result<()> {
        self.tx
            .execute(
                "INSERT INTO hosts (name, seen_at, lease_until, lost_announced_at) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name) DO UPDATE SET \
                 seen_at = excluded.seen_at, lease_until = excluded.lease_until, \
                 lost_announced_at = excluded.lost_announced_at",
                params![
                    host.name,
                    format_time(host.seen_at),
                    format_time(host.lease_until),
                    host.lost_announced_at.map(format_time)
                ],
            )
            .map_err(|err| self.err(err))?;
        Ok(())
    }
}

/// An account's stored state; one this build cannot read is an error naming it.
fn read_account(path: &Path, name: &str, text: &str) -> Result<Account> {
    serde_json::from_str(text).map_err(|err| {
        anyhow!(
            "registry {}: the state of account {name:?} is not readable ({err}): {text:?}",
            path.display()
        )
    })
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

/// The runs `SELECT … FROM task_auto {clause}` finds.
fn select(
    conn: &Connection,
    path: &Path,
    clause: &str,
    args: impl rusqlite::Params,
) -> Result<Vec<Run>> {
    static NAMES: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(row::names);
    let mut stmt = conn
        .prepare_cached(&format!("SELECT {names} FROM task_auto {clause}"))
        .map_err(|err| describe(path, err))?;
    let mut rows = stmt.query(args).map_err(|err| describe(path, err))?;
    let mut runs = Vec::new();
    while let Some(found) = rows.next().map_err(|err| describe(path, err))? {
        let run = row::decode(&Fields(found))
            .map_err(|err| anyhow!("registry {}: {err:#}", path.display()))?;
        runs.push(run);
    }
    Ok(runs)
}

/// A SQLite row as [`row::decode`] reads it (times are text, see [`format_time`]).
struct Fields<'a>(&'a rusqlite::Row<'a>);

impl row::Fields for Fields<'_> {
    fn text(&self, column: &str) -> Result<Option<String>> {
        Ok(self.0.get(column)?)
    }

    fn int(&self, column: &str) -> Result<Option<i64>> {
        Ok(self.0.get(column)?)
    }

    fn time(&self, column: &str) -> Result<Option<Time>> {
        match self.text(column)? {
            None => Ok(None),
            Some(text) => parse_time(&text)
                .map(Some)
                .ok_or_else(|| anyhow!("column {column} holds {text:?}, not a time")),
        }
    }
}

/// Insert a run's row.
fn insert(conn: &Connection, path: &Path, run: &Run) -> Result<()> {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let sql = SQL.get_or_init(|| {
        let places: Vec<String> = (1..=row::COLUMNS.len()).map(|i| format!("?{i}")).collect();
        format!(
            "INSERT INTO task_auto ({}) VALUES ({})",
            row::names(),
            places.join(", ")
        )
    });
    let cells = row::encode(run).map(|cell| match cell {
        Cell::Text(value) | Cell::Json(value) => Value::from(value),
        Cell::Int(value) => Value::from(value),
        Cell::Time(value) => Value::from(value.map(format_time)),
    });
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.execute(rusqlite::params_from_iter(cells)))
        .map_err(|err| describe(path, err))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::memory::MemoryRegistry;
    use crate::supervise::channels::Source;
    use crate::supervise::run::{AgentReading, DispatchInto, DispatchStep, Mode, SeenSignal};
    use crate::supervise::run::{NewRun, Status};
    use crate::supervise::stall::{Limits, StallState};
    use crate::supervise::store::{Claim, Registry, Selection};
    use crate::supervise::wait::{WaitLimits, WaitState};
    use crate::taskai::compaction::{CompactionCount, DEFAULT_MAX_COMPACTIONS};
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
            account: "acct".into(),
            priority: -2,
            host: "here".into(),
        }
    }

    #[test]
    fn every_field_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut reg = SqliteRegistry::open(dir.path()).unwrap();
        let mut run = reg.start(&new_run("a b;$(x)", "/t/1"), at(0)).unwrap();
        let claims = reg.claim(Selection::All, "me", "here", at(1)).unwrap();
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
            clock_paused_since: Some(at(-10)),
            clock_paused_seconds: 12,
            signal_iteration: Some(3),
            signal_timestamp: Some("2026-01-01T00:00:01Z".into()),
            answered_hash: Some("a".into()),
            escalated_hash: Some("e".into()),
            limit_reached: true,
            checks: 8,
            last_check_at: Some(at(2)),
            message_hash: Some("00000000deadbeef".into()),
            message_repeats: 2,
            transcript: Some("0123456789abcdef".into()),
            status_updated_at: Some("2026-01-01T00:00:03+02:00".into()),
            step_since: Some(at(4)),
            step_waited_base: 7,
            screen_changed_after: Some(at(1)),
            unchanged_since: Some(at(5) + chrono::Duration::milliseconds(250)),
            screen_class: Some("permission".into()),
        };
        run.agent_state.reading = Some(AgentReading {
            state: "failed:rate_limit".into(),
            source: Source::Statusline,
            at: at(5),
        });
        run.agent_state.compactions = CompactionCount {
            iteration: 3,
            count: 2,
        };
        run.agent_state.compactions_seen = Some(7);
        run.spec.max_compactions = 5;
        run.dispatch.pending = Some(DispatchStep {
            next: "check".into(),
            checkpoint: "post-exec".into(),
        });
        run.dispatch.dispatched = Some(DispatchStep {
            next: "exec".into(),
            checkpoint: String::new(),
        });
        run.dispatch.dispatched_at = Some(at(4));
        run.dispatch.count = 2;
        run.dispatch.typing = Some("/ai-cli-task exec /t".into());
        run.agent_state.shell_seen = 1;
        run.ticks = 9;
        run.heartbeats = 5;
        run.last_tick_at = Some(at(5));
        run.last_heartbeat_at = Some(at(5));
        run.last_decision = "wait".into();
        run.claimed_by = Some("me".into());
        assert!(reg.save(&run, "me").unwrap());
        run.claimed_by = None;
        assert_eq!(reg.get("a b;$(x)").unwrap().unwrap(), run);
        run.end(
            Status::Stopped,
            crate::supervise::run::StopReason::UserStop,
            Some("lunch".into()),
            at(6),
        );
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
            // A row as that version's `run start` left it (from 9 on, nothing has defaults).
            let insert = if version < 9 {
                "INSERT INTO task_auto (session_name, task_dir, started_at, target, \
                 command_template, routing_table, iteration_count) \
                 VALUES ('old', '/t/old', '2026-01-01T00:00:00Z', 'old', '', 'ai-cli-task', 2)"
            } else {
                "INSERT INTO task_auto (session_name, task_dir, target, mode, agent, \
                 dispatch_into, command_template, routing_table, max_iterations, timeout_ms, \
                 stall_threshold, max_recoveries_step, max_recoveries_total, max_answers, \
                 repeat_limit, step_timeout_ms, max_compactions, wait_limits, status, \
                 started_at, iteration_count, signals_seen, ticks, heartbeats, last_decision, \
                 stall, waits, dispatch, agent_state) \
                 VALUES ('old', '/t/old', 'old', 'observe', 'claude', 'shell', '', \
                 'ai-cli-task', 20, 1800000, 3, 3, 10, 50, 3, 600000, 3, '{}', 'running', \
                 '2026-01-01T00:00:00.000Z', 2, 0, 0, 0, '', '{}', '{}', '{}', '{}')"
            };
            conn.execute(insert, []).unwrap();
            drop(conn);
            let mut reg = SqliteRegistry::open(dir.path()).unwrap();
            assert_eq!(reg.user_version().unwrap(), SCHEMA_VERSION);
            let run = reg.get("old").unwrap().unwrap();
            assert_eq!(run.iteration_count, 2, "from version {version}");
            assert_eq!(run.agent_state.reading, None);
            assert_eq!(run.spec.max_compactions, DEFAULT_MAX_COMPACTIONS);
            assert_eq!(run.agent_state.compactions, CompactionCount::default());
            assert_eq!(run.stall.screen_changed_after, None);
            assert_eq!(run.stall.screen_class, None);
            assert_eq!(run.spec.account, "default");
            assert_eq!(run.spec.host, "", "adopted by the first host that ticks it");
        }
    }

    /// The registry the last release wrote (schema version 8, `tests/fixtures/registry/v8/`,
    /// runs in every state) migrates column by column: each old column's value is where the
    /// row of JSON per core keeps it.
    #[test]
    fn the_last_release_registry_migrates_column_by_column() {
        use rusqlite::types::Value;
        let dir = tempfile::tempdir().unwrap();
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/registry/v8/autoctl.db"
        );
        fs::copy(fixture, dir.path().join(DB_FILE)).unwrap();
        let old: Vec<std::collections::BTreeMap<String, Value>> = {
            let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
            assert_eq!(
                conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))
                    .unwrap(),
                8
            );
            let mut stmt = conn.prepare("SELECT * FROM task_auto").unwrap();
            let names: Vec<String> = stmt.column_names().map(String::from).collect();
            stmt.query_map([], |row| {
                Ok(names
                    .iter()
                    .enumerate()
                    .map(|(i, name)| (name.clone(), row.get::<_, Value>(i).unwrap()))
                    .collect())
            })
            .unwrap()
            .map(Result::unwrap)
            .collect()
        };
        assert!(old.len() >= 9);
        let mut reg = SqliteRegistry::open(dir.path()).unwrap();
        assert_eq!(reg.user_version().unwrap(), SCHEMA_VERSION);
        // Old text: empty is none; a time is compared as a time.
        let text =
            |row: &std::collections::BTreeMap<String, Value>, column: &str| match &row[column] {
                Value::Text(t) if t.is_empty() => None,
                Value::Text(t) => Some(parse_time(t).map_or(t.clone(), format_time)),
                Value::Null => None,
                other => panic!("{column}: {other:?}"),
            };
        let int = |row: &std::collections::BTreeMap<String, Value>, column: &str| match &row[column]
        {
            Value::Integer(i) => Some(*i),
            Value::Null => None,
            other => panic!("{column}: {other:?}"),
        };
        let time = |t: Option<Time>| t.map(format_time);
        let num = |n: u64| Some(n as i64);
        // The generated column needs no comparison; the key is how each row is found.
        let mut compared = std::collections::BTreeSet::from(["session_name", "timeout_minutes"]);
        for row in &old {
            let session = text(row, "session_name").unwrap();
            let run = reg.get(&session).unwrap().unwrap();
            let (s, st, d, a) = (&run.spec, &run.stall, &run.dispatch, &run.agent_state);
            let signal = run.last_signal.as_ref();
            let texts: Vec<(&str, Option<String>)> = vec![
                ("task_dir", Some(s.task_dir.clone())),
                ("status", Some(run.status.as_str().into())),
                ("target", Some(s.target.clone())),
                ("mode", Some(s.mode.as_str().into())),
                ("agent", Some(s.agent.as_str().into())),
                ("launch_command", s.launch_command.clone()),
                ("command_template", Some(s.command_template.clone())),
                ("routing_table", Some(s.table.clone())),
                ("notify_command", s.notify.clone()),
                ("dispatch_into", Some(s.into.as_str().into())),
                ("started_at", time(Some(run.started_at))),
                ("last_signal_at", time(run.last_signal_at)),
                ("last_tick_at", time(run.last_tick_at)),
                ("last_heartbeat_at", time(run.last_heartbeat_at)),
                (
                    "last_decision",
                    Some(run.last_decision.clone()).filter(|d| !d.is_empty()),
                ),
                (
                    "stop_reason",
                    run.stop_reason.as_ref().map(|r| r.to_string()),
                ),
                ("stop_message", run.stop_message.clone()),
                ("ended_at", time(run.ended_at)),
                ("claimed_by", run.claimed_by.clone()),
                ("claimed_until", time(run.claimed_until)),
                ("last_capture_hash", st.last_hash.clone()),
                ("quota_wait_since", time(st.clock_paused_since)),
                ("stall_unchanged_since", time(st.unchanged_since)),
                ("stall_signal_timestamp", st.signal_timestamp.clone()),
                ("answered_hash", st.answered_hash.clone()),
                ("escalated_hash", st.escalated_hash.clone()),
                ("last_check_at", time(st.last_check_at)),
                ("message_hash", st.message_hash.clone()),
                ("transcript_hash", st.transcript.clone()),
                ("status_updated_at", st.status_updated_at.clone()),
                ("step_since", time(st.step_since)),
                ("screen_class", st.screen_class.clone()),
                ("screen_changed_after", time(st.screen_changed_after)),
                ("signal_fingerprint", signal.map(|g| g.fingerprint.clone())),
                ("signal_step", signal.map(|g| g.step.clone())),
                ("signal_result", signal.map(|g| g.result.clone())),
                ("signal_next", signal.map(|g| g.next.clone())),
                (
                    "signal_checkpoint",
                    signal
                        .map(|g| g.checkpoint.clone())
                        .filter(|c| !c.is_empty()),
                ),
                ("pending_next", d.pending.as_ref().map(|p| p.next.clone())),
                (
                    "pending_checkpoint",
                    d.pending
                        .as_ref()
                        .map(|p| p.checkpoint.clone())
                        .filter(|c| !c.is_empty()),
                ),
                (
                    "dispatched_next",
                    d.dispatched.as_ref().map(|p| p.next.clone()),
                ),
                (
                    "dispatched_checkpoint",
                    d.dispatched
                        .as_ref()
                        .map(|p| p.checkpoint.clone())
                        .filter(|c| !c.is_empty()),
                ),
                ("dispatched_at", time(d.dispatched_at)),
                ("dispatch_typing", d.typing.clone()),
                (
                    "agent_state",
                    a.reading.as_ref().map(|r| r.state.to_string()),
                ),
                (
                    "agent_state_source",
                    a.reading.as_ref().map(|r| r.source.as_str().into()),
                ),
                ("agent_state_at", time(a.reading.as_ref().map(|r| r.at))),
            ];
            for (column, want) in texts {
                compared.insert(column);
                let want = want.map(|t| parse_time(&t).map_or(t, format_time));
                assert_eq!(text(row, column), want, "{session}: {column}");
            }
            let ints: Vec<(&str, Option<i64>)> = vec![
                ("max_iterations", num(s.max_iterations)),
                ("timeout_ms", num(s.timeout.as_millis() as u64)),
                ("stall_threshold", num(s.limits.threshold.into())),
                (
                    "max_recoveries_step",
                    num(s.limits.recoveries_per_iteration.into()),
                ),
                (
                    "max_recoveries_total",
                    num(s.limits.recoveries_total.into()),
                ),
                ("max_answers", num(s.limits.max_answers.into())),
                ("repeat_limit", num(s.limits.repeat_limit.into())),
                (
                    "step_timeout_ms",
                    num(s.limits.step_timeout.as_millis() as u64),
                ),
                ("max_compactions", num(s.max_compactions.into())),
                ("iteration_count", num(run.iteration_count)),
                ("signals_seen", num(run.signals_seen)),
                ("ticks", num(run.ticks)),
                ("heartbeats", num(run.heartbeats)),
                ("stall_count", num(st.unchanged.into())),
                ("recovery_count_step", num(st.recoveries_iteration.into())),
                ("recovery_count_total", num(st.recoveries_total.into())),
                ("answer_count_step", num(st.answers_step.into())),
                ("answer_count_total", num(st.answers_total.into())),
                ("quota_waited_seconds", num(st.clock_paused_seconds)),
                ("stall_signal_iteration", st.signal_iteration.and_then(num)),
                ("stall_limit_reached", num(st.limit_reached.into())),
                ("stall_checks", num(st.checks)),
                ("message_repeats", num(st.message_repeats.into())),
                ("step_waited_base", num(st.step_waited_base)),
                (
                    "signal_iteration",
                    signal.and_then(|g| g.iteration).and_then(num),
                ),
                ("dispatch_count", num(d.count)),
                ("shell_seen", num(a.shell_seen.into())),
                ("compaction_iteration", num(a.compactions.iteration)),
                ("compaction_count", num(a.compactions.count.into())),
                ("compactions_seen", a.compactions_seen.and_then(num)),
            ];
            for (column, want) in ints {
                compared.insert(column);
                assert_eq!(int(row, column), want, "{session}: {column}");
            }
            assert_eq!(
                text(row, "waits").map(|t| WaitState::from_json(&t)),
                Some(run.waits.clone())
            );
            assert_eq!(
                text(row, "wait_limits").map(|t| WaitLimits::from_json(&t)),
                Some(s.wait_limits.clone())
            );
        }
        compared.extend(["waits", "wait_limits"]);
        let columns: std::collections::BTreeSet<&str> = old[0].keys().map(String::as_str).collect();
        assert_eq!(
            columns, compared,
            "every column of schema version 8 is compared"
        );
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
                Claim::Claimed(run) => (run.spec.session, true),
                Claim::Skipped(run, _) => (run.spec.session, false),
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
                        let a = summary(real.claim(sel, &owner, "here", at(t)).unwrap());
                        let b = summary(model.claim(sel, &owner, "here", at(t)).unwrap());
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
