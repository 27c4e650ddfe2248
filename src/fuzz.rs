//! Fuzz targets for every reader of untrusted text (issue 23, item 3): the shell reader, the
//! destructive reading, the approval policy at each door (a hook's tool call, a permission
//! box on a screen, a pane classified whole), the recovery-plan guard, hook payloads and the
//! policy file. Each target is a property — the reader returns, without a panic, for any
//! input — run over generated inputs that mix the shell's syntax, the words the checks look
//! for and arbitrary text, and over hostile inputs built to nest, repeat or unfold.
//!
//! Cases per target come from `AUTOCTL_FUZZ_CASES` (default 20,000, what CI runs; the fault
//! benchmark, `bench/faults.sh`, runs a million), the size of generated nestings from
//! `AUTOCTL_FUZZ_MAX_BYTES` (default 4 KiB; the benchmark's is 256 KiB). With `AUTOCTL_FUZZ_REPORT=1` each target
//! prints its throughput and its slowest input, and [`hostile_inputs_report`] times the
//! hostile inputs at sizes up to 1 MiB; the tests never assert a time.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

use crate::policy::{self, Context, Policy, Verdict};
use crate::shell;

/// Cases per target: `AUTOCTL_FUZZ_CASES`, else 20,000.
fn cases() -> u32 {
    std::env::var("AUTOCTL_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

/// The longest generated nesting: `AUTOCTL_FUZZ_MAX_BYTES`, else 4 KiB (CI; the benchmark
/// raises it, and the hostile inputs go to 1 MiB either way).
fn max_bytes() -> usize {
    std::env::var("AUTOCTL_FUZZ_MAX_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4 * 1024)
}

fn reporting() -> bool {
    std::env::var_os("AUTOCTL_FUZZ_REPORT").is_some()
}

/// The time one call took: on the calling thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`, the
/// reader's own work, whatever else the machine runs) and on the wall clock (preemption
/// included: a loaded 2-core machine stretches it).
#[derive(Debug, Clone, Copy, Default)]
struct Took {
    cpu: Duration,
    wall: Duration,
}

fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Run `f` once and say how long it took.
fn timed(f: impl FnOnce()) -> Took {
    let (wall, cpu) = (Instant::now(), thread_cpu());
    f();
    Took {
        cpu: thread_cpu().saturating_sub(cpu),
        wall: wall.elapsed(),
    }
}

/// Throughput and the slowest input of one target, on both clocks.
#[derive(Default)]
struct Stats {
    count: u64,
    total: Took,
    /// The slowest input by CPU time, and its length.
    worst_cpu: (Duration, usize),
    /// The slowest input by wall time, and its length.
    worst_wall: (Duration, usize),
    /// The slowest first sight of an input that was faster the second time: rules it was the
    /// first to reach were compiled then (a one-time build, like the first call's).
    first_use: Duration,
}

impl Stats {
    fn add(&mut self, took: Took, len: usize) {
        self.count += 1;
        self.total.cpu += took.cpu;
        self.total.wall += took.wall;
        if took.cpu > self.worst_cpu.0 {
            self.worst_cpu = (took.cpu, len);
        }
        if took.wall > self.worst_wall.0 {
            self.worst_wall = (took.wall, len);
        }
    }

    fn print(&self, target: &str, first: Took) {
        let rate = |total: Duration| self.count as f64 / total.as_secs_f64().max(1e-9);
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        #[allow(clippy::print_stdout)]
        {
            println!(
                "fuzz {target}: {} inputs, {:.0} inputs/s CPU ({:.0}/s wall), worst {:.3} ms CPU \
                 (an input of {} bytes), worst {:.3} ms wall (an input of {} bytes); first call \
                 {:.3} ms CPU, slowest first use of a rule {:.3} ms CPU (one-time builds, not \
                 counted)",
                self.count,
                rate(self.total.cpu),
                rate(self.total.wall),
                ms(self.worst_cpu.0),
                self.worst_cpu.1,
                ms(self.worst_wall.0),
                self.worst_wall.1,
                ms(first.cpu),
                ms(self.first_use),
            );
        }
    }
}

/// Run `check` on `cases()` inputs of `strategy`; a panic fails the test with the smallest
/// input proptest finds. `len` measures an input for the report.
fn fuzz<S: Strategy>(
    target: &str,
    strategy: S,
    len: impl Fn(&S::Value) -> usize,
    check: impl Fn(&S::Value),
) where
    S::Value: std::fmt::Debug,
{
    let stats = RefCell::new(Stats::default());
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    // One call before the timed ones: what a reader builds once per process (rules compiled
    // on first use, `OnceLock`s) is paid here, reported apart, and not charged to an input.
    let first = strategy
        .new_tree(&mut runner)
        .map(|tree| timed(|| check(&tree.current())))
        .unwrap_or_default();
    let result = runner.run(&strategy, |input| {
        let mut took = timed(|| check(&input));
        // Rules compile on their first use (`pane::rules::Pattern`), so the first input to
        // reach a rule pays for building it once per process, as the first call did. An input
        // that would be the slowest yet is timed again: what it costs the second time is its
        // own work, and the difference is reported apart as a one-time build. Only a second
        // time under half the first counts as one: below that it is the input's own cost.
        if took.cpu > stats.borrow().worst_cpu.0 {
            let again = timed(|| check(&input));
            if again.cpu * 2 < took.cpu {
                let mut stats = stats.borrow_mut();
                stats.first_use = stats.first_use.max(took.cpu);
                took.cpu = again.cpu;
            }
        }
        stats.borrow_mut().add(took, len(&input));
        Ok(())
    });
    if let Err(err) = result {
        panic!("fuzz {target}: {err}");
    }
    if reporting() {
        stats.borrow().print(target, first);
    }
}

/// Words and syntax the readers and checks care about: separators, quotes, substitutions,
/// redirections, runners, keywords, the programs of the destructive set and the rules, and a
/// few characters that are not ASCII.
const ATOMS: &[&str] = &[
    "find",
    ".",
    "-exec",
    "-execdir",
    "-ok",
    "-okdir",
    "-delete",
    "{}",
    "{",
    "}",
    ";",
    "\\;",
    "+",
    "do",
    "done",
    "exec",
    "!",
    "then",
    "if",
    "fi",
    "else",
    "while",
    "eval",
    "$(",
    ")",
    "(",
    "`",
    "'",
    "\"",
    "\\",
    "$'",
    "\\x2d",
    "<(",
    ">(",
    "|",
    "||",
    "&&",
    "&",
    "|&",
    ">",
    ">>",
    "<",
    "<<",
    "<<EOF",
    "<<-'X'",
    "EOF",
    "<<<",
    "2>&1",
    "&>",
    "&>>",
    "<>",
    ">|",
    "rm",
    "-rf",
    "-f",
    "-r",
    "--force",
    "--recursive",
    "git",
    "push",
    "origin",
    "main",
    "feature",
    "+main",
    ":main",
    "reset",
    "--hard",
    "-c",
    "-C",
    "alias.p=push",
    "core.fsmonitor=x",
    "sudo",
    "-u",
    "env",
    "A=1",
    "A=$A$A",
    "RM=rm",
    "$RM",
    "$A",
    "${A",
    "${A}",
    "${",
    "xargs",
    "-I{}",
    "npx",
    "pnpm",
    "dlx",
    "bash",
    "sh",
    "python3",
    "node",
    "-e",
    "curl",
    "wget",
    "-o",
    "-O-",
    "i.sh",
    "./i.sh",
    "timeout",
    "10",
    "nice",
    "-n",
    "time",
    "command",
    "nohup",
    "cd",
    "..",
    "~",
    "~/",
    "/",
    "/tmp",
    "/etc/passwd",
    ".env",
    ".Git/hooks/x",
    "{a,b}",
    "*",
    "?",
    "[",
    "#",
    "é",
    "❯",
    "$",
    "%",
    "\n",
    " ",
    "\t",
    "=",
    ":",
    "--",
    "-",
    "kill",
    "ssh",
    "host",
    "dd",
    "of=/dev/sda",
    "chmod",
    "-R",
    "tee",
    "-a",
    "cat",
    "/dev/null",
    "mkfs.ext4",
    "psql",
    "DROP TABLE x",
    "cargo",
    "test",
    "make",
    "deploy",
    "npm",
    "run",
    "build",
    "ls",
    "-la",
    "grep",
    "-r",
    "jq",
    "echo",
    "printf",
    "\u{0}",
    "\u{1b}[31m",
    "\r",
    "│",
    "╌╌╌",
    "\u{200b}",
];

/// A line of atoms joined by nothing, a space or a newline.
fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec((prop::sample::select(ATOMS), 0..4u8), 0..48).prop_map(|parts| {
        let mut line = String::new();
        for (atom, sep) in parts {
            line.push_str(atom);
            line.push_str(match sep {
                0 => "",
                1 | 2 => " ",
                _ => "\n",
            });
        }
        line
    })
}

/// A soup wrapped in one of the ways commands nest, `depth` times (fewer when the line grows
/// past [`max_bytes`]: quoting for `bash -c` triples the quotes at every level).
fn nested() -> impl Strategy<Value = String> {
    let max = max_bytes();
    (soup(), 0..24usize, 0..6u8).prop_map(move |(core, depth, how)| {
        (0..depth).fold(core, |inner, _| {
            if inner.len() > max {
                return inner;
            }
            match how {
                0 => format!("echo $({inner})"),
                1 => format!("({inner})"),
                2 => format!("bash -c {}", shell::quote(&inner)),
                3 => format!("find . -exec {inner} ;"),
                4 => format!("npx {inner}"),
                _ => format!("\"$({inner})\""),
            }
        })
    })
}

/// Shell-like text: soups, nestings and arbitrary text.
fn shellish() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => soup(),
        2 => nested(),
        1 => "\\PC{0,200}",
        1 => any::<String>(),
    ]
}

