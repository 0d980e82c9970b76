#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom bgp` when someone replaces its filter (`load --replace`) and
# the new filter array refuses some of the rules bgp adds again (ExaBGP's
# JSON on a FIFO, a real bgp process; the filter read back with `query` and
# `count`). A rule the new array refuses is refused as a new announcement's
# is, so bgp's table and state file say what the filter holds:
# - live, two blackhole /28s the new array has no prefix length for, and a
#   FlowSpec route of two keys one of which needs a ninth rule shape: none
#   of them stays in the state file, the route's other key does not stay in
#   the filter (no route partly applied), each route is reported once,
#   without a line; the /28 withdrawn in the first line after the replace
#   and the other withdrawn later are not deleted (bgp used to delete
#   rules it had never added: "?dst ...: no longer in the filter"); the
#   other announced again is tried again and reported at its line;
# - at start, from the state file, with --confirm exact and exact sets
#   that the replace and the operator filled: both routes refused, "0 rules
#   held"; the operator then makes room and adds one of the two rules
#   himself: its withdrawal by the peer leaves the operator's copy (bgp
#   deleted it, lowering counters for a rule it never added), and the
#   other route, announced again, is added;
# - with --ttl, withdrawals bgp reads just before it sees a new filter
#   array (bgp held with SIGSTOP while they are written and the filter
#   replaced): a replace carries the rules with a lifetime, so they are
#   deleted from its generations (they used to be forgotten and kept
#   matching up to the lifetime), the operator's own copy of one in the new
#   array left; after a destroy and create, where no generation holds the
#   rule, "nothing deleted" and the operator's copy left; and a route
#   withdrawn and announced again before bgp's next commit still matches,
#   its first copy kept, nothing added or deleted (a copy deleted from each
#   generation left none);
# - with --ttl, a refresh the filter refuses (the operator's rules of 15
#   other lifetimes hold every generation slot bgp's own left): each route
#   is refused whole, named once without a line, leaves the state file and
#   its rules are deleted (bgp used to count them held while their last
#   copy ended); `add --ttl` into the full slots is refused with one line
#   (it used to read an unset index: a garbage message, or a segfault).
# - a deletion queued at start, of a permanent rule a killed run added
#   (STATE.added), the filter replaced (load --replace, destroy and
#   create) before the next run, with --ttl: it went with the old array,
#   the operator's copy of the rule in the new one is left (it was
#   deleted: a counting filter's counters lowered for a rule bgp never
#   added there; the start said it deleted it), and the rule of the route
#   the state file holds is added again; after a load --replace --ttl, which keeps the permanent rules,
#   the killed run's copy is deleted and the held rule moved, not added
#   again beside its permanent copy;
# - load --replace --ttl under bgp without --ttl: its rules are not added
#   again (a second copy left the route blocked after its withdrawal), a
#   withdrawal queued before bgp sees the new array is applied, at start
#   too; a plain load --replace still has them added again; the same
#   with a state file of an earlier build, which does not name the
#   permanent rules' identity.
# - merge --into the filter itself, fold, and an intersection of the filter
#   with itself only keep its permanent rules as they were: bgp's are not
#   added again (they were: counted twice, the route blocked for good after
#   its withdrawal); a merge of others into it replaces them: they are
#   added again, once.
# - an intersection of the filter with another, while bgp's state file
#   names its permanent rules (bgp running or stopped), is refused: a rule
#   of bgp's in both stayed in the result, bgp added its own again, and the
#   route's withdrawal left it blocking; allowed once bgp holds no path.
#   The same with bgp's state file elsewhere (--state), running or
#   stopped: it was not looked for.
source "$(dirname "$0")/../lib/lib.sh"
t_begin bgp_replace

t_bgp_traps

NB=$T_EXA_NB
BH=$T_EXA_BH
# ann NLRI: a blackhole route; wd NLRI: its withdrawal; wdann OLD NEW: both
# in one message; fs: a FlowSpec discard of UDP to 203.0.113.10 port 53 or
# 1024-2047 (two keys of two shapes).
ann() { t_exa_ann "$1"; }
wd() { t_exa_wd "$1"; }
wdann() { printf '{"type": "update", %s, "message": {"update": {%s, "withdraw": {"ipv4 unicast": [{"nlri": "%s"}]}, "announce": {"ipv4 unicast": {"x": [{"nlri": "%s"}]}}}}}}\n' "$NB" "$BH" "$1" "$2"; }
FSC='"destination-ipv4": ["203.0.113.10/32"], "protocol": ["=udp"], "destination-port": ["=53", ">=1024&<=2047"]'
fs() { printf '{"type": "update", %s, "message": {"update": {"attribute": {"extended-community": [{"value": 9225060886715039744}]}, "announce": {"ipv4 flow": {"no-nexthop": [{%s, "string": "flow udp-to-10"}]}}}}}}\n' "$NB" "$FSC"; }

