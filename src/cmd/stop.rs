//! `autoctl stop write|check|clear`: the `.auto-stop` request.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use serde::Serialize;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::output;
use crate::protocol::signal::now_timestamp;
use crate::protocol::stop::{self, REASONS, StopRequest, StopState};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum StopCommand {
    /// Ask the loop in DIR to stop at its next iteration boundary
    Write(WriteArgs),
    /// Is a stop requested in DIR? Prints the reason and exits 0 if so, exits 1 if not
    ///
    /// A stop file that exists but cannot be read or is invalid still means stop: the command
    /// warns on stderr, prints `unknown` and exits 0.
    Check(CheckArgs),
    /// Withdraw a stop request (succeeds when there is none)
    Clear(DirArg),
}

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The task module directory
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Why the loop must stop
    #[arg(long, value_name = "REASON", value_parser = clap::builder::PossibleValuesParser::new(REASONS))]
    pub reason: String,
    /// A human-readable detail, kept in the file
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The task module directory
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct DirArg {
    /// The task module directory
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

#[derive(Debug, Serialize)]
struct CheckReport {
    stop: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warning: Option<String>,
}

/// What `check` prints when the file exists but says nothing trustworthy.
const UNKNOWN_REASON: &str = "unknown";

pub fn run(command: StopCommand) -> Result<Exit> {
    match command {
        StopCommand::Write(args) => {
            if args
                .message
                .as_ref()
                .is_some_and(|m| m.chars().count() > 4096)
            {
                anyhow::bail!("--message is longer than 4096 characters");
            }
            let request = StopRequest {
                reason: args.reason,
                timestamp: now_timestamp(crate::time::now()?),
                message: args.message,
            };
            stop::write(&args.dir, &request)?;
            Ok(Exit::Yes)
        }
        StopCommand::Check(args) => check(&args),
        StopCommand::Clear(args) => {
            stop::clear(&args.dir)?;
            Ok(Exit::Yes)
        }
    }
}

fn check(args: &CheckArgs) -> Result<Exit> {
    let report = match stop::check(&args.dir)? {
        StopState::None => CheckReport {
            stop: false,
            reason: None,
            timestamp: None,
            message: None,
            warning: None,
        },
        StopState::Requested(request) => CheckReport {
            stop: true,
            reason: Some(request.reason),
            timestamp: Some(request.timestamp),
            message: request.message,
            warning: None,
        },
        StopState::Unreadable { why } => {
            let warning = format!("{why}; treating it as a stop request");
            output::warn(&warning);
            CheckReport {
                stop: true,
                reason: Some(UNKNOWN_REASON.to_string()),
                timestamp: None,
                message: None,
                warning: Some(output::one_line(&warning)),
            }
        }
    };
    match args.format {
        Format::Json => output::json_line(&report)?,
        Format::Text => {
            if let Some(reason) = &report.reason {
                output::line(reason)?;
            }
        }
    }
    Ok(Exit::from_bool(report.stop))
}
