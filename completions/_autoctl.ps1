
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
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Register, stop, inspect and look up supervised loops (the run registry)')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'List and print the JSON Schemas of the protocol files')
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
        'autoctl;run' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('start', 'start', [CompletionResultType]::ParameterValue, 'Register a loop for a tmux session and a task module')
            [CompletionResult]::new('stop', 'stop', [CompletionResultType]::ParameterValue, 'Stop a loop: write `.auto-stop` and end the run')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show runs: iteration, elapsed time and timeout, current step, state, stalls, recoveries')
            [CompletionResult]::new('lookup', 'lookup', [CompletionResultType]::ParameterValue, 'Print the session whose loop owns a task dir (exit 1 when no loop runs there)')
            break
        }
        'autoctl;run;start' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'The tmux session the agent runs in (the run''s name; any text, never run by a shell)')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task module directory (stored as its canonical path)')
            [CompletionResult]::new('--target', '--target', [CompletionResultType]::ParameterName, 'The tmux pane to watch and type into [default: the session name]')
            [CompletionResult]::new('--mode', '--mode', [CompletionResultType]::ParameterName, 'Who drives the loop')
            [CompletionResult]::new('--max-iterations', '--max-iterations', [CompletionResultType]::ParameterName, 'Stop the loop when its iteration count reaches N')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the loop after this much supervised time (quota waits excluded), e.g. 30m, 1h30m')
            [CompletionResult]::new('--command', '--command', [CompletionResultType]::ParameterName, 'Dispatch mode: the command typed for each step')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Dispatch mode: the routing table that gives the entry step (built-in name or file)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'How panes are read: `claude` acts only on the agent''s own screen; `generic` reads any program''s prompts (same safety policy)')
            [CompletionResult]::new('--threshold', '--threshold', [CompletionResultType]::ParameterName, 'Unchanged captures in a row before a screen is examined as a suspected stall')
            [CompletionResult]::new('--recoveries-per-iteration', '--recoveries-per-iteration', [CompletionResultType]::ParameterName, 'Stall recoveries allowed per iteration before the loop is stopped (stall_limit)')
            [CompletionResult]::new('--recoveries-total', '--recoveries-total', [CompletionResultType]::ParameterName, 'Stall recoveries allowed in total before the loop is stopped (stall_limit)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;stop' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'The run''s session')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The run''s task module directory')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why the loop stops (written to `.auto-stop` and kept in the registry)')
            [CompletionResult]::new('--message', '--message', [CompletionResultType]::ParameterName, 'A human-readable detail, kept in `.auto-stop` and the registry')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;status' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Only this session''s run (exit 1 when there is none)')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'Only the run of this task module directory (exit 1 when there is none)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every run (the default)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autoctl;run;lookup' {
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'The task module directory')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (json: {"session_name","status"})')
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
