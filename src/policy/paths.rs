//! Where a path in a tool call points, read lexically (no file system access: the policy is a
//! pure function, and a hook must not wait on a slow disk): `~` and relative paths resolved,
//! `.` and `..` folded, then three questions — is it inside the project, is it a sensitive
//! path no write rule may touch, is it a secret no read rule may show.
//!
//! Symbolic links are not followed. A link inside the project that points out of it makes a
//! "write inside the project" land outside; the agent cannot plant one through an approved
//! rule (`ln` is on no harmless rule), so only links already in the repository can do that.

use std::path::{Component, Path, PathBuf};

use super::Context;
use super::data::{
    BUILD_DIRS, DEPENDENCY_DIRS, READ_FILES, READ_ROOTS, SECRET_NAMES, SECRET_SAMPLES,
    SENSITIVE_NAMES, SOURCE_EXTENSIONS, SOURCE_NAMES, SYSTEM_DIRS, SYSTEM_SECRET_FILES, name_hit,
};

/// A path from a tool call, resolved as far as the context allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// An absolute path with `.` and `..` folded.
    Absolute(PathBuf),
    /// A relative path when the working directory is unknown (a screen); it stays below the
    /// working directory (no `..` climbs out of it).
    Below(PathBuf),
    /// Not knowable: `~user`, a `..` that climbs out of an unknown directory, an empty word, a
    /// word longer than [`PATH_MAX`].
    Unknown,
}

/// The longest path a system call takes, in bytes: Linux's `PATH_MAX` (4,096) less its
/// terminating NUL. A longer word names no file a tool can open (`ENAMETOOLONG`), so it is not
/// resolved ([`Place::Unknown`], never harmless) — and not read component by component, which
/// for a generated 944 KB path of 94,000 components took 60 ms (issue 23: at most 10 ms for
/// any input).
pub const PATH_MAX: usize = 4095;

/// Resolve `word` (a path as written, quotes already undone) against the context.
pub fn resolve(word: &str, ctx: &Context) -> Place {
    resolve_in(word, ctx.cwd.as_deref(), ctx)
}

/// [`resolve`] against a given working directory (a `cd` earlier in the same command line).
pub fn resolve_in(word: &str, cwd: Option<&Path>, ctx: &Context) -> Place {
    if word.is_empty() || word.len() > PATH_MAX || word.contains('\0') {
        return Place::Unknown;
    }
    let (base, rest): (Option<&Path>, &str) = if word == "~" || word.starts_with("~/") {
        match ctx.home.as_deref() {
            Some(home) => (Some(home), word.strip_prefix('~').unwrap_or(word)),
            None => return Place::Unknown,
        }
    } else if word.starts_with('~') {
        return Place::Unknown;
    } else if word.starts_with('/') {
        (Some(Path::new("/")), word)
    } else {
        match cwd {
            Some(dir) => (Some(dir), word),
            None => (None, word),
        }
    };
    let rest = rest.trim_start_matches('/');
    match base {
        Some(base) => {
            let joined = if rest.is_empty() {
                base.to_path_buf()
            } else {
                base.join(rest)
            };
            Place::Absolute(fold(&joined))
        }
        None => {
            let mut out = PathBuf::new();
            for component in Path::new(rest).components() {
                match component {
                    Component::CurDir => {}
                    Component::ParentDir => {
                        if !out.pop() {
                            return Place::Unknown;
                        }
                    }
                    Component::Normal(part) => out.push(part),
                    Component::RootDir | Component::Prefix(_) => return Place::Unknown,
                }
            }
            Place::Below(out)
        }
    }
}