fn ctx() -> Context {
    Context {
        cwd: Some(PathBuf::from("/home/dev/proj")),
        project: None,
        home: Some(PathBuf::from("/home/dev")),
        protected: vec![PathBuf::from("/home/dev/.config/autoctl")],
        git_top: true,
    }
}

fn policies() -> [Policy; 2] {
    let user = Policy::from_bytes(
        br#"{"on_destructive":"deny",
             "allow":[{"id":"deploy","tool":"Bash","pattern":"make deploy*"}],
             "deny":[{"id":"prod","tool":"*","pattern":"*prod*"}]}"#,
        "fuzz.json",
    )
    .expect("a valid policy");
    [Policy::builtin(), user]
}

#[test]
fn shell_reader() {
    fuzz("shell reader", shellish(), String::len, |line| {
        // As every door reads a line: through a `Reader`, which answers a line longer than
        // `shell::MAX_LINE` at once (the generated nestings go past it).
        let mut reader = shell::Reader::new(line);
        let mut vars = shell::Vars::new();
        for command in reader.read(line, 0, "").unwrap_or_default() {
            let tokens = command.tokens();
            let _ = shell::peel(&command.words);
            if let Some(words) = reader.expand(&tokens, &mut vars) {
                for word in &words {
                    let _ = shell::expand_braces(word);
                    let _ = shell::program(word);
                }
            }
            for body in &command.substitutions {
                let _ = reader.read(body, 1, "");
            }
        }
    });
}

