
use builtin;
use str;

set edit:completion:arg-completer[autoctl] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'autoctl'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'autoctl'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand signal 'Validate, write, read and clear `.auto-signal` progress files'
            cand stop 'Request, check and clear a loop stop (`.auto-stop`)'
            cand next 'Print the step a loop runs next'
            cand table 'List, show and check routing tables'
            cand task 'Create task modules: `autoctl task new TASK/NAME`'
            cand lint 'Check task modules: front matter, targets, dependencies, transient files'
            cand run 'Supervise loops in tmux panes: start, watch, tick, status, stop, ack, recover'
            cand schema 'List and print the JSON Schemas of the protocol files'
            cand lock 'Take, refresh, release and inspect a heartbeat lock file'
            cand loop 'Run a loop inside one Claude Code session: init, status, route, teardown'
            cand hook 'The agents'' hook commands (stop, event, permission-request, ...) and `hook install`'
            cand statusline 'Print Claude Code''s status line and record its rate limits and context use'
            cand doctor 'Say which of autoctl''s channels are wired and live, with the fix for each that is not'
            cand policy 'The approval policy every door uses: check a call, show the rules, print the log'
            cand pane 'Read tmux panes: capture, hash, classify, wait until ready, send keys'
            cand stall 'Detect stalled agents and recover them within limits'
            cand completions 'Print a shell completion script'
            cand man 'Print or write the man pages'
            cand gate 'Gate a check''s D1–D6 score at a checkpoint: PASS, NEEDS_FIX, ... or BLOCKED'
            cand converge 'Accept or roll back a stage by its convergence (ACCEPT, SATISFIED, ROLLBACK)'
            cand profile 'Show and learn a `.type-profile.md` "## Auto Adaptation" section (task-ai)'
            cand vfp 'Count the exec steps that make a test stub pass (task-ai''s VH→HS cycles)'
            cand route 'Print the phases an issue runs: the route-phase matrix by Size and flags'
            cand graph 'Level and run a sub-issue graph; the parent''s phase and close flow (wholework)'
            cand checkpoint 'Write, read and delete wholework checkpoint files'
            cand plan 'Validate a wholework recovery plan'
        }
        &'autoctl;signal'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand validate 'Validate `.auto-signal` documents against the schema and the protocol''s rules'
            cand write 'Write `.auto-signal` into a task module, atomically'
            cand read 'Print a module''s `.auto-signal` (or one field of it)'
            cand clear 'Remove a module''s `.auto-signal` and `.auto-retry` (succeeds when there are none)'
        }
        &'autoctl;signal;validate'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --table 'Routing table for --strict: a built-in name or a JSON file'
            cand --format 'Output format (json prints one object per document, as JSON Lines)'
            cand --strict 'Also require `next` and `checkpoint` to be what the routing table gives'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;signal;write'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --step 'The step that just completed'
            cand --result 'The step''s result: one of the whitelist, or (step-N) for any step number N'
            cand --next 'What runs next; computed from the table when omitted'
            cand --checkpoint 'The checkpoint the next step runs at ("" for none); computed when omitted'
            cand --iteration 'The loop''s iteration count (auto mode); omitted in manual runs'
            cand --table 'Routing table used to compute next: a built-in name or a JSON file'
            cand --attempt 'How many times in a row the step gave this result [default: counted in .auto-retry]'
            cand --print 'Print the document that was written'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;signal;read'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --field 'Print only this field''s value (step, result, next, checkpoint, iteration, timestamp)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;signal;clear'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;stop'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand write 'Ask the loop in DIR to stop at its next iteration boundary'
            cand check 'Is a stop requested in DIR? Prints the reason and exits 0 if so, exits 1 if not'
            cand clear 'Withdraw a stop request (succeeds when there is none)'
        }
        &'autoctl;stop;write'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --reason 'Why the loop must stop'
            cand --message 'A human-readable detail, kept in the file'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;stop;check'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;stop;clear'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;next'= {
            cand --step 'The step that just completed'
            cand --result 'The step''s result'
            cand --checkpoint 'The checkpoint the step ran at (post-plan, mid-exec, post-exec)'
            cand --attempt 'How many times in a row the step gave this result (1 = the first time)'
            cand --status 'A task status (draft, planning, review, executing, re-planning, complete, ...)'
            cand --phase 'The task''s phase, for statuses that branch on it (re-planning: needs-plan, needs-check)'
            cand --task 'The task module directory'
            cand --table 'Routing table: a built-in name or a JSON file'
            cand --command 'Print the command a daemon would type for the next step, from TEMPLATE'
            cand --format 'Output format'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;table'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand list 'List the built-in routing tables'
            cand show 'Print a routing table as JSON (a built-in name or a file)'
            cand check 'Prove a table''s properties, printing a counterexample for each that fails'
        }
        &'autoctl;table;list'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;table;show'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;table;check'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;task'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand new 'Create a task module: .index.md, .target.md, and its line in the root listing'
        }
        &'autoctl;task;new'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --title 'The task''s title [default: the module''s name]'
            cand --type 'The task''s type (feature, bugfix, ...): its first tag, and a .type-profile.md whose "## Auto Adaptation" section `gate` and `profile` read'
            cand --goal 'What to build, written into .target.md [default: a stub to fill in]; at least three words of content'
            cand --force 'Create the module even though its --goal is too short for `autoctl next` to plan'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;lint'= {
            cand --format 'Output format'
            cand --deny 'Report RULE as an error; `warnings` denies every warning (repeatable)'
            cand --allow 'Do not report RULE (repeatable)'
            cand --explain 'Print what RULE checks and how to fix it'
            cand --table 'Routing table whose statuses .index.md may use: a built-in name or a JSON file'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --list-rules 'List the rules: id, default severity, what each finds'
            cand -L 'Follow symlinks while looking for task roots'
            cand --follow 'Follow symlinks while looking for task roots'
            cand --no-git 'Skip the git checks of transient files'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;run'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand start 'Register a loop for a tmux session and a task module'
            cand stop 'Stop a loop: write `.auto-stop` and end the run'
            cand status 'Show runs: iteration, elapsed time and timeout, current step, state, stalls, recoveries'
            cand lookup 'Print the session whose loop owns a task dir (exit 1 when no loop runs there)'
            cand tick 'One heartbeat for running loops; prints one JSON line per run'
            cand continue 'Send a continuation into a run''s pane unless the task moved on (exit 1, nothing sent)'
            cand ack 'Acknowledge a run that needs a person: clear its needs-person state (the loop goes on)'
            cand recover 'Recover running loops after a restart (ai-cli-task''s server recovery)'
            cand watch 'Tick each loop the moment its signal or stop file changes; heartbeat the rest'
            cand turn 'Send one step to Codex CLI as a turn over its app-server, and wait for the turn to end'
        }
        &'autoctl;run;start'= {
            cand --session 'The tmux session the agent runs in (the run''s name; any text, never run by a shell)'
            cand --task 'The task module directory (stored as its canonical path)'
            cand --target 'The tmux pane to watch and type into [default: the session''s active pane]'
            cand --mode 'Who drives the loop'
            cand --max-iterations 'Stop the loop when its iteration count reaches N'
            cand --timeout 'Stop the loop after this much supervised time (quota waits excluded), e.g. 30m, 1h30m'
            cand --into 'Dispatch mode: where each step is typed [default: agent with --agent claude, shell with --agent generic]'
            cand --command 'Dispatch mode: the command typed for each step [default: `/ai-cli-task {next} {task} {args}` with --into agent, `claude -p` with {settings} and {stream} with --into shell, `autoctl run turn "Run the {next} step of the task in {task} {args}. When it is done, write its signal with autoctl signal write."` with --into app-server]'
            cand --table 'Dispatch mode: the routing table that gives the entry step (built-in name or file)'
            cand --launch 'Type the agent''s command into the pane after registering (observe mode, or dispatch mode --into agent)'
            cand --agent 'How panes are read: `claude`, `codex`, `gemini` act only on that agent''s own screen; `generic` reads any program''s prompts (same safety policy) [default: the program --launch starts when it is claude, codex or gemini, generic for any other program, claude without --launch]'
            cand --threshold 'Heartbeats a screen stays unchanged before it is examined as a suspected stall, counted by elapsed time: N × `run tick --heartbeat` (3 × 60s), however often ticks come'
            cand --max-recoveries-per-iteration 'Stall recoveries allowed per iteration before the loop is stopped (stall_limit)'
            cand --max-recoveries 'Stall recoveries allowed in total before the loop is stopped (stall_limit)'
            cand --max-answers 'Prompts the approval policy proved harmless answered per step (a new signal starts a step); past it the prompt is escalated to a person. Answers are not stall recoveries'
            cand --repeat-limit 'The same agent message this many times in a row stops the loop (reasoning_loop; 0: never)'
            cand --step-timeout 'No .status.json update for this long is a step timeout (a stall: the screen decides the recovery, an idle agent gets a continuation)'
            cand --max-compactions 'Stop the loop when this many context compactions happen in one iteration (0: never)'
            cand --compact-at 'With --launch and --agent claude: Claude Code compacts its context by itself at this percentage of the window (0: left to Claude Code''s default)'
            cand --account 'The subscription account the agent spends: runs of one account share its usage windows and are paced together by the quota governor (`run tick --pace-stop`)'
            cand --priority 'Who the governor releases first after a usage window resets (higher first), and who may start steps in the weekly reserve (above `run tick --weekly-priority`)'
            cand --resume-text 'What autoctl types (then Enter) to resume the agent after a wait'
            cand --max-resumes 'Resumes per step after the agent gave up on an API error (backoff 1, 2, 4, 8 minutes, at most 30); then a person is asked'
            cand --resume-margin 'After a usage limit''s reset, wait this long before resuming (while Claude Code''s own automatic continue is armed, at least 4m: it goes first)'
            cand --resume-check 'After a resume at a usage limit, how long the agent has to start working before a person is asked'
            cand --max-retry-wait 'The longest wait for the agent''s own retries (its countdown on screen)'
            cand --max-quota-wait 'The longest wait for a usage limit without a reset time, and the farthest reset waited for'
            cand --stream-timeout 'A working screen unchanged this long with no tool running is a wedged stream (one Esc, then the resume text)'
            cand --tool-timeout 'A tool running this long is escalated (a running tool is never a stall)'
            cand --unknown-after 'A screen autoctl cannot read (class unknown: a dialog it does not know, a REPL in front of the agent) unchanged this long is escalated once, with its last lines'
            cand --notify 'Run CMD for this run''s events too (see `run tick --notify`)'
            cand --registry 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --force 'With --launch: type the command even when the pane shows no shell prompt, and without checking that its program exists on the pane''s PATH'
            cand --unattended 'Nobody will answer this run''s prompts: the agent''s PreToolUse hook (`autoctl hook pre-tool-use`, wired by `autoctl hook install`) denies what the approval policy names destructive, telling the model the rule and why, instead of asking a person'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;run;stop'= {
            cand --session 'The run''s session'
            cand --task 'The run''s task module directory'
            cand --reason 'Why the loop stops (written to `.auto-stop` and kept in the registry)'
            cand --message 'A human-readable detail, kept in `.auto-stop` and the registry'
            cand --registry 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;run;status'= {
            cand --session 'Only this session''s run (exit 1 when there is none)'
            cand --task 'Only the run of this task module directory (exit 1 when there is none)'
            cand --format 'Output format'
            cand --registry 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --all 'Every run (the default)'
            cand --accounts 'Show the accounts instead of the runs: each account''s usage windows (the freshest reading from any of its sessions, with its source and age), the runs whose step holds the quota governor''s permit, and who waits, in release order (with --session or --task: that run''s account). Prometheus output always has them'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;run;lookup'= {
            cand --task 'The task module directory'
            cand --format 'Output format (json: {"session_name","status"})'
            cand --registry 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;run;tick'= {
            cand --session 'Tick this session''s run'
            cand --heartbeat 'How often ticks are scheduled; stall heartbeats are spaced at least half of it apart'
            cand --notify 'Run CMD (with `sh -c`) once for each event: escalate, needs-person, resume, quota-wait-start, quota-wait-end, stop, finish, lost, exit, stall-limit, restart'
            cand --notify-timeout 'Kill a notify command (and what it started) still running after this long'
            cand --renotify 'Announce a run that still needs a person again at most this often (needs-person)'
            cand --rules 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)'
            cand --policy 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)'
            cand --compact-at 'Type /compact when the status line''s context use reaches PERCENT and the agent is idle at its prompt (once per crossing, as the iteration''s first compaction; 0: never) [default: the task''s compaction_threshold in its .type-profile.md, else 82 for a task-ai module (one with a .status.json), else 70]'
            cand --hook-fresh 'A hook state older than this, or older than the last change of what the screen shows (its class), is not trusted; the screen decides'
            cand --pace-stop 'No new step starts (and no resume is typed) while the account''s 5-hour window is at PERCENT or a step would take it past PERCENT (the cost of a step is learned from the windows'' movement); the run waits, quota-paced, for the reset'
            cand --resume-burst 'After a reset, release waiting runs of an account in priority order, at most N a minute (a session that continued by itself counts as one)'
            cand --weekly-reserve 'With PERCENT or less of the 7-day window left, only runs with a priority above --weekly-priority start steps; the account is escalated once'
            cand --weekly-priority 'The priority (`run start --priority`) a run needs above it to use the weekly reserve'
            cand --host-lease 'A host whose ticks and watcher have not renewed its lease for this long is shown host-lost and announced once (its runs are never typed into from elsewhere)'
            cand --registry 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --all 'Tick every running run'
            cand --dry-run 'Decide and print, but change nothing (no keys typed, no files written, no state saved)'
            cand --wait-weekly 'Wait out a weekly usage limit (the status line''s seven_day at 100%) instead of escalating it'
            cand --no-governor 'Do not pace: every step and resume goes ahead whatever the account''s windows say'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;run;continue'= {
            cand --session 'The run''s session'
            cand --task 'The run''s task module directory'
            cand --if-unchanged 'Send only if `.status.json`''s `updated_at` is still exactly this text'
            cand --text 'What to type (then Enter)'
            cand --registry 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;run;ack'= {
            cand --session 'The run''s session'
            cand --task 'The run''s task module directory'
            cand --registry 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;run;recover'= {
            cand --rules 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)'
            cand --policy 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)'
            cand --registry 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dry-run 'Decide and print, but change nothing'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;run;watch'= {
            cand --session 'Watch this session''s run (until it ends)'
            cand --format 'How to print each decision [default: text on a terminal, json when piped]'
            cand --heartbeat 'How often every run gets a heartbeat (stall checks, limits), as from cron; at least 1s'
            cand --notify 'Run CMD (with `sh -c`) once for each event: escalate, needs-person, resume, quota-wait-start, quota-wait-end, stop, finish, lost, exit, stall-limit, restart'
            cand --notify-timeout 'Kill a notify command (and what it started) still running after this long'
            cand --renotify 'Announce a run that still needs a person again at most this often (needs-person)'
            cand --rules 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)'
            cand --policy 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)'
            cand --compact-at 'Type /compact when the status line''s context use reaches PERCENT and the agent is idle at its prompt (once per crossing, as the iteration''s first compaction; 0: never) [default: the task''s compaction_threshold in its .type-profile.md, else 82 for a task-ai module (one with a .status.json), else 70]'
            cand --hook-fresh 'A hook state older than this, or older than the last change of what the screen shows (its class), is not trusted; the screen decides'
            cand --pace-stop 'No new step starts (and no resume is typed) while the account''s 5-hour window is at PERCENT or a step would take it past PERCENT (the cost of a step is learned from the windows'' movement); the run waits, quota-paced, for the reset'
            cand --resume-burst 'After a reset, release waiting runs of an account in priority order, at most N a minute (a session that continued by itself counts as one)'
            cand --weekly-reserve 'With PERCENT or less of the 7-day window left, only runs with a priority above --weekly-priority start steps; the account is escalated once'
            cand --weekly-priority 'The priority (`run start --priority`) a run needs above it to use the weekly reserve'
            cand --host-lease 'A host whose ticks and watcher have not renewed its lease for this long is shown host-lost and announced once (its runs are never typed into from elsewhere)'
            cand --registry 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --all 'Watch every running run, and runs started later'
            cand --until-needs-person 'With --session: also exit (0) as soon as the loop needs a person (an escalated prompt), so you can answer it in its pane and run `run watch` again'
            cand --wait-weekly 'Wait out a weekly usage limit (the status line''s seven_day at 100%) instead of escalating it'
            cand --no-governor 'Do not pace: every step and resume goes ahead whatever the account''s windows say'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;run;turn'= {
            cand --app-server 'How to run the app-server (a shell command)'
            cand --approval-policy 'Codex''s approval policy for a new thread'
            cand --sandbox 'Codex''s sandbox for a new thread'
            cand --ask-timeout 'How long a question to the person may wait before it is declined'
            cand --timeout 'The longest the turn may take; past it the turn is interrupted'
            cand --policy 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --new-thread 'Start a new thread even when this pane''s previous step left one'
            cand --unattended 'Decline what the policy names destructive instead of asking: nobody will answer'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;schema'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand list 'List the schemas: name, file, what it describes'
            cand show 'Print one schema (draft 2020-12 JSON)'
        }
        &'autoctl;schema;list'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;schema;show'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;lock'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand acquire 'Take FILE for OWNER: free, stale, or held by a recorded process that is gone'
            cand refresh 'Renew OWNER''s heartbeat in FILE'
            cand release 'Give FILE up; only its owner may'
            cand status 'Who holds FILE, and is it alive?'
        }
        &'autoctl;lock;acquire'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --owner 'Who takes the lock, e.g. session:<id> or cron:nightly'
            cand --stale 'A lock with no heartbeat for longer than this is stale and may be taken over'
            cand --format 'Output format'
            cand --pid 'Record PID as the process whose life the lock stands for [default: none]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;lock;refresh'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --owner 'Who takes the lock, e.g. session:<id> or cron:nightly'
            cand --stale 'A lock with no heartbeat for longer than this is stale and may be taken over'
            cand --format 'Output format'
            cand --pid 'Record PID as the process whose life the lock stands for [default: none]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;lock;release'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --owner 'Who takes the lock, e.g. session:<id> or cron:nightly'
            cand --stale 'A lock with no heartbeat for longer than this is stale and may be taken over'
            cand --format 'Output format'
            cand --pid 'Record PID as the process whose life the lock stands for [default: none]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;lock;status'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --owner 'Answer yes only when this owner holds the lock'
            cand --stale 'A lock with no heartbeat for longer than this is stale and may be taken over'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;loop'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand init 'Activate a loop in the project: write D/.autoctl/loop.json and reset the loop state'
            cand status 'Show the loop: bound session, iterations, tokens, lock, quota wait, how it ended'
            cand route 'Print what `hook stop` would answer now, changing nothing'
            cand teardown 'Remove the loop: its activation file and its lock, whoever holds it'
        }
        &'autoctl;loop;init'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dir 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]'
            cand --session 'Bind the loop to this session id [default: the first session that stops]'
            cand --max-iterations 'Turns the session may finish inside the loop'
            cand --budget 'Token budget of the session: input, output, cache-write and cache-read tokens from the transcript''s usage fields, counted from the loop''s first turn'
            cand --sentinel 'What the agent writes when the work is done: a <promise>...</promise> tag counts anywhere in its last message (outside code); any other text must be a line of its own'
            cand --prompt 'The prompt fed after every turn'
            cand --prompt-file 'A file holding the prompt, read again at every turn (edit it to steer the loop)'
            cand --task 'A task module: the prompt is the command the routing table gives for its .auto-signal (else its .index.md status); its .auto-stop or a (stop) route ends the loop'
            cand --table 'Routing table for --task: a built-in name or a JSON file'
            cand --template 'The prompt for --task; placeholders {next}, {checkpoint}, {task}, {iteration}, {args}'
            cand --max-idle 'End the loop after this many consecutive turns without a tool call (0: never)'
            cand --max-compactions 'End the loop when this many context compactions happen within one iteration (0: never)'
            cand --stale 'The loop lock is stale after this long without a heartbeat'
            cand --transcript-wait 'How long `hook stop` waits for a transcript that lags behind the session when the hook input has no last_assistant_message'
            cand --format 'Output format (json prints the activation file''s settings)'
            cand --force 'Replace a loop that is still running for another session'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;loop;status'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dir 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;loop;route'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dir 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]'
            cand --session 'The session asking [default: the bound session, or a new one when unbound]'
            cand --transcript 'A transcript to observe (completion, tool calls, tokens since the loop''s cursor)'
            cand --last-message 'The last assistant message, as Claude Code passes it'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;loop;teardown'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dir 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;hook'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand stop 'Answer Claude Code''s Stop event: continue the loop with its next prompt, or let it stop'
            cand stop-failure 'Record Claude Code''s StopFailure event (a turn that ended on an API error)'
            cand event 'Record any Claude Code hook event as the session''s typed state'
            cand install 'Wire autoctl''s hooks into an agent''s settings (Claude Code, Codex CLI, Gemini CLI)'
            cand permission-request 'Answer Claude Code''s PermissionRequest: allow what the policy proves harmless'
            cand pre-tool-use 'Answer Claude Code''s PreToolUse: the policy''s floor in every permission mode'
        }
        &'autoctl;hook;stop'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --agent 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI''s event names, Codex CLI''s turn_id, else Claude Code]'
            cand --dir 'The project whose loop answers [default: $CLAUDE_PROJECT_DIR, else the input''s cwd]'
            cand --log 'Append one JSON line per call to FILE: what was read and what was answered'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;hook;stop-failure'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --agent 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI''s event names, Codex CLI''s turn_id, else Claude Code]'
            cand --dir 'The project whose loop answers [default: $CLAUDE_PROJECT_DIR, else the input''s cwd]'
            cand --log 'Append one JSON line per call to FILE: what was read and what was answered'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;hook;event'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --agent 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI''s event names, Codex CLI''s turn_id, else Claude Code]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;hook;install'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --agent 'The agent whose hooks are wired'
            cand --project 'The project whose settings are changed (.claude/settings.json, .codex/hooks.json, .gemini/settings.json) [default: the current directory]'
            cand --autoctl 'How the hooks run autoctl [default: `autoctl` when that is this binary on PATH, else this binary''s absolute path]'
            cand --user 'Change the user''s settings instead (~/.claude/settings.json, ~/.codex/hooks.json, ~/.gemini/settings.json): every interactive session of this user'
            cand --yes 'Confirm --user'
            cand --dry-run 'Print the diff and change nothing'
            cand --uninstall 'Remove autoctl''s hooks and status line (a wrapped status line is given back)'
            cand --commands 'Also install the ai-cli-task slash command (.claude/commands/ai-cli-task.md), which runs the steps `run start --mode dispatch` types into Claude Code (Claude Code only)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;hook;permission-request'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --policy 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]'
            cand --timeout 'Answer within this time, whatever happens (a stalled stdin, a slow disk): past it the hook gives no decision, so Claude Code shows its prompt'
            cand --agent 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI''s event names, Codex CLI''s turn_id, else Claude Code]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;hook;pre-tool-use'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --policy 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]'
            cand --timeout 'Answer within this time, whatever happens: past it the hook gives no decision'
            cand --agent 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI''s event names, Codex CLI''s turn_id, else Claude Code]'
            cand --unattended 'Deny what the policy names destructive instead of asking: nobody will answer [default: ask, unless AUTOCTL_UNATTENDED=1 is in the agent''s environment, `run start --unattended` marked the agent''s tmux pane, or the policy file says on_destructive "deny"]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;statusline'= {
            cand --then 'Also run this status-line command and print its first line before autoctl''s'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;doctor'= {
            cand --session 'Only this run (its tmux session name) or Claude Code session (its session_id)'
            cand --format 'format'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;policy'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand check 'Decide one tool call and print the decision and the rule that made it'
            cand show 'Print the effective rules: the built-in rules and the policy file''s'
            cand log 'Print the decision log (oldest first)'
            cand export 'Write autoctl''s rules as Gemini CLI''s own policy-engine file'
            cand test 'Check the rules'' match and not_match examples, and print each one decided otherwise'
        }
        &'autoctl;policy;check'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --tool 'The tool: Bash, Read, Write, Edit, WebFetch, mcp__server__tool and others'
            cand --input 'The tool''s input as JSON, as Claude Code sends it ({"command": "ls"} for Bash, {"file_path": "src/a.rs"} for Write)'
            cand --cwd 'The directory the call runs in [default: the current directory]'
            cand --project 'The project directory, when it is not the working directory [default: $CLAUDE_PROJECT_DIR]'
            cand --screen 'Decide the prompt on a captured screen (a file, or - for stdin) the way a supervisor would: a Claude Code permission box read back into its tool call, or a program''s yes/no question'
            cand --policy 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]'
            cand --format 'Output format'
            cand --batch 'Read hook payloads as JSON lines on stdin; print one decision (JSON) per line'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;policy;show'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --policy 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;policy;log'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --tail 'Only the last N decisions'
            cand --format 'Output format (json: one object per line)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;policy;export'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -o 'Where to write it (- for stdout) [default: $GEMINI_CLI_HOME/.gemini/policies/autoctl.toml, else ~/.gemini/policies/autoctl.toml]'
            cand --output 'Where to write it (- for stdout) [default: $GEMINI_CLI_HOME/.gemini/policies/autoctl.toml, else ~/.gemini/policies/autoctl.toml]'
            cand --policy 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]'
            cand --gemini 'Export for Gemini CLI''s policy engine (the only target so far)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;policy;test'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --policy 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;pane'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand capture 'Print a pane''s text (wrapped lines joined, trailing blank rows dropped)'
            cand hash 'Print a stable hash of a pane''s normalized text'
            cand classify 'Say what a pane shows: class, action, and the rule that decided'
            cand ready 'Is a shell prompt in front and no command running? Exits 0 if so, 1 if not'
            cand send 'Type text or press keys in a pane'
            cand rules 'List the classification rules, run each rule''s own examples, or test them on captures'
        }
        &'autoctl;pane;capture'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --lines 'Print only the last N lines, reaching into the scrollback when N is larger than the pane'
            cand --escapes 'Keep colour and attribute escape sequences (capture-pane -e)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;pane;hash'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --format 'Output format'
            cand --raw 'Hash the bytes exactly as captured, without normalizing'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;pane;classify'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --agent 'Whose screen it is: with claude, a foreground command other than the agent is observed, never answered'
            cand --foreground 'The pane''s foreground command, for a capture on stdin (tmux reports it for a TARGET)'
            cand --rules 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)'
            cand --policy 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)'
            cand --now 'Read quota reset times relative to TIME (RFC 3339) instead of now'
            cand --format 'Output format'
            cand --explain 'Also say why: the rule''s explanation, destructive markers, and rules passed over'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;pane;ready'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --wait 'Keep checking until ready or DURATION has passed (backoff 1, 2, 4 ... 30 s)'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;pane;send'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --text 'Text to type literally (no control characters: a newline would run the line; submit with --submit, press other keys with --keys)'
            cand --keys 'tmux key names to press (Enter, Escape, C-c, Up, y)'
            cand --delay 'The pause between the text and the Enter of --submit'
            cand --submit 'Press Enter after the text, separately, after --delay'
            cand --verify 'Check the result: with --submit, that the text left the input line; without, that it arrived there. Exits 1 if not'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;pane;rules'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --rules 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)'
            cand --policy 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)'
            cand --format 'Output format'
            cand --check 'Run every rule''s examples and near misses; exit 1 if one fails'
            cand --dump 'Print the embedded rules file (a starting point for --rules FILE)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand test 'Classify a directory of labelled captures; exit 1 on any miss or unsafe answer'
        }
        &'autoctl;pane;rules;test'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --agent 'The agent for captures whose meta file and expected.tsv line do not name one'
            cand --rules 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)'
            cand --policy 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)'
            cand --now 'Read quota reset times relative to TIME (RFC 3339) instead of now'
            cand --format 'Output format (json: one object per capture, then a summary object)'
            cand --failures-only 'Print only misses, unsafe answers and the summary'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;stall'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand check 'How waits end: `run start` (kept with the run) and `stall check`'
        }
        &'autoctl;stall;check'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --target 'A pane to check (repeat for several)'
            cand --state 'Where the state is kept [default: $AUTOCTL_STATE_DIR/stall/SOCKET.json]'
            cand --threshold 'Unchanged captures that make a stall'
            cand --max-recoveries-per-iteration 'Recoveries allowed per signal iteration'
            cand --max-recoveries 'Recoveries allowed in total'
            cand --max-answers 'Harmless prompts answered per step (a new .auto-signal starts a step); past it the prompt is escalated. Answers are not recoveries'
            cand --task 'The task module the pane works on: a new .auto-signal iteration restores the per-iteration budget, and past the limits its .auto-stop is written'
            cand --agent 'Whose screen it is: with claude, a foreground command other than the agent is observed, never answered'
            cand --repeat-limit 'The same agent message this many times in a row is a reasoning loop (0: never)'
            cand --step-timeout 'With --task: no .status.json update for this long is a step timeout'
            cand --continue-text 'What a step timeout types into an idle agent'
            cand --resume-text 'What autoctl types (then Enter) to resume the agent after a wait'
            cand --max-resumes 'Resumes per step after the agent gave up on an API error (backoff 1, 2, 4, 8 minutes, at most 30); then a person is asked'
            cand --resume-margin 'After a usage limit''s reset, wait this long before resuming (while Claude Code''s own automatic continue is armed, at least 4m: it goes first)'
            cand --resume-check 'After a resume at a usage limit, how long the agent has to start working before a person is asked'
            cand --max-retry-wait 'The longest wait for the agent''s own retries (its countdown on screen)'
            cand --max-quota-wait 'The longest wait for a usage limit without a reset time, and the farthest reset waited for'
            cand --stream-timeout 'A working screen unchanged this long with no tool running is a wedged stream (one Esc, then the resume text)'
            cand --tool-timeout 'A tool running this long is escalated (a running tool is never a stall)'
            cand --unknown-after 'A screen autoctl cannot read (class unknown: a dialog it does not know, a REPL in front of the agent) unchanged this long is escalated once, with its last lines'
            cand --rules 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)'
            cand --policy 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)'
            cand --hook-fresh 'A hook state older than this, or older than the last change of what the screen shows (its class), is not trusted; the screen decides'
            cand --all-panes 'Check every pane of the tmux server'
            cand --apply 'Carry the decision out: type the answer, write .auto-stop past the limits'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;completions'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;man'= {
            cand --out 'Write every page (one per subcommand) into DIR instead of printing the top page'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;gate'= {
            cand --checkpoint 'The checkpoint the check ran at'
            cand --score 'The overall score, or the six D1–D6 scores (space or comma separated), each 0–1'
            cand --attempt 'Which check this is at this checkpoint: 1 for the first (retry_count + 1)'
            cand --profile 'A `.type-profile.md` whose "## Auto Adaptation" section sets thresholds and limits'
            cand --threshold 'Override the checkpoint''s threshold'
            cand --retry-limit 'Override the checkpoint''s retry limit'
            cand --replan-below 'At mid-exec and post-exec, answer REPLAN instead of NEEDS_FIX below this score'
            cand --format 'Output format (json: the whole decision, with the reason)'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;converge'= {
            cand --previous 'The previous stage''s convergence (0–1)'
            cand --current 'This stage''s convergence (0–1)'
            cand --satisfied 'The satisfaction bar: at or above it an accepted stage ends the task'
            cand --history 'Keep the exclusion list and the last accepted convergence in FILE'
            cand --direction 'What this stage tried, recorded on the exclusion list when it is rolled back'
            cand --max-rollbacks 'Answer EXHAUSTED once this many directions are excluded'
            cand --format 'Output format (json: the whole decision, with the reason)'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;profile'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand show 'Print the thresholds and limits a profile gives each checkpoint'
            cand learn 'Write one loop''s metrics into the profile''s "## Auto Adaptation" section'
        }
        &'autoctl;profile;show'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --profile 'The profile'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;profile;learn'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --profile 'The profile (created if missing; a symlink is refused, exit 2)'
            cand --metrics 'Read the metrics from a JSON file (`-` for standard input); flags override its values'
            cand --retries 'Retries used at a checkpoint, as CHECKPOINT=N (repeatable)'
            cand --iterations 'Loop iterations'
            cand --mid-exec-checks 'Mid-exec checks triggered'
            cand --compactions 'Context compactions'
            cand --duration 'Time spent in a phase, as PHASE=DURATION (target, planning, execution, acceptance; 90s, 12m, 1h30m; repeatable)'
            cand --type 'The task type: with it, the same metrics are also learned into the shared library''s profile of that type, LIBRARY/.memory/.type-profiles/TYPE.md (created from this profile when missing), under the library''s lock LIBRARY/.memory/.type-profiles/.lock'
            cand --library 'The shared workspaces library that --type syncs into'
            cand --format 'Output format (json: the section as it is after learning)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;vfp'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand step 'Record one exec step: did it turn a VH stub into a passing test (a VH→HS transition)?'
            cand show 'Print the cycles completed (of the VH stubs, when known) and the steps since the last transition'
        }
        &'autoctl;vfp;step'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --state 'The state file (a symlink is refused)'
            cand --green 'The record of completed cycles, one JSON line each (default: cumulative-green.jsonl in the state file''s directory; a symlink is refused)'
            cand --test 'A test the transition turned green (repeatable), recorded in its line'
            cand --anomaly-after 'Steps in a row without a transition that raise the anomaly (0: never)'
            cand --stubs-total 'The VH stubs the plan generated (vh-baseline.md), for the progress display'
            cand --format 'Output format'
            cand --transition 'The step made a VH→HS transition'
            cand --no-transition 'The step made none'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;vfp;show'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --state 'The state file'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;route'= {
            cand --size 'The issue''s Size (omit when it has none)'
            cand --review 'Review depth on the pr route'
            cand --phase 'The issue''s phase label: ready, issue, or none (no phase/* label)'
            cand --refreshed-size 'The Size re-read after the spec phase succeeded (Step 3a)'
            cand --base 'The branch the work is based on and merged into [default: main]; passed to the phases that take it (code, and each XL sub-issue''s run)'
            cand --format 'Output format'
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --patch 'Force the patch route (code --patch → verify)'
            cand --pr 'Force the pr route (code → review → merge → verify)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;graph'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand levels 'Print a sub-issue graph''s execution levels, in batches of at most --max-concurrent'
            cand aggregate 'Print the parent issue''s phase from its children''s phases'
            cand close 'Decide the XL parent''s close flow from its sub-issues and its issue body'
            cand verify-order 'Print the order in which an XL parent''s issues are verified (wholework Step 4d)'
            cand run 'Run COMMAND for every sub-issue, level by level, at most N at once'
        }
        &'autoctl;graph;levels'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --failed 'Issues that failed (repeatable, or comma separated); they and their dependents are not run'
            cand --max-concurrent 'The most issues run at once (AUTO_MAX_CONCURRENT)'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;graph;aggregate'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;graph;close'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --parent 'The parent issue'
            cand --body 'The parent issue''s body (markdown), or `-` for standard input'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;graph;verify-order'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --parent 'The parent issue (verified last)'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;graph;run'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --failed 'Issues that already failed (repeatable, or comma separated): they and their dependents are not run'
            cand --max-concurrent 'The most sub-issues running at once (AUTO_MAX_CONCURRENT)'
            cand --schedule 'window: start the next as soon as one finishes; batches: wait for a whole batch'
            cand --timeout 'The longest one sub-issue''s command may run'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;checkpoint'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand write-single 'Save an issue''s verify iteration count (auto-state-N.json)'
            cand read-single 'Print an issue''s saved verify iteration count (0 when none or stale)'
            cand delete-single 'Delete an issue''s checkpoint (succeeds when there is none)'
            cand write-batch 'Save a batch''s state and add it to the active index'
            cand update-batch 'Move an issue of a batch to completed or failed'
            cand read-batch 'Print a batch''s remaining issues (exit 1 when there is no such batch)'
            cand delete-batch 'Delete a batch''s state and drop it from the active index'
            cand list-batches 'Print the active batch ids, oldest first (resume takes the last)'
        }
        &'autoctl;checkpoint;write-single'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dir 'The checkpoint directory'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;checkpoint;read-single'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --live-phase 'The issue''s live phase label; `done` discards (and deletes) the checkpoint'
            cand --dir 'The checkpoint directory'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;checkpoint;delete-single'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dir 'The checkpoint directory'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;checkpoint;write-batch'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --remaining 'Issues still to process, in order'
            cand --completed 'Issues already completed'
            cand --failed 'Issues that failed'
            cand --dir 'The checkpoint directory'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;checkpoint;update-batch'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dir 'The checkpoint directory'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;checkpoint;read-batch'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dir 'The checkpoint directory'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;checkpoint;delete-batch'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dir 'The checkpoint directory'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;checkpoint;list-batches'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --dir 'The checkpoint directory'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;plan'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand validate 'Check a recovery plan before running it'
        }
        &'autoctl;plan;validate'= {
            cand --tmux-socket 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)'
            cand --protected 'Branches no step may push to (repeatable, or comma separated; replaces main, master)'
            cand --format 'Output format (json: one object per plan, as JSON Lines)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
    ]
    $completions[$command]
}
