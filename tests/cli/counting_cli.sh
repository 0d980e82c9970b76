#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Counting filters through the CLI.
#
# Crash: a counting filter sized for 6M flows holds 10,000 "earlier" flows;
# `add -f` of 5,000,000 more is killed with SIGKILL part-way (between 1M and
# 5M flows in, watched through the flow count). The earlier flows must all
# still match, by `query` and through the real XDP program (`replay` of a
# capture of them); `check` must report the interrupted write, `check
# --repair` must fix it, and a second `check` must find the filter clean.
#
# Bad input for `del`: a syntax error on the first, middle or last line of
# a 20,000-line file, or a valid line naming a flow never added, refuses
# the whole file naming FILE:LINE and leaves the content digest (`info -j`,
# over bits and counters) unchanged; so does an absent flow on the command
# line; `del` and `count` on a plain filter are refused. And deleting what
# was added brings the digest back to that of the empty filter.
#
# Cost: del -f of 2M flows uses at most 1.25 x the memory of add -f of
# them, and about its CPU time; both at most 64 bytes a flow over the
# filter's maps and 16 MiB.
source "$(dirname "$0")/../lib/lib.sh"
t_begin counting_cli
pid=""
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; }
t_traps

now() { date +%s.%N; }
# calc FORMAT EXPR: floating-point arithmetic without bc.
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
# A field of `info -j` (digest, flows, ...).
info_field() { "$FB" -j info "$1" | t_json "d['$2']"; }
# The flow count, cheaply: `list -j` reads the header only, where `info`
# also hashes and scans all the counters (~0.2 s on this filter).
flows_now() { "$FB" -j list 2>/dev/null | grep -o "\"name\":\"$1\"[^}]*\"flows\":[0-9]*" | sed 's/.*"flows"://'; }

# ---------------------------------------------------------------------------
# Crash in the middle of a 5M-flow add

N_EARLY=10000
N_BIG=5000000
EARLY=$T_TMP/earlier.txt
BIG=$T_TMP/big.txt
PCAP=$T_TMP/earlier.pcap

