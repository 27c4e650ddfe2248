//! `autoctl next`: the step a loop runs next — after a step's result, on entry for a task
//! status, or to resume a module from its files.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::output;
use crate::protocol::signal::{self, STOP};
use crate::routing::resume::{self, Entry};
use crate::routing::{self, DEFAULT_TABLE, Lookup, Table, command};

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
    /// How many times in a row the step gave this result (1 = the first time)
    ///
    /// Counts against a table's retry limit: a merge conflict goes back to merge at attempts
    /// 1 to 3 and to (stop) at attempt 4.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "step",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub attempt: u32,
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
    /// Placeholders: {next}, {checkpoint}, {task}, {iteration}, and {args}, the step's
    /// ai-cli-task arguments (`--checkpoint post-exec`, `--generate` for a plan). A value may
    /// only hold letters, digits and `. _ - / : @ % + , =` and may not start with `-` (no
    /// shell metacharacters, no spaces); the template may not contain `!`. When the answer is (stop)
    /// nothing is printed and the exit code is 1 (there is no command to send).
    #[arg(long, value_name = "TEMPLATE")]
    pub command: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

pub fn run(args: &NextArgs) -> Result<Exit> {
    let table = routing::load(&args.table)?;
    let answer = if let (Some(step), Some(result)) = (&args.step, &args.result) {
        after_step(
            &table,
            step,
            result,
            args.checkpoint.as_deref().unwrap_or(""),
            args.attempt,
        )?
    } else if let Some(status) = &args.status {
        if let Some(phase) = args.phase.as_deref().filter(|p| !p.is_empty()) {
            check_phase(&table, status, phase)?;
        }
        resume::on_entry(
            &table,
            status,
            args.phase.as_deref().unwrap_or(""),
            args.task.as_deref(),
        )?
    } else if let Some(task) = &args.task {
        resume::resume(&table, task)?
    } else {
        bail!("say what to route: --step S --result R, --status S, or --task DIR");
    };
    print(args, answer)
}

fn require_in(kind: &str, value: &str, allowed: &[routing::Text], table: &Table) -> Result<()> {
    if allowed.iter().any(|a| a == value) {
        return Ok(());
    }
    let shown: Vec<String> = allowed
        .iter()
        .map(|a| {
            if a.is_empty() {
                "\"\"".to_string()
            } else {
                a.to_string()
            }
        })
        .collect();
    bail!(
        "unknown {kind} {value:?} for table {} (allowed: {})",
        table.name,
        shown.join(", ")
    )
}

fn after_step(
    table: &Table,
    step: &str,
    result: &str,
    checkpoint: &str,
    attempt: u32,
) -> Result<Entry> {
    require_in("step", step, &table.steps, table)?;
    require_in(
        "result",
        signal::result_family(result),
        &table.results,
        table,
    )?;
    require_in("checkpoint", checkpoint, &table.checkpoints, table)?;
    match table.route_attempt(step, result, checkpoint, attempt) {
        Lookup::Next(decision) => Ok(Entry {
            next: decision.next,
            checkpoint: decision.checkpoint,
            rationale: decision.rationale,
            iteration: None,
            phase: None,
            warning: None,
        }),
        Lookup::Rejected { reason } => {
            let at = if checkpoint.is_empty() {
                String::new()
            } else {
                format!(" at {checkpoint}")
            };
            bail!(
                "{step} {result}{at} is not a valid outcome in table {}: {reason}",
                table.name
            )
        }
        Lookup::Unknown { reason } => bail!("{reason}"),
    }
}

fn print(args: &NextArgs, answer: Entry) -> Result<Exit> {
    if let Some(warning) = &answer.warning {
        output::warn(warning);
    }
    if let Some(template) = &args.command {
        if answer.next == STOP {
            output::warn(&format!(
                "the loop stops ({}): no command to send",
                answer.rationale
            ));
            return Ok(Exit::No);
        }
        let task = args.task.as_ref().map(|t| t.display().to_string());
        let annotations = args.task.as_deref().is_some_and(command::has_annotations);
        let vars = command::step_vars(
            &answer.next,
            &answer.checkpoint,
            task.as_deref(),
            answer.iteration,
            annotations,
        );
        output::line(command::render(template, &vars)?)?;
        return Ok(Exit::Yes);
    }
    match args.format {
        Format::Json => output::json_line(&answer)?,
        Format::Text if answer.checkpoint.is_empty() => output::line(&answer.next)?,
        Format::Text => output::line(format_args!("{}\t{}", answer.next, answer.checkpoint))?,
    }
    Ok(Exit::Yes)
}

/// An explicit `--phase` must be one the status branches on: a typo would otherwise fall
/// through to the status's default entry and route silently.
fn check_phase(table: &routing::Table, status: &str, phase: &str) -> Result<()> {
    let phases = table.phases_of(status);
    // An unknown status is reported as such, by the routing below.
    if phases.contains(&phase) || !table.status_names().contains(&status) {
        return Ok(());
    }
    if phases.is_empty() {
        bail!(
            "--phase {phase:?}: status {status:?} does not branch on a phase in table {}",
            table.name
        );
    }
    bail!(
        "unknown --phase {phase:?} for status {status:?} (allowed: {})",
        phases.join(", ")
    );
}
