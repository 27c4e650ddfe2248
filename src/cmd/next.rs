//! `autoctl next`: the step a loop runs next — after a step's result, on entry for a task
//! status, or to resume a module from its files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::Serialize;

use crate::cli::Format;
use crate::error::Verdict;
use crate::fsx::{self, Bounded};
use crate::output;
use crate::protocol::signal::{self, STOP};
use crate::protocol::{index, target};
use crate::routing::{self, DEFAULT_TABLE, Decision, Lookup, Table, command};

/// Print the step a loop runs next
///
/// Three questions, one answer:
///   --step S --result R [--checkpoint C]   after step S (run at checkpoint C) gave R
///   --status S [--phase P] [--task DIR]    the entry step for a task in status S
///   --task DIR                             where a module resumes: its `.auto-signal`
///                                          (next step, iteration + 1), else its status
///
/// Text output is the step name alone, followed by a TAB and the checkpoint when there is
/// one, so `$(autoctl next ...)` works. `(stop)` is a normal answer (exit 0). A draft task
/// enters `plan` only when `.target.md` has substantive content (at least three words that
/// are not headings, comments or placeholders such as {..}, <..>, [..], TODO); otherwise the
/// answer is `(stop)` with the reason on stderr.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct NextArgs {
    /// The step that just completed
    #[arg(
        long,
        value_name = "STEP",
        requires = "result",
        conflicts_with = "status"
    )]
    pub step: Option<String>,
    /// The step's result
    #[arg(
        long,
        value_name = "RESULT",
        requires = "step",
        allow_hyphen_values = true
    )]
    pub result: Option<String>,
    /// The checkpoint the step ran at (post-plan, mid-exec, post-exec)
    #[arg(long, value_name = "CHECKPOINT", requires = "step")]
    pub checkpoint: Option<String>,
    /// A task status (draft, planning, review, executing, re-planning, complete, ...)
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// The task's phase, for statuses that branch on it (re-planning: needs-plan, needs-check)
    #[arg(long, value_name = "PHASE", requires = "status")]
    pub phase: Option<String>,
    /// The task module directory
    #[arg(long, value_name = "DIR")]
    pub task: Option<PathBuf>,
    /// Routing table: a built-in name or a JSON file
    #[arg(long, value_name = "NAME|FILE", default_value = DEFAULT_TABLE)]
    pub table: String,
    /// Print the command a daemon would type for the next step, from TEMPLATE
    ///
    /// Placeholders: {next}, {checkpoint}, {task}, {iteration}. A value may only hold
    /// letters, digits and `. _ - / : @ % + , =` and may not start with `-` (no shell
    /// metacharacters, no spaces); the template may not contain `!`. When the answer is (stop)
    /// nothing is printed and the exit code is 1 (there is no command to send).
    #[arg(long, value_name = "TEMPLATE")]
    pub command: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// The answer, as `--format json` prints it.
#[derive(Debug, Serialize)]
pub(crate) struct Answer {
    pub(crate) next: String,
    pub(crate) checkpoint: String,
    pub(crate) rationale: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) iteration: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<String>,
}

impl Answer {
    fn from_decision(decision: Decision) -> Answer {
        Answer {
            next: decision.next,
            checkpoint: decision.checkpoint,
            rationale: decision.rationale,
            iteration: None,
            phase: None,
        }
    }

    fn stop(rationale: String) -> Answer {
        Answer {
            next: STOP.to_string(),
            checkpoint: String::new(),
            rationale,
            iteration: None,
            phase: None,
        }
    }
}

pub fn run(args: &NextArgs) -> Result<Verdict> {
    let table = routing::load(&args.table)?;
    let answer = if let (Some(step), Some(result)) = (&args.step, &args.result) {
        after_step(
            &table,
            step,
            result,
            args.checkpoint.as_deref().unwrap_or(""),
        )?
    } else if let Some(status) = &args.status {
        on_entry(
            &table,
            status,
            args.phase.as_deref().unwrap_or(""),
            args.task.as_deref(),
        )?
    } else if let Some(task) = &args.task {
        resume(&table, task)?
    } else {
        bail!("say what to route: --step S --result R, --status S, or --task DIR");
    };
    print(args, answer)
}

fn require_in(kind: &str, value: &str, allowed: &[String], table: &Table) -> Result<()> {
    if allowed.iter().any(|a| a == value) {
        return Ok(());
    }
    let shown: Vec<String> = allowed
        .iter()
        .map(|a| {
            if a.is_empty() {
                "\"\"".to_string()
            } else {
                a.clone()
            }
        })
        .collect();
    bail!(
        "unknown {kind} {value:?} for table {} (allowed: {})",
        table.name,
        shown.join(", ")
    )
}

fn after_step(table: &Table, step: &str, result: &str, checkpoint: &str) -> Result<Answer> {
    require_in("step", step, &table.steps, table)?;
    require_in(
        "result",
        signal::result_family(result),
        &table.results,
        table,
    )?;
    require_in("checkpoint", checkpoint, &table.checkpoints, table)?;
    match table.route(step, result, checkpoint) {
        Lookup::Next(decision) => Ok(Answer::from_decision(decision)),
        Lookup::Rejected { reason } => {
            bail!(
                "{step} {result} is not a valid outcome in table {}: {reason}",
                table.name
            )
        }
        Lookup::Unknown { reason } => bail!("{reason}"),
    }
}

