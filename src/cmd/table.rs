//! `autoctl table list|show|check`: routing tables as data, and the property checker.

use std::io::ErrorKind;
use std::path::Path;

use anyhow::Result;
use clap::{Args, Subcommand};
use serde::Serialize;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::fsx;
use crate::output;
use crate::protocol::document;
use crate::routing::{self, BUILTINS, DEFAULT_TABLE, check};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum TableCommand {
    /// List the built-in routing tables
    List(FormatArg),
    /// Print a routing table as JSON (a built-in name or a file)
    Show(ShowArgs),
    /// Prove a table's properties, printing a counterexample for each that fails
    ///
    /// Properties: every step, result, checkpoint and status a row names is declared; every
    /// non-terminal status enters a step; the statuses that enter (stop) are exactly the
    /// terminal ones; every whitelisted (step, result, checkpoint) routes or is explicitly
    /// rejected; no row is shadowed by earlier rows; (stop) is reachable from every step; every
    /// cycle passes through a check step. Exit 0 when all hold, 1 when any fails.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct FormatArg {
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A built-in table name or a JSON file
    #[arg(value_name = "NAME|FILE", default_value = DEFAULT_TABLE)]
    pub table: String,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A built-in table name or a JSON file
    #[arg(value_name = "NAME|FILE")]
    pub table: String,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Serialize)]
struct Listed<'a> {
    name: &'a str,
    default: bool,
    description: &'a str,
    source: &'a str,
}

#[derive(Debug, Serialize)]
struct CheckReport {
    table: String,
    ok: bool,
    violations: Vec<check::Violation>,
}

pub fn run(command: TableCommand) -> Result<Exit> {
    match command {
        TableCommand::List(args) => {
            for table in BUILTINS {
                let listed = Listed {
                    name: &table.name,
                    default: table.name == DEFAULT_TABLE,
                    description: &table.description,
                    source: &table.source,
                };
                match args.format {
                    Format::Json => output::json_line(&listed)?,
                    Format::Text => output::line(format_args!(
                        "{}\t{}{}",
                        listed.name,
                        if listed.default { "(default) " } else { "" },
                        listed.description
                    ))?,
                }
            }
            Ok(Exit::Yes)
        }
        TableCommand::Show(args) => {
            output::json_pretty(&routing::load(&args.table)?)?;
            Ok(Exit::Yes)
        }
        TableCommand::Check(args) => run_check(&args),
    }
}

fn run_check(args: &CheckArgs) -> Result<Exit> {
    let (name, violations) = match routing::builtin(&args.table) {
        Some(table) => (table.name.to_string(), check::check(table)),
        None => check_file(Path::new(&args.table))?,
    };
    let report = CheckReport {
        table: name,
        ok: violations.is_empty(),
        violations,
    };
    match args.format {
        Format::Json => output::json_line(&report)?,
        Format::Text if report.ok => output::line(format_args!(
            "{}: ok ({} properties hold)",
            report.table,
            check::PROPERTIES.len()
        ))?,
        Format::Text => {
            for violation in &report.violations {
                output::line(format_args!(
                    "{}: {}: {}",
                    report.table,
                    violation.property,
                    output::one_line(&violation.message)
                ))?;
            }
        }
    }
    Ok(Exit::from_bool(report.ok))
}

/// A file that is not a valid table document fails the `schema` property; one that cannot be
/// read at all is an operational error (exit 2).
fn check_file(path: &Path) -> Result<(String, Vec<check::Violation>)> {
    let label = path.display().to_string();
    let bounded = fsx::read_bounded(path, fsx::DOCUMENT_LIMIT).map_err(|err| {
        if err.kind() == ErrorKind::NotFound {
            let names: Vec<&str> = BUILTINS.iter().map(|table| table.name.as_ref()).collect();
            anyhow::anyhow!(
                "no routing table named {label:?} and no such file (built-in tables: {})",
                names.join(", ")
            )
        } else {
            anyhow::Error::new(err).context(format!("cannot read {label}"))
        }
    })?;
    let parsed = document::bounded_bytes(bounded)
        .map_err(|problem| vec![problem])
        .and_then(|bytes| routing::parse_table(&bytes));
    match parsed {
        Ok(table) => Ok((label, check::check(&table))),
        Err(problems) => Ok((
            label,
            problems
                .into_iter()
                .map(|problem| check::Violation {
                    property: "schema",
                    message: problem.to_string(),
                })
                .collect(),
        )),
    }
}
