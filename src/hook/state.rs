//! The files of a loop inside one Claude Code session, all under `D/.autoctl/`:
//!
//! | file | written by | what |
//! | --- | --- | --- |
//! | `loop.json` | `loop init` | the activation file and the loop's settings; `hook stop` does nothing without it |
//! | `loop-state.json` | `hook stop` | bound session, iterations, tokens, transcript cursor, final outcome |
//! | `loop.lock` | `hook stop` | the heartbeat lock `{owner, pid, host, heartbeat_at}`, owner `session:<id>` |
//! | `quota-wait.json` | `hook stop-failure` | a usage-limit wait (see `hook::quota`) |
//! | `stop-failure.json` | `hook stop-failure` | the last API failure that ended a turn |
//! | `backprop-pending.json` | your test hook | failing tests: a backprop directive is prepended to the next prompt |
//! | `.loop.guard`, `.loop.lock.guard` | autoctl | flock side files that serialize updates |
//!
//! Every write is atomic. A settings or state file that does not parse is reported as
//! [`Problem`] so the hook can stand aside instead of blocking a session on bad state.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::transcript::{Cursor, Usage};
use crate::fsx::{self, Bounded};
use crate::protocol::document;

/// The directory inside a project that holds the loop's files.
pub const DIR_NAME: &str = ".autoctl";
pub const CONFIG_FILE: &str = "loop.json";
pub const STATE_FILE: &str = "loop-state.json";
pub const LOCK_FILE: &str = "loop.lock";
pub const GUARD_FILE: &str = ".loop.guard";
/// The failing-tests flag (seed 004's `.auto-backprop-pending.json`).
pub const BACKPROP_FILE: &str = "backprop-pending.json";

/// The format version of `loop.json` and `loop-state.json`.
pub const VERSION: u32 = 1;

/// Defaults (the numbers; seed 004 for the lock).
pub const DEFAULT_MAX_ITERATIONS: u64 = 60;
pub const DEFAULT_MAX_IDLE: u64 = 6;
pub const DEFAULT_TEMPLATE: &str = "/ai-cli-task {next} {task}";

/// Where a loop keeps its files.
#[derive(Debug, Clone)]
pub struct LoopDir {
    /// The project directory (`D`).
    pub project: PathBuf,
    /// `D/.autoctl`.
    pub dir: PathBuf,
}

impl LoopDir {
    pub fn new(project: &Path) -> LoopDir {
        LoopDir {
            project: project.to_path_buf(),
            dir: project.join(DIR_NAME),
        }
    }

    pub fn config(&self) -> PathBuf {
        self.dir.join(CONFIG_FILE)
    }
    pub fn state(&self) -> PathBuf {
        self.dir.join(STATE_FILE)
    }
    pub fn lock(&self) -> PathBuf {
        self.dir.join(LOCK_FILE)
    }
    pub fn guard(&self) -> PathBuf {
        self.dir.join(GUARD_FILE)
    }
    pub fn backprop(&self) -> PathBuf {
        self.dir.join(BACKPROP_FILE)
    }
}

/// What the loop feeds the session after each turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PromptSource {
    /// The same prompt every time.
    Text(String),
    /// A file read at every Stop, so the prompt can be edited while the loop runs.
    File(PathBuf),
    /// The command a routing table gives for a task module's `.auto-signal` (seed 000's
    /// single-session loop).
    Task {
        dir: PathBuf,
        table: String,
        template: String,
    },
}

/// `loop.json`: the activation file and the loop's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopConfig {
    pub version: u32,
    pub created_at: String,
    /// Bind to this session only; `None` binds to the first session that stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub max_iterations: u64,
    /// Token budget for the bound session (all usage fields summed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    /// Stop after this many consecutive turns without a tool call (0: never).
    pub max_idle: u64,
    pub sentinel: String,
    pub prompt: PromptSource,
    /// Staleness of the heartbeat lock, as `--stale` takes it ("5m").
    pub stale: String,
    /// How long `hook stop` waits for a lagging transcript ("1s").
    pub transcript_wait: String,
}

impl LoopConfig {
    pub fn stale_duration(&self) -> Duration {
        crate::duration::parse_positive(&self.stale).unwrap_or(crate::lock::DEFAULT_STALE)
    }

