//! The registry in PostgreSQL (`--registry postgres://…`, `AUTOCTL_REGISTRY`): one database a
//! fleet of hosts shares, with the same logic as the SQLite file ([`super::backend`]): the same
//! claims and leases, the same start conflicts, the governor's permit decided again in the
//! dispatch or resume record's transaction.
//!
//! Locks are row locks only, taken in [`super::backend`]'s one order: the account row (created
//! first if missing) before a permit is decided, then the runs a transaction may change with
//! one `SELECT … ORDER BY session_name FOR UPDATE`. A transaction the server aborts as a
//! deadlock's victim or a serialization failure is run once more. No advisory locks, no
//! session state: a transaction-mode pooler (PgBouncer) in front
//! works. Every statement is one round trip: its parameters' types are given with it
//! (`query_typed`, the unnamed statement), so nothing is prepared apart or kept between
//! transactions (a named prepared statement is session state a pooler may not carry). A run's
//! row is written with one upsert and a tick's claims with one `UPDATE`. The schema is [`super::row::COLUMNS`] laid out in PostgreSQL types (`timestamptz`,
//! `jsonb`), with its version in `autoctl_schema`; a writing open migrates it under a table lock.
//!
//! TLS is rustls, as libpq's `sslmode` and `sslrootcert` in the URL ask ([`super::tls`]:
//! `prefer`, the default, uses TLS when the server offers it; `require` insists;
//! `verify-full` also proves the server is the one named). A URL
//! without a password takes it from `PGPASSWORD` or `~/.pgpass` (`PGPASSFILE`), as libpq does.

use anyhow::{Context, Result, anyhow, bail};
use postgres::types::{ToSql, Type};
use postgres::{Client, Row};

use super::backend::{Backend, End, Tx, Which};
use super::row::{self, Cell, Kind};
use crate::supervise::governor::Account;
use crate::supervise::run::Run;
use crate::supervise::store::Host;
use crate::time::Time;

/// The schema this build writes (its own numbering: PostgreSQL starts at the SQLite file's
/// latest shape).
const SCHEMA_VERSION: i32 = 1;

/// The oldest server this registry runs on (`server_version_num`): PostgreSQL 12.
const OLDEST_SERVER: i32 = 120_000;

/// Whether a registry argument names a PostgreSQL database.
pub fn is_url(spec: &str) -> bool {
    spec.starts_with("postgres://") || spec.starts_with("postgresql://")
}

/// A registry in a PostgreSQL database.
pub struct PgRegistry {
    client: Client,
    /// The URL without its password, for messages.
    shown: String,
}

impl std::fmt::Debug for PgRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgRegistry")
            .field("url", &self.shown)
            .finish()
    }
}

