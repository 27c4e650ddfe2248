//! `autoctl converge`: task-ai's convergence gate and next stage decision.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::fsx::{self, FileLock};
use crate::output;
use crate::protocol::document;
use crate::protocol::signal::now_timestamp;
use crate::taskai::converge::{self, ConvergeInput, HISTORY_VERSION, History};
use crate::taskai::score::Score;

/// Accept or roll back a stage by its convergence (ACCEPT, SATISFIED, ROLLBACK)
///
/// ACCEPT when convergence rises above the previous stage's (then generate the next
/// sub-stage target), SATISFIED when it rises to the satisfaction bar or above (final
/// report), ROLLBACK when it does not rise (exclude this direction and regenerate). With
/// --history the exclusion list of failed directions is kept in FILE (created if missing,
/// updated atomically under a lock), --previous defaults to the last accepted convergence,
/// and with --max-rollbacks the answer is EXHAUSTED once that many directions are excluded
/// (stop and report to the user).
///
/// Exit 0 when the stage is accepted (ACCEPT, SATISFIED), 1 otherwise.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ConvergeArgs {
    /// The previous stage's convergence (0–1)
    #[arg(long, value_name = "SCORE", value_parser = Score::parse)]
    pub previous: Option<Score>,
    /// This stage's convergence (0–1)
    #[arg(long, value_name = "SCORE", value_parser = Score::parse)]
    pub current: Score,
    /// The satisfaction bar: at or above it an accepted stage ends the task
    #[arg(long, value_name = "SCORE", value_parser = Score::parse, default_value = "0.95")]
    pub satisfied: Score,
    /// Keep the exclusion list and the last accepted convergence in FILE
    ///
    /// Rewritten atomically under a lock on FILE.lock; a symlink is refused (exit 2).
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// What this stage tried, recorded on the exclusion list when it is rolled back
    #[arg(long, value_name = "TEXT", requires = "history")]
    pub direction: Option<String>,
    /// Answer EXHAUSTED once this many directions are excluded
    #[arg(long, value_name = "N", requires = "history", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub max_rollbacks: Option<u64>,
    /// Output format (json: the whole decision, with the reason)
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

fn read_history(path: &std::path::Path) -> Result<Option<History>> {
    let Some(bytes) = fsx::read_document(path, "a history")? else {
        return Ok(None);
    };
    let problem = |p: document::Problem| anyhow::anyhow!("{}: {p}", path.display());
    let value = document::parse_json(&bytes).map_err(problem)?;
    if let Some(v) = value
        .get("schema_version")
        .filter(|v| v.as_str() != Some(HISTORY_VERSION))
    {
        bail!(
            "{}: schema version {v}; this autoctl reads {HISTORY_VERSION:?}",
            path.display()
        );
    }
    document::check_schema(&value, "converge-history").map_err(|mut ps| problem(ps.remove(0)))?;
    document::typed_from_value(&value)
        .map(Some)
        .map_err(|mut ps| problem(ps.remove(0)))
}

pub fn run(args: &ConvergeArgs) -> Result<Exit> {
    if let Some(direction) = &args.direction
        && (direction.trim().is_empty() || direction.chars().count() > 4096)
    {
        bail!("--direction is empty or longer than 4096 characters");
    }
    let now = now_timestamp(crate::time::now()?);
    let _lock = match &args.history {
        Some(path) => {
            fsx::refuse_symlink(path, "history", "--history")?;
            let lock = FileLock::acquire(&fsx::side_lock_path(path))?;
            // Again under the lock: the file may have been swapped while we waited.
            fsx::refuse_symlink(path, "history", "--history")?;
            Some(lock)
        }
        None => None,
    };
    let history = match &args.history {
        Some(path) => Some(read_history(path)?.unwrap_or_else(|| History::new(&now))),
        None => None,
    };
    let previous = match (
        args.previous,
        history.as_ref().and_then(|h| h.last_accepted),
    ) {
        (Some(previous), _) => previous,
        (None, Some(last)) => last.0,
        (None, None) => bail!(
            "--previous is required{}",
            if args.history.is_some() {
                " (the history has no accepted stage yet)"
            } else {
                ""
            }
        ),
    };
    let (decision, updated) = converge::decide(
        &ConvergeInput {
            previous,
            current: args.current,
            satisfied: args.satisfied,
            direction: args.direction.clone(),
            max_rollbacks: args.max_rollbacks.map(|n| n as usize),
        },
        history.as_ref(),
        &now,
    );
    if let (Some(path), Some(history)) = (&args.history, updated) {
        let mut bytes = serde_json::to_vec_pretty(&history).expect("a history serializes");
        bytes.push(b'\n');
        fsx::atomic_write(path, &bytes)?;
    }
    if decision.repeated_direction {
        output::warn(&format!(
            "direction {:?} was already excluded by an earlier rollback",
            args.direction.as_deref().unwrap_or_default()
        ));
    }
    match args.format {
        Format::Json => output::json_line(&decision)?,
        Format::Text => output::line(decision.verdict.name())?,
    }
    Ok(Exit::from_bool(decision.accepted))
}
