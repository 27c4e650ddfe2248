//! Finding what to check under the PATHs and reading it: the I/O edge of the lint.
//!
//! A PATH is a task root (a directory named `TASK` or `AiTasks`), a module (a directory in a
//! task root, or one holding `.index.md` front matter, `.target.md` or a task-ai
//! `.status.json`), or anything else, which is walked (walkdir, sorted, not following
//! symlinks unless asked) to find the task roots in it. The walk skips `.git`, `.worktrees`
//! and other hidden directories, `node_modules` and `target`. Inside a task root a symlinked
//! module is followed one level (it is a module wherever it points); a link that loops or
//! dangles is reported.
//!
//! Reading is bounded and lazy: per module one directory listing, `.index.md`, and only the
//! files a rule needs. Whatever cannot be read is reported (a finding inside a task root, a
//! warning outside) and the walk goes on.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, anyhow};
use walkdir::WalkDir;

use super::module;
use super::{Context, Entry, EntryKind, FileState, ModuleFs};
use super::{Finding, ModuleNames, ROOT_NAMES, deps, git, root_index, rules};
use crate::fsx::{self, Bounded};
use crate::output::progress::Progress;
use crate::protocol::{index, status, target};

/// Directories the repository walk never enters (besides hidden ones).
const SKIPPED_DIRS: &[&str] = &["node_modules", "target"];

/// How to walk and what to check.
#[derive(Debug, Clone)]
pub struct Options {
    /// The routing table's name and statuses (`index-status`).
    pub table: String,
    pub statuses: Vec<String>,
    /// Follow symlinks while looking for task roots.
    pub follow: bool,
    /// Run the git checks (transient files tracked or not ignored).
    pub git: bool,
    /// Show paths found by walking the current directory without a leading `./`.
    pub strip_dot: bool,
}

/// What a lint run found.
#[derive(Debug, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    /// Task roots and modules whose directories could be listed.
    pub roots: usize,
    pub modules: usize,
    /// Directories or files that could not be read (findings or warnings).
    pub failures: usize,
    /// Diagnostics about things outside task roots (walk errors, git unavailable).
    pub warnings: Vec<String>,
}

/// What a PATH is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Root(PathBuf),
    Module(PathBuf),
    /// A file where a task root expects a module directory.
    FileInRoot(PathBuf),
    Tree(PathBuf),
}

/// Check everything under `paths`. A PATH that does not exist is an error before anything
/// is checked.
pub fn lint(paths: &[PathBuf], options: &Options) -> Result<Report> {
    let mut targets = Vec::new();
    for path in paths {
        targets.push(classify(path)?);
    }
    let mut run = Run {
        options,
        outcome: Report::default(),
        done: HashSet::new(),
        progress: Progress::start("linting"),
    };
    for target in targets {
        match target {
            Target::Root(root) => run.root(&root),
            Target::Module(dir) => run.single_module(&dir),
            Target::FileInRoot(path) => run.outcome.findings.push(not_a_directory(&path)),
            Target::Tree(dir) => run.tree(&dir),
        }
    }
    Ok(run.outcome)
}

fn classify(path: &Path) -> Result<Target> {
    let meta = fs::metadata(path).map_err(|err| match err.kind() {
        io::ErrorKind::NotFound => anyhow!("{}: no such file or directory", path.display()),
        _ => anyhow!("{}: {err}", path.display()),
    })?;
    let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = canonical.file_name().unwrap_or_default();
    let parent_is_root = canonical
        .parent()
        .and_then(Path::file_name)
        .is_some_and(is_root_name);
    if !meta.is_dir() {
        let dot = name.to_string_lossy().starts_with('.');
        return Ok(match path.parent() {
            Some(_) if parent_is_root && !dot => Target::FileInRoot(path.to_path_buf()),
            // A file of a module or a root (TASK/a/.index.md): check what it belongs to.
            Some(parent) if !parent.as_os_str().is_empty() => classify(parent)?,
            _ => classify(Path::new("."))?,
        });
    }
    Ok(if is_root_name(name) {
        Target::Root(path.to_path_buf())
    } else if parent_is_root || looks_like_module(path) {
        Target::Module(path.to_path_buf())
    } else {
        Target::Tree(path.to_path_buf())
    })
}

