#!/usr/bin/env bash
# Live tier for issue 17 (not in CI): the real Claude Code, with `autoctl hook install` done,
# driven by the fake Anthropic server through a 5-turn Stop-hook loop while `autoctl run
# watch` supervises it. Checks: every iteration runs (5 Stops recorded, the loop ends on
# max-iterations), no reasoning_loop (the model's five replies differ; Claude Code prints
# "● Ran 1 stop hook" after each), `autoctl doctor --session live` all OK, and the status
# line's 5-hour reset recorded to the second.
#
#   tests/live/hooks-loop.sh            # uses target/debug/autoctl (cargo build first)
#   AUTOCTL=/path/to/autoctl CLAUDE=/path/to/claude tests/live/hooks-loop.sh
#
# Runs offline in a private network namespace (unshare -n; root, or unprivileged user
# namespaces); a private tmux socket; everything in a scratch dir that is removed at the end
# (KEEP=1 keeps it).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
AUTOCTL=${AUTOCTL:-$here/target/debug/autoctl}
CLAUDE=${CLAUDE:-$(command -v claude || true)}
[ -x "$AUTOCTL" ] || { echo "live: no autoctl at $AUTOCTL (cargo build)" >&2; exit 2; }
[ -n "$CLAUDE" ] || { echo "live: claude is not installed; skipping" >&2; exit 0; }
if [ "${LIVE_NETNS:-}" != 1 ]; then
  if [ "$(id -u)" = 0 ]; then ns=(unshare -n); else ns=(unshare -rn); fi
  exec env LIVE_NETNS=1 "${ns[@]}" "$0" "$@"
fi
ip link set lo up

scratch=$(mktemp -d /tmp/autoctl-live-hooks.XXXXXX)
sock="autoctl-live-hooks-$$"
port=8767
cleanup() {
  local status=$?
  tmux -L "$sock" kill-server 2>/dev/null || true
  [ -n "${watch_pid:-}" ] && { kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null; } || true
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
  sleep 1   # the agent's last hooks (SessionEnd) finish writing
  if [ "${KEEP:-}" = 1 ]; then echo "live: kept $scratch" >&2; else rm -rf "$scratch" || true; fi
  exit "$status"
}
trap cleanup EXIT

home=$scratch/home proj=$scratch/proj state=$scratch/state bin=$scratch/bin
mkdir -p "$home" "$proj/TASK/loop" "$state" "$bin"
ln -s "$AUTOCTL" "$bin/autoctl"
version=$("$CLAUDE" --version | cut -d' ' -f1)
cat > "$home/.claude.json" <<JSON
{"numStartups": 5, "theme": "dark", "hasCompletedOnboarding": true,
 "lastOnboardingVersion": "$version",
 "projects": {"$proj": {"allowedTools": [], "hasCompletedProjectOnboarding": true,
                        "hasTrustDialogAccepted": true}}}
JSON
git init -q "$proj"
echo "rec-loop-sub $proj" > "$scratch/scenario"
python3 "$here/tests/fixtures/panes/capture-tools/record_hooks.py" --serve "$port" \
  "$scratch/scenario" "$scratch/fake-anthropic.log" 2>"$scratch/server.err" &
server_pid=$!

export HOME=$home AUTOCTL_STATE_DIR=$state AUTOCTL_TMUX_SOCKET=$sock PATH="$bin:$PATH"
(cd "$proj" && autoctl hook install >/dev/null)
autoctl loop init --dir "$proj" --prompt "Continue with the next step of the plan." \
  --max-iterations 5 >/dev/null

env_args=()
for kv in "HOME=$home" "PATH=$bin:$(dirname "$CLAUDE"):/usr/local/bin:/usr/bin:/bin" \
  "AUTOCTL_STATE_DIR=$state" "ANTHROPIC_BASE_URL=http://127.0.0.1:$port" \
  "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-fake-live-token-not-real" \
  "CLAUDE_CODE_SUBSCRIPTION_TYPE=max" "DISABLE_AUTOUPDATER=1" "TZ=UTC" "LANG=C.UTF-8"; do
  env_args+=(-e "$kv")
done
tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 -s live -c "$proj" "${env_args[@]}" \
  "$CLAUDE --permission-mode default"
tmux -L "$sock" set-option -t live status off >/dev/null

