#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Dry runs write nothing to a live filter: `apply --check` (a dry `load
# --replace`), `replay` and `check` leave every map of the filter byte for
# byte as it was (each pinned map dumped with bpftool, and each map its
# outer maps hold, chunks and exact sets, by id), its pins as they were,
# and make no write (update, delete) into a map of the filter (strace).
# A dry run killed at any of its bpf() calls leaves the filter as it was
# too, and `check` clean. Confirming filters (--confirm exact, plain and
# counting), a plain one, and a confirming one whose unused exact-set
# slot holds what a killed replace left (the dry run leaves it there).
source "$(dirname "$0")/../lib/lib.sh"
t_begin dryrun
t_traps

command -v bpftool >/dev/null || t_skip_all "bpftool not installed"
command -v strace >/dev/null || t_skip_all "strace not installed"

python3 - "$T_TMP" <<'PY'
import sys
from pkt import ether, ip4, ipv4_udp, pcap_write
d = sys.argv[1]
flows = [("198.51.100.%d" % (1 + i), 1000 + i, "203.0.113.%d" % (1 + i), 4000 + i) for i in range(40)]
line = lambda f: "udp %s:%d %s:%d\n" % f
open(d + "/a.txt", "w").write("".join(map(line, flows[:20])) + "src 198.51.100.128/25\n")
open(d + "/b.txt", "w").write("".join(map(line, flows[10:30])) + "dst 203.0.113.64/26\n")
pcap_write(d + "/p.pcap", (ether(0x0800) + ipv4_udp(ip4(s), sp, ip4(t), dp, b"ping")
                           for s, sp, t, dp in flows + [("198.51.100.200", 7, "203.0.113.70", 7)]))
PY

