#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom bgp`'s log under a flood a peer makes: a line per refused
# route (past --max-paths, past the filter's capacity, not supported or
# past the limits), per malformed or over-long input line, was about 1 GB
# of log in 40 s from one peer. Each kind is said in full 10 times per 10 s,
# the rest counted in one line per kind and window ("N more routes refused
# past --max-paths in the last 10 s"), the closing line keeping the total:
# - thousands of refusals of each kind through the CLI: a bounded number of
#   stderr lines, the first 10 of each kind in full (line and route named),
#   the summaries' counts adding up to what was refused;
# - a pause longer than the window: its summary said while bgp runs (not
#   only at the end), and the next refusals said in full again;
# - withdrawals of routes never announced say nothing;
# - a few refusals (under 10) are all said in full, no summary.
source "$(dirname "$0")/../lib/lib.sh"
t_begin bgp_log
trap 't_cleanup_filters; rm -rf "$T_TMP"' EXIT

"$FB" create rtbh --capacity 100000 --fp-rate 0.0001 --counting >/dev/null || fail "create rtbh"
"$FB" create small --capacity 50 --fp-rate 0.01 --counting >/dev/null || fail "create small"

# gen KIND N [FIRST]: N ExaBGP JSON lines of KIND on stdout.
gen() {
	python3 - "$@" <<'PYEOF'
import json, sys
kind, n = sys.argv[1], int(sys.argv[2])
first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
def nb():
    return {"address": {"local": "198.51.100.2", "peer": "198.51.100.9"}, "direction": "receive"}
def upd(u):
    return json.dumps({"type": "update", "neighbor": dict(nb(), message={"update": u})})
def host(i):  # a distinct /32 of 2001:db8::/32 per i
    return "2001:db8::%x:%x/128" % (i >> 16, i & 0xffff)
out = []
for i in range(first, first + n):
    if kind == "bh":  # distinct blackholes
        out.append(upd({"attribute": {"community": [[65535, 666]]},
                        "announce": {"ipv6 unicast": {"x": [{"nlri": host(i)}]}}}))
    elif kind == "short":  # shorter than --min-length
        out.append(upd({"attribute": {"community": [[65535, 666]]},
                        "announce": {"ipv6 unicast": {"x": [{"nlri": "2001:db8:%x::/40" % (i & 0xff)}]}}}))
    elif kind == "rate":  # a FlowSpec action other than discard
        c = {"destination-ipv6": ["%s/0" % host(i)]}
        c["string"] = "flow %s" % json.dumps(c)
        out.append(upd({"attribute": {"extended-community": [
                            {"value": 9225060886715039744 + 0x447a0000, "string": "rate-limit:1000"}]},
                        "announce": {"ipv6 flow": {"no-nexthop": [c]}}}))
    elif kind == "twice":  # a name given twice in one object
        out.append('{"type": "update", "type": "update", "neighbor": {}}')
    elif kind == "junk":
        out.append("not json %d" % i)
    elif kind == "gone":  # withdrawals of routes never announced
        out.append(upd({"withdraw": {"ipv6 unicast": [{"nlri": host(i)}]}}))
print("\n".join(out))
PYEOF
}

# said ERRFILE PATTERN: how many routes the lines matching PATTERN name, one
# each, plus the counts of the summaries for SUMMARY (the 2nd argument).
said() { grep -c -- "$2" "$1"; }
summed() { # ERRFILE WHAT: the counts of its summary lines, added
	sed -n "s/^flowbloom: bgp: \([0-9]*\) more $2 in the last [0-9]* s (not said one by one)\$/\1/p" "$1" |
		awk '{ s += $1 } END { print s + 0 }'
}

