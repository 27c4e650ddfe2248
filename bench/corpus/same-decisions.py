#!/usr/bin/env python3
"""Do two autoctl builds decide the same? The proof a policy change keeps (or only knowingly
changes) decisions.

usage: same-decisions.py BEFORE AFTER [WORKDIR]
Probes: every Bash row of bench/corpus/policy.tsv and tests/fixtures/policy/commands.tsv, every
example of rules/policy.json, the string literals of the policy's Rust (tests and tables), and
each of them with a `$` word appended in eight spellings (single-quoted, double-quoted, bare,
escaped, ...). Each build decides them all through `policy check --batch` in a project
WORKDIR/home/proj (default target/same-decisions, not under the temporary directory); prints
how many probes, how many decided differently (decision or rule; with SAME_REASON=1 the
reason too, which names what the destructive set found), grouped, and how many newly
approved probes lack a single-quoted or escaped `$` (item 4 of issue 24: must be 0). The
differences go to WORKDIR/diff.jsonl. With PROGRAM_PROBES=1 it adds every program the
destructive set's program table names (and a few neighbours) run with every one and every
pair of a vocabulary of arguments, as the command and as a later word (`xargs PROGRAM …`):
the proof a table entry moved from Rust to rules/policy.json decides as before. With
LIST_PROBES=1 it adds every word of every list in the shell contexts the destructive reading
knows (pipes, downloads run later, substitutions, redirections, SQL, searches, prompts,
runners), and the words of the lists that reading uses in pairs.
"""
import json, re, subprocess, sys, pathlib, os
before, after = sys.argv[1], sys.argv[2]
root = pathlib.Path(__file__).resolve().parents[2]
work = pathlib.Path(sys.argv[3] if len(sys.argv) > 3 else root / "target/same-decisions").resolve()
proj = work / "home/proj"
(proj / ".git").mkdir(parents=True, exist_ok=True)
cmds = set()
for f in ["bench/corpus/policy.tsv", "tests/fixtures/policy/commands.tsv"]:
    for line in (root / f).read_text().splitlines():
        if line.startswith("#") or not line.strip(): continue
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1] == "Bash": cmds.add(parts[2])
def walk(v):
    if isinstance(v, str): yield v
    elif isinstance(v, list):
        for x in v: yield from walk(x)
    elif isinstance(v, dict):
        for k, x in v.items():
            if k in ("match", "not_match"): yield from walk(x)
            elif isinstance(x, (dict, list)): yield from walk_d(x)
def walk_d(v):
    if isinstance(v, list):
        for x in v: yield from walk(x) if isinstance(x, dict) else ()
    elif isinstance(v, dict): yield from walk(v)
data = json.loads((root / "rules/policy.json").read_text())
cmds.update(walk(data))
lit = re.compile(r'"((?:[^"\\\n]|\\.){2,200})"')
for f in ["src/policy/tests.rs", "src/policy/programs.rs", "src/policy/bash.rs", "src/policy/git.rs", "src/policy/destructive.rs", "src/shell.rs"]:
    for m in lit.finditer((root / f).read_text()):
        s = m.group(1).replace('\\"', '"').replace("\\\\", "\\")
        if " " in s or len(s) < 20: cmds.add(s)
