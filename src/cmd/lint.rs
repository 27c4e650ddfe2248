//! `autoctl lint`: check task modules in CI and pre-commit, printing findings like a compiler,
//! as JSON, as GitHub annotations or as SARIF.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use clap::Args;
use clap::builder::PossibleValuesParser;

use crate::error::{Exit, Reported};
use crate::lint::format::{self, Format, Rated};
use crate::lint::rules::{self, ALL_WARNINGS, RULES, Severity};
use crate::lint::{Policy, sort_findings, walk};
use crate::output;
use crate::routing::{self, DEFAULT_TABLE};

/// Check task modules: front matter, targets, dependencies, transient files
///
/// Each PATH is a task root (a TASK/ or AiTasks/ directory), a module (a directory in a task
/// root), or a repository or any directory, which is walked to find the task roots in it
/// (skipping .git, .worktrees and other hidden directories, node_modules and target; symlinks
/// are not followed unless -L). Default: the current directory.
///
/// Findings print as `PATH:LINE:COL: error[RULE]: message`, sorted by path, with a summary on
/// stderr. `--list-rules` lists the rules and `--explain RULE` says what one checks and how
/// to fix it. Inside a git work tree, transient files (.auto-signal, .auto-stop,
/// .tmp-annotations.json) must be untracked and ignored (asked of git; --no-git skips it).
///
/// Unreadable directories and files inside a task root are findings of the rule
/// `unreadable` (an error: what was not read was not checked), and the run goes on; outside
/// task roots they are warnings on stderr. The exit status is 2 when nothing at all could be
/// checked (no module could be listed and something was unreadable), else 1 when any finding
/// is an error, else 0. Warnings fail only when denied (--deny RULE, --deny warnings).
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Task roots, modules or directories to check [default: .]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Report RULE as an error; `warnings` denies every warning (repeatable)
    #[arg(
        long,
        value_name = "RULE",
        value_parser = PossibleValuesParser::new(RULES.iter().map(|r| r.id).chain([ALL_WARNINGS])),
        hide_possible_values = true
    )]
    pub deny: Vec<String>,
    /// Do not report RULE (repeatable)
    #[arg(
        long,
        value_name = "RULE",
        value_parser = PossibleValuesParser::new(RULES.iter().map(|r| r.id)),
        hide_possible_values = true
    )]
    pub allow: Vec<String>,
    /// Print what RULE checks and how to fix it
    #[arg(
        long,
        value_name = "RULE",
        value_parser = PossibleValuesParser::new(RULES.iter().map(|r| r.id)),
        hide_possible_values = true,
        conflicts_with = "list_rules"
    )]
    pub explain: Option<String>,
    /// List the rules: id, default severity, what each finds
    #[arg(long)]
    pub list_rules: bool,
    /// Routing table whose statuses .index.md may use: a built-in name or a JSON file
    #[arg(long, value_name = "NAME|FILE", default_value = DEFAULT_TABLE)]
    pub table: String,
    /// Follow symlinks while looking for task roots
    #[arg(short = 'L', long)]
    pub follow: bool,
    /// Skip the git checks of transient files
    #[arg(long)]
    pub no_git: bool,
}

pub fn run(args: &LintArgs) -> Result<Exit> {
    if args.list_rules {
        for rule in RULES {
            output::line(format_args!(
                "{}\t{}\t{}",
                rule.id,
                rule.severity.as_str(),
                rule.summary
            ))?;
        }
        return Ok(Exit::Yes);
    }
    if let Some(id) = &args.explain {
        let rule = rules::find(id).ok_or_else(|| anyhow!("no lint rule named {id:?}"))?;
        output::raw(rules::explain(rule).as_bytes())?;
        return Ok(Exit::Yes);
    }
    let policy = Policy::new(&args.deny, &args.allow)?;
    let table = routing::load(&args.table)?;
    let defaulted = args.paths.is_empty();
    let paths = if defaulted {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let options = walk::Options {
        table: table.name.to_string(),
        statuses: table.status_names().into_iter().map(String::from).collect(),
        follow: args.follow,
        git: !args.no_git,
        strip_dot: defaulted,
    };
    let outcome = walk::lint(&paths, &options)?;
    let nothing_found = outcome.roots == 0 && outcome.modules == 0 && outcome.findings.is_empty();
    if nothing_found && outcome.failures == 0 {
        let nothing = format!(
            "no task roots (TASK/, AiTasks/) or modules found under {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        // A path named on the command line that holds nothing to check is a mistake (a typo in
        // a CI job must not pass green); a repository without task modules linted by default
        // (a pre-commit run) is merely empty.
        if !defaulted {
            bail!(nothing);
        }
        output::warn(&nothing);
    }
    for warning in &outcome.warnings {
        output::warn(warning);
    }
    let mut findings = outcome.findings;
    sort_findings(&mut findings);
    let reported: Vec<Rated> = findings
        .into_iter()
        .filter_map(|finding| {
            policy
                .severity(finding.rule)
                .map(|severity| Rated { finding, severity })
        })
        .collect();
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    format::write(args.format, &reported, &mut out)?;
    out.flush()?;
    drop(out);

    let errors = reported
        .iter()
        .filter(|r| r.severity == Severity::Error)
        .count();
    let warnings = reported.len() - errors;
    if outcome.modules == 0 && outcome.failures > 0 {
        output::error_line(&format!(
            "nothing could be checked: {} unreadable path{} and no readable task module",
            outcome.failures,
            if outcome.failures == 1 { "" } else { "s" }
        ));
        return Err(Reported.into());
    }
    if args.format == Format::Text {
        output::note(&summary(errors, warnings, outcome.modules, outcome.roots));
    }
    Ok(Exit::from_bool(errors == 0))
}

fn plural(count: usize, word: &str) -> String {
    format!("{count} {word}{}", if count == 1 { "" } else { "s" })
}

fn summary(errors: usize, warnings: usize, modules: usize, roots: usize) -> String {
    let found = match (errors, warnings) {
        (0, 0) => "no findings".to_string(),
        (e, 0) => plural(e, "error"),
        (0, w) => plural(w, "warning"),
        (e, w) => format!("{} and {}", plural(e, "error"), plural(w, "warning")),
    };
    format!(
        "{found} in {} ({})",
        plural(modules, "module"),
        plural(roots, "task root")
    )
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn summaries_read_naturally() {
        assert_eq!(summary(0, 0, 1, 1), "no findings in 1 module (1 task root)");
        assert_eq!(
            summary(2, 1, 40, 2),
            "2 errors and 1 warning in 40 modules (2 task roots)"
        );
        assert_eq!(
            summary(0, 3, 3, 0),
            "3 warnings in 3 modules (0 task roots)"
        );
    }
}