# --- 1. A flood of each kind in one run: 3000 routes past --max-paths 100,
# 3000 shorter than --min-length, 3000 FlowSpec rate limits, 3000 lines of
# a name given twice, 3000 of no JSON, 3000 withdrawals never announced.
S=$T_TMP/rtbh.bgp
{ gen bh 3100; gen short 3000; gen rate 3000; gen twice 3000; gen junk 3000; gen gone 3000 100000; } >"$T_TMP/in"
start=$(date +%s.%N)
"$FB" bgp rtbh --state "$S" --max-paths 100 <"$T_TMP/in" >/dev/null 2>"$T_TMP/err"
check_eq "a flood of 18,100 lines: bgp runs" "$?" 0
secs=$(python3 -c "import sys, time; print(int(time.time() - float(sys.argv[1])))" "$start")
lines=$(wc -l <"$T_TMP/err")
# 100 rules added, a start and a closing line, 5 kinds of at most 11 lines
# per 10 s each (past --max-paths, the limits, not supported, skipped, and
# the filter's refusals, none here).
max=$((102 + 5 * 11 * (secs / 10 + 1)))
[ "$lines" -le "$max" ] && pass "... $lines lines of log in $secs s (at most $max)" ||
	fail "... $lines lines of log in $secs s, want at most $max: $(sed -n 200,203p "$T_TMP/err")"
check_eq "... the first 10 refusals past --max-paths said in full, line and route named" \
	"$(said "$T_TMP/err" "^flowbloom: bgp: <stdin>:[0-9]*: 2001:db8::[0-9a-f:]*/128 from 198.51.100.9: 1 path more would make 101 held, past --max-paths 100; not applied$")" 10
grep -q "^flowbloom: bgp: <stdin>:101: 2001:db8::0:64/128 from 198.51.100.9: 1 path more would make 101 held" "$T_TMP/err" &&
	pass "... the first one is line 101's" || fail "... first: $(grep -m1 'max-paths 100; not' "$T_TMP/err")"
check_eq "... the others counted: 3000 in all" \
	"$((10 + $(summed "$T_TMP/err" "routes refused past --max-paths")))" 3000
grep -q "100 paths held, 3000 routes refused past --max-paths 100, state in" "$T_TMP/err" &&
	pass "... the closing line's total" || fail "... closing line: $(tail -1 "$T_TMP/err")"
check_eq "... 10 routes shorter than --min-length said in full" \
	"$(said "$T_TMP/err" "from 198.51.100.9: .*shorter than /48.*; not applied$")" 10
check_eq "... the 3000 counted" \
	"$((10 + $(summed "$T_TMP/err" "routes refused by the limits (--min-length, --rtbh, family)")))" 3000
check_eq "... 10 FlowSpec rate limits said in full" \
	"$(said "$T_TMP/err" "action 'rate-limit:1000' is not supported (only discard, traffic-rate 0); not applied$")" 10
check_eq "... the 3000 counted" \
	"$((10 + $(summed "$T_TMP/err" "routes not supported (FlowSpec action or component, family)")))" 3000
check_eq "... the first 10 lines skipped said in full (a name given twice)" \
	"$(said "$T_TMP/err" "^flowbloom: bgp: <stdin>:91[01][0-9]: a name given twice in one JSON object; line skipped$")" 10
check_eq "... the 6000 lines skipped counted" \
	"$((10 + $(summed "$T_TMP/err" "input lines skipped (malformed, or too long)")))" 6000
check_eq "... withdrawals never announced: nothing said" "$(grep -c '2001:db8::1:[0-9a-f]*/128' "$T_TMP/err")" 0
check_eq "... the 100 rules held" "$("$FB" bgp rtbh --state "$S" --flush 2>/dev/null)" \
	"deleted 100 rules of filter 'rtbh' that bgp had added"

