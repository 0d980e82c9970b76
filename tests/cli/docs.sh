#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The documentation holds together: every relative link in README.md and
# docs/*.md names a file that exists, and every #anchor a heading of the
# file it points into (GitHub's heading ids); README stays a front door
# (at most 400 lines); no issue numbers reach user-facing text (a reader
# outside this repository never sees the issues).
source "$(dirname "$0")/../lib/lib.sh"
t_begin docs
TOP=$(cd "$(dirname "$0")/../.." && pwd)

# One line per broken link: FILE:LINE: why. Links inside code (fenced
# blocks and `spans`) are text, not links; http(s) and mailto are not ours.
broken=$(python3 - "$TOP" <<'PY'
import os, re, sys, glob
top = sys.argv[1]
files = [os.path.join(top, "README.md")] + sorted(glob.glob(os.path.join(top, "docs", "*.md")))

def slug(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](url) -> text
    text = text.strip().lower()
    return "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")

def scan(path):
    """(links as (line, target)), set of heading ids"""
    links, ids, seen, fence = [], set(), {}, None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        m = re.match(r"^\s*(```|~~~)", line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
            continue
        if fence:
            continue
        h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if h:
            base = slug(h.group(1))
            k = seen.get(base, 0)
            seen[base] = k + 1
            ids.add(base if k == 0 else "%s-%d" % (base, k))
        text = re.sub(r"`[^`]*`", "", line)
        for t in re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text):
            links.append((n, t))
    return links, ids

cache = {}
def info(path):
    if path not in cache:
        cache[path] = scan(path)
    return cache[path]

for f in files:
    rel = os.path.relpath(f, top)
    for n, t in info(f)[0]:
        if re.match(r"^[a-z][a-z0-9+.-]*:", t):  # http:, https:, mailto:
            continue
        target, _, anchor = t.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(f), target)) if target else f
        if not os.path.exists(dest):
            print("%s:%d: link to %s: no such file" % (rel, n, t))
            continue
        if anchor and dest.endswith(".md") and os.path.isfile(dest):
            if anchor.lower() not in info(dest)[1]:
                print("%s:%d: link to %s: no heading '#%s' in %s" % (rel, n, t, anchor, os.path.relpath(dest, top)))
PY
)
check_eq "every relative link and anchor in README.md and docs/*.md resolves" "$broken" ""

# The check must see links at all (a regex that matches nothing passes).
nlinks=$(cat "$TOP/README.md" "$TOP"/docs/*.md | grep -o '](docs/[a-z-]*\.md\|]([a-z-]*\.md' | wc -l)
[ "$nlinks" -ge 10 ] && pass "links were found ($nlinks)" || fail "only $nlinks links found: the check reads nothing"

lines=$(wc -l <"$TOP/README.md")
[ "$lines" -le 400 ] && pass "README.md is at most 400 lines ($lines)" || fail "README.md has $lines lines, more than 400"

hits=$(grep -niE '\bissues? [0-9]+' "$TOP/README.md" "$TOP"/docs/*.md)
check_eq "no issue numbers in README.md and docs/*.md" "$hits" ""

# Repository paths in `code` (user/, bpf/, include/, tests/, dist/,
# docs/) name files or folders that exist; NAME is a placeholder.
missing=$(cd "$TOP" && grep -ohE '`(user|bpf|include|tests|dist|docs)/[A-Za-z0-9_./*+-]+`' README.md docs/*.md |
	tr -d '`' | sort -u | grep -v NAME | while read -r p; do
		compgen -G "$p" >/dev/null || echo "$p"
	done)
check_eq "every repository path README.md and docs/*.md cite exists" "$missing" ""

# Test suites cited by name (`hostile.sh`, `test_ttl`) exist.
missing=$(cd "$TOP" && grep -ohE '`(test_[a-z0-9_]+|[a-z0-9_]+\.sh)`' README.md docs/*.md | tr -d '`' | sort -u |
	while read -r t; do
		case $t in
		test_*) compgen -G "tests/*/$t.c" >/dev/null || echo "$t" ;;
		*) compgen -G "tests/*/$t" >/dev/null || [ -e "$t" ] || echo "$t" ;;
		esac
	done)