#[test]
fn destructive_reading() {
    fuzz("destructive reading", shellish(), String::len, |line| {
        let _ = policy::destructive::dangers(line);
    });
}

#[test]
fn policy_on_shell_commands() {
    let policies = policies();
    fuzz("policy (Bash)", shellish(), String::len, |line| {
        for policy in &policies {
            let d = policy::decide(policy, "Bash", &json!({ "command": line }), &ctx());
            // Whatever the reading, nothing it cannot read whole is approved.
            if d.rule == "destructive:unreadable" {
                assert_ne!(d.decision, Verdict::Allow);
            }
        }
    });
}

/// A path-like word for the file tools.
fn pathish() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(
            prop::sample::select(
                &[
                    "src",
                    "..",
                    ".",
                    "~",
                    "",
                    ".env",
                    ".ENV",
                    ".git",
                    ".Git",
                    "hooks",
                    ".github",
                    "workflows",
                    ".claude",
                    "settings.json",
                    "é",
                    "*",
                    "**",
                    "a b",
                    "/",
                    "//",
                    "\u{0}",
                    "tmp",
                    "etc",
                    "ｓｒｃ",
                    ".ssh",
                    "id_rsa",
                    "node_modules",
                    "x.rs"
                ][..]
            ),
            0..10
        )
        .prop_map(|parts| parts.join("/")),
        "\\PC{0,60}",
    ]
}

