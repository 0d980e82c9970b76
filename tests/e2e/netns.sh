#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The global -n NETNS, and what `status` finds across network namespaces,
# for real (namespaces and veth pairs of the suite's own, a filter of its
# own root; no traffic):
# - -n NAME enters /run/netns/NAME and nothing else: a name that fits a
#   file's is never cut to the start another namespace is named by (it
#   used to attach there), a longer one is refused; a file that is no
#   namespace says so; with -j after -n, an error is still one {"error"}
#   on stdout;
# - status lists a long namespace name whole (-j);
# - status finds a namespace only an open file holds (`exec 3<` of its
#   /run/netns name, then `ip netns del`: the fd then reads as "/"), and one
#   bind-mounted only in another process's mount namespace;
# - a device's name and a process's name (which root in a container, and
#   the process, choose) reach the terminal without their control
#   characters, in status and info; -j keeps them.
source "$(dirname "$0")/../lib/lib.sh"
t_begin netns
HELD=()
cleanup() {
	local p
	for p in $(t_ours "${HELD[@]}"); do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	[ -n "${MNT:-}" ] && rm -f "$MNT"
	[ -n "${LONG:-}" ] && ip netns del "$LONG" 2>/dev/null
	[ -n "${SHORT:-}" ] && ip netns del "$SHORT" 2>/dev/null
	return 0
}
t_traps
t_net_pair || t_skip_all "$T_NET_WHY"

"$FB" create nx --capacity 100 --fp-rate 0.01 >/dev/null || fail "create nx"
# status_row DEV: the status line (text) of DEV, whatever namespace.
status_row() { "$FB" status 2>/dev/null | grep -a " $1 "; }

# --- -n: a 250-byte name (a file's name may have 255) whose first 244
# bytes name another namespace: that one was entered (the path was cut to
# 256 bytes). A name no file can have is refused.
LONG=fbns$$$(printf 'x%.0s' $(seq 250))
LONG=${LONG:0:250}
SHORT=${LONG:0:244}
if ip netns add "$LONG" 2>/dev/null && ip netns add "$SHORT" 2>/dev/null; then
	ip link add "fbnl$$" netns "$SHORT" type veth peer name "fbnm$$" netns "$SHORT"
	"$FB" -n "$LONG" attach nx "fbnl$$" >"$T_TMP/long.out" 2>"$T_TMP/long.err"
	check_eq "-n: a 250-byte name: its own namespace, without the device" \
		"$?:$(cat "$T_TMP/long.out" "$T_TMP/long.err")" "1:flowbloom: no device 'fbnl$$' in network namespace '$LONG'"
	ip -n "$SHORT" link show "fbnl$$" | grep -q "prog/xdp" &&
		fail "-n: the namespace its start names got the attachment"
	"$FB" -n "$LONG$LONG" list >"$T_TMP/long.out" 2>"$T_TMP/long.err"
	check_eq "-n: a name longer than a file's" "$?:$(cat "$T_TMP/long.out" "$T_TMP/long.err")" \
		"1:flowbloom: cannot enter network namespace '$LONG$LONG': File name too long"
	"$FB" -n "$SHORT" attach nx "fbnl$$" >/dev/null || fail "-n: attach in the 244-byte name"
	"$FB" -j status >"$T_TMP/long.json"
	check_eq "status -j: a long namespace name whole" \
		"$(t_json "[a['netns'] == '$SHORT' for a in d['attachments'] if a['device'] == 'fbnl$$']" \
			"$T_TMP/long.json")" "[True]"
	ip netns del "$LONG"
	ip netns del "$SHORT"
else
	skip "-n: cannot make namespaces with names of 244 and 250 bytes"
fi
LONG= SHORT=

"$FB" -n "fbnone$$" -j list >"$T_TMP/j.out" 2>"$T_TMP/j.err"
check_eq "-n NS -j: exit 1" "$?" 1
check_eq "-n NS -j: the error as JSON on stdout" "$(t_json "d['error']" "$T_TMP/j.out")" \
	"cannot enter network namespace 'fbnone$$': No such file or directory"
"$FB" -n ../../etc/hostname list 2>&1 >/dev/null |
	grep -q "cannot enter network namespace '../../etc/hostname': not a network namespace" &&
	pass "-n: a file that is no namespace says so" || fail "-n: a file that is no namespace"

# --- destroy of a filter attached in another namespace: refused, naming
# where (it said only "in use by XDP program N (attached in another
# network namespace?)", leaving the operator to find which device, which
# namespace, which mode: an `ip link` program loaded with xdpgeneric is
# one `ip link set dev DEV xdp off` leaves).
"$FB" -n "$NSB" attach nx "$VB" --mode generic >/dev/null || fail "attach nx to $VB (generic)"
t_refused 1 "destroy nx attached in $NSB: refused, naming the device, namespace and mode" \
	"filter 'nx' is attached to $VB (netns $NSB, generic, XDP program [0-9]*): detach it first" \
	"$FB" destroy nx
