#!/usr/bin/env bash
# A newcomer's first hour, timed (issue 27): from a fresh clone, with a fresh HOME, as a
# non-root user, the README's two set-up commands — `cargo install --locked --path .`
# (Install) and the stand-in first on PATH (Getting started) — then Getting started without an
# agent, its commands taken from README.md's own console block and run on a terminal
# (script(1)) in one login shell, as a person pastes them. Prints each phase's time, the time
# from `git clone` to the first supervised step (the first `typed:` line `run watch` prints),
# the commands that exited otherwise than the README says, and (unless --no-readme-test) the
# README test's count of console blocks run and failed, run by that user in that clone.
#
# Usage (as root, or as the newcomer):
#   bench/newcomer.sh [--user NAME] [--toolchain DIR] [--no-readme-test] [--keep]
#
#   --user NAME        the newcomer (required when run as root; `runuser` switches to it)
#   --toolchain DIR    a Rust toolchain the newcomer can read (DIR/bin/cargo, say a copy of
#                      ~/.rustup/toolchains/stable-*), put on the PATH as rustup's env file
#                      would; without it the newcomer's login shell must find cargo
#   --no-readme-test   skip the README test (it builds the debug test binary: minutes more)
#   --keep             keep the fresh HOME (printed) instead of removing it
#
# What it is not: the newcomer here has tmux and Rust already; crates come from crates.io into
# the fresh HOME's cargo directory, so the build includes their download. The tmux server
# runs in the fresh HOME (TMUX_TMPDIR), so a server the user already has is never touched.
# The clone is of HEAD (a bundle of this repository): uncommitted changes are not in it.
# Note the load average printed beside the times: the machine may be shared.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

user="" toolchain="" readme_test=1 keep=""
while [ $# -gt 0 ]; do
  case $1 in
    --user) user=$2; shift 2 ;;
    --toolchain) toolchain=$(cd "$2" && pwd); shift 2 ;;
    --no-readme-test) readme_test=""; shift ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "newcomer.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in git script tmux python3; do
  command -v "$tool" >/dev/null || { echo "newcomer.sh: $tool is required" >&2; exit 2; }
done
if [ "$(id -u)" = 0 ]; then
  [ -n "$user" ] || { echo "newcomer.sh: as root, name the newcomer: --user NAME (a non-root user)" >&2; exit 2; }
  [ "$(id -u "$user")" != 0 ] || { echo "newcomer.sh: --user $user is root; the newcomer is not" >&2; exit 2; }
  as_user() { runuser -u "$user" -- "$@"; }
else
  [ -z "$user" ] || [ "$user" = "$(id -un)" ] || { echo "newcomer.sh: only root can run as --user $user" >&2; exit 2; }
  user=$(id -un)
  as_user() { "$@"; }
fi
if [ -n "$toolchain" ] && [ ! -x "$toolchain/bin/cargo" ]; then
  echo "newcomer.sh: --toolchain $toolchain has no bin/cargo" >&2
  exit 2
fi

home=$(mktemp -d /tmp/autoctl-newcomer.XXXXXX)
chmod 755 "$home"
cleanup() {
  TMUX_TMPDIR="$home/tmux" as_user tmux kill-server 2>/dev/null || true
  if [ -n "$keep" ]; then echo "newcomer.sh: kept $home" >&2; else rm -rf "$home"; fi
}
trap cleanup EXIT
git -C "$here" bundle create -q "$home/autoctl.bundle" HEAD 2>/dev/null
# A new account's home: the distribution's skeleton, and what rustup's installer adds.
cp -r /etc/skel/. "$home/" 2>/dev/null || true
mkdir -p "$home/.cargo" "$home/tmux"
chmod 700 "$home/tmux"
{
  echo '#!/bin/sh'
  [ -z "$toolchain" ] || echo "case \":\$PATH:\" in *:$toolchain/bin:*) ;; *) PATH=\"$toolchain/bin:\$PATH\" ;; esac"
  echo 'case ":$PATH:" in *:"$HOME/.cargo/bin":*) ;; *) PATH="$HOME/.cargo/bin:$PATH" ;; esac'
  echo 'export PATH'
} >"$home/.cargo/env"
for rc in .profile .bashrc; do echo '. "$HOME/.cargo/env"' >>"$home/$rc"; done

# The README's Getting started, as the newcomer pastes it: the set-up line of its ```sh block
# and every command of its ```console block, each followed by a marker with its exit status.
python3 - "$here/README.md" "$home/getting-started.sh" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = text.split("\n## Getting started\n", 1)[1].split("\n## ", 1)[0]
setup = re.search(r"```sh\n(.*?)```", section, re.S).group(1).strip()
block = re.search(r"```console\n(.*?)```", section, re.S).group(1)
commands, lines = [], block.split("\n")
i = 0
while i < len(lines):
    if lines[i].startswith("$ "):
        command = lines[i][2:]
        while command.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            command += "\n" + lines[i]
        commands.append(command)
    i += 1
