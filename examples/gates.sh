#!/usr/bin/env bash
# task-ai's gates and wholework's graphs, end to end, with simulated checks and sub-issues:
#
#  1. task-ai: a post-plan gate tuned by a .type-profile.md, a post-exec fix loop that
#     stops at the retry limit or passes, the convergence gate with an exclusion list, and
#     `profile learn` writing the run's metrics back into the profile;
#  2. wholework: routing an XL issue and running its sub-issue graph level by level in
#     batches with one sub-issue failing (its dependents are skipped); a `--batch` list run
#     checkpointed and resumed; a recovery plan that would force push, refused.
#
#   examples/gates.sh            # builds autoctl if it is not on PATH, runs in a temp dir
#   AUTOCTL=/path/to/autoctl examples/gates.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${AUTOCTL:-}" ]; then
  if command -v autoctl >/dev/null; then
    AUTOCTL=$(command -v autoctl)
  else
    # Say so before the wait, and let cargo show its progress (stderr).
    if [ -x "$here/../target/debug/autoctl" ]; then
      echo "gates: checking that autoctl is built and current (cargo build)…" >&2
    else
      echo "gates: building autoctl (first time only, about 3 minutes)…" >&2
    fi
    (cd "$here/.." && cargo build)
    AUTOCTL="$here/../target/debug/autoctl"
  fi
fi
autoctl() { command "$AUTOCTL" "$@"; } # `command`: AUTOCTL=autoctl must not call this function

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "== task-ai: score gates =="
cat > .type-profile.md <<'PROFILE'
# Type profile: bugfix

## Auto Adaptation

- threshold.post-plan: 0.60
- retry_limit.post-exec: 2
PROFILE
autoctl profile show

# The simulated checker: post-exec scores improve with each fix.
post_exec_scores=("0.7 0.6 0.7 0.6 0.7 0.6" "0.8 0.7 0.8 0.7 0.75 0.7" "0.9 0.8 0.8 0.8 0.7 0.8")
verdict=$(autoctl gate --checkpoint post-plan --score 0.62 --profile .type-profile.md) || true
echo "post-plan 0.62 -> $verdict (the profile lowers the bar to 0.60)"
attempt=1
until verdict=$(autoctl gate --checkpoint post-exec --score ${post_exec_scores[$((attempt - 1))]} \
                  --attempt "$attempt" --profile .type-profile.md); do
  echo "post-exec attempt $attempt -> $verdict"
  if [ "$verdict" = BLOCKED ]; then
    autoctl gate --checkpoint post-exec --score ${post_exec_scores[$((attempt - 1))]} \
      --attempt "$attempt" --profile .type-profile.md --format json | jq -r '"notify: " + .notify'
    exit 1
  fi
  attempt=$((attempt + 1))
done
echo "post-exec attempt $attempt -> $verdict"

autoctl converge --previous 0.40 --current 0.55 --history .converge.json
autoctl converge --current 0.50 --history .converge.json --direction "inline the cache" || true
autoctl converge --current 0.96 --history .converge.json
echo "excluded: $(jq -c '[.excluded[].direction]' .converge.json)"

autoctl profile learn --retries post-plan=0 --retries post-exec=$((attempt - 1)) \
  --iterations 9 --compactions 0 --duration execution=14m
echo "learned: $(grep -c '^- observed\.' .type-profile.md) observed lines; threshold line kept: $(grep -c '^- threshold.post-plan: 0.60$' .type-profile.md)"

echo
echo "== wholework: an XL issue =="
autoctl route --size XL
cat > graph.json <<'GRAPH'
{"nodes": [
  {"number": 301, "title": "schema", "blocked_by": []},
  {"number": 302, "title": "api", "blocked_by": [301]},
  {"number": 303, "title": "ui", "blocked_by": [301]},
  {"number": 304, "title": "docs", "blocked_by": [302, 303]},
  {"number": 305, "title": "metrics", "blocked_by": []},
  {"number": 306, "title": "alerts", "blocked_by": [305]}
]}
GRAPH
run_sub_issue() { [ "$1" != 302 ]; }   # the simulated run: #302 fails
failed=()
done_issues=()
depth=$(autoctl graph levels graph.json --format json | jq '.levels | length')
for ((level = 0; level < depth; level++)); do
  # Recompute with the failures so far: their dependents are skipped.
  levels=$(autoctl graph levels graph.json --max-concurrent 2 ${failed[@]/#/--failed=})
  while IFS=$'\t' read -r l batch issues; do
    [ "$l" = "$level" ] || continue
    case $batch in
      failed) continue ;;
      skipped) echo "level $l: skipped $issues (a blocker failed)"; continue ;;
    esac
    echo "level $l batch $batch: $issues"
    for n in $issues; do
      if run_sub_issue "$n"; then done_issues+=("$n"); else failed+=("$n"); fi
    done
  done <<< "$levels"
  # After each level the parent's phase is aggregated from the children's.
  phases=$(for n in 301 302 303 304 305 306; do
    if [[ " ${done_issues[*]} " == *" $n "* ]]; then echo done; else echo ready; fi
  done)
  echo "  parent phase after level $level: $(echo "$phases" | autoctl graph aggregate - || echo unchanged)"
done
echo "done: ${done_issues[*]}; failed: ${failed[*]}"

echo
echo "== wholework: a --batch list run, interrupted and resumed =="
BATCH_ID="$$-$(date +%s)"
autoctl checkpoint write-batch "$BATCH_ID" --remaining "401 402 403"
autoctl checkpoint update-batch "$BATCH_ID" 401 complete
# ... the session dies here; a new one resumes the most recent active batch:
resume_id=$(autoctl checkpoint list-batches | tail -n 1)
echo "resuming $resume_id: $(autoctl checkpoint read-batch "$resume_id")"
for n in $(autoctl checkpoint read-batch "$resume_id"); do
  autoctl checkpoint update-batch "$resume_id" "$n" complete
done
jq -c '{remaining, completed}' ".tmp/auto-batch-state-$resume_id.json"
autoctl checkpoint delete-batch "$resume_id"
echo "active batches left: $(autoctl checkpoint list-batches | wc -l)"

cat > plan.json <<'PLAN'
{"action": "recover", "rationale": "the branch diverged", "steps": ["git fetch origin", "git push --force-with-lease origin worktree-code+issue-302"]}
PLAN
autoctl plan validate plan.json || echo "recovery plan refused: stop and report"