# ... at once: it waited 2 s (100 pauses of 20 ms) for the program to go,
# as for one only looked at, before naming the attachment it then found.
if command -v strace >/dev/null; then
	strace -f -qq -o "$T_TMP/st" -e trace=nanosleep,clock_nanosleep "$FB" destroy nx >/dev/null 2>&1
	check_eq "... at once, without pausing for the program to go" \
		"$(grep -c 'nanosleep(' "$T_TMP/st")" 0
else
	skip "destroy's pauses: strace is missing (make deps installs it)"
fi
# ... in one line even when the ip-link pins' directory is another user's
# (a squat, or a suite trying one): a note about it is status's business,
# not this refusal's (it broke the line in two beside squat.sh). A private
# xdp/globals of nobody's stands for the real one.
SQ=$T_TMP/xdp
mkdir -p "$SQ/globals" && chown -R 65534 "$SQ"
FLOWBLOOM_IPROUTE_DIR=$SQ/globals t_refused 1 \
	"destroy nx: refused in one line while xdp/globals is nobody's" \
	"filter 'nx' is attached to $VB" "$FB" destroy nx
"$FB" -n "$NSB" detach "$VB" >/dev/null || fail "detach $VB"

# --- Control characters in a device's name (root of the namespace sets
# it) and in the name of the process that holds the namespace.
ESC=$'\e'
ip -n "$NSB" link set "$VB" name "$ESC[7mfb$$" || fail "rename $VB"
VB=$ESC[7mfb$$
"$FB" -n "$NSB" attach nx "$VB" >/dev/null || fail "attach nx to the renamed device"
nsenter --net="/run/netns/$NSB" "$PY" -c '
import ctypes, sys, time
ctypes.CDLL(None).prctl(15, b"\x1b]0;x\x07\x1b[2J", 0, 0, 0)
open(sys.argv[1], "w").write("ready\n")
time.sleep(600)' "$T_TMP/ready2" &
HELD+=($!)
HOLDER=$!
t_wait_until 20 test -s "$T_TMP/ready2"
ip netns del "$NSB"
"$FB" status >"$T_TMP/esc.out" 2>&1
"$FB" -n "../../proc/$HOLDER/ns/net" info nx >>"$T_TMP/esc.out" 2>&1
grep -aq "$ESC" "$T_TMP/esc.out" && fail "status, info: an escape reaches the terminal: $(grep -a "$ESC" "$T_TMP/esc.out" | od -c | head -3)" ||
	pass "status, info: no control character reaches the terminal"
grep -aqE "^pid $HOLDER \(\?\]0;x\?\?\[2J\) +\?\[7mfb$$ +native " "$T_TMP/esc.out" &&
	pass "status: control characters shown as ?" || fail "status: $(cat -v "$T_TMP/esc.out")"
grep -aq "attached: ?\[7mfb$$ native" "$T_TMP/esc.out" && pass "info: control characters shown as ?" ||
	fail "info: $(cat -v "$T_TMP/esc.out")"
"$FB" -j status >"$T_TMP/esc.json"
check_eq "status -j: the names as they are" \
	"$(t_json "[(a['netns'], a['device']) for a in d['attachments'] if a['device'].endswith('fb$$')]" \
		"$T_TMP/esc.json")" "[('pid $HOLDER (\x1b]0;x\x07\x1b[2J)', '\x1b[7mfb$$')]"


# --- A namespace only an open file holds: its name removed, a process of
# the initial namespace keeps it (fd 3).
"$FB" -n "$NSA" attach nx "$VA" >/dev/null || fail "attach nx to $VA"
t_ns_holder "$NSA"
HOLDER=$T_HOLDER
HELD+=("$HOLDER")
ip netns del "$NSA"
row=$(status_row "$VA")
[[ "$row" =~ ^"pid $HOLDER (sleep) fd 3"\ +"$VA "\ +native\ +[0-9]+\ +"nx (drop; malformed drop)"$ ]] &&
	pass "status: a namespace only an open file holds" || fail "status, fd-held: '$row'"
kill "$HOLDER" && wait "$HOLDER" 2>/dev/null

# --- One bind-mounted only in another process's mount namespace (`ip
# netns add` where /run/netns does not propagate): no process is in it.
MNT=$T_TMP/nsmnt
touch "$MNT"
mkfifo "$T_TMP/ready"
unshare -m --propagation private sh -c 'unshare -n sh -c "ip link add $1 type veth peer name $1p &&
	$2 attach nx $1 >/dev/null && mount --bind /proc/self/ns/net $3" && echo ready >$4 &&
	exec sleep 600' _ "fbnp$$" "$FB" "$MNT" "$T_TMP/ready" 2>"$T_TMP/mnt.err" &
HELD+=($!)
HOLDER=$!
if timeout 20 cat "$T_TMP/ready" >/dev/null; then
	row=$(status_row "fbnp$$")
	[[ "$row" =~ ^"$MNT (mounts of pid $HOLDER)"\ +"fbnp$$ "\ +native\ +[0-9]+\ +"nx (drop; malformed drop)"$ ]] &&
		pass "status: a namespace mounted in another mount namespace" ||
		fail "status, mounted elsewhere: '$row'"
else
	fail "mount namespace: $(cat "$T_TMP/mnt.err")"
fi
kill "$HOLDER" && wait "$HOLDER" 2>/dev/null

t_finish
