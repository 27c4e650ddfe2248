//! The generated documentation: shell completions and man pages, rendered from the clap tree.
//! They are checked in under `completions/` and `man/`; a test regenerates them in memory and
//! fails on drift (`AUTOCTL_UPDATE=1 cargo test` rewrites them).

use clap_complete::Shell;

use crate::error::EXIT_CODE_TABLE;

/// The shells `autoctl completions` supports, with the checked-in file name of each.
pub const SHELLS: &[(Shell, &str)] = &[
    (Shell::Bash, "autoctl.bash"),
    (Shell::Zsh, "_autoctl"),
    (Shell::Fish, "autoctl.fish"),
    (Shell::Elvish, "autoctl.elv"),
    (Shell::PowerShell, "_autoctl.ps1"),
];

/// The completion script for one shell, of the whole tree `cli` (the caller hands it in, so this
/// module does not depend on the parser that has `completions` and `man` among its commands).
pub fn completion(mut cmd: clap::Command, shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "autoctl", &mut out);
    out
}

/// Every man page of the whole tree `cmd`: (file name, roff text), the top page first.
pub fn man_pages(cmd: clap::Command) -> Vec<(String, Vec<u8>)> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut pages = vec![("autoctl.1".to_string(), top_page(&cmd))];
    collect_subpages(&cmd, &mut pages);
    pages
}

fn collect_subpages(cmd: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let man = clap_mangen::Man::new(sub.clone());
        let mut page = Vec::new();
        man.render(&mut page)
            .expect("rendering into memory cannot fail");
        page.extend_from_slice(see_also(&man.get_filename()).as_bytes());
        pages.push((man.get_filename(), page));
        collect_subpages(sub, pages);
    }
}

fn top_page(cmd: &clap::Command) -> Vec<u8> {
    // The top page gets real EXIT STATUS, ENVIRONMENT and FILES sections instead of clap's
    // generic EXTRA section, so the exit-code table reads like any other man page.
    let man = clap_mangen::Man::new(cmd.clone().after_help(None::<&str>));
    let mut page = Vec::new();
    man.render_title(&mut page).expect("in memory");
    man.render_name_section(&mut page).expect("in memory");
    man.render_synopsis_section(&mut page).expect("in memory");
    man.render_description_section(&mut page)
        .expect("in memory");
    man.render_options_section(&mut page).expect("in memory");
    man.render_subcommands_section(&mut page)
        .expect("in memory");
    page.extend_from_slice(extra_sections().as_bytes());
    man.render_version_section(&mut page).expect("in memory");
    page.extend_from_slice(see_also("autoctl.1").as_bytes());
    page
}

/// The reference pages under `docs/` in autoctl's source tree: (file, what it covers). The
/// README links each; the man pages name them in SEE ALSO.
pub const DOC_PAGES: &[(&str, &str)] = &[
    (
        "protocol-files.md",
        "the files of a task module and their schemas",
    ),
    (
        "routing.md",
        "routing tables, results per checkpoint, counted retries",
    ),
    (
        "run.md",
        "the run registry, what one tick does, timers and watchers",
    ),
    (
        "waits.md",
        "stalls, every wait's end, needs a person, notifications",
    ),
    (
        "screens.md",
        "reading panes: classes, rules, checking an agent release",
    ),
    ("safety.md", "what autoctl will and will not type"),
    ("policy.md", "the approval policy and your own rules"),
    (
        "hooks.md",
        "Claude Code hooks, the status line, doctor, the Stop-hook loop",
    ),
    (
        "agents.md",
        "Codex CLI and Gemini CLI hooks, their doors, Codex's app-server",
    ),
    ("lint.md", "lint options, exit status and rules"),
    ("locks.md", "heartbeat locks"),
    (
        "source-systems.md",
        "task-ai and wholework helpers; differences from the sources",
    ),
    ("development.md", "crash injection"),
];