# start NAME STATE [OPTION...] / stop: t_bgp_start / t_bgp_stop (lib.sh).
start() { t_bgp_start "$@"; }
stop() { t_bgp_stop; }
in_state() { grep -q -- "$2" "$1"; }
q() { "$FB" query "$1" "${@:2}" | head -1 | awk '{print $1}'; }
nflows() { "$FB" -j info "$1" | t_json 'd["flows"]'; }

# --- 1. live: a replace by another process while bgp runs -------------------
"$FB" create rt --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create rt"
S=$T_TMP/rt.bgp
start rt "$S"
{ ann 203.0.113.16/28; ann 203.0.113.32/28; ann 203.0.113.7/32; fs; } >&9
check "bgp holds 3 blackholes and a FlowSpec route of 2 keys" \
	t_wait_until 10 in_state "$S" 'udp-to-10 part 2/2'
check_eq "... its dport 53 key in the filter" "$(q rt udp dst 203.0.113.10 dport 53)" maybe
# The new content: four IPv4 destination lengths none of which is /28, and
# eight rule shapes, one of them the route's dport 53 key's, none its
# dport 1024-2047 key's.
{
	printf 'dst 198.51.100.0/24\ndst 198.51.100.0/25\ndst 198.51.100.0/26\ndst 198.51.100.9/32\n'
	echo "udp dst 203.0.113.9 dport 80"
	for l in 25 26 27 28 29 30 31; do echo "udp dst 203.0.113.0/$l dport 1024-2047"; done
} >"$T_TMP/list"
head1=$(head -1 "$S")
check "load --replace by another process" "$FB" load rt "$T_TMP/list" --replace
# At once, before or after bgp notices: the second /28 withdrawn, a /32
# announced, in one line.
wdann 203.0.113.32/28 203.0.113.40/32 >&9
state_moved() { [ "$(head -1 "$S")" != "$head1" ] && in_state "$S" 203.0.113.40; }
check "bgp adds its rules to the new filter array" t_wait_until 10 state_moved
check_eq "the /32 it held is in the new array" "$(q rt dst 203.0.113.7)" maybe
check_eq "... and the one announced since" "$(q rt dst 203.0.113.40)" maybe
check_eq "the /28 the new array has no length for: not in the filter" "$(q rt dst 203.0.113.17)" no
check_eq "... nor in the state file" "$(grep -c '203.0.113.16/28' "$S")" 0
check_eq "the FlowSpec route's 9th-shape key: not in the filter" \
	"$(q rt udp dst 203.0.113.10 dport 1024-2047)" no
check_eq "... nor its other key: no route is partly applied" \
	"$(q rt udp dst 203.0.113.10 dport 53)" no
check_eq "... nor any part of it in the state file" "$(grep -c 'udp-to-10' "$S")" 0
flows=$(nflows rt)
# The first /28 withdrawn, then announced again; a /32 after them to know
# they were read.
{ wd 203.0.113.16/28; ann 203.0.113.16/28; ann 203.0.113.41/32; } >&9
check "bgp reads on" t_wait_until 10 in_state "$S" 203.0.113.41
check "bgp ends at the end of its input" stop
check_eq "the withdrawals deleted nothing (flows $flows + the last /32)" "$(nflows rt)" $((flows + 1))
check_eq "... no deletion tried for a rule the new array never got" \
	"$(grep -cE '[-?]dst 203\.0\.113\.(16|32)/28' "$T_TMP/bgp.err")" 0
pre="^flowbloom: bgp: '203.0.113.16/28' from 198.51.100.9: 'dst 203.0.113.16/28' would need a 5th IPv4 destination prefix length in filter 'rt' (at most 4); not applied\$"
check_eq "the refused /28 reported once, without a line (no line caused it)" \
	"$(grep -c "$pre" "$T_TMP/bgp.err")" 1
check_eq "... and so the other (if bgp saw the replace before its withdrawal)" \
	"$(grep -c "^flowbloom: bgp: '203.0.113.32/28' from .*; not applied\$" "$T_TMP/bgp.err")" \
	"$(grep -c "^flowbloom: bgp: filter 'rt' was replaced: adding its 5 BGP rules" "$T_TMP/bgp.err")"
check_eq "the FlowSpec route reported once, naming its refused key" \
	"$(grep -c "^flowbloom: bgp: 'flow udp-to-10' from 198.51.100.9: 'udp dst 203.0.113.10 dport 1024-2047' in filter 'rt': its shape .*; not applied\$" "$T_TMP/bgp.err")" 1
check_eq "the /28 announced again is tried again, and refused at its line (7)" \
	"$(grep -c "^flowbloom: bgp: <stdin>:7: '203.0.113.16/28' from .*5th IPv4 destination prefix length.*; not applied\$" "$T_TMP/bgp.err")" 1
check_eq "the state file holds the three /32s only" "$(grep -c $'\t''dst ' "$S")" 3
"$FB" destroy rt >/dev/null

# --- 2. at start, from the state file: exact sets the replace left full -------
# (Exact sets hold twice a filter's capacity, 131072 rules here; bgp adds
# nothing past a filter's capacity.)
"$FB" create cx --capacity 65536 --fp-rate 0.001 --counting --confirm exact >/dev/null ||
	fail "create cx"
