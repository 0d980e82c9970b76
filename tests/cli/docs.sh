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

t_end
