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
//! Every git command runs only in the project's own repository, at its top, with no `cd`
//! before it (`own_repository`): a configuration the agent wrote can run any program.

use super::argv::{self, Parsed, Spec};
use super::line::{Blocked, Line};

/// Branch names that are a project's shared line of history.
pub const DEFAULT_BRANCHES: &[&str] = &[
    "main",
    "master",
    "trunk",
    "develop",
    "development",
    "dev",
    "default",
    "stable",
    "production",
    "prod",
    "staging",
    "release",
    "gh-pages",
    "HEAD",
];

pub fn judge(args: &[String], line: &Line<'_>) -> Result<&'static str, Blocked> {
    let mut i = 0;
    let mut elsewhere = false;
    while i < args.len() && args[i].starts_with('-') {
        match args[i].as_str() {
            "--no-pager" | "-P" | "--no-optional-locks" | "--literal-pathspecs" => i += 1,
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
    argv::parse(spec, args)
        .map_err(|flag| Blocked::new("", format!("git {sub} {flag} is not a listed flag")))
}

const DIFF_LONG: &[&str] = &[
    "stat",
    "stat=",
    "numstat",
    "shortstat",
    "name-only",
    "name-status",
    "cached",
    "staged",
    "color",
    "color=",
    "no-color",
    "word-diff",
    "word-diff=",
    "check",
    "ignore-all-space",
    "ignore-space-change",
    "ignore-blank-lines",
    "patch",
    "no-patch",
    "minimal",
    "patience",
    "histogram",
    "summary",
    "raw",
    "exit-code",
    "quiet",
    "find-renames",
    "no-renames",
    "merge-base",
    "relative",
    "text",
    "no-ext-diff",
    "no-textconv",
    "full-index",
    "binary",
    "abbrev",
    "abbrev=",
    "dirstat",
    "unified=",
    "compact-summary",
    "no-index",
];

const LOG_LONG: &[&str] = &[
    "oneline",
    "graph",
    "decorate",
    "decorate=",
    "all",
    "stat",
    "stat=",
    "patch",
    "no-patch",
    "name-only",
    "name-status",
    "follow",
    "reverse",
    "no-merges",
    "merges",
    "first-parent",
    "abbrev-commit",
    "no-decorate",
    "date-order",
    "topo-order",
    "color",
    "color=",
    "no-color",
    "shortstat",
    "numstat",
    "source",
    "full-history",
    "left-right",
    "cherry-pick",
    "boundary",
    "walk-reflogs",
    "branches",
    "tags",
    "remotes",
    "branches=",
    "ignore-all-space",
    "summary",
    "count",
];

const LOG_VALUED: &[&str] = &[
    "format",
    "pretty",
    "since",
    "until",
    "after",
    "before",
    "author",
    "committer",
    "grep",
    "max-count",
    "skip",
    "date",
    "diff-filter",
    "abbrev",
    "unified",
];

/// The inspections: `None` when `sub` is not one.
fn read_only(sub: &str, args: &[String], line: &Line<'_>) -> Option<Result<(), Blocked>> {
    let spec = |short, short_valued, long, long_valued, numeric| Spec {
        short,
        short_valued,
        long,
        long_valued,
        numeric,
        options_first: false,
    };
    let (spec, paths): (Spec, Paths) = match sub {
        "status" => (
            spec(
                "sbuvz",
                "",
                &[
                    "short",
                    "branch",
                    "porcelain",
                    "porcelain=",
                    "long",
                    "verbose",
                    "untracked-files",
                    "untracked-files=",
                    "ignored",
                    "ignored=",
                    "ahead-behind",
                    "no-ahead-behind",
                    "show-stash",
                    "renames",
                    "no-renames",
                ],
                &[],
                false,
            ),
            Paths::All,
        ),
        "diff" => (
            spec(
                "wbRauWz",
                "U",
                DIFF_LONG,
                &["unified", "diff-filter", "color-moved"],
                false,
            ),
            Paths::All,
        ),
        "log" | "whatchanged" => (spec("pszu", "nSGL", LOG_LONG, LOG_VALUED, true), Paths::All),
        "show" => (
            spec("psqz", "", LOG_LONG, LOG_VALUED, false),
            Paths::AfterColon,
        ),
        "shortlog" => (
            spec(
                "sne",
                "",
                &["summary", "numbered", "email", "all"],
                &["format"],
                false,
            ),
            Paths::All,
        ),
        "rev-list" => (spec("", "n", LOG_LONG, LOG_VALUED, true), Paths::All),
        "branch" => {
            let parsed = match parse(
                sub,
                &spec(
                    "arvl",
                    "",
                    &[
                        "list",
                        "all",
                        "remotes",
                        "verbose",
                        "show-current",
                        "no-color",
                        "color",
                        "ignore-case",
                        "column",
                        "no-column",
                    ],
                    &[
                        "contains",
                        "no-contains",
                        "merged",
                        "no-merged",
                        "format",
                        "sort",
                        "points-at",
                    ],
                    false,
                ),
                args,
            ) {
                Ok(parsed) => parsed,
                Err(err) => return Some(Err(err)),
            };
            if !(parsed.operands.is_empty() || parsed.has("-l") || parsed.has("--list")) {
                // `git branch NAME` creates a branch.
                return None;
            }
            return Some(Ok(()));
        }
        "tag" => {
            let parsed = match parse(
                sub,
                &spec(
                    "l",
                    "n",
                    &["list", "column", "no-column", "ignore-case"],
                    &[
                        "contains",
                        "no-contains",
                        "points-at",
                        "sort",
                        "merged",
                        "no-merged",
                        "format",
                    ],
                    false,
                ),
                args,
            ) {
                Ok(parsed) => parsed,
                Err(_) => return None,
            };
            if !(parsed.operands.is_empty() || parsed.has("-l") || parsed.has("--list")) {
                return None;
            }
            return Some(Ok(()));
        }
        "rev-parse" => (
            spec(
                "q",
                "",
                &[
                    "show-toplevel",
                    "git-dir",
                    "git-common-dir",
                    "absolute-git-dir",
                    "is-inside-work-tree",
                    "is-inside-git-dir",
                    "is-bare-repository",
                    "abbrev-ref",
                    "abbrev-ref=",
                    "short",
                    "short=",
                    "verify",
                    "symbolic-full-name",
                    "show-prefix",
                    "show-cdup",
                    "quiet",
                    "all",
                    "branches",
                    "tags",
                    "show-superproject-working-tree",
                ],
                &[],
                false,
            ),
            Paths::None,
        ),
        "ls-files" => (
            spec(
                "cdmoiksuvtz",
                "x",
                &[
                    "cached",
                    "deleted",
                    "modified",
                    "others",
                    "ignored",
                    "stage",
                    "unmerged",
                    "killed",
                    "exclude-standard",
                    "full-name",
                    "error-unmatch",
                    "directory",
                    "no-empty-directory",
                    "recurse-submodules",
                    "eol",
                ],
                &["exclude", "exclude-from"],
                false,
            ),
            Paths::All,
        ),
        "ls-tree" => (
            spec(
                "rdtlz",
                "",
                &[
                    "name-only",
                    "name-status",
                    "full-name",
                    "full-tree",
                    "long",
                    "abbrev=",
                    "format=",
                ],
                &[],
                false,
            ),
            Paths::All,
        ),
        "blame" => (
            spec(
                "wsefnpltbc",
                "L",
                &[
                    "porcelain",
                    "line-porcelain",
                    "show-email",
                    "show-name",
                    "show-number",
                    "incremental",
                    "root",
                ],
                &["date"],
                false,
            ),
            Paths::All,
        ),
        "remote" => {
            return match args
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice()
            {
                [] | ["-v"] | ["--verbose"] => Some(Ok(())),
                ["get-url", name] if !name.starts_with('-') => Some(Ok(())),
                _ => None,
            };
        }
        "config" => {
            let parsed = match parse(
                sub,
                &spec(
                    "lz",
                    "",
                    &[
                        "list",
                        "show-origin",
                        "show-scope",
                        "global",
                        "local",
                        "system",
                        "name-only",
                        "null",
                        "includes",
                    ],
                    &["get", "get-all", "get-regexp", "type", "default"],
                    false,
                ),
                args,
            ) {
                Ok(parsed) => parsed,
                Err(_) => return None,
            };
            let gets = ["--get", "--get-all", "--get-regexp"]
                .iter()
                .any(|f| parsed.values_of(f).next().is_some());
            let lists = parsed.has("-l") || parsed.has("--list");
            return match parsed.operands.as_slice() {
                [] if gets || lists => Some(Ok(())),
                ["get", _] | ["list"] if !gets && !lists => Some(Ok(())),
                _ => None,
            };
        }
        "describe" => (
            spec(
                "",
                "",
                &[
                    "tags",
                    "always",
                    "dirty",
                    "long",
                    "all",
                    "contains",
                    "exact-match",
                ],
                &["abbrev", "match", "exclude", "candidates", "dirty"],
                false,
            ),
            Paths::None,
        ),
        "stash" => {
            return match args.first().map(String::as_str) {
                Some("list") => Some(
                    parse(
                        sub,
                        &spec("pszu", "n", LOG_LONG, LOG_VALUED, true),
                        &args[1..],
                    )
                    .map(|_| ()),
                ),
                Some("show") => Some(
                    parse(
                        sub,
                        &spec(
                            "pu",
                            "",
                            &[
                                "stat",
                                "patch",
                                "name-only",
                                "name-status",
                                "include-untracked",
                            ],
                            &[],
                            false,
                        ),
                        &args[1..],
                    )
                    .map(|_| ()),
                ),
                _ => None,
            };
        }
        "reflog" => {
            let rest = match args.first().map(String::as_str) {
                Some("show") => &args[1..],
                Some(first) if !first.starts_with('-') => return None,
                _ => args,
            };
            return Some(
                parse(sub, &spec("pszu", "n", LOG_LONG, LOG_VALUED, true), rest).map(|_| ()),
            );
        }
        "cat-file" => (spec("ptse", "", &[], &[], false), Paths::AfterColon),
        "merge-base" => (
            spec(
                "a",
                "",
                &["all", "is-ancestor", "fork-point", "octopus"],
                &[],
                false,
            ),
            Paths::None,
        ),
        "show-ref" => (
            spec(
                "sqd",
                "",
                &[
                    "heads",
                    "tags",
                    "verify",
                    "hash",
                    "quiet",
                    "head",
                    "dereference",
                ],
                &[],
                false,
            ),
            Paths::None,
        ),
        "for-each-ref" => (
            spec(
                "",
                "",
                &[],
                &[
                    "format",
                    "sort",
                    "count",
                    "contains",
                    "merged",
                    "no-merged",
                    "points-at",
                ],
                false,
            ),
            Paths::None,
        ),
        "count-objects" => (
            spec("vH", "", &["verbose", "human-readable"], &[], false),
            Paths::None,
        ),
        "grep" => (
            spec(
                "nilvwEFcohIPHrz",
                "eABCf",
                &[
                    "line-number",
                    "ignore-case",
                    "invert-match",
                    "word-regexp",
                    "extended-regexp",
                    "fixed-strings",
                    "count",
                    "only-matching",
                    "files-with-matches",
                    "name-only",
                    "files-without-match",
                    "cached",
                    "untracked",
                    "no-index",
                    "recurse-submodules",
                    "heading",
                    "break",
                    "full-name",
                    "perl-regexp",
                    "all-match",
                    "column",
                    "show-function",
                    "function-context",
                ],
                &[
                    "max-depth",
                    "context",
                    "after-context",
                    "before-context",
                    "threads",
                    "and",
                    "or",
                    "not",
                ],
                true,
            ),
            Paths::PatternThen,
        ),
        "worktree" => {
            return match args.first().map(String::as_str) {
                Some("list") if args[1..].iter().all(|a| a == "--porcelain" || a == "-v") => {
                    Some(Ok(()))
                }
                _ => None,
            };
        }
        "version" | "--version" => (spec("", "", &["build-options"], &[], false), Paths::None),
        _ => return None,
    };
    Some(parse(sub, &spec, args).and_then(|parsed| {
        let operands: &[&str] = match paths {
            Paths::PatternThen
                if parsed.values_of("-e").next().is_none()
                    && parsed.values_of("-f").next().is_none() =>
            {
                parsed.operands.get(1..).unwrap_or(&[])
            }
            _ => &parsed.operands,
        };
        for value in parsed
            .values_of("-f")
            .chain(parsed.values_of("--exclude-from"))
        {
            line.read(value)?;
        }
        for operand in operands {
            match paths {
                Paths::None => {}
                Paths::All | Paths::PatternThen => line.read(operand)?,
                Paths::AfterColon => {
                    if let Some((_, path)) = operand.split_once(':') {
                        line.read(path)?;
                    }
                }
            }
        }
        Ok(())
    }))
}

/// What a git inspection's operands may name.
#[derive(Debug, Clone, Copy)]
enum Paths {
    /// Revisions only.
    None,
    /// Revisions and paths (a secret is never shown).
    All,
    /// A pattern first (`git grep PATTERN PATHS`).
    PatternThen,
    /// `REV:PATH` objects: the path after the colon.
    AfterColon,
}

fn add(args: &[String], line: &Line<'_>) -> Result<(), Blocked> {
    let spec = Spec {
        short: "AuvnN",
        long: &[
            "all",
            "update",
            "verbose",
            "dry-run",
            "intent-to-add",
            "no-all",
            "renormalize",
        ],
        ..Spec::default()
    };
    let parsed = parse("add", &spec, args)?;
    for path in &parsed.operands {
        line.write(path, false)?;
    }
    Ok(())
}

fn commit(args: &[String], line: &Line<'_>) -> Result<(), Blocked> {
    let spec = Spec {
        short: "aqs",
        short_valued: "mF",
        long: &[
            "all",
            "quiet",
            "signoff",
            "allow-empty",
            "no-edit",
            "verbose",
            "no-signoff",
            "cleanup=",
            "untracked-files",
            "untracked-files=",
        ],
        long_valued: &["message", "file", "author", "date", "trailer"],
        ..Spec::default()
    };
    let parsed = parse("commit", &spec, args)?;
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
    let rest = name
        .strip_prefix(['v', 'V'])
        .or_else(|| name.strip_prefix("release-"))
        .or_else(|| name.strip_prefix("release/"))
        .unwrap_or(name);
    rest.chars().next().is_some_and(|c| c.is_ascii_digit())
}

fn valid_branch(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && !name.starts_with('/')
        && !name.ends_with('/')
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("@{")
        && name
            .chars()
            .all(|c| !c.is_control() && !" ~^:?*[\\".contains(c))
}

/// `git switch -c NAME [START]`, `git checkout -b NAME [START]`: a new branch, nothing lost.
fn switch_create(sub: &str, args: &[String]) -> Result<(), Blocked> {
    let create: &[&str] = if sub == "switch" {
        &["-c", "--create"]
    } else {
        &["-b"]
    };
    let mut rest: Vec<&str> = args.iter().map(String::as_str).collect();
    rest.retain(|a| !matches!(*a, "-q" | "--quiet" | "--no-track"));
    match rest.as_slice() {
        [flag, name] | [flag, name, _] if create.contains(flag) && valid_branch(name) => {
            if let [_, _, start] = rest.as_slice()
                && start.starts_with('-')
            {
                return Err(Blocked::new(
                    "",
                    format!("git {sub} {start} is not a listed flag"),
                ));
            }
            Ok(())
        }
        _ => Err(Blocked::new(
            "",
            format!("git {sub}: only {} NAME [START] is listed", create[0]),
        )),
    }
}

/// Is a branch name one of the shared default branches (or a release line)?
pub fn is_default_branch(name: &str) -> bool {
    let name = name.strip_prefix("refs/heads/").unwrap_or(name);
    DEFAULT_BRANCHES.contains(&name) || name.starts_with("release/") || name.starts_with("release-")
}

/// `git push [-u] REMOTE BRANCH[:BRANCH]…`: named branches that are not default branches,
/// no force in any spelling (`-f`, `--force*`, `+refspec`), no deletion (`:ref`,
/// `--delete`), no tags or mirrors.
fn push(args: &[String]) -> Result<(), Blocked> {
    let spec = Spec {
        short: "uqvn",
        long: &[
            "set-upstream",
            "quiet",
            "verbose",
            "dry-run",
            "progress",
            "no-progress",
        ],
        ..Spec::default()
    };
    let parsed = parse("push", &spec, args)?;
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
        if refspec.starts_with('+') || refspec.starts_with(':') || refspec.contains('*') {
            return Err(Blocked::new(
                "",
                format!("git push {refspec}: a forced push or a delete"),
            ));
        }
        let (src, dst) = refspec.split_once(':').unwrap_or((refspec, refspec));
        let dst = dst.strip_prefix("refs/heads/").unwrap_or(dst);
        if src == "HEAD" && !refspec.contains(':') {
            return Err(Blocked::new(
                "",
                "git push HEAD pushes whatever the current branch is",
            ));
        }
        if dst.starts_with("refs/")
            || !valid_branch(dst)
            || !valid_branch(src.strip_prefix("refs/heads/").unwrap_or(src)) && src != "HEAD"
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