/// The `docs/` pages that document a command group (by its top-level name).
fn doc_pages_for(group: &str) -> &'static [&'static str] {
    match group {
        "signal" | "stop" | "task" | "schema" => &["protocol-files.md"],
        "next" | "table" => &["routing.md", "protocol-files.md"],
        "run" => &["run.md", "waits.md", "safety.md", "agents.md"],
        "stall" => &["waits.md", "safety.md"],
        "pane" => &["screens.md", "safety.md"],
        "policy" => &["policy.md"],
        "hook" => &["hooks.md", "policy.md", "agents.md"],
        "loop" | "doctor" => &["hooks.md", "agents.md"],
        "statusline" => &["hooks.md"],
        "lint" => &["lint.md"],
        "lock" => &["locks.md"],
        "gate" | "converge" | "profile" | "vfp" | "route" | "graph" | "plan" | "checkpoint" => {
            &["source-systems.md"]
        }
        _ => &[],
    }
}

/// A page's SEE ALSO section: the top page for a subcommand, and the `docs/` pages of its
/// group (all of them for the top page).
fn see_also(file_name: &str) -> String {
    let stem = file_name.trim_end_matches(".1");
    let pages: Vec<&str> = match stem.strip_prefix("autoctl-") {
        None => DOC_PAGES.iter().map(|(file, _)| *file).collect(),
        Some(rest) => doc_pages_for(rest.split('-').next().unwrap_or(rest)).to_vec(),
    };
    let mut roff = String::from(".SH \"SEE ALSO\"\n");
    if stem != "autoctl" {
        roff.push_str(".BR autoctl (1)\n");
    }
    if pages.is_empty() {
        roff.push_str(".PP\nThe README of autoctl's source tree.\n");
        return roff;
    }
    roff.push_str(".PP\nIn autoctl's source tree, beside the README:\n");
    for file in pages {
        let what = DOC_PAGES
            .iter()
            .find(|(f, _)| *f == file)
            .map_or("", |(_, what)| *what);
        roff.push_str(&format!(
            ".TP\n\\fIdocs/{}\\fR\n{}\n",
            roff_escape(file),
            roff_escape(what)
        ));
    }
    roff
}

fn roff_escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

fn extra_sections() -> String {
    let mut roff = String::from(".SH \"EXIT STATUS\"\n");
    for line in EXIT_CODE_TABLE.lines().skip(1) {
        let line = line.trim();
        let (code, meaning) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        roff.push_str(&format!(
            ".TP\n\\fB{code}\\fR\n{}\n",
            roff_escape(meaning.trim())
        ));
    }
    roff.push_str(".SH SAFETY\n");
    for paragraph in SAFETY.split("\n\n") {
        roff.push_str(&format!(
            ".PP\n{}\n",
            roff_escape(&paragraph.replace('\n', " "))
        ));
    }
    roff.push_str(".SH ENVIRONMENT\n");
    for (name, meaning) in ENVIRONMENT {
        roff.push_str(&format!(".TP\n\\fB{name}\\fR\n{}\n", roff_escape(meaning)));
    }
    roff.push_str(".SH FILES\n");
    for (name, meaning) in FILES {
        roff.push_str(&format!(
            ".TP\n\\fI{}\\fR\n{}\n",
            roff_escape(name),
            roff_escape(meaning)
        ));
    }
    roff
}

/// What autoctl will and will not type into a pane on its own (docs/safety.md).
pub const SAFETY: &str = "\
autoctl types into a terminal only here: stall check --apply and run tick answer a prompt that \
stayed unchanged for --threshold captures; run tick in dispatch mode types the rendered \
--command; run start --launch types the launch command once; run recover retypes it after the \
agent exited; pane send types what you give it. Commands are typed only when a shell prompt is \
visible (the foreground command is a shell and its last line is a prompt, not output or a \
heredoc's > continuation); run start --launch otherwise exits 2 and types nothing unless \
--force is given.

