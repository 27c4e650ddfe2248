
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
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('signal', 'signal', [CompletionResultType]::ParameterValue, 'Validate, write, read and clear `.auto-signal` progress files')
            [CompletionResult]::new('stop', 'stop', [CompletionResultType]::ParameterValue, 'Request, check and clear a loop stop (`.auto-stop`)')
            [CompletionResult]::new('next', 'next', [CompletionResultType]::ParameterValue, 'Print the step a loop runs next')
            [CompletionResult]::new('table', 'table', [CompletionResultType]::ParameterValue, 'List, show and check routing tables')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'List and print the JSON Schemas of the protocol files')
            [CompletionResult]::new('lock', 'lock', [CompletionResultType]::ParameterValue, 'Take, refresh, release and inspect a heartbeat lock file')
            [CompletionResult]::new('loop', 'loop', [CompletionResultType]::ParameterValue, 'Run a loop inside one Claude Code session: init, status, route, teardown')
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'Commands Claude Code runs as hooks: stop, stop-failure')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print or write the man pages')
            break
        }
        'autoctl;signal' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('validate', 'validate', [CompletionResultType]::ParameterValue, 'Validate `.auto-signal` documents against the schema and the protocol''s rules')
            [CompletionResult]::new('write', 'write', [CompletionResultType]::ParameterValue, 'Write `.auto-signal` into a task module, atomically')
            [CompletionResult]::new('read', 'read', [CompletionResultType]::ParameterValue, 'Print a module''s `.auto-signal` (or one field of it)')
            [CompletionResult]::new('clear', 'clear', [CompletionResultType]::ParameterValue, 'Remove a module''s `.auto-signal` (succeeds when there is none)')
            break
        }
        'autoctl;signal;validate' {
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Routing table for --strict: a built-in name or a JSON file')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json prints one object per document, as JSON Lines)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Also require `next` and `checkpoint` to be what the routing table gives')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;signal;write' {
            [CompletionResult]::new('--step', '--step', [CompletionResultType]::ParameterName, 'The step that just completed')
            [CompletionResult]::new('--result', '--result', [CompletionResultType]::ParameterName, 'The step''s result: one of the whitelist, or (step-N) for any step number N')
            [CompletionResult]::new('--next', '--next', [CompletionResultType]::ParameterName, 'What runs next; computed from the table when omitted')
            [CompletionResult]::new('--checkpoint', '--checkpoint', [CompletionResultType]::ParameterName, 'The checkpoint the next step runs at ("" for none); computed when omitted')
            [CompletionResult]::new('--iteration', '--iteration', [CompletionResultType]::ParameterName, 'The loop''s iteration count (auto mode); omitted in manual runs')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Routing table used to compute next: a built-in name or a JSON file')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Print the document that was written')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;signal;read' {
            [CompletionResult]::new('--field', '--field', [CompletionResultType]::ParameterName, 'Print only this field''s value (step, result, next, checkpoint, iteration, timestamp)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;signal;clear' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;stop' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('write', 'write', [CompletionResultType]::ParameterValue, 'Ask the loop in DIR to stop at its next iteration boundary')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Is a stop requested in DIR? Prints the reason and exits 0 if so, exits 1 if not')
            [CompletionResult]::new('clear', 'clear', [CompletionResultType]::ParameterValue, 'Withdraw a stop request (succeeds when there is none)')
            break
        }
        'autoctl;stop;write' {
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why the loop must stop')
            [CompletionResult]::new('--message', '--message', [CompletionResultType]::ParameterName, 'A human-readable detail, kept in the file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;stop;check' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;stop;clear' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;next' {
            [CompletionResult]::new('--step', '--step', [CompletionResultType]::ParameterName, 'The step that just completed')
            [CompletionResult]::new('--result', '--result', [CompletionResultType]::ParameterName, 'The step''s result')
            [CompletionResult]::new('--checkpoint', '--checkpoint', [CompletionResultType]::ParameterName, 'The checkpoint the step ran at (post-plan, mid-exec, post-exec)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'A task status (draft, planning, review, executing, re-planning, complete, ...)')
            [CompletionResult]::new('--phase', '--phase', [CompletionResultType]::ParameterName, 'The task''s phase, for statuses that branch on it (re-planning: needs-plan, needs-check)')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task module directory')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Routing table: a built-in name or a JSON file')
            [CompletionResult]::new('--command', '--command', [CompletionResultType]::ParameterName, 'Print the command a daemon would type for the next step, from TEMPLATE')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;table' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the built-in routing tables')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a routing table as JSON (a built-in name or a file)')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Prove a table''s properties, printing a counterexample for each that fails')
            break
        }
        'autoctl;table;list' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;table;show' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;table;check' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;schema' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the schemas: name, file, what it describes')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print one schema (draft 2020-12 JSON)')
            break
        }
        'autoctl;schema;list' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;schema;show' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;lock' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('acquire', 'acquire', [CompletionResultType]::ParameterValue, 'Take FILE for OWNER: free, stale, or held by a dead process on this host')
            [CompletionResult]::new('refresh', 'refresh', [CompletionResultType]::ParameterValue, 'Renew OWNER''s heartbeat in FILE')
            [CompletionResult]::new('release', 'release', [CompletionResultType]::ParameterValue, 'Give FILE up; only its owner may')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Who holds FILE, and is it alive?')
            break
        }
        'autoctl;lock;acquire' {
            [CompletionResult]::new('--owner', '--owner', [CompletionResultType]::ParameterName, 'Who takes the lock, e.g. session:<id> or cron:nightly')
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'A lock with no heartbeat for longer than this is stale and may be taken over')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'The process recorded as the holder [default: the process that runs autoctl]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;lock;refresh' {
            [CompletionResult]::new('--owner', '--owner', [CompletionResultType]::ParameterName, 'Who takes the lock, e.g. session:<id> or cron:nightly')
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'A lock with no heartbeat for longer than this is stale and may be taken over')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'The process recorded as the holder [default: the process that runs autoctl]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;lock;release' {
            [CompletionResult]::new('--owner', '--owner', [CompletionResultType]::ParameterName, 'Who takes the lock, e.g. session:<id> or cron:nightly')
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'A lock with no heartbeat for longer than this is stale and may be taken over')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'The process recorded as the holder [default: the process that runs autoctl]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;lock;status' {
            [CompletionResult]::new('--owner', '--owner', [CompletionResultType]::ParameterName, 'Answer yes only when this owner holds the lock')
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'A lock with no heartbeat for longer than this is stale and may be taken over')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;loop' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Activate a loop in the project: write D/.autoctl/loop.json and reset the loop state')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show the loop: bound session, iterations, tokens, lock, quota wait, how it ended')
            [CompletionResult]::new('route', 'route', [CompletionResultType]::ParameterValue, 'Print what `hook stop` would answer now, changing nothing')
            [CompletionResult]::new('teardown', 'teardown', [CompletionResultType]::ParameterValue, 'Remove the loop: its activation file and its lock, whoever holds it')
            break
        }
        'autoctl;loop;init' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]')
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Bind the loop to this session id [default: the first session that stops]')
            [CompletionResult]::new('--max-iterations', '--max-iterations', [CompletionResultType]::ParameterName, 'Turns the session may finish inside the loop')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'Token budget of the session: input, output, cache-write and cache-read tokens from the transcript''s usage fields, counted from the loop''s first turn')
            [CompletionResult]::new('--sentinel', '--sentinel', [CompletionResultType]::ParameterName, 'The completion line the agent writes on its own when the work is done')
            [CompletionResult]::new('--prompt', '--prompt', [CompletionResultType]::ParameterName, 'The prompt fed after every turn')
            [CompletionResult]::new('--prompt-file', '--prompt-file', [CompletionResultType]::ParameterName, 'A file holding the prompt, read again at every turn (edit it to steer the loop)')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'A task module: the prompt is the command the routing table gives for its .auto-signal (else its .index.md status); its .auto-stop or a (stop) route ends the loop')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Routing table for --task: a built-in name or a JSON file')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The prompt for --task; placeholders {next}, {checkpoint}, {task}, {iteration}')
            [CompletionResult]::new('--max-idle', '--max-idle', [CompletionResultType]::ParameterName, 'End the loop after this many consecutive turns without a tool call (0: never)')
            [CompletionResult]::new('--stale', '--stale', [CompletionResultType]::ParameterName, 'The loop lock is stale after this long without a heartbeat')
            [CompletionResult]::new('--transcript-wait', '--transcript-wait', [CompletionResultType]::ParameterName, 'How long `hook stop` waits for a transcript that lags behind the session when the hook input has no last_assistant_message')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json prints the activation file''s settings)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace a loop that is still running for another session')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;loop;status' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;loop;route' {
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
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project [default: $CLAUDE_PROJECT_DIR, else the current directory]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;hook' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('stop', 'stop', [CompletionResultType]::ParameterValue, 'Answer Claude Code''s Stop event: continue the loop with its next prompt, or let the session stop')
            [CompletionResult]::new('stop-failure', 'stop-failure', [CompletionResultType]::ParameterValue, 'Record Claude Code''s StopFailure event (a turn that ended on an API error)')
            break
        }
        'autoctl;hook;stop' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project whose loop answers [default: $CLAUDE_PROJECT_DIR, else the input''s cwd]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;hook;stop-failure' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'The project whose loop answers [default: $CLAUDE_PROJECT_DIR, else the input''s cwd]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;completions' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autoctl;man' {
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write every page (one per subcommand) into DIR instead of printing the top page')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
