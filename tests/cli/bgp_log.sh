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
# The windows are per peer: a second peer's first refusals are said in full
# in the middle of another's flood. The filter's changes (+RULE, -RULE), a
# line each, are limited too, per peer, 100 in full per 10 s: a peer
# flapping fresh routes as fast as it can wrote 2.2 MB of log a second
# (43,000 lines, past journald's 10,000 lines a unit per 30 s):
# - a flapping peer: a bounded number of lines, each window's summary
#   counting the rules added and deleted past its 100 ("N more changes to
#   the filter from PEER ...: A rules added, D deleted; the first ..., the
#   last ..."), the lines and the counts adding up to the run's total;
# - a quiet peer's changes in the middle of it: every one said in full;
# - a window over while bgp waits: its summary said then, bgp running.
source "$(dirname "$0")/../lib/lib.sh"
t_begin bgp_log
trap 't_cleanup_filters; rm -rf "$T_TMP"' EXIT

"$FB" create rtbh --capacity 100000 --fp-rate 0.0001 --counting >/dev/null || fail "create rtbh"
"$FB" create small --capacity 50 --fp-rate 0.01 --counting >/dev/null || fail "create small"

# gen KIND N [FIRST]: N ExaBGP JSON lines of KIND on stdout.
gen() {
	python3 - "$@" <<'PYEOF'
import json, os, sys
kind, n = sys.argv[1], int(sys.argv[2])
first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
peer = os.environ.get("PEER", "198.51.100.9")
def nb():
    return {"address": {"local": "198.51.100.2", "peer": peer}, "direction": "receive"}
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
    elif kind == "flap":  # a fresh blackhole a line, the line before's withdrawn
        u = {"attribute": {"community": [[65535, 666]]},
             "announce": {"ipv6 unicast": {"x": [{"nlri": host(i)}]}}}
        if i > first:
            u["withdraw"] = {"ipv6 unicast": [{"nlri": host(i - 1)}]}
        out.append(upd(u))
    elif kind == "many":  # n fresh blackholes in one line
        out.append(upd({"attribute": {"community": [[65535, 666]]},
                        "announce": {"ipv6 unicast": {"x": [{"nlri": host(j)} for j in range(first, first + n)]}}}))
        break
print("\n".join(out))
PYEOF
}

