#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom apply NAME.conf`, what flowbloom@NAME.service runs at boot and
# on stop (--down), end to end on a veth pair between two namespaces: a
# fresh apply creates the filter, loads its list and attaches it (the listed
# source is dropped, real UDP); a second apply changes nothing; a new list is
# swapped in; --down detaches and keeps the filter. Every kind of bad
# configuration fails with one line naming FILE:LINE and changes nothing;
# a step failing after the checks (native XDP on a device without it) undoes
# the run's earlier steps (an attached device, the created filter). The
# file says what runs where: one user nobody made, or could write, or
# reached through nobody's link, or a FIFO nobody planted, is refused.
# Two applies of one filter at once run one after the other; an undo or
# --down touches only the program it put or found there; a drop filter
# reloaded under traffic lets no listed packet pass.
#
# Filters live under a private FLOWBLOOM_ROOT (no `default` filter: no lock
# needed). The trap removes the namespaces and the veth pair.
# Addresses: 198.51.100.0/24.
source "$(dirname "$0")/../lib/lib.sh"
t_begin apply

# NSA, NSB, VA, VB, MACA, MACB: t_net_pair (lib.sh).
DUM=lo # B's loopback: no native XDP
A4=198.51.100.1
BAD4=198.51.100.3
BAD4B=198.51.100.4
B4=198.51.100.2
CONF=$T_TMP/edge.conf

fbB() { "$FB" -n "$NSB" "$@"; }

cleanup() {
	t_net_down
	t_cleanup_filters
	[ -n "${ATK:-}" ] && rm -rf "$ATK"
}
t_traps

send() {
	inA "$PY" -c "$T_UDP_SEND" "$1" "$B4" "$2"
}

stat_of() {
	t_stat "$FB" "$1" "$2"
}

# seen_since FILTER N0 N: FILTER has seen N packets since its seen counter
# was N0.
seen_since() { [ $(($(stat_of "$1" seen) - $2)) -ge "$3" ]; }

# dropped_from SRC N [FILTER]: of N packets from SRC, how many FILTER
# (default edge) dropped (read once the program has seen all N: nothing
# else crosses the veth).
dropped_from() {
	local d0 s0 filter=${3:-edge}
	d0=$(stat_of "$filter" dropped)
	s0=$(stat_of "$filter" seen)
	send "$1" "$2"
	t_wait_until 30 seen_since "$filter" "$s0" "$2"
	echo $(($(stat_of "$filter" dropped) - d0))
}

# The state a failed apply must leave as it was: filters, their content,
# and what runs on B's devices.
state() {
	local n
	"$FB" list
	for n in $("$FB" list | cut -d' ' -f1); do
		"$FB" -j info "$n" | "$PY" -c 'import json,sys; i = json.load(sys.stdin); print(i["name"], i["digest"], i["flows"], i["attached"])'
	done
	ip -n "$NSB" -o link show | sed -n 's/^[0-9]*: \([^:@]*\).* \(xdp[a-z]*\).*prog\/xdp id \([0-9]*\).*/\1 \2 \3/p'
}

# refused LABEL WANT_REGEX ARGS...: apply fails (exit 1), with one line on
# stderr matching WANT_REGEX, and the state unchanged. refused_usage: a
# usage error (exit 2), the line followed by apply's synopsis.
refused() {
	local label=$1 want=$2 before after rc wrc=${WANT_RC:-1}
	shift 2
	before=$(state)
	fbB apply "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	after=$(state)
	[ "$wrc" -eq 2 ] && sed -i '2{/^usage: flowbloom apply /d}' "$T_TMP/err"
	if [ "$rc" -ne "$wrc" ]; then
		fail "$label: exit $rc, want $wrc ($(head -c 200 "$T_TMP/err"))"
	elif [ "$(wc -l <"$T_TMP/err")" -ne 1 ] || ! grep -qE "$want" "$T_TMP/err"; then
		fail "$label: stderr '$(head -c 300 "$T_TMP/err")', want one line matching '$want'"
	elif [ "$before" != "$after" ]; then
		fail "$label: the state changed: '$before' -> '$after'"
	else
		pass "$label"
	fi
}
refused_usage() { WANT_RC=2 refused "$@"; }

setup() {
	[ -n "$PY" ] || t_skip_all "needs python3"
	[ -x "$FB" ] || {
		fail "flowbloom is not built (run make)"
		t_finish
	}
	t_udp_pair "$B4" "$A4" "$BAD4" "$BAD4B" || t_skip_all "$T_NET_WHY"
	mkdir -p "$T_TMP/lists"
	printf '# the blocked source\n%s\n' "$BAD4" >"$T_TMP/lists/drop.txt"
	cat >"$CONF" <<EOF
# filter edge
capacity = 10000
fp-rate = 0.001   # per probe
action = drop
load = lists/drop.txt
attach = $VB native
EOF
}

test_up() {
	check "--check of a good file" fbB apply --check "$CONF"
	check_eq "--check created nothing" "$("$FB" list)" ""
	check "apply" fbB apply "$CONF"
	check_eq "the listed source is dropped" "$(dropped_from "$BAD4" 20)" 20
	check_eq "others pass" "$(dropped_from "$A4" 20)" 0
	check_eq "attached where the file says (native)" "$(ip -n "$NSB" -o link show "$VB" | grep -c ' xdp ')" 1
}

test_again() {
	local before
	before=$(state)
	check "apply again" fbB apply "$CONF"
	grep -q "edge already attached to $VB (native)" "$T_TMP/out" &&
		pass "second apply: already attached" || fail "second apply said: $(cat "$T_TMP/out")"
	check_eq "second apply: same filter, program, content" "$(state)" "$before"
	check_eq "still dropping" "$(dropped_from "$BAD4" 10)" 10
	# A new list replaces the content in one step.
	printf '%s\n' "$BAD4B" >"$T_TMP/lists/drop.txt"
	check "apply with a new list" fbB apply "$CONF"
	check_eq "new list: its source dropped" "$(dropped_from "$BAD4B" 10)" 10
	check_eq "new list: the old one passes" "$(dropped_from "$BAD4" 10)" 0
	printf '%s\n' "$BAD4" >"$T_TMP/lists/drop.txt"
	check "apply with the first list back" fbB apply "$CONF"
}

# Lists without rules (a download that failed into an empty file, one of
# comments only) never empty the filter: refused in the checks, before
# anything changes (FILE:LINE of the first load line, the list named), for
# --check too, and for a filter apply would create (created and attached
# empty, an allow-list would drop every packet). The attached block-list
# keeps dropping. `allow-empty = yes` lets them empty it (load's warning);
# an empty list beside one with rules is no empty content.
test_empty() {
	local el=$T_TMP/el.conf ids
	: >"$T_TMP/lists/drop.txt"
	ids=$(chunks edge)
	refused "empty: an empty list, refused" \
		"^flowbloom: $CONF:5: $T_TMP/lists/drop.txt holds no rules: nothing changed \(allow-empty = yes empties the filter\)$" \
		"$CONF"
	check_eq "empty: ... the same chunks" "$(chunks edge)" "$ids"
	check_eq "empty: ... the listed source still dropped" "$(dropped_from "$BAD4" 10)" 10
	refused "empty: --check too" "$CONF:5: .*drop.txt holds no rules" --check "$CONF"
	printf '# FireHOL header\n\n; only comments\n' >"$T_TMP/lists/drop.txt"
	refused "empty: a list of comments only, refused" "$CONF:5: .*drop.txt holds no rules" "$CONF"
	printf '%s\n' "$BAD4" >"$T_TMP/lists/drop.txt"
	printf 'capacity = 1000\nfp-rate = 0.001\nload = lists/e1.txt\nload = lists/e2.txt\n' >"$el"
	: >"$T_TMP/lists/e1.txt"
	printf '# nothing\n' >"$T_TMP/lists/e2.txt"
	refused "empty: a filter to create, two empty lists: nothing created" \
		"^flowbloom: $el:3: the 2 lists hold no rules: nothing changed \(allow-empty = yes empties the filter\)$" "$el"
	printf '%s\n' "$BAD4B" >"$T_TMP/lists/e2.txt"
	check "empty: an empty list beside one with rules: applied" fbB apply "$el"
	check_eq "empty: ... its rule loaded" "$("$FB" -j info el | t_json 'd["flows"]')" 1
	: >"$T_TMP/lists/e2.txt"
	refused "empty: both empty again: refused, the content kept" "$el:3: the 2 lists hold no rules" "$el"
	printf 'allow-empty = maybe\n' >>"$el"
	refused "empty: allow-empty = maybe: a bad value" "$el:5: bad value 'maybe' for allow-empty \(want no\|yes\)" "$el"
	sed -i 's/^allow-empty = maybe$/allow-empty = yes/' "$el"
	fbB apply "$el" >"$T_TMP/out" 2>"$T_TMP/err"
	check_eq "empty: allow-empty = yes: applied, load's warning" "$? $(cat "$T_TMP/err")" \
		"0 flowbloom: warning: the input held no rules: 'el' now has no permanent rules"
	check_eq "empty: ... emptied" "$("$FB" -j info el | t_json 'd["flows"]')" 0
	check "empty: ... --check" fbB apply --check "$el"
	check "destroy el" "$FB" destroy el
	check "empty: the first list back" fbB apply "$CONF"
}

