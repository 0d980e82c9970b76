#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# bpffs squatting: /sys/fs/bpf is mode 1777, so any user can make
# directories and symbolic links there before flowbloom does. As user
# nobody, pre-create the filter root, plant a symbolic link for it (so that
# `destroy X` would destroy another root's X), make it writable by others,
# squat /sys/fs/bpf/xdp/globals (where the ip link pins go) and the real
# /sys/fs/bpf/flowbloom: flowbloom must refuse each with a clear message
# and touch nothing. The private root's parent is a test-made 1777
# directory standing for /sys/fs/bpf, and so is that of a private
# xdp/globals (FLOWBLOOM_IPROUTE_DIR). The real paths are tried too when
# they do not exist (never disturbing real filters); it holds
# /tmp/fb-globals.lock like e2e (it may create xdp/globals).
source "$(dirname "$0")/../lib/lib.sh"
t_begin squat
t_lock_globals || t_skip_all "$T_LOCK_WHY"

P=/sys/fs/bpf/fbsq_$$
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
cleanup() {
	umount "$P/tc" 2>/dev/null
	rm -rf "$P" 2>/dev/null
	[ -n "${XDP_MADE:-}" ] && rm -rf /sys/fs/bpf/xdp
	[ -n "${ROOT_MADE:-}" ] && rm -rf /sys/fs/bpf/flowbloom
	[ -n "${ATK:-}" ] && rm -rf "$ATK"
}
t_traps
mkdir -m 1777 "$P" && chmod 1777 "$P"

# refused LABEL WORD CMD...: CMD fails with one line on stderr naming WORD.
refused() {
	local label=$1 word=$2
	shift 2
	if "$@" >"$T_TMP/out" 2>"$T_TMP/err"; then
		fail "$label: succeeded"
	elif [ "$(wc -l <"$T_TMP/err")" -ne 1 ] || ! grep -q -- "$word" "$T_TMP/err"; then
		fail "$label: stderr '$(head -c 300 "$T_TMP/err")'"
	else
		pass "$label"
	fi
}

# A victim: a legitimate root with filter X holding a flow.
export FLOWBLOOM_ROOT=$P/victim
check "victim: create X" "$FB" create X --capacity 100 --fp-rate 0.01
check "victim: add a flow" "$FB" add X src 198.51.100.7
victim_info() { FLOWBLOOM_ROOT=$P/victim "$FB" query X src 198.51.100.7 | tail -1; }

# 1. The root pre-created by nobody (as it could /sys/fs/bpf/flowbloom).
export FLOWBLOOM_ROOT=$P/root
check "nobody makes the root first" "${NOBODY[@]}" mkdir "$P/root"
refused "create in nobody's root: refused" "belongs to uid 65534" "$FB" create A --capacity 100 --fp-rate 0.01
check_eq "... nothing created in it" "$(ls -A "$P/root" | wc -l)" 0
"${NOBODY[@]}" mkdir "$P/root/A"
refused "open a filter in nobody's root: refused" "belongs to uid 65534" "$FB" info A
refused "list of nobody's root: refused" "belongs to uid 65534" "$FB" list
refused "destroy in nobody's root: refused" "belongs to uid 65534" "$FB" destroy A
check_eq "... nobody's directory left alone" "$(ls -A "$P/root")" "A"
rm -rf "$P/root"

# 2. The root as a symbolic link to another root: destroy X must not
# destroy the victim's X (nor add to it, nor list it).
check "nobody plants a symlink as the root" "${NOBODY[@]}" ln -s "$P/victim" "$P/root"
refused "destroy X through the symlink: refused" "symbolic link" "$FB" destroy X
check_eq "... the victim's X still holds its flow" "$(victim_info)" "1 of 1 maybe"
refused "add through the symlink: refused" "symbolic link" "$FB" add X src 198.51.100.8
refused "create through the symlink: refused" "symbolic link" "$FB" create Y --capacity 100 --fp-rate 0.01
check_eq "... nothing created in the victim" "$(ls -A "$P/victim")" "X"
rm -f "$P/root"

# A symlink further up: the root's parent.
mkdir -m 1777 "$P/up" && chmod 1777 "$P/up"
"${NOBODY[@]}" ln -s "$P" "$P/up/link"
FLOWBLOOM_ROOT=$P/up/link/victim refused "a symlink above the root: refused" "symbolic link" "$FB" destroy X
check_eq "... the victim's X still there" "$(victim_info)" "1 of 1 maybe"

