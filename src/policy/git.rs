//! git under the built-in rules:
//!
//! - `read-only`: `status`, `diff`, `log`, `show`, `branch` (listing), `tag` (listing),
//!   `rev-parse`, `ls-files`, `ls-tree`, `blame`, `remote` (`-v`, `get-url`), `config` (get and
//!   list), `describe`, `stash list|show`, `shortlog`, `reflog` (show), `cat-file`,
//!   `merge-base`, `show-ref`, `for-each-ref`, `count-objects`, `rev-list`, `grep`,
//!   `worktree list` — each with its listed flags (`git diff --output`, `--ext-diff`,
//!   `git grep -O` are not);
//! - `git-write`: `add` (paths inside the project), `commit` (`-m`, `-a`, never `--amend` or
//!   `--no-verify`), `switch -c NAME` / `checkout -b NAME`, and `push` of a named branch
//!   that is not a default branch (main, master, trunk, develop, …) to a named remote, without
//!   force in any spelling.
//!
//! Global options: `--no-pager`, `-P`. `-C`, `-c`, `--git-dir`, `--work-tree`,
//! `--exec-path` and the rest are not listed (`git -c core.pager=…` runs a program).
//!
//! Each subcommand's flags, the global options, the default branches and release lines, and
//! what a tag's name starts with are data in `rules/policy.json` (`flag_tables.git-*`,
//! `lists.git_global_options`, `lists.default_branches`, `lists.release_branch_prefixes`,
//! `lists.tag_prefixes`), and so are the spellings in which `branch`, `tag`, `config`,
//! `remote`, `stash`, `reflog` and `worktree` only inspect and `switch`/`checkout` only create
//! a branch (`argument_forms`, read by [`super::forms`]); what a refspec pushes is read here.
//!
//! Every git command runs only in the project's own repository, at its top, with no `cd`
//! before it (`own_repository`): a configuration the agent wrote can run any program.

use super::argv::{self, Parsed, Spec};
use super::data::{
    CURRENT_BRANCH_NAMES, DEFAULT_BRANCHES, FLAGS_GIT_ADD, FLAGS_GIT_COMMIT, FLAGS_GIT_PUSH, Forms,
    GIT_FILE_READING_FLAGS, GIT_GLOBAL_OPTIONS, GIT_PATTERN_FLAGS, GitOperands,
    PUSH_REFSPEC_REFUSED_PARTS, PUSH_REFSPEC_REFUSED_STARTS, RELEASE_BRANCH_PREFIXES, TAG_PREFIXES,
    argument_forms, git_inspection,
};
use super::forms::{Reading, valid_branch};
use super::line::{Blocked, Line};

pub fn judge(args: &[String], line: &Line<'_>) -> Result<&'static str, Blocked> {
    let mut i = 0;
    let mut elsewhere = false;
    while i < args.len() && args[i].starts_with('-') {
        match args[i].as_str() {
            option if GIT_GLOBAL_OPTIONS.contains(&option) => i += 1,
            "-C" if i + 1 < args.len() => {
                line.read(&args[i + 1])?;
                elsewhere = true;
                i += 2;
            }
            other => {
                return Err(Blocked::new(
                    "",
                    format!("git {other} is not a listed option"),
                ));
            }
        }
    }
    let Some(sub) = args.get(i) else {
        return Err(Blocked::new("", "git without a subcommand"));
    };
    own_repository(elsewhere, line)?;
    let rest = &args[i + 1..];
    let sub = sub.as_str();
    if let Some(result) = read_only(sub, rest, line) {
        result?;
        return Ok("read-only");
    }
    if elsewhere {
        return Err(Blocked::new(
            "",
            format!("git -C … {sub}: writes in another directory are not listed"),
        ));
    }
    match sub {
        "add" => add(rest, line),
        "commit" => commit(rest, line),
        "switch" | "checkout" => switch_create(sub, rest),
        "push" => push(rest),
        _ => Err(Blocked::new(
            "",
            format!("git {sub} is not on any harmless rule"),
        )),
    }?;
    Ok("git-write")
}

/// git runs programs its repository's configuration names (`core.fsmonitor` on `status`,
/// hooks, a pager, an external diff or textconv, a credential helper), so no git command is
/// harmless in a repository the agent may have written: only in the project's own, at its
/// top (`.git` there, which no approved write creates), without `-C`, a `cd` before it, or
/// a working directory below the project's top (a bare repository planted in a
/// subdirectory is found there first).
fn own_repository(elsewhere: bool, line: &Line<'_>) -> Result<(), Blocked> {
    let why = if elsewhere {
        "git -C: the repository there may be one the agent wrote, whose configuration runs programs"
    } else if !line.at_start() {
        "git after a cd: the repository there may be one the agent wrote, whose configuration runs programs"
    } else if !line.ctx.git_top {
        "git where the working directory is not a repository's top (or is not known): the repository found may be one the agent wrote"
    } else if line
        .ctx
        .project
        .as_ref()
        .is_some_and(|project| line.ctx.cwd.as_ref() != Some(project))
    {
        "git outside the project's top directory: the repository found may be one the agent wrote"
    } else {
        return Ok(());
    };
    Err(Blocked::new("", why))
}

fn parse<'a>(sub: &str, spec: &Spec, args: &'a [String]) -> Result<Parsed<'a>, Blocked> {
    argv::parse(spec, args).map_err(|flag| unlisted(sub, &flag.0))
}

