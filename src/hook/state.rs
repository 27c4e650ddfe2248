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
pub const DEFAULT_TEMPLATE: &str = crate::routing::command::AGENT_TEMPLATE;

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
    /// Context compactions allowed within one iteration (seed 002: 3; 0 = no limit).
    #[serde(default = "default_max_compactions")]
    pub max_compactions: u32,
}

fn default_max_compactions() -> u32 {
    crate::taskai::compaction::DEFAULT_MAX_COMPACTIONS
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
    /// done, max-iterations, budget-exhausted, idle, block-cap, compaction-limit,
    /// overridden, task-stopped, teardown, replaced.
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
    /// Tokens of the last turn's final message estimated at the last Stop because the
    /// transcript did not show it yet (a lower bound; counted for real at the next Stop).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tokens_pending: u64,
    /// Consecutive Stops this loop blocked as Claude Code counts them (reset by a turn that
    /// ran a tool): Claude Code overrides the block after `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stop_blocks: u64,
    /// Context compactions in the current iteration.
    #[serde(default, skip_serializing_if = "is_default")]
    pub compactions: crate::taskai::compaction::CompactionCount,
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

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
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

/// A field of a loop document that its type accepts but the loop cannot use: printed as the
/// field's JSON pointer and why (`/stale: "0s" is zero; ...`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("/{field}: {why}")]
struct FieldError {
    field: &'static str,
    why: String,
}

fn field_error(field: &'static str, why: impl std::fmt::Display) -> FieldError {
    FieldError {
        field,
        why: why.to_string(),
    }
}

/// A loop document that can check what its type cannot express.
trait Checked {
    fn check(&self) -> Result<(), FieldError>;
}

fn rfc3339(field: &'static str, value: &str) -> Result<(), FieldError> {
    chrono::DateTime::parse_from_rfc3339(value)
        .map(|_| ())
        .map_err(|err| {
            field_error(
                field,
                format!("{value:?} is not an RFC 3339 timestamp: {err}"),
            )
        })
}

impl Checked for LoopConfig {
    fn check(&self) -> Result<(), FieldError> {
        if self.version != VERSION {
            return Err(field_error(
                "version",
                format!("{} is not {VERSION}", self.version),
            ));
        }
        rfc3339("created_at", &self.created_at)?;
        if self.session.as_deref().is_some_and(|s| s.trim().is_empty()) {
            return Err(field_error("session", "empty"));
        }
        if self.max_iterations == 0 {
            return Err(field_error("max_iterations", "must be at least 1"));
        }
        if self.budget == Some(0) {
            return Err(field_error("budget", "must be at least 1"));
        }
        super::sentinel::validate(&self.sentinel).map_err(|e| field_error("sentinel", e))?;
        crate::duration::parse_positive(&self.stale).map_err(|e| field_error("stale", e))?;
        crate::duration::parse(&self.transcript_wait)
            .map_err(|e| field_error("transcript_wait", e))?;
        let empty = match &self.prompt {
            PromptSource::Text(text) => text.is_empty(),
            PromptSource::File(path) => path.as_os_str().is_empty(),
            PromptSource::Task {
                dir,
                table,
                template,
            } => dir.as_os_str().is_empty() || table.is_empty() || template.is_empty(),
        };
        if empty {
            return Err(field_error("prompt", "empty"));
        }
        Ok(())
    }
}

impl Checked for LoopState {
    fn check(&self) -> Result<(), FieldError> {
        if self.version != VERSION {
            return Err(field_error(
                "version",
                format!("{} is not {VERSION}", self.version),
            ));
        }
        if self.session_id.as_deref().is_some_and(|s| s.is_empty()) {
            return Err(field_error("session_id", "empty"));
        }
        for (field, value) in [
            ("started_at", &self.started_at),
            ("updated_at", &self.updated_at),
        ] {
            if let Some(value) = value {
                rfc3339(field, value)?;
            }
        }
        if let Some(ended) = &self.ended {
            rfc3339("ended/at", &ended.at)?;
        }
        Ok(())
    }
}

/// Read a loop document. `Ok(None)` when it does not exist.
///
/// These files are read on every Stop, so they are checked by their strict types (unknown
/// fields, wrong types and out-of-range numbers are errors) plus [`Checked`], not by
/// compiling their JSON Schema, which costs more than the rest of a hook call; the schemas
/// (`autoctl schema show loop-config|loop-state`) are tested to accept exactly what the types
/// write.
fn read_doc<T: serde::de::DeserializeOwned + Checked>(path: &Path) -> Result<Option<T>, Problem> {
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
    let corrupt =
        |why: &dyn std::fmt::Display| Problem(format!("{} is corrupt: {why}", path.display()));
    let doc: T = document::parse_typed(&bytes).map_err(|problems| corrupt(&problems[0]))?;
    doc.check().map_err(|err| corrupt(&err))?;
    Ok(Some(doc))
}

pub fn read_config(dir: &LoopDir) -> Result<Option<LoopConfig>, Problem> {
    read_doc(&dir.config())
}

pub fn read_state(dir: &LoopDir) -> Result<Option<LoopState>, Problem> {
    read_doc(&dir.state())
}

pub fn write_config(dir: &LoopDir, config: &LoopConfig) -> Result<()> {
    fsx::atomic_write(&dir.config(), &config.to_document())
}

/// The state is rewritten at every Stop: atomic, not fsynced (losing the last update to a
/// power failure costs one iteration of counting).
pub fn write_state(dir: &LoopDir, state: &LoopState) -> Result<()> {
    fsx::atomic_write_volatile(&dir.state(), &state.to_document())
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn config() -> LoopConfig {
        LoopConfig {
            version: VERSION,
            created_at: "2026-11-25T10:00:00Z".to_string(),
            session: Some("s".to_string()),
            max_iterations: 60,
            budget: Some(1000),
            max_idle: 6,
            sentinel: super::super::sentinel::DEFAULT.to_string(),
            prompt: PromptSource::Task {
                dir: PathBuf::from("/p/TASK/x"),
                table: "ai-cli-task".to_string(),
                template: DEFAULT_TEMPLATE.to_string(),
            },
            stale: "5m".to_string(),
            transcript_wait: "1s".to_string(),
            max_compactions: 3,
        }
    }

    fn state() -> LoopState {
        LoopState {
            session_id: Some("s".to_string()),
            iteration: 3,
            idle_streak: 1,
            tokens: Usage {
                input: 1,
                output: 2,
                cache_creation: 3,
                cache_read: 4,
            },
            transcript: Some(Cursor {
                path: "/t.jsonl".to_string(),
                dev: 1,
                ino: 2,
                offset: 3,
                last_message_id: Some("m".to_string()),
                last_message_usage: Usage::default(),
            }),
            tokens_pending: 5,
            stop_blocks: 2,
            compactions: crate::taskai::compaction::CompactionCount {
                iteration: 3,
                count: 1,
            },
            started_at: Some("2026-11-25T10:00:00Z".to_string()),
            updated_at: Some("2026-11-25T10:05:00Z".to_string()),
            ended: Some(Ended {
                outcome: "done".to_string(),
                at: "2026-11-25T10:05:00Z".to_string(),
                message: "m".to_string(),
            }),
            ..LoopState::fresh()
        }
    }

    fn typed_ok<T: serde::de::DeserializeOwned + Checked>(doc: &Value) -> bool {
        serde_json::from_value::<T>(doc.clone()).is_ok_and(|t| t.check().is_ok())
    }

    /// What the types write, the schemas accept; what the schemas reject, the types reject.
    #[test]
    fn types_and_schemas_agree() {
        let mut configs = vec![serde_json::to_value(config()).unwrap()];
        for prompt in [json!({"text": "go"}), json!({"file": "/p/prompt.md"})] {
            let mut doc = configs[0].clone();
            doc["prompt"] = prompt;
            configs.push(doc);
        }
        for doc in &configs {
            assert!(
                crate::schema::violations("loop-config", doc).is_empty(),
                "{doc}"
            );
            assert!(typed_ok::<LoopConfig>(doc), "{doc}");
        }
        let states = [
            serde_json::to_value(state()).unwrap(),
            serde_json::to_value(LoopState::fresh()).unwrap(),
        ];
        for doc in &states {
            assert!(
                crate::schema::violations("loop-state", doc).is_empty(),
                "{doc}"
            );
            assert!(typed_ok::<LoopState>(doc), "{doc}");
        }
        let bad_configs = [
            ("/version", json!(2)),
            ("/max_iterations", json!(0)),
            ("/budget", json!(0)),
            ("/sentinel", json!("a\nb")),
            ("/stale", json!("5")),
            ("/prompt", json!({"text": "a", "file": "b"})),
            ("/created_at", json!("yesterday")),
            ("/extra", json!(1)),
        ];
        for (pointer, value) in bad_configs {
            let mut doc = configs[0].clone();
            doc[&pointer[1..]] = value;
            assert!(
                !crate::schema::violations("loop-config", &doc).is_empty(),
                "{pointer}"
            );
            assert!(!typed_ok::<LoopConfig>(&doc), "{pointer}");
        }
        let bad_states = [
            ("/iteration", json!(-1)),
            ("/tokens", json!({"input": -1})),
            ("/session_id", json!("")),
            ("/updated_at", json!("soon")),
            ("/mood", json!("great")),
        ];
        for (pointer, value) in bad_states {
            let mut doc = states[0].clone();
            doc[&pointer[1..]] = value;
            assert!(
                !crate::schema::violations("loop-state", &doc).is_empty(),
                "{pointer}"
            );
            assert!(!typed_ok::<LoopState>(&doc), "{pointer}");
        }
    }
}