#[test]
fn policy_on_file_tools() {
    let policies = policies();
    let tools = prop::sample::select(
        &[
            "Write",
            "Edit",
            "MultiEdit",
            "NotebookEdit",
            "Read",
            "Glob",
            "Grep",
            "LS",
            "WebFetch",
            "mcp__x__y",
            "",
        ][..],
    );
    fuzz(
        "policy (file tools)",
        (tools, pathish(), pathish()),
        |(_, a, b)| a.len() + b.len(),
        |(tool, path, pattern)| {
            let input = json!({"file_path": path, "path": path, "pattern": pattern,
                               "glob": pattern, "url": path});
            for policy in &policies {
                let _ = policy::decide(policy, tool, &input, &ctx());
                let _ = policy::summary(tool, &input);
            }
        },
    );
}

/// A permission box as Claude Code draws it around a generated command, or lines of junk.
fn boxed() -> impl Strategy<Value = Vec<String>> {
    let header = prop::sample::select(
        &[
            "Bash command",
            "Create file",
            "Edit file",
            "Read file",
            "Fetch",
            "Other",
            "",
        ][..],
    );
    prop_oneof![
        (header, shellish(), 1..80usize, any::<bool>()).prop_map(
            |(header, command, width, bar)| {
                let mut lines = vec![
                    "─".repeat(width),
                    format!(" {header}"),
                    " A step".to_string(),
                ];
                lines.push(" ╌╌╌╌".to_string());
                for line in command.split('\n') {
                    let chars: Vec<char> = line.chars().collect();
                    for chunk in chars.chunks(width) {
                        let text: String = chunk.iter().collect();
                        lines.push(if bar {
                            format!("   │ {text}")
                        } else {
                            format!("   {text}")
                        });
                    }
                }
                lines.push(" ╌╌╌╌".to_string());
                lines.push(" Do you want to proceed?".to_string());
                lines
            }
        ),
        prop::collection::vec("\\PC{0,40}", 0..12),
    ]
}

#[test]
fn permission_boxes_on_screen() {
    let policy = Policy::builtin();
    fuzz(
        "permission box",
        boxed(),
        |lines| lines.iter().map(String::len).sum(),
        |lines| {
            // As a supervisor reads a box: from a captured screen, kept to its bottom
            // `KEEP_BYTES` (the generated boxes go past it).
            let screen = crate::pane::screen::Screen::from_text(&lines.join("\n"), None);
            let lines: Vec<&str> = screen.lines.iter().map(String::as_str).collect();
            let _ = policy::screen::decide_box(
                &policy,
                &lines,
                &ctx(),
                policy::screen::tests::shapes(),
            );
            let _ = policy::screen::paragraph(&lines, policy::screen::tests::shapes());
            let _ = policy::prompt::judge_question(&lines, lines.first().copied());
        },
    );
}

#[test]
fn panes_classified_whole() {
    use crate::pane::classify::{self, Lens};
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-28T10:00:00Z")
        .expect("a time")
        .to_utc();
    let lens = Lens::new(
        crate::pane::Agent::Claude,
        now,
        crate::pane::reset::Zone::Utc,
    );
    fuzz(
        "pane classify",
        boxed(),
        |lines| lines.iter().map(String::len).sum(),
        |lines| {
            let screen = crate::pane::screen::Screen::from_text(
                &lines.join("\n"),
                Some("claude".to_string()),
            );
            let _ = classify::classify(&screen, crate::pane::rules::RuleSet::embedded(), &lens);
        },
    );
}

/// A recovery plan's value: its steps strings, argv arrays and objects of generated commands.
fn plan_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        shellish().prop_map(Value::String),
        prop::collection::vec(prop::sample::select(ATOMS), 0..8).prop_map(|words| json!(words)),
        Just(Value::Null),
        any::<i64>().prop_map(|n| json!(n)),
    ];
    let value = leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{0,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    (
        prop::sample::select(&["retry", "skip", "recover", "abort", "x"][..]),
        value,
    )
        .prop_map(|(action, steps)| {
            let steps = match steps {
                Value::Array(items) => Value::Array(items),
                other => json!([other]),
            };
            json!({"action": action, "rationale": "r", "steps": steps})
        })
}

