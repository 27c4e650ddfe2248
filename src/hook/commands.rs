//! The ai-cli-task slash command autoctl ships for Claude Code
//! (`examples/claude/commands/ai-cli-task.md`, embedded here): what a real Claude Code needs
//! to run the steps a dispatch loop types (`/ai-cli-task plan TASK/x --generate`). `hook
//! install --commands` writes it beside the settings it changes (`.claude/commands/`), and
//! `--uninstall --commands` removes it.
//!
//! A file of that name that autoctl did not write (no `MARKER`) is the user's: it is never
//! replaced or removed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::fsx::{self, Bounded};

/// The command's file name: `/ai-cli-task` in Claude Code.
pub const FILE_NAME: &str = "ai-cli-task.md";

/// The command as shipped.
pub const TEXT: &str = include_str!("../../examples/claude/commands/ai-cli-task.md");

/// The line that marks a copy autoctl wrote (an older one is upgraded in place).
const MARKER: &str = "Shipped with autoctl";

/// What [`install`] or [`uninstall`] did (or would do, for a dry run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Wrote(PathBuf),
    UpToDate(PathBuf),
    Removed(PathBuf),
    Absent(PathBuf),
}

impl Change {
    /// One line for people.
    pub fn line(&self, dry_run: bool) -> String {
        let would = if dry_run { "would have " } else { "" };
        match self {
            Change::Wrote(path) => format!("{would}wrote {}", path.display()),
            Change::UpToDate(path) => format!("{}: up to date", path.display()),
            Change::Removed(path) => format!("{would}removed {}", path.display()),
            Change::Absent(path) => format!("{}: not installed", path.display()),
        }
    }
}

/// The command file in the `.claude` directory `claude_dir`.
pub fn path_in(claude_dir: &Path) -> PathBuf {
    claude_dir.join("commands").join(FILE_NAME)
}

/// The file's current text: None when absent.
fn current(path: &Path) -> Result<Option<String>> {
    fsx::refuse_symlink(path, "command file", "--project")?;
    match fsx::read_bounded(path, fsx::DOCUMENT_LIMIT) {
        Ok(Bounded::Complete(bytes)) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Ok(Bounded::TooLarge { .. }) => Ok(Some(String::new())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Write the command into `claude_dir/commands/`, unless a file of the user's is there.
pub fn install(claude_dir: &Path, dry_run: bool) -> Result<Change> {
    let path = path_in(claude_dir);
    match current(&path)? {
        Some(text) if text == TEXT => return Ok(Change::UpToDate(path)),
        Some(text) if !text.contains(MARKER) => bail!(
            "{} exists and autoctl did not write it; left untouched (move it aside to install autoctl's)",
            path.display()
        ),
        _ => {}
    }
    if !dry_run {
        let dir = path.parent().expect("a file in commands/");
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        fsx::atomic_write(&path, TEXT.as_bytes())?;
    }
    Ok(Change::Wrote(path))
}

/// Remove autoctl's copy of the command (never a file autoctl did not write).
pub fn uninstall(claude_dir: &Path, dry_run: bool) -> Result<Change> {
    let path = path_in(claude_dir);
    match current(&path)? {
        None => Ok(Change::Absent(path)),
        Some(text) if !text.contains(MARKER) => bail!(
            "{} was not written by autoctl; left untouched",
            path.display()
        ),
        Some(_) => {
            if !dry_run {
                fsx::remove_if_exists(&path)?;
            }
            Ok(Change::Removed(path))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_once_upgrades_its_own_and_never_touches_the_users() {
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join(".claude");
        assert!(matches!(install(&claude, true).unwrap(), Change::Wrote(_)));
        assert!(!path_in(&claude).exists(), "a dry run writes nothing");
        assert!(matches!(install(&claude, false).unwrap(), Change::Wrote(_)));
        assert_eq!(std::fs::read_to_string(path_in(&claude)).unwrap(), TEXT);
        assert!(matches!(
            install(&claude, false).unwrap(),
            Change::UpToDate(_)
        ));
        // An older copy of autoctl's is upgraded.
        std::fs::write(path_in(&claude), format!("<!-- {MARKER} -->\nold")).unwrap();
        assert!(matches!(install(&claude, false).unwrap(), Change::Wrote(_)));
        // The user's own file stays.
        std::fs::write(path_in(&claude), "my own command").unwrap();
        assert!(install(&claude, false).is_err());
        assert!(uninstall(&claude, false).is_err());
        assert_eq!(
            std::fs::read_to_string(path_in(&claude)).unwrap(),
            "my own command"
        );
        std::fs::write(path_in(&claude), TEXT).unwrap();
        assert!(matches!(
            uninstall(&claude, false).unwrap(),
            Change::Removed(_)
        ));
        assert!(matches!(
            uninstall(&claude, false).unwrap(),
            Change::Absent(_)
        ));
    }

    #[test]
    fn the_shipped_command_takes_its_arguments_and_writes_the_signal() {
        assert!(TEXT.starts_with("---\n"));
        assert!(TEXT.contains("$ARGUMENTS"));
        assert!(TEXT.contains(MARKER));
        assert!(TEXT.contains("autoctl signal write TASK_DIR --step STEP"));
    }
}
