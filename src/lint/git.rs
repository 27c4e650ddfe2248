//! Transient files and git: are any tracked, and would git ignore them in every module? The
//! facts come from two `git` runs per task root (`ls-files` with a pathspec per transient
//! name, `check-ignore --no-index --stdin` for every module's transient paths), so every
//! ignore source git honours (nested .gitignore files, info/exclude, core.excludesFile,
//! negations) counts. Deciding what to report from the facts is a pure function.
//!
//! The two runs start before the modules are checked and are collected after, so git works
//! on the second core while autoctl reads the modules. Answers are streamed: memory is one
//! flag per (module, transient name), not a set of paths.

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::rules;
use super::{Finding, TRANSIENT_FILES};

/// What git says about a task root's transient files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Tracked transient files, relative to the root.
    pub tracked: Vec<PathBuf>,
    /// Whether git ignores `<module>/<transient>`, at `module * TRANSIENT_FILES.len() + name`.
    pub ignored: Vec<bool>,
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
    for (slot, transient) in TRANSIENT_FILES.iter().enumerate() {
        let missing: Vec<&OsString> = modules
            .iter()
            .enumerate()
            .filter(|(index, _)| {
                !facts
                    .ignored
                    .get(index * TRANSIENT_FILES.len() + slot)
                    .copied()
                    .unwrap_or(false)
            })
            .map(|(_, module)| module)
            .collect();
        if missing.is_empty() {
            continue;
        }
        let examples: Vec<String> = missing
            .iter()
            .take(3)
            .map(|module| {
                Path::new(module)
                    .join(transient)
                    .to_string_lossy()
                    .into_owned()
            })
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

/// The git questions about one task root, running while the modules are checked.
pub struct Pending {
    ls: Child,
    check: Option<CheckIgnore>,
}

struct CheckIgnore {
    child: Child,
    writer: JoinHandle<io::Result<()>>,
    reader: JoinHandle<anyhow::Result<Vec<bool>>>,
}

/// Start asking git about a task root. `Ok(None)` when the root is not in a git work tree;
/// `Err` when git cannot be run (the caller warns and skips the git rules).
pub fn start(root: &Path, modules: Arc<Vec<OsString>>) -> anyhow::Result<Option<Pending>> {
    if work_tree(root).is_none() {
        return Ok(None);
    }
    let mut ls = git(root);
    ls.args(["ls-files", "-z", "--cached", "--"]);
    for transient in TRANSIENT_FILES {
        ls.arg(format!(":(glob)**/{transient}"));
    }
    let ls = ls
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| anyhow::anyhow!("cannot run git: {err}"))?;
    if modules.is_empty() {
        return Ok(Some(Pending { ls, check: None }));
    }
    let mut child = git(root)
        .args(["check-ignore", "--no-index", "-z", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| anyhow::anyhow!("cannot run git: {err}"))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    // Git answers while it reads: feeding and reading on separate threads keeps a full pipe
    // on one side from blocking the other.
    let asked = Arc::clone(&modules);
    let writer = std::thread::spawn(move || {
        let mut buffered = io::BufWriter::new(&mut stdin);
        for module in asked.iter() {
            for transient in TRANSIENT_FILES {
                buffered.write_all(module.as_bytes())?;
                buffered.write_all(b"/")?;
                buffered.write_all(transient.as_bytes())?;
                buffered.write_all(b"\0")?;
            }
        }
        buffered.flush()
    });
    let reader = std::thread::spawn(move || read_ignored(stdout, &modules));
    Ok(Some(Pending {
        ls,
        check: Some(CheckIgnore {
            child,
            writer,
            reader,
        }),
    }))
}

impl Pending {
    /// Wait for git's answers.
    pub fn finish(self) -> anyhow::Result<Facts> {
        let listed = self
            .ls
            .wait_with_output()
            .map_err(|err| anyhow::anyhow!("git ls-files: {err}"))?;
        if !listed.status.success() {
            return Err(anyhow::anyhow!(git_failure("git ls-files", &listed.stderr)));
        }
        let tracked = split_nul(&listed.stdout);
        let Some(mut check) = self.check else {
            return Ok(Facts {
                tracked,
                ignored: Vec::new(),
            });
        };
        let ignored = check
            .reader
            .join()
            .map_err(|_| anyhow::anyhow!("git check-ignore: the reader panicked"))?;
        let written = check.writer.join();
        let mut stderr = Vec::new();
        if let Some(mut pipe) = check.child.stderr.take() {
            let _ = pipe.read_to_end(&mut stderr);
        }
        let status = check
            .child
            .wait()
            .map_err(|err| anyhow::anyhow!("git check-ignore: {err}"))?;
        // Exit 1 means "nothing is ignored", which is an answer, not a failure.
        if !matches!(status.code(), Some(0 | 1)) {
            return Err(anyhow::anyhow!(git_failure("git check-ignore", &stderr)));
        }
        if let Ok(Err(err)) = written {
            return Err(anyhow::anyhow!(
                "git check-ignore: cannot send paths: {err}"
            ));
        }
        Ok(Facts {
            tracked,
            ignored: ignored?,
        })
    }
}

/// Read check-ignore's answers (the ignored paths, in the order they were asked) into one
/// flag per asked path, walking the asked sequence alongside.
fn read_ignored(stdout: impl Read, modules: &[OsString]) -> anyhow::Result<Vec<bool>> {
    let total = modules.len() * TRANSIENT_FILES.len();
    let mut ignored = vec![false; total];
    let mut cursor = 0;
    let mut asked = Vec::new();
    for answer in BufReader::new(stdout).split(0) {
        let answer = answer.map_err(|err| anyhow::anyhow!("git check-ignore: {err}"))?;
        loop {
            if cursor >= total {
                return Err(anyhow::anyhow!(
                    "git check-ignore answered a path it was not asked: {}",
                    String::from_utf8_lossy(&answer)
                ));
            }
            asked.clear();
            asked.extend_from_slice(modules[cursor / TRANSIENT_FILES.len()].as_bytes());
            asked.push(b'/');
            asked.extend_from_slice(TRANSIENT_FILES[cursor % TRANSIENT_FILES.len()].as_bytes());
            cursor += 1;
            if asked == answer {
                ignored[cursor - 1] = true;
                break;
            }
        }
    }
    Ok(ignored)
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
        // a: all four ignored; b: all but .tmp-annotations.json ignored.
        let facts = Facts {
            tracked: vec![PathBuf::from("a/.auto-stop")],
            ignored: vec![true, true, true, true, true, true, true, false],
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
    fn answers_are_matched_to_questions_in_order() {
        let modules: Vec<OsString> = vec!["a".into(), "b\u{e9}".into()];
        let answers = "a/.auto-stop\0b\u{e9}/.auto-signal\0b\u{e9}/.tmp-annotations.json\0";
        assert_eq!(
            read_ignored(answers.as_bytes(), &modules).unwrap(),
            vec![false, true, false, false, true, false, false, true]
        );
        assert_eq!(read_ignored(&b""[..], &modules).unwrap(), vec![false; 8]);
        let err = read_ignored(&b"c/.auto-stop\0"[..], &modules).unwrap_err();
        assert!(err.to_string().contains("not asked: c/.auto-stop"), "{err}");
    }

    #[test]
    fn nul_separated_paths_keep_raw_bytes() {
        let paths = split_nul(b"a/.auto-signal\0b\xff/.auto-stop\0");
        assert_eq!(paths.len(), 2);
        assert_eq!(paths[1].as_os_str().as_bytes(), b"b\xff/.auto-stop");
    }
}