/// Fold `.` and `..` in an absolute path (`/..` is `/`).
pub fn fold(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Directories that are never a project, however the agent was started: writing "inside" `/`
/// or the home directory itself would be writing anywhere.
fn is_project_root(root: &Path, ctx: &Context) -> bool {
    let depth = root
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count();
    if depth < 2 || ctx.home.as_deref() == Some(root) {
        return false;
    }
    !SYSTEM_DIRS.iter().any(|p| root.starts_with(p))
}

/// Is the place inside the project: below the working directory or the project directory
/// (each a real project directory, see `is_project_root`), or below an unknown working
/// directory?
pub fn inside_project(place: &Place, ctx: &Context) -> bool {
    match place {
        Place::Absolute(path) => ctx
            .roots()
            .any(|root| is_project_root(root, ctx) && path.starts_with(root)),
        Place::Below(_) => true,
        Place::Unknown => false,
    }
}

/// Is the place under the temporary directory (`/tmp`, `/var/tmp`)?
pub fn in_temp(place: &Place) -> bool {
    match place {
        Place::Absolute(path) => {
            (path.starts_with("/tmp") || path.starts_with("/var/tmp"))
                && path != Path::new("/tmp")
                && path != Path::new("/var/tmp")
        }
        _ => false,
    }
}

/// Why a write to this place is never harmless, if it is sensitive: the agent's own settings
/// and hooks, git internals, CI, shell start-up files, credentials, system directories and
/// autoctl's own configuration and state (each can run code or leak secrets later).
pub fn sensitive(place: &Place, ctx: &Context) -> Option<&'static str> {
    let path = match place {
        Place::Absolute(path) => {
            let folded = fold_path(path);
            if SYSTEM_DIRS.iter().any(|p| folded.starts_with(p)) {
                return Some("a system directory");
            }
            if ctx.protected.iter().any(|p| {
                let p = fold_path(&fold(p));
                folded.starts_with(&p) || p.starts_with(&folded)
            }) {
                return Some("autoctl's own configuration or state");
            }
            path.as_path()
        }
        Place::Below(path) => path.as_path(),
        Place::Unknown => return Some("a path that cannot be resolved"),
    };
    if let Some(why) = secret_components(path) {
        return Some(why);
    }
    name_hit(SENSITIVE_NAMES, &folded_names(path))
}

/// One fold for every comparison with a sensitive or secret name, on every platform (macOS's
/// and Windows' default file systems ignore case, so `.Claude/settings.json` is
/// `.claude/settings.json` there): Unicode lower case, the characters case folding maps to
/// ASCII letters (`ſ` → s, `ß` → ss, the Kelvin sign → k, the Latin ligatures), fullwidth
/// forms as their ASCII selves, and no combining marks or invisible characters (a decomposed
/// `é` or a zero-width space cannot hide `.claude`). It folds more than any one file system
/// does, which errs towards calling a name sensitive: folding is never used to decide that a
/// path is inside the project or the temporary directory.
pub fn fold_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            'ſ' => out.push('s'),
            'ß' | 'ẞ' => out.push_str("ss"),
            'ﬀ' => out.push_str("ff"),
            'ﬁ' => out.push_str("fi"),
            'ﬂ' => out.push_str("fl"),
            'ﬃ' => out.push_str("ffi"),
            'ﬄ' => out.push_str("ffl"),
            'ﬅ' | 'ﬆ' => out.push_str("st"),
            '\u{0300}'..='\u{036f}'
            | '\u{1ab0}'..='\u{1aff}'
            | '\u{1dc0}'..='\u{1dff}'
            | '\u{20d0}'..='\u{20ff}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{fe20}'..='\u{fe2f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2060}'..='\u{2064}'
            | '\u{feff}'
            | '\u{ad}' => {}
            '\u{ff01}'..='\u{ff5e}' => {
                let ascii = char::from_u32(c as u32 - 0xff01 + 0x21).unwrap_or(c);
                out.extend(ascii.to_lowercase());
            }
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// A path's normal components as text, each folded by [`fold_name`] (a component that is not
/// UTF-8 is read lossily: its replacement characters match no name).
fn folded_names(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(fold_name(&part.to_string_lossy())),
            _ => None,
        })
        .collect()
}

/// An absolute path with each component folded by [`fold_name`].
fn fold_path(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    out.extend(folded_names(path));
    out
}

/// Why reading this place would show a secret, if it would: keys, tokens and credential files.
pub fn secret(place: &Place) -> Option<&'static str> {
    match place {
        Place::Absolute(path) => {
            let folded = fold_path(path);
            let text = folded.to_string_lossy();
            if SYSTEM_SECRET_FILES.contains(&text.as_ref())
                || (text.starts_with("/proc/") && text.ends_with("/environ"))
            {
                return Some("a system secret");
            }
            secret_components(path)
        }
        Place::Below(path) => secret_components(path),
        Place::Unknown => None,
    }
}

/// Secrets named by a path's components (shared by [`secret`] and [`sensitive`]).
fn secret_components(path: &Path) -> Option<&'static str> {
    name_hit(SECRET_NAMES, &folded_names(path))
}

