#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The documented order, end to end, with the real iproute2 and the real
# /sys/fs/bpf/xdp: `ip link set dev X xdp obj flowbloom.bpf.o sec xdp`
# FIRST (its loader pins the object's empty maps and, when /sys/fs/bpf/xdp
# does not exist, makes it a symbolic link to /sys/fs/bpf/tc/), THEN
# `flowbloom create default` (which must follow exactly that link and adopt
# the pins), then a listed source is dropped on real UDP across a veth
# pair between two namespaces, the others pass; `ip link ... xdp off` and
# `destroy default` leave no pin.
#
# It uses /sys/fs/bpf/xdp and /sys/fs/bpf/tc: it holds /tmp/fb-globals.lock
# (taken here), works only when no `default` filter is pinned there, and
# restores what existed before: an empty /sys/fs/bpf/xdp directory
# (flowbloom's) is moved out of the way and made again after; links and
# directories iproute2 made for this run are removed. The trap removes the
# namespaces and the veth pair. Addresses: 198.51.100.0/24.
source "$(dirname "$0")/../lib/lib.sh"
t_begin iplink_first

FBOBJ=$(dirname "$FB")/flowbloom.bpf.o
BPFFS=/sys/fs/bpf
NSA=fbifA$$
NSB=fbifB$$
VA=fbifa$$
VB=fbifb$$
MACA=02:fb:00:00:04:0a
MACB=02:fb:00:00:04:0b
A4=198.51.100.1
BAD4=198.51.100.3
B4=198.51.100.2
NEW=()        # bpffs entries absent before (removed after, links and empty dirs)
XDP_DIR_SET=  # /sys/fs/bpf/xdp was flowbloom's empty directory: made again after
CREATED=      # default is ours to destroy
declare -A PINS # map ids of the pins iproute2 made in this run
CLEANED=

inB() { nsenter --net="/run/netns/$NSB" -- "$@"; }
pin_id() {
	bpftool -j map show pinned "$1" 2>/dev/null | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["id"])' 2>/dev/null
}

cleanup() {
	local p m
	[ -n "$CLEANED" ] && return 0
	CLEANED=1
	inB ip link set dev "$VB" xdp off 2>/dev/null
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	[ -n "$CREATED" ] && "$FB" destroy default >/dev/null 2>&1
	for m in fb_filter fb_stats; do
		[ -n "${PINS[$m]:-}" ] && [ "$(pin_id "$BPFFS/tc/globals/$m")" == "${PINS[$m]}" ] &&
			rm -f "$BPFFS/tc/globals/$m"
	done
	for p in "${NEW[@]}"; do
		if [ -L "$p" ]; then rm -f "$p"; elif [ -d "$p" ]; then rmdir "$p" 2>/dev/null; fi
	done
	if [ -n "$XDP_DIR_SET" ] && [ ! -e "$BPFFS/xdp" ] && [ ! -L "$BPFFS/xdp" ]; then
		mkdir -m 0700 "$BPFFS/xdp" "$BPFFS/xdp/globals"
	fi
	t_cleanup_filters
}
t_traps

skip_all() {
	skip "iplink_first: $1"
	t_finish
}

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
[ -n "$PY" ] || skip_all "needs python3"
command -v bpftool >/dev/null || skip_all "needs bpftool"
[ -x "$FB" ] && [ -f "$FBOBJ" ] || {
	fail "not built (run make)"
	t_finish
}
stat -f -c %T "$BPFFS" 2>/dev/null | grep -q bpf || skip_all "bpffs is not mounted at $BPFFS"
t_lock_globals || skip_all "$T_LOCK_WHY"

# What is there now. A default filter of someone else's: not ours to touch.
for p in "$BPFFS/xdp/globals" "$BPFFS/tc/globals"; do
	[ -e "$p/fb_filter" ] || [ -e "$p/fb_stats" ] && skip_all "$p holds a 'default' filter's pins"