fn on_entry(table: &Table, status: &str, phase: &str, task: Option<&Path>) -> Result<Answer> {
    let Some(entry) = table.entry(status, phase) else {
        bail!(
            "unknown status {status:?} for table {} (allowed: {})",
            table.name,
            table.status_names().join(", ")
        );
    };
    let mut answer = Answer {
        next: entry.next.clone(),
        checkpoint: entry.checkpoint.clone(),
        rationale: entry.rationale.clone(),
        iteration: None,
        phase: entry.derived_phase.clone(),
    };
    if entry.requires_target {
        match task {
            Some(dir) => {
                let words = target_words(dir)?;
                if words < target::MIN_WORDS {
                    let reason = format!(
                        "fill {} first: it has no substantive content (only template or placeholders)",
                        dir.join(target::FILE_NAME).display()
                    );
                    output::warn(&reason);
                    answer = Answer::stop(reason);
                }
            }
            None => output::warn(&format!(
                "status {status} plans only when .target.md has substantive content; pass --task DIR to check it"
            )),
        }
    }
    Ok(answer)
}

fn target_words(dir: &Path) -> Result<usize> {
    fsx::require_dir(dir)?;
    let path = dir.join(target::FILE_NAME);
    let bytes = match fsx::read_bounded(&path, fsx::DOCUMENT_LIMIT) {
        Ok(Bounded::Complete(bytes)) => bytes,
        // A target this large is certainly not an empty template.
        Ok(Bounded::TooLarge { .. }) => return Ok(usize::MAX),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    Ok(target::substantive_words(&String::from_utf8_lossy(&bytes)))
}

/// Where a module resumes, as (next, checkpoint): what `autoctl next --task DIR` prints. The
/// dispatch-mode tick asks it for a loop's first step.
pub fn resume_step(table: &Table, dir: &Path) -> Result<(String, String)> {
    resume(table, dir).map(|answer| (answer.next, answer.checkpoint))
}

/// Where a module resumes (also the entry point of `hook stop --task` loops).
pub(crate) fn resume(table: &Table, dir: &Path) -> Result<Answer> {
    fsx::require_dir(dir)?;
    match signal::read(dir)? {
        signal::Read::Valid(doc) => {
            let rationale = format!(
                "resume from {}: {} {} -> {}",
                signal::FILE_NAME,
                doc.step,
                doc.result,
                doc.next
            );
            Ok(Answer {
                checkpoint: doc.checkpoint_or_empty().to_string(),
                next: doc.next,
                rationale,
                iteration: Some(doc.iteration.map_or(0, |i| i.saturating_add(1))),
                phase: None,
            })
        }
        signal::Read::Invalid(problems) => bail!(
            "{} is invalid, so the resume point is unknown: {}{} (fix or clear it)",
            signal::path_in(dir).display(),
            problems[0],
            routing::more(problems.len())
        ),
        signal::Read::Missing => {
            let lifecycle = lifecycle_of(table, dir)?;
            let mut answer = on_entry(table, &lifecycle.status, &lifecycle.phase, Some(dir))?;
            answer.iteration = Some(0);
            Ok(answer)
        }
    }
}

/// A module's status: `.status.json` for task-ai style tables when present, else `.index.md`.
fn lifecycle_of(table: &Table, dir: &Path) -> Result<index::Lifecycle> {
    let status_json = dir.join(".status.json");
    if table.name == "task-ai" && status_json.exists() {
        let bytes = match fsx::read_bounded(&status_json, fsx::DOCUMENT_LIMIT)
            .with_context(|| format!("cannot read {}", status_json.display()))?
        {
            Bounded::Complete(bytes) => bytes,
            Bounded::TooLarge { limit } => bail!(
                "{}: larger than the {} limit",
                status_json.display(),
                fsx::human_size(limit)
            ),
        };
        let value = crate::protocol::document::parse_json(&bytes)
            .map_err(|problem| anyhow::anyhow!("{}: {problem}", status_json.display()))?;
        let status = value
            .get("status")
            .and_then(|s| s.as_str())
            .with_context(|| format!("{}: no status field", status_json.display()))?;
        return Ok(index::Lifecycle {
            status: status.to_string(),
            phase: String::new(),
        });
    }
    index::read_lifecycle(dir)
}

fn print(args: &NextArgs, answer: Answer) -> Result<Verdict> {
    if let Some(template) = &args.command {
        if answer.next == STOP {
            output::warn(&format!(
                "the loop stops ({}): no command to send",
                answer.rationale
            ));
            return Ok(Verdict::No);
        }
        let mut vars = BTreeMap::from([
            ("next", answer.next.clone()),
            ("checkpoint", answer.checkpoint.clone()),
        ]);
        if let Some(task) = &args.task {
            vars.insert("task", task.display().to_string());
        }
        if let Some(iteration) = answer.iteration {
            vars.insert("iteration", iteration.to_string());
        }
        output::line(command::render(template, &vars)?)?;
        return Ok(Verdict::Yes);
    }
    match args.format {
        Format::Json => output::json_line(&answer)?,
        Format::Text if answer.checkpoint.is_empty() => output::line(&answer.next)?,
        Format::Text => output::line(format_args!("{}\t{}", answer.next, answer.checkpoint))?,
    }
    Ok(Verdict::Yes)
}
