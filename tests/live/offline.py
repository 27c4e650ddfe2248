"""What every live script does first: read its common flags, run offline, and say which
Claude Code and autoctl it drives.

`arguments(ap, scratch)` adds --claude, --autoctl (default: the debug build) and --scratch to
a parser and parses; `offline(claude)` re-executes the calling script in a private network namespace (`unshare
-n`, or `-rn` when not root; loopback only, so the agent reaches nothing but the fake servers
on 127.0.0.1), brings loopback up, and returns `claude --version`'s answer.
"""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def arguments(ap, scratch):
    ap.add_argument("--claude", default=shutil.which("claude") or "/usr/bin/claude")
    ap.add_argument("--autoctl", default=os.path.join(ROOT, "target", "debug", "autoctl"))
    ap.add_argument("--scratch", default=scratch)
    a = ap.parse_args()
    a.autoctl = os.path.abspath(a.autoctl)
    return a


def offline(claude):
    if os.environ.get("CAPTURE_NETNS") != "1":
        unshare = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]
        os.execvpe(unshare[0], unshare + [sys.executable, *sys.argv],
                   dict(os.environ, CAPTURE_NETNS="1"))
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    version = subprocess.run([claude, "--version"], capture_output=True, text=True,
                             env={"HOME": "/tmp", "PATH": os.environ["PATH"]}).stdout.strip()
    return version
