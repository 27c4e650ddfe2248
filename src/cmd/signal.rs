//! `autoctl signal validate|write|read|clear`: the `.auto-signal` progress file.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use serde::Serialize;

use crate::cmd::args::Format;
use crate::error::{Exit, Reported};
use crate::fsx;
use crate::output;
use crate::protocol::document::{self, Problem};
use crate::protocol::retry;
use crate::protocol::signal::{self, CHECKPOINTS, MAX_ITERATION, NEXTS, RESULTS, STEPS, Signal};
use crate::routing::{self, DEFAULT_TABLE, Lookup};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum SignalCommand {
    /// Validate `.auto-signal` documents against the schema and the protocol's rules
    ///
    /// Each PATH is a signal file, a task module directory (its `.auto-signal` is read) or `-`
    /// for standard input. Prints one line per document: `PATH: ok`, or `PATH: LOCATION:
    /// MESSAGE` where LOCATION is a JSON Pointer (`/step`) or LINE:COLUMN for malformed JSON.
    /// Documents over 1 MiB are reported invalid without being read whole.
    ///
    /// Exit 0 when every document is valid, 1 when any is invalid, 2 when one could not be read.
    Validate(ValidateArgs),
    /// Write `.auto-signal` into a task module, atomically
    ///
    /// `next` and `checkpoint` are computed from the routing table when omitted; the step is
    /// routed at the checkpoint recorded by the signal it replaces (the checkpoint the step ran
    /// at). The timestamp is the current time, RFC 3339 UTC.
    ///
    /// A result the table retries (a merge conflict: 3 retries, then (stop)) is counted in
    /// the module's `.auto-retry`, written before the signal and removed by the first signal
    /// that is not a retry. A result the table rejects at that checkpoint (ACCEPT from a
    /// mid-exec check) is an error naming the allowed results (pass --next to override).
    Write(WriteArgs),
    /// Print a module's `.auto-signal` (or one field of it)
    ///
    /// Exit 1 when there is no signal (or the field is not set), 2 when it is invalid.
    Read(ReadArgs),
    /// Remove a module's `.auto-signal` and `.auto-retry` (succeeds when there are none)
    Clear(DirArg),
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Signal files, task module directories, or `-` for standard input
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Also require `next` and `checkpoint` to be what the routing table gives
    #[arg(long)]
    pub strict: bool,
    /// Routing table for --strict: a built-in name or a JSON file
    #[arg(long, value_name = "NAME|FILE", default_value = DEFAULT_TABLE)]
    pub table: String,
    /// Output format (json prints one object per document, as JSON Lines)
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The task module directory
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The step that just completed
    #[arg(long, value_name = "STEP", value_parser = clap::builder::PossibleValuesParser::new(STEPS))]
    pub step: String,
    /// The step's result: one of the whitelist, or (step-N) for any step number N
    #[arg(long, value_name = "RESULT", value_parser = parse_result, allow_hyphen_values = true)]
    pub result: String,
    /// What runs next; computed from the table when omitted
    #[arg(long, value_name = "NEXT", value_parser = clap::builder::PossibleValuesParser::new(NEXTS))]
    pub next: Option<String>,
    /// The checkpoint the next step runs at ("" for none); computed when omitted
    #[arg(long, value_name = "CHECKPOINT", value_parser = parse_checkpoint)]
    pub checkpoint: Option<String>,
    /// The loop's iteration count (auto mode); omitted in manual runs
    ///
    /// At most 2^53 - 1, the largest integer every JSON reader keeps exactly (the schema's bound).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=MAX_ITERATION))]
    pub iteration: Option<u64>,
    /// Routing table used to compute next: a built-in name or a JSON file
    #[arg(long, value_name = "NAME|FILE", default_value = DEFAULT_TABLE)]
    pub table: String,
    /// How many times in a row the step gave this result [default: counted in .auto-retry]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub attempt: Option<u32>,
    /// Print the document that was written
    #[arg(long)]
    pub print: bool,
}

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The task module directory
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Print only this field's value (step, result, next, checkpoint, iteration, timestamp)
    #[arg(long, value_name = "NAME", value_parser = ["step", "result", "next", "checkpoint", "iteration", "timestamp"])]
    pub field: Option<String>,
}

