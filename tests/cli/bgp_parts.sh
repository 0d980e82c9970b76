#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Which part of a counting filter `flowbloom bgp` deletes a withdrawn
# route's rule from: only the part it put the rule in, the permanent rules
# without --ttl, the generations with it (real bgp processes reading
# ExaBGP JSON, restarted from their state file; the filter read back with
# `query`, `count`, `info` and `replay` through the real program):
# - the operator's own rule for the same prefix in the other part (a
#   permanent one under bgp --ttl, one with a lifetime under bgp without)
#   keeps matching after the peer withdraws the route, across a restart
#   (bgp deleted a copy from every part answering "maybe": the operator's);
# - rules of the other part that only share counters with the withdrawn
#   ones (the withdrawn rule a false positive there) keep every bit:
#   150,000 permanent rules near a filter's capacity (some 4 % false
#   positives), 5,000 routes announced by bgp --ttl, withdrawn after a
#   restart; as many rules with a lifetime, in one generation, and 5,000
#   routes announced and withdrawn by bgp without --ttl: every one of the
#   operator's rules still drops in replay (some 380 and 25 did not);
# - the state file says which part holds bgp's rules; a restart with the
#   other --ttl setting moves them there (without --ttl, rules a --ttl run
#   added became permanent: they used to end with their lifetime while
#   their route stood; with it, permanent ones get a lifetime: they used to
#   stay for good), and --flush deletes them where they are;
# - within the generations, only those bgp wrote the rule into: beside the
#   operator's 150,000 rules with a lifetime of 2h (one dense generation),
#   5,000 routes of bgp --ttl 1h announced and withdrawn after a restart
#   leave every one of them dropping in replay (some 40 to 70 did not: the
#   withdrawn rules were false positives there); bgp's own 5,000 rules
#   filling a generation and spilling into the next, half withdrawn, the
#   other half all still match (some 10 to 40 did not); the state file
#   says which generations hold each rule's copies, a file without it has
#   them taken from the filter, a malformed one is refused naming its line;
#   a refresh's copy in a newer generation goes with the first;
# - a restart after a stop longer than the lifetime: the held routes'
#   rules get a copy at the start (they waited half a lifetime);
# - a route withdrawn and announced again before the withdrawal is
#   applied, 20 times (a flapping peer): one copy stays, the others go, so
#   its final withdrawal leaves the operator's copy only (a copy more per flap saturated
#   the 4-bit counters at 15, and the withdrawn route kept matching until
#   its generation ended, an hour and more).
source "$(dirname "$0")/../lib/lib.sh"
t_begin bgp_parts

t_bgp_traps

NB=$T_EXA_NB
BH=$T_EXA_BH
ann() { t_exa_ann "$1"; }
wd() { t_exa_wd "$1"; }
q() { "$FB" query "$1" "${@:2}" | head -1 | awk '{print $1}'; }
cnt() { "$FB" count "$1" "${@:2}" | awk '{print $1}'; }
maybe() { "$FB" query "$@" | tail -1 | cut -d' ' -f1; }
# permanent NAME / ingens NAME: flows in the permanent rules / in the live
# generations.
permanent() { "$FB" -j info "$1" | t_json 'd["flows"]'; }
ingens() { "$FB" -j info "$1" | t_json 'sum(g["flows"] for g in d.get("generations", []) if not g["expired"])'; }
drops() { "$FB" -j replay "$1" "$2" | t_json 'd["drop"]'; }
# bgp NAME STATE [OPTION...] <input: one run to the end of its input.
bgp() { "$FB" bgp "$1" --state "$2" "${@:3}" 2>>"$T_TMP/bgp.err" >/dev/null; }

# --- 1. the operator's rule for the same prefix, in the other part -----------
"$FB" create op --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create op"
check "the operator's permanent rule" "$FB" add op dst 203.0.113.6
ann 203.0.113.6/32 | bgp op "$T_TMP/op1.bgp" --ttl 1h
check_eq "bgp --ttl adds the route's rule in a generation" "$(cnt op dst 203.0.113.6/32) $(ingens op)" "2 1"
wd 203.0.113.6/32 | bgp op "$T_TMP/op1.bgp" --ttl 1h
check_eq "restarted, bgp --ttl's withdrawal takes its copy only" \
	"$(cnt op dst 203.0.113.6/32) $(permanent op) $(ingens op)" "1 1 0"