/// The URL as messages show it: no password.
fn shown(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

impl PgRegistry {
    /// Connect and bring the schema to this build's version.
    pub fn open(url: &str) -> Result<PgRegistry> {
        let mut registry = PgRegistry::connect(url)?;
        registry.migrate()?;
        Ok(registry)
    }

    /// Connect to a registry that must exist already (readers: `run status`): `None` when the
    /// database holds no registry yet.
    pub fn open_existing(url: &str) -> Result<Option<PgRegistry>> {
        let mut registry = PgRegistry::connect(url)?;
        match registry.version()? {
            None => Ok(None),
            Some(v) if v == SCHEMA_VERSION => Ok(Some(registry)),
            Some(v) if v > SCHEMA_VERSION => bail!(
                "registry {}: schema version {v} is newer than this autoctl understands ({SCHEMA_VERSION}); upgrade autoctl",
                registry.shown
            ),
            Some(v) => bail!(
                "registry {}: schema version {v}; run any writing command (e.g. `autoctl run tick --all`) to migrate it to {SCHEMA_VERSION}",
                registry.shown
            ),
        }
    }

    fn connect(url: &str) -> Result<PgRegistry> {
        let shown = shown(url);
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let (url, tls) =
            super::tls::split(url, home).map_err(|err| anyhow!("registry {shown}: {err:#}"))?;
        let mut config: postgres::Config = url
            .parse()
            .map_err(|err| anyhow!("registry {shown}: not a PostgreSQL URL: {err}"))?;
        if config.get_password().is_none()
            && let Some(password) = password(&config)
        {
            config.password(password);
        }
        let tls = tls
            .client_config()
            .map_err(|err| anyhow!("registry {shown}: {err:#}"))?;
        let client = config
            .connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls))
            .map_err(|err| describe(&shown, &err))?;
        Ok(PgRegistry { client, shown })
    }

    /// The stored schema version, `None` before the first migration. A server older than
    /// [`OLDEST_SERVER`] is refused here, before anything is read or written.
    fn version(&mut self) -> Result<Option<i32>> {
        // One round trip for the server's version and whether the schema table is there.
        let row = self
            .client
            .query_typed_one(
                "SELECT current_setting('server_version_num'), \
                 to_regclass('autoctl_schema') IS NOT NULL",
                &[],
            )
            .map_err(|err| describe(&self.shown, &err))?;
        let server: String = row.get(0);
        match server.parse::<i32>() {
            Ok(num) if num >= OLDEST_SERVER => {}
            _ => bail!(
                "registry {}: PostgreSQL server version {server} is older than this autoctl needs ({OLDEST_SERVER}: PostgreSQL 12)",
                self.shown
            ),
        }
        if !row.get::<_, bool>(1) {
            return Ok(None);
        }
        let row = self
            .client
            .query_typed_opt("SELECT version FROM autoctl_schema", &[])
            .map_err(|err| describe(&self.shown, &err))?;
        Ok(row.map(|r| r.get(0)))
    }

    /// Create or upgrade the schema, once however many hosts open it at the same moment (the
    /// version table is locked for the migration's transaction).
    fn migrate(&mut self) -> Result<()> {
        if self.version()? == Some(SCHEMA_VERSION) {
            return Ok(());
        }
        let shown = self.shown.clone();
        let mut tx = self
            .client
            .transaction()
            .map_err(|err| describe(&shown, &err))?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS autoctl_schema (version integer NOT NULL);
             LOCK TABLE autoctl_schema IN ACCESS EXCLUSIVE MODE;",
        )
        .map_err(|err| describe(&shown, &err))?;
        let version: Option<i32> = tx
            .query_opt("SELECT version FROM autoctl_schema", &[])
            .map_err(|err| describe(&shown, &err))?
            .map(|r| r.get(0));
        match version {
            Some(v) if v == SCHEMA_VERSION => return Ok(()),
            Some(v) if v > SCHEMA_VERSION => bail!(
                "registry {shown}: schema version {v} is newer than this autoctl understands ({SCHEMA_VERSION}); upgrade autoctl"
            ),
            _ => {}
        }
        if version.is_none() {
            tx.batch_execute(&schema())
                .map_err(|err| describe(&shown, &err))?;
            tx.execute(
                "INSERT INTO autoctl_schema (version) VALUES ($1)",
                &[&SCHEMA_VERSION],
            )
            .map_err(|err| describe(&shown, &err))?;
        }
        tx.commit().map_err(|err| describe(&shown, &err))
    }
}

/// The schema: the run table laid out from [`row::COLUMNS`], the accounts and the hosts.
fn schema() -> String {
    let columns: Vec<String> = row::COLUMNS
        .iter()
        .map(|(name, kind)| {
            let ty = match kind {
                Kind::Text => "text",
                Kind::Int => "bigint",
                Kind::Time => "timestamptz",
                Kind::Json => "jsonb",
            };
            let extra = match *name {
                "session_name" => " PRIMARY KEY",
                "task_dir" => " NOT NULL UNIQUE",
                "status" => {
                    " NOT NULL CHECK (status IN ('running', 'finished', 'stopped', 'exited', 'lost'))"
                }
                _ => "",
            };
            format!("  {name} {ty}{extra}")
        })
        .collect();
    format!(
        "CREATE TABLE task_auto (\n{}\n);
CREATE INDEX task_auto_running ON task_auto (status, host);
CREATE INDEX task_auto_account ON task_auto (account, status);
CREATE TABLE accounts (name text PRIMARY KEY, state jsonb NOT NULL);
CREATE TABLE hosts (
  name text PRIMARY KEY,
  seen_at timestamptz NOT NULL,
  lease_until timestamptz NOT NULL,
  lost_announced_at timestamptz
);",
        columns.join(",\n")
    )
}