# said ERRFILE PATTERN: how many routes the lines matching PATTERN name, one
# each, plus the counts of the summaries for SUMMARY (the 2nd argument).
said() { grep -c -- "$2" "$1"; }
summed() { # ERRFILE WHAT [PEER]: the counts of its summary lines (PEER's; "": no peer's), added
	local what=$2
	[ -n "${3-198.51.100.9}" ] && what="${2%% *} from ${3-198.51.100.9} ${2#* }"
	sed -n "s/^flowbloom: bgp: \([0-9]*\) more $what in the last [0-9]* s (not said one by one)\$/\1/p" "$1" |
		awk '{ s += $1 } END { print s + 0 }'
}
# changed ERRFILE PEER: the rules added and deleted that PEER's summaries
# count ("A D").
changed() {
	sed -n "s/^flowbloom: bgp: [0-9]* more changes\? to the filter from $2 in the last [0-9]* s (not said one by one): \([0-9]*\) rules\? added, \([0-9]*\) deleted; the first .*, the last .*\$/\1 \2/p" "$1" |
		awk '{ a += $1; d += $2 } END { print a + 0, d + 0 }'
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
	"$((10 + $(summed "$T_TMP/err" "input lines skipped (malformed, or too long)" "")))" 6000
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
check_eq "... 2 counted" "$(summed "$T_TMP/err" "input lines skipped (malformed, or too long)" "")" 2
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
	"$(grep -c "more routes from 198.51.100.9 refused" "$T_TMP/err") $(said "$T_TMP/err" "past --max-paths 5; not applied")" "0 10"
for _ in $(seq 1 150); do
	grep -q "more routes from 198.51.100.9 refused past --max-paths" "$T_TMP/err" && break
	sleep 0.1
done
grep -q "^flowbloom: bgp: 30 more routes from 198.51.100.9 refused past --max-paths in the last 1[0-2] s (not said one by one)$" "$T_TMP/err" &&
	pass "... the window's count said once it is over, bgp still running" ||
	fail "... said: $(tail -2 "$T_TMP/err")"
gen bh 3 2000 >&3
exec 3>&-
wait "$BGP"
check_eq "... the next 3 said in full, no count at the end" \
	"$(said "$T_TMP/err" "past --max-paths 5; not applied") $(grep -c "more routes from 198.51.100.9 refused" "$T_TMP/err")" "13 1"
grep -q "5 paths held, 43 routes refused past --max-paths 5, state in" "$T_TMP/err" &&
	pass "... the closing line's total" || fail "... closing line: $(tail -1 "$T_TMP/err")"
"$FB" bgp rtbh --state "$S" --flush >/dev/null 2>&1

# --- 5. Two peers in one stream. 198.51.100.9 sends 50 routes shorter
# than --min-length and flaps 3100 fresh routes (a line adds one and
# deletes the line before's); 203.0.113.5, in the middle of it, announces
# one route too short and 3 blackholes, and withdraws 2 of them.
S5=$T_TMP/peers.bgp
{
	gen short 50
	gen flap 1500 300000
	PEER=203.0.113.5 gen short 1
	PEER=203.0.113.5 gen bh 3 200000
	gen flap 1500 301500
	PEER=203.0.113.5 gen gone 2 200000
	gen flap 100 303000
} >"$T_TMP/in"
start=$(date +%s.%N)
"$FB" bgp rtbh --state "$S5" <"$T_TMP/in" >/dev/null 2>"$T_TMP/err"
check_eq "two peers, one flapping 3100 routes: bgp runs" "$?" 0
secs=$(python3 -c "import sys, time; print(int(time.time() - float(sys.argv[1])))" "$start")
# Each segment's last route stays, and one of 203.0.113.5's.
grep -q "end of input; 4 rules held, 3103 added and 3099 deleted by this run" "$T_TMP/err" &&
	pass "... 3103 rules added and 3099 deleted" || fail "... closing line: $(tail -1 "$T_TMP/err")"
lines=$(wc -l <"$T_TMP/err")
# A start and a closing line, the quiet peer's 6, and per 10 s at most 11
# of the refusals and 101 of the changes of the flapping peer.
max=$((8 + 112 * (secs / 10 + 1)))
[ "$lines" -le "$max" ] && pass "... $lines lines of log in $secs s (at most $max)" ||
	fail "... $lines lines of log in $secs s, want at most $max"
check_eq "... the quiet peer's refusal said in full amid the other's 50" \
	"$(said "$T_TMP/err" "^flowbloom: bgp: <stdin>:[0-9]*: 2001:db8:0::/40 from 203.0.113.5: /40 is shorter than /48 (--min-length); not applied$")" 1
check_eq "... the flapping peer's: 10 in full, 40 counted" \
	"$(said "$T_TMP/err" "from 198.51.100.9: /40 is shorter than /48") $(summed "$T_TMP/err" "routes refused by the limits (--min-length, --rtbh, family)")" "10 40"
check_eq "... the quiet peer's 3 additions and 2 deletions all said" \
	"$(said "$T_TMP/err" "^flowbloom: bgp: <stdin>:[0-9]*: +dst 2001:db8::3:d4[0-2]$") $(said "$T_TMP/err" "^flowbloom: bgp: <stdin>:[0-9]*: -dst 2001:db8::3:d4[01]$")" "3 2"
check_eq "... none of its changes counted" "$(grep -c "more changes\? to the filter from 203.0.113.5" "$T_TMP/err")" 0
add=$(said "$T_TMP/err" "^flowbloom: bgp: <stdin>:[0-9]*: +dst 2001:db8::4:")
del=$(said "$T_TMP/err" "^flowbloom: bgp: <stdin>:[0-9]*: -dst 2001:db8::4:")
read -r cadd cdel <<<"$(changed "$T_TMP/err" 198.51.100.9)"
check_eq "... the flapping peer's changes said and counted: 3100 added, 3097 deleted" \
	"$((add + cadd)) $((del + cdel))" "3100 3097"
[ "$((add + del))" -le $((100 * (secs / 10 + 1))) ] && [ "$cadd" -gt 0 ] &&
	pass "... $((add + del)) of them said in full, $((cadd + cdel)) counted" ||
	fail "... $add + $del said in full, $cadd + $cdel counted"
grep -q "^flowbloom: bgp: [0-9]* more changes to the filter from 198.51.100.9 in the last [0-9]* s (not said one by one): [0-9]* rules added, [0-9]* deleted; the first <stdin>:[0-9]*: [+-]dst 2001:db8::4:[0-9a-f]*, the last <stdin>:[0-9]*: [+-]dst 2001:db8::4:[0-9a-f]*$" "$T_TMP/err" &&
	pass "... a summary names the first and the last counted" ||
	fail "... summaries: $(grep 'more change' "$T_TMP/err" | head -2)"
check_eq "... the 4 rules held" "$("$FB" bgp rtbh --state "$S5" --flush 2>/dev/null)" \
	"deleted 4 rules of filter 'rtbh' that bgp had added"

# --- 6. Changes, a window over while bgp waits for input: 150 blackholes in
# one line, 100 said, the count of the 50 others said once the 10 s are
# over, bgp still running; the next changes said in full again.
S6=$T_TMP/wait.bgp
mkfifo "$T_TMP/fifo6"
"$FB" bgp rtbh --state "$S6" <"$T_TMP/fifo6" >/dev/null 2>"$T_TMP/err" &
BGP=$!
exec 3>"$T_TMP/fifo6"
gen many 150 400000 >&3
for _ in $(seq 1 150); do
	grep -q "more changes to the filter" "$T_TMP/err" && break
	sleep 0.1
done
check_eq "150 rules added at once: 100 said in full" "$(said "$T_TMP/err" "^flowbloom: bgp: <stdin>:1: +dst 2001:db8::6:")" 100
grep -q "^flowbloom: bgp: 50 more changes to the filter from 198.51.100.9 in the last 1[0-2] s (not said one by one): 50 rules added, 0 deleted; the first <stdin>:1: +dst 2001:db8::6:[0-9a-f]*, the last <stdin>:1: +dst 2001:db8::6:[0-9a-f]*$" "$T_TMP/err" &&
	pass "... the 50 others counted once the window is over, bgp still running" ||
	fail "... said: $(tail -2 "$T_TMP/err")"
gen gone 3 400000 >&3
exec 3>&-
wait "$BGP"
check_eq "... the next 3 deletions said in full" "$(said "$T_TMP/err" "^flowbloom: bgp: <stdin>:[2-4]: -dst 2001:db8::6:")" 3
grep -q "147 rules held, 150 added and 3 deleted by this run" "$T_TMP/err" &&
	pass "... the closing line's total" || fail "... closing line: $(tail -1 "$T_TMP/err")"
"$FB" bgp rtbh --state "$S6" --flush >/dev/null 2>&1

"$FB" destroy rtbh >/dev/null
"$FB" destroy small >/dev/null
t_end