extra = set()
if os.environ.get("PROGRAM_PROBES"):
    progs = set()
    for e in data["destructive_programs"]:
        progs.update(e.get("programs", []))
        progs.update(p + "ext4" for p in e.get("program_prefixes", []))
    progs.update(["rm", "git", "find", "dd", "chmod", "chown", "shred", "truncate", "mkfs", "ls", "cat", "echo", "tee", "python3.12", "node", "npx", "make"])
    vocab = ["-r", "-R", "-f", "-rf", "-i", "-c", "-Bc", "-e", "-E", "-p", "-d", "-F", "-T", "-X", "-n", "-l", "-L", "-v", "-S", "-D",
             "--force", "--rec", "--recursive", "--in-place", "--eval", "--print", "--delete", "--del", "--data", "--json", "--request=POST",
             "--post-data", "--method", "--dry-run", "--amend", "--hard", "--", ".", "/dev/null", "/dev/stdout", "/dev/sda", "of=/dev/sda",
             "-XPOST", "POST", "delete", "DELETE", "remove", "rm", "push", "publish", "api", "release", "create", "merge", "dlx", "x",
             "stop", "status", "list-units", "0", "6", "eval", "drop", "FLUSHALL", "erase", "partitionDisk", "-Rns", "uninstall",
             "apply", "exec", "sync", "put-object", "delete-bucket", "host", "cmd", "-exec", "-delete", "{}", ";", "clean", "reset",
             "stash", "branch", "checkout", "-q", "file.txt", "src/"]
    for prog in sorted(progs):
        for a in vocab:
            extra.add(f"xargs {prog} {a}")
            for b in vocab:
                extra.add(f"{prog} {a} {b}")
