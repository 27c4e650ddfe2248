//! `autoctl plan validate`: the tier-3 recovery-plan guard.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde::Serialize;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::fsx::{self, Bounded};
use crate::output;
use crate::protocol::document;
use crate::wholework::plan::{self, PROTECTED, PlanProblem};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum PlanCommand {
    /// Check a recovery plan before running it
    ///
    /// A plan is a JSON object with exactly `action` (retry, skip, recover, abort),
    /// `rationale` (non-empty) and `steps` (at most 5 command strings or objects). No step may
    /// force push, `git reset --hard`, close an issue, merge a PR or push to main — also when
    /// disguised (quoting, extra spaces, `-f`/`--force`/`+refspec`, `HEAD:main`, `bash -c`,
    /// git aliases, variables that cannot be resolved). Plans over 1 MiB are refused unread.
    ///
    /// Prints `PATH: ok`, or `PATH: POINTER: REASON` per problem. Exit 0 when every plan may
    /// run, 1 when any is refused, 2 when one could not be read.
    #[command(verbatim_doc_comment)]
    Validate(ValidateArgs),
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Plan files, or `-` for standard input
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Branches no step may push to (repeatable, or comma separated; replaces main, master)
    #[arg(long, value_name = "BRANCH", value_delimiter = ',')]
    pub protected: Vec<String>,
    /// Output format (json: one object per plan, as JSON Lines)
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Serialize)]
struct Report<'a> {
    path: &'a str,
    valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    action: Option<String>,
    problems: Vec<PlanProblem>,
}

pub fn run(command: PlanCommand) -> Result<Exit> {
    match command {
        PlanCommand::Validate(args) => validate(&args),
    }
}

fn load(path: &std::path::Path) -> Result<Bounded> {
    if path.as_os_str() == "-" {
        fsx::read_bounded_from(io::stdin().lock(), fsx::DOCUMENT_LIMIT)
            .context("cannot read standard input")
    } else {
        fsx::read_bounded(path, fsx::DOCUMENT_LIMIT)
            .with_context(|| format!("cannot read {}", path.display()))
    }
}

fn validate(args: &ValidateArgs) -> Result<Exit> {
    let protected: Vec<String> = if args.protected.is_empty() {
        PROTECTED.iter().map(|s| s.to_string()).collect()
    } else {
        args.protected.clone()
    };
    // Read everything first: an unreadable file is an operational failure (exit 2), and
    // nothing is printed for the others in that case.
    let mut loaded = Vec::with_capacity(args.files.len());
    for path in &args.files {
        loaded.push((output::one_line(&path.display().to_string()), load(path)?));
    }
    let mut out = BufWriter::new(io::stdout().lock());
    let mut all_valid = true;
    for (label, bounded) in loaded {
        let (action, problems) =
            match document::bounded_bytes(bounded).and_then(|b| document::parse_json(&b)) {
                Ok(value) => (
                    value
                        .get("action")
                        .and_then(|a| a.as_str())
                        .map(str::to_string),
                    plan::validate(&value, &protected),
                ),
                Err(problem) => (
                    None,
                    vec![PlanProblem {
                        pointer: problem.location.to_string(),
                        message: problem.message,
                        forbidden: None,
                    }],
                ),
            };
        let valid = problems.is_empty();
        all_valid &= valid;
        match args.format {
            Format::Json => {
                serde_json::to_writer(
                    &mut out,
                    &Report {
                        path: &label,
                        valid,
                        action: action.filter(|_| valid),
                        problems,
                    },
                )?;
                out.write_all(b"\n")?;
            }
            Format::Text if valid => writeln!(out, "{label}: ok")?,
            Format::Text => {
                for problem in &problems {
                    writeln!(out, "{label}: {}", output::one_line(&problem.to_string()))?;
                }
            }
        }
    }
    out.flush()?;
    Ok(Exit::from_bool(all_valid))
}