/// One line: which database and what the server or the connection said.
fn describe(shown: &str, err: &postgres::Error) -> anyhow::Error {
    match err.as_db_error() {
        Some(db) => anyhow!("registry {shown}: {} ({})", db.message(), db.code().code()),
        None => {
            // The connection's own error says what failed (refused, TLS, authentication).
            let mut text = err.to_string();
            let mut source = std::error::Error::source(err);
            while let Some(inner) = source {
                text = format!("{text}: {inner}");
                source = inner.source();
            }
            anyhow!("registry {shown}: {text}")
        }
    }
}

/// Whether the server aborted a transaction that may simply be run again: chosen as a
/// deadlock's victim (`40P01`) or failed to serialize (`40001`).
fn retryable(err: &postgres::Error) -> bool {
    use postgres::error::SqlState;
    err.code().is_some_and(|code| {
        *code == SqlState::T_R_DEADLOCK_DETECTED || *code == SqlState::T_R_SERIALIZATION_FAILURE
    })
}

impl Backend for PgRegistry {
    /// One transaction; aborted by the server as a deadlock's victim or a serialization
    /// failure, it is run again once from the start (nothing of the aborted one was kept, and
    /// `work` keeps no state from it). Aborted again, it is the error: one line, the
    /// transaction's work not done (a tick gives back its claims and the next tick tries again).
    fn transaction(
        &mut self,
        write: bool,
        work: &mut dyn FnMut(&mut dyn Tx) -> Result<End>,
    ) -> Result<()> {
        let shown = self.shown.clone();
        let mut retried = false;
        loop {
            let aborted = std::cell::Cell::new(false);
            let result = self.attempt(write, work, &shown, &aborted);
            match result {
                // Silently: the server's log has the deadlock's report.
                Err(_) if aborted.get() && !retried => retried = true,
                Err(err) if aborted.get() => {
                    return Err(anyhow!(
                        "{err:#}; aborted again when retried, nothing of it kept"
                    ));
                }
                other => return other,
            }
        }
    }
}

impl PgRegistry {
    /// One try of [`Backend::transaction`]; `aborted` is set when the server aborted it in a
    /// way worth one more try ([`retryable`]).
    fn attempt(
        &mut self,
        write: bool,
        work: &mut dyn FnMut(&mut dyn Tx) -> Result<End>,
        shown: &str,
        aborted: &std::cell::Cell<bool>,
    ) -> Result<()> {
        let fail = |err: postgres::Error| {
            aborted.set(aborted.get() || retryable(&err));
            describe(shown, &err)
        };
        let mut tx = self
            .client
            .build_transaction()
            .read_only(!write)
            .start()
            .map_err(fail)?;
        let end = work(&mut PgTx {
            tx: &mut tx,
            write,
            shown,
            aborted,
        })?;
        match end {
            End::Commit => tx.commit().map_err(fail),
            End::Rollback => tx.rollback().map_err(fail),
        }
    }
}

/// One PostgreSQL transaction: a writing one locks the rows it reads.
struct PgTx<'t, 'c> {
    tx: &'t mut postgres::Transaction<'c>,
    write: bool,
    shown: &'t str,
    /// Set when a statement failed because the server aborted the transaction ([`retryable`]).
    aborted: &'t std::cell::Cell<bool>,
}

impl PgTx<'_, '_> {
    fn err(&self, err: postgres::Error) -> anyhow::Error {
        if retryable(&err) {
            self.aborted.set(true);
        }
        describe(self.shown, &err)
    }

