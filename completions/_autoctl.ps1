
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'autoctl' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'autoctl'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'autoctl' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('signal', 'signal', [CompletionResultType]::ParameterValue, 'Validate, write, read and clear `.auto-signal` progress files')
            [CompletionResult]::new('stop', 'stop', [CompletionResultType]::ParameterValue, 'Request, check and clear a loop stop (`.auto-stop`)')
            [CompletionResult]::new('next', 'next', [CompletionResultType]::ParameterValue, 'Print the step a loop runs next')
            [CompletionResult]::new('table', 'table', [CompletionResultType]::ParameterValue, 'List, show and check routing tables')
            [CompletionResult]::new('task', 'task', [CompletionResultType]::ParameterValue, 'Create task modules: `autoctl task new TASK/NAME`')
            [CompletionResult]::new('lint', 'lint', [CompletionResultType]::ParameterValue, 'Check task modules: front matter, targets, dependencies, transient files')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Supervise loops in tmux panes: start, watch, tick, status, stop, ack, recover')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'List and print the JSON Schemas of the protocol files')
            [CompletionResult]::new('lock', 'lock', [CompletionResultType]::ParameterValue, 'Take, refresh, release and inspect a heartbeat lock file')
            [CompletionResult]::new('loop', 'loop', [CompletionResultType]::ParameterValue, 'Run a loop inside one Claude Code session: init, status, route, teardown')
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'The agents'' hook commands (stop, event, permission-request, ...) and `hook install`')
            [CompletionResult]::new('statusline', 'statusline', [CompletionResultType]::ParameterValue, 'Print Claude Code''s status line and record its rate limits and context use')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Say which of autoctl''s channels are wired and live, with the fix for each that is not')
            [CompletionResult]::new('policy', 'policy', [CompletionResultType]::ParameterValue, 'The approval policy every door uses: check a call, show the rules, print the log')
            [CompletionResult]::new('pane', 'pane', [CompletionResultType]::ParameterValue, 'Read tmux panes: capture, hash, classify, wait until ready, send keys')
            [CompletionResult]::new('stall', 'stall', [CompletionResultType]::ParameterValue, 'Detect stalled agents and recover them within limits')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print or write the man pages')
            [CompletionResult]::new('gate', 'gate', [CompletionResultType]::ParameterValue, 'Gate a check''s D1–D6 score at a checkpoint: PASS, NEEDS_FIX, ... or BLOCKED')
            [CompletionResult]::new('converge', 'converge', [CompletionResultType]::ParameterValue, 'Accept or roll back a stage by its convergence (ACCEPT, SATISFIED, ROLLBACK)')
            [CompletionResult]::new('profile', 'profile', [CompletionResultType]::ParameterValue, 'Show and learn a `.type-profile.md` "## Auto Adaptation" section (task-ai)')
            [CompletionResult]::new('vfp', 'vfp', [CompletionResultType]::ParameterValue, 'Count the exec steps that make a test stub pass (task-ai''s VH→HS cycles)')
            [CompletionResult]::new('route', 'route', [CompletionResultType]::ParameterValue, 'Print the phases an issue runs: the route-phase matrix by Size and flags')
            [CompletionResult]::new('graph', 'graph', [CompletionResultType]::ParameterValue, 'Level and run a sub-issue graph; the parent''s phase and close flow (wholework)')
            [CompletionResult]::new('checkpoint', 'checkpoint', [CompletionResultType]::ParameterValue, 'Write, read and delete wholework checkpoint files')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'Validate a wholework recovery plan')
            break
        }
        'autoctl;signal' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('validate', 'validate', [CompletionResultType]::ParameterValue, 'Validate `.auto-signal` documents against the schema and the protocol''s rules')
            [CompletionResult]::new('write', 'write', [CompletionResultType]::ParameterValue, 'Write `.auto-signal` into a task module, atomically')
            [CompletionResult]::new('read', 'read', [CompletionResultType]::ParameterValue, 'Print a module''s `.auto-signal` (or one field of it)')
            [CompletionResult]::new('clear', 'clear', [CompletionResultType]::ParameterValue, 'Remove a module''s `.auto-signal` and `.auto-retry` (succeeds when there are none)')
            break
        }
        'autoctl;signal;validate' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Routing table for --strict: a built-in name or a JSON file')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json prints one object per document, as JSON Lines)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Also require `next` and `checkpoint` to be what the routing table gives')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;signal;write' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--step', '--step', [CompletionResultType]::ParameterName, 'The step that just completed')
            [CompletionResult]::new('--result', '--result', [CompletionResultType]::ParameterName, 'The step''s result: one of the whitelist, or (step-N) for any step number N')
            [CompletionResult]::new('--next', '--next', [CompletionResultType]::ParameterName, 'What runs next; computed from the table when omitted')
            [CompletionResult]::new('--checkpoint', '--checkpoint', [CompletionResultType]::ParameterName, 'The checkpoint the next step runs at ("" for none); computed when omitted')
            [CompletionResult]::new('--iteration', '--iteration', [CompletionResultType]::ParameterName, 'The loop''s iteration count (auto mode); omitted in manual runs')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Routing table used to compute next: a built-in name or a JSON file')
            [CompletionResult]::new('--attempt', '--attempt', [CompletionResultType]::ParameterName, 'How many times in a row the step gave this result [default: counted in .auto-retry]')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Print the document that was written')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;signal;read' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--field', '--field', [CompletionResultType]::ParameterName, 'Print only this field''s value (step, result, next, checkpoint, iteration, timestamp)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;signal;clear' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;stop' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('write', 'write', [CompletionResultType]::ParameterValue, 'Ask the loop in DIR to stop at its next iteration boundary')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Is a stop requested in DIR? Prints the reason and exits 0 if so, exits 1 if not')
            [CompletionResult]::new('clear', 'clear', [CompletionResultType]::ParameterValue, 'Withdraw a stop request (succeeds when there is none)')
            break
        }
        'autoctl;stop;write' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why the loop must stop')
            [CompletionResult]::new('--message', '--message', [CompletionResultType]::ParameterName, 'A human-readable detail, kept in the file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;stop;check' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;stop;clear' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;next' {
            [CompletionResult]::new('--step', '--step', [CompletionResultType]::ParameterName, 'The step that just completed')
            [CompletionResult]::new('--result', '--result', [CompletionResultType]::ParameterName, 'The step''s result')
            [CompletionResult]::new('--checkpoint', '--checkpoint', [CompletionResultType]::ParameterName, 'The checkpoint the step ran at (post-plan, mid-exec, post-exec)')
            [CompletionResult]::new('--attempt', '--attempt', [CompletionResultType]::ParameterName, 'How many times in a row the step gave this result (1 = the first time)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'A task status (draft, planning, review, executing, re-planning, complete, ...)')
            [CompletionResult]::new('--phase', '--phase', [CompletionResultType]::ParameterName, 'The task''s phase, for statuses that branch on it (re-planning: needs-plan, needs-check)')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task module directory')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Routing table: a built-in name or a JSON file')
            [CompletionResult]::new('--command', '--command', [CompletionResultType]::ParameterName, 'Print the command a daemon would type for the next step, from TEMPLATE')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;table' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the built-in routing tables')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a routing table as JSON (a built-in name or a file)')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Prove a table''s properties, printing a counterexample for each that fails')
            break
        }
        'autoctl;table;list' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;table;show' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;table;check' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;task' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('new', 'new', [CompletionResultType]::ParameterValue, 'Create a task module: .index.md, .target.md, and its line in the root listing')
            break
        }
        'autoctl;task;new' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--title', '--title', [CompletionResultType]::ParameterName, 'The task''s title [default: the module''s name]')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'The task''s type (feature, bugfix, ...): its first tag, and a .type-profile.md whose "## Auto Adaptation" section `gate` and `profile` read')
            [CompletionResult]::new('--goal', '--goal', [CompletionResultType]::ParameterName, 'What to build, written into .target.md [default: a stub to fill in]; at least three words of content')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Create the module even though its --goal is too short for `autoctl next` to plan')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;lint' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--deny', '--deny', [CompletionResultType]::ParameterName, 'Report RULE as an error; `warnings` denies every warning (repeatable)')
            [CompletionResult]::new('--allow', '--allow', [CompletionResultType]::ParameterName, 'Do not report RULE (repeatable)')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Print what RULE checks and how to fix it')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Routing table whose statuses .index.md may use: a built-in name or a JSON file')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--list-rules', '--list-rules', [CompletionResultType]::ParameterName, 'List the rules: id, default severity, what each finds')
            [CompletionResult]::new('-L', '-L ', [CompletionResultType]::ParameterName, 'Follow symlinks while looking for task roots')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Follow symlinks while looking for task roots')
            [CompletionResult]::new('--no-git', '--no-git', [CompletionResultType]::ParameterName, 'Skip the git checks of transient files')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('start', 'start', [CompletionResultType]::ParameterValue, 'Register a loop for a tmux session and a task module')
            [CompletionResult]::new('stop', 'stop', [CompletionResultType]::ParameterValue, 'Stop a loop: write `.auto-stop` and end the run')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show runs: iteration, elapsed time and timeout, current step, state, stalls, recoveries')
            [CompletionResult]::new('lookup', 'lookup', [CompletionResultType]::ParameterValue, 'Print the session whose loop owns a task dir (exit 1 when no loop runs there)')
            [CompletionResult]::new('tick', 'tick', [CompletionResultType]::ParameterValue, 'One heartbeat for running loops; prints one JSON line per run')
            [CompletionResult]::new('continue', 'continue', [CompletionResultType]::ParameterValue, 'Send a continuation into a run''s pane unless the task moved on (exit 1, nothing sent)')
            [CompletionResult]::new('ack', 'ack', [CompletionResultType]::ParameterValue, 'Acknowledge a run that needs a person: clear its needs-person state (the loop goes on)')
            [CompletionResult]::new('recover', 'recover', [CompletionResultType]::ParameterValue, 'Recover running loops after a restart (ai-cli-task''s server recovery)')
            [CompletionResult]::new('watch', 'watch', [CompletionResultType]::ParameterValue, 'Tick each loop the moment its signal or stop file changes; heartbeat the rest')
            [CompletionResult]::new('turn', 'turn', [CompletionResultType]::ParameterValue, 'Send one step to Codex CLI as a turn over its app-server, and wait for the turn to end')
            break
        }
        'autoctl;run;start' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'The tmux session the agent runs in (the run''s name; any text, never run by a shell)')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task module directory (stored as its canonical path)')
            [CompletionResult]::new('--target', '--target', [CompletionResultType]::ParameterName, 'The tmux pane to watch and type into [default: the session''s active pane]')
            [CompletionResult]::new('--mode', '--mode', [CompletionResultType]::ParameterName, 'Who drives the loop')
            [CompletionResult]::new('--max-iterations', '--max-iterations', [CompletionResultType]::ParameterName, 'Stop the loop when its iteration count reaches N')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the loop after this much supervised time (quota waits excluded), e.g. 30m, 1h30m')
            [CompletionResult]::new('--into', '--into', [CompletionResultType]::ParameterName, 'Dispatch mode: where each step is typed [default: agent with --agent claude, shell with --agent generic]')
            [CompletionResult]::new('--command', '--command', [CompletionResultType]::ParameterName, 'Dispatch mode: the command typed for each step [default: `/ai-cli-task {next} {task} {args}` with --into agent, `claude -p` with {settings} and {stream} with --into shell, `autoctl run turn "Run the {next} step of the task in {task} {args}. When it is done, write its signal with autoctl signal write."` with --into app-server]')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Dispatch mode: the routing table that gives the entry step (built-in name or file)')
            [CompletionResult]::new('--launch', '--launch', [CompletionResultType]::ParameterName, 'Type the agent''s command into the pane after registering (observe mode, or dispatch mode --into agent)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'How panes are read: `claude`, `codex`, `gemini` act only on that agent''s own screen; `generic` reads any program''s prompts (same safety policy) [default: the program --launch starts when it is claude, codex or gemini, generic for any other program, claude without --launch]')
            [CompletionResult]::new('--threshold', '--threshold', [CompletionResultType]::ParameterName, 'Heartbeats a screen stays unchanged before it is examined as a suspected stall, counted by elapsed time: N × `run tick --heartbeat` (3 × 60s), however often ticks come')
            [CompletionResult]::new('--max-recoveries-per-iteration', '--max-recoveries-per-iteration', [CompletionResultType]::ParameterName, 'Stall recoveries allowed per iteration before the loop is stopped (stall_limit)')
            [CompletionResult]::new('--max-recoveries', '--max-recoveries', [CompletionResultType]::ParameterName, 'Stall recoveries allowed in total before the loop is stopped (stall_limit)')
            [CompletionResult]::new('--max-answers', '--max-answers', [CompletionResultType]::ParameterName, 'Prompts the approval policy proved harmless answered per step (a new signal starts a step); past it the prompt is escalated to a person. Answers are not stall recoveries')
            [CompletionResult]::new('--repeat-limit', '--repeat-limit', [CompletionResultType]::ParameterName, 'The same agent message this many times in a row stops the loop (reasoning_loop; 0: never)')
            [CompletionResult]::new('--step-timeout', '--step-timeout', [CompletionResultType]::ParameterName, 'No .status.json update for this long is a step timeout (a stall: the screen decides the recovery, an idle agent gets a continuation)')
            [CompletionResult]::new('--max-compactions', '--max-compactions', [CompletionResultType]::ParameterName, 'Stop the loop when this many context compactions happen in one iteration (0: never)')
            [CompletionResult]::new('--compact-at', '--compact-at', [CompletionResultType]::ParameterName, 'With --launch and --agent claude: Claude Code compacts its context by itself at this percentage of the window (0: left to Claude Code''s default)')
            [CompletionResult]::new('--account', '--account', [CompletionResultType]::ParameterName, 'The subscription account the agent spends: runs of one account share its usage windows and are paced together by the quota governor (`run tick --pace-stop`)')
            [CompletionResult]::new('--priority', '--priority', [CompletionResultType]::ParameterName, 'Who the governor releases first after a usage window resets (higher first), and who may start steps in the weekly reserve (above `run tick --weekly-priority`)')
            [CompletionResult]::new('--resume-text', '--resume-text', [CompletionResultType]::ParameterName, 'What autoctl types (then Enter) to resume the agent after a wait')
            [CompletionResult]::new('--max-resumes', '--max-resumes', [CompletionResultType]::ParameterName, 'Resumes per step after the agent gave up on an API error (backoff 1, 2, 4, 8 minutes, at most 30); then a person is asked')
            [CompletionResult]::new('--resume-margin', '--resume-margin', [CompletionResultType]::ParameterName, 'After a usage limit''s reset, wait this long before resuming (while Claude Code''s own automatic continue is armed, at least 4m: it goes first)')
            [CompletionResult]::new('--resume-check', '--resume-check', [CompletionResultType]::ParameterName, 'After a resume at a usage limit, how long the agent has to start working before a person is asked')
            [CompletionResult]::new('--max-retry-wait', '--max-retry-wait', [CompletionResultType]::ParameterName, 'The longest wait for the agent''s own retries (its countdown on screen)')
            [CompletionResult]::new('--max-quota-wait', '--max-quota-wait', [CompletionResultType]::ParameterName, 'The longest wait for a usage limit without a reset time, and the farthest reset waited for')
            [CompletionResult]::new('--stream-timeout', '--stream-timeout', [CompletionResultType]::ParameterName, 'A working screen unchanged this long with no tool running is a wedged stream (one Esc, then the resume text)')
            [CompletionResult]::new('--tool-timeout', '--tool-timeout', [CompletionResultType]::ParameterName, 'A tool running this long is escalated (a running tool is never a stall)')
            [CompletionResult]::new('--unknown-after', '--unknown-after', [CompletionResultType]::ParameterName, 'A screen autoctl cannot read (class unknown: a dialog it does not know, a REPL in front of the agent) unchanged this long is escalated once, with its last lines')
            [CompletionResult]::new('--notify', '--notify', [CompletionResultType]::ParameterName, 'Run CMD for this run''s events too (see `run tick --notify`)')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'With --launch: type the command even when the pane shows no shell prompt, and without checking that its program exists on the pane''s PATH')
            [CompletionResult]::new('--unattended', '--unattended', [CompletionResultType]::ParameterName, 'Nobody will answer this run''s prompts: the agent''s PreToolUse hook (`autoctl hook pre-tool-use`, wired by `autoctl hook install`) denies what the approval policy names destructive, telling the model the rule and why, instead of asking a person')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;stop' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'The run''s session')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The run''s task module directory')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why the loop stops (written to `.auto-stop` and kept in the registry)')
            [CompletionResult]::new('--message', '--message', [CompletionResultType]::ParameterName, 'A human-readable detail, kept in `.auto-stop` and the registry')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;status' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Only this session''s run (exit 1 when there is none)')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'Only the run of this task module directory (exit 1 when there is none)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every run (the default)')
            [CompletionResult]::new('--accounts', '--accounts', [CompletionResultType]::ParameterName, 'Show the accounts instead of the runs: each account''s usage windows (the freshest reading from any of its sessions, with its source and age), the runs whose step holds the quota governor''s permit, and who waits, in release order (with --session or --task: that run''s account). Prometheus output always has them')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;lookup' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task module directory')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json: {"session_name","status"})')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;tick' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Tick this session''s run')
            [CompletionResult]::new('--heartbeat', '--heartbeat', [CompletionResultType]::ParameterName, 'How often ticks are scheduled; stall heartbeats are spaced at least half of it apart')
            [CompletionResult]::new('--notify', '--notify', [CompletionResultType]::ParameterName, 'Run CMD (with `sh -c`) once for each event: escalate, needs-person, resume, quota-wait-start, quota-wait-end, stop, finish, lost, exit, stall-limit, restart')
            [CompletionResult]::new('--notify-timeout', '--notify-timeout', [CompletionResultType]::ParameterName, 'Kill a notify command (and what it started) still running after this long')
            [CompletionResult]::new('--renotify', '--renotify', [CompletionResultType]::ParameterName, 'Announce a run that still needs a person again at most this often (needs-person)')
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)')
            [CompletionResult]::new('--compact-at', '--compact-at', [CompletionResultType]::ParameterName, 'Type /compact when the status line''s context use reaches PERCENT and the agent is idle at its prompt (once per crossing, as the iteration''s first compaction; 0: never) [default: the task''s compaction_threshold in its .type-profile.md, else 82 for a task-ai module (one with a .status.json), else 70]')
            [CompletionResult]::new('--hook-fresh', '--hook-fresh', [CompletionResultType]::ParameterName, 'A hook state older than this, or older than the last change of what the screen shows (its class), is not trusted; the screen decides')
            [CompletionResult]::new('--pace-stop', '--pace-stop', [CompletionResultType]::ParameterName, 'No new step starts (and no resume is typed) while the account''s 5-hour window is at PERCENT or a step would take it past PERCENT (the cost of a step is learned from the windows'' movement); the run waits, quota-paced, for the reset')
            [CompletionResult]::new('--resume-burst', '--resume-burst', [CompletionResultType]::ParameterName, 'After a reset, release waiting runs of an account in priority order, at most N a minute (a session that continued by itself counts as one)')
            [CompletionResult]::new('--weekly-reserve', '--weekly-reserve', [CompletionResultType]::ParameterName, 'With PERCENT or less of the 7-day window left, only runs with a priority above --weekly-priority start steps; the account is escalated once')
            [CompletionResult]::new('--weekly-priority', '--weekly-priority', [CompletionResultType]::ParameterName, 'The priority (`run start --priority`) a run needs above it to use the weekly reserve')
            [CompletionResult]::new('--host-lease', '--host-lease', [CompletionResultType]::ParameterName, 'A host whose ticks and watcher have not renewed its lease for this long is shown host-lost and announced once (its runs are never typed into from elsewhere)')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Tick every running run')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Decide and print, but change nothing (no keys typed, no files written, no state saved)')
            [CompletionResult]::new('--wait-weekly', '--wait-weekly', [CompletionResultType]::ParameterName, 'Wait out a weekly usage limit (the status line''s seven_day at 100%) instead of escalating it')
            [CompletionResult]::new('--no-governor', '--no-governor', [CompletionResultType]::ParameterName, 'Do not pace: every step and resume goes ahead whatever the account''s windows say')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;continue' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'The run''s session')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The run''s task module directory')
            [CompletionResult]::new('--if-unchanged', '--if-unchanged', [CompletionResultType]::ParameterName, 'Send only if `.status.json`''s `updated_at` is still exactly this text')
            [CompletionResult]::new('--text', '--text', [CompletionResultType]::ParameterName, 'What to type (then Enter)')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;ack' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'The run''s session')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The run''s task module directory')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;recover' {
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Decide and print, but change nothing')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;watch' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Watch this session''s run (until it ends)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How to print each decision [default: text on a terminal, json when piped]')
            [CompletionResult]::new('--heartbeat', '--heartbeat', [CompletionResultType]::ParameterName, 'How often every run gets a heartbeat (stall checks, limits), as from cron; at least 1s')
            [CompletionResult]::new('--notify', '--notify', [CompletionResultType]::ParameterName, 'Run CMD (with `sh -c`) once for each event: escalate, needs-person, resume, quota-wait-start, quota-wait-end, stop, finish, lost, exit, stall-limit, restart')
            [CompletionResult]::new('--notify-timeout', '--notify-timeout', [CompletionResultType]::ParameterName, 'Kill a notify command (and what it started) still running after this long')
            [CompletionResult]::new('--renotify', '--renotify', [CompletionResultType]::ParameterName, 'Announce a run that still needs a person again at most this often (needs-person)')
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)')
            [CompletionResult]::new('--compact-at', '--compact-at', [CompletionResultType]::ParameterName, 'Type /compact when the status line''s context use reaches PERCENT and the agent is idle at its prompt (once per crossing, as the iteration''s first compaction; 0: never) [default: the task''s compaction_threshold in its .type-profile.md, else 82 for a task-ai module (one with a .status.json), else 70]')
            [CompletionResult]::new('--hook-fresh', '--hook-fresh', [CompletionResultType]::ParameterName, 'A hook state older than this, or older than the last change of what the screen shows (its class), is not trusted; the screen decides')
            [CompletionResult]::new('--pace-stop', '--pace-stop', [CompletionResultType]::ParameterName, 'No new step starts (and no resume is typed) while the account''s 5-hour window is at PERCENT or a step would take it past PERCENT (the cost of a step is learned from the windows'' movement); the run waits, quota-paced, for the reset')
            [CompletionResult]::new('--resume-burst', '--resume-burst', [CompletionResultType]::ParameterName, 'After a reset, release waiting runs of an account in priority order, at most N a minute (a session that continued by itself counts as one)')
            [CompletionResult]::new('--weekly-reserve', '--weekly-reserve', [CompletionResultType]::ParameterName, 'With PERCENT or less of the 7-day window left, only runs with a priority above --weekly-priority start steps; the account is escalated once')
            [CompletionResult]::new('--weekly-priority', '--weekly-priority', [CompletionResultType]::ParameterName, 'The priority (`run start --priority`) a run needs above it to use the weekly reserve')
            [CompletionResult]::new('--host-lease', '--host-lease', [CompletionResultType]::ParameterName, 'A host whose ticks and watcher have not renewed its lease for this long is shown host-lost and announced once (its runs are never typed into from elsewhere)')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Watch every running run, and runs started later')
            [CompletionResult]::new('--until-needs-person', '--until-needs-person', [CompletionResultType]::ParameterName, 'With --session: also exit (0) as soon as the loop needs a person (an escalated prompt), so you can answer it in its pane and run `run watch` again')
            [CompletionResult]::new('--wait-weekly', '--wait-weekly', [CompletionResultType]::ParameterName, 'Wait out a weekly usage limit (the status line''s seven_day at 100%) instead of escalating it')
            [CompletionResult]::new('--no-governor', '--no-governor', [CompletionResultType]::ParameterName, 'Do not pace: every step and resume goes ahead whatever the account''s windows say')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;turn' {
            [CompletionResult]::new('--app-server', '--app-server', [CompletionResultType]::ParameterName, 'How to run the app-server (a shell command)')
            [CompletionResult]::new('--approval-policy', '--approval-policy', [CompletionResultType]::ParameterName, 'Codex''s approval policy for a new thread')
            [CompletionResult]::new('--sandbox', '--sandbox', [CompletionResultType]::ParameterName, 'Codex''s sandbox for a new thread')
            [CompletionResult]::new('--ask-timeout', '--ask-timeout', [CompletionResultType]::ParameterName, 'How long a question to the person may wait before it is declined')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'The longest the turn may take; past it the turn is interrupted')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--new-thread', '--new-thread', [CompletionResultType]::ParameterName, 'Start a new thread even when this pane''s previous step left one')
            [CompletionResult]::new('--unattended', '--unattended', [CompletionResultType]::ParameterName, 'Decline what the policy names destructive instead of asking: nobody will answer')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;schema' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the schemas: name, file, what it describes')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print one schema (draft 2020-12 JSON)')
            break
        }
        'autoctl;schema;list' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;schema;show' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;lock' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('acquire', 'acquire', [CompletionResultType]::ParameterValue, 'Take FILE for OWNER: free, stale, or held by a recorded process that is gone')
            [CompletionResult]::new('refresh', 'refresh', [CompletionResultType]::ParameterValue, 'Renew OWNER''s heartbeat in FILE')
            [CompletionResult]::new('release', 'release', [CompletionResultType]::ParameterValue, 'Give FILE up; only its owner may')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Who holds FILE, and is it alive?')
            break
        }
        'autoctl;lock;acquire' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--owner', '--owner', [CompletionResultType]::ParameterName, 'Who takes the lock, e.g. session:<id> or cron:nightly')
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'A lock with no heartbeat for longer than this is stale and may be taken over')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Record PID as the process whose life the lock stands for [default: none]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;lock;refresh' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--owner', '--owner', [CompletionResultType]::ParameterName, 'Who takes the lock, e.g. session:<id> or cron:nightly')
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'A lock with no heartbeat for longer than this is stale and may be taken over')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Record PID as the process whose life the lock stands for [default: none]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;lock;release' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--owner', '--owner', [CompletionResultType]::ParameterName, 'Who takes the lock, e.g. session:<id> or cron:nightly')
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'A lock with no heartbeat for longer than this is stale and may be taken over')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Record PID as the process whose life the lock stands for [default: none]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;lock;status' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--owner', '--owner', [CompletionResultType]::ParameterName, 'Answer yes only when this owner holds the lock')
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'A lock with no heartbeat for longer than this is stale and may be taken over')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;loop' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Activate a loop in the project: write D/.autoctl/loop.json and reset the loop state')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show the loop: bound session, iterations, tokens, lock, quota wait, how it ended')
            [CompletionResult]::new('route', 'route', [CompletionResultType]::ParameterValue, 'Print what `hook stop` would answer now, changing nothing')
            [CompletionResult]::new('teardown', 'teardown', [CompletionResultType]::ParameterValue, 'Remove the loop: its activation file and its lock, whoever holds it')
            break
        }
        'autoctl;loop;init' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]')
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Bind the loop to this session id [default: the first session that stops]')
            [CompletionResult]::new('--max-iterations', '--max-iterations', [CompletionResultType]::ParameterName, 'Turns the session may finish inside the loop')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'Token budget of the session: input, output, cache-write and cache-read tokens from the transcript''s usage fields, counted from the loop''s first turn')
            [CompletionResult]::new('--sentinel', '--sentinel', [CompletionResultType]::ParameterName, 'What the agent writes when the work is done: a <promise>...</promise> tag counts anywhere in its last message (outside code); any other text must be a line of its own')
            [CompletionResult]::new('--prompt', '--prompt', [CompletionResultType]::ParameterName, 'The prompt fed after every turn')
            [CompletionResult]::new('--prompt-file', '--prompt-file', [CompletionResultType]::ParameterName, 'A file holding the prompt, read again at every turn (edit it to steer the loop)')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'A task module: the prompt is the command the routing table gives for its .auto-signal (else its .index.md status); its .auto-stop or a (stop) route ends the loop')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Routing table for --task: a built-in name or a JSON file')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The prompt for --task; placeholders {next}, {checkpoint}, {task}, {iteration}, {args}')
            [CompletionResult]::new('--max-idle', '--max-idle', [CompletionResultType]::ParameterName, 'End the loop after this many consecutive turns without a tool call (0: never)')
            [CompletionResult]::new('--max-compactions', '--max-compactions', [CompletionResultType]::ParameterName, 'End the loop when this many context compactions happen within one iteration (0: never)')
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'The loop lock is stale after this long without a heartbeat')
            [CompletionResult]::new('--transcript-wait', '--transcript-wait', [CompletionResultType]::ParameterName, 'How long `hook stop` waits for a transcript that lags behind the session when the hook input has no last_assistant_message')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json prints the activation file''s settings)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace a loop that is still running for another session')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;loop;status' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;loop;route' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]')
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'The session asking [default: the bound session, or a new one when unbound]')
            [CompletionResult]::new('--transcript', '--transcript', [CompletionResultType]::ParameterName, 'A transcript to observe (completion, tool calls, tokens since the loop''s cursor)')
            [CompletionResult]::new('--last-message', '--last-message', [CompletionResultType]::ParameterName, 'The last assistant message, as Claude Code passes it')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;loop;teardown' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;hook' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('stop', 'stop', [CompletionResultType]::ParameterValue, 'Answer Claude Code''s Stop event: continue the loop with its next prompt, or let it stop')
            [CompletionResult]::new('stop-failure', 'stop-failure', [CompletionResultType]::ParameterValue, 'Record Claude Code''s StopFailure event (a turn that ended on an API error)')
            [CompletionResult]::new('event', 'event', [CompletionResultType]::ParameterValue, 'Record any Claude Code hook event as the session''s typed state')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Wire autoctl''s hooks into an agent''s settings (Claude Code, Codex CLI, Gemini CLI)')
            [CompletionResult]::new('permission-request', 'permission-request', [CompletionResultType]::ParameterValue, 'Answer Claude Code''s PermissionRequest: allow what the policy proves harmless')
            [CompletionResult]::new('pre-tool-use', 'pre-tool-use', [CompletionResultType]::ParameterValue, 'Answer Claude Code''s PreToolUse: the policy''s floor in every permission mode')
            break
        }
        'autoctl;hook;stop' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI''s event names, Codex CLI''s turn_id, else Claude Code]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project whose loop answers [default: $CLAUDE_PROJECT_DIR, else the input''s cwd]')
            [CompletionResult]::new('--log', '--log', [CompletionResultType]::ParameterName, 'Append one JSON line per call to FILE: what was read and what was answered')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;hook;stop-failure' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI''s event names, Codex CLI''s turn_id, else Claude Code]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project whose loop answers [default: $CLAUDE_PROJECT_DIR, else the input''s cwd]')
            [CompletionResult]::new('--log', '--log', [CompletionResultType]::ParameterName, 'Append one JSON line per call to FILE: what was read and what was answered')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;hook;event' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI''s event names, Codex CLI''s turn_id, else Claude Code]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;hook;install' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent whose hooks are wired')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'The project whose settings are changed (.claude/settings.json, .codex/hooks.json, .gemini/settings.json) [default: the current directory]')
            [CompletionResult]::new('--autoctl', '--autoctl', [CompletionResultType]::ParameterName, 'How the hooks run autoctl [default: `autoctl` when that is this binary on PATH, else this binary''s absolute path]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Change the user''s settings instead (~/.claude/settings.json, ~/.codex/hooks.json, ~/.gemini/settings.json): every interactive session of this user')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Confirm --user')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the diff and change nothing')
            [CompletionResult]::new('--uninstall', '--uninstall', [CompletionResultType]::ParameterName, 'Remove autoctl''s hooks and status line (a wrapped status line is given back)')
            [CompletionResult]::new('--commands', '--commands', [CompletionResultType]::ParameterName, 'Also install the ai-cli-task slash command (.claude/commands/ai-cli-task.md), which runs the steps `run start --mode dispatch` types into Claude Code (Claude Code only)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;hook;permission-request' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Answer within this time, whatever happens (a stalled stdin, a slow disk): past it the hook gives no decision, so Claude Code shows its prompt')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI''s event names, Codex CLI''s turn_id, else Claude Code]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;hook;pre-tool-use' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Answer within this time, whatever happens: past it the hook gives no decision')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent whose hook this is: its payload is read in its own vocabulary [default: read from the payload: Gemini CLI''s event names, Codex CLI''s turn_id, else Claude Code]')
            [CompletionResult]::new('--unattended', '--unattended', [CompletionResultType]::ParameterName, 'Deny what the policy names destructive instead of asking: nobody will answer [default: ask, unless AUTOCTL_UNATTENDED=1 is in the agent''s environment, `run start --unattended` marked the agent''s tmux pane, or the policy file says on_destructive "deny"]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;statusline' {
            [CompletionResult]::new('--then', '--then', [CompletionResultType]::ParameterName, 'Also run this status-line command and print its first line before autoctl''s')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;doctor' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Only this run (its tmux session name) or Claude Code session (its session_id)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'format')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;policy' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Decide one tool call and print the decision and the rule that made it')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print the effective rules: the built-in rules and the policy file''s')
            [CompletionResult]::new('log', 'log', [CompletionResultType]::ParameterValue, 'Print the decision log (oldest first)')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write autoctl''s rules as Gemini CLI''s own policy-engine file')
            [CompletionResult]::new('test', 'test', [CompletionResultType]::ParameterValue, 'Check the rules'' match and not_match examples, and print each one decided otherwise')
            break
        }
        'autoctl;policy;check' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--tool', '--tool', [CompletionResultType]::ParameterName, 'The tool: Bash, Read, Write, Edit, WebFetch, mcp__server__tool and others')
            [CompletionResult]::new('--input', '--input', [CompletionResultType]::ParameterName, 'The tool''s input as JSON, as Claude Code sends it ({"command": "ls"} for Bash, {"file_path": "src/a.rs"} for Write)')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'The directory the call runs in [default: the current directory]')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'The project directory, when it is not the working directory [default: $CLAUDE_PROJECT_DIR]')
            [CompletionResult]::new('--screen', '--screen', [CompletionResultType]::ParameterName, 'Decide the prompt on a captured screen (a file, or - for stdin) the way a supervisor would: a Claude Code permission box read back into its tool call, or a program''s yes/no question')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--batch', '--batch', [CompletionResultType]::ParameterName, 'Read hook payloads as JSON lines on stdin; print one decision (JSON) per line')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;policy;show' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;policy;log' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--tail', '--tail', [CompletionResultType]::ParameterName, 'Only the last N decisions')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json: one object per line)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;policy;export' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Where to write it (- for stdout) [default: $GEMINI_CLI_HOME/.gemini/policies/autoctl.toml, else ~/.gemini/policies/autoctl.toml]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Where to write it (- for stdout) [default: $GEMINI_CLI_HOME/.gemini/policies/autoctl.toml, else ~/.gemini/policies/autoctl.toml]')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]')
            [CompletionResult]::new('--gemini', '--gemini', [CompletionResultType]::ParameterName, 'Export for Gemini CLI''s policy engine (the only target so far)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;policy;test' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else ~/.config/autoctl/policy.json; built-in rules only when it does not exist]')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;pane' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('capture', 'capture', [CompletionResultType]::ParameterValue, 'Print a pane''s text (wrapped lines joined, trailing blank rows dropped)')
            [CompletionResult]::new('hash', 'hash', [CompletionResultType]::ParameterValue, 'Print a stable hash of a pane''s normalized text')
            [CompletionResult]::new('classify', 'classify', [CompletionResultType]::ParameterValue, 'Say what a pane shows: class, action, and the rule that decided')
            [CompletionResult]::new('ready', 'ready', [CompletionResultType]::ParameterValue, 'Is a shell prompt in front and no command running? Exits 0 if so, 1 if not')
            [CompletionResult]::new('send', 'send', [CompletionResultType]::ParameterValue, 'Type text or press keys in a pane')
            [CompletionResult]::new('rules', 'rules', [CompletionResultType]::ParameterValue, 'List the classification rules, run each rule''s own examples, or test them on captures')
            break
        }
        'autoctl;pane;capture' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--lines', '--lines', [CompletionResultType]::ParameterName, 'Print only the last N lines, reaching into the scrollback when N is larger than the pane')
            [CompletionResult]::new('--escapes', '--escapes', [CompletionResultType]::ParameterName, 'Keep colour and attribute escape sequences (capture-pane -e)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;pane;hash' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--raw', '--raw', [CompletionResultType]::ParameterName, 'Hash the bytes exactly as captured, without normalizing')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;pane;classify' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Whose screen it is: with claude, a foreground command other than the agent is observed, never answered')
            [CompletionResult]::new('--foreground', '--foreground', [CompletionResultType]::ParameterName, 'The pane''s foreground command, for a capture on stdin (tmux reports it for a TARGET)')
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Read quota reset times relative to TIME (RFC 3339) instead of now')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Also say why: the rule''s explanation, destructive markers, and rules passed over')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;pane;ready' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Keep checking until ready or DURATION has passed (backoff 1, 2, 4 ... 30 s)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;pane;send' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--text', '--text', [CompletionResultType]::ParameterName, 'Text to type literally (no control characters: a newline would run the line; submit with --submit, press other keys with --keys)')
            [CompletionResult]::new('--keys', '--keys', [CompletionResultType]::ParameterName, 'tmux key names to press (Enter, Escape, C-c, Up, y)')
            [CompletionResult]::new('--delay', '--delay', [CompletionResultType]::ParameterName, 'The pause between the text and the Enter of --submit')
            [CompletionResult]::new('--submit', '--submit', [CompletionResultType]::ParameterName, 'Press Enter after the text, separately, after --delay')
            [CompletionResult]::new('--verify', '--verify', [CompletionResultType]::ParameterName, 'Check the result: with --submit, that the text left the input line; without, that it arrived there. Exits 1 if not')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;pane;rules' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'Run every rule''s examples and near misses; exit 1 if one fails')
            [CompletionResult]::new('--dump', '--dump', [CompletionResultType]::ParameterName, 'Print the embedded rules file (a starting point for --rules FILE)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('test', 'test', [CompletionResultType]::ParameterValue, 'Classify a directory of labelled captures; exit 1 on any miss or unsafe answer')
            break
        }
        'autoctl;pane;rules;test' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent for captures whose meta file and expected.tsv line do not name one')
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Read quota reset times relative to TIME (RFC 3339) instead of now')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json: one object per capture, then a summary object)')
            [CompletionResult]::new('--failures-only', '--failures-only', [CompletionResultType]::ParameterName, 'Print only misses, unsafe answers and the summary')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;stall' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'How waits end: `run start` (kept with the run) and `stall check`')
            break
        }
        'autoctl;stall;check' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--target', '--target', [CompletionResultType]::ParameterName, 'A pane to check (repeat for several)')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'Where the state is kept [default: $AUTOCTL_STATE_DIR/stall/SOCKET.json]')
            [CompletionResult]::new('--threshold', '--threshold', [CompletionResultType]::ParameterName, 'Unchanged captures that make a stall')
            [CompletionResult]::new('--max-recoveries-per-iteration', '--max-recoveries-per-iteration', [CompletionResultType]::ParameterName, 'Recoveries allowed per signal iteration')
            [CompletionResult]::new('--max-recoveries', '--max-recoveries', [CompletionResultType]::ParameterName, 'Recoveries allowed in total')
            [CompletionResult]::new('--max-answers', '--max-answers', [CompletionResultType]::ParameterName, 'Harmless prompts answered per step (a new .auto-signal starts a step); past it the prompt is escalated. Answers are not recoveries')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task module the pane works on: a new .auto-signal iteration restores the per-iteration budget, and past the limits its .auto-stop is written')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Whose screen it is: with claude, a foreground command other than the agent is observed, never answered')
            [CompletionResult]::new('--repeat-limit', '--repeat-limit', [CompletionResultType]::ParameterName, 'The same agent message this many times in a row is a reasoning loop (0: never)')
            [CompletionResult]::new('--step-timeout', '--step-timeout', [CompletionResultType]::ParameterName, 'With --task: no .status.json update for this long is a step timeout')
            [CompletionResult]::new('--continue-text', '--continue-text', [CompletionResultType]::ParameterName, 'What a step timeout types into an idle agent')
            [CompletionResult]::new('--resume-text', '--resume-text', [CompletionResultType]::ParameterName, 'What autoctl types (then Enter) to resume the agent after a wait')
            [CompletionResult]::new('--max-resumes', '--max-resumes', [CompletionResultType]::ParameterName, 'Resumes per step after the agent gave up on an API error (backoff 1, 2, 4, 8 minutes, at most 30); then a person is asked')
            [CompletionResult]::new('--resume-margin', '--resume-margin', [CompletionResultType]::ParameterName, 'After a usage limit''s reset, wait this long before resuming (while Claude Code''s own automatic continue is armed, at least 4m: it goes first)')
            [CompletionResult]::new('--resume-check', '--resume-check', [CompletionResultType]::ParameterName, 'After a resume at a usage limit, how long the agent has to start working before a person is asked')
            [CompletionResult]::new('--max-retry-wait', '--max-retry-wait', [CompletionResultType]::ParameterName, 'The longest wait for the agent''s own retries (its countdown on screen)')
            [CompletionResult]::new('--max-quota-wait', '--max-quota-wait', [CompletionResultType]::ParameterName, 'The longest wait for a usage limit without a reset time, and the farthest reset waited for')
            [CompletionResult]::new('--stream-timeout', '--stream-timeout', [CompletionResultType]::ParameterName, 'A working screen unchanged this long with no tool running is a wedged stream (one Esc, then the resume text)')
            [CompletionResult]::new('--tool-timeout', '--tool-timeout', [CompletionResultType]::ParameterName, 'A tool running this long is escalated (a running tool is never a stall)')
            [CompletionResult]::new('--unknown-after', '--unknown-after', [CompletionResultType]::ParameterName, 'A screen autoctl cannot read (class unknown: a dialog it does not know, a REPL in front of the agent) unchanged this long is escalated once, with its last lines')
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json, else the built-in rules] (autoctl policy show)')
            [CompletionResult]::new('--hook-fresh', '--hook-fresh', [CompletionResultType]::ParameterName, 'A hook state older than this, or older than the last change of what the screen shows (its class), is not trusted; the screen decides')
            [CompletionResult]::new('--all-panes', '--all-panes', [CompletionResultType]::ParameterName, 'Check every pane of the tmux server')
            [CompletionResult]::new('--apply', '--apply', [CompletionResultType]::ParameterName, 'Carry the decision out: type the answer, write .auto-stop past the limits')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;completions' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;man' {
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write every page (one per subcommand) into DIR instead of printing the top page')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;gate' {
            [CompletionResult]::new('--checkpoint', '--checkpoint', [CompletionResultType]::ParameterName, 'The checkpoint the check ran at')
            [CompletionResult]::new('--score', '--score', [CompletionResultType]::ParameterName, 'The overall score, or the six D1–D6 scores (space or comma separated), each 0–1')
            [CompletionResult]::new('--attempt', '--attempt', [CompletionResultType]::ParameterName, 'Which check this is at this checkpoint: 1 for the first (retry_count + 1)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'A `.type-profile.md` whose "## Auto Adaptation" section sets thresholds and limits')
            [CompletionResult]::new('--threshold', '--threshold', [CompletionResultType]::ParameterName, 'Override the checkpoint''s threshold')
            [CompletionResult]::new('--retry-limit', '--retry-limit', [CompletionResultType]::ParameterName, 'Override the checkpoint''s retry limit')
            [CompletionResult]::new('--replan-below', '--replan-below', [CompletionResultType]::ParameterName, 'At mid-exec and post-exec, answer REPLAN instead of NEEDS_FIX below this score')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json: the whole decision, with the reason)')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;converge' {
            [CompletionResult]::new('--previous', '--previous', [CompletionResultType]::ParameterName, 'The previous stage''s convergence (0–1)')
            [CompletionResult]::new('--current', '--current', [CompletionResultType]::ParameterName, 'This stage''s convergence (0–1)')
            [CompletionResult]::new('--satisfied', '--satisfied', [CompletionResultType]::ParameterName, 'The satisfaction bar: at or above it an accepted stage ends the task')
            [CompletionResult]::new('--history', '--history', [CompletionResultType]::ParameterName, 'Keep the exclusion list and the last accepted convergence in FILE')
            [CompletionResult]::new('--direction', '--direction', [CompletionResultType]::ParameterName, 'What this stage tried, recorded on the exclusion list when it is rolled back')
            [CompletionResult]::new('--max-rollbacks', '--max-rollbacks', [CompletionResultType]::ParameterName, 'Answer EXHAUSTED once this many directions are excluded')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json: the whole decision, with the reason)')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;profile' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print the thresholds and limits a profile gives each checkpoint')
            [CompletionResult]::new('learn', 'learn', [CompletionResultType]::ParameterValue, 'Write one loop''s metrics into the profile''s "## Auto Adaptation" section')
            break
        }
        'autoctl;profile;show' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'The profile')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;profile;learn' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'The profile (created if missing; a symlink is refused, exit 2)')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Read the metrics from a JSON file (`-` for standard input); flags override its values')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries used at a checkpoint, as CHECKPOINT=N (repeatable)')
            [CompletionResult]::new('--iterations', '--iterations', [CompletionResultType]::ParameterName, 'Loop iterations')
            [CompletionResult]::new('--mid-exec-checks', '--mid-exec-checks', [CompletionResultType]::ParameterName, 'Mid-exec checks triggered')
            [CompletionResult]::new('--compactions', '--compactions', [CompletionResultType]::ParameterName, 'Context compactions')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'Time spent in a phase, as PHASE=DURATION (target, planning, execution, acceptance; 90s, 12m, 1h30m; repeatable)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'The task type: with it, the same metrics are also learned into the shared library''s profile of that type, LIBRARY/.memory/.type-profiles/TYPE.md (created from this profile when missing), under the library''s lock LIBRARY/.memory/.type-profiles/.lock')
            [CompletionResult]::new('--library', '--library', [CompletionResultType]::ParameterName, 'The shared workspaces library that --type syncs into')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json: the section as it is after learning)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;vfp' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('step', 'step', [CompletionResultType]::ParameterValue, 'Record one exec step: did it turn a VH stub into a passing test (a VH→HS transition)?')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print the cycles completed (of the VH stubs, when known) and the steps since the last transition')
            break
        }
        'autoctl;vfp;step' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'The state file (a symlink is refused)')
            [CompletionResult]::new('--green', '--green', [CompletionResultType]::ParameterName, 'The record of completed cycles, one JSON line each (default: cumulative-green.jsonl in the state file''s directory; a symlink is refused)')
            [CompletionResult]::new('--test', '--test', [CompletionResultType]::ParameterName, 'A test the transition turned green (repeatable), recorded in its line')
            [CompletionResult]::new('--anomaly-after', '--anomaly-after', [CompletionResultType]::ParameterName, 'Steps in a row without a transition that raise the anomaly (0: never)')
            [CompletionResult]::new('--stubs-total', '--stubs-total', [CompletionResultType]::ParameterName, 'The VH stubs the plan generated (vh-baseline.md), for the progress display')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--transition', '--transition', [CompletionResultType]::ParameterName, 'The step made a VH→HS transition')
            [CompletionResult]::new('--no-transition', '--no-transition', [CompletionResultType]::ParameterName, 'The step made none')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;vfp;show' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'The state file')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;route' {
            [CompletionResult]::new('--size', '--size', [CompletionResultType]::ParameterName, 'The issue''s Size (omit when it has none)')
            [CompletionResult]::new('--review', '--review', [CompletionResultType]::ParameterName, 'Review depth on the pr route')
            [CompletionResult]::new('--phase', '--phase', [CompletionResultType]::ParameterName, 'The issue''s phase label: ready, issue, or none (no phase/* label)')
            [CompletionResult]::new('--refreshed-size', '--refreshed-size', [CompletionResultType]::ParameterName, 'The Size re-read after the spec phase succeeded (Step 3a)')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The branch the work is based on and merged into [default: main]; passed to the phases that take it (code, and each XL sub-issue''s run)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--patch', '--patch', [CompletionResultType]::ParameterName, 'Force the patch route (code --patch → verify)')
            [CompletionResult]::new('--pr', '--pr', [CompletionResultType]::ParameterName, 'Force the pr route (code → review → merge → verify)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;graph' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('levels', 'levels', [CompletionResultType]::ParameterValue, 'Print a sub-issue graph''s execution levels, in batches of at most --max-concurrent')
            [CompletionResult]::new('aggregate', 'aggregate', [CompletionResultType]::ParameterValue, 'Print the parent issue''s phase from its children''s phases')
            [CompletionResult]::new('close', 'close', [CompletionResultType]::ParameterValue, 'Decide the XL parent''s close flow from its sub-issues and its issue body')
            [CompletionResult]::new('verify-order', 'verify-order', [CompletionResultType]::ParameterValue, 'Print the order in which an XL parent''s issues are verified (wholework Step 4d)')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run COMMAND for every sub-issue, level by level, at most N at once')
            break
        }
        'autoctl;graph;levels' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--failed', '--failed', [CompletionResultType]::ParameterName, 'Issues that failed (repeatable, or comma separated); they and their dependents are not run')
            [CompletionResult]::new('--max-concurrent', '--max-concurrent', [CompletionResultType]::ParameterName, 'The most issues run at once (AUTO_MAX_CONCURRENT)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;graph;aggregate' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;graph;close' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--parent', '--parent', [CompletionResultType]::ParameterName, 'The parent issue')
            [CompletionResult]::new('--body', '--body', [CompletionResultType]::ParameterName, 'The parent issue''s body (markdown), or `-` for standard input')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;graph;verify-order' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--parent', '--parent', [CompletionResultType]::ParameterName, 'The parent issue (verified last)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;graph;run' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--failed', '--failed', [CompletionResultType]::ParameterName, 'Issues that already failed (repeatable, or comma separated): they and their dependents are not run')
            [CompletionResult]::new('--max-concurrent', '--max-concurrent', [CompletionResultType]::ParameterName, 'The most sub-issues running at once (AUTO_MAX_CONCURRENT)')
            [CompletionResult]::new('--schedule', '--schedule', [CompletionResultType]::ParameterName, 'window: start the next as soon as one finishes; batches: wait for a whole batch')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'The longest one sub-issue''s command may run')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;checkpoint' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('write-single', 'write-single', [CompletionResultType]::ParameterValue, 'Save an issue''s verify iteration count (auto-state-N.json)')
            [CompletionResult]::new('read-single', 'read-single', [CompletionResultType]::ParameterValue, 'Print an issue''s saved verify iteration count (0 when none or stale)')
            [CompletionResult]::new('delete-single', 'delete-single', [CompletionResultType]::ParameterValue, 'Delete an issue''s checkpoint (succeeds when there is none)')
            [CompletionResult]::new('write-batch', 'write-batch', [CompletionResultType]::ParameterValue, 'Save a batch''s state and add it to the active index')
            [CompletionResult]::new('update-batch', 'update-batch', [CompletionResultType]::ParameterValue, 'Move an issue of a batch to completed or failed')
            [CompletionResult]::new('read-batch', 'read-batch', [CompletionResultType]::ParameterValue, 'Print a batch''s remaining issues (exit 1 when there is no such batch)')
            [CompletionResult]::new('delete-batch', 'delete-batch', [CompletionResultType]::ParameterValue, 'Delete a batch''s state and drop it from the active index')
            [CompletionResult]::new('list-batches', 'list-batches', [CompletionResultType]::ParameterValue, 'Print the active batch ids, oldest first (resume takes the last)')
            break
        }
        'autoctl;checkpoint;write-single' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The checkpoint directory')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;checkpoint;read-single' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--live-phase', '--live-phase', [CompletionResultType]::ParameterName, 'The issue''s live phase label; `done` discards (and deletes) the checkpoint')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The checkpoint directory')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;checkpoint;delete-single' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The checkpoint directory')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;checkpoint;write-batch' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--remaining', '--remaining', [CompletionResultType]::ParameterName, 'Issues still to process, in order')
            [CompletionResult]::new('--completed', '--completed', [CompletionResultType]::ParameterName, 'Issues already completed')
            [CompletionResult]::new('--failed', '--failed', [CompletionResultType]::ParameterName, 'Issues that failed')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The checkpoint directory')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;checkpoint;update-batch' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The checkpoint directory')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;checkpoint;read-batch' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The checkpoint directory')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;checkpoint;delete-batch' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The checkpoint directory')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;checkpoint;list-batches' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The checkpoint directory')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;plan' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('validate', 'validate', [CompletionResultType]::ParameterValue, 'Check a recovery plan before running it')
            break
        }
        'autoctl;plan;validate' {
            [CompletionResult]::new('--tmux-socket', '--tmux-socket', [CompletionResultType]::ParameterName, 'The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)')
            [CompletionResult]::new('--protected', '--protected', [CompletionResultType]::ParameterName, 'Branches no step may push to (repeatable, or comma separated; replaces main, master)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json: one object per plan, as JSON Lines)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
