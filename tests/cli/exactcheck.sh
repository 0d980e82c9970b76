#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `check` holds the exact sets of --confirm exact against the filter. Real
# confirming filters (counting, plain, cuckoo) are damaged on purpose, by
# writing their exact sets with bpftool (the states a killed add or del
# leaves, and worse) and by killing an `add -f` in the middle of its exact
# sets (strace): `check` must name each damage and exit 1, `check --repair`
# fix what it can (never adding bits) and say what it cannot (exit 1),
# and a second `check` is clean. What the damage does to packets is seen
# through the real program (replay): a prefix rule missing from its trie,
# and a flow with no exact entry, are refused as unconfirmed.
source "$(dirname "$0")/../lib/lib.sh"
t_begin exactcheck
t_traps

# A: 20 UDP flows; X: one flow of none of the filters; packets of A, and
# one from 198.51.100.200 (in the source prefix rule, which no flow of A
# is in) to a port no flow has.
python3 - "$T_TMP" <<'PY'
import sys
from pkt import ether, ip4, ipv4_udp, pcap_write
d = sys.argv[1]
def flow(i):
    return ("198.51.100.%d" % (1 + i), 1000 + i, "203.0.113.%d" % (1 + i), 4000 + i)
A = [flow(i) for i in range(20)]
line = lambda f: "udp %s:%d %s:%d\n" % f
open(d + "/a.txt", "w").write("".join(map(line, A)))
open(d + "/x.txt", "w").write(line(flow(200)))
for i, f in enumerate(A[:3]):
    open(d + "/a%d.txt" % i, "w").write(line(f))