done
if [ -d "$BPFFS/xdp" ] && [ ! -L "$BPFFS/xdp" ]; then
	# flowbloom's own (create default without ip link first), empty:
	# out of the way, so that iproute2 makes its link; made again after.
	[ -z "$(ls -A "$BPFFS/xdp/globals" 2>/dev/null)" ] &&
		[ "$(ls -A "$BPFFS/xdp")" == "globals" ] || skip_all "$BPFFS/xdp is a directory in use"
	rmdir "$BPFFS/xdp/globals" "$BPFFS/xdp" || skip_all "cannot move $BPFFS/xdp out of the way"
	XDP_DIR_SET=1
fi
for p in "$BPFFS/xdp" "$BPFFS/ip" "$BPFFS/tc/globals" "$BPFFS/tc"; do
	[ -e "$p" ] || [ -L "$p" ] || NEW+=("$p") # children before their parents
done

ip netns add "$NSA" && ip netns add "$NSB" || skip_all "cannot create network namespaces"
ip link add "$VA" address "$MACA" netns "$NSA" type veth \
	peer name "$VB" address "$MACB" netns "$NSB" || skip_all "veth is not available"
for n in "$NSA:$VA" "$NSB:$VB"; do
	nsenter --net="/run/netns/${n%%:*}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "${n%%:*}" link set "${n#*:}" up
done
ip -n "$NSA" addr add "$A4/24" dev "$VA"
ip -n "$NSA" addr add "$BAD4/24" dev "$VA"
ip -n "$NSB" addr add "$B4/24" dev "$VB"
# Static neighbours both ways: no ARP, so every frame B sees is a datagram.
ip -n "$NSA" neigh add "$B4" lladdr "$MACB" dev "$VA" nud permanent
ip -n "$NSB" neigh add "$A4" lladdr "$MACA" dev "$VB" nud permanent
ip -n "$NSB" neigh add "$BAD4" lladdr "$MACA" dev "$VB" nud permanent

# 1. ip link first.
check "ip link set $VB xdp obj flowbloom.bpf.o sec xdp (before any filter)" \
	inB ip link set dev "$VB" xdp obj "$FBOBJ" sec xdp
PINS[fb_filter]=$(pin_id "$BPFFS/tc/globals/fb_filter")
PINS[fb_stats]=$(pin_id "$BPFFS/tc/globals/fb_stats")
check_eq "iproute2 made $BPFFS/xdp its link to $BPFFS/tc/" "$(readlink "$BPFFS/xdp")" "$BPFFS/tc/"
check "... and pinned the object's maps in tc/globals" test -n "${PINS[fb_filter]}" -a -n "${PINS[fb_stats]}"

# 1a. apply --check of default.conf with a list loads it for the check
# into a filter built aside, which never adopts ip link's pins: the
# pinned outer map as it was. (It adopted them, filled slot 0 while the
# program ran, and gave them back, one empty chunk in every slot.)
mkdir -m 0755 "$T_TMP/ap"
printf 'capacity = 1000\nfp-rate = 0.001\nload = default.txt\n' >"$T_TMP/ap/default.conf"
printf '%s\n' "$BAD4" >"$T_TMP/ap/default.txt"
dump() { bpftool -j map dump pinned "$BPFFS/xdp/globals/fb_filter"; }
before=$(dump)
check "apply --check default.conf (a list, after ip link)" "$FB" apply --check "$T_TMP/ap/default.conf"
check_eq "... ip link's pinned outer map untouched" "$(dump)" "$before"

# 1b. A refused import as default (its file's last byte flipped: the CRC,
# read last) gives the adopted maps back as they were: slot 0 empty and no
# chunk of the file held in the others (one empty chunk stands in them).
# It left the file's 16 chunks (4 MiB) in the pinned outer map, and check
# said clean.
"$FB" create big --capacity 2000000 --fp-rate 0.001 >/dev/null
"$FB" export big "$T_TMP/big.fbx" --plain >/dev/null
"$FB" destroy big >/dev/null
"$PY" -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[-1] ^= 1; open(sys.argv[2], "wb").write(b)' \
	"$T_TMP/big.fbx" "$T_TMP/bad.fbx"
t_refused 1 "a corrupt export imported as default: refused" "checksum" "$FB" import "$T_TMP/bad.fbx" default
check_eq "... the pinned outer map: slot 0 empty, no chunk of the file held" \
	"$(bpftool -j map dump pinned "$BPFFS/xdp/globals/fb_filter" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
print(any(e["key"] == ["0x00"] * 4 for e in d), len({tuple(e["value"]) for e in d}) <= 1)')" "False True"
rm -f "$T_TMP/big.fbx" "$T_TMP/bad.fbx"

# 2. Then the filter: it follows iproute2's link and adopts those pins.
check "create default (after ip link)" "$FB" create default --capacity 1000 --fp-rate 0.001
CREATED=1
check_eq "... adopting the pins ip link made" \
	"$(pin_id "$BPFFS/xdp/globals/fb_filter") $(pin_id "$BPFFS/xdp/globals/fb_stats")" \
	"${PINS[fb_filter]} ${PINS[fb_stats]}"
check "add the listed source" "$FB" add default src "$BAD4"

# 3. Real traffic: the listed source dropped, the other passed.
send() { nsenter --net="/run/netns/$NSA" "$PY" -c "$T_UDP_SEND" "$1" "$B4" "$2"; }
st() { t_stat "$FB" default "$1"; }
d0=$(st dropped)
p0=$(st passed)
send "$A4" 40
send "$BAD4" 25
# counted in the receiver's softirq, maybe after send returned: waited for
counted() { [ "$(($(st dropped) - d0)) $(($(st passed) - p0))" = "25 40" ]; }
t_wait_until 10 counted
check_eq "the listed source's 25 packets dropped" "$(($(st dropped) - d0))" 25
check_eq "the other source's 40 packets passed" "$(($(st passed) - p0))" 40

# 3b. default's ip link pins gone (as a create killed after its publish
# leaves them) when the program is loaded again: iproute2 pins fresh maps,
# on which the program passes every packet. check says which pins and what
# to do (it said "missing", and its --repair refused them), status says
# they are not default's (it said "NO FILTER YET", whose advice, create
# default, is refused); the way out check gives works.
check "ip link set $VB xdp off" inB ip link set dev "$VB" xdp off
rm -f "$BPFFS/xdp/globals/fb_filter" "$BPFFS/xdp/globals/fb_stats"
check "ip link ... xdp obj again, default's pins gone" inB ip link set dev "$VB" xdp obj "$FBOBJ" sec xdp
"$FB" check default >"$T_TMP/chk" 2>&1
check_eq "check default: exit 1" "$?" 1
grep -q "name other maps than the filter's: an ip link program loaded while they were missing" \
	"$T_TMP/chk" && pass "... saying what runs on which maps" || fail "... said: $(cat "$T_TMP/chk")"
"$FB" status >"$T_TMP/status" 2>/dev/null
grep -q "xdp/globals, NOT default's maps" "$T_TMP/status" && pass "status: not default's maps" ||
	fail "status said: $(cat "$T_TMP/status")"
check "the way out: detach it" inB ip link set dev "$VB" xdp off
rm -f "$BPFFS/xdp/globals/fb_filter" "$BPFFS/xdp/globals/fb_stats"
check "... check --repair pins default's maps again" "$FB" check default --repair
check "... load it again" inB ip link set dev "$VB" xdp obj "$FBOBJ" sec xdp
d0=$(st dropped)
send "$BAD4" 10
dropped10() { [ "$(($(st dropped) - d0))" = 10 ]; }
t_wait_until 10 dropped10
check_eq "... the listed source dropped again" "$(($(st dropped) - d0))" 10

# 4. Off again: no pin left behind.
check "ip link set $VB xdp off" inB ip link set dev "$VB" xdp off
check "destroy default" "$FB" destroy default
CREATED=
check_eq "... its pins are gone from tc/globals" \
	"$(ls -A "$BPFFS/tc/globals" 2>/dev/null | grep -c '^fb_')" 0
t_finish