/// Does a shell pattern (`*`, `?`, `[…]`) match `name`? A leading `*`, `?` or `[` does not
/// match a leading dot, as a shell's does not. Linear in practice: one backtrack point.
/// The pattern comes as characters, collected once by a caller that tries it on many names
/// (a pattern of a tool call may be as long as the call).
pub fn glob_matches(p: &[char], name: &str) -> bool {
    let n: Vec<char> = name.chars().collect();
    if n.first() == Some(&'.') && p.first().is_some_and(|c| matches!(c, '*' | '?' | '[')) {
        return false;
    }
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' => {
                    if let Some(close) = p[pi + 1..].iter().position(|&c| c == ']') {
                        let class = &p[pi + 1..pi + 1 + close];
                        let (negated, class) = match class.first() {
                            Some('!' | '^') => (true, &class[1..]),
                            _ => (false, class),
                        };
                        let mut hit = false;
                        let mut k = 0;
                        while k < class.len() {
                            if k + 2 < class.len() && class[k + 1] == '-' {
                                hit |= class[k] <= n[ni] && n[ni] <= class[k + 2];
                                k += 3;
                            } else {
                                hit |= class[k] == n[ni];
                                k += 1;
                            }
                        }
                        if hit != negated {
                            pi += close + 2;
                            ni += 1;
                            continue;
                        }
                    } else if n[ni] == '[' {
                        pi += 1;
                        ni += 1;
                        continue;
                    }
                }
                c if c == n[ni] => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, sn)) => {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Why reading what `word` names may show a secret: the place itself, or, for a pattern,
/// any secret name one of its components may match (`.env*`, `/proc/*/environ`,
/// `~/.ssh/*`, `*.pem`).
pub fn secret_pattern(place: &Place, word: &str) -> Option<&'static str> {
    if let Some(why) = secret(place) {
        return Some(why);
    }
    if !word.contains(['*', '?', '[']) {
        return None;
    }
    let path = match place {
        Place::Absolute(path) | Place::Below(path) => path,
        Place::Unknown => return None,
    };
    for name in folded_names(path) {
        if !name.contains(['*', '?', '[']) {
            continue;
        }
        let pattern: Vec<char> = name.chars().collect();
        if SECRET_SAMPLES.iter().any(|s| glob_matches(&pattern, s)) {
            return Some("what a pattern may match: a secret's name");
        }
    }
    None
}

/// Is `place` below one of the [`READ_ROOTS`] or one of the [`READ_FILES`]?
fn in_read_root(place: &Place, ctx: &Context) -> bool {
    let Place::Absolute(path) = place else {
        return false;
    };
    if READ_FILES.iter().any(|f| path == Path::new(f)) {
        return true;
    }
    READ_ROOTS.iter().any(|root| {
        let root = match root.strip_prefix("~/") {
            Some(rest) => match &ctx.home {
                Some(home) => home.join(rest),
                None => return false,
            },
            None => PathBuf::from(root),
        };
        path.starts_with(&root)
    })
}

/// May a rule read `place`: inside the project (or below an unknown working directory), the
/// temporary directory, or one of the [`READ_ROOTS`]? (Never a secret: see
/// [`secret_pattern`].)
pub fn readable(place: &Place, ctx: &Context) -> bool {
    // The temporary directory itself too (`ls /tmp`): what is in it is readable already.
    let temp_root = |p: &Path| p == Path::new("/tmp") || p == Path::new("/var/tmp");
    inside_project(place, ctx)
        || in_temp(place)
        || matches!(place, Place::Absolute(p) if temp_root(p))
        || in_read_root(place, ctx)
}

/// Is the place in one of the project's [`BUILD_DIRS`] (the first name below a project root,
/// or below an unknown working directory)?
pub fn in_build_dir(place: &Place, ctx: &Context) -> bool {
    let first = |rel: &Path| {
        rel.components().next().is_some_and(|c| {
            BUILD_DIRS.contains(&c.as_os_str().to_string_lossy().as_ref())
                && rel.components().count() > 1
        })
    };
    match place {
        Place::Absolute(path) => ctx
            .roots()
            .filter_map(|root| path.strip_prefix(root).ok())
            .any(first),
        Place::Below(rel) => first(rel),
        Place::Unknown => false,
    }
}