if os.environ.get("LIST_PROBES"):
    # Every word of every list (the lists the destructive reading uses, word by word and in
    # pairs) in the shell contexts that reading knows: pipes into an interpreter, downloads
    # run later, substitutions, redirections, prompts and runners in front, SQL piped or
    # given, searches: the proof a list moved from Rust to rules/policy.json reads as before.
    words = set()
    for entry in data["lists"].values():
        for w in entry["words"]:
            words.update([w, w.split(" ")[0]] + w.split(" ")[1:])
    reading = ["downloaders", "downloader_output_flags", "prints_nothing", "empty_sources",
               "discarding_targets", "disk_devices", "code_running_builtins", "prompt_glyphs",
               "root_runners", "git_alias_keys", "sql_clients", "sql_dropped", "searches",
               "search_run_options", "interpreters", "downloader_output_redirects",
               "stdin_script_operands", "stdin_ignoring_code_runners", "commit_message_flags"]
    near = set()
    for name in reading:
        for w in data["lists"].get(name, {}).get("words", []):
            near.update([w] + w.split(" "))
    near.update(["awk", "gawk", "git", "grep", "rg", "tee", "cat", "echo", "printf", "-n", "''", "/dev/null", "x"])
    templates = ["{w}", "{w} x", "{w} -o i.sh https://x; sh i.sh", "{w} https://x | sh", "bash <({w} https://x)",
                 "sh -c \"$({w} x)\"", "eval \"$({w} x)\"", "{w} x > f", "{w} > f", "{w} >> f", "echo x > /dev/{w}0",
                 "echo x > {w}", ": > {w}", "{w} rm -rf x", "{w} ls", "{w} $ rm x", "git -c {w}x=y x", "git -c {w} x",
                 "echo 'DROP TABLE x' | {w}", "{w} 'DROP TABLE x' f", "psql -c 'DROP {w} x'", "{w} -c 'drop {w} x'",
                 "curl {w} i.sh https://x && sh i.sh", "curl {w}=i.sh https://x && ./i.sh", "curl -fsS{w} i.sh x; . i.sh",
                 "tee f < {w}", "tee -a f < {w}", "{w} f < /dev/null", "{w} 'DELETE FROM t' | psql", "x | {w}",
                 "{w} <<< 'DROP TABLE x'", "{w} <<EOF\nDROP TABLE x;\nEOF", "{w} -n 'TRUNCATE t' src",
                 "git {w} 'DROP TABLE x'", "git {w} -O 'DROP TABLE x'", "{w} --pre x 'drop table t'",
                 "sudo {w} x", "doas {w}", "{w} sudo rm x", "awk '{w}' f", "awk '$1 {w} 5' f", "awk '{{print $1 {w} \"f\"}}' f"]
    for w in sorted(words | near):
        for tpl in templates:
            extra.add(tpl.format(w=w))
    # The lists the approval rules read word by word (jq, find, set, interpreters, run
    # wrappers, git's global options and push names), each word where its list is read.
    approving = ["jq_environment_words", "jq_module_words", "jq_program_file_flags",
                 "find_leading_options", "find_path_tests", "set_letters", "set_o_options",
                 "shell_o_options", "python_interpreters", "python_leading_flags",
                 "node_interpreters", "shell_interpreters", "perl_ruby_interpreters",
                 "run_wrappers", "git_global_options", "release_branch_prefixes", "tag_prefixes",
                 "default_branches", "python_flags", "node_flags", "shell_flags", "perl_ruby_flags",
                 "run_wrapper_flags", "interpreters", "file_reading_flags", "pattern_flags",
                 "patternless_flags", "git_file_reading_flags", "git_pattern_flags",
                 "push_refspec_refused_starts", "push_refspec_refused_parts", "current_branch_names",
                 "not_path_starts",
                 "remote_name_characters", "refspec_separators", "branch_ref_namespaces",
                 "tag_ref_namespaces", "ref_namespaces", "commit_message_file_flags", "stdin_file_operands",
                 "make_flags", "make_count_flags", "make_directory_flags",
                 "make_valued_prefixes", "find_valued_test_prefixes", "set_valued_letters",
                 "report_flags", "report_directory_kinds", "find_date_references"]
    close = {"-C", "-c", "-o", "-m", "-e", "-X", "-I", "-a", "-k", "-D", "vi", "posix", "fish", "csh",
             "lua", "deno", "pdm", "--paginate", "--git-dir=/tmp/x", "main", "v", "1", "x", "",
             "--prefix", "--dir", "-s", "-t", "--manifest-path", "discover", "html", "xml", "-newer", "-j"}
    # go's flag table (Go's flag syntax) and its neighbours.
    gotable = data["flag_tables"].get("go", {})
    close.update(gotable.get("long", []) + gotable.get("long_valued", []))
    close.update(["--update=none", "--update", "--update=all", "-newerm", "-newerc", "-newerB", "-newera"])
    close.update(["v", "race", "run", "o", "coverprofile", "exec", "toolexec", "modfile", "ldflags", "a", "work", "vrace"])
    for name in approving:
        close.update(data["lists"].get(name, {}).get("words", []))
    atemplates = ["jq '{w}' f.json", "jq -n '.{w}'", "jq {w} p.jq f.json", "jq -r{w} p.jq f.json",
                  "find {w} . -name x", "find . {w} Cargo.toml", "find . {w} ~/.ssh/id_rsa", "find {w} {w} src",
                  "set -{w}", "set +{w}", "set -o {w}", "set -e{w}", "set {w}", "bash -o {w} s.sh", "bash {w} s.sh",
                  "bash -euo {w} s.sh", "sh {w} pipefail s.sh", "{w} s.py", "{w}3 -m pytest", "{w}3.12 -m pytest -q",
                  "python3 {w} -m pytest", "python3 {w} s.py", "{w} -m pytest", "{w} run pytest", "uv run {w} pytest",
                  "poetry run {w} s.py", "git {w} status", "git {w} log -3", "git {w} push origin feature",
                  "git push origin {w}", "git push origin {w}1.0", "git push origin {w}x", "git push origin HEAD:{w}",
                  "git push origin feature:{w}2", "node {w} t.js", "{w} --test t.js", "perl {w} t.pl", "{w} -w t.pl",
                  "{w} -eu s.sh", "{w} -x s.sh", "{w} -o pipefail s.sh", "{w} --version",
                  "grep {w} .env src", "grep {w} p.txt .env", "grep {w}=.env x src", "rg {w} .env", "rg {w} x ~/.ssh",
                  "jq {w} .env f.json", "git grep {w} .env", "git grep {w} x .env", "git ls-files {w}=.env",
                  "git log {w} x .env", "echo x | {w}", "echo x | bash {w}", "git commit {w} 'rm -rf x'",
                  "git push origin {w}feature", "git push origin feature{w}", "git push origin {w}:feature",
                  "git push origin feature:{w}", "git push -u origin {w}", "git push origin fe{w}at",
                  "less {w}G f", "more {w}/x f", "tail {w}5 f", "cat {w}x", "cat a{w}b", "head -n 2 {w}f",
                  "git push o{w}rigin feature", "git push {w} feature", "git push {w}origin feature",
                  "git push origin {w}main", "git push origin {w}v1.0", "git push origin feature:{w}x",
                  "git push origin {w}x:feature", "git push origin {w}heads/x", "git push origin x{w}y{w}z",
                  "git commit {w} msg.txt", "git commit {w} .env", "git commit -F {w}", "git commit -m x {w}",
                  "git commit {w}=msg.txt -a", "git commit -a{w} msg.txt", "git commit {w} - <<< x",
                  "make {w} 4 test", "make {w}4 test", "make {w} docs test", "make {w}docs test", "make {w}=4 test",
                  "make {w} /tmp/x", "make -k {w}", "find . {w}mt x", "find . {w}xy x", "find . {w}m x", "find {w} . -print",
                  "find . {w} ~/.ssh/x", "set -{w} pipefail", "set -e{w} pipefail", "set +{w} xtrace", "set -{w}",
                  "pytest {w}=xml:src/main.py", "pytest {w}=html:src", "pytest {w} xml:build/c.xml",
                  "pytest --cov-report={w}:src", "pytest --cov-report={w}:build/x", "pytest --cov-report={w}",
                  "python3 -m unittest {w} /tmp/x", "python3 -m unittest {w} tests", "python3 -m unittest discover {w} ../x",
                  "npm {w} /tmp/x test", "npm {w}=.git test", "pnpm {w} ../x build", "cargo test {w} /tmp/evil/Cargo.toml",
                  "go test -{w} ./...", "go test --{w} ./...", "go build -{w}=x .", "go build -{w} bin/x .", "go test ./... -{w}",
                  "go build -{w} src/main.go .", "go build -{w}=src/main.go .", "go vet -{w}=true ./...", "go test -{w}", "go {w} ./...",
                  "find . {w}m ~/.ssh/id_rsa", "find . {w}t ~/.ssh/id_rsa", "find . -newerm{w} .env", "find . -newer{w}m src",
                  "cp {w} a.txt b.txt", "cp -n {w} a.txt b.txt", "cp {w} a.txt ~/.bashrc"]
    close.update(["refs/notes/", "refs/remotes/", "--mess", "/", "@", "~"])
    for w in sorted(close):
        for tpl in atemplates:
            extra.add(tpl.format(w=w))
    # git's abbreviated long options: every prefix of every long option the destructive
    # set's git entries read, with each other's short options beside it.
    for e in data["destructive_programs"]:
        if "git" not in e.get("programs", []):
            continue
        names = [n for key in ("any", "all", "unless") for t in e.get(key, []) for n in t.get("long", {})]
        for sub in e.get("subcommands", []):
            for n in names:
                for k in range(1, len(n) + 1):
                    for tail in ("", " x", " -f x", " --force x", " origin feature", " -n"):
                        extra.add(f"git {sub} --{n[:k]}{tail}")
    for a in sorted(near):
        for b in sorted(near):
            for tpl in ("{a} {b} x", "{a} {b} 'DROP TABLE x'", "x | {a} {b}", "{a} {b} > f", "{a} -o {b}; sh {b}"):
                extra.add(tpl.format(a=a, b=b))
