#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Export files from a fuzzer: every verb that reads one must accept it or
# refuse it alike, for the same reason, and what is accepted must be a
# filter every verb then handles. Six filters (plain, classic counting,
# counting with exact sets, cuckoo, d-left, scalable) are exported, and
# fbx_gen.py writes a few hundred variants of them: header fields at and
# past the edges of their range (type, nblocks, flows = 2^64 - 1, prefix
# lengths), counters that contradict their bits, exact-set entries that
# are no rules, count 0 or twice, truncations, trailing bytes, random bit
# flips (the CRC fixed up, so the content checks must catch what is
# wrong). For each: `import` and the set algebra's reader (`card`, `merge`)
# both refuse with the same reason, or both accept (a cuckoo, d-left or
# scalable file is then refused by the set algebra as not a Bloom filter);
# an accepted file's filter passes `check` (clean), answers `info`,
# `query`, exports again byte for byte (without exact sets, whose order is
# the hash map's), and merges; every command ends within 20 s (no hang)
# and by exit, not by a signal. FBX_FUZZ_SEED picks other random flips.
source "$(dirname "$0")/../lib/lib.sh"
t_begin fbx_fuzz
trap 't_cleanup_filters; rm -rf "$T_TMP"' EXIT

SEED=${FBX_FUZZ_SEED:-17}
MAXLEN=$(sed -nE 's/^#define FB_MAX_LENGTHS ([0-9]+).*/\1/p' "$(dirname "$0")/../../include/flowbloom/prefix.h")
mkdir -p "$T_TMP/base" "$T_TMP/v"

# run CMD...: the flowbloom command with a deadline; output in $T_TMP/o and
# $T_TMP/e, status in RC. A hang or a signal is a failure of its own.
run() {
	timeout -s KILL 20 "$FB" "$@" >"$T_TMP/o" 2>"$T_TMP/e"
	RC=$?
	if [ "$RC" -eq 137 ]; then
		fail "$DESC: '$*' did not end within 20 s"
	elif [ "$RC" -ge 128 ]; then
		fail "$DESC: '$*' died by signal $((RC - 128))"
	fi
}
# ok LABEL CMD...: the command must succeed.
ok() {
	local label=$1
	shift
	run "$@"
	[ "$RC" -eq 0 ] && return 0
	fail "$DESC: $label: exit $RC: $(head -c 300 "$T_TMP/e")"
	return 1
}