S=$T_TMP/cx.bgp
{ ann 203.0.113.7/32; ann 203.0.113.8/32; } >"$T_TMP/in"
"$FB" bgp cx --state "$S" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"
check_eq "bgp adds two blackholes to a filter with --confirm exact" "$(grep -c $'\t''dst ' "$S")" 2
# Replaced while bgp is stopped; the new exact sets (131072 rules) filled.
"$PY" -c '
for i in range(131072): print("udp 198.51.100.%d:%d 203.0.113.1:53" % (i & 255, 1024 + (i >> 8)))' >"$T_TMP/big"
head -1 "$T_TMP/big" >"$T_TMP/one"
tail -n +2 "$T_TMP/big" >"$T_TMP/rest"
check "load --replace" "$FB" load cx "$T_TMP/one" --replace
check "the exact sets filled (131072 rules)" "$FB" add cx -f "$T_TMP/rest"
check_fails "... full" "$FB" add cx dst 203.0.113.99
start cx "$S"
check "bgp starts" t_wait_until 10 grep -q 'rules held from' "$T_TMP/bgp.err"
check_eq "... holding no rule: the new array refused both" \
	"$(grep -c "filter 'cx': 0 rules held" "$T_TMP/bgp.err")" 1
check_eq "... each route reported once" \
	"$(grep -c "^flowbloom: bgp: '203.0.113.[78]/32' from 198.51.100.9: filter 'cx' refused the BGP rules added again; not applied\$" "$T_TMP/bgp.err")" 2
check "... and gone from the state file" t_wait_until 10 bash -c "! grep -q 'dst 203' '$S'"
# The operator makes room for two below the capacity (65534 rules left)
# and adds one of the two rules himself.
sed -n 2,65539p "$T_TMP/big" >"$T_TMP/two"
check "room for two" "$FB" del cx -f "$T_TMP/two"
check "the operator adds dst 203.0.113.7 himself" "$FB" add cx dst 203.0.113.7
{ wd 203.0.113.7/32; ann 203.0.113.8/32; } >&9
check "the peer's other route, announced again, is added now" \
	t_wait_until 10 in_state "$S" 'dst 203.0.113.8'
check_eq "... in the filter" "$("$FB" count cx dst 203.0.113.8/32 | awk '{print $1}')" 1
check "bgp ends" stop
check_eq "the peer's withdrawal of dst 203.0.113.7 left the operator's copy" \
	"$("$FB" count cx dst 203.0.113.7/32 | awk '{print $1}')" 1
check_eq "... which still matches" "$(q cx dst 203.0.113.7)" yes
check_eq "... and bgp tried no deletion" "$(grep -cE '[-?]dst 203\.0\.113\.7($|:)' "$T_TMP/bgp.err")" 0
"$FB" destroy cx >/dev/null

# --- 3. --ttl: withdrawals queued just before the filter array changes -------
# bgp is stopped (SIGSTOP) while idle, holding no lock; the withdrawals go
# into its input, the filter is replaced, and bgp goes on: it reads the
# withdrawals (queued for after the next state write) and only then sees
# the new array. A replace carries rules with a lifetime, so the withdrawn
# rules are still there: they must be deleted, not forgotten.
"$FB" create tl --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create tl"
S=$T_TMP/tl.bgp
start tl "$S" --ttl 1h
{ ann 203.0.113.7/32; ann 203.0.113.8/32; ann 203.0.113.9/32; ann 203.0.113.10/32; } >&9
check "bgp --ttl holds four blackholes" t_wait_until 10 in_state "$S" 'dst 203.0.113.10'
check_eq "... in the filter" "$(q tl dst 203.0.113.7)" maybe
idle() { flock -n "$FLOWBLOOM_ROOT/tl" true; }
# stopped: bgp, idle (its last state write done, the filter's lock free).
stopped() {
	t_wait_until 10 idle && kill -STOP "$BP" && idle
}
# Withdrawn and announced again before bgp's next commit (both lines read
# at once), where the announcement's copy would go to another generation
# than the first copy's: the operator's rule with a shorter lifetime made
# one that ends within the quarter hour a 1 h rule may end in, earlier than
# bgp's first. A copy deleted from each generation would leave none; the
# announcement takes the waiting deletion back, its first copy stays.
check "the operator adds a rule with a 50 min lifetime" "$FB" add tl --ttl 50m dst 198.51.100.77
check "bgp stopped while idle" stopped
commits() { head -1 "$S" | awk '{print $NF}'; }
c=$(commits)
{ wd 203.0.113.10/32; ann 203.0.113.10/32; } >&9
kill -CONT "$BP"
committed() { [ "$(commits)" != "$c" ]; }
check "bgp reads both and commits" t_wait_until 10 committed
check "... and is idle" t_wait_until 10 idle
check_eq "... adding nothing and deleting nothing" \
	"$(grep -cE '<stdin>:[56]: [-+]dst 203\.0\.113\.10$' "$T_TMP/bgp.err")" 0