check "the operator's rule with a lifetime" "$FB" add op --ttl 1h dst 203.0.113.5
{ ann 203.0.113.5/32; wd 203.0.113.5/32; } | bgp op "$T_TMP/op2.bgp"
check_eq "bgp (no --ttl) announces and withdraws it: the operator's copy is left" \
	"$(cnt op dst 203.0.113.5/32) $(ingens op)" "1 1"
ann 203.0.113.5/32 | bgp op "$T_TMP/op2.bgp"
wd 203.0.113.5/32 | bgp op "$T_TMP/op2.bgp"
check_eq "... and across a restart" "$(cnt op dst 203.0.113.5/32) $(ingens op) $(q op dst 203.0.113.5)" \
	"1 1 maybe"
check "the filter is clean" "$FB" check op
"$FB" destroy op >/dev/null

# --- 2. rules of the other part sharing counters with the withdrawn ones -----
$PY - "$T_TMP" <<'PY'
import sys
from pkt import ether, ipv4_udp, pcap_write
d = sys.argv[1]
ops = [(bytes([198, 51, (i >> 8) & 255, i & 255]), 1000 + (i >> 16)) for i in range(150000)]
open(d + "/ops", "w").write("".join("udp %s:%d 203.0.113.1:53\n" % (".".join(map(str, a)), p) for a, p in ops))
pcap_write(d + "/ops.pcap", (ether(0x0800, b"\x02" * 6, b"\x04" * 6) +
                             ipv4_udp(a, p, bytes([203, 0, 113, 1]), 53, b"x") for a, p in ops))
nb = '"neighbor": {"address": {"local": "198.51.100.2", "peer": "198.51.100.9"}, "direction": "receive"'
pfx = ["2001:db8::%x/128" % i for i in range(5000)]
open(d + "/routes", "w").write("".join("dst %s\n" % p[:-4] for p in pfx))
with open(d + "/ann", "w") as f:
    for p in pfx:
        f.write('{"type": "update", %s, "message": {"update": {"attribute": {"community": [[65535, 666]]}, '
                '"announce": {"ipv6 unicast": {"2001:db8::1": [{"nlri": "%s"}]}}}}}}\n' % (nb, p))
with open(d + "/wd", "w") as f:
    for p in pfx:
        f.write('{"type": "update", %s, "message": {"update": {"withdraw": {"ipv6 unicast": '
                '[{"nlri": "%s"}]}}}}}\n' % (nb, p))
with open(d + "/wd2", "w") as f:
    for p in pfx[2500:]:
        f.write('{"type": "update", %s, "message": {"update": {"withdraw": {"ipv6 unicast": '
                '[{"nlri": "%s"}]}}}}}\n' % (nb, p))
open(d + "/kept", "w").write("".join("dst %s\n" % p[:-4] for p in pfx[:2500]))
PY
"$FB" create fp --capacity 160000 --fp-rate 0.05 --counting >/dev/null || fail "create fp"
"$FB" add fp -f "$T_TMP/ops" >/dev/null
check_eq "150,000 permanent rules drop" "$(drops fp "$T_TMP/ops.pcap")" 150000
bgp fp "$T_TMP/fp1.bgp" --ttl 1h <"$T_TMP/ann"
check_eq "bgp --ttl adds 5,000 routes" "$(ingens fp)" 5000
bgp fp "$T_TMP/fp1.bgp" --ttl 1h <"$T_TMP/wd"
check_eq "restarted, it deletes them" "$(ingens fp) $(maybe fp -f "$T_TMP/routes")" "0 0"
check_eq "... every permanent rule still drops in the program" "$(drops fp "$T_TMP/ops.pcap")" 150000
check_eq "... and is held once" "$(permanent fp)" 150000
check "... and the filter is clean" "$FB" check fp
"$FB" destroy fp >/dev/null
"$FB" create fg --capacity 160000 --fp-rate 0.05 --counting >/dev/null || fail "create fg"
"$FB" add fg --ttl 1h -f "$T_TMP/ops" >/dev/null
check_eq "150,000 rules with a lifetime drop" "$(drops fg "$T_TMP/ops.pcap")" 150000
bgp fg "$T_TMP/fg.bgp" <"$T_TMP/ann"
bgp fg "$T_TMP/fg.bgp" <"$T_TMP/wd"
check_eq "bgp without --ttl adds 5,000 routes and, restarted, deletes them" \
	"$(permanent fg) $(maybe fg -f "$T_TMP/routes")" "0 0"