    pub fn transcript_wait_duration(&self) -> Duration {
        crate::duration::parse(&self.transcript_wait).unwrap_or(Duration::from_secs(1))
    }

    pub fn to_document(&self) -> Vec<u8> {
        to_document(self)
    }
}

/// How a loop ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ended {
    /// done, max-iterations, budget-exhausted, idle, task-stopped, teardown, replaced.
    pub outcome: String,
    pub at: String,
    pub message: String,
}

/// `loop-state.json`: what the hook has counted so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopState {
    pub version: u32,
    /// The session the loop is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Turns the bound session has finished inside the loop.
    pub iteration: u64,
    /// Consecutive finished turns without a tool call.
    pub idle_streak: u64,
    /// Tokens used by the bound session since the loop bound to it.
    pub tokens: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Cursor>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<Ended>,
}

impl LoopState {
    pub fn fresh() -> LoopState {
        LoopState {
            version: VERSION,
            ..LoopState::default()
        }
    }

    pub fn to_document(&self) -> Vec<u8> {
        to_document(self)
    }
}

fn to_document<T: Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("loop documents always serialize");
    bytes.push(b'\n');
    bytes
}

/// A loop file that exists but cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem(pub String);

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Read and validate a loop document against its schema. `Ok(None)` when it does not exist.
fn read_doc<T: serde::de::DeserializeOwned>(
    path: &Path,
    schema: &str,
) -> Result<Option<T>, Problem> {
    let bounded = match fsx::read_bounded(path, fsx::DOCUMENT_LIMIT) {
        Ok(bounded) => bounded,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Problem(format!("cannot read {}: {err}", path.display()))),
    };
    let bytes = match bounded {
        Bounded::Complete(bytes) => bytes,
        Bounded::TooLarge { limit } => {
            return Err(Problem(format!(
                "{} is larger than the {} limit",
                path.display(),
                fsx::human_size(limit)
            )));
        }
    };
    document::parse_with_schema(&bytes, schema)
        .and_then(|_| document::parse_typed(&bytes))
        .map(Some)
        .map_err(|problems| {
            Problem(format!(
                "{} is corrupt: {}{}",
                path.display(),
                problems[0],
                crate::routing::more(problems.len())
            ))
        })
}

pub fn read_config(dir: &LoopDir) -> Result<Option<LoopConfig>, Problem> {
    read_doc(&dir.config(), "loop-config")
}

pub fn read_state(dir: &LoopDir) -> Result<Option<LoopState>, Problem> {
    read_doc(&dir.state(), "loop-state")
}

pub fn write_config(dir: &LoopDir, config: &LoopConfig) -> Result<()> {
    fsx::atomic_write(&dir.config(), &config.to_document())
}

pub fn write_state(dir: &LoopDir, state: &LoopState) -> Result<()> {
    fsx::atomic_write(&dir.state(), &state.to_document())
}

/// Create `D/.autoctl` (and a `.gitignore` that keeps it out of commits).
pub fn ensure_dir(dir: &LoopDir) -> Result<()> {
    fsx::require_dir(&dir.project)?;
    match std::fs::symlink_metadata(&dir.dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            anyhow::bail!("refusing to use {}: it is a symlink", dir.dir.display())
        }
        Ok(meta) if !meta.is_dir() => {
            anyhow::bail!("{} exists and is not a directory", dir.dir.display())
        }
        Ok(_) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            std::fs::create_dir(&dir.dir)
                .with_context(|| format!("cannot create {}", dir.dir.display()))?;
        }
        Err(err) => return Err(err).with_context(|| format!("cannot stat {}", dir.dir.display())),
    }
    let ignore = dir.dir.join(".gitignore");
    if !ignore.exists() {
        fsx::atomic_write(&ignore, b"# autoctl's loop state; not for commits\n*\n")?;
    }
    Ok(())
}

/// Whether `D/.autoctl` exists as a real directory.
pub fn dir_exists(dir: &LoopDir) -> bool {
    std::fs::symlink_metadata(&dir.dir).is_ok_and(|meta| meta.is_dir())
}