check_eq "the route announced again matches" "$(q tl dst 203.0.113.10)" maybe
check "bgp stopped while idle, again" stopped
# The new content: a rule of the operator's, and his own copy of .8.
printf 'dst 198.51.100.0/24\ndst 203.0.113.8/32\n' >"$T_TMP/list3"
{ wd 203.0.113.7/32; wd 203.0.113.8/32; } >&9
check "load --replace while bgp is stopped" "$FB" load tl "$T_TMP/list3" --replace
kill -CONT "$BP"
gone78() { ! grep -qE 'dst 203\.0\.113\.[78]$' "$S" && idle; }
check "bgp writes its state without the withdrawn routes" t_wait_until 10 gone78
check_eq "the withdrawn rule no longer matches" "$(q tl dst 203.0.113.7)" no
check_eq "the other one: the operator's copy only is left" \
	"$("$FB" count tl dst 203.0.113.8/32 | awk '{print $1}')" 1
check_eq "the replace's rule matches" "$(q tl dst 198.51.100.1)" maybe
check_eq "the routes still held match (carried)" "$(q tl dst 203.0.113.9)$(q tl dst 203.0.113.10)" \
	maybemaybe
check_eq "both deletions reported at their lines" \
	"$(grep -cE '^flowbloom: bgp: <stdin>:(7: -dst 203\.0\.113\.7|8: -dst 203\.0\.113\.8)$' "$T_TMP/bgp.err")" 2
# Destroyed and created again: nothing of bgp's is in the new filter but
# what it adds again. The operator adds .9 himself; bgp's withdrawal of it
# must not take his copy.
check "bgp stopped while idle, a third time" stopped
{ wd 203.0.113.9/32; } >&9
"$FB" destroy tl >/dev/null && "$FB" create tl --capacity 1000 --fp-rate 0.001 --counting >/dev/null &&
	"$FB" add tl dst 203.0.113.9 >/dev/null || fail "destroy, create and add"
kill -CONT "$BP"
gone9() { ! grep -q 'dst 203\.0\.113\.9$' "$S" && idle; }
check "bgp writes its state without it" t_wait_until 10 gone9
check_eq "the operator's copy of .9 is left" "$("$FB" count tl dst 203.0.113.9/32 | awk '{print $1}')" 1
check_eq "... and bgp says it deleted nothing" \
	"$(grep -c '^flowbloom: bgp: <stdin>:9: ?dst 203\.0\.113\.9: no longer in the filter; nothing deleted$' "$T_TMP/bgp.err")" 1
check_eq "the route still held is added again" "$(q tl dst 203.0.113.10)" maybe
check "bgp ends" stop
check_eq "... having deleted two rules" \
	"$(grep -c '; 1 rule held, 5 added and 2 deleted by this run' "$T_TMP/bgp.err")" 1
"$FB" destroy tl >/dev/null

# --- 4. --ttl: a refresh the filter refuses ----------------------------------
# Refreshing needs a new generation (a copy ending a lifetime from now);
# the operator's rules of 15 other lifetimes hold the 15 slots bgp's own
# generation left. A route whose refresh is refused is refused whole, as
# an announcement would be: named once, forgotten, its rules deleted. It
# used to stay in bgp's table and state file, counted as held, after its
# last copy's lifetime ended.
"$FB" create tr --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create tr"
S=$T_TMP/tr.bgp
start tr "$S" --ttl 10s
{ ann 203.0.113.7/32; fs; } >&9
check "bgp --ttl 10s holds a blackhole and a FlowSpec route of 2 keys" \
	t_wait_until 10 in_state "$S" 'udp-to-10 part 2/2'
check_eq "... in the filter" "$(q tr dst 203.0.113.7)$(q tr udp dst 203.0.113.10 dport 53)" maybemaybe
idle() { flock -n "$FLOWBLOOM_ROOT/tr" true; }
# Stopped while the slots fill: its refresh (5 s after its start) comes
# after, while its own generation (ending 10-12.5 s after the routes)
# lives.
check "bgp stopped while idle" stopped
i=0
for l in 600 900 1350 2025 3038 4557 6836 10254 15381 23071 34607 51910 77865 116798 175197; do
	i=$((i + 1))
	"$FB" add tr --ttl "${l}s" dst "198.51.100.$i" >/dev/null || fail "add --ttl ${l}s"
done
"$FB" add tr --ttl 3d dst 198.51.100.99 2>"$T_TMP/add.err"
check_eq "every generation slot in use: add --ttl refuses (status 1)" "$?" 1
check_eq "... saying so, and only that" "$(wc -l <"$T_TMP/add.err") $(grep -c \
	"^flowbloom: all 16 generations of 'tr' hold rules with other lifetimes (they end within [0-9]* s): nothing added\$" \
	"$T_TMP/add.err")" "1 1"
kill -CONT "$BP"
check "bgp's refresh is refused" t_wait_until 15 grep -q "^flowbloom: all 16 generations of 'tr'" "$T_TMP/bgp.err"
check "... and bgp writes its state without the routes" \
	t_wait_until 10 bash -c "! grep -v '^#' '$S' | grep -q $'\t'"
