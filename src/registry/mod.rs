//! Storage of the run registry: one row per supervised loop (seed 000's `task_auto` table
//! plus what a tick needs, laid out by [`row`]) in SQLite ([`sqlite::SqliteRegistry`]), and an in-memory fake
//! (`memory`) for unit tests. Both implement [`crate::supervise::store::Registry`]; the
//! types they store are the supervisor's ([`crate::supervise::run`]).

pub mod backend;
pub mod row;
pub mod sqlite;

#[cfg(test)]
pub mod memory;

/// The database file inside the state directory.
pub const DB_FILE: &str = "autoctl.db";
