#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The walls between the parts hold: inside user/lib, the include graph
# between folders (a folder is a module; user/lib's own files are one) has
# no loop (no strongly connected component of two folders or more); user/lib
# never includes the CLI (user/cli); include/ never includes user/ or bpf/.
# An include counts where the compiler would find it: beside the including
# file, else through -Iinclude -Iuser/lib -Iuser/cli (the Makefile's order).
# The checker is checked too: on a copy of the tree with a loop, a CLI
# include and a user/ include put in, it must name all three.
source "$(dirname "$0")/../lib/lib.sh"
t_begin layering
TOP=$(cd "$(dirname "$0")/../.." && pwd)

# layering TREE: one line per problem, nothing if the tree is sound; on
# stderr, how many edges it saw.
layering() {
	python3 - "$1" <<'PY'
import os, re, sys
top = sys.argv[1]
lib = os.path.join(top, "user", "lib")
idirs = [os.path.join(top, d) for d in ("include", "user/lib", "user/cli")]
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

def resolve(src, name):
    for d in [os.path.dirname(src)] + idirs:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None

def sources(root):
    for d, _, fs in sorted(os.walk(root)):
        for f in sorted(fs):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)

def includes(f):
    for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
        m = inc.match(line)
        if m:
            dst = resolve(f, m.group(1))
            if dst:
                yield n, m.group(1), os.path.relpath(dst, top)

def module(rel):
    parts = os.path.relpath(os.path.join(top, rel), lib).split(os.sep)
    return parts[0] + "/" if len(parts) > 1 else "user/lib"

problems, edges = [], {}
for f in sources(lib):
    rel = os.path.relpath(f, top)
    for n, name, dst in includes(f):
        if dst.startswith("user/cli/"):
            problems.append("%s:%d: the library includes the CLI (%s)" % (rel, n, dst))
        elif dst.startswith("user/lib/") and module(rel) != module(dst):
            edges.setdefault((module(rel), module(dst)), []).append("%s:%d" % (rel, n))
for f in sources(os.path.join(top, "include")):
    rel = os.path.relpath(f, top)
    for n, name, dst in includes(f):
        if dst.startswith(("user/", "bpf/")):
            problems.append("%s:%d: include/ includes %s" % (rel, n, dst))

# Strongly connected components (Tarjan 1972) of the folder graph.
graph = {}
for a, b in edges:
    graph.setdefault(a, set()).add(b)
    graph.setdefault(b, set())
index, low, stack, on, comps = {}, {}, [], set(), []
def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in sorted(graph[v]):
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
        comps.append(sorted(comp))
for v in sorted(graph):
    if v not in index:
        visit(v)
for comp in comps:
    if len(comp) > 1:
        arrows = ["%s -> %s (%s)" % (a, b, ", ".join(w[:3]))
                  for (a, b), w in sorted(edges.items()) if a in comp and b in comp]
        problems.append("include loop between %s: %s" % (" ".join(comp), "; ".join(arrows)))
print("%d edges between %d folders" % (len(edges), len(graph)), file=sys.stderr)
print("\n".join(problems))
PY
}

out=$(layering "$TOP" 2>"$T_TMP/seen")
check_eq "user/lib: no include loop between folders, no include of user/cli; include/: none of user/ or bpf/" "$out" ""
read -r nedges _ <"$T_TMP/seen"
[ "${nedges:-0}" -ge 8 ] && pass "the check saw the folders' includes ($(cat "$T_TMP/seen"))" ||
	fail "the check saw only: $(cat "$T_TMP/seen")"

# The same check on a copy with three faults put in.
mkdir -p "$T_TMP/tree/user"
cp -r "$TOP/include" "$T_TMP/tree/"
cp -r "$TOP/user/lib" "$TOP/user/cli" "$T_TMP/tree/user/"
echo '#include "rules/rules.h"' >>"$T_TMP/tree/user/lib/store/chunks.c"
echo '#include "output.h"' >>"$T_TMP/tree/user/lib/util.c"
echo '#include "store/store.h"' >>"$T_TMP/tree/include/flowbloom/proto.h"
out=$(layering "$T_TMP/tree" 2>/dev/null)
echo "$out" | grep -q "include loop between .*rules/.*store/" && pass "a loop put in (store -> rules) is found" ||
	fail "a loop put in was not found: $out"
echo "$out" | grep -q "user/lib/util.c:[0-9]*: the library includes the CLI" &&
	pass "an include of the CLI from user/lib is found" || fail "a CLI include was not found: $out"
echo "$out" | grep -q "include/flowbloom/proto.h:[0-9]*: include/ includes user/lib/store/store.h" &&
	pass "an include of user/ from include/ is found" || fail "an include of user/ was not found: $out"

t_end