check "... idle" t_wait_until 10 idle
check_eq "the blackhole no longer matches" "$(q tr dst 203.0.113.7)" no
check_eq "... nor either FlowSpec key" \
	"$(q tr udp dst 203.0.113.10 dport 53)$(q tr udp dst 203.0.113.10 dport 1024-2047)" nono
check_eq "the operator's rules match" "$(q tr dst 198.51.100.1)$(q tr dst 198.51.100.15)" maybemaybe
check_eq "each route reported once, without a line" \
	"$(grep -cE "^flowbloom: bgp: '(203\.0\.113\.7/32|flow udp-to-10)' from 198\.51\.100\.9: filter 'tr' refused the rules refreshed; not applied\$" "$T_TMP/bgp.err")" 2
check "bgp ends" stop
check_eq "... holding nothing, having deleted the 3 rules" \
	"$(grep -c '; 0 rules held, 3 added and 3 deleted by this run' "$T_TMP/bgp.err")" 1
"$FB" destroy tr >/dev/null

# --- 5. a deletion queued at start, the filter replaced ---------------------
S=$T_TMP/qd.bgp
cnt() { "$FB" count qd dst "$1" | awk '{print $1}'; }
if command -v strace >/dev/null; then
	for how in replace recreate ttl; do
		"$FB" create qd --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create qd"
		rm -f "$S" "$S".*
		ann 203.0.113.1/32 | "$FB" bgp qd --state "$S" >/dev/null 2>&1
		# Killed before its next write, its journal not writable: only
		# STATE.added names the rule it added (once added: its note
		# before the add, "~AT:MIN", not counted).
		ann 203.0.113.9/32 >"$T_TMP/in"
		(strace -f -qq -o /dev/null -e trace=writev,renameat -e inject=writev:error=ENOSPC:when=1 \
			-e inject=renameat:signal=KILL:when=1 \
			"$FB" bgp qd --state "$S" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
		check_eq "$how: a killed run's rule named in STATE.added only" \
			"$(grep -v $'\t~' "$S.added" | grep -c 'dst 203.0.113.9$') $(grep -c '203.0.113.9' "$S")" "1 0"
		echo 'dst 203.0.113.9' >"$T_TMP/list"
		case $how in
		replace) "$FB" load qd "$T_TMP/list" --replace >/dev/null || fail "load --replace" ;;
		ttl) "$FB" load qd "$T_TMP/list" --replace --ttl 1h >/dev/null || fail "load --replace --ttl" ;;
		*)
			"$FB" destroy qd >/dev/null
			"$FB" create qd --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create qd"
			"$FB" add qd dst 203.0.113.9 >/dev/null
			;;
		esac
		if [ $how = ttl ]; then
			# The permanent rules carried over, the killed run's copy
			# with them; the operator's copy has a lifetime.
			check_eq "... carried over by load --replace --ttl, beside the operator's copy" \
				"$(cnt 203.0.113.9)" 2
			"$FB" bgp qd --state "$S" --ttl 1h </dev/null >/dev/null 2>"$T_TMP/bgp.err"
			check_eq "... bgp --ttl: the killed run's copy deleted, the operator's left, the held route's rule moved (one copy)" \
				"$(cnt 203.0.113.9) $(grep -c -- '^flowbloom: bgp: -dst 203.0.113.9$' "$T_TMP/bgp.err") $(cnt 203.0.113.1)" "1 1 1"
			check_eq "... and says so" "$(grep -c "^flowbloom: bgp: 1 rule added after the last write of .*qd.bgp, by a run that ended before the next: deleted\$" "$T_TMP/bgp.err")" 1
			"$FB" del qd --with-lifetime dst 203.0.113.1 dst 203.0.113.9 >/dev/null 2>&1
			check_eq "... neither left permanent" "$(cnt 203.0.113.1) $(cnt 203.0.113.9)" "0 0"
		else
			check_eq "... the operator's own copy of it in the new array" "$(cnt 203.0.113.9)" 1
			"$FB" bgp qd --state "$S" --ttl 1h </dev/null >/dev/null 2>"$T_TMP/bgp.err"
			check_eq "... bgp --ttl: the operator's copy left, nothing deleted, the held route's rule added again" \
				"$(cnt 203.0.113.9) $(grep -c -- '-dst' "$T_TMP/bgp.err") $(q qd dst 203.0.113.1)" "1 0 maybe"
			check_eq "... nor said deleted (it was, before bgp saw the new array)" \
				"$(grep -c 'added after the last write' "$T_TMP/bgp.err")" 0
		fi
		"$FB" destroy qd >/dev/null
	done
else
	skip "a deletion queued at start, the filter replaced: strace is missing (make deps installs it)"
fi

