
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
            [CompletionResult]::new('lint', 'lint', [CompletionResultType]::ParameterValue, 'Check task modules: front matter, targets, dependencies, transient files')
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
        'autoctl;lint' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--deny', '--deny', [CompletionResultType]::ParameterName, 'Report RULE as an error; `warnings` denies every warning (repeatable)')
            [CompletionResult]::new('--allow', '--allow', [CompletionResultType]::ParameterName, 'Do not report RULE (repeatable)')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Print what RULE checks and how to fix it')
            [CompletionResult]::new('--table', '--table', [CompletionResultType]::ParameterName, 'Routing table whose statuses .index.md may use: a built-in name or a JSON file')
            [CompletionResult]::new('--list-rules', '--list-rules', [CompletionResultType]::ParameterName, 'List the rules: id, default severity, what each finds')
            [CompletionResult]::new('-L', '-L ', [CompletionResultType]::ParameterName, 'Follow symlinks while looking for task roots')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Follow symlinks while looking for task roots')
            [CompletionResult]::new('--no-git', '--no-git', [CompletionResultType]::ParameterName, 'Skip the git checks of transient files')
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
