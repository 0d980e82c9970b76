#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A filter pinned by an older build, in the map layout before chunks (one
# ARRAY_OF_MAPS slot holding one array of any size, header version 2), made
# here with bpftool as that build made it. This build does not read it:
# list, check and info say so plainly (an older build, what to do), verbs
# that would use it refuse with the same line, nothing crashes, destroy
# removes it, and a filter of this build beside it works as usual.
source "$(dirname "$0")/../lib/lib.sh"
t_begin oldlayout
cleanup() {
	t_cleanup_filters
	rm -rf "$T_TMP"
}
t_traps

command -v bpftool >/dev/null || { skip "no bpftool"; t_end; exit 0; }
check "create new (this build)" "$FB" create new --capacity 1000 --fp-rate 0.01
check "add to new" "$FB" add new src 198.51.100.7

# The old layout: inner array fb_bits (BPF_F_INNER_MAP | BPF_F_MMAPABLE),
# 2 header blocks + 16 bit blocks; block 0 a version-2 header ("BLOM",
# version 2, blocked, nh, k 8, nblocks 16, action drop); stats 16 pairs.
D="$FLOWBLOOM_ROOT/old"
mkdir -m 0700 -p "$D"
bpftool map create "$D/bits" type array key 4 value 64 entries 18 name fb_bits flags 0x1400 &&
	bpftool map create "$D/filter" type array_of_maps key 4 value 4 entries 1 name fb_filter \
		inner_map pinned "$D/bits" &&
	bpftool map update pinned "$D/filter" key 0 0 0 0 value pinned "$D/bits" &&
	bpftool map update pinned "$D/bits" key 0 0 0 0 value \
		0x42 0x4c 0x4f 0x4d 2 1 4 8 16 0 0 0 0 0 0 0 \
		1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 0 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 \
		0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 &&
	bpftool map create "$D/stats" type percpu_array key 4 value 256 entries 1 name fb_stats &&
	rm "$D/bits" || { fail "make the old-layout filter with bpftool"; t_end; exit 1; }

"$FB" list >"$T_TMP/list" 2>"$T_TMP/list.err"
check_eq "list: exit 0" "$?" 0
grep -q "^old .*BROKEN: .*older build of flowbloom" "$T_TMP/list" &&
	pass "list: old is reported as made by an older build" ||
	fail "list: $(cat "$T_TMP/list" "$T_TMP/list.err")"
grep -q "^new " "$T_TMP/list" && pass "list: new is listed as usual" || fail "list: no new"
"$FB" -j list >"$T_TMP/list.json"
check_eq "list -j: old has a broken reason naming the older build" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(any("older build" in f.get("broken", "") for f in (d if isinstance(d, list) else d.get("filters", [])) if f.get("name") == "old"))' "$T_TMP/list.json")" True

"$FB" check old >"$T_TMP/check" 2>&1
rc=$?
check_eq "check old: exit 1, no crash" "$rc" 1
grep -q "old: BROKEN: .*older build of flowbloom.*destroy old" "$T_TMP/check" &&
	pass "check old: says older build, and how to get rid of it" ||
	fail "check old: $(cat "$T_TMP/check")"
for verb in "info old" "add old src 198.51.100.9" "query old src 198.51.100.9" \
	"stats old" "export old $T_TMP/old.fbx" "load old --replace /dev/null"; do
	# shellcheck disable=SC2086 # words
	"$FB" $verb >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	check_eq "$verb: exit 1 (not a crash)" "$rc" 1
	check_eq "$verb: one line, the older build" "$(grep -c 'older build' "$T_TMP/err") $(wc -l <"$T_TMP/err")" "1 1"
done
check "destroy old" "$FB" destroy old
check_eq "old is gone" "$([ -e "$D" ] && echo present || echo gone)" gone
check_eq "new still answers" "$("$FB" query new src 198.51.100.7 | tail -1)" "1 of 1 maybe"
check "check new: clean" "$FB" check new
check "destroy new" "$FB" destroy new
t_end
