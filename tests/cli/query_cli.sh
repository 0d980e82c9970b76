#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `query NAME RULE` and `count NAME RULE` answer for the rules as they were
# put in, whichever way they came.
#
# A list of six prefix lengths loaded into a filter that takes four keeps
# the rarer ones expanded into longer lengths (`load`), or all of them in
# one length (`load --replace`): `query src P` says `maybe` for every
# prefix P of the list, saying which length holds it (text and -j), and
# `no` for a prefix of a held length's neighbour that was never loaded
# and for one only half of whose expansion is there; a counting, cuckoo
# and d-left filter's `count` counts an expanded prefix as often as it was
# loaded, and `del` (of one such prefix, or -f of the list, as often as it
# was loaded) takes out its pieces, a note saying so, until the filter is
# empty; rules loaded with a lifetime (a generation with lengths of its
# own) answer the same while they last and `no` once they end, and `del`
# takes them out of the generation the same way (`--with-lifetime` or
# not; `--permanent` finds none there). `query`, `count` and `del -f` read
# the list as load read it (bare prefixes). A list naming a rule more than
# once (a line twice, a range and its prefix, overlapping shapes): load
# holds it once and `del -f` of the list takes out exactly that (counting,
# cuckoo, d-left, exact sets, a lifetime), a note naming the first line
# given again; `add -f` takes each rule once too (del -f undoes it);
# arguments are each a copy, and deleting a rule more often than held is
# refused.
#
# `--confirm exact`: a filter saturated so that one never-added 5-tuple in
# three is a Bloom hit answers `yes` for every rule added and `no` for
# every other (the exact sets decide, as on the data path), an expanded
# prefix `yes` too; a filter without it says `maybe`. The summary line and
# -j counts (`yes`, `maybe`, `total`); exit 0 whatever the answers.
source "$(dirname "$0")/../lib/lib.sh"
t_begin query_cli
t_traps

cat >"$T_TMP/six.txt" <<'EOF'
198.51.96.0/19
203.0.112.0/20
198.18.0.0/21
198.19.8.0/22
198.19.16.0/23
198.19.20.0/24
EOF
mapfile -t SIX <"$T_TMP/six.txt"
sed 's/^/src /' "$T_TMP/six.txt" >"$T_TMP/six_src.txt"
QSIX=()
for p in "${SIX[@]}"; do QSIX+=(src "$p"); done
# answers NAME RULE...: the first word of each line but the summary.
answers() { "$FB" query "$@" 2>&1 | sed '$d' | awk '{print $1}' | tr '\n' ' '; }

# load keeps /19 /20 /22 /24: the /21 is two /22s, the /23 two /24s.
"$FB" create l --capacity 1000 --fp-rate 0.001 >/dev/null || fail "create l"
"$FB" load l "$T_TMP/six.txt" >/dev/null 2>&1 || fail "load l"
check_eq "load: every prefix loaded says maybe" "$(answers l "${QSIX[@]}")" \
	"maybe maybe maybe maybe maybe maybe "
line=$("$FB" query l src 198.18.0.0/21 | head -1)
check_eq "load: the expanded /21 says how it is held" "$line" \
	"maybe src 198.18.0.0/21 (as its 2 /22 prefixes: load expanded it)"
check_eq "load: -j names the length that holds it" \
	"$("$FB" -j query l src 198.18.0.0/21 src 198.19.20.0/24 |
		t_json "[(r['result'], r.get('expanded_to')) for r in d['results']]")" \
	"[('maybe', 22), ('maybe', None)]"
# Never loaded: a /21 beside the loaded one; a /23 only half there.
"$FB" add l src 198.19.32.0/24 >/dev/null
check_eq "load: a prefix not loaded, or half of one, says no" \
	"$(answers l src 198.18.8.0/21 src 198.19.32.0/23)" "no no "

# load --replace: one length, /24, for the six.
"$FB" load l "$T_TMP/six.txt" --replace >/dev/null 2>&1 || fail "load --replace l"
check_eq "load --replace: only /24 held" "$("$FB" -j info l | t_json "[x['length'] for x in d['prefix_lengths']]")" "[24]"
check_eq "load --replace: every prefix loaded says maybe" "$(answers l "${QSIX[@]}")" \
	"maybe maybe maybe maybe maybe maybe "