#[test]
fn recovery_plans() {
    let protected = vec!["main".to_string()];
    fuzz(
        "plan validate",
        plan_value(),
        |v| v.to_string().len(),
        |plan| {
            let _ = crate::wholework::plan::validate(plan, &protected);
        },
    );
}

/// Bytes that are sometimes a hook payload.
fn payload() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (
            prop::sample::select(
                &[
                    "PermissionRequest",
                    "PreToolUse",
                    "PermissionDenied",
                    "BeforeTool",
                    "",
                ][..]
            ),
            prop::sample::select(&["Bash", "Write", "Read", "mcp__a__b", ""][..]),
            shellish(),
            prop::sample::select(
                &[
                    "default",
                    "acceptEdits",
                    "plan",
                    "auto",
                    "bypassPermissions",
                    "x"
                ][..]
            ),
        )
            .prop_map(|(event, tool, command, mode)| {
                serde_json::to_vec(&json!({
                    "hook_event_name": event, "tool_name": tool, "session_id": "s",
                    "tool_input": {"command": command, "file_path": command},
                    "cwd": "/home/dev/proj", "permission_mode": mode,
                }))
                .expect("json")
            }),
        prop::collection::vec(any::<u8>(), 0..200),
        "\\PC{0,200}".prop_map(String::into_bytes),
    ]
}

#[test]
fn hook_payloads() {
    let policy = Policy::builtin();
    fuzz("hook payloads", payload(), Vec::len, |bytes| {
        if let Ok(call) = policy::request::parse(bytes) {
            let _ = policy::decide(&policy, &call.tool_name, &call.tool_input, &ctx());
        }
    });
}

#[test]
fn policy_files() {
    let rule = || {
        (
            "[a-z]{0,4}",
            prop::sample::select(&["Bash", "*", "mcp__*", "Write", "[", ""][..]),
            proptest::option::of(shellish()),
        )
            .prop_map(|(id, tool, pattern)| json!({"id": id, "tool": tool, "pattern": pattern}))
    };
    let file = prop_oneof![
        (
            prop::collection::vec(rule(), 0..4),
            prop::collection::vec(rule(), 0..4),
            prop::sample::select(&["ask", "deny", "x"][..]),
        )
            .prop_map(|(allow, deny, on)| serde_json::to_vec(
                &json!({"version": 1, "on_destructive": on, "allow": allow, "deny": deny})
            )
            .expect("json")),
        prop::collection::vec(any::<u8>(), 0..200),
    ];
    fuzz("policy file", file, Vec::len, |bytes| {
        if let Ok(policy) = Policy::from_bytes(bytes, "fuzz.json") {
            let _ = policy::decide(&policy, "Bash", &json!({"command": "ls"}), &ctx());
        }
    });
}

/// Inputs built to nest, repeat or unfold, of about `size` bytes each, by name.
pub fn hostile(size: usize) -> Vec<(&'static str, String)> {
    let fill = |unit: &str| unit.repeat((size / unit.len()).max(1));
    let nest = |open: &str, core: &str, close: &str| {
        let n = (size / (open.len() + close.len())).max(1);
        format!("{}{core}{}", open.repeat(n), close.repeat(n))
    };
    let mut chain = String::from("A=aaaaaaaa;");
    let mut prev = 'A';
    for name in ('B'..='Z').cycle().take(size / 40 + 1) {
        chain.push_str(&format!("{name}=${prev}${prev}${prev}${prev};"));
        prev = name;
    }
    chain.push_str(&format!("rm ${prev}"));
    vec![
        ("$( nested", nest("$(", "rm -rf x", ")")),
        ("echo $( nested", nest("echo $(", "git push -f", ")")),
        ("( nested", nest("(", "ls", ")")),
        ("\"$( nested", nest("\"$(", "ls", ")\"")),
        ("<( nested", nest("cat <(", "ls", ")")),
        ("$( unclosed", fill("$(")),
        ("( unclosed", fill("(")),
        ("quotes", fill("'")),
        ("double quotes", fill("\"")),
        ("backquotes", fill("`")),
        ("${ unclosed", format!("A=1; echo {}", fill("${"))),
        ("$' unclosed", fill("$'\\x")),
        ("variable chain", chain),
        ("find words", format!("find {}", fill("find "))),
        ("find -exec chain", fill("find . -exec ")),
        ("npx chain", fill("npx ")),
        ("pnpm dlx chain", fill("pnpm dlx ")),
        ("rm words", fill("rm -rf ")),
        ("git words", fill("git push -f ")),
        ("sudo chain", fill("sudo ")),
        ("pipes", fill("ls | ")),
        ("separators", fill("; && || & ")),
        ("here-documents", fill("cat <<EOF\n")),
        ("redirections", fill("> x 2>&1 ")),
        ("long word", fill("a")),
        ("spaces", fill(" ")),
        ("newlines", fill("\n")),
        ("braces", fill("{a,b}")),
        ("quoted spaces", fill("'a b' ")),
        ("escaped", fill("\\$\\(")),
        ("wide characters", fill("é❯")),
    ]
}

