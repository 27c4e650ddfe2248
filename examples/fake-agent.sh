#!/usr/bin/env bash
# A scripted coding agent that follows the ai-cli-task protocol in a terminal, for demos and
# tests of `autoctl run tick`. It behaves like the real thing where a supervisor can see it:
# it writes `.auto-signal` after each step (via `autoctl signal write`), checks `.auto-stop`
# before each iteration, and reads its answers from the terminal like any program.
#
#   fake-agent.sh [OPTIONS] TASK_DIR                  observe mode: loops by itself (seed 000)
#   fake-agent.sh [OPTIONS] --step STEP TASK_DIR      dispatch mode: one step, then exits (seed 001)
#
# Options (iterations count completed steps, starting at 1):
#   --delay SECONDS      time each step "thinks" (default 1; fractions allowed)
#   --ask-at N[,N...]    before finishing step N, ask a harmless yes/no question
#   --asks K             ask K such questions at each of those steps (default 1), the way
#                        an agent in manual permission mode asks before every tool call
#   --danger-at N        before finishing step N, ask to run `rm -rf` (a supervisor must escalate)
#   --quota-at N         before step N, hit a usage limit for --quota-seconds (default 4)
#   --quota-until FILE   instead, the usage limit shows no reset time and lasts until FILE
#                        exists (a test on a fixed clock ends it when it wants)
#   --fixes N            the post-exec check asks for N fixes before it accepts (default 1)
#   --checkpoint C       dispatch mode: the checkpoint the step runs at
#   --log FILE           append what happened (one line per event) to FILE; each signal also
#                        logs `wrote iteration=N at=EPOCH` (when its write began, in seconds
#                        with microseconds) so a supervisor's reaction time can be measured
#
# The agent never deletes anything: answering yes to its rm -rf question only prints what it
# would have done. Waits use bash's builtin `read -t`, so the agent itself stays the pane's
# foreground command (a `sleep` child would look like a different program to a supervisor).
set -uo pipefail

# Show up in tmux as `fake-agent`, not `bash` (tmux names a pane's program after argv[0]).
if [ -z "${FAKE_AGENT_NAMED:-}" ]; then
  FAKE_AGENT_NAMED=1 exec -a fake-agent bash "$0" "$@"
fi

AUTOCTL=${AUTOCTL:-autoctl}
command -v "$AUTOCTL" >/dev/null || { echo "fake-agent: $AUTOCTL not found (set AUTOCTL or PATH)" >&2; exit 2; }
delay=1 ask_at="" asks=1 danger_at="" quota_at="" quota_seconds=4 quota_until="" fixes=1 step="" checkpoint="" log=/dev/null
while [ $# -gt 0 ]; do
  case "$1" in
    --delay) delay=$2; shift 2 ;;
    --ask-at) ask_at=",$2,"; shift 2 ;;
    --asks) asks=$2; shift 2 ;;
    --danger-at) danger_at=$2; shift 2 ;;
    --quota-at) quota_at=$2; shift 2 ;;
    --quota-seconds) quota_seconds=$2; shift 2 ;;
    --quota-until) quota_until=$2; shift 2 ;;
    --fixes) fixes=$2; shift 2 ;;
    --step) step=$2; shift 2 ;;
    --checkpoint) checkpoint=$2; shift 2 ;;
    --checkpoint=*) checkpoint=${1#--checkpoint=}; shift ;;
    --log) log=$2; shift 2 ;;
    -*) echo "fake-agent: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: fake-agent.sh [OPTIONS] [--step STEP] TASK_DIR" >&2; exit 2; }
task=$1
state="$task/.fake-agent"   # what the agent remembers between dispatched steps
mkdir -p "$state"

note() { printf '%s\n' "$*" >>"$log"; }
pause() { read -r -t "$1" _ </dev/zero 2>/dev/null || true; }   # builtin sleep; input untouched

# ask QUESTION: print a [y/N] question and read the answer from the terminal.
ask() {
  local answer
  printf '%s [y/N] ' "$1"
  IFS= read -r answer
  note "answer iteration=$iteration question=$2 answer=${answer:-<empty>}"
  [[ "$answer" == [yY]* ]]
}

# think STEP: pretend to work on a step, with the screen a coding agent shows.
think() {
  printf '● %s%s: working…\n' "$1" "${2:+ ($2)}"
  pause "$delay"
}

