//! The command tree, and the parse that builds only the part of it a call uses.
//!
//! Each group's arguments live beside its `run` in `cmd/<group>.rs` (or
//! `cmd/<group>/<command>.rs`); this file only assembles them, so `autoctl --help`, the man
//! pages and the completions all come from one definition.
//!
//! Building the whole tree (about 130 commands) was half of a per-call command's start, and
//! dropping it another fifth. [`parse`] therefore parses in two stages: it finds the top-level
//! command in the arguments without clap, then builds the top level with only that command's
//! subtree. Anything else (`--help`, `--version`, no command, a word that is not a command)
//! goes through the whole tree, so help, completions, man pages and errors are those of the
//! one definition; a unit test compares both parses over every command path.

use std::ffi::OsString;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::cmd;
use crate::error::EXIT_CODE_TABLE;

/// Defines [`Cli`] and [`Command`] from one text, and beside them what the two-stage parse
/// needs: `Head` (Cli's attributes and global arguments without the subcommands) and, for
/// each top-level command, an enum holding that command alone (module `alone`), whose derived
/// parser builds exactly the subtree the whole [`Command`] builds for it.
macro_rules! command_tree {
    (
        $(#[$cli_attr:meta])*
        pub struct Cli {
            #[command(subcommand)]
            pub command: Command,
            $( $(#[$field_attr:meta])* pub $field:ident: $field_ty:ty, )*
        }

        pub enum Command {
            $( $(#[$attr:meta])* $variant:ident($ty:ty), )*
        }
    ) => {
        #[derive(Debug, Parser)]
        $(#[$cli_attr])*
        pub struct Cli {
            #[command(subcommand)]
            pub command: Command,
            $( $(#[$field_attr])* pub $field: $field_ty, )*
        }

        #[derive(Debug, Parser)]
        $(#[$cli_attr])*
        struct Head {
            $( $(#[$field_attr])* $field: $field_ty, )*
        }

        #[derive(Debug, Subcommand)]
        pub enum Command {
            $( $(#[$attr])* $variant($ty), )*
        }

        mod alone {
            #![allow(dead_code)] // only their parsers are used
            use super::*;
            $(
                #[derive(Debug, Subcommand)]
                pub enum $variant {
                    $(#[$attr])* $variant($ty),
                }
            )*
        }

        /// Per top-level command: whether a word names it, and what adds it alone to a command.
        const ALONE: &[(fn(&str) -> bool, fn(clap::Command) -> clap::Command)] = &[
            $( (
                <alone::$variant as Subcommand>::has_subcommand,
                <alone::$variant as Subcommand>::augment_subcommands,
            ), )*
        ];
    };
}

command_tree! {
    /// Supervise autonomous AI coding-agent loops
    ///
    /// autoctl keeps an AI coding agent's loop (plan, check, exec, check) going in a tmux pane:
    /// it reads the loop's signal and stop files and routes the next step, watches the pane,
    /// answers only the prompts a rule proves harmless and escalates the rest, waits out usage
    /// limits, detects stalls and stops the loop at its limits. Compose it from shell loops
    /// (`next`), cron or systemd (`run tick`, `run watch`), Claude Code hooks (`hook`) and CI
    /// (`lint`): stdout carries only the answer, diagnostics go to stderr, and the exit code is
    /// the verdict.
    #[command(
        name = "autoctl",
        version,
        after_help = EXIT_CODE_TABLE,
        max_term_width = 100,
        disable_help_subcommand = true
    )]
    pub struct Cli {
        #[command(subcommand)]
        pub command: Command,
        /// The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)
        #[arg(
            long,
            global = true,
            env = "AUTOCTL_TMUX_SOCKET",
            value_name = "NAME",
            value_parser = crate::tmux::parse_socket
        )]
        pub tmux_socket: Option<String>,
    }

    pub enum Command {
        /// Validate, write, read and clear `.auto-signal` progress files
        #[command(subcommand)]
        Signal(cmd::signal::SignalCommand),
        /// Request, check and clear a loop stop (`.auto-stop`)
        #[command(subcommand)]
        Stop(cmd::stop::StopCommand),
        // Next, Gate, Converge and Route take their help from their Args' doc comments (a doc
        // comment here would replace the long description).
        Next(cmd::next::NextArgs),
        /// List, show and check routing tables
        #[command(subcommand)]
        Table(cmd::table::TableCommand),
        /// Create task modules: `autoctl task new TASK/NAME`
        #[command(subcommand)]
        Task(cmd::task::TaskCommand),
        // The help text is LintArgs' doc comment (a variant doc comment would replace its details).
        Lint(cmd::lint::LintArgs),
        /// Supervise loops in tmux panes: start, watch, tick, status, stop, ack, recover
        #[command(subcommand)]
        Run(cmd::run::RunCommand),
        /// List and print the JSON Schemas of the protocol files
        #[command(subcommand)]
        Schema(cmd::schema::SchemaCommand),
        /// Take, refresh, release and inspect a heartbeat lock file
        #[command(subcommand)]
        Lock(cmd::lock::LockCommand),
        /// Run a loop inside one Claude Code session: init, status, route, teardown
        #[command(subcommand)]
        Loop(cmd::session_loop::LoopCommand),
        /// The agents' hook commands (stop, event, permission-request, ...) and `hook install`
        #[command(subcommand)]
        Hook(cmd::hook::HookCommand),
        // The help text is StatuslineArgs' doc comment.
        Statusline(cmd::statusline::StatuslineArgs),
        // The help text is DoctorArgs' doc comment.
        Doctor(cmd::doctor::DoctorArgs),
        /// The approval policy every door uses: check a call, show the rules, print the log
        ///
        /// One default-deny policy decides for Claude Code's PermissionRequest hook (`autoctl hook
        /// permission-request`) and for the permission screens a supervisor reads (run tick, run
        /// watch, stall check, pane classify). A tool call is approved only when a named rule
        /// proves it harmless; a shell line only when every command in it is. Everything else gets
        /// no decision: Claude Code shows its prompt, a supervisor escalates to a person.
        ///
        /// Built-in rules (`autoctl policy show` prints them in full):
        ///   read-only          inspection that changes nothing (Read, Grep; ls, cat, rg, find
        ///                      without -delete/-exec, git status/diff/log/show, ...)
        ///   runner             build and test runners with conventional subcommands (cargo
        ///                      test, npm test, make check, pytest, go test, ...); approving a
        ///                      runner runs the project's code
        ///   mkdir              mkdir [-p] inside the project or /tmp
        ///   write-in-project   Write, Edit and appends of files inside the project, never a
        ///                      sensitive path (.git/, .claude/, .mcp.json, CI, .env*, ~/.ssh, /etc)
        ///   git-write          git add, commit -m, switch -c, non-force push of a non-default
        ///                      branch
        ///
        /// Never approved, by any rule: deleting or emptying files in any spelling, inline or
        /// piped code, history rewrites, process and system control, database and network
        /// writes, infrastructure, publishing, package removal (the destructive set; its marker,
        /// e.g. destructive:rm, is the decision's rule).
        ///
        /// To add a rule, write $XDG_CONFIG_HOME/autoctl/policy.json (~/.config/autoctl/policy.json;
        /// or --policy FILE on the hook's or supervisor's command line; never a file inside the
        /// project). Its schema is `autoctl schema show policy`:
        ///   {"version": 1, "on_destructive": "ask",
        ///    "allow": [{"id": "deploy-staging", "tool": "Bash",
        ///               "pattern": "./scripts/deploy-staging.sh *"}],
        ///    "deny": [{"id": "no-prod", "tool": "Bash", "pattern": "*--env=prod*",
        ///              "message": "Never touch production."}]}
        /// A deny rule wins over every allow; an allow rule is named user:ID in decisions.
        /// `autoctl policy check` shows which rule decides a call.
        #[command(subcommand, verbatim_doc_comment)]
        Policy(cmd::policy::PolicyCommand),
        /// Read tmux panes: capture, hash, classify, wait until ready, send keys
        #[command(subcommand)]
        Pane(cmd::pane::PaneCommand),
        /// Detect stalled agents and recover them within limits
        #[command(subcommand)]
        Stall(cmd::stall::StallCommand),
        /// Print a shell completion script
        Completions(cmd::generate::CompletionsArgs),
        /// Print or write the man pages
        Man(cmd::generate::ManArgs),
        Gate(cmd::gate::GateArgs),
        Converge(cmd::converge::ConvergeArgs),
        /// Show and learn a `.type-profile.md` "## Auto Adaptation" section (task-ai)
        #[command(subcommand)]
        Profile(cmd::profile::ProfileCommand),
        /// Count the exec steps that make a test stub pass (task-ai's VH→HS cycles)
        #[command(subcommand)]
        Vfp(cmd::vfp::VfpCommand),
        Route(cmd::route::RouteArgs),
        /// Level and run a sub-issue graph; the parent's phase and close flow (wholework)
        #[command(subcommand)]
        Graph(cmd::graph::GraphCommand),
        /// Write, read and delete wholework checkpoint files
        #[command(subcommand)]
        Checkpoint(cmd::checkpoint::CheckpointCommand),
        /// Validate a wholework recovery plan
        #[command(subcommand)]
        Plan(cmd::plan::PlanCommand),
    }
}

/// Parse the command line (the first argument is the program name), building only the subtree
/// of the command being run when the arguments name one.
pub fn parse(args: &[OsString]) -> Result<Cli, clap::Error> {
    let word = command_index(args).and_then(|i| args[i].to_str());
    let mut command = match word.and_then(alone) {
        Some(augment) => augment(head()),
        None => Cli::command(),
    };
    let mut matches = command.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches_mut(&mut matches).map_err(|err| err.format(&mut Cli::command()))
}

/// The per-call commands a shell loop runs on every step, in the plain forms it writes them,
/// read without building a parser (the start of a call is most of its cost; see
/// `bench/startup.sh`): `next --step S --result R` with `--checkpoint`, `--task`, `--table`
/// and `--format` (or `next --task DIR`), `stop check DIR`, `signal validate PATH...`. Each
/// option is its own word followed by its value, given at most once; no value is empty or
/// starts with `-`. Anything else, or `AUTOCTL_TMUX_SOCKET` in the environment (which the
/// parser would validate), is `None`: the caller parses as usual. A unit test checks that
/// every command line this reads parses to the same [`Cli`] through clap.
pub fn per_call(args: &[OsString]) -> Option<Cli> {
    if std::env::var_os("AUTOCTL_TMUX_SOCKET").is_some() {
        return None;
    }
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str())
        .collect::<Option<_>>()?;
    let command = match words.as_slice() {
        ["next", options @ ..] => Command::Next(next_args(options)?),
        ["stop", "check", dir] if plain(dir) => {
            Command::Stop(cmd::stop::StopCommand::Check(cmd::stop::CheckArgs {
                dir: dir.into(),
                format: cmd::args::Format::Text,
            }))
        }
        ["signal", "validate", paths @ ..] if !paths.is_empty() && paths.iter().all(plain) => {
            Command::Signal(cmd::signal::SignalCommand::Validate(
                cmd::signal::ValidateArgs {
                    paths: paths.iter().map(Into::into).collect(),
                    strict: false,
                    table: crate::routing::DEFAULT_TABLE.to_string(),
                    format: cmd::args::Format::Text,
                },
            ))
        }
        _ => return None,
    };
    Some(Cli {
        command,
        tmux_socket: None,
    })
}

/// A value the parser takes as it is: not empty, not an option.
fn plain(word: &&str) -> bool {
    !word.is_empty() && !word.starts_with('-')
}

/// `next`'s options in the forms [`per_call`] reads.
fn next_args(options: &[&str]) -> Option<cmd::next::NextArgs> {
    let mut args = cmd::next::NextArgs {
        step: None,
        result: None,
        checkpoint: None,
        attempt: 1,
        status: None,
        phase: None,
        task: None,
        table: crate::routing::DEFAULT_TABLE.to_string(),
        command: None,
        format: cmd::args::Format::Text,
    };
    let (mut table, mut format) = (false, false);
    for pair in options.chunks(2) {
        let [option, value] = *pair else {
            return None;
        };
        if !plain(&value) {
            return None;
        }
        let once = |slot: &mut Option<String>| slot.replace(value.to_string()).is_none();
        let fresh = match option {
            "--step" => once(&mut args.step),
            "--result" => once(&mut args.result),
            "--checkpoint" => once(&mut args.checkpoint),
            "--task" => args.task.replace(value.into()).is_none(),
            "--table" => {
                args.table = value.to_string();
                !std::mem::replace(&mut table, true)
            }
            "--format" => {
                args.format = match value {
                    "text" => cmd::args::Format::Text,
                    "json" => cmd::args::Format::Json,
                    _ => return None,
                };
                !std::mem::replace(&mut format, true)
            }
            _ => return None,
        };
        if !fresh {
            return None;
        }
    }
    // --step and --result require each other, --checkpoint requires --step.
    let stepped = args.step.is_some();
    (stepped == args.result.is_some() && (stepped || args.checkpoint.is_none())).then_some(args)
}

/// What adds the top-level command named `word` alone to a command, if it is one.
fn alone(word: &str) -> Option<fn(clap::Command) -> clap::Command> {
    ALONE
        .iter()
        .find(|(names, _)| names(word))
        .map(|&(_, augment)| augment)
}

/// The top level as [`Cli`] builds it, without its subcommands. The derived [`Cli`] adds the
/// subcommands first, so its arguments come after them in display order (which places
/// `--tmux-socket` after each command's own options in its help); the head starts its count
/// there too.
fn head() -> clap::Command {
    <Head as Args>::augment_args(clap::Command::new("autoctl").next_display_order(ALONE.len()))
        .subcommand_required(true)
        .arg_required_else_help(true)
}

/// Where the top-level command word is in a command line: the first argument after the program
/// name and the global `--tmux-socket NAME`. `None` when there is none, when an option other
/// than `--tmux-socket` comes first (`--help`, `--version`), or when a word is not UTF-8.
pub fn command_index(args: &[OsString]) -> Option<usize> {
    let mut index = 1;
    while let Some(word) = args.get(index) {
        let word = word.to_str()?;
        if word == "--tmux-socket" {
            index += 2;
        } else if word.starts_with("--tmux-socket=") {
            index += 1;
        } else if word.starts_with('-') {
            return None;
        } else {
            return Some(index);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command path of the whole tree, `autoctl` first.
    fn paths(command: &clap::Command, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(prefix.clone());
        for sub in command.get_subcommands() {
            let mut path = prefix.clone();
            path.push(sub.get_name().to_string());
            paths(sub, path, out);
        }
    }

    /// What a parse gave, in a form two parses can be compared by: the parsed value, or the
    /// error exactly as it would be printed, with its kind and exit code.
    fn outcome(parsed: Result<Cli, clap::Error>) -> String {
        match parsed {
            Ok(cli) => format!("{cli:?}"),
            Err(err) => format!(
                "{:?} {} {}",
                err.kind(),
                err.exit_code(),
                err.render().ansi()
            ),
        }
    }

    #[test]
    fn the_two_stage_parse_agrees_with_the_whole_tree_on_every_command_path() {
        let mut all = Vec::new();
        paths(&Cli::command(), Vec::new(), &mut all);
        assert!(all.len() > 80, "{}", all.len());
        let endings: &[&[&str]] = &[
            &[],
            &["--help"],
            &["-h"],
            &["--version"],
            &["--bogus"],
            &["bogus"],
            &["--format", "json"],
            &["--tmux-socket"],
            &["--tmux-socket", "s", "--help"],
            &["--tmux-socket=a b"],
            &["x", "y", "z"],
        ];
        for path in &all {
            for ending in endings {
                for socket_first in [false, true] {
                    let mut args: Vec<OsString> = vec!["autoctl".into()];
                    if socket_first {
                        args.extend(["--tmux-socket".into(), "s".into()]);
                    }
                    args.extend(path.iter().map(OsString::from));
                    args.extend(ending.iter().map(OsString::from));
                    assert_eq!(
                        outcome(parse(&args)),
                        outcome(Cli::try_parse_from(&args)),
                        "{args:?}"
                    );
                }
            }
        }
    }

    /// Every command line [`per_call`] reads parses to the same value through clap, and the
    /// plain forms a shell loop writes are read.
    #[test]
    fn the_per_call_reading_agrees_with_the_parser() {
        let options: &[&[&str]] = &[
            &["--step", "check"],
            &["--result", "PASS"],
            &["--result", "(done)"],
            &["--checkpoint", "post-exec"],
            &["--task", "TASK/a b"],
            &["--table", "ai-cli-task-v1"],
            &["--format", "json"],
            &["--format", "text"],
            &["--format", "JSON"],
            &["--step", "-x"],
            &["--result", "-1"],
            &["--result", ""],
            &["--step=check"],
            &["--attempt", "2"],
            &["--status", "draft"],
            &["--bogus", "x"],
            &["--step"],
            &["x"],
        ];
        let mut lines: Vec<Vec<&str>> = vec![
            vec!["stop", "check", "TASK/a"],
            vec!["stop", "check", "-"],
            vec!["stop", "check", ""],
            vec!["stop", "check"],
            vec!["stop", "check", "a", "b"],
            vec!["signal", "validate", "a.json"],
            vec!["signal", "validate", "a", "b", "c"],
            vec!["signal", "validate", "-"],
            vec!["signal", "validate", ""],
            vec!["signal", "validate"],
            vec!["signal", "validate", "a", "--strict"],
            vec!["next"],
        ];
        // Every sequence of up to four of the options above.
        let mut prefixes: Vec<Vec<&str>> = vec![vec!["next"]];
        for _ in 0..4 {
            let mut longer = Vec::new();
            for prefix in &prefixes {
                for option in options {
                    let mut line = prefix.clone();
                    line.extend_from_slice(option);
                    longer.push(line);
                }
            }
            lines.extend(longer.iter().cloned());
            prefixes = longer;
        }
        let mut read = 0;
        for line in &lines {
            let args: Vec<OsString> = std::iter::once("autoctl")
                .chain(line.iter().copied())
                .map(OsString::from)
                .collect();
            if let Some(cli) = per_call(&args) {
                read += 1;
                let parsed = Cli::try_parse_from(&args)
                    .unwrap_or_else(|err| panic!("{line:?}: read, but the parser says {err}"));
                assert_eq!(format!("{cli:?}"), format!("{parsed:?}"), "{line:?}");
            }
        }
        assert!(read > 500, "{read} of {} lines read", lines.len());
        for line in [
            &["next", "--step", "check", "--result", "PASS"][..],
            &[
                "next",
                "--step",
                "exec",
                "--result",
                "(done)",
                "--checkpoint",
                "mid-exec",
            ],
            &["next", "--task", "TASK/a", "--format", "json"],
            &["stop", "check", "TASK/a"],
            &["signal", "validate", "TASK/a/.auto-signal"],
        ] {
            let args: Vec<OsString> = std::iter::once("autoctl")
                .chain(line.iter().copied())
                .map(OsString::from)
                .collect();
            assert!(per_call(&args).is_some(), "{line:?}");
        }
    }

    #[test]
    fn the_command_word_skips_only_the_global_option() {
        let index = |args: &[&str]| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            command_index(&args)
        };
        assert_eq!(index(&["autoctl", "next", "--step", "x"]), Some(1));
        assert_eq!(index(&["autoctl", "--tmux-socket", "s", "pane"]), Some(3));
        assert_eq!(index(&["autoctl", "--tmux-socket=s", "pane"]), Some(2));
        assert_eq!(index(&["autoctl", "--tmux-socket"]), None);
        assert_eq!(index(&["autoctl", "--help", "next"]), None);
        assert_eq!(index(&["autoctl"]), None);
        for word in ["next", "signal", "run", "hook", "statusline", "plan"] {
            assert!(alone(word).is_some(), "{word}");
        }
        assert!(alone("bogus").is_none());
        assert!(alone("help").is_none());
    }
}
