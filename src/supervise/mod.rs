//! Supervising loops.
//!
//! - The model: a run ([`run`]), what supervision needs from storage ([`store`], implemented
//!   in [`crate::registry`]), and what `run status` shows ([`report`]).
//! - The pure decisions: one tick of a run ([`tick`]) and the stall heartbeat with its kinds
//!   ([`stall`]).
//! - The one driver around them ([`driver`]): `run tick`, `run recover`, `run watch`'s
//!   per-run tick and `stall check` capture, decide, type the answer first and carry out the
//!   effects the same way; `run watch`'s event loop ([`watch`]).
//! - The rules of `run start`, `run stop` and `run continue` ([`control`]).
//! - The edges: what a heartbeat reads from the task directory ([`inputs`]) and the one path
//!   that types into an agent's pane ([`typing`]).
//! - The agent's typed state from its hooks and status line, cross-checked against the
//!   screen ([`typed`]).

pub mod control;
pub mod driver;
pub mod governor;
pub mod inputs;
pub mod launch;
pub mod notify;
pub mod report;
pub mod run;
pub mod stall;
pub mod store;
pub mod tick;
pub mod typed;
pub mod typing;
pub mod wait;
pub mod watch;

use std::path::PathBuf;

use anyhow::{Result, bail};

/// autoctl's state directory: `AUTOCTL_STATE_DIR`, else `$XDG_STATE_HOME/autoctl`, else
/// `~/.local/state/autoctl`.
pub fn state_dir() -> Result<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty("AUTOCTL_STATE_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = non_empty("XDG_STATE_HOME") {
        return Ok(PathBuf::from(dir).join("autoctl"));
    }
    if let Some(home) = non_empty("HOME") {
        return Ok(PathBuf::from(home).join(".local/state/autoctl"));
    }
    bail!("no state directory: set AUTOCTL_STATE_DIR or HOME")
}