check_eq "... every rule with a lifetime still drops in the program" "$(drops fg "$T_TMP/ops.pcap")" 150000
check_eq "... and is held once" "$(ingens fg)" 150000
"$FB" destroy fg >/dev/null

# --- 3. a restart with the other --ttl setting; --flush ----------------------
"$FB" create mv --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create mv"
ann 203.0.113.20/32 | bgp mv "$T_TMP/mv1.bgp" --ttl 2s
check_eq "bgp --ttl 2s: the rule in a generation" "$(permanent mv) $(ingens mv)" "0 1"
check_eq "... the state file says so" "$(head -1 "$T_TMP/mv1.bgp" | awk '{print $7}')" with-lifetime
# Restarted without --ttl, its input held open: once the generation of
# the copy with a lifetime has ended (its own clock, not a fixed sleep),
# the rule matches only if bgp made it permanent at its start, not at its
# end.
rm -f "$T_TMP/fifo" && mkfifo "$T_TMP/fifo"
bgp mv "$T_TMP/mv1.bgp" <"$T_TMP/fifo" &
BP=$!
exec 9>"$T_TMP/fifo"
ended() { "$FB" -j info mv | t_json 'all(g["expired"] for g in d.get("generations", []))'; }
past() { [ "$(ended)" = True ] && [ "$(q mv dst 203.0.113.20)" = maybe ]; }
check "restarted without --ttl, past the lifetime, its input open: the route's rule still matches" \
	t_wait_until 30 past
exec 9>&-
wait $BP
BP=""
check_eq "... made permanent, its copy with a lifetime deleted" "$(permanent mv) $(ingens mv)" "1 0"
check_eq "... the state file says so" "$(head -1 "$T_TMP/mv1.bgp" | awk '{print $7}')" permanent
wd 203.0.113.20/32 | bgp mv "$T_TMP/mv1.bgp"
check_eq "... withdrawn, it is gone" "$(cnt mv dst 203.0.113.20/32)" 0
ann 203.0.113.21/32 | bgp mv "$T_TMP/mv2.bgp"
check_eq "bgp without --ttl: the rule permanent" "$(permanent mv) $(ingens mv)" "1 0"
bgp mv "$T_TMP/mv2.bgp" --ttl 1h </dev/null
check_eq "restarted with --ttl: given a lifetime, its permanent copy deleted" \
	"$(permanent mv) $(ingens mv) $(q mv dst 203.0.113.21)" "0 1 maybe"
check_eq "... not reported as a deletion" "$(grep -c 'dst 203\.0\.113\.21' "$T_TMP/bgp.err")" 1
wd 203.0.113.21/32 | bgp mv "$T_TMP/mv2.bgp" --ttl 1h
check_eq "... withdrawn, it is gone" "$(cnt mv dst 203.0.113.21/32)" 0
ann 203.0.113.22/32 | bgp mv "$T_TMP/mv3.bgp" --ttl 1h
check "--flush without --ttl of a --ttl run" bgp mv "$T_TMP/mv3.bgp" --flush
check_eq "... deletes its rule" "$(cnt mv dst 203.0.113.22/32) $(ingens mv)" "0 0"
ann 203.0.113.23/32 | bgp mv "$T_TMP/mv4.bgp"
check "--flush with --ttl of a run without" bgp mv "$T_TMP/mv4.bgp" --flush --ttl 1h
check_eq "... deletes its rule" "$(cnt mv dst 203.0.113.23/32) $(permanent mv)" "0 0"
check "the filter is clean" "$FB" check mv
"$FB" destroy mv >/dev/null
# --- 4. generations bgp never wrote the withdrawn rule into ------------------
# A generation answering "maybe" for a withdrawn rule without holding a copy
# bgp wrote (a false positive) keeps its counters: the operator's 150,000
# rules with a lifetime of 2h, one dense generation; bgp --ttl 1h's 5,000
# routes in generations of their own, withdrawn after a restart.
"$FB" create fo --capacity 160000 --fp-rate 0.05 --counting >/dev/null || fail "create fo"
"$FB" add fo --ttl 2h -f "$T_TMP/ops" >/dev/null
bgp fo "$T_TMP/fo.bgp" --ttl 1h <"$T_TMP/ann"
check_eq "bgp --ttl 1h beside the operator's 2h rules: its own generations" \
	"$(ingens fo) $("$FB" -j info fo | t_json 'len(d["generations"])')" "155000 3"