# --- 6. load --replace --ttl keeps the permanent rules ----------------------
# It replaces the rules with a lifetime only; the permanent rules, bgp's
# without --ttl among them, are carried over as they were, in a new filter
# array. bgp took the new array for a replaced one and added its rules
# again: each counter at 2 for one route, and the withdrawal deleting one
# copy, the route blocked for good (count 1, "maybe"). It also dropped a
# withdrawal it had queued, the rule's copy carried over and never deleted.
"$FB" create kt --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create kt"
S=$T_TMP/kt.bgp
kc() { "$FB" count kt dst "$1" | awk '{print $1}'; }
idle() { flock -n "$FLOWBLOOM_ROOT/kt" true; }
echo 'dst 198.51.100.77' >"$T_TMP/list6"
start kt "$S"
{ ann 203.0.113.7/32; ann 203.0.113.8/32; ann 203.0.113.9/32; } >&9
check "bgp holds three blackholes" t_wait_until 10 in_state "$S" 'dst 203.0.113.9'
head1=$(head -1 "$S")
check "load --replace --ttl by another process" "$FB" load kt "$T_TMP/list6" --replace --ttl 1h
ann 203.0.113.20/32 >&9
state_moved() { [ "$(head -1 "$S")" != "$head1" ] && in_state "$S" 203.0.113.20 && idle; }
check "bgp goes on in the new filter array" t_wait_until 10 state_moved
check_eq "its rules are in it once each (carried over, not added again)" \
	"$(kc 203.0.113.7)$(kc 203.0.113.8)$(kc 203.0.113.9)" 111
check_eq "... and bgp says it added none again" \
	"$(grep -c 'was replaced: adding' "$T_TMP/bgp.err")" 0
check_eq "the replace's rule with a lifetime matches" "$(q kt dst 198.51.100.77)" maybe
wd 203.0.113.7/32 >&9
gone7() { ! grep -v '^#' "$S" | grep -q 'dst 203\.0\.113\.7$' && idle; }
check "bgp writes its state without the withdrawn route" t_wait_until 10 gone7
check_eq "the withdrawn route's rule is out of the filter" "$(kc 203.0.113.7) $(q kt dst 203.0.113.7)" "0 no"
# A withdrawal read just before bgp sees the new array (bgp stopped while
# idle): queued, then carried over with the rule: deleted all the same.
check "bgp stopped while idle" stopped
wd 203.0.113.8/32 >&9
check "load --replace --ttl while bgp is stopped" "$FB" load kt "$T_TMP/list6" --replace --ttl 1h
kill -CONT "$BP"
gone8() { ! grep -v '^#' "$S" | grep -q 'dst 203\.0\.113\.8$' && idle; }
check "bgp writes its state without it" t_wait_until 10 gone8
check_eq "its queued deletion took the rule out" "$(kc 203.0.113.8) $(q kt dst 203.0.113.8)" "0 no"
check "bgp ends" stop
# At start: the state file names the permanent rules the filter carried.
check "load --replace --ttl while no bgp runs" "$FB" load kt "$T_TMP/list6" --replace --ttl 1h
wd 203.0.113.9/32 | "$FB" bgp kt --state "$S" >/dev/null 2>"$T_TMP/bgp.err"
check_eq "a restart adds nothing again, and its withdrawal deletes the rule" \
	"$(grep -c 'was replaced: adding' "$T_TMP/bgp.err") $(kc 203.0.113.9) $(kc 203.0.113.20)" "0 0 1"
# A plain load --replace replaces the permanent rules: bgp adds its own again.
check "load --replace" "$FB" load kt "$T_TMP/list6" --replace
"$FB" bgp kt --state "$S" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
check_eq "... bgp adds its rule again, once" \
	"$(grep -c "filter 'kt' was replaced: adding its 1 BGP rules again" "$T_TMP/bgp.err") $(kc 203.0.113.20)" "1 1"
# bgp --ttl, its state file's rules permanent: moved into the generations,
# the permanent copy deleted, also after a load --replace --ttl (it was
# left for good: taken for the old array's).
check "load --replace --ttl" "$FB" load kt "$T_TMP/list6" --replace --ttl 1h
"$FB" bgp kt --state "$S" --ttl 1h </dev/null >/dev/null 2>"$T_TMP/bgp.err"
check_eq "bgp --ttl moves the rule: one copy, with a lifetime" \
	"$(kc 203.0.113.20) $(grep -c 'rules with-lifetime' "$S")" "1 1"
"$FB" del kt --with-lifetime dst 203.0.113.20 >/dev/null 2>&1
check_eq "... none left permanent" "$(kc 203.0.113.20)" 0
"$FB" destroy kt >/dev/null

# A state file of an earlier build (no "# permanent-id" line) naming the
# filter's array whose permanent rules an earlier load --replace --ttl
# carried: they are the ones the head names. bgp took the array's own
# identity, so the next load --replace --ttl looked like a plain replace:
# its rules added again beside themselves, the withdrawn route blocked.
"$FB" create kt --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create kt"
S=$T_TMP/kt6.bgp
check "load --replace --ttl before bgp" "$FB" load kt "$T_TMP/list6" --replace --ttl 1h
{ ann 203.0.113.7/32; ann 203.0.113.8/32; } | "$FB" bgp kt --state "$S" >/dev/null 2>&1
sed -i '/^# permanent-id /d' "$S"
ann 203.0.113.9/32 | "$FB" bgp kt --state "$S" >/dev/null 2>"$T_TMP/bgp.err"
check_eq "an earlier build's state file read: nothing added again" \
	"$(grep -c 'was replaced: adding' "$T_TMP/bgp.err") $(kc 203.0.113.7)" "0 1"