/// The inspections: `None` when `sub` is not one. The flags of each are
/// `rules/policy.json`'s `flag_tables.git-*`; `branch`, `tag`, `config`, `remote`, `stash`,
/// `reflog` and `worktree` are inspections only in the spellings its `argument_forms` list.
fn read_only(sub: &str, args: &[String], line: &Line<'_>) -> Option<Result<(), Blocked>> {
    if let Some(forms) = git_forms(sub) {
        return match super::forms::read(forms, "git", args) {
            Reading::Holds => Some(Ok(())),
            Reading::NoForm => None,
            Reading::Refused(flag) => Some(Err(unlisted(sub, &flag))),
        };
    }
    let (spec, operands) = git_inspection(sub)?;
    Some(parse(sub, &spec, args).and_then(|parsed| inspected_paths(&parsed, operands, line)))
}

/// The `argument_forms` entry of an inspection read by its spellings (`git remote`, …).
fn git_forms(sub: &str) -> Option<&'static Forms> {
    match sub {
        "branch" | "tag" | "remote" | "config" | "stash" | "reflog" | "worktree" => {
            argument_forms(&format!("git {sub}"))
        }
        _ => None,
    }
}

fn unlisted(sub: &str, flag: &str) -> Blocked {
    Blocked::new("", format!("git {sub} {flag} is not a listed flag"))
}

/// An inspection's operands and the files its flags read, each readable as any path is.
fn inspected_paths(
    parsed: &Parsed<'_>,
    operands: GitOperands,
    line: &Line<'_>,
) -> Result<(), Blocked> {
    let paths: &[&str] = match operands {
        GitOperands::PatternThenPaths
            if !GIT_PATTERN_FLAGS
                .iter()
                .any(|f| parsed.values_of(f).next().is_some()) =>
        {
            parsed.operands.get(1..).unwrap_or(&[])
        }
        _ => &parsed.operands,
    };
    for value in GIT_FILE_READING_FLAGS
        .iter()
        .flat_map(|f| parsed.values_of(f))
    {
        line.read(value)?;
    }
    for operand in paths {
        match operands {
            GitOperands::Revisions => {}
            GitOperands::Paths | GitOperands::PatternThenPaths => line.read(operand)?,
            GitOperands::AfterColon => {
                if let Some((_, path)) = operand.split_once(':') {
                    line.read(path)?;
                }
            }
        }
    }
    Ok(())
}

fn add(args: &[String], line: &Line<'_>) -> Result<(), Blocked> {
    let parsed = parse("add", &FLAGS_GIT_ADD, args)?;
    for path in &parsed.operands {
        line.write(path, false)?;
    }
    Ok(())
}

fn commit(args: &[String], line: &Line<'_>) -> Result<(), Blocked> {
    let parsed = parse("commit", &FLAGS_GIT_COMMIT, args)?;
    let has_message = parsed.values_of("-m").next().is_some()
        || parsed.values_of("--message").next().is_some()
        || parsed.values_of("-F").next().is_some()
        || parsed.values_of("--file").next().is_some();
    if !has_message {
        return Err(Blocked::new("", "git commit without -m opens an editor"));
    }
    for file in parsed.values_of("-F").chain(parsed.values_of("--file")) {
        if file != "-" {
            line.read(file)?;
        }
    }
    for path in &parsed.operands {
        line.write(path, false)?;
    }
    Ok(())
}

