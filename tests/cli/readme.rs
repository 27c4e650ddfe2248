//! The README cannot drift: every ```console block in README.md and in the reference pages
//! under docs/ is a transcript that this test runs. Lines starting with `$ ` are commands (a line ending in `\`, a here-document or an
//! unfinished `for`/`while`/`if`/`{` continues on the next lines); the lines after a command,
//! up to the next `$ `, are what it prints (stdout and stderr together, on a pseudo-terminal as
//! a person sees them: what a carriage return redrew and escape sequences are not compared).
//! A command must exit 0 unless its line says `# exit N`.
//!
//! Matching is by line, with runs of spaces and tabs read as one space (the README aligns
//! with spaces what autoctl separates with tabs), and `…` standing for any text: inside a
//! line it matches any characters, a line of only `…` matches any number of lines.
//!
//! Each `## ` section runs in its own sandbox, from an empty working directory, in one bash
//! process (so a section's commands share their shell variables, like a person's terminal):
//! a temporary HOME (autoctl's state goes to its default place under it), a private tmux
//! server (TMUX_TMPDIR; tmux's own defaults, as a person has them), no AUTOCTL_*
//! variables, and a PATH that starts with autoctl and a stand-in `claude`
//! (examples/stand-in/claude: it runs `examples/fake-agent.sh` for `/ai-cli-task auto DIR`
//! and never talks to any model). Blocks marked ```sh are not run: the README says what they
//! need.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const README: &str = include_str!("../../README.md");

/// The documents whose console blocks run: the README, then every page under docs/.
fn documents() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![("README.md".to_string(), README.to_string())];
    let mut pages: Vec<_> = fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    for page in pages {
        let name = page.strip_prefix(root).unwrap().display().to_string();
        docs.push((name, fs::read_to_string(&page).unwrap()));
    }
    docs
}

/// The longest a section may run (the getting-started loop takes a few seconds).
const SECTION_LIMIT: Duration = Duration::from_secs(120);

#[derive(Debug)]
struct Transcript {
    /// The document's line number of the `$ ` line.
    line: usize,
    command: String,
    expected: Vec<String>,
    exit: i32,
}

#[derive(Debug)]
struct Section {
    /// The document the section is in (README.md, docs/NAME.md).
    file: String,
    title: String,
    commands: Vec<Transcript>,
}

/// Whether bash reads `text` as unfinished (an open loop, `if`, brace or quote).
fn unfinished(text: &str) -> bool {
    let out = Command::new("bash")
        .args(["-n", "-c", text])
        .output()
        .expect("bash runs");
    String::from_utf8_lossy(&out.stderr).contains("unexpected end of file")
}

/// The here-document delimiter a command line opens, if any (`<<'EOF'`, `<<EOF`, `<<-EOF`).
fn heredoc(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line[at + 2..].trim_start_matches('-').trim_start();
    let word: String = rest
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

fn parse(file: &str, readme: &str) -> Vec<Section> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut sections: Vec<Section> = Vec::new();
    let mut i = 0;
    let mut title = String::from("(top)");
    while i < lines.len() {
        let line = lines[i];
        if let Some(heading) = line.strip_prefix("## ") {
            title = heading.trim().to_string();
        }
        if line.trim_start().starts_with("```") && line.trim() != "```console" {
            // Skip any other fenced block whole (its lines may look like headings).
            i += 1;
            while i < lines.len() && !lines[i].trim_start().starts_with("```") {
                i += 1;
            }
            i += 1;
            continue;
        }
        if line.trim() != "```console" {
            i += 1;
            continue;
        }
        if sections.last().is_none_or(|s| s.title != title) {
            sections.push(Section {
                file: file.to_string(),
                title: title.clone(),
                commands: Vec::new(),
            });
        }
        let section = sections.last_mut().unwrap();
        i += 1;
        while i < lines.len() && lines[i].trim() != "```" {
            let Some(first) = lines[i].strip_prefix("$ ") else {
                panic!(
                    "{file}:{}: output before any `$ ` command in a console block",
                    i + 1
                );
            };
            let start = i;
            let mut command = first.to_string();
            i += 1;
            loop {
                if let Some(word) = heredoc(command.lines().last().unwrap_or("")) {
                    while i < lines.len() && lines[i] != word {
                        command.push('\n');
                        command.push_str(lines[i]);
                        i += 1;
                    }
                    command.push('\n');
                    command.push_str(&word);
                    i += 1;
                } else if (command.ends_with('\\') || unfinished(&command))
                    && i < lines.len()
                    && lines[i].trim() != "```"
                {
                    command.push('\n');
                    command.push_str(lines[i]);
                    i += 1;
                } else {
                    break;
                }
            }
            let mut expected = Vec::new();
            while i < lines.len() && lines[i].trim() != "```" && !lines[i].starts_with("$ ") {
                expected.push(lines[i].to_string());
                i += 1;
            }
            let exit = command
                .lines()
                .next_back()
                .and_then(|last| last.split_once("# exit "))
                .and_then(|(_, code)| {
                    code.split(|c: char| !c.is_ascii_digit())
                        .next()?
                        .parse()
                        .ok()
                })
                .unwrap_or(0);
            section.commands.push(Transcript {
                line: start + 1,
                command,
                expected,
                exit,
            });
        }
        i += 1;
    }
    sections
}

