//! Storage of the run registry: one row per supervised loop (seed 000's `task_auto` table
//! plus what a tick needs, laid out by [`row`]) in SQLite ([`sqlite::SqliteRegistry`], the
//! default: one file per machine) or PostgreSQL ([`postgres::PgRegistry`]: one database a
//! fleet of hosts shares), and an in-memory fake (`memory`) for unit tests. All implement
//! [`crate::supervise::store::Registry`]; the types they store are the supervisor's
//! ([`crate::supervise::run`]). [`Location`] says which one a command uses.

pub mod backend;
pub mod postgres;
pub mod row;
pub mod sqlite;
pub mod tls;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use backend::{Backend, End, Tx};

/// The environment variable that names the registry (`--registry`).
pub const REGISTRY_VAR: &str = "AUTOCTL_REGISTRY";

/// Where the registry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The SQLite file in this state directory (the default).
    File(PathBuf),
    /// A PostgreSQL database (`postgres://…`).
    Postgres(String),
}

impl Location {
    /// `--registry` (or `AUTOCTL_REGISTRY`) when given, else the state directory's file.
    pub fn from_arg(arg: Option<&str>) -> Result<Location> {
        match arg.filter(|a| !a.is_empty()) {
            Some(url) if postgres::is_url(url) => Ok(Location::Postgres(url.to_string())),
            Some(other) => anyhow::bail!(
                "--registry {other:?}: not a postgres:// URL (without --registry the registry is the SQLite file in $AUTOCTL_STATE_DIR)"
            ),
            None => Ok(Location::File(crate::supervise::state_dir()?)),
        }
    }

    /// Open it for writing (creating and migrating it as needed).
    pub fn open(&self) -> Result<Database> {
        Ok(match self {
            Location::File(dir) => Database::Sqlite(sqlite::SqliteRegistry::open(dir)?),
            Location::Postgres(url) => Database::Postgres(postgres::PgRegistry::open(url)?),
        })
    }

    /// Open it for reading: `None` when it does not exist yet.
    pub fn open_existing(&self) -> Result<Option<Database>> {
        Ok(match self {
            Location::File(dir) => {
                sqlite::SqliteRegistry::open_existing(dir)?.map(Database::Sqlite)
            }
            Location::Postgres(url) => {
                postgres::PgRegistry::open_existing(url)?.map(Database::Postgres)
            }
        })
    }

    /// Open it for ticks: `None` when no registry exists yet (a file never created).
    pub fn open_for_ticks(&self) -> Result<Option<Database>> {
        match self {
            Location::File(dir) if !dir.join(DB_FILE).exists() => Ok(None),
            _ => self.open().map(Some),
        }
    }
}

/// An open registry, on either database; it is a [`crate::supervise::store::Registry`]
/// through [`Backend`].
pub enum Database {
    Sqlite(sqlite::SqliteRegistry),
    Postgres(postgres::PgRegistry),
}

impl Database {
    /// The SQLite file, which a watcher watches for writes; `None` for PostgreSQL (polled).
    pub fn file(&self) -> Option<&Path> {
        match self {
            Database::Sqlite(db) => Some(db.path()),
            Database::Postgres(_) => None,
        }
    }

    /// How long a write waits for the SQLite file's lock (PostgreSQL waits for row locks).
    pub fn set_busy_timeout(&mut self, timeout: Duration) -> Result<()> {
        match self {
            Database::Sqlite(db) => db.set_busy_timeout(timeout),
            Database::Postgres(_) => Ok(()),
        }
    }
}

impl Backend for Database {
    fn transaction(
        &mut self,
        write: bool,
        work: &mut dyn FnMut(&mut dyn Tx) -> Result<End>,
    ) -> Result<()> {
        match self {
            Database::Sqlite(db) => db.transaction(write, work),
            Database::Postgres(db) => db.transaction(write, work),
        }
    }
}

#[cfg(test)]
pub mod memory;

/// The database file inside the state directory.
pub const DB_FILE: &str = "autoctl.db";