check_eq "load --replace: the /19 held as its 32 /24s" "$("$FB" query l src 198.51.96.0/19 | head -1)" \
	"maybe src 198.51.96.0/19 (as its 32 /24 prefixes: load expanded it)"
check_eq "load --replace: a /21 not loaded says no" "$(answers l src 198.18.8.0/21)" "no "

# count: as often as loaded, on every type that counts.
for t in "--counting" "--type cuckoo" "--type dleft"; do
	n=c${t##* }
	# shellcheck disable=SC2086 # the type's option words
	"$FB" create "$n" --capacity 1000 --fp-rate 0.001 $t >/dev/null || fail "create $n"
	"$FB" load "$n" "$T_TMP/six.txt" >/dev/null 2>&1 || fail "load $n"
	"$FB" load "$n" "$T_TMP/six.txt" >/dev/null 2>&1 || fail "load $n again"
	check_eq "$t: count of the expanded /21 and /23" \
		"$("$FB" count "$n" src 198.18.0.0/21 src 198.19.16.0/23 src 198.18.8.0/21 | awk '{print $1}' | tr '\n' ' ')" \
		"2 2 0 "
	check_eq "$t: count -j names the length that holds the expanded /21, as query -j" \
		"$("$FB" -j count "$n" src 198.18.0.0/21 src 198.19.20.0/24 src 198.18.8.0/21 |
			t_json "[(r['count'], r.get('expanded_to')) for r in d['results']]")" \
		"[(2, 22), (2, None), (0, None)]"
	check_eq "$t: query of every prefix loaded" "$(answers "$n" "${QSIX[@]}")" \
		"maybe maybe maybe maybe maybe maybe "
	# del takes what load put in: an expanded prefix as its pieces.
	"$FB" del "$n" --force src 198.18.0.0/21 >/dev/null 2>"$T_TMP/err"
	check_eq "$t: del of the expanded /21: exit 0" "$?" 0
	check_eq "$t: ... says how" "$(cat "$T_TMP/err")" \
		"flowbloom: note: 1 prefix is held as 2 longer prefixes (load expanded it): deleting those"
	check_eq "$t: ... one copy of its pieces gone" \
		"$("$FB" count "$n" src 198.18.0.0/22 src 198.18.4.0/22 | awk '{print $1}' | tr '\n' ' ')" "1 1 "
	"$FB" add "$n" src 198.18.0.0/22 src 198.18.4.0/22 >/dev/null || fail "$t: add the pieces back"
	# query, count and del -f read the list as load read it (bare
	# prefixes), or written as FLOWs.
	check_eq "$t: query -f of the list loaded" "$(answers "$n" -f "$T_TMP/six.txt")" \
		"maybe maybe maybe maybe maybe maybe "
	check_eq "$t: count -f of the list loaded" \
		"$("$FB" count "$n" -f "$T_TMP/six.txt" | awk '{print $1}' | tr '\n' ' ')" "2 2 2 2 2 2 "
	for i in 1 2; do
		l=$T_TMP/six.txt
		[ $i = 2 ] && l=$T_TMP/six_src.txt
		"$FB" del "$n" --force -f "$l" >/dev/null 2>&1
		check_eq "$t: del -f of the list loaded (${l##*/}), copy $i: exit 0" "$?" 0
	done
	check_eq "$t: ... every prefix of it gone" "$(answers "$n" "${QSIX[@]}")" "no no no no no no "
	check_eq "$t: ... the filter empty" "$("$FB" -j info "$n" | t_json "d['flows']")" 0
	"$FB" del "$n" --force -f "$T_TMP/six_src.txt" 2>"$T_TMP/err" >/dev/null
	check_eq "$t: a third del -f: exit 1" "$?" 1
	check "$t: ... naming the first line held no more" grep -q "six_src.txt:1: 'src 198.51.96.0/19' is not in filter" "$T_TMP/err"
done