bgp fo "$T_TMP/fo.bgp" --ttl 1h <"$T_TMP/wd"
check_eq "restarted, it deletes its routes' rules" "$(maybe fo -f "$T_TMP/routes")" 0
check_eq "... every rule of the operator's generation still drops in the program" \
	"$(drops fo "$T_TMP/ops.pcap")" 150000
check_eq "... and is held once" "$(ingens fo)" 150000
check "... and the filter is clean" "$FB" check fo
"$FB" destroy fo >/dev/null
# bgp's own rules filling one generation and spilling into the next (at a
# rate of 0.5 a generation fills soon: some 25 were lost): half withdrawn
# after a restart, the other half all still match.
"$FB" create fs --capacity 100000 --fp-rate 0.5 --counting >/dev/null || fail "create fs"
bgp fs "$T_TMP/fs.bgp" --ttl 1h <"$T_TMP/ann"
check_eq "bgp --ttl: 5,000 routes in two generations" \
	"$(ingens fs) $("$FB" -j info fs | t_json 'len(d["generations"])')" "5000 2"
bgp fs "$T_TMP/fs.bgp" --ttl 1h <"$T_TMP/wd2"
check_eq "restarted, half withdrawn: the other half all still match" \
	"$(maybe fs -f "$T_TMP/kept")" 2500
check "... and the filter is clean" "$FB" check fs
"$FB" destroy fs >/dev/null
# The state file says which generations hold bgp's copies of each rule; a
# file written before it did (no such lines) has them taken from the
# filter: each generation holding the rule, one copy, as before.
"$FB" create cp --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create cp"
{ ann 203.0.113.30/32; ann 203.0.113.31/32; } | bgp cp "$T_TMP/cp.bgp" --ttl 1h
check_eq "the state file records each rule's copy and its generation" \
	"$(grep -cE '^# generations( [0-9]+:[0-9]+)+$' "$T_TMP/cp.bgp") $(grep -cP '^# copies\tdst 203\.0\.113\.3[01]\t[0-9]+:1$' "$T_TMP/cp.bgp")" \
	"1 2"
grep -v '^# \(generations\|copies\)' "$T_TMP/cp.bgp" >"$T_TMP/cp.old" && cat "$T_TMP/cp.old" >"$T_TMP/cp.bgp"
wd 203.0.113.30/32 | bgp cp "$T_TMP/cp.bgp" --ttl 1h
check_eq "a file without them: the withdrawal deletes the rule, the other stays" \
	"$(cnt cp dst 203.0.113.30/32) $(cnt cp dst 203.0.113.31/32) $(ingens cp)" "0 1 1"
check_eq "... and the file has them again" "$(grep -c '^# copies' "$T_TMP/cp.bgp")" 1
sed -i 's/^\(# copies\t.*\t\)[0-9]*:1$/\199:1/' "$T_TMP/cp.bgp"
t_refused 1 "a malformed record is refused, naming its line" \
	"cp.bgp:6: malformed record of where the copies are" "$FB" bgp cp --state "$T_TMP/cp.bgp" --ttl 1h </dev/null
