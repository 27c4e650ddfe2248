#!/usr/bin/env bash
# The whole story in about thirty seconds: a scripted agent loops through plan -> check ->
# exec -> check -> merge -> report in a private tmux server while `autoctl run tick` (what
# cron would run every minute) supervises it every second. Watch it answer a harmless
# question, escalate an `rm -rf` to a person (this script plays the person), wait out a usage
# limit with the timeout clock paused, and see the loop finish.
#
#   examples/demo.sh                 # builds autoctl if it is not on PATH (the first build
#                                    # takes about 3 minutes); needs tmux
#   AUTOCTL=/path/to/autoctl examples/demo.sh
#
# Everything lives in a temporary directory ($DEMO in what it prints), with a private tmux
# server whose socket is in it too (TMUX_TMPDIR); all of it is removed on exit, and your own
# tmux sessions and autoctl state are never touched. Every command it runs is printed first
# (`$ …`), so you can run the same yourself. To watch the agent's pane live, run the
# `TMUX_TMPDIR=… tmux attach` line it prints, in another terminal.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
command -v tmux >/dev/null || { echo "demo: tmux is required (apt install tmux / brew install tmux)" >&2; exit 2; }
if [ -z "${AUTOCTL:-}" ]; then
  if command -v autoctl >/dev/null; then
    AUTOCTL=$(command -v autoctl)
  else
    # Say so before the wait, and let cargo show its progress (stderr).
    if [ -x "$here/../target/debug/autoctl" ]; then
      echo "demo: checking that autoctl is built and current (cargo build)…" >&2
    else
      echo "demo: building autoctl (first time only, about 3 minutes)…" >&2
    fi
    (cd "$here/.." && cargo build)
    AUTOCTL="$here/../target/debug/autoctl"
  fi
fi
AUTOCTL=$(cd "$(dirname "$AUTOCTL")" && pwd)/$(basename "$AUTOCTL")