# Earlier flows: UDP 198.51.100.200-204 -> 203.0.113.250:53; the big file
# uses sources 198.51.100.0-83, so the two never share a flow.
python3 - "$EARLY" "$PCAP" "$N_EARLY" <<'PY'
import sys
from pkt import ether, ipv4_udp, pcap_write
path, pcap, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
flows = [((198, 51, 100, 200 + i // 2000), 10000 + i % 2000, (203, 0, 113, 250), 53) for i in range(n)]
with open(path, "w") as f:
    for s, sp, d, dp in flows:
        f.write("udp %d.%d.%d.%d:%d %d.%d.%d.%d:%d\n" % (*s, sp, *d, dp))
pcap_write(pcap, (ether(0x0800) + ipv4_udp(bytes(s), sp, bytes(d), dp, ident=i & 0xffff)
                  for i, (s, sp, d, dp) in enumerate(flows)),
           lambda i: (1700000000 + i // 1000, (i % 1000) * 1000))
PY
t0=$(now)
python3 - "$BIG" "$N_BIG" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
# Line i: udp 198.51.100.(i / 60000):(1 + i % 60000) 203.0.113.(i % 251):(1024 + i % 7919),
# from tables of the strings that repeat.
sp = [":%d " % (1 + p) for p in range(60000)]
dst = ["203.0.113.%d:" % d for d in range(251)]
dp = ["%d\n" % (1024 + p) for p in range(7919)]
with open(path, "w") as f:
    for s in range(0, n, 60000):
        src = "udp 198.51.100.%d" % (s // 60000)
        f.write("".join([src + sp[i - s] + dst[i % 251] + dp[i % 7919] for i in range(s, min(n, s + 60000))]))
PY
echo "crash: generated $N_BIG flows in $(calc %.1f "$(now) - $t0") s"

crashed=0
# fb_counting_add hashes the flow before it opens the journal, so about
# half of all kills land where no flow is half done and `check` is rightly
# clean: then the load is run and killed again, up to 20 times.
ATTEMPTS=20
for attempt in $(seq 1 $ATTEMPTS); do
	"$FB" destroy crash >/dev/null 2>&1
	check "crash: create a counting filter for 6M flows" \
		"$FB" create crash --capacity 6000000 --fp-rate 0.01 --counting || break
	check "crash: add $N_EARLY earlier flows" "$FB" add crash -f "$EARLY" || break
	start=$(now)
	"$FB" add crash -f "$BIG" >"$T_TMP/big.out" 2>&1 &
	pid=$!
	killed_at="" first_rise="" last=$N_EARLY
	while kill -0 "$pid" 2>/dev/null; do
		n=$(flows_now crash)
		n=${n:-$last}
		[ -z "$first_rise" ] && [ "$n" -gt "$N_EARLY" ] && first_rise=$(now) first_n=$n
		if [ "$n" -gt $((N_EARLY + 1000000)) ] && [ "$n" -lt $((N_EARLY + N_BIG)) ]; then
			kill -9 "$pid"
			kill_t=$(now)
			killed_at=$n
			break
		fi
		last=$n
		sleep 0.02
	done
	wait "$pid" 2>/dev/null
	rc=$?
	pid=""
	if [ -z "$killed_at" ]; then
		echo "crash: attempt $attempt: the load finished (exit $rc) before it could be killed"
		continue
	fi
	check_eq "crash: the load died of SIGKILL" "$rc" 137
	after=$(flows_now crash)
	[ -n "$first_rise" ] || first_rise=$start first_n=$N_EARLY
	echo "crash: attempt $attempt: killed $(calc %.3f "$kill_t - $start") s after the start" \
		"(parsing, then adding for $(calc %.3f "$kill_t - $first_rise") s at" \
		"~$(calc %.2f "($after - $first_n) / ($kill_t - $first_rise) / 1e6") M flows/s);" \
		"flows seen at the kill $killed_at, in the header after it $after"

	out=$("$FB" query crash -f "$EARLY" | tail -1)
	check_eq "crash: query: every earlier flow still maybe" "$out" "$N_EARLY of $N_EARLY maybe"
	"$FB" -j replay crash "$PCAP" >"$T_TMP/replay.json" 2>"$T_TMP/replay.err"
	check_eq "crash: replay of the earlier flows exits 0" $? 0
	matched=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["matched"], d["drop"], d["packets"])' "$T_TMP/replay.json" 2>/dev/null)
	check_eq "crash: the program matches (and drops) every earlier flow" "$matched" "$N_EARLY $N_EARLY $N_EARLY"

	"$FB" check crash >"$T_TMP/check1" 2>&1
	rc=$?
	echo "crash: check after the kill (exit $rc):"
	sed 's/^/    /' "$T_TMP/check1"
	if [ "$rc" -eq 0 ] && [ "$attempt" -lt $ATTEMPTS ]; then
		echo "crash: attempt $attempt: the kill left no half-done flow (check clean); again"
		continue
	fi
	crashed=1
	check_eq "crash: check exits non-zero after the kill" "$([ "$rc" -ne 0 ] && echo yes)" yes
	check_eq "crash: check says NOT clean" "$(grep -c 'NOT clean' "$T_TMP/check1")" 1
	check "crash: check --repair exits 0" "$FB" check crash --repair
	sed 's/^/    /' "$T_TMP/out"
	"$FB" check crash >"$T_TMP/check2" 2>&1
	check_eq "crash: check after the repair exits 0" $? 0
	check_eq "crash: and says clean" "$(head -1 "$T_TMP/check2")" "crash: clean"
	[ "$(head -1 "$T_TMP/check2")" == "crash: clean" ] || sed 's/^/    /' "$T_TMP/check2"
	out=$("$FB" query crash -f "$EARLY" | tail -1)
	check_eq "crash: after the repair every earlier flow still maybe" "$out" "$N_EARLY of $N_EARLY maybe"
	break
done
[ "$crashed" -eq 1 ] || fail "crash: could not kill the load part-way in $ATTEMPTS attempts"
"$FB" destroy crash >/dev/null 2>&1
rm -f "$BIG"

# ---------------------------------------------------------------------------
# Bad input for del

digest() { info_field "$1" digest; }

check "create d1 (counting)" "$FB" create d1 --capacity 100000 --fp-rate 0.001 --counting
ALL=$T_TMP/all.txt
python3 - "$ALL" <<'PY'
import sys
lines = ["udp 198.51.100.%d:%d 203.0.113.%d:53" % (i % 250, 1024 + i, i % 200) for i in range(20000)]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
check "d1: add 20000 flows" "$FB" add d1 -f "$ALL"
before=$(digest d1)

for where in first middle last; do
	f=$T_TMP/del-syntax-$where.txt
	python3 - "$ALL" "$f" "$where" <<'PY'
import sys
src, path, where = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(src).read().splitlines()
bad = {"first": 0, "middle": 10000, "last": 19999}[where]
lines[bad] = "udp 198.51.100.1:70000 203.0.113.1:53"
open(path, "w").write("# generated\n" + "\n".join(lines) + "\n")
PY
	line=$(grep -n 70000 "$f" | cut -d: -f1)
	"$FB" del d1 -f "$f" >/dev/null 2>"$T_TMP/err"
	check_eq "del: bad $where line (port 70000): exit 1" $? 1
	check_eq "del: bad $where line: error names $(basename "$f"):$line" "$(grep -c "$f:$line:" "$T_TMP/err")" 1
	check_eq "del: bad $where line: digest unchanged" "$(digest d1)" "$before"

	f=$T_TMP/del-absent-$where.txt
	python3 - "$ALL" "$f" "$where" <<'PY'
import sys
src, path, where = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(src).read().splitlines()
bad = {"first": 0, "middle": 10000, "last": 19999}[where]
lines[bad] = "tcp 198.51.100.251:9 203.0.113.251:9"  # valid, never added
open(path, "w").write("# generated\n" + "\n".join(lines) + "\n")
PY
	line=$(grep -n 'tcp 198.51.100.251:9' "$f" | cut -d: -f1)
	"$FB" del d1 -f "$f" >/dev/null 2>"$T_TMP/err"
	check_eq "del: never-added flow on the $where line: exit 1" $? 1
	check_eq "del: never-added $where line: error names $(basename "$f"):$line" \
		"$(grep -c "$f:$line:.*not in filter" "$T_TMP/err")" 1
	[ "$(grep -c "$f:$line:" "$T_TMP/err")" -eq 1 ] || sed 's/^/    /' "$T_TMP/err"
	check_eq "del: never-added $where line: digest unchanged" "$(digest d1)" "$before"
done
check_fails "del: an absent flow on the command line" "$FB" del d1 tcp 198.51.100.251:9 203.0.113.251:9
check_eq "del: absent flow: digest unchanged" "$(digest d1)" "$before"
check_fails "del: a present flow then the same flow twice more" \
	"$FB" del d1 udp 198.51.100.0:1024 203.0.113.0:53 udp 198.51.100.0:1024 203.0.113.0:53
check_eq "del: over-deleting: digest unchanged" "$(digest d1)" "$before"
check_eq "d1: still 20000 flows" "$(info_field d1 flows)" 20000

check "create p1 (plain)" "$FB" create p1 --capacity 1000 --fp-rate 0.01
check "p1: add a flow" "$FB" add p1 udp 198.51.100.7:53 203.0.113.7:4000
pbefore=$(digest p1)
check_fails "del on a plain filter" "$FB" del p1 udp 198.51.100.7:53 203.0.113.7:4000
check_eq "del on a plain filter: the error says why" "$(grep -c -- '--counting' "$T_TMP/err")" 1
check_eq "del on a plain filter: digest unchanged" "$(digest p1)" "$pbefore"
check_fails "count on a plain filter" "$FB" count p1 udp 198.51.100.7:53 203.0.113.7:4000
check_eq "check on a plain filter: clean, with no counters to check" "$("$FB" check p1 | grep -c -e '^p1: clean$' -e 'plain filter: no counters')" 2

# The way back: add 1000 flows, delete the same file, and the filter is as
# it was created.
check "create d2 (counting)" "$FB" create d2 --capacity 10000 --fp-rate 0.01 --counting
empty=$(digest d2)
head -1000 "$ALL" >"$T_TMP/k.txt"
check "d2: add 1000 flows" "$FB" add d2 -f "$T_TMP/k.txt"
check_eq "d2: the digest changed" "$([ "$(digest d2)" != "$empty" ] && echo yes)" yes
check_eq "d2: count >= 1 for each of them" "$("$FB" count d2 -f "$T_TMP/k.txt" | grep -c '^0 ')" 0
check "d2: del the same 1000" "$FB" del d2 -f "$T_TMP/k.txt"
check_eq "d2: digest back to the empty filter's" "$(digest d2)" "$empty"
check_eq "d2: no flows" "$(info_field d2 flows)" 0
check "d2: check clean" "$FB" check d2
check_eq "d2: check says clean" "$(head -1 "$T_TMP/out")" "d2: clean"
check_eq "d2: count is 0 for all 1000" "$("$FB" count d2 -f "$T_TMP/k.txt" | grep -c '^0 ')" 1000
"$FB" del d2 -f "$T_TMP/k.txt" >/dev/null 2>"$T_TMP/err"
check_eq "d2: deleting them again is refused" $? 1
check_eq "d2: ... naming the first line" "$(grep -c "$T_TMP/k.txt:1:" "$T_TMP/err")" 1
check_eq "d2: digest still the empty filter's" "$(digest d2)" "$empty"

# ---------------------------------------------------------------------------
# del -f costs about what add -f costs. Checking a batch of deletes used a
# hash table of 2nk 12-byte slots (3.5 GiB and 20 s for 10M flows, against
# 0.5 GiB and 3 s to add them); now an array shaped like the counters.
# Memory is compared (max RSS, deterministic), and CPU time loosely.
N_PERF=2000000
PERF=$T_TMP/perf.txt
python3 - "$PERF" "$N_PERF" <<'PY'
import sys
n = int(sys.argv[2])
# Line i: udp 198.51.(i >> 16 & 255).(i >> 8 & 255):(1024 + (i & 1023))
# 203.0.113.(i & 255):(1 + (i >> 10 & 16383)), 1024 lines at a time (i >> 10
# fixed) from a table of what the low 10 bits give.
suf = [":%d 203.0.113.%d:" % (1024 + j, j & 255) for j in range(1024)]
with open(sys.argv[1], "w") as f:
    for b in range(0, n, 1024):
        pre = ["udp 198.51.%d.%d" % (b >> 16 & 255, (b >> 8 | q) & 255) for q in range(4)]
        dp = "%d\n" % (1 + (b >> 10 & 16383))
        f.write("".join([pre[j >> 8] + suf[j] + dp for j in range(min(1024, n - b))]))
PY
check "create d3 sized for $N_PERF flows" "$FB" create d3 --capacity $N_PERF --fp-rate 0.001 --counting
empty=$(digest d3)
/usr/bin/time -f "%U %S %M" -o "$T_TMP/t.add" "$FB" add d3 -f "$PERF" >/dev/null ||
	fail "d3: add -f of $N_PERF flows"
/usr/bin/time -f "%U %S %M" -o "$T_TMP/t.del" "$FB" del d3 -f "$PERF" >/dev/null ||
	fail "d3: del -f of $N_PERF flows"
check_eq "d3: del -f of everything added: back to the empty digest" "$(digest d3)" "$empty"
read -r au as am <"$T_TMP/t.add"
read -r du ds dm <"$T_TMP/t.del"
echo "    add -f $N_PERF: $(calc %.2f "$au + $as") s CPU, $((am / 1024)) MiB;" \
	"del -f: $(calc %.2f "$du + $ds") s CPU, $((dm / 1024)) MiB"
[ "$dm" -le $((am * 5 / 4)) ] && pass "del -f max RSS ($dm KiB) <= 1.25 x add -f's ($am KiB)" ||
	fail "del -f max RSS $dm KiB > 1.25 x add -f's $am KiB"
[ "$(calc %d "($du + $ds) <= 2.5 * ($au + $as) + 0.3")" = 1 ] &&
	pass "del -f CPU time <= 2.5 x add -f's" ||
	fail "del -f CPU $(calc %.2f "$du + $ds") s > 2.5 x add -f's $(calc %.2f "$au + $as") s"
# The batch's own memory over the filter's maps (what its 2M flows touch)
# and the program's: the parsed flows (a 40-byte key and a byte for its
# line) and the sort's records (12 bytes), at most 64 bytes a flow. Sorting
# a copy of every key took 104.
lim=$((($(info_field d3 bytes) + $(info_field d3 counter_bytes) + 64 * N_PERF) / 1024 + 16384))
for v in add:$am del:$dm; do
	[ "${v#*:}" -le "$lim" ] && pass "${v%%:*} -f max RSS (${v#*:} KiB) <= maps + 64 B a flow + 16 MiB ($lim KiB)" ||
		fail "${v%%:*} -f max RSS ${v#*:} KiB > maps + 64 B a flow + 16 MiB ($lim KiB)"
done
rm -f "$PERF"

# del -f takes each rule of a file once: a table of its keys finds the
# copies. Keys are what a list's author writes: 100k consecutive IPv6
# hosts (2001:db8::0:0, ::0:1, ...) fell into a few slots of an unkeyed
# hash (8 s; 200k took 34), against 0.1 s for 100k random ones. Compared
# in the same run, with a margin no machine's noise reaches.
"$PY" -c '
import random, sys
random.seed(7)
with open(sys.argv[1], "w") as a, open(sys.argv[2], "w") as b:
    for i in range(100000):
        a.write("src 2001:db8::%x:%x\n" % (i >> 16, i & 0xffff))
        b.write("src 2001:db8::%x:%x\n" % (random.randrange(65536), random.randrange(65536)))
' "$T_TMP/seq6.txt" "$T_TMP/rnd6.txt"
check "create d4" "$FB" create d4 --capacity 200000 --fp-rate 0.01 --counting
for f in seq6 rnd6; do
	"$FB" add d4 -f "$T_TMP/$f.txt" >/dev/null || fail "d4: add -f $f"
	/usr/bin/time -f "%U %S" -o "$T_TMP/t.$f" timeout 60 "$FB" del d4 -f "$T_TMP/$f.txt" >/dev/null ||
		fail "d4: del -f $f"
done
read -r su ss <"$T_TMP/t.seq6"
read -r ru rs <"$T_TMP/t.rnd6"
[ "$(calc %d "($su + $ss) <= 5 * ($ru + $rs) + 0.5")" = 1 ] &&
	pass "del -f of 100k consecutive IPv6 hosts: CPU $(calc %.2f "$su + $ss") s, as for random ones ($(calc %.2f "$ru + $rs") s)" ||
	fail "del -f of 100k consecutive IPv6 hosts: CPU $(calc %.2f "$su + $ss") s > 5 x random ones' $(calc %.2f "$ru + $rs") s"
check_eq "d4: both lists deleted: empty" "$(info_field d4 flows)" 0

for n in d1 p1 d2 d3 d4; do check "destroy $n" "$FB" destroy "$n"; done
t_end