# snap NAME: every map of NAME's directory, and every map an outer map
# holds, dumped (entries sorted) and hashed; the pins' names, inodes and
# modes. Any write to the filter changes it.
snap() {
	python3 - "$FLOWBLOOM_ROOT/$1" <<'PY'
import hashlib, json, os, subprocess, sys
root = sys.argv[1]
def bt(*a):
    r = subprocess.run(["bpftool", "-j", "map"] + list(a), capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else None
seen = {}
def walk(label, how, ref):
    info = bt("show", how, ref)
    if info is None:
        print(label, "unreadable"); return
    if info["id"] in seen:
        print(label, "id", info["id"], "again"); return
    seen[info["id"]] = 1
    dump = bt("dump", how, ref)
    if dump is None:
        print(label, info["type"], "id", info["id"], "not dumpable"); return
    ents = sorted(json.dumps(e, sort_keys=True) for e in dump)
    print(label, info["type"], "id", info["id"], len(ents), "entries",
          hashlib.sha256("\n".join(ents).encode()).hexdigest()[:16])
    if info["type"].endswith("of_maps"):
        for e in dump:
            v = e["value"]
            inner = int("".join(x[2:] for x in reversed(v)), 16) if isinstance(v, list) else v
            walk(label + "[" + "".join(x[2:] for x in e["key"]) + "]", "id", str(inner))
for dp, dns, fns in sorted(os.walk(root)):
    dns.sort()
    for fn in sorted(fns):
        p = os.path.join(dp, fn)
        st = os.lstat(p)
        print("pin", os.path.relpath(p, root), st.st_ino, oct(st.st_mode))
        walk(os.path.relpath(p, root), "pinned", p)
PY
}

# live_writes TRACE: the bpf() writes (update, delete, in batches too)
# into a map the traced process opened by pin or by id (a live map: one it
# created itself is its own), one line each.
live_writes() {
	python3 - "$1" <<'PY'
import re, sys
live = set()
writes = ("MAP_UPDATE_ELEM", "MAP_DELETE_ELEM", "MAP_UPDATE_BATCH", "MAP_DELETE_BATCH",
          "MAP_LOOKUP_AND_DELETE", "MAP_FREEZE")
for l in open(sys.argv[1]):
    m = re.search(r"= (-?\d+)", l.rsplit(")", 1)[-1] if ")" in l else "")
    ret = int(m.group(1)) if m else -1
    if re.search(r"\bclose\((\d+)\)", l):
        live.discard(int(re.search(r"close\((\d+)\)", l).group(1)))
    elif "bpf(BPF_OBJ_GET," in l or "bpf(BPF_MAP_GET_FD_BY_ID" in l:
        if ret >= 0:
            live.add(ret)
    elif "bpf(BPF_MAP_CREATE" in l and ret >= 0:
        live.discard(ret)
    elif any("bpf(BPF_" + w in l for w in writes):
        fd = re.search(r"map_fd=(\d+)", l)
        if fd and int(fd.group(1)) in live:
            print(l.strip())
PY
}

# dry LABEL NAME CMD...: CMD changes nothing of filter NAME (dumps, pins,
# no write to its maps), and `check NAME` is as clean as before.
dry() {
	local label=$1 name=$2 before after w
	shift 2
	before=$(snap "$name")
	strace -f -qq -e trace=bpf,close -o "$T_TMP/trace" "$@" >"$T_TMP/out" 2>&1 ||
		fail "$label: exit $?: $(head -3 "$T_TMP/out")"
	after=$(snap "$name")
	if [ "$before" = "$after" ]; then
		pass "$label: every map of $name byte-identical, pins as they were"
	else
		fail "$label: $name changed:"
		diff <(echo "$before") <(echo "$after") | head -20
	fi
	w=$(live_writes "$T_TMP/trace")
	check_eq "$label: no write into a map of $name" "$w" ""
}

# killed LABEL NAME CMD...: CMD killed at each of its bpf() calls in turn
# (strace); after each, every map of NAME as before, check as before.
killed() {
	local label=$1 name=$2 before after n i bad=0 cb ca rc
	shift 2
	before=$(snap "$name")
	cb=$("$FB" check "$name" >/dev/null 2>&1; echo $?)
	strace -f -qq -e trace=bpf -o "$T_TMP/calls" "$@" >/dev/null 2>&1
	n=$(grep -c 'bpf(' "$T_TMP/calls")
	[ "$n" -gt 5 ] || fail "$label: only $n bpf() calls traced"
	for ((i = 1; i <= n; i++)); do
		# (in a subshell: the shell's "Killed" line goes with its stderr)
		rc=$( (strace -f -qq -o "$T_TMP/killed" -e trace=bpf \
			-e inject=bpf:signal=KILL:when=$i "$@" >/dev/null 2>&1; echo $?) 2>/dev/null)
		[ "$rc" = 137 ] || {
			fail "$label: not killed at bpf() call $i of $n"
			bad=1
			break
		}
		after=$(snap "$name")
		ca=$("$FB" check "$name" >/dev/null 2>&1; echo $?)
		if [ "$before" != "$after" ] || [ "$ca" != "$cb" ]; then
			fail "$label: killed at bpf() call $i of $n: $name changed (check exit $cb -> $ca)"
			diff <(echo "$before") <(echo "$after") | head -10
			"$FB" check --repair "$name" >/dev/null 2>&1 # for what follows
			bad=1
			break
		fi
	done
	[ $bad = 1 ] || pass "$label: killed at each of its $n bpf() calls, $name as it was"
}

conf() { # conf NAME LIST [KEY = VALUE]...: an apply file for NAME in $T_TMP
	local name=$1 list=$2
	shift 2
	{
		printf 'capacity = 1000\nfp-rate = 0.01\naction = drop\nload = %s\n' "$list"
		for kv in "$@"; do printf '%s\n' "$kv"; done
	} >"$T_TMP/$name.conf"
}

# --- A confirming filter holding list A; apply --check with list B (apply
# would replace) and with list A (apply would change nothing).
check "create a confirming filter" "$FB" create dx --capacity 1000 --fp-rate 0.01 --confirm exact
check "load list A into it" "$FB" load dx "$T_TMP/a.txt"
conf dx b.txt "confirm = exact"
check_eq "apply --check says it would change" \
	"$("$FB" apply --check "$T_TMP/dx.conf" 2>&1)" \
	"$T_TMP/dx.conf: ok (filter dx exists, apply would change it)"
dry "apply --check, another list (confirm exact)" dx "$FB" apply --check "$T_TMP/dx.conf"
conf dx a.txt "confirm = exact"
dry "apply --check, the same list (confirm exact)" dx "$FB" apply --check "$T_TMP/dx.conf"
dry "replay (confirm exact)" dx "$FB" replay dx "$T_TMP/p.pcap"
dry "check (confirm exact)" dx "$FB" check dx
conf dx b.txt "confirm = exact"
killed "apply --check, another list, killed" dx "$FB" apply --check "$T_TMP/dx.conf"

# --- What a killed replace left in the unused exact-set slot stays there
# (check reports it; check --repair, not a dry run, removes it).
bpftool map create "$FLOWBLOOM_ROOT/left" type hash key 40 value 4 entries 16 name fb_left \
	flags 1 >/dev/null 2>&1 &&
	slot=$(bpftool -j map dump pinned "$FLOWBLOOM_ROOT/dx/exact" | python3 -c '
import json, sys; used = {int(e["key"][0], 16) for e in json.load(sys.stdin)}
print(({0, 1} - used).pop())') &&
	bpftool map update pinned "$FLOWBLOOM_ROOT/dx/exact" key "$slot" 0 0 0 \
		value pinned "$FLOWBLOOM_ROOT/left" &&
	rm -f "$FLOWBLOOM_ROOT/left" || fail "cannot plant a set in the unused slot"
"$FB" check dx >"$T_TMP/chk" 2>&1
check_eq "check reports the set left in the unused slot (exit 1)" \
	"$? $(grep -c 'left exact sets in the unused generation' "$T_TMP/chk")" "1 1"
dry "apply --check with a set left in the unused slot" dx "$FB" apply --check "$T_TMP/dx.conf"
check "check --repair removes it" "$FB" check --repair dx
check "and check is clean" "$FB" check dx

# --- A counting confirming filter.
check "create a counting confirming filter" "$FB" create cx --capacity 1000 --fp-rate 0.01 \
	--counting --confirm exact
check "load list A into it" "$FB" load cx "$T_TMP/a.txt"
conf cx b.txt "confirm = exact" "counting = 4"
dry "apply --check, another list (counting, confirm exact)" cx "$FB" apply --check "$T_TMP/cx.conf"
conf cx a.txt "confirm = exact" "counting = 4"
dry "apply --check, the same list (counting, confirm exact)" cx "$FB" apply --check "$T_TMP/cx.conf"

# A counting filter's write a killed writer left half done (its journal
# names a flow; bytes 8.. of the counters' first block): a writer rolls it
# back when it locks; a dry run leaves it (check reports it, and its
# --repair or the next writer rolls it back).
cnt=$FLOWBLOOM_ROOT/cx/$(cd "$FLOWBLOOM_ROOT/cx" && ls | grep '^counters' | head -1)
flows=$("$FB" -j info cx | python3 -c 'import json, sys; print(json.load(sys.stdin)["flows"])')
bpftool -j map lookup pinned "$cnt" key 0 0 0 0 | python3 -c '
import json, struct, sys
v = bytes(int(x, 16) for x in json.load(sys.stdin)["value"])
v = v[:8] + struct.pack("<IIIIQ", 1, 99, 0, 0, int(sys.argv[1])) + v[32:]
print(" ".join("%02x" % b for b in v))' "$flows" >"$T_TMP/jv" &&
	bpftool map update pinned "$cnt" key 0 0 0 0 value hex $(cat "$T_TMP/jv") ||
	fail "cannot write a half-done journal"
"$FB" check cx >"$T_TMP/chk" 2>&1
check_eq "check reports the half-done write (exit 1)" "$?" 1
dry "apply --check over a half-done write (counting)" cx "$FB" apply --check "$T_TMP/cx.conf"
check "check --repair rolls it back" "$FB" check --repair cx
check "and check is clean" "$FB" check cx

# --- A plain filter.
check "create a plain filter" "$FB" create px --capacity 1000 --fp-rate 0.01
check "load list A into it" "$FB" load px "$T_TMP/a.txt"
conf px b.txt
dry "apply --check, another list (plain)" px "$FB" apply --check "$T_TMP/px.conf"
dry "replay (plain)" px "$FB" replay px "$T_TMP/p.pcap"
killed "apply --check, another list, killed (plain)" px "$FB" apply --check "$T_TMP/px.conf"

t_finish
