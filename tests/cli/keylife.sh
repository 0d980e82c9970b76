#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A filter's hash key through its life, as docs/security.md promises it
# (where an export holds it: export_sec.sh):
# - made by getrandom(): when that fails (strace injects ENOSYS and EINTR
#   into create and into import, which draws one for the filter it builds
#   aside), the verb exits 1 with one line naming getrandom, and nothing
#   is left in the pin tree;
# - one per filter: two filters created alike, and a filter destroyed and
#   created again under its name, have different keys; import takes the
#   file's key (the bits are placed by it); load --replace, a rule with a
#   lifetime and fold keep the filter's own;
# - never readable by another user: user nobody cannot list the filter
#   root, open a pin with bpftool, nor have flowbloom export or query it;
#   pins are 0600 and directories 0700 under umask 000.
# The key is read from a plain export's header (bytes 32 to 47).
source "$(dirname "$0")/../lib/lib.sh"
t_begin keylife
t_traps

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
key_of() { "$FB" export "$1" - --plain | od -An -tx1 -j32 -N16 | tr -d ' \n'; }
# Everything in the pin tree, for "nothing left" (staging directories too).
tree() { (cd "$FLOWBLOOM_ROOT" 2>/dev/null && find . | sort | tr '\n' ' '); }

"$FB" create A --capacity 1000 --fp-rate 0.01 >/dev/null
"$FB" add A src 203.0.113.5 >/dev/null
"$FB" export A "$T_TMP/a.fbx" >/dev/null

# --- getrandom failing
if command -v strace >/dev/null; then
	before=$(tree)
	for e in ENOSYS EINTR; do
		strace -f -qq -o /dev/null -e trace=getrandom -e inject=getrandom:error=$e \
			"$FB" create G --capacity 1000 --fp-rate 0.01 >/dev/null 2>"$T_TMP/err"
		check_eq "create, getrandom $e: exit 1, one line" "$? $(wc -l <"$T_TMP/err")" "1 1"
		grep -q "^flowbloom: getrandom: " "$T_TMP/err" && pass "... names getrandom" ||
			fail "... $(cat "$T_TMP/err")"
		check_eq "... nothing left in the pin tree" "$(tree)" "$before"
		strace -f -qq -o /dev/null -e trace=getrandom -e inject=getrandom:error=$e \
			"$FB" import "$T_TMP/a.fbx" G >/dev/null 2>"$T_TMP/err"
		check_eq "import, getrandom $e: exit 1, one line" "$? $(wc -l <"$T_TMP/err")" "1 1"
		check_eq "... nothing left in the pin tree" "$(tree)" "$before"
	done
else
	skip "getrandom failing: no strace"
fi

# --- one key per filter
"$FB" create B --capacity 1000 --fp-rate 0.01 >/dev/null
ka=$(key_of A)
kb=$(key_of B)
check_eq "a key is 128 bits" "${#ka}" 32
[ "$ka" != "$kb" ] && pass "two filters created alike: different keys" ||
	fail "A and B share key $ka"
"$FB" destroy B >/dev/null
"$FB" create B --capacity 1000 --fp-rate 0.01 >/dev/null
kb2=$(key_of B)
[ "$kb2" != "$kb" ] && [ "$kb2" != "$ka" ] && pass "destroyed and created again: a new key" ||
	fail "B's key again: $kb2"
"$FB" import "$T_TMP/a.fbx" C >/dev/null
check_eq "import: the file's key" "$(key_of C)" "$ka"
check_eq "... and its bits: the rule matches" \
	"$("$FB" query C --packet udp 203.0.113.5:1 198.51.100.1:53 | head -1 | cut -d' ' -f1)" drop
printf 'src 198.51.100.7\n' >"$T_TMP/list"
"$FB" load A "$T_TMP/list" --replace >/dev/null
check_eq "load --replace keeps the key" "$(key_of A)" "$ka"
"$FB" add A src 198.51.100.8 --ttl 1h >/dev/null
check_eq "a rule with a lifetime keeps it" "$(key_of A)" "$ka"
"$FB" fold A >/dev/null
check_eq "fold keeps it" "$(key_of A)" "$ka"
"$FB" import "$T_TMP/a.fbx" C2 >/dev/null
"$FB" merge C C2 --into D >/dev/null
check_eq "merge of two imports of A (one key) --into a new filter: theirs" "$(key_of D)" "$ka"
"$FB" merge C B --into E >/dev/null 2>"$T_TMP/err"
check_eq "merge of filters with different keys: refused, nothing made" \
	"$? $(grep -c 'hash keys differ' "$T_TMP/err") $("$FB" info E >/dev/null 2>&1 && echo made)" "1 1 "

# --- another user
(umask 000 && "$FB" create U --capacity 1000 --fp-rate 0.01 >/dev/null)
check_eq "umask 000: the filter's directory 0700, its pins 0600" \
	"$(stat -c %a "$FLOWBLOOM_ROOT/U") $(stat -c %a "$FLOWBLOOM_ROOT"/U/* | sort -u | tr '\n' ' ')" "700 600 "
check_fails "nobody cannot list the filter root" "${NOBODY[@]}" ls "$FLOWBLOOM_ROOT"
if command -v bpftool >/dev/null; then
	"${NOBODY[@]}" bpftool map dump pinned "$FLOWBLOOM_ROOT/A/filter" >"$T_TMP/out" 2>&1 &&
		fail "nobody dumped A's map: $(head -c 200 "$T_TMP/out")" ||
		pass "nobody cannot dump a pin with bpftool"
fi
"${NOBODY[@]}" "$FB" export A - 2>/dev/null | wc -c >"$T_TMP/n"
check_eq "nobody's export A -: nothing" "$(cat "$T_TMP/n")" 0
check_fails "nobody's query A" "${NOBODY[@]}" "$FB" query A src 203.0.113.5

t_finish
