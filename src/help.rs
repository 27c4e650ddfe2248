//! The help a person reads before knowing the command names: bare `autoctl` and `autoctl -h`
//! (a short usage with the commands in groups), `autoctl --help` (the same groups with the
//! description, options and exit codes), `autoctl help [COMMAND]...` (like `git help` and
//! `cargo help`: a command's full help), and a command group run without its subcommand
//! (`autoctl run`: that group's help, with its line breaks, on stderr).
//!
//! All of it is rendered from the one clap tree in [`crate::cli`]; this module only adds the
//! grouping and decides which stream and exit code: stdout and 0 when help was asked for,
//! stderr and 2 when a command was missing.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::{self, Cli};
use crate::error::EXIT_FAILURE;

/// The top-level commands in the groups the usage shows them in. Every command is in exactly
/// one group (a test checks it).
pub const GROUPS: &[(&str, &[&str])] = &[
    (
        "The loop (a task module and its next step)",
        &["task", "next"],
    ),
    (
        "Supervise (a loop running in a tmux pane)",
        &["run", "pane", "stall", "lock"],
    ),
    (
        "Agents and hooks (inside Claude Code, Codex CLI, Gemini CLI)",
        &["hook", "loop", "statusline", "doctor", "policy"],
    ),
    (
        "Protocol files (signals, stop files, tables, schemas)",
        &["signal", "stop", "table", "schema"],
    ),
    ("CI", &["lint"]),
    (
        "Source systems' helpers (task-ai, wholework)",
        &[
            "gate",
            "converge",
            "profile",
            "vfp",
            "route",
            "graph",
            "checkpoint",
            "plan",
        ],
    ),
    ("Documentation", &["completions", "man"]),
];

/// What the help side of the command line asks for, decided before the parse.
#[derive(Debug, PartialEq, Eq)]
enum Ask {
    /// `autoctl` with no command: the short usage, on stderr (exit 2).
    Bare,
    /// `autoctl -h`, `autoctl help`: the short usage on stdout.
    Short,
    /// `autoctl --help`: the grouped long help on stdout.
    Long,
    /// `autoctl help COMMAND...`: that command's long help.
    Command(Vec<String>),
}

fn ask(args: &[OsString]) -> Option<Ask> {
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str())
        .collect::<Option<_>>()?;
    // The global option may come first; help ignores it.
    let mut rest = words.as_slice();
    loop {
        match rest {
            ["--tmux-socket", _, tail @ ..] => rest = tail,
            [first, tail @ ..] if first.starts_with("--tmux-socket=") => rest = tail,
            _ => break,
        }
    }
    match rest {
        [] => Some(Ask::Bare),
        ["-h"] | ["help"] => Some(Ask::Short),
        ["--help"] => Some(Ask::Long),
        ["help", path @ ..] => Some(Ask::Command(path.iter().map(|w| w.to_string()).collect())),
        _ => None,
    }
}

/// Answer the command lines that ask for help (or name no command) before the parse; `None`
/// for everything else.
pub fn before_parse(args: &[OsString]) -> Option<ExitCode> {
    Some(match ask(args)? {
        Ask::Bare => {
            let _ = std::io::stderr().write_all(short_usage().as_bytes());
            ExitCode::from(EXIT_FAILURE)
        }
        Ask::Short => print(&short_usage()),
        Ask::Long => print(&long_help()),
        Ask::Command(path) => command_help(&path),
    })
}

/// A command group run without its subcommand (`autoctl run`): the group's help, with its
/// line breaks, on stderr. The caller exits 2.
pub fn missing_subcommand(args: &[OsString]) {
    let mut command = Cli::command();
    command.build();
    let mut at = &command;
    let mut path = vec!["autoctl".to_string()];
    let start = cli::command_index(args).unwrap_or(args.len());
    let words = args.iter().skip(start).filter_map(|a| a.to_str());
    for word in words.filter(|w| !w.starts_with('-')) {
        match at.find_subcommand(word) {
            Some(sub) => {
                at = sub;
                path.push(word.to_string());
            }
            None => break,
        }
    }
    let mut group = at.clone().bin_name(path.join(" "));
    let _ = write!(
        std::io::stderr(),
        "autoctl: {} needs a command:\n\n{}",
        path.join(" "),
        group.render_help()
    );
}

fn print(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => ExitCode::from(EXIT_FAILURE),
        _ => ExitCode::SUCCESS,
    }
}