# chunks NAME: the kernel ids of the maps NAME's outer map holds (its
# chunks: new ones for every replace), in slot order.
chunks() {
	bpftool -j map dump pinned "$FLOWBLOOM_ROOT/$1/filter" | "$PY" -c 'import json, sys
print(" ".join(str(int("".join(x[2:] for x in reversed(e["value"])), 16)) for e in json.load(sys.stdin)))'
}

# lastj: the changed of each -j object in $T_TMP/out that has one (the
# load's, then the run's).
lastj() {
	"$PY" -c 'import json, sys
print(" ".join(str(d["changed"]) for d in map(json.loads, open(sys.argv[1])) if "changed" in d))' "$T_TMP/out"
}

# Idempotence: an apply whose lists give exactly what the filter holds
# leaves it as it is (no new chunks, the same program) and says
# "unchanged" (-j: changed false, for the load and the run); the same list
# in another order, with comments, is the same content. A line changed, a
# rule added by hand (even one the list holds: counted again), or an exact
# set written behind the CLI is a change, replaced back. --check says
# which it would be, and changes nothing. Rules with a lifetime are carried
# over either way, as `load --replace` carries them.
test_idem() {
	local ids before ex=$T_TMP/ex.conf set key
	printf '%s\n%s\n' "$BAD4" "$BAD4B" >"$T_TMP/lists/drop.txt"
	check "idem: a list line changed: applied" fbB apply "$CONF"
	grep -q "^replaced with 2 rules into edge" "$T_TMP/out" && grep -qx "$CONF: filter edge changed" "$T_TMP/out" &&
		pass "idem: ... replaced, changed" || fail "idem: a changed list said: $(cat "$T_TMP/out")"
	ids=$(chunks edge)
	before=$(state)
	check "idem: applied again" fbB apply "$CONF"
	grep -q "^unchanged edge: it holds the 2 rules already" "$T_TMP/out" &&
		grep -qx "$CONF: filter edge unchanged" "$T_TMP/out" && ! grep -q "^replaced" "$T_TMP/out" &&
		pass "idem: ... says unchanged" || fail "idem: applied again said: $(cat "$T_TMP/out")"
	check_eq "idem: ... the same chunks" "$(chunks edge)" "$ids"
	check_eq "idem: ... the same filter, program, content" "$(state)" "$before"
	check "idem: -j applied again" fbB -j apply "$CONF"
	check_eq "idem: -j: changed false (load, run)" "$(lastj)" "False False"
	printf '# the blocked sources, another order\n\n%s\n# and\n%s\n' "$BAD4B" "$BAD4" >"$T_TMP/lists/drop.txt"
	check "idem: the list reordered, commented: applied" fbB -j apply "$CONF"
	check_eq "idem: ... changed false" "$(lastj)" "False False"
	check_eq "idem: ... the same chunks" "$(chunks edge)" "$ids"
	check "idem: --check" fbB apply --check "$CONF"
	check_eq "idem: --check: nothing would change" "$(cat "$T_TMP/out")" \
		"$CONF: ok (filter edge exists, apply would change nothing)"
	# By hand: a rule the list does not hold.
	check "idem: add by hand" "$FB" add edge src 198.51.100.77
	check "idem: --check after add" fbB -j apply --check "$CONF"
	check_eq "idem: --check: would change" "$(lastj)" "True"
	check_eq "idem: --check changed nothing" "$(chunks edge)" "$ids"
	check "idem: applied after add" fbB -j apply "$CONF"
	check_eq "idem: ... changed true (load, run)" "$(lastj)" "True True"
	[ "$(chunks edge)" != "$ids" ] && pass "idem: ... new chunks" || fail "idem: ... the chunks were kept"
	check_eq "idem: ... the hand-added rule is gone" "$("$FB" query edge src 198.51.100.77 | head -1 | cut -c1-3)" "no "
	check_eq "idem: ... the listed source still dropped" "$(dropped_from "$BAD4" 10)" 10
	# A rule the list holds, added again (counted twice): not the same.
	ids=$(chunks edge)
	check "idem: add a listed rule again" "$FB" add edge src "$BAD4"
	check "idem: applied after it" fbB apply "$CONF"
	grep -qx "$CONF: filter edge changed" "$T_TMP/out" && [ "$(chunks edge)" != "$ids" ] &&
		pass "idem: ... replaced" || fail "idem: a rule counted twice: $(cat "$T_TMP/out")"
	# Rules with a lifetime: carried over, not a change of the lists'.
	ids=$(chunks edge)
	check "idem: a rule with a lifetime" "$FB" add edge src 198.51.100.78 --ttl 10m
	check "idem: applied with a generation live" fbB apply "$CONF"
	grep -qx "$CONF: filter edge unchanged" "$T_TMP/out" && pass "idem: ... unchanged" ||
		fail "idem: with a generation: $(cat "$T_TMP/out")"
	check_eq "idem: ... the rule with a lifetime kept" "$("$FB" query edge src 198.51.100.78 | head -1 | cut -c1-5)" "maybe"
	# The first list back: a change.
	printf '%s\n' "$BAD4" >"$T_TMP/lists/drop.txt"
	check "idem: the first list back" fbB apply "$CONF"
	grep -qx "$CONF: filter edge changed" "$T_TMP/out" && pass "idem: ... changed" ||
		fail "idem: the first list back: $(cat "$T_TMP/out")"
	check_eq "idem: ... its other source passes" "$(dropped_from "$BAD4B" 10)" 0
	# Exact sets and counters: an entry's count written behind the CLI
	# (bits, counters and flows as they were) is a change.
	if ! command -v bpftool >/dev/null; then
		skip "idem: exact sets: no bpftool"
		return
	fi
	printf 'udp %s:53 %s:4000\nsrc %s\n' "$A4" "$B4" "$BAD4" >"$T_TMP/lists/ex.txt"
	printf 'capacity = 1000\nfp-rate = 0.01\ncounting = 4\nconfirm = exact\nload = lists/ex.txt\n' >"$ex"
	check "idem: ex (counting, confirm exact): applied" fbB apply "$ex"
	check "idem: ex: applied again" fbB apply "$ex"
	grep -qx "$ex: filter ex unchanged" "$T_TMP/out" && pass "idem: ex: unchanged" ||
		fail "idem: ex applied again: $(cat "$T_TMP/out")"
	ids=$(chunks ex)
	set=$(bpftool -j map dump pinned "$FLOWBLOOM_ROOT/ex/exact" | "$PY" -c 'import json, sys
print(int("".join(x[2:] for x in reversed(json.load(sys.stdin)[0]["value"])), 16))')
	key=$(bpftool -j map dump id "$set" | "$PY" -c 'import json, sys
print(" ".join(x[2:] for x in json.load(sys.stdin)[0]["key"]))')
	check "idem: ex: a 5-tuple counted twice in its exact set" bpftool map update id "$set" key hex $key value 2 0 0 0
	check "idem: ex: applied" fbB apply "$ex"
	grep -qx "$ex: filter ex changed" "$T_TMP/out" && [ "$(chunks ex)" != "$ids" ] &&
		pass "idem: ex: an exact set changed: replaced" || fail "idem: ex, a set changed: $(cat "$T_TMP/out")"
	check "idem: ex: applied again" fbB apply "$ex"
	grep -qx "$ex: filter ex unchanged" "$T_TMP/out" && pass "idem: ex: then unchanged" ||
		fail "idem: ex applied again: $(cat "$T_TMP/out")"
	check "idem: ex: del by hand" "$FB" del ex src "$BAD4"
	check "idem: ex: applied after del" fbB apply "$ex"
	grep -qx "$ex: filter ex changed" "$T_TMP/out" && pass "idem: ex: a counter changed: replaced" ||
		fail "idem: ex, after del: $(cat "$T_TMP/out")"
	check "destroy ex" "$FB" destroy ex
}

# Bad files: FILE:LINE, exit 1, nothing changed (the filter exists and is
# attached here, so "nothing" includes its content and attachment).
test_bad() {
	local b=$T_TMP/bad.conf
	bad() {
		local label=$1 want=$2
		cat >"$b"
		refused "$label" "$want" "$b"
	}
	cp "$CONF" "$T_TMP/bad.conf"
	bad "unknown key" "bad.conf:2: unknown key 'colour'" <<EOF
capacity = 10
colour = blue
fp-rate = 0.01
EOF
	bad "no '='" "bad.conf:3: want 'key = value'" <<EOF
capacity = 10
fp-rate = 0.01
attach $VB
EOF
	bad "bad enum value" "bad.conf:3: bad value 'fast' for hash" <<EOF
capacity = 10
fp-rate = 0.01
hash = fast
EOF
	bad "fp-rate out of range" "bad.conf:2: fp-rate must be" <<EOF
capacity = 10
fp-rate = 1.5
EOF
	bad "capacity not a number" "bad.conf:1: capacity must be a whole number" <<EOF
capacity = 10k
fp-rate = 0.01
EOF
	bad "set twice" "bad.conf:3: 'capacity' set twice \(first at line 1\)" <<EOF
capacity = 10
fp-rate = 0.01
capacity = 20
EOF
	bad "no geometry" "bad.conf: give capacity and fp-rate, or bits and hashes" <<EOF
action = drop
EOF
	bad "both geometries" "bad.conf: give capacity and fp-rate, or bits and hashes" <<EOF
capacity = 10
fp-rate = 0.01
bits = 1024
hashes = 3
EOF
	bad "missing list" "bad.conf:3: cannot read '.*/nonexistent.txt'" <<EOF
capacity = 10
fp-rate = 0.01
load = nonexistent.txt
EOF
	bad "missing device" "bad.conf:3: no device 'nosuchdev0'" <<EOF
capacity = 10
fp-rate = 0.01
attach = nosuchdev0
EOF
	bad "bad mode" "bad.conf:3: want 'attach = DEV \[native\|generic\]'" <<EOF
capacity = 10
fp-rate = 0.01
attach = $VB fast
EOF
	bad "device twice" "bad.conf:4: $VB listed twice \(first at line 3\)" <<EOF
capacity = 10
fp-rate = 0.01
attach = $VB
attach = $VB generic
EOF
	bad "no value" "bad.conf:2: 'fp-rate' has no value" <<EOF
capacity = 10
fp-rate =
EOF
	# Sizes create would refuse: --check refuses them too, with FILE:LINE.
	for geo in "1000000000000 0.01" "1000000000 1e-9" "4294967296000 0.01"; do
		printf 'capacity = %s\nfp-rate = %s\n' $geo >"$b"
		refused "--check: capacity/fp-rate $geo" \
			"bad.conf:1: capacity ${geo% *} at fp-rate ${geo#* } \(line 2\) needs more than 512 MiB" \
			--check "$b"
		refused "apply: capacity/fp-rate $geo" "bad.conf:1: .* needs more than 512 MiB" "$b"
	done
	printf 'capacity = 1000\nfp-rate = 1e-300\n' >"$b"
	refused "--check: fp-rate 1e-300" "bad.conf:2: fp-rate must be a number from 1e-9 to 0.999999999, not '1e-300'" \
		--check "$b"
	# --check reads the lists as load would.
	printf 'capacity = 10\nfp-rate = 0.01\nload = lists/bad.txt\n' >"$b"
	printf '%s\nnot-an-address\n' "$BAD4B" >"$T_TMP/lists/bad.txt"
	refused "--check: a bad list line" "bad.txt:2: " --check "$b"
	rm -f "$T_TMP/lists/bad.txt"
	printf 'capacity = 10\0x\nfp-rate = 0.01\n' >"$b"
	refused "a NUL byte in a line" "bad.conf:1: NUL byte in line" --check "$b"
	printf '\xef\xbb\xbfcapacity = 100\nfp-rate = 0.01\n' >"$T_TMP/bom.conf"
	check "a byte-order mark before the first key: skipped" fbB apply --check "$T_TMP/bom.conf"
	printf 'capacity = 10\nfp-rate = 0.01\n' >"$T_TMP/bad.txt"
	refused_usage "not NAME.conf" "bad.txt: the file must be named NAME.conf" "$T_TMP/bad.txt"
	cp "$CONF" "$T_TMP/bad name.conf"
	refused_usage "bad filter name" "bad filter name 'bad name'" "$T_TMP/bad name.conf"
	refused "missing file" "/absent.conf: No such file or directory" "$T_TMP/absent.conf"
	# The existing filter, described differently: never re-created.
	mkdir -p "$T_TMP/other/lists"
	cp "$T_TMP/lists/drop.txt" "$T_TMP/other/lists/"
	sed 's/^capacity = 10000/capacity = 20000/' "$CONF" >"$T_TMP/other/edge.conf"
	refused "existing filter, other capacity" "edge.conf:2: filter 'edge' exists with capacity/fp-rate 10000/0.001, the file says 20000/0.001" "$T_TMP/other/edge.conf"
	sed 's/^action = drop/action = allow/' "$CONF" >"$T_TMP/other/edge.conf"
	refused "existing filter, other action" "edge.conf:4: filter 'edge' exists with action drop, the file says allow:" "$T_TMP/other/edge.conf"
	sed "s/^attach = $VB native/attach = $VB generic/" "$CONF" >"$T_TMP/other/edge.conf"
	refused "attached in another mode" "edge.conf:6: 'edge' runs on $VB in native mode, not generic" "$T_TMP/other/edge.conf"
	# A list with a bad line: load refuses it whole (its own FILE:LINE).
	printf 'capacity = 10\nfp-rate = 0.01\nload = lists/bad.txt\nattach = %s\n' "$VB" >"$T_TMP/other/fresh.conf"
	printf '%s\nnot-an-address\n' "$BAD4B" >"$T_TMP/other/lists/bad.txt"
	# $VB runs edge: another filter is refused before anything is made.
	refused "device running another filter" "fresh.conf:4: $VB already has an XDP program" "$T_TMP/other/fresh.conf"
	printf 'capacity = 10\nfp-rate = 0.01\nload = lists/bad.txt\n' >"$T_TMP/other/fresh.conf"
	refused "bad list line: created filter undone" "bad.txt:2" "$T_TMP/other/fresh.conf"
	check_eq "bad list line: read before any step (no step said anything)" "$(cat "$T_TMP/out")" ""
	check_eq "bad list line: no filter fresh" "$("$FB" list | cut -d' ' -f1 | grep -c fresh)" 0
	check_fails "usage: no FILE" fbB apply
	fbB apply --check --down "$CONF" 2>/dev/null
	check_eq "usage: --check with --down exits 2" "$?" 2
}

# A step failing after the checks: loopback has no native XDP, so
# attaching fails after the filter was created and the veth attached;
# both are undone.
test_rollback() {
	local before
	cat >"$T_TMP/two.conf" <<EOF
capacity = 100
fp-rate = 0.01
load = lists/drop.txt
attach = $VB generic
attach = $DUM native
EOF
	# $VB runs edge: first free it (down keeps edge).
	check "apply --down" fbB apply --down "$CONF"
	before=$(state)
	fbB apply "$T_TMP/two.conf" >"$T_TMP/out" 2>"$T_TMP/err"
	check_eq "native on lo: exit 1" "$?" 1
	# One line naming the file's attach line (the checks passed; the
	# kernel refused at the attach step).
	check_eq "native on lo: says why, with FILE:LINE of its attach line" "$(cat "$T_TMP/err")" \
		"flowbloom: $T_TMP/two.conf:5: $DUM has no native XDP support: write 'attach = $DUM generic'"
	check_eq "rolled back: no filter two, nothing attached" "$(state)" "$before"
	check_eq "rollback: each step says what it did, the undo too" \
		"$(sed -e 's/: m=.*/: .../' -e 's/ in [0-9.]* ms;.*//' -e '/bits asked/d' "$T_TMP/out")" \
		"created two: ...
replaced with 1 rule into two
attached two to $VB (generic)
detached $VB
destroyed two"
	# The same of an existing filter whose lists changed: its content is
	# left as it was too (it used to be replaced before the device was
	# refused: exit 1, and the filter half the file's).
	mkdir -p "$T_TMP/half/lists"
	printf '%s\n' "$BAD4B" >"$T_TMP/half/lists/drop.txt"
	sed "s/^attach = .*/attach = $VB native\nattach = $DUM native/" "$CONF" >"$T_TMP/half/edge.conf"
	refused "existing filter, new list, native on lo: content, devices as they were" \
		"half/edge.conf:7: $DUM has no native XDP support" "$T_TMP/half/edge.conf"
	check_eq "... the listed source is still the old one" \
		"$("$FB" query edge src "$BAD4B" | head -1 | cut -c1-3) $("$FB" query edge src "$BAD4" | head -1 | cut -c1-5)" "no  maybe"
}

# send_malformed N: N IPv4 frames from A to B whose header length says 16
# bytes (below the 20 of a header): malformed to the parser.
send_malformed() {
	inA "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
mac = lambda m: bytes.fromhex(m.replace(":", ""))
ip = bytes([0x44, 0, 0, 40, 0, 0, 0, 0, 64, 17, 0, 0]) + socket.inet_aton(sys.argv[4]) + socket.inet_aton(sys.argv[5])
for _ in range(int(sys.argv[6])):
    s.send(mac(sys.argv[3]) + mac(sys.argv[2]) + b"\x08\x00" + ip + bytes(26))
' "$VA" "$MACA" "$MACB" "$A4" "$B4" "$1"
}

# The file's malformed policy reaches the attachment, and -j prints one
# object per step and line, then the run's (changed or not).
test_malformed() {
	local m0 d0 s0
	printf 'bits = 4096\nhashes = 3\nmalformed = pass\nattach = %s generic\n' "$VB" >"$T_TMP/mal.conf"
	fbB -j apply "$T_TMP/mal.conf" >"$T_TMP/out" 2>"$T_TMP/err"
	check_eq "malformed = pass: applied" "$?" 0
	check_eq "-j: one object per step" "$("$PY" -c '
import json, sys
print([sorted(json.loads(l)) for l in open(sys.argv[1])])' "$T_TMP/out")" \
		"[['bits', 'bits_asked', 'bytes', 'compact', 'counter_bits', 'hashes', 'name'], ['attached', 'dev', 'mode'], ['applied', 'changed', 'filter']]"
	m0=$(stat_of mal malformed)
	d0=$(stat_of mal dropped)
	s0=$(stat_of mal seen)
	send_malformed 5
	t_wait_until 30 eval '[ $(($(stat_of mal seen) - s0)) -ge 5 ]'
	check_eq "malformed = pass: 5 malformed frames seen" "$(($(stat_of mal malformed) - m0))" 5
	check_eq "malformed = pass: none dropped" "$(($(stat_of mal dropped) - d0))" 0
	check "--down mal" fbB apply --down "$T_TMP/mal.conf"
	check "destroy mal" "$FB" destroy mal
}

# As an unprivileged user, on the device running edge: every form of
# apply fails, says it is about permission, and changes nothing.
test_unpriv() {
	local pub=$T_TMP/pub before rc args
	mkdir -p "$pub/lists"
	cp "$CONF" "$pub/edge.conf"
	cp "$T_TMP/lists/drop.txt" "$pub/lists/"
	chmod o+x "$T_TMP"
	chmod -R a+rX "$pub"
	before=$(state)
	for args in "--down" "" "--check"; do
		# shellcheck disable=SC2086
		nsenter --net="/run/netns/$NSB" setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$FB" apply $args "$pub/edge.conf" >"$T_TMP/out" 2>"$T_TMP/err"
		rc=$?
		check_eq "unprivileged apply $args: exit 1" "$rc" 1
		grep -q "Permission denied (apply needs root" "$T_TMP/err" && pass "... says why" ||
			fail "... said: $(head -c 300 "$T_TMP/err")"
		grep -q "already has an XDP program" "$T_TMP/err" &&
			fail "... blames edge's own program: $(head -c 300 "$T_TMP/err")"
	done
	check_eq "unprivileged: nothing changed (edge still runs on $VB)" "$(state)" "$before"
	# A fresh boot: no filter root yet, so nothing to be refused reading;
	# --check said "ok (filter edge to be created)" and apply failed at
	# its first step.
	for args in "" "--check"; do
		# shellcheck disable=SC2086
		FLOWBLOOM_ROOT=/sys/fs/bpf/fbtest_apply_fresh_$$ nsenter --net="/run/netns/$NSB" \
			setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$FB" apply $args "$pub/edge.conf" >"$T_TMP/out" 2>"$T_TMP/err"
		check_eq "unprivileged apply $args, no filter root yet: exit 1" "$?" 1
		grep -q "cannot create BPF maps: Operation not permitted (apply needs root" "$T_TMP/err" &&
			pass "... says why" || fail "... said: $(head -c 300 "$T_TMP/err")"
	done
	check_eq "... and made no filter root" "$(ls -d /sys/fs/bpf/fbtest_apply_fresh_$$ 2>/dev/null)" ""
	chmod o-x "$T_TMP"
}

# The file says what is filtered where: trusted only if root's and writable
# by no one else (the rules of ipfix --config). In a sticky directory of
# nobody's (like /tmp), user nobody writes edge.conf of his own (--down
# would detach edge), plants edge.conf as a link to root's file, and as a
# FIFO (open would wait for ever): each refused at once, nothing changed.
test_trust() {
	local c
	ATK=$(mktemp -d /tmp/fbtest.apply.atk.XXXXXX)
	chown 65534:65534 "$ATK"
	chmod 1777 "$ATK"
	install -m 0600 "$CONF" "$T_TMP/root.conf"
	mkdir -p "$T_TMP/lnk" && ln -s "$T_TMP/root.conf" "$T_TMP/lnk/edge.conf" && ln -s ../lists "$T_TMP/lnk/lists"
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '
		mkdir "$1/own" "$1/link" "$1/fifo" &&
		printf "capacity = 10000\nfp-rate = 0.001\nattach = %s native\n" "$3" >"$1/own/edge.conf" &&
		ln -s "$2" "$1/link/edge.conf" && mkfifo "$1/fifo/edge.conf" &&
		ln -s "$4" "$1/dirlink"' _ "$ATK" "$T_TMP/root.conf" "$VB" "$T_TMP" ||
		fail "nobody could not plant his file, link and FIFO"
	refused "nobody's own file: refused" "own/edge.conf: refusing a file that another user may write \(it says what is filtered where\)" \
		--down "$ATK/own/edge.conf"
	refused "nobody's link to root's file: refused" "link/edge.conf: a symbolic link of another user's: refusing to follow it" \
		--down "$ATK/link/edge.conf"
	# A link on the way, not at the end (only the last component was
	# checked): nobody's link to root's directory.
	refused "nobody's link to root's directory: refused" \
		"dirlink/root.conf: a symbolic link of another user's at 'dirlink': refusing to follow it" \
		--down "$ATK/dirlink/root.conf"
	c=$(state)
	timeout 10 "$FB" -n "$NSB" apply --down "$ATK/fifo/edge.conf" >/dev/null 2>"$T_TMP/err"
	check_eq "nobody's FIFO: refused at once" "$? $(cat "$T_TMP/err")" \
		"1 flowbloom: $ATK/fifo/edge.conf: not a regular file"
	check_eq "... nothing changed" "$(state)" "$c"
	cp "$CONF" "$T_TMP/other/edge.conf"
	chmod 0666 "$T_TMP/other/edge.conf"
	refused "root's file others may write: refused" "refusing a file that others may write" \
		--down "$T_TMP/other/edge.conf"
	check "root's link to root's file: followed" fbB apply --check "$T_TMP/lnk/edge.conf"
}

# prog_on DEV: the id of the XDP program on B's DEV.
prog_on() { ip -n "$NSB" -o link show "$1" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p'; }

# An attachment of the filter with another action or malformed policy than
# the file's (attached by hand, or the file edited): apply swaps its
# program in one step, and the file's settings then decide real packets;
# one with monitoring, which the file cannot describe, is refused at its
# attach line, nothing changed. Two applies of one file at once both
# succeed, as one after the other would. A directory as a list is refused
# at its load line.
test_settings() {
	local id0 i rc1 rc2
	fbB detach "$VB" >/dev/null 2>&1 # whatever the steps before left there
	check "attach edge by hand, --action monitor" fbB attach edge "$VB" --action monitor
	check_eq "monitor: the listed source passes" "$(dropped_from "$BAD4" 10)" 0
	id0=$(prog_on "$VB")
	check "apply (the file's action: the filter's, drop)" fbB apply "$CONF"
	grep -q "re-attached edge to $VB (native) with the file's action and malformed policy" "$T_TMP/out" &&
		pass "... says it re-attached" || fail "... said: $(cat "$T_TMP/out")"
	check_eq "... the listed source is dropped again" "$(dropped_from "$BAD4" 10)" 10
	check_eq "... by another program, attached natively" \
		"$([ "$(prog_on "$VB")" != "$id0" ] && ip -n "$NSB" -o link show "$VB" | grep -c ' xdp ')" 1
	id0=$(prog_on "$VB")
	check "apply again: nothing to swap" fbB apply "$CONF"
	check_eq "... the same program" "$(prog_on "$VB")" "$id0"
	# The malformed policy: edited to pass, applied, malformed frames pass.
	cp "$CONF" "$T_TMP/conf.keep"
	echo "malformed = pass" >>"$CONF"
	check "malformed = pass added: apply" fbB apply "$CONF"
	local d0 s0
	d0=$(stat_of edge dropped)
	s0=$(stat_of edge seen)
	send_malformed 5
	t_wait_until 30 eval '[ $(($(stat_of edge seen) - s0)) -ge 5 ]'
	check_eq "... 5 malformed frames passed" "$(($(stat_of edge dropped) - d0))" 0
	cp "$T_TMP/conf.keep" "$CONF"
	check "malformed line removed: apply" fbB apply "$CONF"
	d0=$(stat_of edge dropped)
	s0=$(stat_of edge seen)
	send_malformed 5
	t_wait_until 30 eval '[ $(($(stat_of edge seen) - s0)) -ge 5 ]'
	check_eq "... 5 malformed frames dropped (the default)" "$(($(stat_of edge dropped) - d0))" 5
	# With monitoring: refused, the monitoring attachment left running.
	check "detach edge" fbB detach "$VB"
	check "attach edge by hand, --action monitor --monitor" fbB attach edge "$VB" --action monitor --monitor
	refused "monitoring and another action: refused" \
		"edge.conf:6: 'edge' runs on $VB with monitoring, action monitor and malformed packets passed, the file says action drop, malformed packets dropped: apply --down first to change it" \
		"$CONF"
	check "apply --down" fbB apply --down "$CONF"
	# Two at once, three times: both succeed, the filter attached once.
	for i in 1 2 3; do
		fbB apply "$CONF" >"$T_TMP/a1" 2>&1 &
		fbB apply "$CONF" >"$T_TMP/a2" 2>&1
		rc2=$?
		wait $!
		rc1=$?
		check_eq "two applies at once ($i): both succeed" "$rc1 $rc2" "0 0" ||
			echo "$(cat "$T_TMP/a1" "$T_TMP/a2")"
		check "... apply --down" fbB apply --down "$CONF"
	done
	mkdir -p "$T_TMP/lists/adir"
	printf 'bits = 4096\nhashes = 3\nload = lists/adir\n' >"$T_TMP/dir.conf"
	refused "a directory as a list: refused at its line" "dir.conf:3: '.*lists/adir' is a directory, not a list" \
		"$T_TMP/dir.conf"
	check "apply: edge again" fbB apply "$CONF"
}

test_down() {
	check "apply again after --down" fbB apply "$CONF"
	check_eq "re-attached: dropping" "$(dropped_from "$BAD4" 10)" 10
	check "apply --down" fbB apply --down "$CONF"
	grep -q "detached $VB" "$T_TMP/out" && pass "--down detached $VB" || fail "--down said: $(cat "$T_TMP/out")"
	check_eq "--down: nothing on $VB" "$(ip -n "$NSB" -o link show "$VB" | grep -c ' xdp')" 0
	check_eq "--down: the filter stays" "$("$FB" list | cut -d' ' -f1)" "edge"
	check "--down again: nothing to do" fbB apply --down "$CONF"
	# Jumbo frames (MTU 9000): apply attaches the multi-buffer program,
	# as attach does, and says so; applied again, it says what runs there
	# (it used to say "(native)" of the multi-buffer program).
	ip -n "$NSA" link set "$VA" mtu 9000
	ip -n "$NSB" link set "$VB" mtu 9000
	check "MTU 9000: apply" fbB apply "$CONF"
	grep -q "attached edge to $VB (native, multi-buffer)" "$T_TMP/out" &&
		pass "... multi-buffer, and says so" || fail "apply said: $(cat "$T_TMP/out")"
	check "MTU 9000: apply again" fbB apply "$CONF"
	grep -q "edge already attached to $VB (native, multi-buffer)" "$T_TMP/out" &&
		pass "... already attached, multi-buffer" || fail "apply again said: $(cat "$T_TMP/out")"
	check_eq "... -j says so too" \
		"$(fbB -j apply "$CONF" | grep already_attached | t_json "d.get('multi_buffer')")" True
	check "MTU 9000: apply --down" fbB apply --down "$CONF"
	ip -n "$NSA" link set "$VA" mtu 1500
	ip -n "$NSB" link set "$VB" mtu 1500
	# The unit's ExecStop after a list the file names went away (removed,
	# renamed by whatever fetches it): --down reads no list, so it still
	# detaches.
	check "apply again" fbB apply "$CONF"
	mv "$T_TMP/lists/drop.txt" "$T_TMP/lists/drop.txt.old"
	check "apply --down with a list gone" fbB apply --down "$CONF"
	check_eq "... detached $VB" "$(ip -n "$NSB" -o link show "$VB" | grep -c ' xdp')" 0
	mv "$T_TMP/lists/drop.txt.old" "$T_TMP/lists/drop.txt"
	# A filter this build cannot read (an older build's, after an upgrade;
	# or broken: here its array taken out of the outer map) still runs
	# where it is attached: --down finds the program by the filter's
	# pinned maps and detaches it, as destroy finds it. (It refused with
	# the filter's error: the unit's ExecStop failed, the program stayed.)
	if command -v bpftool >/dev/null; then
		check "apply again" fbB apply "$CONF"
		bpftool map delete pinned "$FLOWBLOOM_ROOT/edge/filter" key 0 0 0 0
		"$FB" info edge >/dev/null 2>&1
		check_eq "edge, its array taken out: unreadable" $? 1
		check "apply --down of a filter this build cannot read" fbB apply --down "$CONF"
		check_eq "... detached $VB" "$(ip -n "$NSB" -o link show "$VB" | grep -c ' xdp')" 0 ||
			fbB detach "$VB" >/dev/null 2>&1
		check "destroy it" "$FB" destroy edge
	else
		skip "--down of an unreadable filter: no bpftool"
	fi
}

# A file of bits and hashes applied again changes nothing (create rounds
# the bits up to whole chunks; the file's are compared as create makes
# them). A compact filter (its bits in whole pages) made by the file drops
# its listed source from real packets, and lets the others pass; applied
# again it is kept; a file that says otherwise of compact is refused at its
# line, the filter left as it was.
test_geometry() {
	local before
	printf 'bits = 100000\nhashes = 4\n' >"$T_TMP/bits.conf"
	check "bits and hashes: applied" fbB apply "$T_TMP/bits.conf"
	before=$(state)
	check "bits and hashes: applied again" fbB apply "$T_TMP/bits.conf"
	check_eq "... nothing changed" "$(state)" "$before"
	check "destroy bits" "$FB" destroy bits
	cat >"$T_TMP/tight.conf" <<EOF
capacity = 2500
fp-rate = 0.01
compact = yes
load = lists/drop.txt
attach = $VB native
EOF
	check "compact: applied" fbB apply "$T_TMP/tight.conf"
	check_eq "compact: its bits in whole pages, k = 4" "$("$FB" -j info tight | "$PY" -c '
import json, sys
i = json.load(sys.stdin)
print(i["compact"], i["blocks"] % 64, i["hashes"], i["blocks"] < 4032)')" "True 0 4 True"
	check_eq "compact: the listed source is dropped" "$(dropped_from "$BAD4" 20 tight)" 20
	check_eq "compact: others pass" "$(dropped_from "$A4" 20 tight)" 0
	before=$(state)
	check "compact: applied again" fbB apply "$T_TMP/tight.conf"
	check_eq "... nothing changed" "$(state)" "$before"
	sed 's/^compact = yes/compact = no/' "$T_TMP/tight.conf" >"$T_TMP/loose.conf"
	cp "$T_TMP/loose.conf" "$T_TMP/tight.conf"
	refused "compact = no of a compact filter: refused" \
		"tight.conf:3: filter 'tight' exists with compact yes, the file says no" "$T_TMP/tight.conf"
	check "compact: --down" fbB apply --down "$T_TMP/tight.conf"
	check "destroy tight" "$FB" destroy tight
	# A filter of another type by the file's name: the file describes a
	# Bloom filter, and says so.
	check "a cuckoo filter cu" "$FB" create cu --type cuckoo --capacity 1000 --fp-rate 0.01
	printf 'capacity = 1000\nfp-rate = 0.01\n' >"$T_TMP/cu.conf"
	refused "a cuckoo filter of the file's name: refused, naming its type" \
		"cu.conf: filter 'cu' exists as a cuckoo filter, the file describes a Bloom filter" "$T_TMP/cu.conf"
	check "destroy cu" "$FB" destroy cu
}

# A counting filter of an earlier build (in generation 1, its counters
# pinned as "counters"): --check compares its content and changes nothing,
# the pins' names either (it used to move them to the new names, as a
# replace does); apply then moves them, the content kept.
test_oldpins() {
	local pins
	printf 'capacity = 1000\nfp-rate = 0.001\ncounting = 4\nload = lists/drop.txt\n' >"$T_TMP/lg.conf"
	check "old pins: applied" fbB apply "$T_TMP/lg.conf"
	mv "$FLOWBLOOM_ROOT/lg/counters1" "$FLOWBLOOM_ROOT/lg/counters"
	pins=$(ls "$FLOWBLOOM_ROOT/lg" | tr '\n' ' ')
	check "old pins: --check" fbB apply --check "$T_TMP/lg.conf"
	check_eq "... would change nothing" "$(cat "$T_TMP/out")" \
		"$T_TMP/lg.conf: ok (filter lg exists, apply would change nothing)"
	check_eq "... the pins as they were" "$(ls "$FLOWBLOOM_ROOT/lg" | tr '\n' ' ')" "$pins"
	check "old pins: apply" fbB apply "$T_TMP/lg.conf"
	check_eq "... unchanged, the counters moved to their name" \
		"$(tail -1 "$T_TMP/out") $(ls "$FLOWBLOOM_ROOT/lg" | grep counters)" \
		"$T_TMP/lg.conf: filter lg unchanged counters1"
	check "destroy lg" "$FB" destroy lg
}

# An existing allow-list gets a new device before its content (so that a
# device refused leaves the content as it was): attach's warning of an
# empty allow-list is said of the content loaded, not of the one before.
test_allow_later() {
	printf 'capacity = 1000\nfp-rate = 0.001\naction = allow\nload = lists/al.txt\nallow-empty = yes\n' \
		>"$T_TMP/al.conf"
	: >"$T_TMP/lists/al.txt"
	check "allow-list al, empty: applied" fbB apply "$T_TMP/al.conf"
	printf 'attach = %s generic\n' "$VB" >>"$T_TMP/al.conf"
	printf '%s\n' "$A4" >"$T_TMP/lists/al.txt"
	fbB apply "$T_TMP/al.conf" >"$T_TMP/out" 2>"$T_TMP/err"
	check_eq "... a rule and a device: applied, no warning" "$? $(cat "$T_TMP/err")" "0 "
	check "... --down" fbB apply --down "$T_TMP/al.conf"
	: >"$T_TMP/lists/al.txt"
	fbB apply "$T_TMP/al.conf" >"$T_TMP/out" 2>"$T_TMP/err"
	grep -q "warning: filter 'al' holds no rules: under allow $VB drops every IP packet" "$T_TMP/err" &&
		pass "... emptied: the warning" || fail "... emptied: stderr '$(cat "$T_TMP/err")'"
	check "... --down" fbB apply --down "$T_TMP/al.conf"
	check "destroy al" "$FB" destroy al
}

# Two applies of one filter at once, from two files naming the same device
# (a reload while a start runs, or two copies of the file), one of which
# fails after it attached: the other, told the device runs the filter, must
# find it so. strace holds the failing one 2 s before its second program
# load (after $VB is attached, before lo refuses native XDP); the good one
# runs meanwhile. They are serialised: the good one waits, then attaches
# $VB itself once the failing one has undone its run.
test_two_one_fails() {
	local rc1 rc2
	command -v strace >/dev/null || {
		skip "two applies, one failing: strace is missing"
		return
	}
	fbB apply --down "$CONF" >/dev/null 2>&1
	mkdir -p "$T_TMP/bad" "$T_TMP/good"
	cp -r "$T_TMP/lists" "$T_TMP/bad/" && cp -r "$T_TMP/lists" "$T_TMP/good/"
	cp "$CONF" "$T_TMP/good/edge.conf"
	printf '%s\nattach = %s native\n' "$(cat "$CONF")" "$DUM" >"$T_TMP/bad/edge.conf"
	strace -f -qq -o /dev/null -e trace=uname -e inject=uname:delay_enter=2000000:when=2 \
		"$FB" -n "$NSB" apply "$T_TMP/bad/edge.conf" >"$T_TMP/a1" 2>&1 &
	t_wait_until 30 eval '[ -n "$(prog_on "$VB")" ]'
	fbB apply "$T_TMP/good/edge.conf" >"$T_TMP/a2" 2>&1
	rc2=$?
	wait $!
	rc1=$?
	check_eq "two applies, one failing after its attach: exit codes" "$rc1 $rc2" "1 0"
	check_eq "... $VB runs edge, as the good one said" "$(fbB -j info edge | "$PY" -c 'import json,sys; print(*[a["dev"] for a in json.load(sys.stdin)["attached"]])')" "$VB" ||
		cat "$T_TMP/a1" "$T_TMP/a2"
	check_eq "... and drops the listed source" "$(dropped_from "$BAD4" 10)" 10
	check "... apply --down" fbB apply --down "$CONF"
}

# The lock is one filter's of one pin root: an apply of a filter of the
# same name under another FLOWBLOOM_ROOT (another filter) does not wait
# for it (it waited, printing "waiting for another apply of filter").
test_other_root() {
	local other=/sys/fs/bpf/fbtest_apply_other_$$ rc sp held
	command -v strace >/dev/null || {
		skip "an apply under another root: strace is missing"
		return
	}
	mkdir -p "$T_TMP/other/lists"
	cp "$T_TMP/lists/drop.txt" "$T_TMP/other/lists/"
	grep -v '^attach' "$CONF" >"$T_TMP/other/edge.conf"
	chmod go-w "$T_TMP/other" "$T_TMP/other/edge.conf" "$T_TMP/other/lists" "$T_TMP/other/lists/drop.txt"
	# This root's apply holds its lock (its first flock, apply's lock, held
	# on the way out of the call) until strace is killed, which lets it go
	# on: the other ended before it if strace still held it then (not a
	# wall-clock bound, which a loaded machine misses). One that waited
	# for it waits 60 s, the hold's end.
	rm -f "$T_TMP/o1.rc" "$T_TMP/o1.trace"
	strace -f -qq -o "$T_TMP/o1.trace" -e trace=flock -e inject=flock:delay_exit=60000000:when=1 \
		sh -c '"$@"; echo $? >"$0"' "$T_TMP/o1.rc" "$FB" -n "$NSB" apply "$CONF" >"$T_TMP/o1" 2>&1 &
	sp=$!
	t_wait_until 30 grep -qs 'flock(.*(DELAYED)$' "$T_TMP/o1.trace"
	FLOWBLOOM_ROOT=$other "$FB" apply "$T_TMP/other/edge.conf" >"$T_TMP/o2" 2>&1
	rc=$?
	kill -0 "$sp" 2>/dev/null && held=1 || held=0
	kill -KILL "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	t_wait_until 30 test -s "$T_TMP/o1.rc"
	check_eq "an apply of edge under another root beside one held here: exit" "$rc" 0 || cat "$T_TMP/o2"
	check_eq "... it did not wait for it" "$(grep -c 'waiting for another apply' "$T_TMP/o2")" 0
	[ "$held" = 1 ] && pass "... and ended before it (while it held its lock)" ||
		fail "... and ended before it: it ended after"
	check_eq "... the held one, let go: exit 0" "$(cat "$T_TMP/o1.rc")" 0
	FLOWBLOOM_ROOT=$other "$FB" destroy edge >/dev/null 2>&1
	rmdir "$other" 2>/dev/null
	FLOWBLOOM_ROOT=$other t_cleanup_apply_locks
}

# One root however FLOWBLOOM_ROOT spells it (a trailing "/", "//", "/./"):
# one lock. The default root so spelled locks apply-NAME.lock, what the
# boot unit's apply takes; this suite's root so spelled, its own hashed
# lock. Each apply below waits for the lock held here (flock(1) on an fd
# of this shell) and is stopped once it says it waits (20 s at most: a
# loaded machine starts it late, past a fixed 1 s); one that did not wait fails on its device, which does
# not exist, before it changes anything. Before: the spelling was hashed
# as written, and a trailing "/" was another root's lock (no wait). A root
# not made yet, spelled with a trailing "/", is made by create (it said
# "bpffs is not mounted at ROOT": the root taken for its own parent).
said_or_gone() { grep -qs "waiting for another apply" "$T_TMP/sp/out" || ! kill -0 "$1" 2>/dev/null; }
test_root_spelling() {
	local n=fbtest_apply_sp$$ hash root spelled lock ap new=/sys/fs/bpf/fbtest_apply_new_$$
	mkdir -p "$T_TMP/sp"
	printf 'capacity = 100\nfp-rate = 0.01\nattach = fbnodev%s native\n' $$ >"$T_TMP/sp/$n.conf"
	chmod go-w "$T_TMP/sp" "$T_TMP/sp/$n.conf"
	hash=$("$PY" -c 'import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x100000001b3) % 2**64
print("%016x" % h)' "$FLOWBLOOM_ROOT")
	for root in /sys/fs/bpf/flowbloom "$FLOWBLOOM_ROOT"; do
		lock=/run/flowbloom/apply-$n.lock
		[ "$root" = /sys/fs/bpf/flowbloom ] || lock=/run/flowbloom/apply-$n-$hash.lock
		for spelled in "$root/" "/${root#/}//" "${root%/*}/./${root##*/}"; do
			(umask 077 && mkdir -p /run/flowbloom && : >>"$lock")
			exec 8<"$lock"
			flock 8
			# (the last spelling's "waiting" must not be read as this one's)
			rm -f "$T_TMP/sp/out"
			FLOWBLOOM_ROOT=$spelled "$FB" apply "$T_TMP/sp/$n.conf" >"$T_TMP/sp/out" 2>&1 8<&- &
			ap=$!
			t_wait_until 20 said_or_gone "$ap"
			kill "$ap" 2>/dev/null
			wait "$ap" 2>/dev/null
			exec 8<&-
			check_eq "root spelled $spelled: the apply waits for ${lock##*/}" \
				"$(grep -c "waiting for another apply of filter '$n'" "$T_TMP/sp/out")" 1 ||
				cat "$T_TMP/sp/out"
		done
	done
	rm -f "/run/flowbloom/apply-$n.lock" "/run/flowbloom/apply-$n-$hash.lock"
	check "a root not made yet, spelled $new/: create makes it" \
		env FLOWBLOOM_ROOT="$new/" "$FB" create $n --capacity 100 --fp-rate 0.01
	check "... the same root without the /: destroy finds the filter" \
		env FLOWBLOOM_ROOT="$new" "$FB" destroy $n
	rmdir "$new" 2>/dev/null
}

# A root the pin tree refuses ('..' in it, or longer than its 511 bytes)
# is refused by apply and by apply --check alike, before the lock: no lock
# file left in /run/flowbloom. Before: --check said "ok (filter ... to be
# created)", apply took a lock named by the root's hash, left it, and was
# then refused (a long root as "not an absolute path").
test_root_refused() {
	local n=fbtest_apply_rr$$ long root why c
	mkdir -p "$T_TMP/rr"
	printf 'capacity = 100\nfp-rate = 0.01\n' >"$T_TMP/rr/$n.conf"
	chmod go-w "$T_TMP/rr" "$T_TMP/rr/$n.conf"
	long=$FLOWBLOOM_ROOT/$(printf 'a%.0s' {1..200})/$(printf 'b%.0s' {1..200})
	mkdir -p "$long/$(printf 'c%.0s' {1..200})"
	for root in "$FLOWBLOOM_ROOT/../fbtest_apply_rr$$" "$long/$(printf 'c%.0s' {1..200})"; do
		case $root in
		*..*) why="'..' in the filter root" ;;
		*) why="longer than 511 bytes" ;;
		esac
		for c in --check ""; do
			FLOWBLOOM_ROOT=$root "$FB" apply $c "$T_TMP/rr/$n.conf" >"$T_TMP/rr/out" 2>&1
			check_eq "apply $c, a root with $why: refused" \
				"$?:$(grep -c "$why" "$T_TMP/rr/out")" 1:1 || cat "$T_TMP/rr/out"
			check_eq "... no lock taken" "$(ls /run/flowbloom 2>/dev/null | grep -c "^apply-$n-")" 0
		done
	done
	rm -f /run/flowbloom/apply-$n-*.lock
	[ -e "/sys/fs/bpf/fbtest_apply_rr$$" ] && fail "... no root made beside the suite's"
	rm -rf "${long:?}"
}

# --check predicts the refusals of apply's steps it does not take. A list
# a filter to create refuses (one rule shape too many): --check loads it
# into a filter built aside, and is refused with apply's line; nothing
# created, no staging directory left. A list it takes: ok, nothing left.
# An apply lock directory not root's, or that others can write to (in a
# mount namespace of its own, /run a tmpfs): refused by both. Before,
# --check said "ok (filter ... to be created)" and exited 0 each time.
test_check_predicts() {
	local d=$T_TMP/cp n=fbtest_apply_cp$$ L c
	mkdir -m 0755 "$d"
	: >"$d/shapes.txt"
	for L in 0 1 2 3 4 5 6 7 8; do
		printf 'udp dst 203.0.113.0/24 dport %d-%d\n' 1024 $((1024 + (1 << L) - 1)) >>"$d/shapes.txt"
	done
	printf 'capacity = 1000\nfp-rate = 0.01\nload = shapes.txt\n' >"$d/$n.conf"
	for c in --check ""; do
		refused "check predicts: apply $c, a list of 9 rule shapes" \
			"^flowbloom: $d/shapes.txt:9: 'udp dst 203.0.113.0/24 dport 1024-1279': its shape .* would be one too many" \
			$c "$d/$n.conf"
		check_eq "... no staging directory left" "$(ls -A "$FLOWBLOOM_ROOT" 2>/dev/null | grep -c "$n")" 0
	done
	sed -i '$d' "$d/shapes.txt"
	check "check predicts: 8 shapes: --check ok" fbB apply --check "$d/$n.conf"
	check_eq "... nothing created, nothing left" "$(ls -A "$FLOWBLOOM_ROOT" 2>/dev/null | grep -c "$n")" 0
	check "... apply" fbB apply "$d/$n.conf"
	check "... destroy" "$FB" destroy $n
	for c in "chown 65534" "chmod 0775"; do
		unshare -m --propagation private bash -c 'mount -t tmpfs tmpfs /run &&
			mkdir -m 0755 /run/flowbloom && '"$c"' /run/flowbloom &&
			for a in --check ""; do "$1" apply $a "$2"; echo "rc $?"; done' \
			- "$FB" "$d/$n.conf" >"$d/out" 2>&1
		check_eq "check predicts: an apply lock directory after $c: both refused" \
			"$(grep -c '^rc 1$' "$d/out") $(grep -c '^flowbloom: /run/flowbloom belongs to uid .* or others can write to it: refusing to lock in it$' "$d/out")" \
			"2 2" || cat "$d/out"
		check_eq "... nothing created" "$(ls -A "$FLOWBLOOM_ROOT" 2>/dev/null | grep -c "$n")" 0
	done
}

# An attachment to swap (attached by hand with another action) and a new
# list: the swap's step refused after the checks (the program on $VB
# replaced by hand meanwhile: strace holds apply 2 s before it loads the
# swap's program) must leave the content as it was, not the new list's
# behind an exit 1.
test_swap_fails() {
	local id
	command -v strace >/dev/null || {
		skip "a swap refused: strace is missing"
		return
	}
	fbB apply --down "$CONF" >/dev/null 2>&1
	check "apply: edge, dropping $BAD4" fbB apply "$CONF"
	check "detach, attach by hand with --action monitor" \
		eval 'fbB detach "$VB" && fbB attach edge "$VB" --action monitor'
	mkdir -p "$T_TMP/sw/lists"
	printf '%s\n' "$BAD4B" >"$T_TMP/sw/lists/drop.txt"
	cp "$CONF" "$T_TMP/sw/edge.conf"
	strace -f -qq -o /dev/null -e trace=uname -e inject=uname:delay_enter=2000000:when=1 \
		"$FB" -n "$NSB" apply "$T_TMP/sw/edge.conf" >"$T_TMP/a1" 2>&1 &
	sleep 1
	check "meanwhile, attach --replace by hand" fbB attach edge "$VB" --replace --action monitor
	id=$(prog_on "$VB")
	wait $!
	check_eq "the swap refused: exit 1" "$?" 1
	grep -q "edge.conf:6: the XDP program on $VB changed while re-attaching" "$T_TMP/a1" &&
		pass "... says why, at the attach line" || fail "... said: $(cat "$T_TMP/a1")"
	check_eq "... the content as it was ($BAD4 in, $BAD4B not)" \
		"$("$FB" query edge src "$BAD4" | head -1 | cut -c1-5) $("$FB" query edge src "$BAD4B" | head -1 | cut -c1-3)" "maybe no " ||
		cat "$T_TMP/a1"
	check_eq "... the program put there by hand left running" "$(prog_on "$VB")" "$id"
	check "... apply --down" fbB apply --down "$CONF"
}

# The same, the load refused after the swap (strace fails the load's lock
# of the filter, the fourth flock: apply's own, the swap's shared one and
# its release come first): the device gets back the program it ran, the
# content is as it was, and the run says what it put back.
test_load_fails() {
	local id
	command -v strace >/dev/null || {
		skip "a load refused after a swap: strace is missing"
		return
	}
	fbB apply --down "$CONF" >/dev/null 2>&1
	check "apply: edge, dropping $BAD4" fbB apply "$CONF"
	check "detach, attach by hand with --action monitor" \
		eval 'fbB detach "$VB" && fbB attach edge "$VB" --action monitor'
	id=$(prog_on "$VB")
	strace -f -qq -o /dev/null -e trace=flock -e inject=flock:error=ENOLCK:when=4 \
		"$FB" -n "$NSB" apply "$T_TMP/sw/edge.conf" >"$T_TMP/a1" 2>&1
	check_eq "the load refused: exit 1" "$?" 1
	grep -q "put back the program that ran on $VB (id $id)" "$T_TMP/a1" &&
		pass "... says it put the program back" || fail "... said: $(cat "$T_TMP/a1")"
	check_eq "... the program that ran there runs again" "$(prog_on "$VB")" "$id"
	check_eq "... the content as it was ($BAD4 in, $BAD4B not)" \
		"$("$FB" query edge src "$BAD4" | head -1 | cut -c1-5) $("$FB" query edge src "$BAD4B" | head -1 | cut -c1-3)" "maybe no "
	check_eq "... monitor, as by hand: $BAD4 passes" "$(dropped_from "$BAD4" 10)" 0
	check "... apply --down" fbB apply --down "$CONF"
}

# --down of a device moved to another filter by hand while it ran (strace
# holds it after it found edge on $VB, before it detaches): the other
# filter's program stays, and --down says why it did not detach. The move
# starts once the held call is entered (the trace ends in it, unfinished)
# and --down goes on once it is done (strace killed, its tracee let go):
# no window a loaded machine can miss (the move took over 2 s there).
test_down_moved() {
	local sp
	command -v strace >/dev/null || {
		skip "--down, device moved meanwhile: strace is missing"
		return
	}
	fbB apply --down "$CONF" >/dev/null 2>&1
	check "apply: edge on $VB" fbB apply "$CONF"
	check "create filter moved" "$FB" create moved --capacity 100 --fp-rate 0.01
	rm -f "$T_TMP/dm.rc" "$T_TMP/dm.trace"
	# (sh makes no ioctl: the first is --down's; sh keeps its exit status)
	strace -f -qq -o "$T_TMP/dm.trace" -e trace=ioctl -e inject=ioctl:delay_enter=60000000:when=1 \
		sh -c '"$@"; echo $? >"$0"' "$T_TMP/dm.rc" "$FB" -n "$NSB" apply --down "$CONF" >"$T_TMP/a1" 2>&1 &
	sp=$!
	in_held() { awk '{ l = $0 } END { exit !(l ~ /ioctl\(/ && l !~ /\) += /) }' "$T_TMP/dm.trace" 2>/dev/null; }
	check "--down held in its first ioctl" t_wait_until 30 in_held
	check "meanwhile, $VB moved to filter moved by hand" fbB attach moved "$VB" --replace
	kill -KILL "$sp"
	wait "$sp" 2>/dev/null
	t_wait_until 30 test -s "$T_TMP/dm.rc"
	check_eq "--down: exit 1" "$(cat "$T_TMP/dm.rc")" 1
	grep -q "the XDP program on $VB changed while detaching" "$T_TMP/a1" &&
		pass "... says why" || fail "... said: $(cat "$T_TMP/a1")"
	check_eq "... filter moved still runs on $VB" \
		"$(fbB -j info moved | "$PY" -c 'import json,sys; print(*[a["dev"] for a in json.load(sys.stdin)["attached"]])')" "$VB"
	check "... detach, destroy moved" eval 'fbB detach "$VB" && "$FB" destroy moved'
}

# A drop filter reloaded under traffic: the listed source sends without a
# pause while apply replaces the content ten times (lists that differ, each
# listing it) and swaps the program once (attached by hand with another
# malformed policy): not one of its packets passes.
test_reload_traffic() {
	local i sp s0 p0
	fbB apply --down "$CONF" >/dev/null 2>&1
	mkdir -p "$T_TMP/rl/lists"
	printf '%s\n' "$BAD4" >"$T_TMP/rl/lists/drop.txt"
	cp "$CONF" "$T_TMP/rl/edge.conf"
	check "apply" fbB apply "$T_TMP/rl/edge.conf"
	check "re-attached by hand, malformed = pass" \
		eval 'fbB detach "$VB" && fbB attach edge "$VB" --malformed pass'
	s0=$(stat_of edge seen)
	p0=$(stat_of edge passed)
	inA "$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
end, n = time.time() + 4, 0
while time.time() < end:
    s.sendto(b"flowbloom", (sys.argv[2], 9)); n += 1
print(n)' "$BAD4" "$B4" >"$T_TMP/sent" &
	sp=$!
	sleep 0.3
	for i in 1 2 3 4 5 6 7 8 9 10; do
		printf '%s\n203.0.113.%d\n2001:db8::%d\n' "$BAD4" "$i" "$i" >"$T_TMP/rl/lists/drop.txt"
		fbB apply "$T_TMP/rl/edge.conf" >"$T_TMP/out" 2>&1 || fail "reload $i: $(cat "$T_TMP/out")"
	done
	wait $sp
	t_wait_until 30 seen_since edge "$s0" "$(cat "$T_TMP/sent")"
	check_eq "reloads under traffic: every packet of the listed source seen, none passed" \
		"$(($(stat_of edge seen) - s0)) $(($(stat_of edge passed) - p0))" "$(cat "$T_TMP/sent") 0"
	check "... apply --down" fbB apply --down "$CONF"
}

setup
test_up
test_again
test_empty
test_idem
test_unpriv
test_bad
test_trust
test_rollback
test_malformed
test_settings
test_down
test_geometry
test_oldpins
test_allow_later
test_two_one_fails
test_other_root
test_root_spelling
test_root_refused
test_check_predicts
test_swap_fails
test_load_fails
test_down_moved
test_reload_traffic
t_finish