/// PermissionRequest payloads of about `size` bytes, by name: a Bash command of characters
/// JSON escapes (each `"` and `\` doubles in the payload), a Write of a file that size, and
/// the paths of the file tools that long (a Read of one pattern component, each tried on
/// every secret's name; a Write of many components).
pub fn hostile_payloads(size: usize) -> Vec<(&'static str, String)> {
    let payload = |tool: &str, input: Value| {
        json!({"hook_event_name": "PermissionRequest", "session_id": "s", "cwd": "/home/dev/proj",
               "permission_mode": "default", "tool_name": tool, "tool_input": input})
        .to_string()
    };
    let line = "echo \"a\\b\" 'c' \\\n".repeat(size / 24 + 1);
    let content = "fn main() { println!(\"{}\", 1); }\n".repeat(size / 36 + 1);
    vec![
        (
            "payload: escaped command",
            payload("Bash", json!({ "command": line })),
        ),
        (
            "payload: Write of a big file",
            payload(
                "Write",
                json!({"file_path": "/home/dev/proj/big.rs", "content": content}),
            ),
        ),
        (
            "payload: Read of a long pattern",
            payload(
                "Read",
                json!({ "file_path": format!("src/{}", "*e?[nv]".repeat(size / 7 + 1)) }),
            ),
        ),
        (
            "payload: Write of a long path",
            payload(
                "Write",
                json!({ "file_path": "a/../.e*/".repeat(size / 10 + 1) }),
            ),
        ),
    ]
}

/// One input's time through one reader: the time, the reader, the input's name and length.
type Timing = (Took, &'static str, &'static str, usize);

/// The readers [`hostile_inputs_report`] times, in the order it reports them.
const HOSTILE_READERS: [&str; 5] = [
    "shell reader",
    "destructive reading",
    "policy decide",
    "plan guard",
    "hook payload",
];

/// `AUTOCTL_FUZZ_HOSTILE=NAME[@SIZE]`: only the inputs whose name holds NAME (at SIZE bytes
/// only), for profiling one of them (`HOSTILE=NAME bench/faults.sh hostile`).
#[derive(Default)]
struct OnlyHostile {
    name: Option<String>,
    size: Option<usize>,
}

impl OnlyHostile {
    fn from_env() -> OnlyHostile {
        let Ok(only) = std::env::var("AUTOCTL_FUZZ_HOSTILE") else {
            return OnlyHostile::default();
        };
        match only.split_once('@') {
            Some((name, size)) => OnlyHostile {
                name: Some(name.to_string()),
                size: size.parse().ok(),
            },
            None => OnlyHostile {
                name: Some(only),
                size: None,
            },
        }
    }

    fn keeps(&self, name: &str) -> bool {
        self.name.as_deref().is_none_or(|only| name.contains(only))
    }
}