/// `autoctl help COMMAND...`: the long help of that command, as `autoctl COMMAND... --help`
/// prints it; an unknown name is a usage error naming it.
fn command_help(path: &[String]) -> ExitCode {
    if let Some(flag) = path.iter().find(|w| w.starts_with('-')) {
        crate::output::error_line(&format!(
            "help takes command names, not options ({flag}): autoctl help run start"
        ));
        return ExitCode::from(EXIT_FAILURE);
    }
    let mut command = Cli::command();
    command.build();
    let mut at = &command;
    for (depth, word) in path.iter().enumerate() {
        match at.find_subcommand(word) {
            Some(sub) => at = sub,
            None => {
                let known: Vec<&str> = at
                    .get_subcommands()
                    .filter(|s| !s.is_hide_set())
                    .map(|s| s.get_name())
                    .collect();
                let parent = if depth == 0 {
                    "autoctl".to_string()
                } else {
                    format!("autoctl {}", path[..depth].join(" "))
                };
                crate::output::error_line(&format!(
                    "{parent} has no command {word:?}; its commands: {}",
                    known.join(", ")
                ));
                return ExitCode::from(EXIT_FAILURE);
            }
        }
    }
    let mut args: Vec<OsString> = vec!["autoctl".into()];
    args.extend(path.iter().map(OsString::from));
    args.push("--help".into());
    match cli::parse(&args) {
        Err(err) if !err.use_stderr() => print(&err.render().to_string()),
        _ => ExitCode::from(EXIT_FAILURE),
    }
}

/// The groups as lines: `  name   about`, names padded to one column.
fn groups() -> String {
    let command = Cli::command();
    let width = GROUPS
        .iter()
        .flat_map(|(_, names)| names.iter())
        .map(|n| n.len())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for (title, names) in GROUPS {
        text.push_str(title);
        text.push_str(":\n");
        for name in *names {
            let about = command
                .find_subcommand(name)
                .and_then(|sub| sub.get_about())
                .map(|a| a.to_string())
                .unwrap_or_default();
            text.push_str(&format!("  {name:<width$}  {about}\n"));
        }
    }
    text
}

/// The first line of the top-level description.
fn about() -> String {
    Cli::command()
        .get_about()
        .map(|a| a.to_string())
        .unwrap_or_default()
}

const USAGE: &str = "\
Usage: autoctl [--tmux-socket NAME] COMMAND [ARGS]...
       autoctl help [COMMAND]...   a command's help (the same as autoctl COMMAND --help)
";

const WHERE_NEXT: &str = "\
Start with the README's Getting started; every topic has a page under docs/ (`man autoctl`
lists them). `autoctl --help` adds the options and exit codes.
";

/// Bare `autoctl`, `autoctl -h`, `autoctl help`.
pub fn short_usage() -> String {
    format!(
        "autoctl: {}\n\n{USAGE}\n{}\n{WHERE_NEXT}",
        about(),
        groups()
    )
}

/// `autoctl --help`: clap's long help, with the commands in their groups.
pub fn long_help() -> String {
    let template = format!(
        "{{about-with-newline}}\n{USAGE}\n{}\nOptions:\n{{options}}{{after-help}}",
        groups()
    );
    let mut command = Cli::command().help_template(template);
    command.render_long_help().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        std::iter::once("autoctl")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn every_command_is_in_exactly_one_group() {
        let command = Cli::command();
        let mut grouped: Vec<&str> = GROUPS.iter().flat_map(|(_, n)| n.iter().copied()).collect();
        grouped.sort_unstable();
        let mut all: Vec<&str> = command
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name())
            .collect();
        all.sort_unstable();
        assert_eq!(grouped, all);
    }

    #[test]
    fn the_asks_are_told_apart() {
        assert_eq!(ask(&args(&[])), Some(Ask::Bare));
        assert_eq!(ask(&args(&["--tmux-socket", "s"])), Some(Ask::Bare));
        assert_eq!(ask(&args(&["-h"])), Some(Ask::Short));
        assert_eq!(ask(&args(&["help"])), Some(Ask::Short));
        assert_eq!(ask(&args(&["--help"])), Some(Ask::Long));
        assert_eq!(
            ask(&args(&["help", "run", "start"])),
            Some(Ask::Command(vec!["run".into(), "start".into()]))
        );
        assert_eq!(ask(&args(&["run"])), None);
        assert_eq!(ask(&args(&["next", "--help"])), None);
    }

    #[test]
    fn the_short_usage_is_short_and_has_line_breaks() {
        let usage = short_usage();
        let lines = usage.lines().count();
        assert!((30..60).contains(&lines), "{lines} lines:\n{usage}");
        assert!(usage.lines().all(|l| l.chars().count() <= 120), "{usage}");
        for (title, names) in GROUPS {
            assert!(usage.contains(title));
            for name in *names {
                assert!(usage.contains(&format!("  {name} ")), "{name}");
            }
        }
    }

    #[test]
    fn the_long_help_keeps_options_and_exit_codes() {
        let help = long_help();
        assert!(help.contains("--tmux-socket"), "{help}");
        assert!(help.contains("Exit status:"), "{help}");
        assert!(help.contains("Supervise (a loop running in a tmux pane):"));
    }
}
