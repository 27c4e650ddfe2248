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

/// A path from a tool call, resolved as far as the context allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// An absolute path with `.` and `..` folded.
    Absolute(PathBuf),
    /// A relative path when the working directory is unknown (a screen); it stays below the
    /// working directory (no `..` climbs out of it).
    Below(PathBuf),
    /// Not knowable: `~user`, a `..` that climbs out of an unknown directory, an empty word.
    Unknown,
}

/// Resolve `word` (a path as written, quotes already undone) against the context.
pub fn resolve(word: &str, ctx: &Context) -> Place {
    resolve_in(word, ctx.cwd.as_deref(), ctx)
}

/// [`resolve`] against a given working directory (a `cd` earlier in the same command line).
pub fn resolve_in(word: &str, cwd: Option<&Path>, ctx: &Context) -> Place {
    if word.is_empty() || word.contains('\0') {
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
    !SYSTEM_PREFIXES.iter().any(|p| root.starts_with(p))
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

/// System directories: never a project, never written.
const SYSTEM_PREFIXES: &[&str] = &[
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/dev",
    "/proc",
    "/sys",
    "/run",
    "/var/lib",
    "/var/log",
    "/var/spool",
    "/var/run",
    "/opt",
    "/srv",
    "/root",
    "/snap",
];

/// Why a write to this place is never harmless, if it is sensitive: the agent's own settings
/// and hooks, git internals, CI, shell start-up files, credentials, system directories and
/// autoctl's own configuration and state (each can run code or leak secrets later).
pub fn sensitive(place: &Place, ctx: &Context) -> Option<&'static str> {
    let path = match place {
        Place::Absolute(path) => {
            if SYSTEM_PREFIXES.iter().any(|p| path.starts_with(p)) {
                return Some("a system directory");
            }
            if ctx
                .protected
                .iter()
                .any(|p| path.starts_with(fold(p)) || fold(p).starts_with(path))
            {
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
    let names: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        let next = names.get(i + 1).copied();
        let what = match *name {
            ".git" => Some("git internals and hooks"),
            ".claude" | ".claude.json" | ".mcp.json" => {
                Some("the agent's own settings, hooks and MCP servers")
            }
            ".autoctl" => Some("autoctl's loop state"),
            ".husky" | ".githooks" | ".pre-commit-config.yaml" | ".pre-commit-config.yml" => {
                Some("git hooks")
            }
            ".circleci"
            | ".gitlab-ci.yml"
            | ".gitlab-ci.yaml"
            | ".travis.yml"
            | "azure-pipelines.yml"
            | "Jenkinsfile"
            | ".buildkite" => Some("CI configuration"),
            ".github" if matches!(next, Some("workflows") | Some("actions")) => {
                Some("CI configuration")
            }
            ".vscode" | ".devcontainer" | ".idea" => Some("editor settings that run tasks"),
            ".gitconfig" | ".gitmodules" => Some("git configuration"),
            ".config"
                if matches!(
                    next,
                    Some("fish")
                        | Some("nushell")
                        | Some("autoctl")
                        | Some("git")
                        | Some("gh")
                        | Some("systemd")
                        | Some("autostart")
                ) =>
            {
                Some("shell or tool configuration")
            }
            ".cargo" if next.is_some_and(|n| n.starts_with("config")) => {
                Some("cargo configuration (it can run any program)")
            }
            ".local" if next == Some("bin") => Some("programs on PATH"),
            _ if SHELL_RC.contains(name) => Some("a shell start-up file"),
            _ => None,
        };
        if what.is_some() {
            return what;
        }
    }
    None
}

/// Why reading this place would show a secret, if it would: keys, tokens and credential files.
pub fn secret(place: &Place) -> Option<&'static str> {
    match place {
        Place::Absolute(path) => {
            let text = path.to_string_lossy();
            if matches!(
                text.as_ref(),
                "/etc/shadow" | "/etc/gshadow" | "/etc/sudoers" | "/etc/master.passwd"
            ) || (text.starts_with("/proc/") && text.ends_with("/environ"))
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
    let names: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        let next = names.get(i + 1).copied();
        let lower = name.to_ascii_lowercase();
        let what = match lower.as_str() {
            ".ssh" | ".gnupg" | ".aws" | ".azure" | ".kube" | ".password-store" => {
                Some("keys and credentials")
            }
            ".docker" if next.is_some_and(|n| n.starts_with("config")) => {
                Some("registry credentials")
            }
            ".config" if matches!(next, Some("gcloud") | Some("op") | Some("hub")) => {
                Some("cloud credentials")
            }
            ".netrc" | ".pgpass" | ".npmrc" | ".pypirc" | ".git-credentials" | ".yarnrc"
            | ".yarnrc.yml" | ".envrc" | ".credentials.json" | ".my.cnf" | ".boto" | ".s3cfg"
            | ".vault-token" => Some("a credentials file"),
            ".cargo" | ".gem" if next.is_some_and(|n| n.starts_with("credentials")) => {
                Some("a credentials file")
            }
            ".env" => Some("environment secrets (.env)"),
            _ if lower.starts_with(".env.") => Some("environment secrets (.env)"),
            "authorized_keys" | "known_hosts" => Some("ssh keys"),
            _ if lower.starts_with("id_rsa")
                || lower.starts_with("id_dsa")
                || lower.starts_with("id_ecdsa")
                || lower.starts_with("id_ed25519") =>
            {
                Some("an ssh key")
            }
            _ if [".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx"]
                .iter()
                .any(|ext| lower.ends_with(ext)) =>
            {
                Some("a key file")
            }
            _ if i + 1 == names.len()
                && (lower == "credentials"
                    || lower.starts_with("credentials.")
                    || lower == "secrets"
                    || lower.starts_with("secrets.")
                    || lower == "secret"
                    || lower.starts_with("secret.")) =>
            {
                Some("a credentials file")
            }
            _ => None,
        };
        if what.is_some() {
            return what;
        }
    }
    None
}

const SHELL_RC: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".mkshrc",
    ".inputrc",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".pam_environment",
    ".curlrc",
    ".wgetrc",
];

/// Paths inside dependency trees: installed code, not the project's own (`python3
/// node_modules/rimraf/bin.js .` is not "a script of the project").
pub fn in_dependencies(place: &Place) -> bool {
    let path = match place {
        Place::Absolute(path) | Place::Below(path) => path,
        Place::Unknown => return true,
    };
    path.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some(
                "node_modules"
                    | ".venv"
                    | "venv"
                    | "site-packages"
                    | "dist-packages"
                    | ".tox"
                    | ".nox"
                    | "vendor"
                    | "third_party"
                    | "bower_components"
            )
        )
    })
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