out = ["cd ~/autoctl", setup.split("#")[0].strip(), "echo \"@@ setup $EPOCHREALTIME\""]
for n, command in enumerate(commands):
    first = command.split("\n")[0].replace("'", "'\\''")
    out.append(f"printf '@@ command %s %s\\n' {n} '{first}'")
    out.append(command)
    out.append(f"echo \"@@ exit {n} $? $EPOCHREALTIME\"")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print(f"newcomer.sh: Getting started has {len(commands)} commands", file=sys.stderr)
PY

# The newcomer's session: a login shell, no locale but the system's, no variable of ours.
cat >"$home/newcomer.sh" <<'EOF'
set -u
stamp() { echo "@@ $1 $EPOCHREALTIME"; }
stamp start
cd ~ && git clone -q autoctl.bundle autoctl && stamp cloned || { echo "@@ failed clone"; exit 1; }
command -v cargo >/dev/null || { echo "@@ failed no cargo on the newcomer's PATH"; exit 1; }
cd ~/autoctl && cargo install --locked --path . 2>&1 | grep -E '^ *(Finished|Installed|error)' ; stamp installed
command -v autoctl >/dev/null || { echo "@@ failed autoctl not on PATH after cargo install"; exit 1; }
timeout 600 script -qefc "bash --noprofile --norc $HOME/getting-started.sh" /dev/null 2>&1 |
  while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done
stamp started
if [ -n "${README_TEST:-}" ]; then
  cd ~/autoctl && cargo test --locked --test cli readme::every_readme_transcript_runs_as_shown -- --nocapture 2>&1 |
    grep -aE '^README test:|^test result|README.md:|docs/'
  stamp tested
fi
EOF
chown -R "$user:" "$home" 2>/dev/null || true

echo "newcomer.sh: as $user, HOME=$home; $(uptime | sed 's/.*load/load/')"
log="$home/log"
as_user env -i HOME="$home" USER="$user" LOGNAME="$user" SHELL=/bin/bash TERM="${TERM:-xterm-256color}" \
  PATH=/usr/local/bin:/usr/bin:/bin TMUX_TMPDIR="$home/tmux" README_TEST="$readme_test" \
  bash -l "$home/newcomer.sh" >"$log" 2>&1 || true
echo "newcomer.sh: done; $(uptime | sed 's/.*load/load/')"

python3 - "$log" <<'PY'
import re, sys
marks, exits, commands, first_step, readme, failed = {}, [], {}, None, None, []
for raw in open(sys.argv[1], errors="replace"):
    line = raw.rstrip("\n")
    body = line.split(" ", 1)[1] if re.match(r"^\d+\.\d+ ", line) else line
    t = float(line.split(" ", 1)[0]) if body is not line else None
    m = re.match(r"@@ (start|cloned|installed|setup|started|tested) (\S+)", body)
    if m:
        marks[m.group(1)] = float(m.group(2))
        continue
    m = re.match(r"@@ command (\d+) (.*)", body)
    if m:
        commands[int(m.group(1))] = m.group(2)
        continue
    m = re.match(r"@@ exit (\d+) (\d+) (\S+)", body)
    if m:
        exits.append((int(m.group(1)), int(m.group(2))))
        continue
    if body.startswith("@@ failed"):
        failed.append(body[10:])
    if first_step is None and t is not None and "typed:" in body:
        first_step = t
    if body.startswith("README test:") or body.startswith("test result"):
        readme = (readme + "\n" if readme else "") + body
    if body.startswith("README.md:") or body.startswith("docs/"):
        failed.append(body)
def span(a, b):
    return f"{marks[b] - marks[a]:7.1f} s" if a in marks and b in marks else "      —"
print(f"git clone                      {span('start', 'cloned')}")
print(f"cargo install --locked --path .{span('cloned', 'installed')}")
print(f"Getting started (whole block)  {span('installed', 'started')}")
if first_step is not None and "start" in marks:
    print(f"clone → first supervised step  {first_step - marks['start']:7.1f} s")
else:
    print("clone → first supervised step        — (no `typed:` line: no step was supervised)")
bad = [(n, code) for n, code in exits if code != 0]
print(f"Getting started commands: {len(exits)} run, {len(bad)} exited non-zero"
      + "".join(f"\n  $ {commands.get(n, '?')}  (exit {code})" for n, code in bad))
if "tested" in marks:
    print(f"README test                    {span('started', 'tested')}")
    print(readme or "README test: no report line (did it build?)")
for f in failed:
    print(f"FAILED: {f}")
sys.exit(1 if failed or bad or first_step is None else 0)
PY