/// `v1`, `v1.0.0`, `1.2.3-rc1`, `release-3`, `refs/tags/…`: spelled like a tag.
fn looks_like_tag(name: &str) -> bool {
    let name = name.strip_prefix("refs/heads/").unwrap_or(name);
    if name.starts_with("refs/tags/") {
        return true;
    }
    let rest = TAG_PREFIXES
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .unwrap_or(name);
    rest.chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// `git switch -c NAME [START]`, `git checkout -b NAME [START]`: a new branch, nothing lost
/// (the spellings are `argument_forms."git switch"` and `"git checkout"`).
fn switch_create(sub: &str, args: &[String]) -> Result<(), Blocked> {
    let Some(forms) = argument_forms(&format!("git {sub}")) else {
        return Err(Blocked::new(
            "",
            format!("git {sub} is not on any harmless rule"),
        ));
    };
    match super::forms::read(forms, "git", args) {
        Reading::Holds => Ok(()),
        Reading::Refused(flag) => Err(unlisted(sub, &flag)),
        Reading::NoForm => Err(Blocked::new(
            "",
            format!("git {sub}: only {} is listed", forms.listed),
        )),
    }
}

/// Is a branch name one of the shared default branches (or a release line)?
pub fn is_default_branch(name: &str) -> bool {
    let name = name.strip_prefix("refs/heads/").unwrap_or(name);
    DEFAULT_BRANCHES.contains(&name) || RELEASE_BRANCH_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// `git push [-u] REMOTE BRANCH[:BRANCH]…`: named branches that are not default branches,
/// no force in any spelling (`-f`, `--force*`, `+refspec`), no deletion (`:ref`,
/// `--delete`), no tags or mirrors.
fn push(args: &[String]) -> Result<(), Blocked> {
    let parsed = parse("push", &FLAGS_GIT_PUSH, args)?;
    let [remote, refspecs @ ..] = parsed.operands.as_slice() else {
        return Err(Blocked::new(
            "",
            "git push without a remote and branch pushes whatever the current branch is",
        ));
    };
    if refspecs.is_empty() {
        return Err(Blocked::new(
            "",
            "git push without a branch pushes whatever the current branch is",
        ));
    }
    if remote.is_empty()
        || !remote
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        return Err(Blocked::new(
            "",
            format!("git push to {remote}: only a named remote is listed"),
        ));
    }
    for refspec in refspecs {
        if PUSH_REFSPEC_REFUSED_STARTS
            .iter()
            .any(|s| refspec.starts_with(s))
            || PUSH_REFSPEC_REFUSED_PARTS
                .iter()
                .any(|p| refspec.contains(p))
        {
            return Err(Blocked::new(
                "",
                format!("git push {refspec}: a forced push or a delete"),
            ));
        }
        let (src, dst) = refspec.split_once(':').unwrap_or((refspec, refspec));
        let dst = dst.strip_prefix("refs/heads/").unwrap_or(dst);
        let current = CURRENT_BRANCH_NAMES.contains(&src);
        if current && !refspec.contains(':') {
            return Err(Blocked::new(
                "",
                "git push HEAD pushes whatever the current branch is",
            ));
        }
        if dst.starts_with("refs/")
            || !valid_branch(dst)
            || !valid_branch(src.strip_prefix("refs/heads/").unwrap_or(src)) && !current
        {
            return Err(Blocked::new(
                "",
                format!("git push {refspec}: not a branch"),
            ));
        }
        // A name is a branch or a tag only in the repository; one spelled like a release
        // (`v1.0.0`, `1.2`, `release-3`) is taken for a tag, which may start a release.
        if [src, dst].iter().any(|name| looks_like_tag(name)) {
            return Err(Blocked::new(
                "",
                format!(
                    "git push {refspec}: a tag (or a branch named like one) is a person's call"
                ),
            ));
        }
        if is_default_branch(dst) {
            return Err(Blocked::new(
                "",
                format!("git push to {dst}, a default branch, is a person's call"),
            ));
        }
    }
    Ok(())
}
