//! Supervising loops: the run model ([`run`]) and what supervision needs from storage
//! ([`store`], implemented in [`crate::registry`]); one tick's pure decision ([`tick`]) and
//! the edge that observes, decides and acts for `run tick`/`run recover` ([`driver`]); the
//! long-running `run watch` ([`watch`]); stall detection ([`stall`]) and where `stall check`
//! keeps its state ([`state_file`]); what a tick reads from the task directory ([`inputs`]);
//! the one path that types into an agent's pane ([`answer`]); and what `run status` shows
//! ([`report`]).

pub mod answer;
pub mod driver;
pub mod inputs;
pub mod report;
pub mod run;
pub mod stall;
pub mod state_file;
pub mod store;
pub mod tick;
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