# A list naming a rule more than once (a line twice, a range and the
# prefix it is, two overlapping shapes making one key) beside prefixes
# load expands: load holds each rule once, and del -f of the list takes
# out exactly that, on every filter that forgets, with exact sets, and
# with a lifetime.
cat >"$T_TMP/dups1.txt" <<'EOF'
; a Spamhaus DROP line, then the same prefix as a range and as a FLOW
198.51.100.0/26 ; SBL000001
198.51.100.0-198.51.100.63
src 198.51.100.0/26
198.51.100.77
198.51.100.77   # again
udp dport 53
udp dst 0.0.0.0/0 dport 53
2001:db8:1::/48
EOF
cat "$T_TMP/dups1.txt" "$T_TMP/six.txt" >"$T_TMP/dups.txt"
note="flowbloom: note: $T_TMP/dups.txt names 4 rules again (the first at $T_TMP/dups.txt:3): each deleted once, as \`load\` holds it"
for t in "--counting" "--counting --confirm exact" "--type cuckoo --confirm exact" "--type dleft"; do
	n=d$(echo "$t" | tr -dc 'a-z' | cut -c1-12)
	# shellcheck disable=SC2086 # the type's option words
	"$FB" create "$n" --capacity 1000 --fp-rate 0.001 $t >/dev/null || fail "create $n"
	"$FB" load "$n" "$T_TMP/dups.txt" >/dev/null 2>&1 || fail "load $n"
	check_eq "$t: count -f of a list naming rules again: each held once" \
		"$("$FB" count "$n" -f "$T_TMP/dups.txt" | awk '{print $1}' | sort -u | tr '\n' ' ')" "1 "
	"$FB" del "$n" --force -f "$T_TMP/dups.txt" >"$T_TMP/out" 2>"$T_TMP/err"
	check_eq "$t: del -f of that list after its load: exit 0" "$?" 0
	check "$t: ... a note names the first line naming a rule again" grep -qxF "$note" "$T_TMP/err"
	check_eq "$t: ... the filter empty" "$("$FB" -j info "$n" | t_json "d['flows']")" 0
	check_eq "$t: ... every rule gone" "$(answers "$n" -f "$T_TMP/dups.txt" | tr ' ' '\n' | sort -u | tr '\n' ' ')" "no "
	check "$t: ... and the filter clean" "$FB" check "$n"
done
"$FB" create dt --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create dt"
"$FB" load dt --ttl 1h "$T_TMP/dups1.txt" >/dev/null 2>&1 || fail "load --ttl dt"
check "--ttl: del -f of the list after its load" "$FB" del dt -f "$T_TMP/dups1.txt"
check_eq "--ttl: ... every rule gone" "$(answers dt -f "$T_TMP/dups1.txt" | tr ' ' '\n' | sort -u | tr '\n' ' ')" "no "
# add -f takes a file's rules once each too (the note says so), so del -f
# of the same file undoes it.
"$FB" add dcounting -f "$T_TMP/dups1.txt" >/dev/null 2>"$T_TMP/err" || fail "add -f dcounting"
check "add -f: a note names the first line naming a rule again" grep -q "each added once" "$T_TMP/err"
check_eq "add -f: a line given twice counts 1" "$("$FB" count dcounting src 198.51.100.77 | awk '{print $1}')" 1
"$FB" del dcounting -f "$T_TMP/dups1.txt" >/dev/null 2>&1
check_eq "add -f, del -f: nothing left" \
	"$("$FB" count dcounting src 198.51.100.77 src 2001:db8:1::/48 | awk '{print $1}' | tr '\n' ' ')" "0 0 "
# Arguments are each a copy: added twice, counted twice; deleted more often
# than held, refused.
"$FB" add dcounting src 198.51.100.77 src 198.51.100.77 >/dev/null || fail "add twice"
check_eq "add of a rule twice as arguments: counts 2" "$("$FB" count dcounting src 198.51.100.77 | awk '{print $1}')" 2
check "del of it once" "$FB" del dcounting src 198.51.100.77
t_refused 1 "del of a rule twice, held once: refused" \
	"argument 3: 'src 198.51.100.77' is deleted more often than filter 'dcounting' holds it: argument 1 deletes it too" \
	"$FB" del dcounting src 198.51.100.77 src 198.51.100.77
