//! One module per command group: its arguments (doc comments are the help) and a `run` that
//! reads, calls a pure core, and prints. No domain logic lives here.

pub mod generate;
pub mod next;
pub mod run;
pub mod schema;
pub mod signal;
pub mod stop;
pub mod table;

use anyhow::Result;

use crate::cli::Command;
use crate::error::Verdict;

/// Run one parsed command.
pub fn dispatch(command: Command) -> Result<Verdict> {
    match command {
        Command::Signal(command) => signal::run(command),
        Command::Stop(command) => stop::run(command),
        Command::Next(args) => next::run(&args),
        Command::Table(command) => table::run(command),
        Command::Run(command) => run::run(command),
        Command::Schema(command) => schema::run(command),
        Command::Completions(args) => generate::run_completions(&args),
        Command::Man(args) => generate::run_man(&args),
    }
}
