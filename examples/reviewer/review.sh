#!/bin/sh
# autoctl's reviewer stage with Claude Code's print mode: the policy file names this script,
#   {"reviewer": "sh /path/to/examples/reviewer/review.sh", "reviewer_timeout_ms": 30000}
# and `hook install` gets `--timeout 40s` on its permission-request hook (the reviewer never
# runs past the hook's own deadline). autoctl hands the call over as JSON on stdin and reads
# {"decision": "allow"|"ask", "reason": "…"} from stdout; anything else, a failure or a
# timeout is no decision (a person is asked).
#
# REVIEW_MODEL picks the model (a small one keeps the cost and the wait down). The reviewer
# runs with no tools: it reads the call, it does nothing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
call=$(cat)
prompt="$(cat "$here/prompt.md")

$call"
exec claude -p --model "${REVIEW_MODEL:-haiku}" --tools "" --output-format text "$prompt"