work=$(mktemp -d "${TMPDIR:-/tmp}/autoctl-demo.XXXXXX")
export TMUX_TMPDIR="$work/tmux"          # a private tmux server, its socket inside $work
export AUTOCTL_STATE_DIR="$work/state"   # a private registry
unset TMUX TMUX_PANE AUTOCTL_TMUX_SOCKET # not the tmux server this script may run in
mkdir -p "$TMUX_TMPDIR"
cleanup() {
  tmux kill-server 2>/dev/null || true
  # The agent gets SIGHUP with its server; give it a moment before its files go.
  sleep 0.3
  rm -rf "$work" 2>/dev/null || { sleep 1; rm -rf "$work"; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM
autoctl() { command "$AUTOCTL" "$@"; } # `command`: AUTOCTL=autoctl must not call this function

# Colours only on a terminal that wants them.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  b=$'\e[1m' dim=$'\e[2m' red=$'\e[31m' green=$'\e[32m' yellow=$'\e[33m' blue=$'\e[34m' off=$'\e[0m'
else
  b="" dim="" red="" green="" yellow="" blue="" off=""
fi
started=$SECONDS
say() { printf '%s[%2ds]%s %s\n' "$dim" $((SECONDS - started)) "$off" "$*"; }
# typed WORD: the word as you would type it, quoted only when it has to be.
typed() {
  if [[ $1 =~ ^[A-Za-z0-9_./:=@%+,{}-]+$ ]]; then
    printf '%s' "$1"
  else
    printf "'%s'" "${1//\'/\'\\\'\'}"
  fi
}
# show CMD...: print the command as typed (the demo's directory as $DEMO), then run it.
show() {
  local line="" word
  for word in "$@"; do line+="${line:+ }$(typed "$word")"; done
  line=${line//":$PATH"/:\$PATH}
  line=${line//"$work"/\$DEMO}
  line=${line//"$here"/examples}
  printf '%s$ %s%s\n' "$b" "$line" "$off"
  "$@"
}

# A task module, as ai-cli-task lays it out.
task="$work/TASK/login-rate-limit"
mkdir -p "$task"
cat >"$task/.index.md" <<'INDEX'
---
title: Rate-limit the login endpoint
status: draft
created: 2027-01-15T09:00:00Z
updated: 2027-01-15T09:00:00Z
---
INDEX
cat >"$task/.target.md" <<'TARGET'
# Target
Limit failed logins to five per minute per account and per IP, with a clear error message.
TARGET

echo "${b}autoctl demo${off}: a supervised agent loop in a private tmux server"
echo "${dim}\$DEMO is $work: its files and tmux server go at the end${off}"
echo "${dim}watch the agent live: TMUX_TMPDIR=$TMUX_TMPDIR tmux attach -t agent${off}"
echo

# The agent's terminal: a plain shell in the private tmux server, with autoctl on its PATH.
show tmux new-session -d -s agent -x 120 -y 30 -- \
  env "PATH=$(dirname "$AUTOCTL"):$PATH" 'PS1=$ ' "HOME=$work" bash --norc --noprofile

# Register the loop and launch the (scripted) agent in the pane. Its script: a harmless
# question at step 2, a usage limit at step 3 (resetting 4 s later), an rm -rf at step 4.
# autoctl reads the pane as any program's (fake-agent.sh is not claude, codex or gemini).
agent="$here/fake-agent.sh --delay 1.2 --ask-at 2 --quota-at 3 --quota-seconds 4 --danger-at 4 --log $work/agent.log {task}"
show autoctl run start --session agent --task "$task" --threshold 2 \
  --max-iterations 20 --timeout 10m --launch "$agent"
say "registered the loop; from now on, every second (cron would run it every minute):"
printf '%s$ %s%s\n' "$b" "autoctl run tick --all --heartbeat 1s" "$off"

# Read one field of a compact JSON line (enough for autoctl's own output).
field() { [[ $1 =~ \"$2\":\"(([^\"\\]|\\.)*)\" ]] && printf '%s' "${BASH_REMATCH[1]//\\\"/\"}"; }
last_reason() {
  [[ $1 =~ \"reasons\":\[(.*)\],\"did\" ]] || return 0
  local all=${BASH_REMATCH[1]}
  all=${all##*\",\"}
  all=${all#\"}; all=${all%\"}
  printf '%s' "${all//\\\"/\"}"
}

last_step="" human_done="" quota_seen=""
for _ in $(seq 1 90); do
  event=$(autoctl run tick --all --heartbeat 1s || true)
  [ -n "$event" ] || break
  decision=$(field "$event" decision)
  reason=$(last_reason "$event")
  IFS=$'\t' read -r _ state _ iteration _ step _ < <(autoctl run status --session agent | tail -n 1)
  if [ "$step" != "$last_step" ] && [ "$step" != "-" ]; then
    say "iteration ${b}$iteration${off}  next step: ${b}$step${off}"
    last_step=$step
  fi
  case "$decision" in
    answer)
      say "${green}answered a safe prompt${off}: $reason"
      say "  the agent's screen: ${yellow}$(tmux capture-pane -p -t agent | grep -m1 'left-pad' || true)${off}" ;;
    escalate)
      say "${red}escalated${off}: $reason"
      say "  the agent's screen: ${yellow}$(tmux capture-pane -p -t agent | grep -m1 'rm -rf' || true)${off}"
      if [ -z "$human_done" ]; then
        sleep 1
        say "${blue}human (this demo)${off}: reads it and declines, typing 'n' into the pane:"
        show tmux send-keys -t agent -l n
        show tmux send-keys -t agent Enter
        human_done=1
      fi ;;
    wait)
      if [[ $reason == *quota* || $reason == *"usage limit"* ]] && [ -z "$quota_seen" ]; then
        say "${yellow}usage limit${off}: $reason"
        quota_seen=1
      fi ;;
    finish|stop|exit|lost)
      say "${b}$decision${off}: $reason"
      break ;;
  esac
  # An escalated run needs a person until its screen changes (or `autoctl run ack`).
  [[ $state == running* || $state == needs-person ]] || break
  sleep 1
done

echo
show autoctl run status
echo
echo "${dim}what the agent logged:${off}"
sed 's/^/  /' "$work/agent.log"
if grep -q "answer=y" "$work/agent.log" && grep -q "question=rm-rf answer=n" "$work/agent.log" \
   && grep -q "^quota" "$work/agent.log" && autoctl run status --session agent | grep -q finished; then
  echo
  echo "${green}${b}done${off} in $((SECONDS - started))s: loop finished; one safe answer typed by autoctl, the rm -rf left to a person, the usage limit waited out."
else
  echo "${red}demo: the loop did not tell the whole story (see above)${off}" >&2
  exit 1
fi
