#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `check` on damage that no flowbloom writer leaves and `check --repair`
# cannot undo, made behind the CLI's back with bpftool: the `ip link` pins
# of `default` holding other maps (an ip link program loaded while they
# were missing runs on those), and chunk slots of a filter that share one
# chunk (two parts of the bits made one: rules lost, seen by `query`).
# `check` must name each and exit 1; `check --repair` must say NOT
# repaired, exit 1 (a monitoring script must not take it as fixed), leave
# the damage as `check` found it and set no "repaired" in -j; the filter's
# counters and exact sets are not "repaired" against such bits. A healthy
# filter beside them stays clean, and `load --replace` makes the damaged
# one clean with every rule back.
source "$(dirname "$0")/../lib/lib.sh"
t_begin check_damage
t_traps

# The ip link pin directory of this suite's own `default`, in bpffs.
IPR=/sys/fs/bpf/fbtest_chkdmg_ipr_$$
export FLOWBLOOM_IPROUTE_DIR=$IPR/globals
cleanup() { rm -rf --one-file-system "$IPR" 2>/dev/null; }

# A healthy filter beside the damaged ones: clean before and after.
check "create ok" "$FB" create ok --capacity 1000 --fp-rate 0.01 --counting
check "ok: add a rule" "$FB" add ok src 198.51.100.1

# 1. default, its ip link pins replaced by another filter's maps.
check "create default" "$FB" create default --capacity 1000 --fp-rate 0.01
check "default: add a rule" "$FB" add default src 198.51.100.7
check "default: check clean" "$FB" check default
rm "$IPR/globals/fb_filter"
bpftool map pin pinned "$FLOWBLOOM_ROOT/ok/filter" "$IPR/globals/fb_filter" || fail "pin ok's map"
"$FB" check default >"$T_TMP/c" 2>&1
check_eq "default, pins of other maps: check exit 1" $? 1
check "... and says so" grep -q "name other maps than the filter's" "$T_TMP/c"
"$FB" check default --repair >"$T_TMP/c" 2>&1
check_eq "... check --repair exit 1: it cannot repair them" $? 1
check "... and says NOT repaired" grep -q "other maps than the filter's.*: NOT repaired" "$T_TMP/c"
check_eq "... its first line" "$(head -1 "$T_TMP/c")" "default: NOT clean (not all repaired)"
"$FB" -j check default --repair >"$T_TMP/j" 2>&1
check_eq "... -j: exit 1, not repaired, the pins stale" \
	"$? $(t_json 'd["repaired"], d["iproute_pins_stale"], d["clean"]' "$T_TMP/j")" "1 (False, True, False)"
check_eq "... the pins still other maps (check --repair left them)" \
	"$(bpftool -j map show pinned "$IPR/globals/fb_filter" | t_json 'd["id"]')" \
	"$(bpftool -j map show pinned "$FLOWBLOOM_ROOT/ok/filter" | t_json 'd["id"]')"
rm "$IPR/globals/fb_filter" "$IPR/globals/fb_stats"
check "... once removed, check --repair pins them again" "$FB" check default --repair
check "... and check is clean" "$FB" check default

# 2. Chunk slots sharing a chunk: a counting filter of 5 chunks with a
# rule in every chunk, chunk 1's slot made to hold chunk 2's map.
check "create big (counting, 5 chunks)" "$FB" create big --capacity 1000000 --fp-rate 0.01 --counting
for i in $(seq 1 200); do echo "src 203.0.113.$i"; done >"$T_TMP/rules"
check "big: add 200 rules" "$FB" add big -f "$T_TMP/rules"
check "big: check clean" "$FB" check big
# slots NAME: the map ids in the outer map's first 5 slots.
slots() { bpftool -j map dump pinned "$FLOWBLOOM_ROOT/$1/filter" | t_json '" ".join(str(int.from_bytes(bytes(int(b, 16) for b in e["value"]), "little")) for e in d[:5])'; }
read -r s0 s1 s2 s3 _ <<<"$(slots big)"
check_eq "big: the head in slot 0 and range slot 0, 4 more chunks" \
	"$([ "$s0" == "$s1" ] && [ "$s2" != "$s3" ] && echo yes)" yes
bpftool map update pinned "$FLOWBLOOM_ROOT/big/filter" key 2 0 0 0 value id "$s3" ||
	fail "put chunk 2 in chunk 1's slot"