wait_screen() {  # REGEX SECONDS
  local end=$((SECONDS + $2))
  while [ $SECONDS -lt $end ]; do
    tmux -L "$sock" capture-pane -p -J -t live | grep -Eq "$1" && return 0
    sleep 0.5
  done
  echo "live: timeout waiting for /$1/" >&2
  tmux -L "$sock" capture-pane -p -J -t live >&2
  return 1
}
wait_screen 'for shortcuts|mode on|Opus|Sonnet' 60
# Claude Code draws its screen before its SessionStart hook is recorded (at load 15 the first
# tick came 0.3 s before it and went by the screen: 1 of 12 readings). The loop supervises an
# agent that is already running, whose SessionStart was recorded long before: wait for it.
end=$((SECONDS + 30))
until ls "$state/hooks" 2>/dev/null | grep -qvE '\.status\.(log|json)$' || [ $SECONDS -ge $end ]; do
  sleep 0.2
done

autoctl run start --session live --task "$proj/TASK/loop" --agent claude >/dev/null
autoctl run watch --session live --heartbeat 2s > "$scratch/watch.jsonl" 2>"$scratch/watch.err" &
watch_pid=$!
sleep 1
tmux -L "$sock" send-keys -t live -l "Work through the plan, one step per turn."
sleep 0.3
tmux -L "$sock" send-keys -t live Enter

# The loop ends on its own after 5 turns (max-iterations); give it two minutes.
end=$((SECONDS + 120))
while [ $SECONDS -lt $end ]; do
  if python3 - "$proj" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/.autoctl/loop-state.json"))
sys.exit(0 if s.get("ended") else 1)
PY
  then break; fi
  sleep 1
done
sleep 6   # a few more heartbeats of run watch, and the last status line

fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
# The pane's records: the hooks' (<stem>.json, <stem>.log) and the status line's
# (<stem>.status.json, <stem>.status.log); of a snapshot and its journal, the highest seq wins.
stem=$(cd "$state/hooks" && for f in pane-*; do echo "${f%%.*}"; done | sort -u | head -1)
record=$state/hooks/$stem status=$state/hooks/$stem.status
python3 - "$proj" "$record" "$status" "$scratch/watch.jsonl" > "$scratch/facts" <<'PY'
import json, sys
proj, record, status, watch = sys.argv[1:]
loop = json.load(open(proj + "/.autoctl/loop-state.json"))
def newest(base):
    gens = []
    try:
        gens.append(json.load(open(base + ".json")))
    except FileNotFoundError:
        pass
    try:
        gens += [json.loads(l) for l in open(base + ".log") if l.endswith("\n")]
    except FileNotFoundError:
        pass
    return max(gens, key=lambda r: r.get("seq", 0))
rec = newest(record)
st = newest(status)
lines = [json.loads(l) for l in open(watch) if l.strip()]
print("iteration", loop["iteration"])
print("ended", (loop.get("ended") or {}).get("outcome"))
print("stops", rec["stops"])
print("repeats", rec["repeats"])
print("reasoning_loop", sum(1 for l in lines if "reasoning" in json.dumps(l.get("reasons"))
                             or l.get("run", {}).get("stop_reason") == "reasoning_loop"))
print("hook_sourced", sum(1 for l in lines if (l.get("state") or {}).get("source") == "hook"))
print("ticks", len(lines))
fh = (st.get("rate_limits") or {}).get("five_hour") or {}
print("reset", fh.get("resets_at", ""))
PY
cat "$scratch/facts"
fact() { awk -v k="$1" '$1 == k {print $2}' "$scratch/facts"; }
check "every iteration ran (5 Stops recorded)" '[ "$(fact stops)" = 5 ]'
check "the loop ended on max-iterations" '[ "$(fact ended)" = max-iterations ]'
check "no reasoning_loop" '[ "$(fact reasoning_loop)" = 0 ]'
check "run watch went by the hooks" '[ "$(fact hook_sourced)" -gt 0 ]'
check "status-line reset recorded (epoch seconds)" '[ -n "$(fact reset)" ]'
check "run watch is still supervising" 'kill -0 $watch_pid'
agent=$(autoctl run status --session live --format json | jq -r '"\(.agent_state.state)/\(.agent_state.source)"')
echo "run status agent_state: $agent"
check "run status shows the hooks as the state's source" '[ "${agent#*/}" = hook ]'
# The typed share (issue 28): run status's sources, start-up readings left out as it counts them.
sources=$(autoctl run status --session live --format json | jq -c '.sources')
echo "run status sources: $sources (load average $(cut -d' ' -f1-3 /proc/loadavg))"
check "typed share of the readings >= 95%" \
  "[ \"\$(echo '$sources' | jq '(.typed_percent // 0) >= 95')\" = true ]"
(cd "$proj" && autoctl doctor --session live) > "$scratch/doctor.txt" && doctor=0 || doctor=$?
cat "$scratch/doctor.txt"
check "doctor: all OK" '[ $doctor = 0 ]'
exit $fail