/// One line as compared: trailing space dropped, runs of blanks read as one space.
fn squash(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn line_matches(pattern: &str, actual: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    if parts.len() == 1 {
        return pattern == actual;
    }
    let mut rest = actual;
    for (n, part) in parts.iter().enumerate() {
        let part = part.trim();
        if n == 0 {
            let Some(after) = rest.strip_prefix(part) else {
                return false;
            };
            rest = after;
        } else if n == parts.len() - 1 {
            return rest.trim_end().ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

fn lines_match(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "…" => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            !actual.is_empty() && line_matches(first, &actual[0]) && lines_match(rest, &actual[1..])
        }
    }
}

/// The stand-in `claude` (examples/stand-in/claude), first on the section's PATH.
fn fake_claude(bin: &Path) {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/stand-in/claude");
    std::os::unix::fs::symlink(fixture, bin.join("claude")).unwrap();
}

struct Ran {
    outputs: Vec<(Vec<String>, Option<i32>)>,
    timed_out: bool,
}

/// The unprivileged user (nobody) a root test run also runs every section as, so each
/// example is proven to work for someone without root's home, PATH or permissions.
const UNPRIVILEGED: u32 = crate::util::NOBODY;

/// A command run as `uid` (through setpriv) when that is not who runs the test.
fn as_user(uid: Option<u32>, program: &str) -> Command {
    match uid {
        Some(uid) => crate::util::as_user(uid, program),
        None => Command::new(program),
    }
}

fn run_section(section: &Section, uid: Option<u32>) -> Ran {
    let sandbox = tempfile::Builder::new()
        .prefix("autoctl-readme-")
        .tempdir()
        .unwrap();
    let root = sandbox.path();
    for sub in ["home", "work", "bin", "tmux"] {
        fs::create_dir(root.join(sub)).unwrap();
    }
    fs::set_permissions(root.join("tmux"), fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(crate::util::bin(), root.join("bin/autoctl")).unwrap();
    fake_claude(&root.join("bin"));
    let mut script = String::from("cd \"$README_WORK\"\n");
    for (n, command) in section.commands.iter().enumerate() {
        // A record separator before each command's output, a unit separator and the exit
        // status after it; the command runs in this shell (its variables persist).
        script.push_str(&format!(
            "printf '\\036{n}\\n'\n{{ {}\n}} </dev/null 2>&1\nprintf '\\037%d\\n' \"$?\"\n",
            command.command
        ));
    }
    fs::write(root.join("section.sh"), &script).unwrap();
    if let Some(uid) = uid {
        // The sandbox is the user's: its home, its work dir, its tmux directory.
        for entry in walkdir::WalkDir::new(root) {
            let entry = entry.unwrap();
            std::os::unix::fs::lchown(entry.path(), Some(uid), Some(uid)).unwrap();
        }
    }
    let path = format!(
        "{}:{}",
        root.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The section runs on a terminal, as a person pastes it: `script` (util-linux) gives it a
    // pseudo-terminal, so commands that print differently for a terminal (`run watch`, `run
    // status`) print what a person sees.
    let mut cmd = as_user(uid, "script");
    cmd.arg("-qefc")
        .arg(format!(
            "bash --noprofile --norc {}",
            root.join("section.sh").display()
        ))
        .arg("/dev/null")
        .env_clear()
        .env("PATH", path)
        .env("HOME", root.join("home"))
        .env("USER", "readme")
        .env("SHELL", "/bin/bash")
        .env("TERM", "xterm-256color")
        .env("LANG", "C.UTF-8")
        .env("TMUX_TMPDIR", root.join("tmux"))
        .env("README_WORK", root.join("work"))
        // Belt and braces: a real Claude Code, were one reached, would find no model.
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("CLAUDE_CONFIG_DIR", root.join("home/.claude-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = stdout.read_to_end(&mut all);
        all
    });
    let deadline = Instant::now() + SECTION_LIMIT;
    let mut timed_out = false;
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            timed_out = true;
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // The section's tmux server, if it started one.
    let _ = as_user(uid, "tmux")
        .arg("kill-server")
        .env("TMUX_TMPDIR", root.join("tmux"))
        .env_remove("TMUX")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    // Its panes' shells (which write their history as they hang up) and whatever a timed-out
    // section left running end before the sandbox is removed, so nothing is left in /tmp.
    crate::util::remove_when_unused(root);
    let text = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    let mut outputs: Vec<(Vec<String>, Option<i32>)> = Vec::new();
    for line in text.lines().map(as_displayed) {
        let line = line.as_str();
        if line.starts_with('\u{1e}') {
            outputs.push((Vec::new(), None));
        } else if let Some(code) = line.strip_prefix('\u{1f}') {
            if let Some(last) = outputs.last_mut() {
                last.1 = code.trim().parse().ok();
            }
        } else if let Some(last) = outputs.last_mut() {
            last.0.push(line.to_string());
        }
    }
    Ran { outputs, timed_out }
}

/// A line of terminal output as the terminal shows it: what follows the last carriage return
/// (a progress line redrawn and erased in place), without escape sequences.
fn as_displayed(raw: &str) -> String {
    let raw = raw.strip_suffix('\r').unwrap_or(raw);
    let shown = raw.rsplit('\r').next().unwrap_or(raw);
    let mut out = String::with_capacity(shown.len());
    let mut chars = shown.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters, then one final byte in @..~.
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn check_section(section: &Section, uid: Option<u32>) -> Vec<String> {
    let ran = run_section(section, uid);
    let who = uid.map_or(String::new(), |uid| format!(" [as uid {uid}]"));
    let mut failures = Vec::new();
    for (n, command) in section.commands.iter().enumerate() {
        let Some((actual, code)) = ran.outputs.get(n) else {
            failures.push(format!(
                "{}:{}{who}: never ran{}",
                section.file,
                command.line,
                if ran.timed_out {
                    " (the section timed out)"
                } else {
                    ""
                }
            ));
            break;
        };
        let actual: Vec<String> = actual.iter().map(|l| squash(l)).collect();
        let actual: Vec<String> = {
            let mut lines = actual;
            while lines.last().is_some_and(|l| l.is_empty()) {
                lines.pop();
            }
            lines
        };
        let expected: Vec<String> = command.expected.iter().map(|l| squash(l)).collect();
        let code_ok = *code == Some(command.exit);
        if !code_ok || !lines_match(&expected, &actual) {
            failures.push(format!(
                "{}:{}{who} ({}): $ {}\n  exit: expected {}, got {}\n  expected:\n{}\n  got:\n{}",
                section.file,
                command.line,
                section.title,
                command.command,
                command.exit,
                code.map_or("none (timed out)".to_string(), |c| c.to_string()),
                indent(&expected),
                indent(&actual)
            ));
        }
    }
    failures
}

fn indent(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("    | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_parser_reads_commands_continuations_and_output() {
    let text = "## A\n```console\n$ echo one \\\n  two\none two\n$ cat <<'EOF'\nx\nEOF\nx\n$ for i in 1 2; do\n  echo $i\ndone\n1\n2\n$ false   # exit 1\n```\n```sh\n$ not run\n```\n";
    let sections = parse("T.md", text);
    assert_eq!(sections.len(), 1);
    let c = &sections[0].commands;
    assert_eq!(c.len(), 4, "{c:?}");
    assert_eq!(c[0].command, "echo one \\\n  two");
    assert_eq!(c[0].expected, ["one two"]);
    assert_eq!(c[1].command, "cat <<'EOF'\nx\nEOF");
    assert_eq!(c[2].command, "for i in 1 2; do\n  echo $i\ndone");
    assert_eq!(c[2].expected, ["1", "2"]);
    assert_eq!((c[3].exit, c[3].line), (1, 15));
    assert!(line_matches("a … c", "a b b c"));
    assert!(line_matches("…/TASK/x", "/tmp/q/TASK/x"));
    assert!(!line_matches("a … c", "a b d"));
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert!(lines_match(&s(&["a", "…", "z"]), &s(&["a", "b", "c", "z"])));
    assert!(lines_match(&s(&["a", "…"]), &s(&["a"])));
    assert!(!lines_match(&s(&["a"]), &s(&["a", "b"])));
}

/// Every console transcript in README.md and docs/*.md runs as shown.
#[test]
#[allow(clippy::print_stderr)] // the counts are the test's report (bench/newcomer.sh reads them)
fn every_readme_transcript_runs_as_shown() {
    let documents = documents();
    let sections: Vec<Section> = documents
        .iter()
        .flat_map(|(file, text)| parse(file, text))
        .collect();
    let blocks = documents
        .iter()
        .flat_map(|(_, text)| text.lines())
        .filter(|line| line.trim() == "```console")
        .count();
    let commands: usize = sections.iter().map(|s| s.commands.len()).sum();
    assert!(
        sections.iter().any(|s| s.title == "Getting started"),
        "the README has a Getting started section with console transcripts"
    );
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = sections
            .iter()
            .flat_map(|section| {
                // As whoever runs the tests, and, when that is root, as an ordinary user too.
                let users = if crate::util::is_root() {
                    vec![None, Some(UNPRIVILEGED)]
                } else {
                    vec![None]
                };
                users
                    .into_iter()
                    .map(move |uid| scope.spawn(move || check_section(section, uid)))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    // What bench/newcomer.sh reports (shown with --nocapture).
    eprintln!(
        "README test: {blocks} console blocks ({commands} commands) in {} documents run as uid {}{}; {} failed",
        documents.len(),
        own_uid(),
        if crate::util::is_root() {
            format!(" and as uid {UNPRIVILEGED}")
        } else {
            String::new()
        },
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} README transcript(s) differ from what the commands do:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, other punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown document's headings (outside fenced blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// The relative link targets of a Markdown document: `[text](target)`, outside code.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code spans may hold `](` that is no link.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = &after[..end];
            if !target.contains("://") && !target.starts_with("mailto:") {
                out.push((n + 1, target.to_string()));
            }
            rest = &after[end..];
        }
    }
    out
}

/// Every link between the README and the docs/ pages reaches a file and a heading that
/// exist, and the README links every docs/ page (a moved section leaves no dead link).
#[test]
fn readme_and_docs_links_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = documents();
    let mut broken = Vec::new();
    for (file, text) in &docs {
        let dir = Path::new(file).parent().unwrap_or(Path::new(""));
        for (line, target) in links(text) {
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let resolved = if path.is_empty() {
                Path::new(file).to_path_buf()
            } else {
                dir.join(path)
            };
            let full = root.join(&resolved);
            if !full.exists() {
                broken.push(format!("{file}:{line}: {target}: no such file"));
                continue;
            }
            if !fragment.is_empty() {
                let body = fs::read_to_string(&full).unwrap_or_default();
                if !anchors(&body).iter().any(|a| a == fragment) {
                    broken.push(format!("{file}:{line}: {target}: no such heading"));
                }
            }
        }
    }
    for (file, _) in docs.iter().skip(1) {
        if !README.contains(&format!("]({file})")) {
            broken.push(format!("README.md does not link {file}"));
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert_eq!(anchor("In CI: `autoctl lint`"), "in-ci-autoctl-lint");
    assert_eq!(anchor("cron or `run watch`?"), "cron-or-run-watch");
}

/// The uid the tests run as (from /proc, without libc).
fn own_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").map_or(0, |m| m.uid())
}
