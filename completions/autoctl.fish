# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_autoctl_global_optspecs
    string join \n tmux-socket= h/help V/version
end

function __fish_autoctl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_autoctl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_autoctl_using_subcommand
    set -l cmd (__fish_autoctl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c autoctl -n "__fish_autoctl_needs_command" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_needs_command" -s V -l version -d 'Print version'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "signal" -d 'Validate, write, read and clear `.auto-signal` progress files'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "stop" -d 'Request, check and clear a loop stop (`.auto-stop`)'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "next" -d 'Print the step a loop runs next'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "table" -d 'List, show and check routing tables'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "task" -d 'Create task modules: `autoctl task new TASK/NAME`'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "lint" -d 'Check task modules: front matter, targets, dependencies, transient files'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "run" -d 'Supervise loops in tmux panes: start, watch, tick, status, stop, ack, recover'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "schema" -d 'List and print the JSON Schemas of the protocol files'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "lock" -d 'Take, refresh, release and inspect a heartbeat lock file'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "loop" -d 'Run a loop inside one Claude Code session: init, status, route, teardown'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "hook" -d 'The agents\' hook commands (stop, event, permission-request, ...) and `hook install`'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "statusline" -d 'Print Claude Code\'s status line and record its rate limits and context use'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "doctor" -d 'Say which of autoctl\'s channels are wired and live, with the fix for each that is not'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "policy" -d 'The approval policy every door uses: check a call, show the rules, print the log'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "pane" -d 'Read tmux panes: capture, hash, classify, wait until ready, send keys'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "stall" -d 'Detect stalled agents and recover them within limits'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "man" -d 'Print or write the man pages'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "gate" -d 'Gate a check\'s D1–D6 score at a checkpoint: PASS, NEEDS_FIX, ... or BLOCKED'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "converge" -d 'Accept or roll back a stage by its convergence (ACCEPT, SATISFIED, ROLLBACK)'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "profile" -d 'Show and learn a `.type-profile.md` "## Auto Adaptation" section (task-ai)'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "vfp" -d 'Count the exec steps that make a test stub pass (task-ai\'s VH→HS cycles)'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "route" -d 'Print the phases an issue runs: the route-phase matrix by Size and flags'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "graph" -d 'Level and run a sub-issue graph; the parent\'s phase and close flow (wholework)'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "checkpoint" -d 'Write, read and delete wholework checkpoint files'
complete -c autoctl -n "__fish_autoctl_needs_command" -f -a "plan" -d 'Validate a wholework recovery plan'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and not __fish_seen_subcommand_from validate write read clear" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and not __fish_seen_subcommand_from validate write read clear" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and not __fish_seen_subcommand_from validate write read clear" -f -a "validate" -d 'Validate `.auto-signal` documents against the schema and the protocol\'s rules'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and not __fish_seen_subcommand_from validate write read clear" -f -a "write" -d 'Write `.auto-signal` into a task module, atomically'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and not __fish_seen_subcommand_from validate write read clear" -f -a "read" -d 'Print a module\'s `.auto-signal` (or one field of it)'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and not __fish_seen_subcommand_from validate write read clear" -f -a "clear" -d 'Remove a module\'s `.auto-signal` and `.auto-retry` (succeeds when there are none)'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from validate" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from validate" -l table -d 'Routing table for --strict: a built-in name or a JSON file' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from validate" -l format -d 'Output format (json prints one object per document, as JSON Lines)' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from validate" -l strict -d 'Also require `next` and `checkpoint` to be what the routing table gives'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from validate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from write" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from write" -l step -d 'The step that just completed' -r -f -a "plan\t''
check\t''
exec\t''
merge\t''
report\t''"
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from write" -l result -d 'The step\'s result: one of the whitelist, or (step-N) for any step number N' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from write" -l next -d 'What runs next; computed from the table when omitted' -r -f -a "plan\t''
check\t''
exec\t''
merge\t''
report\t''
(stop)\t''"
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from write" -l checkpoint -d 'The checkpoint the next step runs at ("" for none); computed when omitted' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from write" -l iteration -d 'The loop\'s iteration count (auto mode); omitted in manual runs' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from write" -l table -d 'Routing table used to compute next: a built-in name or a JSON file' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from write" -l attempt -d 'How many times in a row the step gave this result [default: counted in .auto-retry]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from write" -l print -d 'Print the document that was written'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from write" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from read" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from read" -l field -d 'Print only this field\'s value (step, result, next, checkpoint, iteration, timestamp)' -r -f -a "step\t''
result\t''
next\t''
checkpoint\t''
iteration\t''
timestamp\t''"
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from read" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from clear" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand signal; and __fish_seen_subcommand_from clear" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and not __fish_seen_subcommand_from write check clear" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and not __fish_seen_subcommand_from write check clear" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and not __fish_seen_subcommand_from write check clear" -f -a "write" -d 'Ask the loop in DIR to stop at its next iteration boundary'
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and not __fish_seen_subcommand_from write check clear" -f -a "check" -d 'Is a stop requested in DIR? Prints the reason and exits 0 if so, exits 1 if not'
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and not __fish_seen_subcommand_from write check clear" -f -a "clear" -d 'Withdraw a stop request (succeeds when there is none)'
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and __fish_seen_subcommand_from write" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and __fish_seen_subcommand_from write" -l reason -d 'Why the loop must stop' -r -f -a "timeout\t''
max_iterations\t''
user_stop\t''
stall_limit\t''
reasoning_loop\t''
compaction_limit\t''"
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and __fish_seen_subcommand_from write" -l message -d 'A human-readable detail, kept in the file' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and __fish_seen_subcommand_from write" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and __fish_seen_subcommand_from check" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and __fish_seen_subcommand_from check" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and __fish_seen_subcommand_from clear" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stop; and __fish_seen_subcommand_from clear" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l step -d 'The step that just completed' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l result -d 'The step\'s result' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l checkpoint -d 'The checkpoint the step ran at (post-plan, mid-exec, post-exec)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l attempt -d 'How many times in a row the step gave this result (1 = the first time)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l status -d 'A task status (draft, planning, review, executing, re-planning, complete, ...)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l phase -d 'The task\'s phase, for statuses that branch on it (re-planning: needs-plan, needs-check)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l task -d 'The task module directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l table -d 'Routing table: a built-in name or a JSON file' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l command -d 'Print the command a daemon would type for the next step, from TEMPLATE' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand next" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and not __fish_seen_subcommand_from list show check" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and not __fish_seen_subcommand_from list show check" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and not __fish_seen_subcommand_from list show check" -f -a "list" -d 'List the built-in routing tables'
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and not __fish_seen_subcommand_from list show check" -f -a "show" -d 'Print a routing table as JSON (a built-in name or a file)'
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and not __fish_seen_subcommand_from list show check" -f -a "check" -d 'Prove a table\'s properties, printing a counterexample for each that fails'
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and __fish_seen_subcommand_from list" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and __fish_seen_subcommand_from list" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and __fish_seen_subcommand_from show" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and __fish_seen_subcommand_from check" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and __fish_seen_subcommand_from check" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand table; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand task; and not __fish_seen_subcommand_from new" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand task; and not __fish_seen_subcommand_from new" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand task; and not __fish_seen_subcommand_from new" -f -a "new" -d 'Create a task module: .index.md, .target.md, and its line in the root listing'
complete -c autoctl -n "__fish_autoctl_using_subcommand task; and __fish_seen_subcommand_from new" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand task; and __fish_seen_subcommand_from new" -l title -d 'The task\'s title [default: the module\'s name]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand task; and __fish_seen_subcommand_from new" -l type -d 'The task\'s type (feature, bugfix, ...): its first tag, and a .type-profile.md whose "## Auto Adaptation" section `gate` and `profile` read' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand task; and __fish_seen_subcommand_from new" -l goal -d 'What to build, written into .target.md [default: a stub to fill in]; at least three words of content' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand task; and __fish_seen_subcommand_from new" -l force -d 'Create the module even though its --goal is too short for `autoctl next` to plan'
complete -c autoctl -n "__fish_autoctl_using_subcommand task; and __fish_seen_subcommand_from new" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand lint" -l format -d 'Output format' -r -f -a "text\t'`PATH:LINE:COL: error[RULE]: message`, one line per finding'
json\t'One JSON array of findings'
github\t'GitHub Actions workflow commands (`::error file=...::...`)'
sarif\t'A SARIF 2.1.0 log for code scanning'"
complete -c autoctl -n "__fish_autoctl_using_subcommand lint" -l deny -d 'Report RULE as an error; `warnings` denies every warning (repeatable)' -r -f -a "unreadable\t''
module-not-directory\t''
module-name\t''
index-missing\t''
index-not-text\t''
index-no-front-matter\t''
index-yaml\t''
index-required-field\t''
index-field-type\t''
index-status\t''
index-timestamp\t''
depends-missing\t''
depends-self\t''
depends-cycle\t''
index-branch\t''
index-worktree\t''
target-missing\t''
target-template\t''
target-empty\t''
status-contradicted\t''
signal-invalid\t''
stop-invalid\t''
transient-tracked\t''
transient-not-ignored\t''
transient-leftover\t''
status-json-invalid\t''
profile-adaptation\t''
root-index-missing\t''
root-index-stale\t''
root-index-unlisted\t''
warnings\t''"
complete -c autoctl -n "__fish_autoctl_using_subcommand lint" -l allow -d 'Do not report RULE (repeatable)' -r -f -a "unreadable\t''
module-not-directory\t''
module-name\t''
index-missing\t''
index-not-text\t''
index-no-front-matter\t''
index-yaml\t''
index-required-field\t''
index-field-type\t''
index-status\t''
index-timestamp\t''
depends-missing\t''
depends-self\t''
depends-cycle\t''
index-branch\t''
index-worktree\t''
target-missing\t''
target-template\t''
target-empty\t''
status-contradicted\t''
signal-invalid\t''
stop-invalid\t''
transient-tracked\t''
transient-not-ignored\t''
transient-leftover\t''
status-json-invalid\t''
profile-adaptation\t''
root-index-missing\t''
root-index-stale\t''
root-index-unlisted\t''"
complete -c autoctl -n "__fish_autoctl_using_subcommand lint" -l explain -d 'Print what RULE checks and how to fix it' -r -f -a "unreadable\t''
module-not-directory\t''
module-name\t''
index-missing\t''
index-not-text\t''
index-no-front-matter\t''
index-yaml\t''
index-required-field\t''
index-field-type\t''
index-status\t''
index-timestamp\t''
depends-missing\t''
depends-self\t''
depends-cycle\t''
index-branch\t''
index-worktree\t''
target-missing\t''
target-template\t''
target-empty\t''
status-contradicted\t''
signal-invalid\t''
stop-invalid\t''
transient-tracked\t''
transient-not-ignored\t''
transient-leftover\t''
status-json-invalid\t''
profile-adaptation\t''
root-index-missing\t''
root-index-stale\t''
root-index-unlisted\t''"
complete -c autoctl -n "__fish_autoctl_using_subcommand lint" -l table -d 'Routing table whose statuses .index.md may use: a built-in name or a JSON file' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lint" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lint" -l list-rules -d 'List the rules: id, default severity, what each finds'
complete -c autoctl -n "__fish_autoctl_using_subcommand lint" -s L -l follow -d 'Follow symlinks while looking for task roots'
complete -c autoctl -n "__fish_autoctl_using_subcommand lint" -l no-git -d 'Skip the git checks of transient files'
complete -c autoctl -n "__fish_autoctl_using_subcommand lint" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -f -a "start" -d 'Register a loop for a tmux session and a task module'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -f -a "stop" -d 'Stop a loop: write `.auto-stop` and end the run'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -f -a "status" -d 'Show runs: iteration, elapsed time and timeout, current step, state, stalls, recoveries'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -f -a "lookup" -d 'Print the session whose loop owns a task dir (exit 1 when no loop runs there)'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -f -a "tick" -d 'One heartbeat for running loops; prints one JSON line per run'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -f -a "continue" -d 'Send a continuation into a run\'s pane unless the task moved on (exit 1, nothing sent)'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -f -a "ack" -d 'Acknowledge a run that needs a person: clear its needs-person state (the loop goes on)'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -f -a "recover" -d 'Recover running loops after a restart (ai-cli-task\'s server recovery)'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -f -a "watch" -d 'Tick each loop the moment its signal or stop file changes; heartbeat the rest'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and not __fish_seen_subcommand_from start stop status lookup tick continue ack recover watch turn" -f -a "turn" -d 'Send one step to Codex CLI as a turn over its app-server, and wait for the turn to end'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l session -d 'The tmux session the agent runs in (the run\'s name; any text, never run by a shell)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l task -d 'The task module directory (stored as its canonical path)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l target -d 'The tmux pane to watch and type into [default: the session\'s active pane]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l mode -d 'Who drives the loop' -r -f -a "observe\t'The agent loops by itself (ai-cli-task); autoctl watches, answers safe prompts, stops it'
dispatch\t'After each signal autoctl types the next command into the ready pane (ai-cli-task v1)'"
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l max-iterations -d 'Stop the loop when its iteration count reaches N' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l timeout -d 'Stop the loop after this much supervised time (quota waits excluded), e.g. 30m, 1h30m' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l into -d 'Dispatch mode: where each step is typed [default: agent with --agent claude, shell with --agent generic]' -r -f -a "agent\t'Into the agent idle at its own prompt'
shell\t'At a shell prompt: a command that runs the step and returns to the shell'
app-server\t'At a shell prompt: `autoctl run turn`, the step sent to Codex CLI over its app-server'"
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l command -d 'Dispatch mode: the command typed for each step [default: `/ai-cli-task {next} {task} {args}` with --into agent, `claude -p` with {settings} and {stream} with --into shell, `autoctl run turn "Run the {next} step of the task in {task} {args}. When it is done, write its signal with autoctl signal write."` with --into app-server]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l table -d 'Dispatch mode: the routing table that gives the entry step (built-in name or file)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l launch -d 'Type the agent\'s command into the pane after registering (observe mode, or dispatch mode --into agent)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l agent -d 'How panes are read: `claude`, `codex`, `gemini` act only on that agent\'s own screen; `generic` reads any program\'s prompts (same safety policy) [default: the program --launch starts when it is claude, codex or gemini, generic for any other program, claude without --launch]' -r -f -a "claude\t'Claude Code: act only when the agent itself is the pane\'s foreground command'
codex\t'OpenAI Codex CLI: act only when Codex\'s own screen is in front (it runs under node)'
gemini\t'Google Gemini CLI: act only when Gemini\'s own screen is in front (it runs under node)'
generic\t'Any program: read its prompts and apply the same safety policy'"
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l threshold -d 'Heartbeats a screen stays unchanged before it is examined as a suspected stall, counted by elapsed time: N × `run tick --heartbeat` (3 × 60s), however often ticks come' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l max-recoveries-per-iteration -d 'Stall recoveries allowed per iteration before the loop is stopped (stall_limit)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l max-recoveries -d 'Stall recoveries allowed in total before the loop is stopped (stall_limit)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l max-answers -d 'Prompts the approval policy proved harmless answered per step (a new signal starts a step); past it the prompt is escalated to a person. Answers are not stall recoveries' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l repeat-limit -d 'The same agent message this many times in a row stops the loop (reasoning_loop; 0: never)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l step-timeout -d 'No .status.json update for this long is a step timeout (a stall: the screen decides the recovery, an idle agent gets a continuation)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l max-compactions -d 'Stop the loop when this many context compactions happen in one iteration (0: never)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l compact-at -d 'With --launch and --agent claude: Claude Code compacts its context by itself at this percentage of the window (0: left to Claude Code\'s default)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l account -d 'The subscription account the agent spends: runs of one account share its usage windows and are paced together by the quota governor (`run tick --pace-stop`)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l priority -d 'Who the governor releases first after a usage window resets (higher first), and who may start steps in the weekly reserve (above `run tick --weekly-priority`)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l resume-text -d 'What autoctl types (then Enter) to resume the agent after a wait' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l max-resumes -d 'Resumes per step after the agent gave up on an API error (backoff 1, 2, 4, 8 minutes, at most 30); then a person is asked' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l resume-margin -d 'After a usage limit\'s reset, wait this long before resuming (while Claude Code\'s own automatic continue is armed, at least 4m: it goes first)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l resume-check -d 'After a resume at a usage limit, how long the agent has to start working before a person is asked' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l max-retry-wait -d 'The longest wait for the agent\'s own retries (its countdown on screen)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l max-quota-wait -d 'The longest wait for a usage limit without a reset time, and the farthest reset waited for' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l stream-timeout -d 'A working screen unchanged this long with no tool running is a wedged stream (one Esc, then the resume text)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l tool-timeout -d 'A tool running this long is escalated (a running tool is never a stall)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l unknown-after -d 'A screen autoctl cannot read (class unknown: a dialog it does not know, a REPL in front of the agent) unchanged this long is escalated once, with its last lines' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l notify -d 'Run CMD for this run\'s events too (see `run tick --notify`)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l registry -d 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l force -d 'With --launch: type the command even when the pane shows no shell prompt, and without checking that its program exists on the pane\'s PATH'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -l unattended -d 'Nobody will answer this run\'s prompts: the agent\'s PreToolUse hook (`autoctl hook pre-tool-use`, wired by `autoctl hook install`) denies what the approval policy names destructive, telling the model the rule and why, instead of asking a person'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from start" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from stop" -l session -d 'The run\'s session' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from stop" -l task -d 'The run\'s task module directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from stop" -l reason -d 'Why the loop stops (written to `.auto-stop` and kept in the registry)' -r -f -a "timeout\t''
max_iterations\t''
user_stop\t''
stall_limit\t''
reasoning_loop\t''
compaction_limit\t''"
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from stop" -l message -d 'A human-readable detail, kept in `.auto-stop` and the registry' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from stop" -l registry -d 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from stop" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from status" -l session -d 'Only this session\'s run (exit 1 when there is none)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from status" -l task -d 'Only the run of this task module directory (exit 1 when there is none)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from status" -l format -d 'Output format' -r -f -a "text\t'A table with a header: aligned on a terminal, tab-separated when piped'
json\t'One JSON object per run (JSON Lines; schema: autoctl schema show run-status)'
prometheus\t'Prometheus text exposition (node_exporter textfile collector)'"
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from status" -l registry -d 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from status" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from status" -l all -d 'Every run (the default)'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from status" -l accounts -d 'Show the accounts instead of the runs: each account\'s usage windows (the freshest reading from any of its sessions, with its source and age), the runs whose step holds the quota governor\'s permit, and who waits, in release order (with --session or --task: that run\'s account). Prometheus output always has them'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from lookup" -l task -d 'The task module directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from lookup" -l format -d 'Output format (json: {"session_name","status"})' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from lookup" -l registry -d 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from lookup" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from lookup" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l session -d 'Tick this session\'s run' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l heartbeat -d 'How often ticks are scheduled; stall heartbeats are spaced at least half of it apart' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l notify -d 'Run CMD (with `sh -c`) once for each event: escalate, needs-person, resume, quota-wait-start, quota-wait-end, stop, finish, lost, exit, stall-limit, restart' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l notify-timeout -d 'Kill a notify command (and what it started) still running after this long' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l renotify -d 'Announce a run that still needs a person again at most this often (needs-person)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l rules -d 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l policy -d 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l compact-at -d 'Type /compact when the status line\'s context use reaches PERCENT and the agent is idle at its prompt (once per crossing, as the iteration\'s first compaction; 0: never) [default: the task\'s compaction_threshold in its .type-profile.md, else 82 for a task-ai module (one with a .status.json), else 70]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l hook-fresh -d 'A hook state older than this, or older than the last change of what the screen shows (its class), is not trusted; the screen decides' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l pace-stop -d 'No new step starts (and no resume is typed) while the account\'s 5-hour window is at PERCENT or a step would take it past PERCENT (the cost of a step is learned from the windows\' movement); the run waits, quota-paced, for the reset' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l resume-burst -d 'After a reset, release waiting runs of an account in priority order, at most N a minute (a session that continued by itself counts as one)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l weekly-reserve -d 'With PERCENT or less of the 7-day window left, only runs with a priority above --weekly-priority start steps; the account is escalated once' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l weekly-priority -d 'The priority (`run start --priority`) a run needs above it to use the weekly reserve' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l host-lease -d 'A host whose ticks and watcher have not renewed its lease for this long is shown host-lost and announced once (its runs are never typed into from elsewhere)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l registry -d 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l all -d 'Tick every running run'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l dry-run -d 'Decide and print, but change nothing (no keys typed, no files written, no state saved)'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l wait-weekly -d 'Wait out a weekly usage limit (the status line\'s seven_day at 100%) instead of escalating it'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -l no-governor -d 'Do not pace: every step and resume goes ahead whatever the account\'s windows say'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from tick" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from continue" -l session -d 'The run\'s session' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from continue" -l task -d 'The run\'s task module directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from continue" -l if-unchanged -d 'Send only if `.status.json`\'s `updated_at` is still exactly this text' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from continue" -l text -d 'What to type (then Enter)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from continue" -l registry -d 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from continue" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from continue" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from ack" -l session -d 'The run\'s session' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from ack" -l task -d 'The run\'s task module directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from ack" -l registry -d 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from ack" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from ack" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from recover" -l rules -d 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from recover" -l policy -d 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from recover" -l registry -d 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from recover" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from recover" -l dry-run -d 'Decide and print, but change nothing'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from recover" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l session -d 'Watch this session\'s run (until it ends)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l format -d 'How to print each decision [default: text on a terminal, json when piped]' -r -f -a "text\t'One line per decision: time, session, decision, the reasons in words (a decision repeated with the same reasons is shown once)'
json\t'One JSON object per decision (JSON Lines; schema: autoctl schema show tick-event)'"
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l heartbeat -d 'How often every run gets a heartbeat (stall checks, limits), as from cron; at least 1s' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l notify -d 'Run CMD (with `sh -c`) once for each event: escalate, needs-person, resume, quota-wait-start, quota-wait-end, stop, finish, lost, exit, stall-limit, restart' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l notify-timeout -d 'Kill a notify command (and what it started) still running after this long' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l renotify -d 'Announce a run that still needs a person again at most this often (needs-person)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l rules -d 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l policy -d 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l compact-at -d 'Type /compact when the status line\'s context use reaches PERCENT and the agent is idle at its prompt (once per crossing, as the iteration\'s first compaction; 0: never) [default: the task\'s compaction_threshold in its .type-profile.md, else 82 for a task-ai module (one with a .status.json), else 70]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l hook-fresh -d 'A hook state older than this, or older than the last change of what the screen shows (its class), is not trusted; the screen decides' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l pace-stop -d 'No new step starts (and no resume is typed) while the account\'s 5-hour window is at PERCENT or a step would take it past PERCENT (the cost of a step is learned from the windows\' movement); the run waits, quota-paced, for the reset' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l resume-burst -d 'After a reset, release waiting runs of an account in priority order, at most N a minute (a session that continued by itself counts as one)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l weekly-reserve -d 'With PERCENT or less of the 7-day window left, only runs with a priority above --weekly-priority start steps; the account is escalated once' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l weekly-priority -d 'The priority (`run start --priority`) a run needs above it to use the weekly reserve' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l host-lease -d 'A host whose ticks and watcher have not renewed its lease for this long is shown host-lost and announced once (its runs are never typed into from elsewhere)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l registry -d 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l all -d 'Watch every running run, and runs started later'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l until-needs-person -d 'With --session: also exit (0) as soon as the loop needs a person (an escalated prompt), so you can answer it in its pane and run `run watch` again'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l wait-weekly -d 'Wait out a weekly usage limit (the status line\'s seven_day at 100%) instead of escalating it'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -l no-governor -d 'Do not pace: every step and resume goes ahead whatever the account\'s windows say'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from turn" -l app-server -d 'How to run the app-server (a shell command)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from turn" -l approval-policy -d 'Codex\'s approval policy for a new thread' -r -f -a "untrusted\t''
on-request\t''
never\t''"
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from turn" -l sandbox -d 'Codex\'s sandbox for a new thread' -r -f -a "read-only\t''
workspace-write\t''
danger-full-access\t''"
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from turn" -l ask-timeout -d 'How long a question to the person may wait before it is declined' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from turn" -l timeout -d 'The longest the turn may take; past it the turn is interrupted' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from turn" -l policy -d 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from turn" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from turn" -l new-thread -d 'Start a new thread even when this pane\'s previous step left one'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from turn" -l unattended -d 'Decline what the policy names destructive instead of asking: nobody will answer'
complete -c autoctl -n "__fish_autoctl_using_subcommand run; and __fish_seen_subcommand_from turn" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand schema; and not __fish_seen_subcommand_from list show" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand schema; and not __fish_seen_subcommand_from list show" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand schema; and not __fish_seen_subcommand_from list show" -f -a "list" -d 'List the schemas: name, file, what it describes'
complete -c autoctl -n "__fish_autoctl_using_subcommand schema; and not __fish_seen_subcommand_from list show" -f -a "show" -d 'Print one schema (draft 2020-12 JSON)'
complete -c autoctl -n "__fish_autoctl_using_subcommand schema; and __fish_seen_subcommand_from list" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand schema; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand schema; and __fish_seen_subcommand_from show" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand schema; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and not __fish_seen_subcommand_from acquire refresh release status" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and not __fish_seen_subcommand_from acquire refresh release status" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and not __fish_seen_subcommand_from acquire refresh release status" -f -a "acquire" -d 'Take FILE for OWNER: free, stale, or held by a recorded process that is gone'
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and not __fish_seen_subcommand_from acquire refresh release status" -f -a "refresh" -d 'Renew OWNER\'s heartbeat in FILE'
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and not __fish_seen_subcommand_from acquire refresh release status" -f -a "release" -d 'Give FILE up; only its owner may'
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and not __fish_seen_subcommand_from acquire refresh release status" -f -a "status" -d 'Who holds FILE, and is it alive?'
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from acquire" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from acquire" -l owner -d 'Who takes the lock, e.g. session:<id> or cron:nightly' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from acquire" -l stale -d 'A lock with no heartbeat for longer than this is stale and may be taken over' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from acquire" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from acquire" -l pid -d 'Record PID as the process whose life the lock stands for [default: none]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from acquire" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from refresh" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from refresh" -l owner -d 'Who takes the lock, e.g. session:<id> or cron:nightly' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from refresh" -l stale -d 'A lock with no heartbeat for longer than this is stale and may be taken over' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from refresh" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from refresh" -l pid -d 'Record PID as the process whose life the lock stands for [default: none]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from refresh" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from release" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from release" -l owner -d 'Who takes the lock, e.g. session:<id> or cron:nightly' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from release" -l stale -d 'A lock with no heartbeat for longer than this is stale and may be taken over' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from release" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from release" -l pid -d 'Record PID as the process whose life the lock stands for [default: none]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from release" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from status" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from status" -l owner -d 'Answer yes only when this owner holds the lock' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from status" -l stale -d 'A lock with no heartbeat for longer than this is stale and may be taken over' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from status" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand lock; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and not __fish_seen_subcommand_from init status route teardown" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and not __fish_seen_subcommand_from init status route teardown" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and not __fish_seen_subcommand_from init status route teardown" -f -a "init" -d 'Activate a loop in the project: write D/.autoctl/loop.json and reset the loop state'
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and not __fish_seen_subcommand_from init status route teardown" -f -a "status" -d 'Show the loop: bound session, iterations, tokens, lock, quota wait, how it ended'
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and not __fish_seen_subcommand_from init status route teardown" -f -a "route" -d 'Print what `hook stop` would answer now, changing nothing'
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and not __fish_seen_subcommand_from init status route teardown" -f -a "teardown" -d 'Remove the loop: its activation file and its lock, whoever holds it'
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l dir -d 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l session -d 'Bind the loop to this session id [default: the first session that stops]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l max-iterations -d 'Turns the session may finish inside the loop' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l budget -d 'Token budget of the session: input, output, cache-write and cache-read tokens from the transcript\'s usage fields, counted from the loop\'s first turn' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l sentinel -d 'What the agent writes when the work is done: a <promise>...</promise> tag counts anywhere in its last message (outside code); any other text must be a line of its own' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l prompt -d 'The prompt fed after every turn' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l prompt-file -d 'A file holding the prompt, read again at every turn (edit it to steer the loop)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l task -d 'A task module: the prompt is the command the routing table gives for its .auto-signal (else its .index.md status); its .auto-stop or a (stop) route ends the loop' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l table -d 'Routing table for --task: a built-in name or a JSON file' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l template -d 'The prompt for --task; placeholders {next}, {checkpoint}, {task}, {iteration}, {args}' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l max-idle -d 'End the loop after this many consecutive turns without a tool call (0: never)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l max-compactions -d 'End the loop when this many context compactions happen within one iteration (0: never)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l stale -d 'The loop lock is stale after this long without a heartbeat' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l transcript-wait -d 'How long `hook stop` waits for a transcript that lags behind the session when the hook input has no last_assistant_message' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l format -d 'Output format (json prints the activation file\'s settings)' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -l force -d 'Replace a loop that is still running for another session'
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from status" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from status" -l dir -d 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from status" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from route" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from route" -l dir -d 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from route" -l session -d 'The session asking [default: the bound session, or a new one when unbound]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from route" -l transcript -d 'A transcript to observe (completion, tool calls, tokens since the loop\'s cursor)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from route" -l last-message -d 'The last assistant message, as Claude Code passes it' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from route" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from route" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from teardown" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from teardown" -l dir -d 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand loop; and __fish_seen_subcommand_from teardown" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and not __fish_seen_subcommand_from stop stop-failure event install permission-request pre-tool-use" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and not __fish_seen_subcommand_from stop stop-failure event install permission-request pre-tool-use" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and not __fish_seen_subcommand_from stop stop-failure event install permission-request pre-tool-use" -f -a "stop" -d 'Answer Claude Code\'s Stop event: continue the loop with its next prompt, or let it stop'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and not __fish_seen_subcommand_from stop stop-failure event install permission-request pre-tool-use" -f -a "stop-failure" -d 'Record Claude Code\'s StopFailure event (a turn that ended on an API error)'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and not __fish_seen_subcommand_from stop stop-failure event install permission-request pre-tool-use" -f -a "event" -d 'Record any Claude Code hook event as the session\'s typed state'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and not __fish_seen_subcommand_from stop stop-failure event install permission-request pre-tool-use" -f -a "install" -d 'Wire autoctl\'s hooks into an agent\'s settings (Claude Code, Codex CLI, Gemini CLI)'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and not __fish_seen_subcommand_from stop stop-failure event install permission-request pre-tool-use" -f -a "permission-request" -d 'Answer Claude Code\'s PermissionRequest: allow what the policy proves harmless'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and not __fish_seen_subcommand_from stop stop-failure event install permission-request pre-tool-use" -f -a "pre-tool-use" -d 'Answer Claude Code\'s PreToolUse: the policy\'s floor in every permission mode'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from stop" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from stop" -l agent -d 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI\'s event names, Codex CLI\'s turn_id, else Claude Code]' -r -f -a "claude\t'Claude Code'
codex\t'OpenAI Codex CLI'
gemini\t'Google Gemini CLI'"
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from stop" -l dir -d 'The project whose loop answers [default: $CLAUDE_PROJECT_DIR, else the input\'s cwd]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from stop" -l log -d 'Append one JSON line per call to FILE: what was read and what was answered' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from stop-failure" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from stop-failure" -l agent -d 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI\'s event names, Codex CLI\'s turn_id, else Claude Code]' -r -f -a "claude\t'Claude Code'
codex\t'OpenAI Codex CLI'
gemini\t'Google Gemini CLI'"
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from stop-failure" -l dir -d 'The project whose loop answers [default: $CLAUDE_PROJECT_DIR, else the input\'s cwd]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from stop-failure" -l log -d 'Append one JSON line per call to FILE: what was read and what was answered' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from stop-failure" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from event" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from event" -l agent -d 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI\'s event names, Codex CLI\'s turn_id, else Claude Code]' -r -f -a "claude\t'Claude Code'
codex\t'OpenAI Codex CLI'
gemini\t'Google Gemini CLI'"
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from event" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from install" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from install" -l agent -d 'The agent whose hooks are wired' -r -f -a "claude\t'Claude Code'
codex\t'OpenAI Codex CLI'
gemini\t'Google Gemini CLI'"
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from install" -l project -d 'The project whose settings are changed (.claude/settings.json, .codex/hooks.json, .gemini/settings.json) [default: the current directory]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from install" -l autoctl -d 'How the hooks run autoctl [default: `autoctl` when that is this binary on PATH, else this binary\'s absolute path]' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from install" -l user -d 'Change the user\'s settings instead (~/.claude/settings.json, ~/.codex/hooks.json, ~/.gemini/settings.json): every interactive session of this user'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from install" -l yes -d 'Confirm --user'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from install" -l dry-run -d 'Print the diff and change nothing'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from install" -l uninstall -d 'Remove autoctl\'s hooks and status line (a wrapped status line is given back)'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from install" -l commands -d 'Also install the ai-cli-task slash command (.claude/commands/ai-cli-task.md), which runs the steps `run start --mode dispatch` types into Claude Code (Claude Code only)'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from permission-request" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from permission-request" -l policy -d 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from permission-request" -l timeout -d 'Answer within this time, whatever happens (a stalled stdin, a slow disk): past it the hook gives no decision, so Claude Code shows its prompt' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from permission-request" -l agent -d 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI\'s event names, Codex CLI\'s turn_id, else Claude Code]' -r -f -a "claude\t'Claude Code'
codex\t'OpenAI Codex CLI'
gemini\t'Google Gemini CLI'"
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from permission-request" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from pre-tool-use" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from pre-tool-use" -l policy -d 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from pre-tool-use" -l timeout -d 'Answer within this time, whatever happens: past it the hook gives no decision' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from pre-tool-use" -l agent -d 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI\'s event names, Codex CLI\'s turn_id, else Claude Code]' -r -f -a "claude\t'Claude Code'
codex\t'OpenAI Codex CLI'
gemini\t'Google Gemini CLI'"
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from pre-tool-use" -l unattended -d 'Deny what the policy names destructive instead of asking: nobody will answer [default: ask, unless AUTOCTL_UNATTENDED=1 is in the agent\'s environment, `run start --unattended` marked the agent\'s tmux pane, or the policy file says on_destructive "deny"]'
complete -c autoctl -n "__fish_autoctl_using_subcommand hook; and __fish_seen_subcommand_from pre-tool-use" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand statusline" -l then -d 'Also run this status-line command and print its first line before autoctl\'s' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand statusline" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand statusline" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand doctor" -l session -d 'Only this run (its tmux session name) or Claude Code session (its session_id)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand doctor" -l format -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand doctor" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and not __fish_seen_subcommand_from check show log export test" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and not __fish_seen_subcommand_from check show log export test" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and not __fish_seen_subcommand_from check show log export test" -f -a "check" -d 'Decide one tool call and print the decision and the rule that made it'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and not __fish_seen_subcommand_from check show log export test" -f -a "show" -d 'Print the effective rules: the built-in rules and the policy file\'s'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and not __fish_seen_subcommand_from check show log export test" -f -a "log" -d 'Print the decision log (oldest first)'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and not __fish_seen_subcommand_from check show log export test" -f -a "export" -d 'Write autoctl\'s rules as Gemini CLI\'s own policy-engine file'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and not __fish_seen_subcommand_from check show log export test" -f -a "test" -d 'Check the rules\' match and not_match examples, and print each one decided otherwise'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from check" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from check" -l tool -d 'The tool: Bash, Read, Write, Edit, WebFetch, mcp__server__tool and others' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from check" -l input -d 'The tool\'s input as JSON, as Claude Code sends it ({"command": "ls"} for Bash, {"file_path": "src/a.rs"} for Write)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from check" -l cwd -d 'The directory the call runs in [default: the current directory]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from check" -l project -d 'The project directory, when it is not the working directory [default: $CLAUDE_PROJECT_DIR]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from check" -l screen -d 'Decide the prompt on a captured screen (a file, or - for stdin) the way a supervisor would: a Claude Code permission box read back into its tool call, or a program\'s yes/no question' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from check" -l policy -d 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from check" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from check" -l batch -d 'Read hook payloads as JSON lines on stdin; print one decision (JSON) per line'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from show" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from show" -l policy -d 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from show" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from log" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from log" -l tail -d 'Only the last N decisions' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from log" -l format -d 'Output format (json: one object per line)' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from log" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from export" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from export" -s o -l output -d 'Where to write it (- for stdout) [default: $GEMINI_CLI_HOME/.gemini/policies/autoctl.toml, else ~/.gemini/policies/autoctl.toml]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from export" -l policy -d 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from export" -l gemini -d 'Export for Gemini CLI\'s policy engine (the only target so far)'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from test" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from test" -l policy -d 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from test" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand policy; and __fish_seen_subcommand_from test" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and not __fish_seen_subcommand_from capture hash classify ready send rules" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and not __fish_seen_subcommand_from capture hash classify ready send rules" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and not __fish_seen_subcommand_from capture hash classify ready send rules" -f -a "capture" -d 'Print a pane\'s text (wrapped lines joined, trailing blank rows dropped)'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and not __fish_seen_subcommand_from capture hash classify ready send rules" -f -a "hash" -d 'Print a stable hash of a pane\'s normalized text'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and not __fish_seen_subcommand_from capture hash classify ready send rules" -f -a "classify" -d 'Say what a pane shows: class, action, and the rule that decided'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and not __fish_seen_subcommand_from capture hash classify ready send rules" -f -a "ready" -d 'Is a shell prompt in front and no command running? Exits 0 if so, 1 if not'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and not __fish_seen_subcommand_from capture hash classify ready send rules" -f -a "send" -d 'Type text or press keys in a pane'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and not __fish_seen_subcommand_from capture hash classify ready send rules" -f -a "rules" -d 'List the classification rules, run each rule\'s own examples, or test them on captures'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from capture" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from capture" -l lines -d 'Print only the last N lines, reaching into the scrollback when N is larger than the pane' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from capture" -l escapes -d 'Keep colour and attribute escape sequences (capture-pane -e)'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from capture" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from hash" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from hash" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from hash" -l raw -d 'Hash the bytes exactly as captured, without normalizing'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from hash" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from classify" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from classify" -l agent -d 'Whose screen it is: with claude, a foreground command other than the agent is observed, never answered' -r -f -a "claude\t'Claude Code: act only when the agent itself is the pane\'s foreground command'
codex\t'OpenAI Codex CLI: act only when Codex\'s own screen is in front (it runs under node)'
gemini\t'Google Gemini CLI: act only when Gemini\'s own screen is in front (it runs under node)'
generic\t'Any program: read its prompts and apply the same safety policy'"
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from classify" -l foreground -d 'The pane\'s foreground command, for a capture on stdin (tmux reports it for a TARGET)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from classify" -l rules -d 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from classify" -l policy -d 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from classify" -l now -d 'Read quota reset times relative to TIME (RFC 3339) instead of now' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from classify" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from classify" -l explain -d 'Also say why: the rule\'s explanation, destructive markers, and rules passed over'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from classify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from ready" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from ready" -l wait -d 'Keep checking until ready or DURATION has passed (backoff 1, 2, 4 ... 30 s)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from ready" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from ready" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from send" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from send" -l text -d 'Text to type literally (no control characters: a newline would run the line; submit with --submit, press other keys with --keys)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from send" -l keys -d 'tmux key names to press (Enter, Escape, C-c, Up, y)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from send" -l delay -d 'The pause between the text and the Enter of --submit' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from send" -l submit -d 'Press Enter after the text, separately, after --delay'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from send" -l verify -d 'Check the result: with --submit, that the text left the input line; without, that it arrived there. Exits 1 if not'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from send" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from rules" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from rules" -l rules -d 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from rules" -l policy -d 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from rules" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from rules" -l check -d 'Run every rule\'s examples and near misses; exit 1 if one fails'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from rules" -l dump -d 'Print the embedded rules file (a starting point for --rules FILE)'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from rules" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand pane; and __fish_seen_subcommand_from rules" -f -a "test" -d 'Classify a directory of labelled captures; exit 1 on any miss or unsafe answer'
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and not __fish_seen_subcommand_from check" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and not __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and not __fish_seen_subcommand_from check" -f -a "check" -d 'How waits end: `run start` (kept with the run) and `stall check`'
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l target -d 'A pane to check (repeat for several)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l state -d 'Where the state is kept [default: $AUTOCTL_STATE_DIR/stall/SOCKET.json]' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l threshold -d 'Unchanged captures that make a stall' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l max-recoveries-per-iteration -d 'Recoveries allowed per signal iteration' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l max-recoveries -d 'Recoveries allowed in total' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l max-answers -d 'Harmless prompts answered per step (a new .auto-signal starts a step); past it the prompt is escalated. Answers are not recoveries' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l task -d 'The task module the pane works on: a new .auto-signal iteration restores the per-iteration budget, and past the limits its .auto-stop is written' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l agent -d 'Whose screen it is: with claude, a foreground command other than the agent is observed, never answered' -r -f -a "claude\t'Claude Code: act only when the agent itself is the pane\'s foreground command'
codex\t'OpenAI Codex CLI: act only when Codex\'s own screen is in front (it runs under node)'
gemini\t'Google Gemini CLI: act only when Gemini\'s own screen is in front (it runs under node)'
generic\t'Any program: read its prompts and apply the same safety policy'"
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l repeat-limit -d 'The same agent message this many times in a row is a reasoning loop (0: never)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l step-timeout -d 'With --task: no .status.json update for this long is a step timeout' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l continue-text -d 'What a step timeout types into an idle agent' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l resume-text -d 'What autoctl types (then Enter) to resume the agent after a wait' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l max-resumes -d 'Resumes per step after the agent gave up on an API error (backoff 1, 2, 4, 8 minutes, at most 30); then a person is asked' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l resume-margin -d 'After a usage limit\'s reset, wait this long before resuming (while Claude Code\'s own automatic continue is armed, at least 4m: it goes first)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l resume-check -d 'After a resume at a usage limit, how long the agent has to start working before a person is asked' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l max-retry-wait -d 'The longest wait for the agent\'s own retries (its countdown on screen)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l max-quota-wait -d 'The longest wait for a usage limit without a reset time, and the farthest reset waited for' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l stream-timeout -d 'A working screen unchanged this long with no tool running is a wedged stream (one Esc, then the resume text)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l tool-timeout -d 'A tool running this long is escalated (a running tool is never a stall)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l unknown-after -d 'A screen autoctl cannot read (class unknown: a dialog it does not know, a REPL in front of the agent) unchanged this long is escalated once, with its last lines' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l rules -d 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l policy -d 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l hook-fresh -d 'A hook state older than this, or older than the last change of what the screen shows (its class), is not trusted; the screen decides' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l all-panes -d 'Check every pane of the tmux server'
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -l apply -d 'Carry the decision out: type the answer, write .auto-stop past the limits'
complete -c autoctl -n "__fish_autoctl_using_subcommand stall; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand completions" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand completions" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand man" -l out -d 'Write every page (one per subcommand) into DIR instead of printing the top page' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand man" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand man" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand gate" -l checkpoint -d 'The checkpoint the check ran at' -r -f -a "post-plan\t'After planning (Phase 2)'
mid-exec\t'In the middle of execution (Phase 3)'
post-exec\t'After execution (Phase 3 done, Phase 4 acceptance)'"
complete -c autoctl -n "__fish_autoctl_using_subcommand gate" -l score -d 'The overall score, or the six D1–D6 scores (space or comma separated), each 0–1' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand gate" -l attempt -d 'Which check this is at this checkpoint: 1 for the first (retry_count + 1)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand gate" -l profile -d 'A `.type-profile.md` whose "## Auto Adaptation" section sets thresholds and limits' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand gate" -l threshold -d 'Override the checkpoint\'s threshold' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand gate" -l retry-limit -d 'Override the checkpoint\'s retry limit' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand gate" -l replan-below -d 'At mid-exec and post-exec, answer REPLAN instead of NEEDS_FIX below this score' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand gate" -l format -d 'Output format (json: the whole decision, with the reason)' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand gate" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand gate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand converge" -l previous -d 'The previous stage\'s convergence (0–1)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand converge" -l current -d 'This stage\'s convergence (0–1)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand converge" -l satisfied -d 'The satisfaction bar: at or above it an accepted stage ends the task' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand converge" -l history -d 'Keep the exclusion list and the last accepted convergence in FILE' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand converge" -l direction -d 'What this stage tried, recorded on the exclusion list when it is rolled back' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand converge" -l max-rollbacks -d 'Answer EXHAUSTED once this many directions are excluded' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand converge" -l format -d 'Output format (json: the whole decision, with the reason)' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand converge" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand converge" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and not __fish_seen_subcommand_from show learn" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and not __fish_seen_subcommand_from show learn" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and not __fish_seen_subcommand_from show learn" -f -a "show" -d 'Print the thresholds and limits a profile gives each checkpoint'
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and not __fish_seen_subcommand_from show learn" -f -a "learn" -d 'Write one loop\'s metrics into the profile\'s "## Auto Adaptation" section'
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from show" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from show" -l profile -d 'The profile' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from show" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l profile -d 'The profile (created if missing; a symlink is refused, exit 2)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l metrics -d 'Read the metrics from a JSON file (`-` for standard input); flags override its values' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l retries -d 'Retries used at a checkpoint, as CHECKPOINT=N (repeatable)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l iterations -d 'Loop iterations' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l mid-exec-checks -d 'Mid-exec checks triggered' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l compactions -d 'Context compactions' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l duration -d 'Time spent in a phase, as PHASE=DURATION (target, planning, execution, acceptance; 90s, 12m, 1h30m; repeatable)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l type -d 'The task type: with it, the same metrics are also learned into the shared library\'s profile of that type, LIBRARY/.memory/.type-profiles/TYPE.md (created from this profile when missing), under the library\'s lock LIBRARY/.memory/.type-profiles/.lock' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l library -d 'The shared workspaces library that --type syncs into' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -l format -d 'Output format (json: the section as it is after learning)' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand profile; and __fish_seen_subcommand_from learn" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and not __fish_seen_subcommand_from step show" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and not __fish_seen_subcommand_from step show" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and not __fish_seen_subcommand_from step show" -f -a "step" -d 'Record one exec step: did it turn a VH stub into a passing test (a VH→HS transition)?'
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and not __fish_seen_subcommand_from step show" -f -a "show" -d 'Print the cycles completed (of the VH stubs, when known) and the steps since the last transition'
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from step" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from step" -l state -d 'The state file (a symlink is refused)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from step" -l green -d 'The record of completed cycles, one JSON line each (default: cumulative-green.jsonl in the state file\'s directory; a symlink is refused)' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from step" -l test -d 'A test the transition turned green (repeatable), recorded in its line' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from step" -l anomaly-after -d 'Steps in a row without a transition that raise the anomaly (0: never)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from step" -l stubs-total -d 'The VH stubs the plan generated (vh-baseline.md), for the progress display' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from step" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from step" -l transition -d 'The step made a VH→HS transition'
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from step" -l no-transition -d 'The step made none'
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from step" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from show" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from show" -l state -d 'The state file' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from show" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand vfp; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand route" -l size -d 'The issue\'s Size (omit when it has none)' -r -f -a "XS\t''
S\t''
M\t''
L\t''
XL\t''
unset\t'No Size set'"
complete -c autoctl -n "__fish_autoctl_using_subcommand route" -l review -d 'Review depth on the pr route' -r -f -a "light\t'`review --light`'
full\t'`review --full`'"
complete -c autoctl -n "__fish_autoctl_using_subcommand route" -l phase -d 'The issue\'s phase label: ready, issue, or none (no phase/* label)' -r -f -a "ready\t'`phase/ready`: the spec is done'
issue\t'`phase/issue` without `phase/ready`: the spec may run'
none\t'No `phase/*` label: triage (`/issue`) runs first'"
complete -c autoctl -n "__fish_autoctl_using_subcommand route" -l refreshed-size -d 'The Size re-read after the spec phase succeeded (Step 3a)' -r -f -a "XS\t''
S\t''
M\t''
L\t''
XL\t''
unset\t'No Size set'"
complete -c autoctl -n "__fish_autoctl_using_subcommand route" -l base -d 'The branch the work is based on and merged into [default: main]; passed to the phases that take it (code, and each XL sub-issue\'s run)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand route" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand route" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand route" -l patch -d 'Force the patch route (code --patch → verify)'
complete -c autoctl -n "__fish_autoctl_using_subcommand route" -l pr -d 'Force the pr route (code → review → merge → verify)'
complete -c autoctl -n "__fish_autoctl_using_subcommand route" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and not __fish_seen_subcommand_from levels aggregate close verify-order run" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and not __fish_seen_subcommand_from levels aggregate close verify-order run" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and not __fish_seen_subcommand_from levels aggregate close verify-order run" -f -a "levels" -d 'Print a sub-issue graph\'s execution levels, in batches of at most --max-concurrent'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and not __fish_seen_subcommand_from levels aggregate close verify-order run" -f -a "aggregate" -d 'Print the parent issue\'s phase from its children\'s phases'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and not __fish_seen_subcommand_from levels aggregate close verify-order run" -f -a "close" -d 'Decide the XL parent\'s close flow from its sub-issues and its issue body'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and not __fish_seen_subcommand_from levels aggregate close verify-order run" -f -a "verify-order" -d 'Print the order in which an XL parent\'s issues are verified (wholework Step 4d)'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and not __fish_seen_subcommand_from levels aggregate close verify-order run" -f -a "run" -d 'Run COMMAND for every sub-issue, level by level, at most N at once'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from levels" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from levels" -l failed -d 'Issues that failed (repeatable, or comma separated); they and their dependents are not run' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from levels" -l max-concurrent -d 'The most issues run at once (AUTO_MAX_CONCURRENT)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from levels" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from levels" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from aggregate" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from aggregate" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from aggregate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from close" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from close" -l parent -d 'The parent issue' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from close" -l body -d 'The parent issue\'s body (markdown), or `-` for standard input' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from close" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from close" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from verify-order" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from verify-order" -l parent -d 'The parent issue (verified last)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from verify-order" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from verify-order" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from run" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from run" -l failed -d 'Issues that already failed (repeatable, or comma separated): they and their dependents are not run' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from run" -l max-concurrent -d 'The most sub-issues running at once (AUTO_MAX_CONCURRENT)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from run" -l schedule -d 'window: start the next as soon as one finishes; batches: wait for a whole batch' -r -f -a "window\t'Start the next issue as soon as a running one finishes (`wait -n`)'
batches\t'Start N, wait for all of them, then the next N (the batches `graph levels` prints)'"
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from run" -l timeout -d 'The longest one sub-issue\'s command may run' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from run" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand graph; and __fish_seen_subcommand_from run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and not __fish_seen_subcommand_from write-single read-single delete-single write-batch update-batch read-batch delete-batch list-batches" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and not __fish_seen_subcommand_from write-single read-single delete-single write-batch update-batch read-batch delete-batch list-batches" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and not __fish_seen_subcommand_from write-single read-single delete-single write-batch update-batch read-batch delete-batch list-batches" -f -a "write-single" -d 'Save an issue\'s verify iteration count (auto-state-N.json)'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and not __fish_seen_subcommand_from write-single read-single delete-single write-batch update-batch read-batch delete-batch list-batches" -f -a "read-single" -d 'Print an issue\'s saved verify iteration count (0 when none or stale)'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and not __fish_seen_subcommand_from write-single read-single delete-single write-batch update-batch read-batch delete-batch list-batches" -f -a "delete-single" -d 'Delete an issue\'s checkpoint (succeeds when there is none)'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and not __fish_seen_subcommand_from write-single read-single delete-single write-batch update-batch read-batch delete-batch list-batches" -f -a "write-batch" -d 'Save a batch\'s state and add it to the active index'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and not __fish_seen_subcommand_from write-single read-single delete-single write-batch update-batch read-batch delete-batch list-batches" -f -a "update-batch" -d 'Move an issue of a batch to completed or failed'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and not __fish_seen_subcommand_from write-single read-single delete-single write-batch update-batch read-batch delete-batch list-batches" -f -a "read-batch" -d 'Print a batch\'s remaining issues (exit 1 when there is no such batch)'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and not __fish_seen_subcommand_from write-single read-single delete-single write-batch update-batch read-batch delete-batch list-batches" -f -a "delete-batch" -d 'Delete a batch\'s state and drop it from the active index'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and not __fish_seen_subcommand_from write-single read-single delete-single write-batch update-batch read-batch delete-batch list-batches" -f -a "list-batches" -d 'Print the active batch ids, oldest first (resume takes the last)'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from write-single" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from write-single" -l dir -d 'The checkpoint directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from write-single" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from read-single" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from read-single" -l live-phase -d 'The issue\'s live phase label; `done` discards (and deletes) the checkpoint' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from read-single" -l dir -d 'The checkpoint directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from read-single" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from read-single" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from delete-single" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from delete-single" -l dir -d 'The checkpoint directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from delete-single" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from write-batch" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from write-batch" -l remaining -d 'Issues still to process, in order' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from write-batch" -l completed -d 'Issues already completed' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from write-batch" -l failed -d 'Issues that failed' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from write-batch" -l dir -d 'The checkpoint directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from write-batch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from update-batch" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from update-batch" -l dir -d 'The checkpoint directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from update-batch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from read-batch" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from read-batch" -l dir -d 'The checkpoint directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from read-batch" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from read-batch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from delete-batch" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from delete-batch" -l dir -d 'The checkpoint directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from delete-batch" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from delete-batch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from list-batches" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from list-batches" -l dir -d 'The checkpoint directory' -r -F
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from list-batches" -l format -d 'Output format' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand checkpoint; and __fish_seen_subcommand_from list-batches" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autoctl -n "__fish_autoctl_using_subcommand plan; and not __fish_seen_subcommand_from validate" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand plan; and not __fish_seen_subcommand_from validate" -s h -l help -d 'Print help'
complete -c autoctl -n "__fish_autoctl_using_subcommand plan; and not __fish_seen_subcommand_from validate" -f -a "validate" -d 'Check a recovery plan before running it'
complete -c autoctl -n "__fish_autoctl_using_subcommand plan; and __fish_seen_subcommand_from validate" -l tmux-socket -d 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand plan; and __fish_seen_subcommand_from validate" -l protected -d 'Branches no step may push to (repeatable, or comma separated; replaces main, master)' -r
complete -c autoctl -n "__fish_autoctl_using_subcommand plan; and __fish_seen_subcommand_from validate" -l format -d 'Output format (json: one object per plan, as JSON Lines)' -r -f -a "text\t'Lines made for people and `$(...)`'
json\t'JSON, using the types the schemas describe'"
complete -c autoctl -n "__fish_autoctl_using_subcommand plan; and __fish_seen_subcommand_from validate" -s h -l help -d 'Print help (see more with \'--help\')'