Answers, and only these: the number of the option labelled exactly Yes in a Claude Code \
permission menu (never Yes, and don't ask again); y and Enter for Aider's (Y)es/(N)o, for \
[Y/n] and (y/n), for Continue? alone, and for a default-No [y/N] or (y/N) only when neither it \
nor the 4 lines above it mention loss or risk (drop, force, reset, discard, lose, overwrite, \
replace, uninstall, remove, clean, prune, revert, kill, irreversible, are you sure); yes and \
Enter for (yes/no) and type yes to confirm under the same check; Enter for Press enter to \
continue; q for a pager; continue and Enter when the agent asks whether to continue.

Before an answer: with --agent claude (the default) the program in front is the agent (claude, \
or a title that is exactly a version such as 2.1.197; node, npm, npx, bun or deno only when the \
screen shows Claude Code's own interface); the whole action under approval is on the screen; \
it is not destructive; the recovery budget is not spent; and no autoctl answered this screen \
already. The action is read with box borders stripped, line by line and joined (newlines, \
spaces, nothing) so wrapped commands are whole, and split the way a shell splits it (quotes \
undone; ;, &&, ||, |, $(...), backticks and <(...) separate; sudo, env, command, exec, nohup, \
xargs skipped; /bin/rm is rm) before each command's arguments are judged.

Never typed, only escalated: rm in any spelling (also plain rm file), rm -i, cp -i and mv -i \
prompts, find -delete, shred, truncate, git rm, restore and checkout --; git push -f, --force, \
--force-with-lease, +refspec or --delete, git reset --hard, git clean (not -n), rebase, commit \
--amend, branch -D; DROP, TRUNCATE, DELETE FROM, dropdb, mkfs, dd of=, partitioners; chmod or \
chown -R; a download run by an interpreter (curl | sh, | sudo bash, wget -O- | sh, bash \
<(curl), sh -c $(curl), eval $(wget)); sudo, --force, > truncation; infrastructure deletes \
and package publishing; edits of .claude/ settings and hooks, .mcp.json, .github/workflows, \
.git/ internals, ~/.ssh, shell start-up files, .env files, credentials and keys, /etc; \
Continue with usage credits, Upgrade your plan and other billing menus (under a usage-limit \
banner, Claude Code's limit menu, a quota wait that types nothing); /model pickers; folder \
and host-key trust; logins and passwords; plan approval; and any menu it does not know. \
Escalate means the JSON says so once per distinct screen and nothing is typed.

Rendered commands (--command, --launch) accept substituted values made only of letters, \
digits and . _ - / : @ % + , = that do not start with -; a template may not contain ! (bash \
history expansion) or start with ^. The markers and rules are data: autoctl pane rules --dump.";

/// Environment variables autoctl reads.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    ("NO_COLOR", "Disable colour in help output."),
    (
        "CLAUDE_PROJECT_DIR",
        "Set by Claude Code for hook commands: the project whose .autoctl/ loop `hook stop` and `loop` use when --dir is not given.",
    ),
    (
        "AUTOCTL_TMUX_SOCKET",
        "The tmux socket name for the pane, stall and run commands (tmux -L NAME); same as --tmux-socket.",
    ),
    (
        "AUTOCTL_TMUX_TIMEOUT",
        "How long one tmux call may take before it is killed (a duration such as 10s, the default).",
    ),
    (
        "AUTOCTL_STATE_DIR",
        "Where the run registry (autoctl.db), stall check's default state (stall/SOCKET.json) and the fallback per-pane locks (the usual ones sit beside the tmux socket) live; default $XDG_STATE_HOME/autoctl, else ~/.local/state/autoctl.",
    ),
    (
        "XDG_CONFIG_HOME",
        "Where the approval policy is read from: $XDG_CONFIG_HOME/autoctl/policy.json (default ~/.config/autoctl/policy.json); never from a project.",
    ),
    (
        "TZ",
        "The zone quota banners without a zone name are read in (else the system's local zone).",
    ),
    (
        "AUTOCTL_NOW",
        "Test hook: an RFC 3339 time that every command takes as the current time (run, stall check, lock, hook, the timestamps signal/stop write record). Only tests and benchmarks set it.",
    ),
];

/// The protocol files autoctl reads and writes in a task module.
pub const FILES: &[(&str, &str)] = &[
    (
        ".auto-signal",
        "Progress report written after each step: step, result, next, checkpoint, iteration, timestamp (schema: autoctl schema show auto-signal).",
    ),
    (
        ".auto-stop",
        "Stop request: reason, timestamp, message. Its existence means stop, even when it is invalid.",
    ),
    (
        ".index.md",
        "Task index; its YAML front matter carries status and phase.",
    ),
    (
        ".target.md",
        "Task target; a draft is planned only when it has substantive content.",
    ),
    (
        ".type-profile.md",
        "task-ai type profile; its \"## Auto Adaptation\" section of `- key: value` lines sets the gate's thresholds and retry limits (autoctl lint checks their ranges), and autoctl profile learn rewrites its observed.* lines.",
    ),
    (
        ".tmp/auto-state-N.json",
        "wholework single-issue checkpoint: the verify iteration count (schema: autoctl schema show auto-state).",
    ),
    (
        ".tmp/auto-batch-state-ID.json",
        "wholework batch checkpoint: remaining, completed and failed issues; ID default is .tmp/auto-batch-state.json.",
    ),
    (
        ".tmp/auto-batch-active.json",
        "wholework index of active batch ids, updated under a lock on auto-batch-active.json.lock.",
    ),
    (
        ".autoctl/loop.json",
        "In a project: activates the Claude Code Stop-hook loop (autoctl loop init); .autoctl/loop-state.json holds its counters, .autoctl/loop.lock its heartbeat lock.",
    ),
    (
        ".autoctl/quota-wait.json",
        "In a project: a usage-limit wait recorded by autoctl hook stop-failure; removed by the next finished turn.",
    ),
    (
        ".status.json",
        "task-ai module state: status and updated_at (schema: autoctl schema show task-status).",
    ),
    (
        "$AUTOCTL_STATE_DIR/stall/SOCKET.json",
        "stall check state per target (schema: autoctl schema show stall-state), written atomically under SOCKET.json.lock.",
    ),
    (
        "$XDG_CONFIG_HOME/autoctl/policy.json",
        "The user's approval policy: allow and deny rules per tool and pattern, on_destructive (schema: autoctl schema show policy). Never read from a project.",
    ),
    (
        "$AUTOCTL_STATE_DIR/policy/decisions.jsonl",
        "The approval decision log (autoctl policy log), one JSON line per decision of the hook or a screen; rotated to decisions.jsonl.1 past 1 MiB.",
    ),
    (
        "$AUTOCTL_STATE_DIR/autoctl.db",
        "The run registry (SQLite, WAL): one row per supervised loop, created on first use.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every page SEE ALSO names exists, and every page under docs/ is named.
    #[test]
    fn see_also_names_exactly_the_docs_pages() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        let mut on_disk: Vec<String> = std::fs::read_dir(&docs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".md"))
            .collect();
        on_disk.sort();
        let mut named: Vec<String> = DOC_PAGES.iter().map(|(f, _)| f.to_string()).collect();
        named.sort();
        assert_eq!(on_disk, named, "docs/ and DOC_PAGES differ");
        let (_, top) = &man_pages(<crate::cli::Cli as clap::CommandFactory>::command())[0];
        let top = String::from_utf8_lossy(top);
        for (file, _) in DOC_PAGES {
            assert!(
                top.contains(&format!("docs/{}", roff_escape(file))),
                "{file}"
            );
        }
        let policy = String::from_utf8_lossy(&see_also_page("autoctl-policy-check.1")).into_owned();
        assert!(policy.contains("docs/policy.md"), "{policy}");
    }

    fn see_also_page(name: &str) -> Vec<u8> {
        man_pages(<crate::cli::Cli as clap::CommandFactory>::command())
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, page)| page)
            .unwrap()
    }
}
