//! Transient files and git: are any tracked, and would git ignore them in every module? The
//! facts come from two `git` runs per task root (`ls-files` with a pathspec per transient
//! name, `check-ignore --no-index --stdin` for every module's transient paths), so every
//! ignore source git honours (nested .gitignore files, info/exclude, core.excludesFile,
//! negations) counts. Deciding what to report from the facts is a pure function.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::rules;
use super::{Finding, TRANSIENT_FILES};

/// What git says about a task root's transient files (paths relative to the root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub tracked: Vec<PathBuf>,
    pub ignored: HashSet<PathBuf>,
}

/// The findings the facts imply for a root with these module directories.
pub fn findings(root: &Path, modules: &[OsString], facts: &Facts, out: &mut Vec<Finding>) {
    for path in &facts.tracked {
        out.push(Finding::new(
            &rules::TRANSIENT_TRACKED,
            root.join(path),
            "a transient file is tracked by git; remove it with `git rm --cached` and ignore it",
        ));
    }
    for transient in TRANSIENT_FILES {
        let missing: Vec<PathBuf> = modules
            .iter()
            .map(|module| Path::new(module).join(transient))
            .filter(|path| !facts.ignored.contains(path))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let examples: Vec<String> = missing
            .iter()
            .take(3)
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        out.push(Finding::new(
            &rules::TRANSIENT_NOT_IGNORED,
            root,
            format!(
                "git does not ignore {transient} in {} of {} module{} (e.g. {}); add {transient} to .gitignore",
                missing.len(),
                modules.len(),
                if modules.len() == 1 { "" } else { "s" },
                examples.join(", ")
            ),
        ));
    }
}

/// The git work tree `dir` is in, if any (looking for `.git` in it and its ancestors).
pub fn work_tree(dir: &Path) -> Option<PathBuf> {
    let absolute = std::fs::canonicalize(dir).ok()?;
    absolute
        .ancestors()
        .find(|ancestor| ancestor.join(".git").exists())
        .map(Path::to_path_buf)
}

/// Ask git about a task root. `Ok(None)` when the root is not in a git work tree; `Err` when
/// git is missing or fails (the caller warns and skips the git rules).
pub fn query(root: &Path, modules: &[OsString]) -> Result<Option<Facts>, String> {
    if work_tree(root).is_none() {
        return Ok(None);
    }
    let mut ls = git(root);
    ls.args(["ls-files", "-z", "--cached", "--"]);
    for transient in TRANSIENT_FILES {
        ls.arg(format!(":(glob)**/{transient}"));
    }
    let listed = ls
        .output()
        .map_err(|err| format!("cannot run git: {err}"))?;
    if !listed.status.success() {
        return Err(git_failure("git ls-files", &listed.stderr));
    }
    let tracked = split_nul(&listed.stdout);

    let mut input = Vec::new();
    for module in modules {
        for transient in TRANSIENT_FILES {
            input.extend_from_slice(module.as_bytes());
            input.push(b'/');
            input.extend_from_slice(transient.as_bytes());
            input.push(0);
        }
    }
    let mut check = git(root);
    check
        .args(["check-ignore", "--no-index", "-z", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = check
        .spawn()
        .map_err(|err| format!("cannot run git: {err}"))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // Feed git from another thread: it answers while it reads, and a full stdout pipe would
    // otherwise block both sides.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let answered = child
        .wait_with_output()
        .map_err(|err| format!("git check-ignore: {err}"))?;
    let _ = writer.join();
    // Exit 1 means "nothing is ignored", which is an answer, not a failure.
    if !matches!(answered.status.code(), Some(0 | 1)) {
        return Err(git_failure("git check-ignore", &answered.stderr));
    }
    Ok(Some(Facts {
        tracked,
        ignored: split_nul(&answered.stdout).into_iter().collect(),
    }))
}

fn git(root: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotePath=false"])
        .stdin(Stdio::null());
    command
}

fn split_nul(bytes: &[u8]) -> Vec<PathBuf> {
    bytes
        .split(|b| *b == 0)
        .filter(|part| !part.is_empty())
        .map(|part| PathBuf::from(OsString::from_vec(part.to_vec())))
        .collect()
}

fn git_failure(what: &str, stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    format!(
        "{what} failed: {}",
        text.lines().next().unwrap_or("no message")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracked_files_and_uncovered_names_become_findings() {
        let modules: Vec<OsString> = vec!["a".into(), "b".into()];
        let facts = Facts {
            tracked: vec![PathBuf::from("a/.auto-stop")],
            ignored: [
                "a/.auto-signal",
                "b/.auto-signal",
                "a/.auto-stop",
                "b/.auto-stop",
                "a/.tmp-annotations.json",
            ]
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        };
        let mut out = Vec::new();
        findings(Path::new("TASK"), &modules, &facts, &mut out);
        let got: Vec<(&str, String)> = out
            .iter()
            .map(|f| (f.rule.id, f.path.display().to_string()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("transient-tracked", "TASK/a/.auto-stop".to_string()),
                ("transient-not-ignored", "TASK".to_string()),
            ]
        );
        assert!(
            out[1]
                .message
                .contains(".tmp-annotations.json in 1 of 2 modules (e.g. b/.tmp-annotations.json)"),
            "{}",
            out[1].message
        );
    }

    #[test]
    fn nul_separated_paths_keep_raw_bytes() {
        let paths = split_nul(b"a/.auto-signal\0b\xff/.auto-stop\0");
        assert_eq!(paths.len(), 2);
        assert_eq!(paths[1].as_os_str().as_bytes(), b"b\xff/.auto-stop");
    }
}