    fn lock(&self) -> &'static str {
        if self.write { " FOR UPDATE" } else { "" }
    }

    /// Write a run's row: a new one (`insert`), or over the stored one of its session in the
    /// same statement (`upsert`: one round trip instead of a delete and an insert).
    fn write_row(&mut self, run: &Run, upsert: bool) -> Result<()> {
        static SQL: std::sync::OnceLock<[String; 2]> = std::sync::OnceLock::new();
        let sql = SQL.get_or_init(|| {
            let places: Vec<String> = row::COLUMNS
                .iter()
                .enumerate()
                .map(|(i, (_, kind))| match kind {
                    Kind::Json => format!("(${}::text)::jsonb", i + 1),
                    _ => format!("${}", i + 1),
                })
                .collect();
            let insert = format!(
                "INSERT INTO task_auto ({}) VALUES ({})",
                row::names(),
                places.join(", ")
            );
            let updates: Vec<String> = row::COLUMNS
                .iter()
                .filter(|(name, _)| *name != "session_name")
                .map(|(name, _)| format!("{name} = excluded.{name}"))
                .collect();
            let upsert = format!(
                "{insert} ON CONFLICT (session_name) DO UPDATE SET {}",
                updates.join(", ")
            );
            [insert, upsert]
        });
        let cells = row::encode(run);
        let values: Vec<Box<dyn ToSql + Sync>> = cells
            .into_iter()
            .map(|cell| -> Box<dyn ToSql + Sync> {
                match cell {
                    Cell::Text(v) | Cell::Json(v) => Box::new(v),
                    Cell::Int(v) => Box::new(v),
                    Cell::Time(v) => Box::new(v),
                }
            })
            .collect();
        let typed: Vec<Param<'_>> = values
            .iter()
            .zip(row::COLUMNS)
            .map(|(value, (_, kind))| (value.as_ref(), param_type(kind)))
            .collect();
        self.tx
            .execute_typed(&sql[usize::from(upsert)], &typed)
            .map_err(|err| self.err(err))?;
        Ok(())
    }
}

/// The `WHERE` clause of a selection, and its arguments.
fn clause(which: Which<'_>) -> (&'static str, Vec<String>) {
    match which {
        Which::Session(session) => ("WHERE session_name = $1", vec![session.to_string()]),
        Which::Task(task) => ("WHERE task_dir = $1", vec![task.to_string()]),
        Which::SessionOrTask(session, task) => (
            "WHERE session_name = $1 OR task_dir = $2",
            vec![session.to_string(), task.to_string()],
        ),
        Which::RunningOn(host) => (
            "WHERE status = 'running' AND (host = $1 OR host = '')",
            vec![host.to_string()],
        ),
        Which::RunningOf(account) => (
            "WHERE status = 'running' AND account = $1",
            vec![account.to_string()],
        ),
        // Rows with an entry not delivered yet (supervise::outbox: `delivered` is absent).
        Which::Outbox => (
            "WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(outbox) AS e \
             WHERE NOT e ? 'delivered')",
            vec![],
        ),
        Which::All => ("", vec![]),
    }
}

/// A statement's parameter with its type (`query_typed`).
type Param<'a> = (&'a (dyn ToSql + Sync), Type);

fn params(args: &[String]) -> Vec<Param<'_>> {
    args.iter()
        .map(|a| (a as &(dyn ToSql + Sync), Type::TEXT))
        .collect()
}

/// A column's type, as a statement's parameter.
fn param_type(kind: Kind) -> Type {
    match kind {
        Kind::Text | Kind::Json => Type::TEXT,
        Kind::Int => Type::INT8,
        Kind::Time => Type::TIMESTAMPTZ,
    }
}