check_eq "every test suite README.md and docs/*.md name exists" "$missing" ""

# testing.md's list of suites is the suites tests/run.sh finds.
found=$(cd "$TOP" && { ls tests/unit/test_*.c tests/program/test_*.c | sed 's/.*\/test_//; s/\.c$//'
	ls tests/cli/*.sh tests/e2e/*.sh | sed 's/.*\///; s/\.sh$//'; } | LC_ALL=C sort)
listed=$(sed -n '/^The suites: unit:/,/^$/p' "$TOP/docs/testing.md" | grep -o '`[a-z0-9_]*`' | tr -d '`' | LC_ALL=C sort)
check_eq "testing.md lists every suite, and only suites" "$listed" "$found"

# operations.md's requirements name every package `make deps` installs.
pkgs=$(sed -n '/^DEPS_PKGS :=/,/[^\\]$/p' "$TOP/Makefile" | sed 's/^DEPS_PKGS :=//; s/\\//g')
[ -n "$pkgs" ] || fail "no DEPS_PKGS read from the Makefile"
req=$(sed -n '/^## Requirements/,/^## /p' "$TOP/docs/operations.md" | tr '\n' ' ')
missing=$(for p in $pkgs; do echo "$req" | grep -qE "(^|[ ,(])$p([ ,.)]|$)" || echo "$p"; done)
check_eq "operations.md's requirements name every package of make deps" "$missing" ""

# performance.md's `build/tests/bench/bench WORD`: parts the benchmark
# knows (it lists them when refusing a word, creating nothing).
parts=$("$TOP/build/tests/bench/bench" no-such-part 2>&1 | sed -n 's/^parts: //p')
[ -n "$parts" ] || fail "build/tests/bench/bench did not list its parts"
missing=$(grep -ohE 'build/tests/bench/bench [a-z0-9]+' "$TOP/docs/performance.md" | awk '{print $2}' | sort -u |
	while read -r w; do [ "$w" = quick ] || [[ " $parts " == *" $w "* ]] || echo "$w"; done)
check_eq "every benchmark part performance.md runs directly exists" "$missing" ""

# performance.md, "Where a frame's time goes": the program the CLI and
# `ip link` load has no benchmark cut (FB_BENCH_CUT); the `stages` object
# has them.
cuts=$(for o in flowbloom flowbloom_stages; do
	bpftool btf dump file "$TOP/build/$o.bpf.o" | grep -c cfg_bench_stage
done | tr '\n' ' ')
check_eq "the program has no benchmark cut, the stages object has" "$cuts" "0 2 "

# The FLOW grammar as cli.md and rules.md quote it is `flowbloom help`'s.
grammar=$("$FB" help | sed -n '/^FLOW :=/,/^FIELD :=/p')
for f in cli.md rules.md; do
	quoted=$(sed -n '/^FLOW :=/,/^FIELD :=/p' "$TOP/docs/$f")
	check_eq "docs/$f quotes the FLOW grammar of flowbloom help" "$quoted" "$grammar"
done

# `help intersect` promises what cli.md does: the flows common to the
# sources (an intersection), not every flow of every source (a union).
h=$("$FB" help intersect | tr '\n' ' ')
case $h in
*"every flow all the sources hold is in it"* | *"Every flow all the sources hold is in it"*)
	pass "help intersect: the flows all the sources hold" ;;
*) fail "help intersect does not say it holds the flows all the sources hold: $h" ;;
esac

# The man page's exit statuses are those cli.md lists (0, 1, 2, 3).
st=$("$FB" help --man | sed -n '/^\.SH EXIT STATUS/,/^\.SH /p')
for n in 0 1 2 3; do
	grep -q "Exit status:.*\b$n\b" "$TOP/docs/cli.md" || fail "cli.md does not list exit status $n"
	echo "$st" | grep -qw "$n" || fail "the man page's EXIT STATUS lacks $n"
done
pass "the man page and cli.md list exit statuses 0 to 3"

t_end