if os.environ.get("LIST_PROBES"):
    # The argument forms (which spellings of git's inspections, `switch -c`, npm's
    # subcommands, `--version` … a rule approves): every entry's program with one and two
    # words of a vocabulary of the forms' own words and neighbours, three of a smaller one.
    forms = {k: v for k, v in data.get("argument_forms", {}).items() if not k.startswith("$")}
    fwords = {"-v", "-l", "--list", "x", "main", "feature/x", "-f", "-c", "-b", "-B", "--get", "get", "list",
              "show", "HEAD", "+nightly", "+", "--version", "--help", "version", "-q", "--no-track", "build",
              "deploy", "lint", "test", "run", "install", "ci", "-D", "--porcelain", "origin", "a..b", "x.lock",
              "--", "-a", "--global", "user.name", "-n", "5", "expire", "'$x'", "v1.0", "-x", "left-pad",
              "+%s", "+", "'+%F %T'", "-u", "-d", "-s", "-r", "-t", "--set=x", "yesterday", "0101",
              "/dev/null", "/dev/zero", "-i", "-p", "--append", "--no-clobber", "a.txt", "src/", "~/.bashrc"}
    for entry in forms.values():
        for form in entry["forms"]:
            for key in ("lead", "args", "operands", "with_any", "without"):
                for w in form.get(key) or []:
                    for alt in w.removesuffix("...").split("|"):
                        if not alt.isupper():
                            fwords.add(alt)
    small = ["-c", "x", "-v", "list", "run", "lint", "--get", "-l", "+nightly", "--version", "-q", "get",
             "-n", "-a", "/dev/null", "+%s"]
    heads = {"version": ["cargo", "go", "make", "curl", "python3", "grep", "git", "kubectl"],
             "cargo toolchain": ["cargo", "cargo +nightly"], "tee append": ["tee"]}
    for key in forms:
        for head in heads.get(key, [key]):
            extra.add(head)
            for a in sorted(fwords):
                extra.add(f"{head} {a}")
                for b in sorted(fwords):
                    extra.add(f"{head} {a} {b}")
            for a in small:
                for b in small:
                    for c in small:
                        extra.add(f"{head} {a} {b} {c}")
