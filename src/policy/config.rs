//! Where the policy comes from (the edge around the pure [`super::decide`]): the user's
//! policy file — `--policy FILE` on the supervisor's or hook's own command line, else
//! `$XDG_CONFIG_HOME/autoctl/policy.json`, else `~/.config/autoctl/policy.json`, never the
//! project — and the paths no rule may write (autoctl's configuration directory, the state
//! directory, the policy file and a rules override).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};

use super::Context;
use super::rules::{FILE_LIMIT, Policy};
use crate::fsx::{self, Bounded};

fn non_empty(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// autoctl's configuration directory: `$XDG_CONFIG_HOME/autoctl`, else `~/.config/autoctl`.
pub fn config_dir() -> Option<PathBuf> {
    non_empty("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .map(|p| p.join("autoctl"))
        .or_else(|| non_empty("HOME").map(|h| h.join(".config/autoctl")))
}

/// The default policy file.
pub fn default_path() -> Option<PathBuf> {
    config_dir().map(|d| d.join("policy.json"))
}

/// The policy in effect and the file it came from (none: built-in rules only). An explicit
/// file must exist; the default one may be missing. A rule whose examples are decided the
/// other way refuses the file.
pub fn load(explicit: Option<&Path>) -> Result<(Policy, Option<PathBuf>)> {
    load_with(explicit, Examples::Checked)
}

/// [`load`] with the rules' examples left for the caller (`policy test`: see
/// [`Policy::wrong_examples`]).
pub fn load_unchecked(explicit: Option<&Path>) -> Result<(Policy, Option<PathBuf>)> {
    load_with(explicit, Examples::Unchecked)
}

/// Whether reading a policy file checks its rules' examples.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Examples {
    Checked,
    Unchecked,
}

fn load_with(explicit: Option<&Path>, examples: Examples) -> Result<(Policy, Option<PathBuf>)> {
    let (path, required) = match explicit {
        Some(path) => (path.to_path_buf(), true),
        None => match default_path() {
            Some(path) => (path, false),
            None => return Ok((Policy::builtin(), None)),
        },
    };
    let bytes = match fsx::read_bounded(&path, FILE_LIMIT) {
        Ok(Bounded::Complete(bytes)) => bytes,
        Ok(Bounded::TooLarge { limit }) => {
            return Err(anyhow!(
                "{}: larger than {}",
                path.display(),
                fsx::human_size(limit)
            ));
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !required => {
            return Ok((Policy::builtin(), None));
        }
        Err(err) => {
            return Err(err).with_context(|| format!("cannot read policy {}", path.display()));
        }
    };
    let source = path.display().to_string();
    let policy = match examples {
        Examples::Checked => Policy::from_bytes(&bytes, &source)?,
        Examples::Unchecked => Policy::from_bytes_unchecked(&bytes, &source)?,
    };
    Ok((policy, Some(path)))
}

/// A context for a call in `cwd`: the project from `$CLAUDE_PROJECT_DIR` (or `project`),
/// home from `$HOME`, and the protected paths.
pub fn context(
    cwd: Option<PathBuf>,
    project: Option<PathBuf>,
    policy_file: Option<&Path>,
    rules_file: Option<&Path>,
) -> Context {
    let absolute = |p: PathBuf| p.is_absolute().then_some(p);
    let mut protected: Vec<PathBuf> = Vec::new();
    protected.extend(config_dir());
    protected.extend(crate::supervise::state_dir().ok());
    protected.extend(policy_file.map(absolutize));
    protected.extend(rules_file.map(absolutize));
    let cwd = cwd.and_then(absolute);
    // `.git` is a sensitive path no approved write creates, so one that exists is the
    // user's repository (or worktree), not one the agent planted.
    let git_top = cwd
        .as_deref()
        .is_some_and(|dir| dir.join(".git").symlink_metadata().is_ok());
    Context {
        cwd,
        git_top,
        project: project
            .or_else(|| non_empty("CLAUDE_PROJECT_DIR"))
            .and_then(absolute),
        home: non_empty("HOME").and_then(absolute),
        protected,
    }
}

fn absolutize(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Is `file` inside one of the context's project directories? A policy there is the
/// project's, which the policy is never read from.
pub fn inside_project(file: &Path, ctx: &Context) -> bool {
    let file = super::paths::fold(&absolutize(file));
    ctx.roots()
        .any(|root| file.starts_with(super::paths::fold(root)))
}