/// Time one hostile command line through the shell reader, the destructive reading, each
/// policy's decision and the plan guard, and check what must hold whatever the time: nothing
/// hostile is approved, a line past [`shell::MAX_LINE`] is unreadable at every door, and
/// nothing nested past the reader's bound passes the destructive reading.
fn time_hostile_line(
    name: &'static str,
    line: &str,
    policies: &[Policy; 2],
    protected: &[String],
) -> [Timing; 5] {
    let reader = timed(|| {
        let _ = shell::Reader::new(line).read(line, 0, "");
    });
    let mut dangers = Vec::new();
    let destructive = timed(|| dangers = policy::destructive::dangers(line));
    // Each policy apart: a door decides a call once, with one policy (the built-in, or a
    // user's file over it).
    let input = json!({ "command": line });
    let mut decisions = Vec::new();
    let decide: Vec<Took> = policies
        .iter()
        .map(|p| timed(|| decisions.push(policy::decide(p, "Bash", &input, &ctx()))))
        .collect();
    let mut ops = Vec::new();
    let plan = timed(|| ops = crate::wholework::plan::forbidden::forbidden_ops(line, protected));
    let size = line.len();
    // Longer than a shell tool can run: unreadable at once, at every door.
    if size > shell::MAX_LINE {
        assert_eq!(dangers.first().map(|d| d.id), Some("unreadable"), "{name}");
        assert_eq!(
            ops,
            [crate::wholework::plan::forbidden::Forbidden::Unreadable],
            "{name}"
        );
        for d in &decisions {
            assert_eq!(d.rule, "destructive:unreadable", "{name} ({size})");
        }
    }
    // Subshells nest without the reader recursing (`((ls))` is `ls`), and reading files named
    // `find` or listing a directory many times is harmless at any length.
    let plain = matches!(name, "( nested" | "find words" | "pipes" | "here-documents");
    for d in &decisions {
        assert!(
            plain || d.decision != Verdict::Allow,
            "{name} ({size}): {d:?}"
        );
    }
    if name.ends_with("nested") && name != "( nested" {
        assert_eq!(
            dangers.first().map(|d| d.id),
            Some("unreadable"),
            "{name} ({size})"
        );
    }
    [
        (reader, "shell reader", name, size),
        (destructive, "destructive reading", name, size),
        (decide[0], "policy decide", name, size),
        (decide[1], "policy decide", name, size),
        (plan, "plan guard", name, size),
    ]
}

/// Time one hook payload read and decided as the PermissionRequest door does (`hook
/// permission-request` reads up to `PAYLOAD_LIMIT`); checks that it is read.
fn time_hostile_payload(name: &'static str, payload: &str, policy: &Policy) -> Timing {
    let mut decision = None;
    let took = timed(|| {
        if let Ok(call) = policy::request::parse(payload.as_bytes()) {
            decision = Some(policy::decide(
                policy,
                &call.tool_name,
                &call.tool_input,
                &ctx(),
            ));
        }
    });
    assert!(
        decision.is_some(),
        "{name} ({}): a payload is read",
        payload.len()
    );
    (took, "hook payload", name, payload.len())
}

/// Print the eight slowest timings, then the slowest of each reader on both clocks.
fn print_hostile_report(mut timings: Vec<Timing>) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    timings.sort_by_key(|t| std::cmp::Reverse(t.0.cpu));
    for (took, what, name, len) in timings.iter().take(8) {
        #[allow(clippy::print_stdout)]
        {
            println!(
                "hostile {what}: {:.3} ms CPU ({:.3} ms wall) for {name} ({len} bytes)",
                ms(took.cpu),
                ms(took.wall)
            );
        }
    }
    for what in HOSTILE_READERS {
        let of = |clock: fn(&Took) -> Duration| {
            timings
                .iter()
                .filter(|t| t.1 == what)
                .max_by_key(|t| clock(&t.0))
                .map(|t| (clock(&t.0), t.2, t.3))
                .unwrap_or_default()
        };
        let (cpu, name, len) = of(|t| t.cpu);
        #[allow(clippy::print_stdout)]
        {
            println!(
                "hostile worst {what}: {:.3} ms CPU, {:.3} ms wall (inputs up to 1 MiB; \
                 slowest on CPU: {name}, {len} bytes)",
                ms(cpu),
                ms(of(|t| t.wall).0)
            );
        }
    }
}