# --- 2. Past the filter's capacity (50 flows): 3000 routes, each refused
# by the filter (it was a line each).
S2=$T_TMP/small.bgp
gen bh 3050 >"$T_TMP/in"
"$FB" bgp small --state "$S2" <"$T_TMP/in" >/dev/null 2>"$T_TMP/err"
check_eq "a flood past the filter's capacity: bgp runs" "$?" 0
check_eq "... 10 said in full" \
	"$(said "$T_TMP/err" "^flowbloom: bgp: <stdin>:[0-9]*: '2001:db8::[0-9a-f:]*/128' from 198.51.100.9: 'dst 2001:db8::[0-9a-f:]*' would be flow 51 of filter 'small', past its capacity of 50 flows; not applied$")" 10
check_eq "... the 3000 counted" \
	"$((10 + $(summed "$T_TMP/err" "routes the filter could not take (refused whole)")))" 3000
[ "$(wc -l <"$T_TMP/err")" -le 80 ] && pass "... $(wc -l <"$T_TMP/err") lines of log" ||
	fail "... $(wc -l <"$T_TMP/err") lines of log, want at most 80"
"$FB" bgp small --state "$S2" --flush >/dev/null 2>&1

# --- 3. Lines over 8 MiB: 12 of them, 10 said, 2 counted; the route after
# them applied.
python3 -c '
import sys
for i in range(12):
    sys.stdout.write("x" * (8 << 20) + "xx\n")' >"$T_TMP/in"
gen bh 1 7 >>"$T_TMP/in"
"$FB" bgp rtbh --state "$S" <"$T_TMP/in" >/dev/null 2>"$T_TMP/err"
check_eq "12 lines over 8 MiB: 10 said" "$(said "$T_TMP/err" "line longer than 8388608 bytes; skipped$")" 10
check_eq "... 2 counted" "$(summed "$T_TMP/err" "input lines skipped (malformed, or too long)")" 2
grep -q "^flowbloom: bgp: <stdin>:13: +dst 2001:db8::7$" "$T_TMP/err" && pass "... the line after them applied" ||
	fail "... said: $(tail -3 "$T_TMP/err")"
"$FB" bgp rtbh --state "$S" --flush >/dev/null 2>&1

# --- 4. A window over while bgp waits for input: its count said then, not
# at the end; the refusals after it said in full again. A few refusals are
# all said, no count.
mkfifo "$T_TMP/fifo"
"$FB" bgp rtbh --state "$S" --max-paths 5 <"$T_TMP/fifo" >/dev/null 2>"$T_TMP/err" &
BGP=$!
exec 3>"$T_TMP/fifo"
gen bh 5 >&3
gen bh 40 1000 >&3
for _ in $(seq 1 50); do
	[ "$(said "$T_TMP/err" "past --max-paths 5; not applied")" = 10 ] && break
	sleep 0.1
done
sleep 1
check_eq "a pause: no count said within the window" \
	"$(grep -c "more routes refused" "$T_TMP/err") $(said "$T_TMP/err" "past --max-paths 5; not applied")" "0 10"
for _ in $(seq 1 150); do
	grep -q "more routes refused past --max-paths" "$T_TMP/err" && break
	sleep 0.1
done
grep -q "^flowbloom: bgp: 30 more routes refused past --max-paths in the last 1[0-2] s (not said one by one)$" "$T_TMP/err" &&
	pass "... the window's count said once it is over, bgp still running" ||
	fail "... said: $(tail -2 "$T_TMP/err")"
gen bh 3 2000 >&3
exec 3>&-
wait "$BGP"
check_eq "... the next 3 said in full, no count at the end" \
	"$(said "$T_TMP/err" "past --max-paths 5; not applied") $(grep -c "more routes refused" "$T_TMP/err")" "13 1"
grep -q "5 paths held, 43 routes refused past --max-paths 5, state in" "$T_TMP/err" &&
	pass "... the closing line's total" || fail "... closing line: $(tail -1 "$T_TMP/err")"
"$FB" bgp rtbh --state "$S" --flush >/dev/null 2>&1

"$FB" destroy rtbh >/dev/null
"$FB" destroy small >/dev/null
t_end