base() { # NAME CREATE-OPTIONS...: a filter with rules of every kind, exported
	local n=$1
	shift
	"$FB" create "$n" "$@" >/dev/null || fail "create $n $*"
	"$FB" add "$n" src 198.51.100.0/24 dst 2001:db8:5::/48 src 203.0.113.7 \
		udp 198.51.100.1:53 203.0.113.7:4000 tcp "[2001:db8::1]:443" "[2001:db8::2]:5000" \
		>/dev/null || fail "add to $n"
	"$FB" export "$n" "$T_TMP/base/$n.fbx" --plain >/dev/null || fail "export $n"
	"$FB" destroy "$n" >/dev/null
}
base plain --bits 4096 --hashes 4
base counting --bits 2048 --hashes 3 --layout classic --counter-bits 4
base exact --capacity 100 --fp-rate 0.01 --counter-bits 8 --confirm exact
base cuckoo --type cuckoo --capacity 200 --fp-rate 0.01
base dleft --type dleft --capacity 200 --fp-rate 0.01
base scalable --grow --capacity 100 --fp-rate 0.01
python3 "$(dirname "$0")/fbx_gen.py" "$T_TMP/v" "$SEED" "$MAXLEN" "$T_TMP"/base/*.fbx ||
	fail "fbx_gen.py"

# WHY from "flowbloom: FILE: WHY[; nothing imported|merged]".
why() { sed -E "s|^flowbloom: [^:]*: ||; s/; nothing (imported|merged)\$//" "$T_TMP/e" | head -1; }

# The filters a variant made, whatever happened to it.
tidy() {
	local x
	for x in iv mv jv; do
		[ -d "$FLOWBLOOM_ROOT/$x" ] && "$FB" destroy "$x" >/dev/null 2>&1
	done
	return 0
}

accepted=0
refused=0
while IFS=$'\t' read -r n DESC; do
	tidy
	V=$T_TMP/v/$n.fbx
	DESC="$n ($DESC)"
	run import "$V" iv
	imp=$RC
	imp_why=$(why)
	run card "$V"
	card=$RC
	card_why=$(why)
	run merge "$V" "$V" --into mv
	merge=$RC
	merge_why=$(why)
	typed=$(grep -c 'work on Bloom filters' "$T_TMP/e")
	if [ "$imp" -ne 0 ]; then
		refused=$((refused + 1))
		if [ "$card" -eq 0 ] || [ "$merge" -eq 0 ]; then
			fail "$DESC: import refused ($imp_why), card exit $card, merge exit $merge"
		elif [ "$imp_why" != "$card_why" ] || [ "$imp_why" != "$merge_why" ]; then
			fail "$DESC: refused for different reasons: import '$imp_why', card '$card_why', merge '$merge_why'"
		else
			pass "$DESC: refused alike: $imp_why"
		fi
		continue
	fi
	accepted=$((accepted + 1))
	if [ "$typed" -eq 1 ]; then
		[ "$card" -ne 0 ] && [ "$merge" -ne 0 ] && pass "$DESC: accepted; not a Bloom filter for merge" ||
			fail "$DESC: imported, a typed filter, but card exit $card, merge exit $merge"
	elif [ "$card" -ne 0 ] || [ "$merge" -ne 0 ]; then
		fail "$DESC: imported, but card '$card_why' ($card), merge '$merge_why' ($merge)"
		continue
	else
		pass "$DESC: accepted alike"
		ok "check the merge" check mv && ok "info the merge" info mv &&
			pass "$DESC: the merge is clean"
	fi
	if ok "info" info iv && ok "check (clean)" check iv && ok "query" query iv src 198.51.100.1 &&
		ok "export again" export iv "$T_TMP/again.fbx" --plain; then
		pass "$DESC: every verb on the import"
		grep -q exact <<<"$DESC" || cmp -s "$V" "$T_TMP/again.fbx" ||
			fail "$DESC: exported again, the file differs"
	fi
	if [ "$typed" -eq 0 ]; then
		ok "merge the import with the file" merge iv "$V" --into jv && ok "check that" check jv &&
			pass "$DESC: merged with its file"
	fi
done <"$T_TMP/v/list"
tidy
# Counts: `merge X X --into X` doubles X's flows; 60 times would make
# 2^60, which no filter of one chunk (m rounded up from 4096 bits) holds:
# the count saturates at 256 per bit (the bound import holds files to), and
# `info` still ends.
DESC="merge X X --into X, 60 times"
"$FB" create X --bits 4096 --hashes 4 >/dev/null && "$FB" add X src 198.51.100.9 >/dev/null
for i in $(seq 60); do
	run merge X X --into X
	[ "$RC" -eq 0 ] || break
done
check_eq "$DESC: every merge works" "$RC" 0
ok "info" -j info X && check_eq "$DESC: flows saturate at 256 x m" \
	"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["flows"])' <"$T_TMP/o")" \
	"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["bits"] * 256)' <"$T_TMP/o")"
ok "check" check X && ok "export" export X "$T_TMP/x.fbx" && ok "import" import "$T_TMP/x.fbx" Y &&
	pass "$DESC: the saturated count exports and imports"
"$FB" destroy X >/dev/null 2>&1
"$FB" destroy Y >/dev/null 2>&1

# journal PIN N: the counter map PIN's journal says an add is in progress,
# as a writer killed in the middle of a flow leaves it: killed before its
# first counter moved (cur_old "none"), the filter holding N flows before it (struct
# fb_journal at byte 8: op, done, cur_old, changed, nflows_before).
journal() {
	local j
	j=$(bpftool -j map lookup pinned "$1" key 0 0 0 0 |
		python3 -c 'import json,sys
v = json.load(sys.stdin)["value"]
b = [1, 0, 0, 0] + [0] * 4 + [0, 0, 0, 0x80] + [0] * 4 + list(int(sys.argv[1]).to_bytes(8, "little"))
v[8:32] = ["0x%02x" % x for x in b]
print(" ".join(v))' "$2")
	bpftool map update pinned "$1" key 0 0 0 0 value $j
}
# export_repaired NAME: export of NAME refused, naming the repair; then
# check --repair, export, import (as K2) and check, all clean.
export_repaired() {
	run export "$1" "$T_TMP/k.fbx"
	check_eq "$DESC: refused" "$RC" 1
	grep -q "check --repair $1 first" "$T_TMP/e" && pass "$DESC: saying what to do" ||
		fail "$DESC: said: $(head -c 300 "$T_TMP/e")"
	ok "check --repair" check --repair "$1" && ok "export" export "$1" "$T_TMP/k.fbx" &&
		ok "import" import "$T_TMP/k.fbx" K2 && ok "check the import" check K2 &&
		pass "$DESC: repaired, exported, imported clean"
}
# A counting filter a writer was killed in (its journal says an add is in
# progress, as the kill leaves it): export refuses to write what no reader
# would accept, until check --repair rolls the add back.
DESC="export after a killed writer"
"$FB" create K --bits 2048 --hashes 3 --counting >/dev/null &&
	"$FB" add K src 198.51.100.1 src 198.51.100.2 >/dev/null
journal "$FLOWBLOOM_ROOT/K/counters" 2
export_repaired K
"$FB" destroy K >/dev/null 2>&1
"$FB" destroy K2 >/dev/null 2>&1

# The same in a generation of rules with a lifetime (its own counters and
# journal): export refused it too, instead of writing a file import then
# refused ("bits contradict their counters"). And merge, which copies a
# filter as export does, refuses a source a writer was killed in.
DESC="export after a writer killed in a generation"
"$FB" create K --bits 2048 --hashes 3 --counting >/dev/null &&
	"$FB" add K src 198.51.100.1 >/dev/null && "$FB" add K --ttl 1h src 198.51.100.2 >/dev/null
G=$(ls "$FLOWBLOOM_ROOT/K" | grep '^gcnt' | head -1)
check_eq "$DESC: one generation's counters pinned" "$(ls "$FLOWBLOOM_ROOT/K" | grep -c '^gcnt')" 1
journal "$FLOWBLOOM_ROOT/K/$G" 1
export_repaired K
DESC="merge from a filter a writer was killed in"
"$FB" create M --bits 2048 --hashes 3 --counting >/dev/null && "$FB" add M src 198.51.100.1 >/dev/null
"$FB" export M "$T_TMP/m.fbx" >/dev/null && "$FB" import "$T_TMP/m.fbx" M2 >/dev/null
journal "$FLOWBLOOM_ROOT/M/counters" 1
run merge M M2 --into K3
check_eq "$DESC: refused" "$RC" 1
grep -q "check --repair M first" "$T_TMP/e" && pass "$DESC: saying what to do" ||
	fail "$DESC: said: $(head -c 300 "$T_TMP/e")"
check_fails "$DESC: no filter K3 made" "$FB" info K3
ok "check --repair" check --repair M && ok "merge" merge M M2 --into K3 && ok "check the merge" check K3 &&
	pass "$DESC: repaired, merged clean"
for n in K K2 K3 M M2; do "$FB" destroy $n >/dev/null 2>&1; done

echo "fbx_fuzz: $((accepted + refused)) variants (seed $SEED): $accepted accepted, $refused refused"
# The fuzz must reach both sides, and the cases the reader exists for.
[ "$accepted" -ge 20 ] && [ "$refused" -ge 100 ] && pass "both outcomes reached" ||
	fail "too few accepted ($accepted) or refused ($refused)"
t_end