/// The select list: JSON columns read back as text.
fn select_list() -> &'static str {
    static LIST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LIST.get_or_init(|| {
        row::COLUMNS
            .iter()
            .map(|(name, kind)| match kind {
                Kind::Json => format!("{name}::text AS {name}"),
                _ => (*name).to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    })
}

impl PgTx<'_, '_> {
    /// The selected runs in session order; `lock`: `FOR UPDATE`, which locks them in that
    /// order (the sort is below the lock).
    fn select_runs(&mut self, which: Which<'_>, lock: bool) -> Result<Vec<Run>> {
        let (clause, args) = clause(which);
        let sql = format!(
            "SELECT {} FROM task_auto {clause} ORDER BY session_name{}",
            select_list(),
            if lock { self.lock() } else { "" }
        );
        let rows = self
            .tx
            .query_typed(&sql, &params(&args))
            .map_err(|err| self.err(err))?;
        rows.iter()
            .map(|r| {
                row::decode(&Fields(r)).map_err(|err| anyhow!("registry {}: {err:#}", self.shown))
            })
            .collect()
    }
}

impl Tx for PgTx<'_, '_> {
    fn runs(&mut self, which: Which<'_>) -> Result<Vec<Run>> {
        self.select_runs(which, true)
    }

    fn peek(&mut self, which: Which<'_>) -> Result<Vec<Run>> {
        self.select_runs(which, false)
    }

    fn delete(&mut self, which: Which<'_>) -> Result<()> {
        let (clause, args) = clause(which);
        self.tx
            .execute_typed(&format!("DELETE FROM task_auto {clause}"), &params(&args))
            .map_err(|err| self.err(err))?;
        Ok(())
    }

    fn insert(&mut self, run: &Run) -> Result<()> {
        self.write_row(run, false)
    }

    fn replace(&mut self, run: &Run) -> Result<()> {
        self.write_row(run, true)
    }

    fn set_claim(
        &mut self,
        session: &str,
        owner: Option<&str>,
        until: Option<Time>,
        host: Option<&str>,
    ) -> Result<()> {
        self.tx
            .execute_typed(
                "UPDATE task_auto SET claimed_by = $2, claimed_until = $3, \
                 host = coalesce($4, host) WHERE session_name = $1",
                &[
                    (&session, Type::TEXT),
                    (&owner, Type::TEXT),
                    (&until, Type::TIMESTAMPTZ),
                    (&host, Type::TEXT),
                ],
            )
            .map_err(|err| self.err(err))?;
        Ok(())
    }

    fn claim_rows(
        &mut self,
        sessions: &[&str],
        owner: &str,
        until: Time,
        host: &str,
    ) -> Result<()> {
        if sessions.is_empty() {
            return Ok(());
        }
        let sessions: Vec<&str> = sessions.to_vec();
        self.tx
            .execute_typed(
                "UPDATE task_auto SET claimed_by = $2, claimed_until = $3, host = $4 \
                 WHERE session_name = ANY($1)",
                &[
                    (&sessions, Type::TEXT_ARRAY),
                    (&owner, Type::TEXT),
                    (&until, Type::TIMESTAMPTZ),
                    (&host, Type::TEXT),
                ],
            )
            .map_err(|err| self.err(err))?;
        Ok(())
    }

    fn account(&mut self, name: &str) -> Result<Option<Account>> {
        if self.write {
            // The row must exist to be locked: two first permits of an account contend on it.
            self.tx
                .execute_typed(
                    "INSERT INTO accounts (name, state) VALUES ($1, '{}') ON CONFLICT (name) DO NOTHING",
                    &[(&name, Type::TEXT)],
                )
                .map_err(|err| self.err(err))?;
        }
        let sql = format!(
            "SELECT state::text FROM accounts WHERE name = $1{}",
            self.lock()
        );
        let row = self
            .tx
            .query_typed_opt(&sql, &[(&name, Type::TEXT)])
            .map_err(|err| self.err(err))?;
        row.map(|r| read_account(self.shown, name, r.get(0)))
            .transpose()
    }

    fn put_account(&mut self, name: &str, state: &Account) -> Result<()> {
        let text = serde_json::to_string(state).expect("an account serializes");
        self.tx
            .execute_typed(
                "INSERT INTO accounts (name, state) VALUES ($1, ($2::text)::jsonb) \
                 ON CONFLICT (name) DO UPDATE SET state = excluded.state",
                &[(&name, Type::TEXT), (&text, Type::TEXT)],
            )
            .map_err(|err| self.err(err))?;
        Ok(())
    }

    fn accounts(&mut self) -> Result<Vec<(String, Account)>> {
        let rows = self
            .tx
            .query_typed("SELECT name, state::text FROM accounts ORDER BY name", &[])
            .map_err(|err| self.err(err))?;
        rows.iter()
            .map(|r| {
                let name: String = r.get(0);
                let state = read_account(self.shown, &name, r.get(1))?;
                Ok((name, state))
            })
            .collect()
    }

    fn hosts(&mut self) -> Result<Vec<Host>> {
        let sql = format!(
            "SELECT name, seen_at, lease_until, lost_announced_at FROM hosts ORDER BY name{}",
            self.lock()
        );
        let rows = self
            .tx
            .query_typed(&sql, &[])
            .map_err(|err| self.err(err))?;
        Ok(rows
            .iter()
            .map(|r| Host {
                name: r.get(0),
                seen_at: r.get(1),
                lease_until: r.get(2),
                lost_announced_at: r.get(3),
            })
            .collect())
    }

    fn put_host(&mut self, host: &Host) -> Result<()> {
        self.tx
            .execute_typed(
                "INSERT INTO hosts (name, seen_at, lease_until, lost_announced_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO UPDATE SET \
                 seen_at = excluded.seen_at, lease_until = excluded.lease_until, \
                 lost_announced_at = excluded.lost_announced_at",
                &[
                    (&host.name, Type::TEXT),
                    (&host.seen_at, Type::TIMESTAMPTZ),
                    (&host.lease_until, Type::TIMESTAMPTZ),
                    (&host.lost_announced_at, Type::TIMESTAMPTZ),
                ],
            )
            .map_err(|err| self.err(err))?;
        Ok(())
    }
}

/// An account's stored state; one this build cannot read is an error naming it.
fn read_account(shown: &str, name: &str, text: &str) -> Result<Account> {
    serde_json::from_str(text).with_context(|| {
        format!("registry {shown}: the state of account {name:?} is not readable: {text:?}")
    })
}

/// A PostgreSQL row as [`row::decode`] reads it.
struct Fields<'a>(&'a Row);