check_eq "... the filter left as it was" "$(cnt cp dst 203.0.113.31/32)" 1
"$FB" destroy cp >/dev/null
# A refresh writes a copy into a newer generation: the withdrawal, after a
# restart, deletes both (the state file recorded both), read while the
# older one still lives (after its lifetime, its copy gone proves nothing:
# skipped).
"$FB" create rf --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create rf"
mkfifo "$T_TMP/rf.fifo"
T0=$(date +%s.%N)
bgp rf "$T_TMP/rf.bgp" --ttl 8s <"$T_TMP/rf.fifo" &
BP=$!
exec 9>"$T_TMP/rf.fifo"
ann 203.0.113.40/32 >&9
live() { "$FB" -j info rf | t_json 'len([g for g in d.get("generations", []) if not g["expired"]])'; }
two() { [ "$(live)" = 2 ]; }
check "bgp --ttl 8s, refreshed at 4 s: a copy in a second generation" t_wait_until 20 two
exec 9>&-
wait "$BP"
BP=""
wd 203.0.113.40/32 | bgp rf "$T_TMP/rf.bgp" --ttl 8s
got="$(cnt rf dst 203.0.113.40/32) $(ingens rf) $(live)"
if awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { exit !(b - a < 8) }'; then
	check_eq "... restarted, withdrawn: no copy left in either generation, both live" "$got" "0 0 2"
else
	skip "the older generation may have ended before it was read"
fi
"$FB" destroy rf >/dev/null

# --- 5. a restart after the copies ended -------------------------------------
# A stop longer than the lifetime: the held route's copies ended with it.
# The next run gives them a copy at its start, not half a lifetime later
# (a run whose input ends at once shows it: it ended before).
"$FB" create rs --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create rs"
ann 203.0.113.50/32 | bgp rs "$T_TMP/rs.bgp" --ttl 1s
gone() { [ "$(q rs dst 203.0.113.50/32)" = no ]; }
check "bgp --ttl 1s stopped: the held route's copy ends" t_wait_until 30 gone
bgp rs "$T_TMP/rs.bgp" --ttl 1s </dev/null
check_eq "... restarted: its rule matches again at once" "$(q rs dst 203.0.113.50/32)" maybe
"$FB" destroy rs >/dev/null

# --- 6. a flapping route -------------------------------------------------------
"$FB" create fl --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create fl"
check "the operator's rule with a lifetime" "$FB" add fl --ttl 1h dst 203.0.113.60
ann 203.0.113.60/32 | bgp fl "$T_TMP/fl.bgp" --ttl 1h
for i in $(seq 20); do
	{ wd 203.0.113.60/32; ann 203.0.113.60/32; } | bgp fl "$T_TMP/fl.bgp" --ttl 1h
done
check_eq "bgp --ttl, a route withdrawn and announced again 20 times: one copy of bgp's" \
	"$(cnt fl dst 203.0.113.60/32) $(grep -cP '^# copies\tdst 203\.0\.113\.60\t[0-9]+:1$' "$T_TMP/fl.bgp")" \
	"2 1"
wd 203.0.113.60/32 | bgp fl "$T_TMP/fl.bgp" --ttl 1h
check_eq "... withdrawn: the operator's copy only is left" \
	"$(cnt fl dst 203.0.113.60/32) $(ingens fl)" "1 1"
check "... and the filter is clean" "$FB" check fl
# Withdrawn, announced and withdrawn again within one commit: the first
# withdrawal takes every copy, and the second has nothing to say (it said
# "no longer in the filter; nothing deleted" of a route just deleted).
ann 203.0.113.61/32 | bgp fl "$T_TMP/fl.bgp" --ttl 1h
: >"$T_TMP/bgp.err"
{ wd 203.0.113.61/32; ann 203.0.113.61/32; wd 203.0.113.61/32; } | bgp fl "$T_TMP/fl.bgp" --ttl 1h
check_eq "withdraw, announce, withdraw in one commit: deleted once, nothing else said" \
	"$(q fl dst 203.0.113.61/32) $(grep -c -- '-dst 203.0.113.61' "$T_TMP/bgp.err") $(grep -c 'nothing deleted' "$T_TMP/bgp.err")" \
	"no 1 0"
"$FB" destroy fl >/dev/null
t_end