check "... deleted once, it goes" "$FB" del dcounting src 198.51.100.77
# A refused add -f or del -f adds or deletes nothing: its only line is the
# refusal, no note of rules "each added once" (or deleted).
printf '198.51.100.0/24\n198.51.100.0/24\n198.51.0.0/16\n203.0.113.0/25\n203.0.113.128/26\n203.0.0.0/17\n' \
	>"$T_TMP/dupsbad.txt"
"$FB" create dr --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create dr"
t_refused 1 "add -f refused (a 5th length), a rule named twice: the refusal alone" \
	"dupsbad.txt:6: 'src 203.0.0.0/17': .*; nothing added" "$FB" add dr -f "$T_TMP/dupsbad.txt"
t_refused 1 "del -f refused (not held), a rule named twice: the refusal alone" \
	"dupsbad.txt:1: 'src 198.51.100.0/24' is not in filter 'dr'" "$FB" del dr -f "$T_TMP/dupsbad.txt"
"$FB" create dr2 --capacity 1000 --fp-rate 0.001 --type cuckoo --confirm exact >/dev/null ||
	fail "create dr2"
t_refused 1 "del -f refused by the exact sets, a rule named twice: the refusal alone" \
	"dupsbad.txt:1: 'src 198.51.100.0/24' is not in filter 'dr2' (not in its exact set); nothing deleted" \
	"$FB" del dr2 -f "$T_TMP/dupsbad.txt"

# Rules with a lifetime: a generation's own lengths, and their end.
"$FB" create t --capacity 1000 --fp-rate 0.001 >/dev/null || fail "create t"
"$FB" load t --ttl 1h "$T_TMP/six.txt" >/dev/null 2>&1 || fail "load --ttl 1h"
check_eq "--ttl: every prefix loaded says maybe" "$(answers t "${QSIX[@]}")" \
	"maybe maybe maybe maybe maybe maybe "
"$FB" create t2 --capacity 1000 --fp-rate 0.001 >/dev/null || fail "create t2"
"$FB" load t2 --ttl 1s "$T_TMP/six.txt" >/dev/null 2>&1 || fail "load --ttl 1s"
check_eq "--ttl 1s: while it lasts" "$(answers t2 src 198.18.0.0/21)" "maybe "
sleep 1.5 # the generation ends within a quarter of the lifetime after it
check_eq "--ttl 1s: once it has ended" "$(answers t2 "${QSIX[@]}")" "no no no no no no "

# del of rules with a lifetime load expanded: out of the generation, as
# its pieces (by the generation's lengths), whichever part del is told.
"$FB" create tc --counting --capacity 1000 --fp-rate 0.001 >/dev/null || fail "create tc"
"$FB" load tc --ttl 1h "$T_TMP/six.txt" >/dev/null 2>&1 || fail "load tc --ttl 1h"
"$FB" load tc --ttl 1h "$T_TMP/six.txt" >/dev/null 2>&1 || fail "load tc --ttl 1h again"
check_eq "--ttl, counting: count of the expanded /21" \
	"$("$FB" count tc src 198.18.0.0/21 | awk '{print $1}')" 2
check_eq "--ttl, counting: count -j names the length the generations hold it at" \
	"$("$FB" -j count tc src 198.18.0.0/21 | t_json "[(r['count'], r.get('expanded_to')) for r in d['results']]")" \
	"[(2, 22)]"
"$FB" del tc src 198.18.0.0/21 >/dev/null 2>"$T_TMP/err"
check_eq "--ttl, counting: del of the expanded /21: exit 0" "$?" 0
check_eq "--ttl, counting: ... says how" "$(cat "$T_TMP/err")" \
	"flowbloom: note: 1 prefix is held as 2 longer prefixes (load expanded it): deleting those"
"$FB" del tc --with-lifetime src 198.18.0.0/21 >/dev/null 2>&1
check_eq "--ttl, counting: del --with-lifetime of it: exit 0" "$?" 0
check_eq "--ttl, counting: ... both copies gone" \
	"$("$FB" count tc src 198.18.0.0/21 src 198.18.0.0/22 | awk '{print $1}' | tr '\n' ' ')" "0 0 "