/// Is the place's name one of a source or configuration file (by a [`SOURCE_EXTENSIONS`]
/// extension, or a name without one such as `Makefile`)? Unknown places are.
pub fn source_like(place: &Place) -> bool {
    let path = match place {
        Place::Absolute(path) | Place::Below(path) => path,
        Place::Unknown => return true,
    };
    let name = path
        .file_name()
        .map(|n| fold_name(&n.to_string_lossy()))
        .unwrap_or_default();
    match name.rsplit_once('.') {
        Some((_, ext)) => SOURCE_EXTENSIONS.contains(&ext),
        None => SOURCE_NAMES.contains(&name.as_str()),
    }
}

/// Paths inside dependency trees: installed code, not the project's own (`python3
/// node_modules/rimraf/bin.js .` is not "a script of the project").
pub fn in_dependencies(place: &Place) -> bool {
    let path = match place {
        Place::Absolute(path) | Place::Below(path) => path,
        Place::Unknown => return true,
    };
    folded_names(path)
        .iter()
        .any(|name| DEPENDENCY_DIRS.contains(&name.as_str()))
}

/// The place as text for a reason (`src/main.rs`, `/etc/hosts`).
pub fn show(place: &Place) -> String {
    match place {
        Place::Absolute(path) | Place::Below(path) => path.display().to_string(),
        Place::Unknown => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context {
        Context {
            cwd: Some(PathBuf::from("/home/dev/proj")),
            project: None,
            home: Some(PathBuf::from("/home/dev")),
            protected: vec![PathBuf::from("/home/dev/.config/autoctl")],
            git_top: true,
        }
    }

    #[test]
    fn paths_resolve_lexically() {
        let c = ctx();
        assert_eq!(
            resolve("src/../a.rs", &c),
            Place::Absolute("/home/dev/proj/a.rs".into())
        );
        assert_eq!(
            resolve("~/.bashrc", &c),
            Place::Absolute("/home/dev/.bashrc".into())
        );
        assert_eq!(resolve("~root/x", &c), Place::Unknown);
        assert_eq!(resolve("/a/../../b", &c), Place::Absolute("/b".into()));
        let screen = Context { cwd: None, ..ctx() };
        assert_eq!(resolve("a/./b", &screen), Place::Below("a/b".into()));
        assert_eq!(resolve("../x", &screen), Place::Unknown);
        // No system call takes a longer path: not resolved, so never harmless.
        let long = |n: usize| format!("src/{}", "a".repeat(n - 4));
        assert_eq!(
            resolve(&long(PATH_MAX), &c),
            Place::Absolute(format!("/home/dev/proj/{}", long(PATH_MAX)).into())
        );
        assert_eq!(resolve(&long(PATH_MAX + 1), &c), Place::Unknown);
    }

    #[test]
    fn inside_the_project_means_below_a_real_project_directory() {
        let c = ctx();
        assert!(inside_project(&resolve("src/x.rs", &c), &c));
        assert!(!inside_project(&resolve("../other/x.rs", &c), &c));
        assert!(!inside_project(&resolve("/home/dev/projection", &c), &c));
        for cwd in ["/", "/home/dev", "/etc/x", "/tmp"] {
            let c = Context {
                cwd: Some(PathBuf::from(cwd)),
                ..ctx()
            };
            assert!(!inside_project(&resolve("a.txt", &c), &c), "{cwd}");
        }
    }

    #[test]
    fn sensitive_and_secret_paths() {
        let c = ctx();
        for path in [
            ".git/config",
            ".git/hooks/pre-commit",
            ".claude/settings.json",
            ".mcp.json",
            ".github/workflows/ci.yml",
            "~/.bashrc",
            "~/.ssh/config",
            ".env",
            ".env.local",
            "/etc/hosts",
            "~/.config/autoctl/policy.json",
            ".autoctl/loop.json",
            "certs/server.pem",
            "config/credentials.json",
            ".cargo/config.toml",
            ".husky/pre-push",
        ] {
            assert!(sensitive(&resolve(path, &c), &c).is_some(), "{path}");
        }
        for path in [
            "src/main.rs",
            ".gitignore",
            ".github/ISSUE_TEMPLATE.md",
            "docs/environment.md",
            "tests/ssh_config.rs",
            "README.md",
        ] {
            assert_eq!(sensitive(&resolve(path, &c), &c), None, "{path}");
        }
        for path in ["~/.ssh/id_rsa", ".env", "/etc/shadow", "/proc/self/environ"] {
            assert!(secret(&resolve(path, &c)).is_some(), "{path}");
        }
        for path in ["/etc/hosts", "src/env.rs", ".gitignore"] {
            assert_eq!(secret(&resolve(path, &c)), None, "{path}");
        }
    }
}
