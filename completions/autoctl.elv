
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
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand signal 'Validate, write, read and clear `.auto-signal` progress files'
            cand stop 'Request, check and clear a loop stop (`.auto-stop`)'
            cand next 'Print the step a loop runs next'
            cand table 'List, show and check routing tables'
            cand lint 'Check task modules: front matter, targets, dependencies, transient files'
            cand schema 'List and print the JSON Schemas of the protocol files'
            cand completions 'Print a shell completion script'
            cand man 'Print or write the man pages'
        }
        &'autoctl;signal'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand validate 'Validate `.auto-signal` documents against the schema and the protocol''s rules'
            cand write 'Write `.auto-signal` into a task module, atomically'
            cand read 'Print a module''s `.auto-signal` (or one field of it)'
            cand clear 'Remove a module''s `.auto-signal` (succeeds when there is none)'
        }
        &'autoctl;signal;validate'= {
            cand --table 'Routing table for --strict: a built-in name or a JSON file'
            cand --format 'Output format (json prints one object per document, as JSON Lines)'
            cand --strict 'Also require `next` and `checkpoint` to be what the routing table gives'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;signal;write'= {
            cand --step 'The step that just completed'
            cand --result 'The step''s result: one of the whitelist, or (step-N) for any step number N'
            cand --next 'What runs next; computed from the table when omitted'
            cand --checkpoint 'The checkpoint the next step runs at ("" for none); computed when omitted'
            cand --iteration 'The loop''s iteration count (auto mode); omitted in manual runs'
            cand --table 'Routing table used to compute next: a built-in name or a JSON file'
            cand --print 'Print the document that was written'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;signal;read'= {
            cand --field 'Print only this field''s value (step, result, next, checkpoint, iteration, timestamp)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;signal;clear'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;stop'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand write 'Ask the loop in DIR to stop at its next iteration boundary'
            cand check 'Is a stop requested in DIR? Prints the reason and exits 0 if so, exits 1 if not'
            cand clear 'Withdraw a stop request (succeeds when there is none)'
        }
        &'autoctl;stop;write'= {
            cand --reason 'Why the loop must stop'
            cand --message 'A human-readable detail, kept in the file'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;stop;check'= {
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;stop;clear'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;next'= {
            cand --step 'The step that just completed'
            cand --result 'The step''s result'
            cand --checkpoint 'The checkpoint the step ran at (post-plan, mid-exec, post-exec)'
            cand --status 'A task status (draft, planning, review, executing, re-planning, complete, ...)'
            cand --phase 'The task''s phase, for statuses that branch on it (re-planning: needs-plan, needs-check)'
            cand --task 'The task module directory'
            cand --table 'Routing table: a built-in name or a JSON file'
            cand --command 'Print the command a daemon would type for the next step, from TEMPLATE'
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;table'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand list 'List the built-in routing tables'
            cand show 'Print a routing table as JSON (a built-in name or a file)'
            cand check 'Prove a table''s properties, printing a counterexample for each that fails'
        }
        &'autoctl;table;list'= {
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;table;show'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;table;check'= {
            cand --format 'Output format'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;lint'= {
            cand --format 'Output format'
            cand --deny 'Report RULE as an error; `warnings` denies every warning (repeatable)'
            cand --allow 'Do not report RULE (repeatable)'
            cand --explain 'Print what RULE checks and how to fix it'
            cand --table 'Routing table whose statuses .index.md may use: a built-in name or a JSON file'
            cand --list-rules 'List the rules: id, default severity, what each finds'
            cand -L 'Follow symlinks while looking for task roots'
            cand --follow 'Follow symlinks while looking for task roots'
            cand --no-git 'Skip the git checks of transient files'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autoctl;schema'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand list 'List the schemas: name, file, what it describes'
            cand show 'Print one schema (draft 2020-12 JSON)'
        }
        &'autoctl;schema;list'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;schema;show'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;completions'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autoctl;man'= {
            cand --out 'Write every page (one per subcommand) into DIR instead of printing the top page'
            cand -h 'Print help'
            cand --help 'Print help'
        }
    ]
    $completions[$command]
}