"$FB" del tc -f "$T_TMP/six_src.txt" --with-lifetime >/dev/null 2>&1
check_eq "--ttl, counting: del -f of the list (the /21 already out): exit 1" "$?" 1
grep -v 198.18.0.0/21 "$T_TMP/six_src.txt" >"$T_TMP/five_src.txt"
for i in 1 2; do
	"$FB" del tc -f "$T_TMP/five_src.txt" >/dev/null 2>&1
	check_eq "--ttl, counting: del -f of the rest, copy $i: exit 0" "$?" 0
done
check_eq "--ttl, counting: ... every prefix of it gone" "$(answers tc "${QSIX[@]}")" \
	"no no no no no no "
"$FB" del tc --permanent src 198.51.96.0/19 >/dev/null 2>"$T_TMP/err"
check_eq "--ttl, counting: del --permanent of what only a generation held: exit 1" "$?" 1

# --confirm exact: the exact sets decide. k=1 in one chunk with 100,000
# flows: about one never-added flow in three is a Bloom hit.
"$PY" -c '
for i in range(100000):
    print("udp 198.51.100.%d:%d 203.0.113.1:53" % (i % 250, 1 + i // 250))' >"$T_TMP/in.txt"
"$PY" -c '
for i in range(3000):
    print("udp 203.0.113.%d:%d 198.51.100.1:53" % (i % 250, 1 + i // 250))' >"$T_TMP/out.txt"
head -3000 "$T_TMP/in.txt" >"$T_TMP/in3k.txt"
for c in e p; do
	opt=()
	[ $c == e ] && opt=(--confirm exact)
	"$FB" create $c --bits 2048 --hashes 1 "${opt[@]}" >/dev/null || fail "create $c"
	"$FB" add $c -f "$T_TMP/in.txt" >/dev/null || fail "add $c"
done
hits=$("$FB" -j query p -f "$T_TMP/out.txt" | t_json "d['maybe']")
if [ "${hits:-0}" -gt 300 ]; then pass "without --confirm: $hits of 3000 never added say maybe"; else
	fail "without --confirm: only '$hits' of 3000 Bloom hits: the filter is not saturated"
fi
check_eq "without --confirm: -j counts" \
	"$("$FB" -j query p -f "$T_TMP/in3k.txt" | t_json "(d['maybe'], d['yes'], d['total'])")" "(3000, 0, 3000)"
check_eq "--confirm exact: never added, all no" \
	"$("$FB" -j query e -f "$T_TMP/out.txt" | t_json "(d['maybe'], d['yes'], d['total'], set(r['result'] for r in d['results']))")" \
	"(0, 0, 3000, {'no'})"
check_eq "--confirm exact: added, all yes" \
	"$("$FB" -j query e -f "$T_TMP/in3k.txt" | t_json "(d['maybe'], d['yes'], d['total'], set(r['result'] for r in d['results']))")" \
	"(0, 3000, 3000, {'yes'})"
check_eq "--confirm exact: the text" \
	"$("$FB" query e udp 198.51.100.0:1 203.0.113.1:53 udp 203.0.113.0:1 198.51.100.1:53)" \
	"yes   udp 198.51.100.0:1 203.0.113.1:53
no    udp 203.0.113.0:1 198.51.100.1:53
1 of 2 yes"
"$FB" load e "$T_TMP/six.txt" >/dev/null 2>&1 || fail "load e"
check_eq "--confirm exact: expanded prefixes say yes" "$(answers e "${QSIX[@]}" src 198.18.8.0/21)" \
	"yes yes yes yes yes yes no "
check_eq "--confirm exact: an address under a loaded prefix" "$(answers e src 198.18.3.7 src 198.18.9.7)" "yes no "

# Exit status: 0 whatever the answers (docs/cli.md: a failure is 1).
"$FB" query p udp 203.0.113.0:1 198.51.100.1:53 >/dev/null
check_eq "all no: exit 0" "$?" 0

t_finish