check "load --replace --ttl" "$FB" load kt "$T_TMP/list6" --replace --ttl 1h
wd 203.0.113.7/32 | "$FB" bgp kt --state "$S" >/dev/null 2>"$T_TMP/bgp.err"
check_eq "... after the next load --replace --ttl, nothing added again; the withdrawal deletes the rule" \
	"$(grep -c 'was replaced: adding' "$T_TMP/bgp.err") $(kc 203.0.113.7) $(kc 203.0.113.8) $(q kt dst 203.0.113.7)" "0 0 1 no"
"$FB" destroy kt >/dev/null

# --- 7. merge, intersect and fold into the filter bgp writes ----------------
# ke: an empty filter of kt's key and geometry (an export imported). For
# each verb, bgp holds one route; the verb runs while bgp reads its FIFO;
# a /32 after it to know bgp saw the new array; then the withdrawal.
"$FB" create kt --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create kt"
"$FB" export kt "$T_TMP/kt.fbx" >/dev/null && "$FB" import "$T_TMP/kt.fbx" ke >/dev/null ||
	fail "import ke"
S=$T_TMP/kt7.bgp
start kt "$S"
n=0
state_moved() { [ "$(head -1 "$S")" != "$head1" ] && in_state "$S" "dst $m\$" && idle; }
# (fold last: ke is of kt's size)
# (intersect kt ke --into kt is refused while bgp holds a rule: 8 and 9)
for v in "merge kt ke --into kt" "merge ke kt --into kt" "intersect kt kt --into kt" \
	"merge ke ke --into kt" "fold kt"; do
	n=$((n + 1))
	a=203.0.113.$((100 + n)) m=203.0.113.$((200 + n))
	ann $a/32 >&9
	check "$v: bgp holds $a" t_wait_until 10 in_state "$S" "dst $a\$"
	head1=$(head -1 "$S")
	again=$(grep -c "was replaced: adding" "$T_TMP/bgp.err")
	check "$v" "$FB" $v
	ann $m/32 >&9
	check "$v: bgp goes on" t_wait_until 10 state_moved
	case $v in
	"merge ke ke"*) want="1 1" ;; # replaced: added again, once
	*) want="1 0" ;;                              # kept: not added again
	esac
	check_eq "$v: bgp's rule once in the filter; added again: $want" \
		"$(kc $a) $(($(grep -c "was replaced: adding" "$T_TMP/bgp.err") - again))" "$want"
	wd $a/32 >&9
	gone() { ! grep -v '^#' "$S" | grep -q "dst $a\$" && idle; }
	check "$v: bgp writes its state without the withdrawn route" t_wait_until 10 gone
	check_eq "$v: the withdrawn route's rule is out of the filter" \
		"$(kc $a) $(q kt dst $a)" "0 no"
done
check "bgp ends" stop
"$FB" destroy kt >/dev/null
"$FB" destroy ke >/dev/null

# --- 8. an intersection with another filter holding a rule of bgp's ------
# ke holds the operator's copy of 203.0.113.150 too: `intersect KI ke --into
# KI` kept it (the smaller count: bgp's copy), bgp found new permanent rules
# and added its own again, and the route's withdrawal left the rule
# blocking. Refused while bgp's state file (the default place) names KI's
# permanent rules, running or stopped; allowed once it holds no path.
KI=bgpi$$
KS=/run/flowbloom/$KI.bgp
cleanup() {
	exec 9>&- 2>/dev/null
	[ -n "$BP" ] && t_kill "$BP" && wait "$BP" 2>/dev/null
	rm -f "$KS" "$KS".*
}
kk() { "$FB" count $KI dst "$1" | awk '{print $1}'; }
mkdir -p /run/flowbloom
"$FB" create $KI --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create $KI"
"$FB" export $KI "$T_TMP/ki.fbx" >/dev/null && "$FB" import "$T_TMP/ki.fbx" ke >/dev/null ||
	fail "import ke"
"$FB" add ke dst 203.0.113.150 >/dev/null
start $KI "$KS"
ann 203.0.113.150/32 >&9
check "bgp holds 203.0.113.150" t_wait_until 10 in_state "$KS" "dst 203.0.113.150\$"
t_refused 1 "intersect $KI ke --into $KI under a running bgp: refused" \
	"holds the rules of flowbloom bgp ($KS names them).*nothing changed" \
	"$FB" intersect $KI ke --into $KI
check "... an intersection of $KI with itself only is not" "$FB" intersect $KI $KI --into $KI
check "... nor a merge into it" "$FB" merge $KI ke --into $KI
check_eq "... 203.0.113.150: bgp's copy and ke's merged in" "$(kk 203.0.113.150)" 2
wd 203.0.113.150/32 >&9
gone() { ! grep -v '^#' "$KS" | grep -q "dst 203.0.113.150\$" && flock -n "$FLOWBLOOM_ROOT/$KI" true; }
check "... bgp writes its state without the withdrawn route" t_wait_until 10 gone
check_eq "... its withdrawal leaves ke's copy only" "$(kk 203.0.113.150)" 1
"$FB" del $KI dst 203.0.113.150 >/dev/null
ann 203.0.113.151/32 >&9
check "bgp holds 203.0.113.151" t_wait_until 10 in_state "$KS" "dst 203.0.113.151\$"
check "bgp ends" stop
"$FB" add ke dst 203.0.113.151 >/dev/null
t_refused 1 "... under a stopped bgp whose state names them: refused" \
	"holds the rules of flowbloom bgp" "$FB" intersect ke $KI --into $KI
