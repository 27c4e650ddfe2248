//! Which host this process runs on: `AUTOCTL_HOST`, else the machine's hostname. A run
//! belongs to the host that started it (its tmux server holds the pane); with a registry
//! shared by a fleet, only that host observes and types into it.

use anyhow::{Result, bail};

/// The environment variable that names this host.
pub const HOST_VAR: &str = "AUTOCTL_HOST";

/// This host's name.
pub fn this_host() -> Result<String> {
    if let Some(name) = std::env::var_os(HOST_VAR).filter(|v| !v.is_empty()) {
        let Some(name) = name.to_str() else {
            bail!("{HOST_VAR} is not UTF-8");
        };
        check(name)?;
        return Ok(name.to_string());
    }
    // The kernel's name for the machine (what `hostname` prints), without a C call.
    for file in ["/proc/sys/kernel/hostname", "/etc/hostname"] {
        if let Ok(text) = std::fs::read_to_string(file) {
            let name = text.trim();
            if !name.is_empty() && check(name).is_ok() {
                return Ok(name.to_string());
            }
        }
    }
    Ok("localhost".to_string())
}

/// A host name is one printable line.
pub fn check(name: &str) -> Result<()> {
    if name.trim().is_empty() || name.len() > 255 || name.chars().any(char::is_control) {
        bail!("{HOST_VAR}={name:?}: a host name is one printable line of at most 255 bytes");
    }
    Ok(())
}