# 3. A root (or filter directory) writable by others: anyone could swap
# filter directories in it. Refused, even if root owns it.
check "root makes a root" "$FB" create B --capacity 100 --fp-rate 0.01
chmod 0777 "$P/root"
refused "a world-writable root: refused" "writable by other users" "$FB" info B
# With a world-writable root nobody swaps B for a directory of his own.
"${NOBODY[@]}" mv "$P/root/B" "$P/root/B-old" 2>/dev/null
"${NOBODY[@]}" mkdir "$P/root/B" 2>/dev/null
refused "... and after nobody swapped B: still refused" "writable by other users" "$FB" destroy B
chmod 0700 "$P/root"
refused "nobody's B inside a sane root: refused" "belongs to uid 65534" "$FB" destroy B
check_eq "... the real B (moved away) left alone" "$(ls -A "$P/root/B-old" | sort | tr '\n' ' ')" "filter stats "
rm -rf "$P/root"

# 4. The ip link pins: nobody makes xdp/globals first; create default must
# refuse to pin there (nobody could swap fb_filter for a map of his own,
# which an ip-link program would then use). Tried on a private
# xdp/globals (FLOWBLOOM_IPROUTE_DIR) always, and on the real
# /sys/fs/bpf/xdp/globals when it does not exist.
export FLOWBLOOM_ROOT=$P/root
globals_squat() { # XDP_DIR (its parent must be a 1777 directory)
	local x=$1 g=$1/globals what=$2
	"${NOBODY[@]}" mkdir -p "$g"
	refused "$what: create default under nobody's xdp/globals: refused" "belongs to uid 65534" \
		env FLOWBLOOM_IPROUTE_DIR="$g" "$FB" create default --capacity 100 --fp-rate 0.01
	check_eq "$what: ... no filter default, no pin in globals" \
		"$(ls -A "$P/root" 2>/dev/null | wc -l) $(ls -A "$g" | wc -l)" "0 0"
	rm -rf "$x"
	"${NOBODY[@]}" ln -s "$P/victim" "$x"
	refused "$what: create default with xdp a symlink: refused" "symbolic link" \
		env FLOWBLOOM_IPROUTE_DIR="$g" "$FB" create default --capacity 100 --fp-rate 0.01
	check_eq "$what: ... nothing pinned into the symlink's target" "$(ls -A "$P/victim")" "X"
	rm -f "$x"
	# And when flowbloom makes them: root's, mode 0700, whatever the umask.
	check "$what: create default under umask 000 (xdp/globals made by flowbloom)" \
		env FLOWBLOOM_IPROUTE_DIR="$g" bash -c 'umask 000; exec "$@"' _ \
		"$FB" create default --capacity 100 --fp-rate 0.01
	check_eq "$what: ... xdp and globals: root, 0700, with the two pins, 0600" \
		"$(stat -c '%U %a' "$x" "$g" | tr '\n' ' ')$(stat -c '%n %a' "$g"/* | sed 's|.*/||' | tr '\n' ' ')" \
		"root 700 root 700 fb_filter 600 fb_stats 600 "
	check "$what: destroy default" env FLOWBLOOM_IPROUTE_DIR="$g" "$FB" destroy default
	check_eq "$what: ... and removes them" "$(ls -d "$x" 2>/dev/null | wc -l)" 0
}
globals_squat "$P/xdp" "private xdp/globals"
if [ ! -e /sys/fs/bpf/xdp ]; then
	XDP_MADE=1
	globals_squat /sys/fs/bpf/xdp "/sys/fs/bpf/xdp/globals"
	XDP_MADE=
else
	skip "/sys/fs/bpf/xdp exists: the squat of the real xdp/globals is not tried"
fi

# 5. The one link followed: iproute2's BPF loader, run before `create
# default` (`ip link ... xdp obj`, the order README documents), makes
# <bpffs>/tc/ and <bpffs>/xdp a symbolic link to "<bpffs>/tc/". Followed
# only when it is exactly that: root's link to a root-owned, private tc
# beside it on the same bpffs. Tried on the private xdp/globals ($P
# standing for the bpffs root; tests/e2e/iplink_first.sh does the real one
# with iproute2).
X=$P/xdp
G=$P/xdp/globals
mkdir -m 0700 "$P/tc"
ln -s "$P/tc/" "$X"
check "iproute2's link xdp -> tc/: create default follows it" \
	env FLOWBLOOM_IPROUTE_DIR="$G" "$FB" create default --capacity 100 --fp-rate 0.01