#[derive(Debug, Args)]
pub struct DirArg {
    /// The task module directory
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

fn allowed(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| {
            if v.is_empty() {
                "\"\"".to_string()
            } else {
                v.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_result(value: &str) -> Result<String> {
    if signal::is_known_result(value) {
        Ok(value.to_string())
    } else {
        Err(anyhow!("allowed results: {}", allowed(RESULTS)))
    }
}

fn parse_checkpoint(value: &str) -> Result<String> {
    if CHECKPOINTS.contains(&value) {
        Ok(value.to_string())
    } else {
        Err(anyhow!("allowed checkpoints: {}", allowed(CHECKPOINTS)))
    }
}

pub fn run(command: SignalCommand) -> Result<Exit> {
    match command {
        SignalCommand::Validate(args) => validate(&args),
        SignalCommand::Write(args) => write(&args),
        SignalCommand::Read(args) => read(&args),
        SignalCommand::Clear(args) => {
            fsx::require_dir(&args.dir)?;
            fsx::remove_if_exists(&signal::path_in(&args.dir))?;
            retry::clear(&args.dir)?;
            Ok(Exit::Yes)
        }
    }
}

/// One validated document in `--format json`.
#[derive(Debug, Serialize)]
struct Report<'a> {
    path: &'a str,
    valid: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    problems: Vec<Problem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// What checking one PATH gave: the line for stdout, and the line for stderr when the
/// document could not be read at all.
struct Checked {
    out: Vec<u8>,
    error: Option<String>,
    invalid: bool,
}

fn validate(args: &ValidateArgs) -> Result<Exit> {
    let table = if args.strict {
        Some(routing::load(&args.table)?)
    } else {
        None
    };
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut any_invalid = false;
    let mut any_error = false;
    // Each file is read, parsed and checked on whichever core is free; the lines come out in
    // the order of the arguments.
    crate::parallel::map_in_order(
        &args.paths,
        |path| check_one(path, table.as_deref(), args.format),
        |checked| -> Result<()> {
            if let Some(error) = &checked.error {
                any_error = true;
                out.flush()?;
                output::error_line(error);
            }
            any_invalid |= checked.invalid;
            out.write_all(&checked.out)?;
            Ok(())
        },
    )?;
    out.flush()?;
    if any_error {
        // Some documents could not be checked at all: that is an operational failure, and it
        // outranks "invalid" so a script never mistakes "unreadable" for a verdict.
        return Err(Reported.into());
    }
    Ok(Exit::from_bool(!any_invalid))
}

/// Read, parse and check one PATH argument.
fn check_one(path: &Path, table: Option<&routing::Table>, format: Format) -> Checked {
    let (label, loaded) = load_document(path);
    let label = output::into_one_line(label);
    let mut out = Vec::new();
    let outcome = match loaded {
        Err(err) => {
            if format == Format::Json {
                let report = Report {
                    path: &label,
                    valid: false,
                    problems: Vec::new(),
                    error: Some(output::one_line(&format!("{err:#}"))),
                };
                json_line(&mut out, &report);
            }
            return Checked {
                out,
                error: Some(format!("{label}: {err:#}")),
                invalid: false,
            };
        }
        Ok(bytes) => bytes,
    };
    let checked = outcome.and_then(|bytes| match table {
        Some(table) => {
            signal::parse(&bytes).map(|parsed| routing::check::strict_problems(&parsed, table))
        }
        None => signal::check(&bytes).map(|()| Vec::new()),
    });
    let problems = checked.unwrap_or_else(|problems| problems);
    let invalid = !problems.is_empty();
    match format {
        Format::Text => {
            let _ = match problems.first() {
                None => writeln!(out, "{label}: ok"),
                Some(first) => writeln!(
                    out,
                    "{label}: {}{}",
                    output::one_line(&first.to_string()),
                    routing::more(problems.len())
                ),
            };
        }
        Format::Json => {
            let report = Report {
                path: &label,
                valid: problems.is_empty(),
                problems,
                error: None,
            };
            json_line(&mut out, &report);
        }
    }
    Checked {
        out,
        error: None,
        invalid,
    }
}

/// One JSON Lines record (writing into memory cannot fail, and a report always serializes).
fn json_line(out: &mut Vec<u8>, report: &Report) {
    serde_json::to_writer(&mut *out, report).expect("a report serializes");
    out.push(b'\n');
}

type Loaded = std::result::Result<Vec<u8>, Vec<Problem>>;

/// Read one PATH argument: a file, a module dir, or `-`. The outer error is an I/O failure;
/// the inner one a document that is invalid before parsing (too large).
fn load_document(path: &Path) -> (String, Result<Loaded>) {
    if path.as_os_str() == "-" {
        let bounded = fsx::read_bounded_from(io::stdin().lock(), fsx::DOCUMENT_LIMIT)
            .context("cannot read standard input");
        return (
            "-".to_string(),
            bounded
                .map(document::bounded_bytes)
                .map(|r| r.map_err(|p| vec![p])),
        );
    }
    // A file is read straight away (one open, no stat before it); a directory is a task
    // module, read through its signal file.
    let mut file = std::borrow::Cow::Borrowed(path);
    let mut bounded = fsx::read_bounded(&file, fsx::DOCUMENT_LIMIT);
    let is_module = match &bounded {
        Err(err) if err.kind() == io::ErrorKind::IsADirectory => true,
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => path.is_dir(),
        _ => false,
    };
    if is_module {
        file = std::borrow::Cow::Owned(signal::path_in(path));
        bounded = fsx::read_bounded(&file, fsx::DOCUMENT_LIMIT);
    }
    let label = file.display().to_string();
    let bounded = bounded.map_err(|err| {
        if err.kind() == io::ErrorKind::NotFound && is_module {
            anyhow!("no {} in {}", signal::FILE_NAME, path.display())
        } else {
            anyhow::Error::new(err).context("cannot read")
        }
    });
    (
        label,
        bounded
            .map(document::bounded_bytes)
            .map(|r| r.map_err(|p| vec![p])),
    )
}

fn write(args: &WriteArgs) -> Result<Exit> {
    fsx::require_dir(&args.dir)?;
    let table = routing::load(&args.table)?;
    // The checkpoint the finished step ran at is the one the previous signal announced.
    let ran_at = match signal::read(&args.dir)? {
        signal::Read::Valid(previous) => previous.checkpoint_or_empty().to_string(),
        _ => String::new(),
    };
    let family = signal::result_family(&args.result);
    let attempt = match args.attempt {
        Some(attempt) => attempt,
        None => retry::next_attempt(retry::read(&args.dir)?.as_ref(), &args.step, family),
    };
    let routed = table.route_attempt(&args.step, &args.result, &ran_at, attempt);
    let (next, checkpoint, retried) = match (&args.next, routed) {
        (Some(next), Lookup::Next(decision)) if &decision.next == next => (
            next.clone(),
            args.checkpoint.clone().unwrap_or(decision.checkpoint),
            decision.retry,
        ),
        (Some(next), _) => (
            next.clone(),
            args.checkpoint.clone().unwrap_or_default(),
            None,
        ),
        (None, Lookup::Next(decision)) => (
            decision.next,
            args.checkpoint.clone().unwrap_or(decision.checkpoint),
            decision.retry,
        ),
        (None, Lookup::Rejected { reason } | Lookup::Unknown { reason }) => bail!(
            "cannot compute next for step {} result {}{} with table {}: {reason} (pass --next)",
            args.step,
            args.result,
            if ran_at.is_empty() {
                String::new()
            } else {
                format!(" at {ran_at}")
            },
            table.name
        ),
    };
    let timestamp = signal::now_timestamp(crate::time::now()?);
    // The counter before the signal: a crash between the two spends a retry, it never
    // grants an extra one.
    match retried {
        Some(retried) => retry::write(
            &args.dir,
            &retry::RetryCount {
                step: args.step.clone(),
                result: family.to_string(),
                attempt: retried.attempt,
                timestamp: timestamp.clone(),
            },
        )?,
        None => {
            retry::clear(&args.dir)?;
        }
    }
    let doc = Signal {
        step: args.step.clone(),
        result: args.result.clone(),
        next,
        checkpoint: Some(checkpoint),
        iteration: args.iteration,
        timestamp,
    };
    signal::write(&args.dir, &doc)?;
    if args.print {
        output::raw(&doc.to_document())?;
    }
    Ok(Exit::Yes)
}

fn read(args: &ReadArgs) -> Result<Exit> {
    fsx::require_dir(&args.dir)?;
    let doc = match signal::read(&args.dir)? {
        signal::Read::Missing => {
            output::warn(&format!(
                "no {} in {}",
                signal::FILE_NAME,
                args.dir.display()
            ));
            return Ok(Exit::No);
        }
        signal::Read::Invalid(problems) => bail!(
            "{} is invalid: {}{}",
            signal::path_in(&args.dir).display(),
            problems[0],
            routing::more(problems.len())
        ),
        signal::Read::Valid(doc) => doc,
    };
    let value = match args.field.as_deref() {
        None => {
            output::raw(&doc.to_document())?;
            return Ok(Exit::Yes);
        }
        Some("step") => Some(doc.step),
        Some("result") => Some(doc.result),
        Some("next") => Some(doc.next),
        Some("checkpoint") => doc.checkpoint,
        Some("iteration") => doc.iteration.map(|i| i.to_string()),
        Some("timestamp") => Some(doc.timestamp),
        Some(other) => bail!("unknown field {other}"),
    };
    match value {
        Some(value) => {
            output::line(value)?;
            Ok(Exit::Yes)
        }
        None => {
            output::warn(&format!(
                "{} has no {}",
                signal::path_in(&args.dir).display(),
                args.field.as_deref().unwrap_or_default()
            ));
            Ok(Exit::No)
        }
    }
}
