//! Supervision cores: stall detection ([`stall`]) and where its state is kept
//! ([`state_file`] for `stall check`; `run tick` keeps the same state in SQLite), and the one
//! path that types into an agent's pane ([`answer`]).

pub mod answer;
pub mod inputs;
pub mod stall;
pub mod state_file;

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
pub mod driver;
pub mod tick;
pub mod watch;
