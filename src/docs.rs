//! The generated documentation: shell completions and man pages, rendered from the clap tree.
//! They are checked in under `completions/` and `man/`; a test regenerates them in memory and
//! fails on drift (`AUTOCTL_UPDATE=1 cargo test` rewrites them).

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::error::EXIT_CODE_TABLE;

/// The shells `autoctl completions` supports, with the checked-in file name of each.
pub const SHELLS: &[(Shell, &str)] = &[
    (Shell::Bash, "autoctl.bash"),
    (Shell::Zsh, "_autoctl"),
    (Shell::Fish, "autoctl.fish"),
    (Shell::Elvish, "autoctl.elv"),
    (Shell::PowerShell, "_autoctl.ps1"),
];

/// The completion script for one shell.
pub fn completion(shell: Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "autoctl", &mut out);
    out
}

/// Every man page: (file name, roff text), the top page first.
pub fn man_pages() -> Vec<(String, Vec<u8>)> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
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
    page
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

/// What autoctl will and will not type into a pane on its own (README "Safety").
pub const SAFETY: &str = "\
autoctl types into a pane on its own only from stall check --apply, and only when all of \
these hold: the pane has been unchanged for --threshold captures; with --agent claude (the \
default) the agent itself is the pane's foreground command, so a child process (cargo, npm, \
python, less) is observed and never typed into; a rule recognised a prompt whose answer is \
known (permission, yes-no, continue) and the whole action under approval is on the screen; \
no destructive marker appears in that action; the recovery budget is not spent; and no \
autoctl has already answered this very screen.

What it types: the number of the plain Yes option of a Claude Code permission menu (never \
Yes, and don't ask again), y and Enter for [y/N] and (y/n), yes and Enter for (yes/no), Enter \
for Press enter to continue, q for a pager, continue and Enter when the agent asks whether \
to continue.

What it never types, only escalates: anything that deletes or overwrites data (rm, rm -i and \
cp -i prompts, find -delete, shred, git rm, overwrite), rewrites history (git push --force, \
-f or +refspec, git reset --hard, git clean, rebase, commit --amend, branch -D), destroys \
databases or disks (DROP, TRUNCATE, DELETE FROM, mkfs, dd), changes permissions recursively \
(chmod -R, chown -R), pipes a download into a shell (curl | sh), runs sudo or --force, \
deletes infrastructure or publishes packages, spends money or changes billing (Continue with \
usage credits, Upgrade your plan), switches the model (/model pickers), trusts a folder or a \
host key, logs in or asks for a password, or picks from a menu it does not know. Escalate \
means the JSON says so once per distinct screen and nothing is typed.

pane send is a primitive you invoke yourself: the policy governs what autoctl decides to \
answer, not what you send. The markers and rules are data: autoctl pane rules --dump.";

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
        "TZ",
        "The zone quota banners without a zone name are read in (else the system's local zone).",
    ),
    (
        "AUTOCTL_NOW",
        "Test hook: an RFC 3339 time that `run` commands take as the current time. Only tests and benchmarks set it.",
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
        "$AUTOCTL_STATE_DIR/autoctl.db",
        "The run registry (SQLite, WAL): one row per supervised loop, created on first use.",
    ),
];
