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
//! `remote`, `stash`, `reflog` and `worktree` only inspect, `switch`/`checkout` only create
//! a branch and `commit` has its message (`argument_forms`, read by [`super::forms`]); and
//! how `git push` is read: the remote's characters (`lists.remote_name_characters`), the
//! `SRC:DST` split (`lists.refspec_separators`), the marks that force or delete
//! (`lists.push_refspec_refused_*`), `HEAD` (`lists.current_branch_names`) and the ref
//! namespaces (`lists.branch_ref_namespaces`, `tag_ref_namespaces`, `ref_namespaces`). The
//! order of those readings, and the reason each refusal gives, are here.
//!
//! Long options are read as spelled in full. git's own parser takes any unambiguous prefix
//! (`git push --de` is `--delete`, `git reset --h` is `--hard`), so an abbreviation is an
//! unlisted flag: never approved. The destructive set reads git's long options from the
//! shortest prefix git accepts (docs/policy.md, "Abbreviated long options").
//!
//! Every git command runs only in the project's own repository, at its top, with no `cd`
//! before it (`own_repository`): a configuration the agent wrote can run any program.

use super::argv::{self, Parsed, Spec};
use super::data::{
    BRANCH_REF_NAMESPACES, COMMIT_MESSAGE_FILE_FLAGS, CURRENT_BRANCH_NAMES, DEFAULT_BRANCHES,
    FLAGS_GIT_ADD, FLAGS_GIT_COMMIT, FLAGS_GIT_PUSH, Forms, GIT_FILE_READING_FLAGS,
    GIT_GLOBAL_OPTIONS, GIT_PATTERN_FLAGS, GitOperands, PUSH_REFSPEC_REFUSED_PARTS,
    PUSH_REFSPEC_REFUSED_STARTS, REF_NAMESPACES, REFSPEC_SEPARATORS, RELEASE_BRANCH_PREFIXES,
    REMOTE_NAME_CHARACTERS, STDIN_FILE_OPERANDS, TAG_PREFIXES, TAG_REF_NAMESPACES, argument_forms,
    git_inspection,
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
    argv::parse(spec, args).map_err(|flag| unlisted(sub, &flag.to_string()))
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

/// `git commit` with its message given (`argument_forms."git commit"`: `-m`, `-F FILE` …);
/// the message file (`lists.commit_message_file_flags`) is read as any path is, `-` (the
/// input, `lists.stdin_file_operands`) excepted, and the paths it commits as written.
fn commit(args: &[String], line: &Line<'_>) -> Result<(), Blocked> {
    let Some(forms) = argument_forms("git commit") else {
        return Err(Blocked::new("", "git commit is not on any harmless rule"));
    };
    match super::forms::read(forms, "git", args) {
        Reading::Holds => {}
        Reading::Refused(flag) => return Err(unlisted("commit", &flag)),
        Reading::NoForm => {
            return Err(Blocked::new("", "git commit without -m opens an editor"));
        }
    }
    let parsed = parse("commit", &FLAGS_GIT_COMMIT, args)?;
    for file in COMMIT_MESSAGE_FILE_FLAGS
        .iter()
        .flat_map(|f| parsed.values_of(f))
    {
        if !STDIN_FILE_OPERANDS.contains(&file) {
            line.read(file)?;
        }
    }
    for path in &parsed.operands {
        line.write(path, false)?;
    }
    Ok(())
}

/// `name` without the namespace a branch's full name starts with (`refs/heads/`,
/// `lists.branch_ref_namespaces`).
fn branch_name(name: &str) -> &str {
    BRANCH_REF_NAMESPACES
        .iter()
        .find_map(|ns| name.strip_prefix(ns))
        .unwrap_or(name)
}

/// `v1`, `v1.0.0`, `1.2.3-rc1`, `release-3`, `refs/tags/…`: spelled like a tag.
fn looks_like_tag(name: &str) -> bool {
    let name = branch_name(name);
    if TAG_REF_NAMESPACES.iter().any(|ns| name.starts_with(ns)) {
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
    let name = branch_name(name);
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
    if !remote_name(remote) {
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
        let split = split_refspec(refspec);
        let (src, dst) = split.unwrap_or((refspec, refspec));
        let dst = branch_name(dst);
        let current = CURRENT_BRANCH_NAMES.contains(&src);
        if current && split.is_none() {
            return Err(Blocked::new(
                "",
                "git push HEAD pushes whatever the current branch is",
            ));
        }
        if REF_NAMESPACES.iter().any(|ns| dst.starts_with(ns))
            || !valid_branch(dst)
            || !valid_branch(branch_name(src)) && !current
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

/// A remote named by its name (`origin`, `my-fork`): ASCII letters, digits and the characters
/// of `lists.remote_name_characters`, never a URL or a path.
fn remote_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || REMOTE_NAME_CHARACTERS
                    .iter()
                    .any(|w| w.chars().eq(std::iter::once(c)))
        })
}

/// A refspec `SRC:DST` split at the first of `lists.refspec_separators`; `None` when it has
/// none (it pushes SRC to the branch of the same name).
fn split_refspec(refspec: &str) -> Option<(&str, &str)> {
    let at = REFSPEC_SEPARATORS
        .iter()
        .filter_map(|sep| refspec.find(sep).map(|at| (at, sep.len())))
        .min()?;
    Some((&refspec[..at.0], &refspec[at.0 + at.1..]))
}
