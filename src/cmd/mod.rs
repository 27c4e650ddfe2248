//! One module per command group: its arguments (doc comments are the help) and a `run` that
//! reads, calls a pure core, and prints. No domain logic lives here.
//!
//! The doc comments here are `--help` text, printed verbatim: `LEVEL<TAB>BATCH` and
//! `session:<id>` mean what a terminal shows, not HTML, so rustdoc's HTML check is off.
#![allow(rustdoc::invalid_html_tags)]

pub mod doctor;
pub mod generate;
pub mod hook;
pub mod lint;
pub mod lock;
pub mod next;
pub mod pane;
pub mod policy;
pub mod run;
pub mod schema;
pub mod session_loop;
pub mod signal;
pub mod stall;
pub mod statusline;
pub mod stop;
pub mod table;
pub mod task;

pub mod args;
pub mod checkpoint;
pub mod converge;
pub mod gate;
pub mod graph;
pub mod plan;
pub mod profile;
pub mod route;
pub mod vfp;

use anyhow::Result;

use crate::cli::{Cli, Command};
use crate::error::Exit;

/// Run one parsed command.
pub fn dispatch(cli: Cli) -> Result<Exit> {
    let tmux_socket = cli.tmux_socket;
    match cli.command {
        Command::Signal(command) => signal::run(command),
        Command::Stop(command) => stop::run(command),
        Command::Next(args) => next::run(&args),
        Command::Table(command) => table::run(command),
        Command::Task(command) => task::run(command),
        Command::Lint(args) => lint::run(&args),
        Command::Run(command) => run::run(command, tmux_socket),
        Command::Schema(command) => schema::run(command),
        Command::Lock(command) => lock::run(command),
        Command::Loop(command) => session_loop::run(command),
        Command::Hook(command) => hook::run(command),
        Command::Statusline(args) => statusline::run(&args),
        Command::Doctor(args) => doctor::run(&args, tmux_socket),
        Command::Policy(command) => policy::run(command),
        Command::Pane(command) => pane::run(command, tmux_socket),
        Command::Stall(command) => stall::run(command, tmux_socket),
        Command::Completions(args) => {
            generate::run_completions(&args, <Cli as clap::CommandFactory>::command())
        }
        Command::Man(args) => generate::run_man(&args, <Cli as clap::CommandFactory>::command()),
        Command::Gate(args) => gate::run(&args),
        Command::Converge(args) => converge::run(&args),
        Command::Profile(command) => profile::run(command),
        Command::Vfp(command) => vfp::run(command),
        Command::Route(args) => route::run(&args),
        Command::Graph(command) => graph::run(command),
        Command::Checkpoint(command) => checkpoint::run(command),
        Command::Plan(command) => plan::run(command),
    }
}