check_eq "... and pins in tc/globals" "$(ls "$P/tc/globals" 2>&1 | tr '\n' ' ')" "fb_filter fb_stats "
check "... destroy default" env FLOWBLOOM_IPROUTE_DIR="$G" "$FB" destroy default
check_eq "... removes its pins, leaves iproute2's link and tc" \
	"$(ls -A "$P/tc/globals" | wc -l) $(stat -c %F "$X")" "0 symbolic link"
link_refused() { # LABEL WORD: create default refused, nothing pinned anywhere
	refused "$1: create default refused" "$2" \
		env FLOWBLOOM_IPROUTE_DIR="$G" "$FB" create default --capacity 100 --fp-rate 0.01
	check_eq "$1: ... no filter, no pin" \
		"$(ls -A "$P/root" 2>/dev/null | wc -l) $(ls -A "$P/tc/globals" "$P/victim" 2>/dev/null | grep -c fb_)" "0 0"
}
relink() { rm -f "$X" && "$@"; }
relink ln -s "$P/victim/" "$X"
link_refused "xdp -> another directory" "symbolic link: refusing to follow it"
relink ln -s "$P/tc/globals/" "$X"
link_refused "xdp -> tc/globals/" "symbolic link: refusing to follow it"
relink ln -s "tc/" "$X"
link_refused "xdp -> tc/, relative" "symbolic link: refusing to follow it"
relink "${NOBODY[@]}" ln -s "$P/tc/" "$X"
link_refused "nobody's link xdp -> tc/" "symbolic link: refusing to follow it"
relink ln -s "$P/tc/" "$X"
chown 65534 "$P/tc"
link_refused "root's link to nobody's tc" "belongs to uid 65534"
chown 0 "$P/tc" && chmod 0777 "$P/tc"
link_refused "root's link to a world-writable tc" "writable by other users"
chmod 0700 "$P/tc"
if mount -t tmpfs -o size=64k,mode=0700 fbsq "$P/tc"; then
	link_refused "root's link to a tc on another file system" "not on the same bpffs"
	umount "$P/tc"
else
	fail "cannot mount a tmpfs on $P/tc"
fi
rm -f "$X"
rm -rf "$P/tc"