impl row::Fields for Fields<'_> {
    fn text(&self, column: &str) -> Result<Option<String>> {
        Ok(self.0.try_get(column)?)
    }

    fn int(&self, column: &str) -> Result<Option<i64>> {
        Ok(self.0.try_get(column)?)
    }

    fn time(&self, column: &str) -> Result<Option<Time>> {
        Ok(self.0.try_get(column)?)
    }
}

/// The password for a URL without one: `PGPASSWORD`, else the first matching line of
/// `PGPASSFILE` or `~/.pgpass` (`host:port:database:user:password`, `*` matches anything,
/// `\` escapes), as libpq reads them. A file others can read is ignored, as libpq does.
fn password(config: &postgres::Config) -> Option<Vec<u8>> {
    if let Some(pw) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
        return Some(pw.into_encoded_bytes());
    }
    let file = std::env::var_os("PGPASSFILE")
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".pgpass")))?;
    let meta = std::fs::metadata(&file).ok()?;
    if std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o077 != 0 {
        return None;
    }
    let text = std::fs::read_to_string(&file).ok()?;
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(name)) => name.clone(),
        _ => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let database = config.get_dbname().or(config.get_user()).unwrap_or("");
    let user = config.get_user().unwrap_or("");
    let wanted = [host.as_str(), port.as_str(), database, user];
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let fields = pgpass_fields(line);
            let matches = fields.len() == 5
                && wanted
                    .iter()
                    .zip(&fields)
                    .all(|(want, field)| field == "*" || field == want);
            matches.then(|| fields[4].clone().into_bytes())
        })
}

/// One `.pgpass` line's fields: split at `:`, `\` escaping the next character.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().unwrap().extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_without_a_password_is_shown_as_given_and_one_with_it_hides_it() {
        assert_eq!(shown("postgres://me@db/x"), "postgres://me@db/x");
        assert_eq!(shown("postgres://me:pw@db/x"), "postgres://me:***@db/x");
    }

    #[test]
    fn pgpass_lines_split_at_colons_with_backslash_escapes() {
        assert_eq!(
            pgpass_fields(r"db.internal:5432:*:autoctl:pa\:ss\\word"),
            ["db.internal", "5432", "*", "autoctl", r"pa:ss\word"]
        );
        // A colon in the password field needs no escape: the fifth field is the rest.
        assert_eq!(pgpass_fields("h:1:d:u:a:b")[4], "a:b");
        assert_eq!(pgpass_fields("too:few").len(), 2);
    }
}