fn is_root_name(name: &OsStr) -> bool {
    ROOT_NAMES.iter().any(|root| name == *root)
}

fn looks_like_module(dir: &Path) -> bool {
    let index_has_front_matter = fsx::read_bounded(&dir.join(index::FILE_NAME), 4)
        .is_ok_and(|read| matches!(read, Bounded::Complete(bytes) if bytes.starts_with(b"---")));
    index_has_front_matter || dir.join(target::FILE_NAME).is_file() || status::locate(dir).is_some()
}

fn not_a_directory(path: &Path) -> Finding {
    Finding::new(
        &rules::MODULE_NOT_DIRECTORY,
        path,
        format!(
            "{:?} is a file where the task root expects a module directory",
            path.file_name().unwrap_or_default().to_string_lossy()
        ),
    )
}

struct Run<'a> {
    options: &'a Options,
    outcome: Report,
    /// Canonical paths of roots and modules already checked (PATHs may overlap).
    done: HashSet<PathBuf>,
    /// Modules checked and where the walk is, on a terminal's stderr when it takes a while.
    progress: Progress,
}

impl Run<'_> {
    fn first_time(&mut self, path: &Path) -> bool {
        let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if canonical
            .parent()
            .is_some_and(|parent| self.done.contains(parent))
        {
            return false;
        }
        self.done.insert(canonical)
    }

    fn tidy(&self, path: &Path) -> PathBuf {
        if self.options.strip_dot
            && let Ok(stripped) = path.strip_prefix(Component::CurDir)
            && !stripped.as_os_str().is_empty()
        {
            return stripped.to_path_buf();
        }
        path.to_path_buf()
    }

    fn unreadable(&mut self, path: &Path, err: &io::Error, what: &str) {
        self.outcome.failures += 1;
        self.outcome.findings.push(Finding::new(
            &rules::UNREADABLE,
            path,
            format!("cannot {what}: {err}"),
        ));
    }

    /// Walk a tree for task roots.
    fn tree(&mut self, dir: &Path) {
        let mut walk = WalkDir::new(dir)
            .follow_links(self.options.follow)
            .sort_by_file_name()
            .into_iter();
        while let Some(next) = walk.next() {
            let entry = match next {
                Ok(entry) => entry,
                Err(err) => {
                    self.outcome.failures += 1;
                    let path = err.path().map(|p| self.tidy(p)).unwrap_or_default();
                    let why = match err.loop_ancestor() {
                        Some(ancestor) => {
                            format!("symlink loop back to {}", self.tidy(ancestor).display())
                        }
                        None => err
                            .io_error()
                            .map_or_else(|| err.to_string(), io::Error::to_string),
                    };
                    self.outcome
                        .warnings
                        .push(format!("{}: skipped: {why}", path.display()));
                    continue;
                }
            };
            if !entry.file_type().is_dir() || entry.depth() == 0 {
                continue;
            }
            if self.progress.shown() {
                self.progress.detail(entry.path().display().to_string());
            }
            let name = entry.file_name();
            let text = name.to_string_lossy();
            if text.starts_with('.') || SKIPPED_DIRS.contains(&text.as_ref()) {
                walk.skip_current_dir();
            } else if is_root_name(name) {
                let root = self.tidy(entry.path());
                walk.skip_current_dir();
                self.root(&root);
            }
        }
    }

    /// Check a task root: its entries, its listing, every module, the dependency graph and
    /// the git state of its transient files.
    fn root(&mut self, root: &Path) {
        if !self.first_time(root) {
            return;
        }
        let listing = match fs::read_dir(root) {
            Ok(listing) => listing,
            Err(err) => return self.unreadable(root, &err, "list the task root"),
        };
        self.outcome.roots += 1;
        if self.progress.shown() {
            self.progress
                .detail(format!("modules of {}", root.display()));
        }
        let mut modules: Vec<OsString> = Vec::new();
        for entry in listing {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    self.unreadable(root, &err, "list the task root");
                    continue;
                }
            };
            let name = entry.file_name();
            if name.as_encoded_bytes().starts_with(b".") {
                continue;
            }
            let path = root.join(&name);
            let is_dir = match entry.file_type() {
                Ok(kind) if kind.is_dir() => true,
                Ok(kind) if kind.is_symlink() => match fs::metadata(&path) {
                    Ok(meta) => meta.is_dir(),
                    Err(err) => {
                        self.unreadable(&path, &err, "follow the symlink");
                        continue;
                    }
                },
                Ok(_) => false,
                Err(err) => {
                    self.unreadable(&path, &err, "stat");
                    continue;
                }
            };
            if is_dir {
                modules.push(name);
            } else {
                self.outcome.findings.push(not_a_directory(&path));
            }
        }
        modules.sort();
        let modules = Arc::new(modules);
        // Git answers about the transient files while the modules are read.
        let pending = if self.options.git {
            match git::start(root, Arc::clone(&modules)) {
                Ok(pending) => pending,
                Err(why) => {
                    self.git_skipped(root, &why.to_string());
                    None
                }
            }
        } else {
            None
        };
        let names = ModuleNames::new(
            modules
                .iter()
                .map(|m| m.to_string_lossy().into_owned())
                .collect(),
        );
        root_index::check(
            root,
            root_index::open(root),
            &names,
            &mut self.outcome.findings,
        );
        // Only modules with dependencies can be on a cycle: the graph stays small.
        let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut located: HashMap<String, (usize, usize)> = HashMap::new();
        for name in modules.iter() {
            let dir = root.join(name);
            if let Some(summary) = self.module(&dir, name, Some(&names))
                && !summary.deps.is_empty()
            {
                let key = name.to_string_lossy().into_owned();
                if let Some(at) = summary.deps_at {
                    located.insert(key.clone(), at);
                }
                graph.insert(key, summary.deps);
            }
        }
        for cycle in deps::cycles(&graph) {
            self.push_cycle(root, &cycle, located.get(&cycle[0]).copied());
        }
        if let Some(pending) = pending {
            match pending.finish() {
                Ok(facts) => git::findings(root, &modules, &facts, &mut self.outcome.findings),
                Err(why) => self.git_skipped(root, &why.to_string()),
            }
        }
    }

    fn git_skipped(&mut self, root: &Path, why: &str) {
        self.outcome
            .warnings
            .push(format!("{}: git checks skipped: {why}", root.display()));
    }

    fn push_cycle(&mut self, root: &Path, cycle: &[String], at: Option<(usize, usize)>) {
        let mut finding = Finding::new(
            &rules::DEPENDS_CYCLE,
            root.join(&cycle[0]).join(index::FILE_NAME),
            format!("depends_on forms a cycle: {}", deps::render(cycle)),
        );
        if let Some((line, column)) = at {
            finding = finding.at(line, Some(column));
        }
        self.outcome.findings.push(finding);
    }

    /// Check one module directory; `None` when it cannot be listed.
    fn module(
        &mut self,
        dir: &Path,
        name: &OsStr,
        modules: Option<&ModuleNames>,
    ) -> Option<super::Summary> {
        let entries = match list(dir) {
            Ok(entries) => entries,
            Err(err) => {
                self.unreadable(dir, &err, "list the module");
                return None;
            }
        };
        self.outcome.modules += 1;
        self.progress.tick();
        let ctx = Context {
            table: &self.options.table,
            statuses: &self.options.statuses,
            modules,
        };
        let before = self.outcome.findings.len();
        let summary = module::check(
            dir,
            name,
            &entries,
            &DirFs { dir },
            &ctx,
            &mut self.outcome.findings,
        );
        self.outcome.failures += self.outcome.findings[before..]
            .iter()
            .filter(|f| f.rule.id == rules::UNREADABLE.id)
            .count();
        Some(summary)
    }

    /// A module given as a PATH: its siblings (when its parent can be listed) stand in for
    /// the root's module set, and cycles through it are followed into them.
    fn single_module(&mut self, dir: &Path) {
        if !self.first_time(dir) {
            return;
        }
        let canonical = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let name = canonical.file_name().unwrap_or_default().to_os_string();
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| {
                canonical
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default()
            });
        let siblings: Option<ModuleNames> = fs::read_dir(&parent).ok().map(|listing| {
            ModuleNames::new(
                listing
                    .filter_map(Result::ok)
                    .filter(|e| !e.file_name().as_encoded_bytes().starts_with(b"."))
                    .filter(|e| fs::metadata(e.path()).is_ok_and(|m| m.is_dir()))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect(),
            )
        });
        let Some(summary) = self.module(dir, &name, siblings.as_ref()) else {
            return;
        };
        let own = name.to_string_lossy().into_owned();
        // Follow depends_on through the siblings to find cycles through this module.
        let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut queue: Vec<String> = summary.deps.clone();
        graph.insert(own.clone(), summary.deps.clone());
        while let Some(next) = queue.pop() {
            if graph.contains_key(&next) {
                continue;
            }
            let deps = sibling_deps(&parent.join(&next));
            queue.extend(deps.iter().cloned());
            graph.insert(next, deps);
        }
        for cycle in deps::cycles(&graph) {
            if let Some(position) = cycle.iter().position(|m| *m == own) {
                // Show the cycle from this module, and locate it in this module's index.
                let mut rotated = cycle[position..].to_vec();
                rotated.extend_from_slice(&cycle[..position]);
                let mut finding = Finding::new(
                    &rules::DEPENDS_CYCLE,
                    dir.join(index::FILE_NAME),
                    format!("depends_on forms a cycle: {}", deps::render(&rotated)),
                );
                if let Some((line, column)) = summary.deps_at {
                    finding = finding.at(line, Some(column));
                }
                self.outcome.findings.push(finding);
            }
        }
    }
}