# run_step STEP CHECKPOINT: do the work of one step; sets $result.
run_step() {
  local s=$1 c=$2 n=$((iteration + 1))
  if [ "$quota_at" = "$n" ] && [ ! -e "$state/quota-done" ]; then
    : >"$state/quota-done"
    if [ -n "$quota_until" ]; then
      note "quota iteration=$n until=$quota_until"
      echo "Claude AI usage limit reached"
      until [ -e "$quota_until" ]; do pause 0.2; done
    else
      local reset=$(( $(date +%s) + quota_seconds ))
      note "quota iteration=$n reset=$reset"
      echo "Claude AI usage limit reached|$reset"
      while [ "$(date +%s)" -lt "$reset" ]; do pause 0.2; done
    fi
    echo "Usage limit reset; resuming."
  fi
  think "$s" "$c"
  case "$s" in
    plan) result="(generated)" ;;
    exec) result="(done)" ;;
    check)
      if [ "$c" = post-exec ]; then
        local done_fixes
        done_fixes=$(cat "$state/fixes" 2>/dev/null || echo 0)
        if [ "$done_fixes" -lt "$fixes" ]; then
          echo $((done_fixes + 1)) >"$state/fixes"
          result=NEEDS_FIX
        else
          result=ACCEPT
        fi
      elif [ "$c" = mid-exec ]; then
        result=CONTINUE
      else
        result=PASS
      fi ;;
    merge) result=success ;;
    report) result="(done)" ;;
    *) echo "fake-agent: unknown step $s" >&2; exit 2 ;;
  esac
  if [[ "$ask_at" == *",$n,"* ]]; then
    local k
    for ((k = 1; k <= asks; k++)); do
      local which=""
      [ "$asks" -gt 1 ] && which=" ($k of $asks)"
      if ask "Install the missing dev dependency 'left-pad'$which before continuing?" install; then
        echo "Installed left-pad (pretend)."
      else
        echo "Continuing without left-pad."
      fi
    done
  fi
  if [ "$danger_at" = "$n" ]; then
    echo "The build directory looks stale. I want to run: rm -rf ./build ./dist"
    if ask "Run rm -rf ./build ./dist now?" rm-rf; then
      echo "(pretend) removed ./build ./dist — this demo never deletes anything."
    else
      echo "Leaving ./build and ./dist alone."
    fi
  fi
  echo "✓ $s → $result"
}

# The loop's own iteration count: the last signal's, kept across dispatched steps.
iteration=$(cat "$state/iteration" 2>/dev/null || echo 0)
write_signal() {
  local at
  iteration=$((iteration + 1))
  echo "$iteration" >"$state/iteration"
  if [ -n "$step" ]; then
    # Dispatch mode: the previous signal is gone (the supervisor removes it), so route from
    # the checkpoint this step was dispatched at, and write a v1 signal (no iteration: the
    # supervisor counts signals).
    local n c
    IFS=$'\t' read -r n c < <("$AUTOCTL" next --step "$1" --result "$2" --checkpoint "$3")
    at=$EPOCHREALTIME
    "$AUTOCTL" signal write "$task" --step "$1" --result "$2" --next "$n" --checkpoint "${c:-}"
  else
    # Observe mode: next and checkpoint come from the table, at the checkpoint the replaced
    # signal recorded.
    at=$EPOCHREALTIME
    "$AUTOCTL" signal write "$task" --step "$1" --result "$2" --iteration "$iteration"
  fi
  note "wrote iteration=$iteration at=$at"
  note "signal iteration=$iteration step=$1 result=$2 next=$("$AUTOCTL" signal read "$task" --field next)"
}

cleanup() { # seed 000's agent-side cleanup at loop exit
  "$AUTOCTL" signal clear "$task"
  "$AUTOCTL" stop clear "$task"
  rm -rf "$state"
}

if [ -n "$step" ]; then
  note "start mode=dispatch step=$step checkpoint=$checkpoint"
  run_step "$step" "$checkpoint"
  write_signal "$step" "$result" "$checkpoint"
  [ "$("$AUTOCTL" signal read "$task" --field next)" = "(stop)" ] && rm -rf "$state"
  exit 0
fi

note "start mode=observe iteration=$iteration pid=$$"
echo "fake-agent: autonomous loop on $task"
while :; do
  if reason=$("$AUTOCTL" stop check "$task"); then
    echo "Stop requested ($reason); ending the loop."
    note "stopped reason=$reason"
    cleanup
    exit 0
  fi
  IFS=$'\t' read -r next next_checkpoint < <("$AUTOCTL" next --task "$task")
  if [ "$next" = "(stop)" ]; then
    echo "Loop complete; reporting final status."
    pause "$delay"
    note "complete iteration=$iteration"
    cleanup
    exit 0
  fi
  run_step "$next" "${next_checkpoint:-}"
  write_signal "$next" "$result" "${next_checkpoint:-}"
done