lost=$("$FB" query big -f "$T_TMP/rules" | grep -c '^no ')
check_eq "big: rules in the chunk no slot holds now are lost" "$([ "$lost" -gt 0 ] && echo yes)" yes
"$FB" check big >"$T_TMP/c" 2>&1
check_eq "big: check exit 1" $? 1
check "... names the shared chunk" grep -q "1 chunk slot of the filter holds no chunk of its own" "$T_TMP/c"
"$FB" -j check big --repair >"$T_TMP/j" 2>&1
check_eq "... check --repair -j: exit 1, not repaired, 1 shared chunk" \
	"$? $(t_json 'd["repaired"], d["shared_chunks"]' "$T_TMP/j")" "1 (False, 1)"
"$FB" check big --repair >"$T_TMP/c" 2>&1
check_eq "... check --repair exit 1" $? 1
check "... and says NOT repaired" grep -q "holds no chunk of its own.*: NOT repaired" "$T_TMP/c"
check_eq "... the same rules lost, no other" "$("$FB" query big -f "$T_TMP/rules" | grep -c '^no ')" "$lost"
check "... check still reports it" bash -c "! '$FB' check big >/dev/null 2>&1"
check "load --replace with the rule list" "$FB" load big "$T_TMP/rules" --replace
check "... then check is clean" "$FB" check big
check_eq "... and every rule is back" "$("$FB" query big -f "$T_TMP/rules" | tail -1)" "200 of 200 maybe"

# 3. The same on a plain confirming filter: its exact sets keep every
# rule the shared chunk lost (check --repair does not take them out).
check "create px (plain, --confirm exact, 5 chunks)" \
	"$FB" create px --capacity 1000000 --fp-rate 0.01 --confirm exact
check "px: add 200 rules" "$FB" add px -f "$T_TMP/rules"
read -r s0 s1 s2 s3 _ <<<"$(slots px)"
bpftool map update pinned "$FLOWBLOOM_ROOT/px/filter" key 2 0 0 0 value id "$s3" ||
	fail "put chunk 2 in chunk 1's slot"
"$FB" -j check px --repair >"$T_TMP/j" 2>&1
check_eq "px: check --repair exit 1, not repaired, the exact sets keep 200 rules" \
	"$? $(t_json 'd["repaired"], d["shared_chunks"], d["exact_rules"]' "$T_TMP/j")" "1 (False, 1, 200)"
"$FB" -j check px >"$T_TMP/j" 2>&1
check_eq "... still 200 exact rules after it" "$(t_json 'd["exact_rules"]' "$T_TMP/j")" 200
check "load --replace with the rule list" "$FB" load px "$T_TMP/rules" --replace
check "... then check is clean" "$FB" check px

# 4. A pin replaced by what no pin is (a link, which no open follows; a
# directory): damage, not a limit of this process (ulimit -n, memory),
# so called broken with the advice to destroy, as a missing pin is.
for what in link dir; do
	check "create $what" "$FB" create "$what" --capacity 100 --fp-rate 0.01 --counting
	rm "$FLOWBLOOM_ROOT/$what/stats"
	if [ "$what" = link ]; then
		ln -s "$FLOWBLOOM_ROOT/ok/stats" "$FLOWBLOOM_ROOT/$what/stats"
	else
		mkdir "$FLOWBLOOM_ROOT/$what/stats"
	fi
	check_eq "$what in place of a pin: list says BROKEN, incomplete" \
		"$("$FB" list | awk -v n="$what" '$1 == n { print $2, $6 }')" "BROKEN: incomplete"
	"$FB" check "$what" >"$T_TMP/c" 2>&1
	check_eq "... check exit 1" $? 1
	check "... and says BROKEN" grep -q "^$what: BROKEN: filter '$what' is incomplete" "$T_TMP/c"
	t_refused 1 "... add refused, naming destroy" "is incomplete.*flowbloom destroy $what removes it" \
		"$FB" add "$what" src 198.51.100.1
	check "... destroy removes it" "$FB" destroy "$what"
done

check "ok: still clean" "$FB" check ok
check_eq "ok: -j clean, nothing repaired by a check --repair" \
	"$("$FB" -j check ok --repair | t_json 'd["clean"], d["repaired"], d["shared_chunks"]')" "(True, False, 0)"
check "destroy default" "$FB" destroy default
t_end