check_eq "... nothing changed" "$(kk 203.0.113.151)" 1
"$FB" bgp $KI --state "$KS" --flush >/dev/null 2>&1
check "... once bgp holds no path: allowed" "$FB" intersect $KI ke --into $KI
"$FB" destroy $KI >/dev/null
"$FB" destroy ke >/dev/null
rm -f "$KS" "$KS".*

# --- 9. the same with the state file elsewhere (--state) ---------------------
# Only /run/flowbloom/NAME.bgp was looked at: a bgp started with --state
# elsewhere was not seen, and the intersection went through (bgp's rule
# counted twice after it, its withdrawal leaving it blocking). Each bgp
# records its state file in /run/flowbloom/bgp-NAME[-HASH].feeds, running
# or stopped; a file that no longer exists leaves the record.
KS=$T_TMP/elsewhere/$KI.bgp
mkdir -m 0700 "$T_TMP/elsewhere"
"$FB" create $KI --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create $KI"
"$FB" export $KI "$T_TMP/ki.fbx" >/dev/null && "$FB" import "$T_TMP/ki.fbx" ke >/dev/null ||
	fail "import ke"
"$FB" add ke dst 203.0.113.160 >/dev/null
start $KI "$KS"
ann 203.0.113.160/32 >&9
check "bgp --state elsewhere holds 203.0.113.160" t_wait_until 10 in_state "$KS" "dst 203.0.113.160\$"
t_refused 1 "intersect $KI ke --into $KI under a running bgp, --state elsewhere: refused" \
	"holds the rules of flowbloom bgp ($KS names them).*nothing changed" \
	"$FB" intersect $KI ke --into $KI
check_eq "... nothing changed" "$(kk 203.0.113.160)" 1
check "bgp ends" stop
t_refused 1 "... stopped: refused" "($KS names them)" "$FB" intersect ke $KI --into $KI
# A second state file for the same filter (its own lock): both recorded.
KS2=$T_TMP/elsewhere/second.bgp
start $KI "$KS2"
check "a second bgp with its own state file ends" stop
rec=$(ls /run/flowbloom/bgp-$KI-*.feeds)
check_eq "the record names both, root's, 0600" \
	"$(grep -c "^$T_TMP/elsewhere/" "$rec") $(stat -c %U:%a "$rec")" "2 root:600"
t_refused 1 "... refused still" "($KS names them)" "$FB" intersect ke $KI --into $KI
"$FB" bgp $KI --state "$KS" --flush >/dev/null 2>&1
check "... once bgp holds no path: allowed" "$FB" intersect $KI ke --into $KI
rm -f "$KS2" "$KS2".*
start $KI "$KS"
check "bgp starts again" stop
check_eq "... a state file gone leaves the record" "$(grep -c "second.bgp" "$rec")" 0
# bgp killed after adding its first rule, before the state file names it
# (its renameat after the line): STATE.added names it, and the
# intersection is refused as well (it was allowed: the next bgp, adding
# the route of its journal again to the new array, counted it twice).
if command -v strace >/dev/null; then
	"$FB" add ke dst 203.0.113.170 >/dev/null
	ann 203.0.113.170/32 >"$T_TMP/in"
	rm -f "$KS" "$KS".* # (the 1st rename: the state file written at start)
	(strace -f -qq -o /dev/null -P "$T_TMP/elsewhere" -e trace=renameat \
		-e inject=renameat:signal=KILL:when=2 \
		"$FB" bgp $KI --state "$KS" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"
	exit $?) 2>/dev/null
	check_eq "bgp killed before its write: the rule in the filter, named in STATE.added only" \
		"$? $(kk 203.0.113.170) $(grep -v $'\t~' "$KS.added" | grep -c 203.0.113.170) $(grep -c 203.0.113.170 "$KS")" \
		"137 1 1 0"
	t_refused 1 "... intersect $KI ke --into $KI: refused" "($KS names them)" \
		"$FB" intersect $KI ke --into $KI
	"$FB" bgp $KI --state "$KS" </dev/null >/dev/null 2>&1
	check_eq "... the next bgp holds the route, once" \
		"$(kk 203.0.113.170) $(grep -c 203.0.113.170 "$KS")" "1 1"
	"$FB" bgp $KI --state "$KS" --flush >/dev/null 2>&1
	check "... flushed: allowed" "$FB" intersect $KI ke --into $KI
else
	skip "bgp killed before its write: strace not installed"
fi
"$FB" destroy $KI >/dev/null
"$FB" destroy ke >/dev/null
t_end