open(d + "/big.txt", "w").write("".join(
    "udp 198.51.100.%d:%d 203.0.113.%d:%d\n" % (i % 250, 1024 + i % 60000, i // 250 % 250, 9 + i // 60000)
    for i in range(40000)))
open(d + "/fits.txt", "w").write("".join(
    "tcp 203.0.113.%d:%d 198.51.100.%d:%d\n" % (i % 250, 1024 + i % 60000, i // 250 % 250, 9 + i // 60000)
    for i in range(50000)))
def pcap(name, flows):
    pcap_write(d + "/" + name, (ether(0x0800) + ipv4_udp(ip4(s), sp, ip4(t), dp, b"ping")
                                for s, sp, t, dp in flows))
pcap("a.pcap", A)
pcap("a2.pcap", A[2:3])
pcap("pfx.pcap", [("198.51.100.200", 7, "203.0.113.200", 7)])
PY

# set_id NAME MAP SLOT: the kernel id of the set in slot SLOT of NAME's
# outer map MAP (exact: 0 the hash set of generation 0; lpm: 0 sources,
# 1 destinations), from the id the outer map holds (little-endian).
set_id() {
	bpftool -j map lookup pinned "$FLOWBLOOM_ROOT/$1/$2" key "$3" 0 0 0 |
		python3 -c 'import json, sys
v = json.load(sys.stdin)["value"]
print(int("".join(x[2:] for x in reversed(v)), 16))'
}
# entries ID: one line per entry of map ID, "KEY-HEX VALUE" (bytes in hex)
entries() {
	bpftool -j map dump id "$1" | python3 -c 'import json, sys
for e in json.load(sys.stdin):
    print(" ".join(x[2:] for x in e["key"]), int("".join(x[2:] for x in reversed(e["value"])), 16))'
}
# key_of FILE: the exact-set key of FILE's one rule (added to a scratch
# filter, read back from its hash set)
key_of() {
	"$FB" destroy kx >/dev/null 2>&1
	"$FB" create kx --capacity 10 --fp-rate 0.01 --confirm exact >/dev/null
	"$FB" add kx -f "$1" >/dev/null
	entries "$(set_id kx exact 0)" | cut -d' ' -f1-40
	"$FB" destroy kx >/dev/null
}
# put ID KEY COUNT / drop ID KEY: write an entry of map ID behind the CLI
put() { bpftool map update id "$1" key hex $2 value "$3" 0 0 0; }
drop() { bpftool map delete id "$1" key hex $2; }
# chk NAME [--repair]: check -j's JSON in $T_TMP/chk, its exit status in $rc
chk() {
	"$FB" -j check "$@" >"$T_TMP/chk" 2>"$T_TMP/chk.err"
	rc=$?
}
cj() { t_json "d[\"$1\"]" "$T_TMP/chk"; }
# clean_again NAME LABEL: check exits 0 and says clean
clean_again() {
	chk "$1"
	check_eq "$2: check clean again (exit 0)" "$rc $(cj clean)" "0 True"
}
matched() {
	"$FB" -j replay "$1" "$T_TMP/$2" >"$T_TMP/rp" 2>/dev/null
	t_json 'd["matched"]' "$T_TMP/rp"
}

# --- A counting confirming filter: A's flows and a source prefix.
"$FB" create cx --capacity 1000 --fp-rate 0.001 --counting --confirm exact >/dev/null
"$FB" load cx "$T_TMP/a.txt" >/dev/null
"$FB" add cx src 198.51.100.128/25 >/dev/null
H=$(set_id cx exact 0)
S=$(set_id cx lpm 0)
chk cx
check_eq "undamaged: clean, exit 0" "$rc $(cj clean)" "0 True"
check_eq "undamaged: 21 rules, 21 copies for 21 flows" \
	"$(cj exact_rules) $(cj exact_copies) $(cj flows) $(cj exact_count_ok)" "21 21 21 True"
check_eq "undamaged: the prefix's packet matches (program)" "$(matched cx pfx.pcap)" 1

# A rule of no filter, written into the hash set (what a killed add leaves:
# its exact entries are written before its bits).
KX=$(key_of "$T_TMP/x.txt")
put "$H" "$KX" 1
chk cx
check_eq "a rule the filter does not hold: exit 1, NOT clean" "$rc $(cj clean)" "1 False"
check_eq "... named: 1 rule not in the filter, 22 copies for 21 flows" \
	"$(cj exact_not_in_filter) $(cj exact_copies) $(cj exact_count_ok)" "1 22 False"
"$FB" check cx >"$T_TMP/txt"
check "... in the text too" grep -q "1 exact-set rule the filter does not hold" "$T_TMP/txt"
t_refused 1 "... export refuses the filter (no reader would take the file)" \
	"exact sets of 'cx' disagree with the filter" "$FB" export cx "$T_TMP/cx.fbx"
"$FB" check cx --repair >"$T_TMP/txt"
rc=$?
check_eq "check --repair: exit 0" "$rc" 0
check "... says it removed it" grep -q "does not hold.*: removed" "$T_TMP/txt"
check_eq "... the entry is gone from the hash set" "$(entries "$H" | grep -c "^$KX ")" 0
clean_again cx "after the repair"
check "... export then works" "$FB" export cx "$T_TMP/cx.fbx"
check_eq "... and no bit was set: X is still no hit" \
	"$("$FB" query cx -f "$T_TMP/x.txt" | tail -1 | cut -d' ' -f1)" 0

# A killed del: the flow's counters are lowered, its exact entry not yet.
K0=$(key_of "$T_TMP/a0.txt")
"$FB" del cx -f "$T_TMP/a0.txt" >/dev/null
put "$H" "$K0" 1
chk cx
check_eq "a deleted flow left in the hash set: exit 1, 1 rule not in the filter" \
	"$rc $(cj exact_not_in_filter)" "1 1"
chk cx --repair
check_eq "check --repair: exit 0, repaired" "$rc $(cj repaired)" "0 True"
clean_again cx "a deleted flow's entry removed"
t_refused 1 "... a second del of it is refused by the exact set" "not in its exact set" \
	"$FB" del cx -f "$T_TMP/a0.txt"

# A rule counted twice, held once: a later del would pass the exact set
# twice and lower other flows' counters.
K1=$(key_of "$T_TMP/a1.txt")
put "$H" "$K1" 2
chk cx
check_eq "a rule counted 2, held once: exit 1, over-counted 1, count mismatch" \
	"$rc $(cj exact_over_counted) $(cj exact_count_ok)" "1 1 False"
chk cx --repair
check_eq "check --repair: exit 0" "$rc" 0
check_eq "... its count is 1 again" "$(entries "$H" | grep "^$K1 " | cut -d' ' -f41)" 1
clean_again cx "over-count lowered"

# The prefix's trie entry gone: its packets are refused as unconfirmed.
KP=$(entries "$S" | cut -d' ' -f1-24)
drop "$S" "$KP"
check_eq "trie entry gone: the prefix's packet is refused (program)" "$(matched cx pfx.pcap)" 0
chk cx
check_eq "... check: exit 1, 1 address rule missing from its trie" \
	"$rc $(cj exact_trie_missing)" "1 1"
"$FB" check cx --repair >"$T_TMP/txt"
check "... check --repair puts it back" grep -q "missing from the exact sets' tries.*: put back" "$T_TMP/txt"
check_eq "... the prefix's packet matches again (program)" "$(matched cx pfx.pcap)" 1
clean_again cx "trie entry put back"

# A trie entry without its rule (203.0.113.0/25 as a source).
KT="${KP:0:50} cb 00 71 00 00 00 00"
put "$S" "$KT" 1
chk cx
check_eq "a trie entry without its rule: exit 1, 1 stale" "$rc $(cj exact_trie_stale)" "1 1"
chk cx --repair
check_eq "check --repair: exit 0" "$rc" 0
check_eq "... the trie holds the one prefix again" "$(entries "$S" | wc -l)" 1
clean_again cx "stale trie entry removed"

# The reverse: a flow the filter holds with no exact entry. Its packets are
# refused as unconfirmed; check cannot tell which flow (the counters do not
# say), so --repair says so and exits 1, and load --replace rebuilds.
K2=$(key_of "$T_TMP/a2.txt")
check_eq "A[2] matches before (program)" "$(matched cx a2.pcap)" 1
drop "$H" "$K2"
check_eq "its exact entry gone: A[2] is refused (program)" "$(matched cx a2.pcap)" 0
chk cx
check_eq "... check: exit 1, 19 copies for 20 flows" \
	"$rc $(cj exact_copies) $(cj flows) $(cj exact_count_ok)" "1 19 20 False"
"$FB" check cx >"$T_TMP/txt"
check "... the text says the flow is refused as unconfirmed" \
	grep -q "holds 1 flow in no exact set: their packets are refused as unconfirmed" "$T_TMP/txt"
chk cx --repair
check_eq "... check --repair cannot tell which: exit 1, unrepaired" \
	"$rc $(cj exact_unrepaired)" "1 True"
"$FB" check cx --repair >"$T_TMP/txt"
check "... and says so" grep -q "NOT repaired" "$T_TMP/txt"
{ tail -n +2 "$T_TMP/a.txt"; echo "src 198.51.100.128/25"; } >"$T_TMP/list.txt"
"$FB" load cx "$T_TMP/list.txt" --replace >/dev/null
clean_again cx "rebuilt by load --replace"
check_eq "... A[2] matches again (program)" "$(matched cx a2.pcap)" 1

# --- A deleted flow whose counter another flow keeps up (k = 1, 20,000
# flows: hundreds share a counter): its exact entry put back is still a
# hit, so check cannot name it; only the count says one copy is too many,
# and --repair says it cannot tell which (exit 1).
python3 -c 'print("".join("udp 198.51.100.%d:%d 203.0.113.%d:4000\n" % (i % 250, 1000 + i % 60000, i // 250) for i in range(20000)), end="")' >"$T_TMP/many.txt"
"$FB" create sh --bits 512 --hashes 1 --counting --confirm exact >/dev/null
"$FB" add sh -f "$T_TMP/many.txt" >/dev/null
"$FB" -j count sh -f "$T_TMP/many.txt" >"$T_TMP/cnt"
t_json 'next(r["flow"] for r in d["results"] if r["count"] >= 2)' "$T_TMP/cnt" >"$T_TMP/shared.txt"
KS=$(key_of "$T_TMP/shared.txt")
"$FB" del sh -f "$T_TMP/shared.txt" >/dev/null
put "$(set_id sh exact 0)" "$KS" 1
chk sh
check_eq "a deleted flow with a shared counter put back: exit 1, no rule named, 20000 copies for 19999 flows" \
	"$rc $(cj exact_not_in_filter) $(cj exact_over_counted) $(cj exact_copies) $(cj flows)" "1 0 0 20000 19999"
"$FB" check sh --repair >"$T_TMP/txt"
rc=$?
check_eq "... check --repair cannot tell which: exit 1" "$rc" 1
check "... and says so" grep -q "1 copy more than the filter's flows: 1 NOT repaired" "$T_TMP/txt"
grep -v -x -F -f "$T_TMP/shared.txt" "$T_TMP/many.txt" >"$T_TMP/rest.txt"
"$FB" load sh "$T_TMP/rest.txt" --replace >/dev/null
clean_again sh "rebuilt by load --replace"

# --- A plain confirming filter: an add -f of 40,000 flows killed in the
# middle of its exact sets (strace kills it at the bpf call after the
# first batch it writes there: which call that is, an add of the same
# flows into a twin filter says). The rules it left there are no hits
# (its bits come after), and they fill the exact sets: a later add of
# 50,000 flows is refused "full" (the sets hold 65,536). check finds
# every one of them.
"$FB" create pf --capacity 1000 --fp-rate 0.001 --confirm exact >/dev/null
"$FB" create pg --capacity 1000 --fp-rate 0.001 --confirm exact >/dev/null
strace -f -qq -o "$T_TMP/st" -e trace=bpf "$FB" add pg -f "$T_TMP/big.txt" >/dev/null
at=$(grep 'bpf(' "$T_TMP/st" | grep -n -m1 'BPF_MAP_UPDATE_BATCH' | cut -d: -f1)
"$FB" destroy pg >/dev/null
(strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:signal=KILL:when=$((${at:-0} + 1)) \
	"$FB" add pf -f "$T_TMP/big.txt" >/dev/null 2>&1; exit $?) 2>/dev/null
check_eq "add -f of 40,000 flows killed" "$?" 137
P=$(set_id pf exact 0)
left=$(entries "$P" | wc -l)
check_eq "... it left thousands of rules in the exact set" \
	"$([ "$left" -gt 10000 ] && [ "$left" -lt 40000 ] && echo yes)" yes
t_refused 1 "... a later add of 50,000 flows finds the sets full" "exact sets of 'pf' are full" \
	"$FB" add pf -f "$T_TMP/fits.txt"
chk pf
check_eq "check: exit 1, every one of them named (not in the filter)" \
	"$rc $(cj exact_rules) $(cj exact_not_in_filter)" "1 $left $left"
check_eq "... a plain filter's flows are not compared" "$(cj exact_count_checked)" False
chk pf --repair
check_eq "check --repair: exit 0" "$rc" 0
check_eq "... the exact set is empty" "$(entries "$P" | wc -l)" 0
clean_again pf "killed add repaired"
check "the 50,000 flows are then added" "$FB" add pf -f "$T_TMP/fits.txt"
clean_again pf "after the add"

# --- A cuckoo confirming filter: a rule it does not hold, one counted
# more often than its buckets hold it.
"$FB" create ck --type cuckoo --capacity 1000 --fp-rate 0.001 --confirm exact >/dev/null
"$FB" add ck -f "$T_TMP/a.txt" >/dev/null
C=$(set_id ck exact 0)
put "$C" "$KX" 1
put "$C" "$K1" 3
chk ck
check_eq "cuckoo: exit 1, 1 rule not held, 1 over-counted" \
	"$rc $(cj exact_not_in_filter) $(cj exact_over_counted)" "1 1 1"
chk ck --repair
check_eq "cuckoo: check --repair exit 0" "$rc" 0
check_eq "... X gone, A[1] counted once" \
	"$(entries "$C" | grep -c "^$KX ") $(entries "$C" | grep "^$K1 " | cut -d' ' -f41)" "0 1"
clean_again ck "cuckoo repaired"
check "... A[1] is deleted once" "$FB" del ck -f "$T_TMP/a1.txt"
t_refused 1 "... and a second time refused" "not in its exact set" "$FB" del ck -f "$T_TMP/a1.txt"

t_end
