#!/usr/bin/env python3
"""The counts that describe the shape of src/ (issue 26): functions over 80 lines,
functions that return `Result<_, String>`, file-level import circles, and lines of src/.

    .ci/shape.py            the four counts, one per line
    .ci/shape.py --list     the same, with the long functions and the circles named

A file depends on another when its code (not its comments, not its `#[cfg(test)]` modules,
not a `tests.rs`) names an item of it by path: `use crate::a::b`, `crate::a::b::f()`,
`super::x`, `self::y`. A circle is a strongly connected set of files; one whose files all sit
in one module's own file (`a.rs` or `a/mod.rs`) and files of its directory (`a/`) (a parent and its children) is that
module's own business and is counted apart; sibling files that cycle are counted. The parse is a tokenizer, not rustc: good enough
to count, and the `--list` output says what it counted.
"""

import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
LONG = 80


def strip(text):
    """Blank comments, string and char literals (keeping line breaks), so braces and paths
    in them are not counted."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 20]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|\\x..|[^\\'])'", text[i:])
            if m:
                out.append("' '")
                i += len(m.group(0))
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block_end(text, open_at):
    """Index just past the brace that closes the one at `open_at`."""
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def without_tests(code):
    """The code with its `#[cfg(test)]` items blanked (line breaks kept)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub\s+)?mod\s+\w+\s*\{", code)
        if not m:
            return code
        end = block_end(code, m.end() - 1)
        code = code[: m.start()] + "\n" * code.count("\n", m.start(), end) + code[end:]


def modules():
    """Map module path (a tuple of names under crate) -> file, for every file of src/."""
    found = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
            parts = rel[:-3].split(os.sep)
            if parts[-1] == "mod" or rel in ("lib.rs", "main.rs"):
                parts = parts[:-1]
            if rel == "main.rs":
                continue
            found[tuple(parts)] = rel
    return found


def use_paths(tree, prefix=()):
    """Expand a use tree (`a::{b, c::d as e}`) into (path, name bound) pairs."""
    tree = tree.strip()
    if "{" not in tree:
        parts = re.split(r"\s+as\s+", tree)
        segs = [s.strip() for s in parts[0].split("::") if s.strip()]
        path = prefix + tuple(segs)
        if path and path[-1] == "self":
            path = path[:-1]
        name = parts[1].strip() if len(parts) > 1 else (path[-1] if path else "")
        return [(path, name)]
    brace = tree.index("{")
    head = tuple(s.strip() for s in tree[:brace].split("::") if s.strip())
    inner = tree[brace + 1: tree.rindex("}")]
    depth, start, parts = 0, 0, []
    for i, c in enumerate(inner):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    out = []
    for p in parts:
        if p.strip():
            out += use_paths(p, prefix + head)
    return out


def resolve(path, here, mods, aliases):
    """The module (a key of `mods`) a path names or names an item of, and whether the path
    ends at that module; None outside the crate."""
    path = list(path)
    if not path:
        return None
    if path[0] == "crate":
        base, path = [], path[1:]
    elif path[0] in ("super", "self"):
        base = list(here)
        while path and path[0] in ("super", "self"):
            if path[0] == "super":
                base = base[:-1]
            path = path[1:]
    elif path[0] in aliases:
        base, path = list(aliases[path[0]]), path[1:]
    elif tuple(here) + (path[0],) in mods:
        # A child module named without self:: (`tick::X` inside supervise/mod.rs).
        base = list(here)
    else:
        return None
    best = tuple(base) if base else None  # the crate root's items are not a dependency
    exact = True
    for i in range(1, len(path) + 1):
        key = tuple(base + path[:i])
        if key in mods:
            best, exact = key, i == len(path)
        else:
            exact = False
            break
    if best is None or best not in mods:
        return None
    return best, exact


PATH = re.compile(r"(?<![\w:])\w+(?:\s*::\s*\w+)+")


def deps(code, here, mods):
    """The files the code names items of."""
    found, aliases = set(), {}
    uses = list(re.finditer(r"\buse\s+([^;]+);", code))
    for m in uses:
        for path, name in use_paths(m.group(1)):
            hit = resolve(path, here, mods, {})
            if hit and hit[1]:
                aliases[name] = hit[0]  # a module brought into scope: an edge when used
            elif hit:
                found.add(mods[hit[0]])
    rest = code
    for m in reversed(uses):
        rest = rest[: m.start()] + rest[m.end():]
    for m in PATH.finditer(rest):
        hit = resolve(re.sub(r"\s", "", m.group(0)).split("::"), here, mods, aliases)
        if hit:
            found.add(mods[hit[0]])
    return found


def sccs(graph):
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def own_dir(f):
    """The directory of a module file's children: `a/` for `a/mod.rs` and for `a.rs`."""
    return (os.path.dirname(f) if f.endswith("mod.rs") else f[:-3]) + "/"


def circles(graph, files=None):
    """The circles of a graph: (across, own). A circle through a module's `mod.rs` and files
    of its own directory only is that module's own (a parent that dispatches to its children,
    children that use their parent's shared types); what still cycles without the `mod.rs`
    is counted again."""
    files = set(graph) if files is None else files
    sub = {v: {w for w in graph[v] if w in files} for v in files}
    across, own = [], []
    for comp in sccs(sub):
        parents = [f for f in comp if all(g == f or g.startswith(own_dir(f)) for g in comp)]
        if parents:
            own.append(comp)
            a, o = circles(graph, set(comp) - {parents[0]})
            across += a
            own += o
        else:
            across.append(comp)
    return across, own


def long_functions(code, rel):
    out = []
    for m in re.finditer(r"(?m)^[ \t]*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)[^;{]*\{", code):
        end = block_end(code, m.end() - 1)
        lines = code.count("\n", m.start(), end) + 1
        if lines > LONG:
            out.append((lines, f"{rel}:{code.count(chr(10), 0, m.start()) + 1} {m.group(1)}"))
    return out


def error_type(code, at):
    """The error type of the `Result<` whose arguments start at `at`: its last top-level
    argument, brackets balanced (an `->` inside, as in `Box<dyn Fn() -> T>`, is not a
    bracket), or None for a one-argument alias such as anyhow's `Result<T>`."""
    depth, start, args, i = 1, at, [], at
    while i < len(code) and depth:
        if code.startswith("->", i):
            i += 2
            continue
        c = code[i]
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
            if depth == 0:
                args.append(code[start:i])
        elif c == "," and depth == 1:
            args.append(code[start:i])
            start = i + 1
        elif c in ";{":
            return None
        i += 1
    return args[-1].strip() if len(args) > 1 else None


def main():
    listing = "--list" in sys.argv
    mods = modules()
    graph = defaultdict(set)
    long_fns, string_results, total_lines = [], [], 0
    for key, rel in sorted(mods.items(), key=lambda kv: kv[1]):
        text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
        total_lines += text.count("\n")
        if os.path.basename(rel) == "tests.rs":
            graph[rel]
            continue
        code = without_tests(strip(text))
        graph[rel] |= deps(code, list(key), mods) - {rel}
        long_fns += long_functions(code, rel)
        for m in re.finditer(r"->\s*Result<", code):
            if error_type(code, m.end()) == "String":
                string_results.append(f"{rel}:{code.count(chr(10), 0, m.start()) + 1}")
    for v in list(graph):
        graph[v] = {w for w in graph[v] if w in graph}
    across, inside = circles(graph)
    print(f"functions over {LONG} lines: {len(long_fns)}")
    if listing:
        for lines, where in sorted(long_fns, reverse=True):
            print(f"  {lines:4} {where}")
    print(f"functions returning Result<_, String>: {len(string_results)}")
    if listing:
        for where in string_results:
            print(f"  {where}")
    print(f"file-level import circles: {len(across)} (and {len(inside)} inside one module's own files)")
    if listing:
        for c in across:
            print(f"  {len(c)} files: {' '.join(c)}")
            for f in c:
                print(f"    {f} -> {' '.join(sorted(w for w in graph[f] if w in c))}")
        for c in inside:
            print(f"  (own) {' '.join(c)}")
    print(f"lines of src/: {total_lines}")


if __name__ == "__main__":
    main()