# 5b. Pins in root's own xdp/globals, as `ip link` leaves them before
# `create default` (empty maps of the right shape), that root gave away:
# owned by nobody, or writable by others. Whoever may write a pin can open
# it and put a filter of his own in the map an ip-link program uses, so
# create default must not adopt it (it did: the directory was checked, the
# pins not). Root's own 0600 pins are adopted.
X=$P/xdp
G=$P/xdp/globals
iproute_pins() { # as iproute2 pins the object's maps: empty, the object's shapes
	mkdir -p -m 0700 "$X" && mkdir -p -m 0700 "$G" &&
		bpftool map create "$P/chunk" type array key 4 value 262144 entries 1 flags 0x400 name fb_chunk &&
		bpftool map create "$G/fb_filter" type array_of_maps key 4 value 4 entries 8195 \
			name fb_filter inner_map pinned "$P/chunk" &&
		bpftool map create "$G/fb_stats" type percpu_array key 4 value 2176 entries 1 name fb_stats
	rm -f "$P/chunk"
}
pins_refused() { # LABEL WORD
	refused "$1: create default refused" "$2" \
		env FLOWBLOOM_IPROUTE_DIR="$G" "$FB" create default --capacity 100 --fp-rate 0.01
	check_eq "$1: ... no filter, the pins left as they were" \
		"$(ls -A "$P/root" 2>/dev/null | wc -l) $(stat -c '%n %u %a' "$G"/* | sed 's|.*/||' | tr '\n' ' ')" \
		"0 $3"
	env FLOWBLOOM_IPROUTE_DIR="$G" "$FB" destroy default >/dev/null 2>&1 # had it adopted them
	rm -f "$G"/fb_*
}
if command -v bpftool >/dev/null && iproute_pins; then
	chown 65534 "$G/fb_filter"
	pins_refused "ip-link fb_filter pin owned by nobody" "fb_filter belongs to uid 65534" \
		"fb_filter 65534 600 fb_stats 0 600 "
	iproute_pins && chown 65534 "$G/fb_stats"
	pins_refused "ip-link fb_stats pin owned by nobody" "fb_stats belongs to uid 65534" \
		"fb_filter 0 600 fb_stats 65534 600 "
	iproute_pins && chmod 0666 "$G/fb_filter"
	pins_refused "root's ip-link fb_filter pin, mode 0666" "writable by other users" \
		"fb_filter 0 666 fb_stats 0 600 "
	iproute_pins
	id0=$(bpftool -j map show pinned "$G/fb_filter" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	check "root's own 0600 ip-link pins: create default adopts them" \
		env FLOWBLOOM_IPROUTE_DIR="$G" "$FB" create default --capacity 100 --fp-rate 0.01
	check_eq "... the same fb_filter map" "$(bpftool -j map show pinned "$G/fb_filter" |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["id"])')" "$id0"
	check "... destroy default" env FLOWBLOOM_IPROUTE_DIR="$G" "$FB" destroy default
else
	skip "bpftool cannot make the ip-link pins: the given-away pins are not tried"
fi
rm -rf "$X"

# 6. The real default root, if no filter uses it now.
if [ ! -e /sys/fs/bpf/flowbloom ]; then
	ROOT_MADE=1
	"${NOBODY[@]}" mkdir /sys/fs/bpf/flowbloom
	refused "the real /sys/fs/bpf/flowbloom made by nobody: create refused" "belongs to uid 65534" \
		env -u FLOWBLOOM_ROOT "$FB" create Z --capacity 100 --fp-rate 0.01
	rm -rf /sys/fs/bpf/flowbloom
	ROOT_MADE=
else
	skip "/sys/fs/bpf/flowbloom exists: the real root squat is not tried"
fi

# 7. Modes do not follow the umask: under umask 000 the root and a
# filter's directory are made 0700, its pins 0600: nothing others may
# write, or read.
export FLOWBLOOM_ROOT=$P/umask
check "umask 000: create U" bash -c 'umask 000; exec "$@"' _ "$FB" create U --capacity 100 --fp-rate 0.01
check_eq "umask 000: the root and U 0700, the pins 0600" \
	"$(stat -c '%a' "$P/umask" "$P/umask/U" "$P/umask/U"/* | sort -u | tr '\n' ' ')" "600 700 "
check "umask 000: destroy U" "$FB" destroy U

export FLOWBLOOM_ROOT=$P/victim
check "victim: destroy X" "$FB" destroy X

# --- the tests' own lock, a predictable name in /tmp (t_lock_globals): in a
# sticky directory nobody owns (standing for /tmp), nobody plants a link
# (to a file root would create), a FIFO (open would wait for ever) and a
# file of its own (it could hold the lock): each refused at once, naming
# the file; absent, the lock is made 0600, so nobody cannot even open it.
ATK=$(mktemp -d /tmp/fbtest.squat.atk.XXXXXX)
chown 65534:65534 "$ATK"
chmod 1777 "$ATK"
"${NOBODY[@]}" sh -c 'ln -s "$2" "$1/link" && mkfifo "$1/fifo" && : >"$1/own"' _ "$ATK" "$T_TMP/made" ||
	fail "lock: nobody could not plant its link, FIFO and file"
LIB=$(cd "$(dirname "$0")/../lib" && pwd)/lib.sh
# lock_try NAME: t_lock_globals on $ATK/NAME in a shell of its own: "RC WHY".
lock_try() {
	timeout 10 bash -c 'source "$1"; T_GLOBALS_LOCK=$2; t_lock_globals; echo "$? $T_LOCK_WHY"' \
		_ "$LIB" "$ATK/$1" 2>&1 || echo "timeout"
}
for n in link fifo own; do
	r=$(lock_try $n)
	[[ "$r" == "1 $ATK/$n is not a regular file of root's"* ]] && pass "lock: nobody's $n refused" ||
		fail "lock: nobody's $n: '$r'"
done
check "lock: nothing created through nobody's link" test ! -e "$T_TMP/made"
check_eq "lock: an absent lock taken" "$(lock_try new)" "0 "
check_eq "lock: made root's, mode 600" "$(stat -c '%u %a %F' "$ATK/new")" "0 600 regular empty file"
check_fails "lock: nobody cannot open it to hold it" "${NOBODY[@]}" flock -n "$ATK/new" true

t_end