/// The module names a sibling depends on (best effort: unreadable or broken indexes have
/// none; their own findings come when they are checked).
fn sibling_deps(dir: &Path) -> Vec<String> {
    let FileState::Bytes(bytes) = read_state(&dir.join(index::FILE_NAME)) else {
        return Vec::new();
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Vec::new();
    };
    let Ok(map) = index::parse_front_matter(text) else {
        return Vec::new();
    };
    map.get("depends_on")
        .and_then(|v| v.as_array())
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str())
                .filter_map(|d| {
                    let d = d.trim();
                    d.strip_prefix("./").unwrap_or(d).split('/').next()
                })
                .filter(|d| !d.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// A module directory's entries with their kinds (no stat calls: the kind comes from the
/// directory listing).
fn list(dir: &Path) -> io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let kind = match entry.file_type() {
            Ok(kind) if kind.is_dir() => EntryKind::Dir,
            Ok(kind) if kind.is_file() => EntryKind::File,
            Ok(kind) if kind.is_symlink() => EntryKind::Symlink,
            _ => EntryKind::Other,
        };
        entries.push(Entry::new(entry.file_name(), kind));
    }
    Ok(entries)
}

fn read_state(path: &Path) -> FileState {
    match fsx::read_bounded(path, fsx::DOCUMENT_LIMIT) {
        Ok(Bounded::Complete(bytes)) => FileState::Bytes(bytes),
        Ok(Bounded::TooLarge { limit }) => FileState::TooLarge { limit },
        Err(err) if err.kind() == io::ErrorKind::NotFound => FileState::Missing,
        Err(err) => FileState::Failed(err.to_string()),
    }
}

/// A module directory on disk.
struct DirFs<'a> {
    dir: &'a Path,
}

impl ModuleFs for DirFs<'_> {
    fn read(&self, relative: &str) -> FileState {
        read_state(&self.dir.join(relative))
    }

    fn list(&self, relative: &str) -> io::Result<Vec<Entry>> {
        list(&self.dir.join(relative))
    }
}