/// Time every hostile input through every reader, at sizes up to 1 MiB, and print the slowest
/// (with `AUTOCTL_FUZZ_REPORT=1`; the bench runs it in a release build). Always checks what
/// must hold whatever the time ([`time_hostile_line`], [`time_hostile_payload`]).
#[test]
fn hostile_inputs_report() {
    let sizes: &[usize] = if reporting() {
        // `shell::MAX_LINE` is the longest line read; a line of many short words reaches
        // `shell::MAX_WORDS` well before it (`rm -rf ` at 56 KiB), and is read whole only
        // below that: the sizes between find the costliest of each.
        &[
            1024,
            16 * 1024,
            32 * 1024,
            48 * 1024,
            56 * 1024,
            64 * 1024,
            96 * 1024,
            shell::MAX_LINE,
            1024 * 1024,
        ]
    } else {
        // The last is past `shell::MAX_LINE`: answered unread.
        &[1024, 16 * 1024, 200 * 1024]
    };
    let only = OnlyHostile::from_env();
    let sizes: Vec<usize> = only.size.map_or_else(|| sizes.to_vec(), |s| vec![s]);
    let policies = policies();
    let protected = vec!["main".to_string()];
    let mut timings: Vec<Timing> = Vec::new();
    for &size in &sizes {
        for (name, line) in hostile(size) {
            if only.keeps(name) {
                timings.extend(time_hostile_line(name, &line, &policies, &protected));
            }
        }
        // A hook payload of about `size` bytes: a command of characters JSON escapes, and a
        // Write of a big file.
        for (name, payload) in hostile_payloads(size) {
            if only.keeps(name) {
                timings.push(time_hostile_payload(name, &payload, &policies[0]));
            }
        }
    }
    if reporting() {
        print_hostile_report(timings);
    }
}

/// Policy files built to cost the most to read, of about `size` bytes each, by name: one long
/// pattern, many rules, many examples (each decided through the whole policy), long examples.
pub fn hostile_policy_files(size: usize) -> Vec<(&'static str, String)> {
    let rules = |rule: &dyn Fn(usize) -> Value| {
        let mut deny = Vec::new();
        let mut len = 0;
        while len < size {
            let r = rule(deny.len());
            len += r.to_string().len() + 1;
            deny.push(r);
        }
        json!({"version": 1, "deny": deny}).to_string()
    };
    let examples = |n: usize, example: &str| vec![Value::String(example.to_string()); n];
    vec![
        (
            "one long pattern",
            json!({"version": 1, "deny": [{"id": "x", "tool": "Bash",
                "pattern": format!("*{}*", "ab?".repeat(size / 3))}]})
            .to_string(),
        ),
        (
            "many rules",
            rules(&|i| json!({"id": format!("r{i}"), "tool": "Bash", "pattern": format!("make deploy-{i} *")})),
        ),
        (
            "many rules with examples",
            rules(&|i| json!({"id": format!("r{i}"), "tool": "Bash", "pattern": format!("make d{i} *"),
                "match": [format!("make d{i} x")], "not_match": ["make x"]})),
        ),
        (
            "one rule, many examples",
            json!({"version": 1, "deny": [{"id": "x", "tool": "Bash", "pattern": "make deploy *",
                "match": examples(size / 20, "make deploy now"), "not_match": examples(size / 20, "ls")}]})
            .to_string(),
        ),
        (
            "long examples",
            json!({"version": 1, "deny": [{"id": "x", "tool": "Bash", "pattern": "*",
                "match": examples(4, &"ls | ".repeat(size / 24))}]})
            .to_string(),
        ),
    ]
}

/// Time reading every hostile policy file at sizes up to the file bound (and past it), and
/// print the slowest with `AUTOCTL_FUZZ_REPORT=1`. Always checks that each is read to an answer.
#[test]
fn hostile_policy_files_report() {
    let sizes: &[usize] = if reporting() {
        &[1024, 64 * 1024, 1024 * 1024]
    } else {
        &[1024, 16 * 1024]
    };
    let mut worst: Vec<(Took, &'static str, usize, bool)> = Vec::new();
    for &size in sizes {
        for (name, file) in hostile_policy_files(size) {
            let mut ok = false;
            let took = timed(|| ok = Policy::from_bytes(file.as_bytes(), "hostile.json").is_ok());
            worst.push((took, name, file.len(), ok));
        }
    }
    if reporting() {
        worst.sort_by_key(|w| std::cmp::Reverse(w.0.cpu));
        for (took, name, len, ok) in &worst {
            #[allow(clippy::print_stdout)]
            {
                println!(
                    "hostile policy file: {:.3} ms CPU ({:.3} ms wall) for {name} ({len} bytes, {})",
                    took.cpu.as_secs_f64() * 1000.0,
                    took.wall.as_secs_f64() * 1000.0,
                    if *ok { "read" } else { "refused" }
                );
            }
        }
    }
}