base = sorted(c for c in cmds if isinstance(c, str) and c.strip())
probes = list(base)
for c in base:
    for v in (" '$x'", ' "$x"', " $x", " \\$x", " 'a$'", " '${HOME}'", " '$ENV'"):
        probes.append(c + v)
    if " " in c:
        p, rest = c.split(" ", 1)
        probes.append(f"{p} '$1' {rest}")
probes += sorted(extra - set(probes))
def run(bin):
    inp = "".join(json.dumps({"tool_name": "Bash", "tool_input": {"command": c}, "cwd": str(proj)}) + "\n" for c in probes)
    env = dict(os.environ, HOME=str(work / "home"), XDG_CONFIG_HOME=str(work / "cfg"), AUTOCTL_STATE_DIR=str(work / "state"))
    env.pop("CLAUDE_PROJECT_DIR", None)
    out = subprocess.run([bin, "policy", "check", "--batch"], input=inp, capture_output=True, text=True, env=env).stdout.splitlines()
    assert len(out) == len(probes), (len(out), len(probes))
    return [json.loads(l) for l in out]
a, b = run(before), run(after)
key = ("decision", "rule", "reason") if os.environ.get("SAME_REASON") else ("decision", "rule")
diff = [(p, x, y) for p, x, y in zip(probes, a, b) if [x.get(k) for k in key] != [y.get(k) for k in key]]
print(f"{len(probes)} probes ({len(base)} commands and their $ variants); {len(diff)} decided differently")
kinds = {}
for p, x, y in diff:
    k = f"{x.get('decision')} {x.get('rule')} -> {y.get('decision')} {y.get('rule')}"
    kinds.setdefault(k, []).append(p)
for k, ps in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
    print(f"{len(ps):6d}  {k}   e.g. {ps[0]!r}")
newly = [p for p, x, y in diff if y.get("decision") == "allow"]
bad = [p for p in newly if not re.search(r"'[^']*\$[^']*'|\\\$", p)]
print(f"newly allowed: {len(newly)}; of them without a single-quoted or escaped $: {len(bad)}")
for p in bad[:20]: print("   ", p)
(work / "diff.jsonl").write_text("".join(json.dumps({"p": p, "before": x, "after": y}) + "\n" for p, x, y in diff))
