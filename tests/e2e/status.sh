#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `ip -n NS link set DEV xdp obj flowbloom.bpf.o` fails open: iproute2
# remounts /sys for it, the object's maps are pinned in a private bpffs,
# and the program runs on empty maps, passing everything. Two namespaces
# and a veth pair, for real:
# - loaded with `ip -n`: UDP datagrams from a listed source pass; `status`
#   lists the attachment as PRIVATE MAPS (fails open) and exits 3; `info`
#   and `stats` warn (stderr; a fail_open array with -j); the ip-link pins
#   in /sys/fs/bpf/xdp/globals are untouched; with the walk refused
#   (strace), info and stats warn that failing open is not ruled out;
# - loaded with `nsenter --net`: status shows filter default, exit 0, no
#   warning, and the datagrams are dropped (stats);
# - a namespace only a process holds (unshare -n), and one both named and
#   held by a process (listed once, by its name), are found;
# - the initial namespace is listed as root, also where PID 1's namespace
#   link cannot be read;
# - an ip -n attachment in a namespace only an open file holds (its name
#   deleted) is found: exit 3;
# - a status that may not look into processes (run without CAP_SYS_PTRACE,
#   as PID 1 refuses its own /proc entries in a sandbox): an attachment in
#   a namespace only such a process holds is not passed for none (exit 1,
#   naming the processes and the program found attached nowhere; -j:
#   not_looked_into, not_found_attached); a refused process in a namespace
#   status visited is no gap (exit 0);
# - an xdp/globals that user nobody made, with a link planted in it to
#   another filter's pin, is not believed: status says the attachment uses
#   that filter, not xdp/globals, and notes why;
# - a device's link type not read, or the filter's directory not trusted:
#   null, never a guess, and exit 1 saying why; every -j field in each.
# Uses the `default` filter and the /sys/fs/bpf/xdp/globals pins: holds
# /tmp/fb-globals.lock (t_lock_globals).
source "$(dirname "$0")/../lib/lib.sh"
t_begin status
t_lock_globals || t_skip_all "$T_LOCK_WHY"

OBJ=$(cd "$(dirname "$0")/../.." && pwd)/build/flowbloom.bpf.o
GLOBALS=/sys/fs/bpf/xdp/globals
HELD=()
# bpffs entries `create default` and iproute2's loader make: removed at the
# end if they did not exist before (and are empty).
BPFFS_NEW=()
for p in /sys/fs/bpf/ip /sys/fs/bpf/tc/globals /sys/fs/bpf/tc /sys/fs/bpf/xdp/globals /sys/fs/bpf/xdp; do
	[ -e "$p" ] || [ -L "$p" ] || BPFFS_NEW+=("$p")
done
declare -A OUR_PINS=()

pin_id() { bpftool -j map show pinned "$1" 2>/dev/null | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["id"])' 2>/dev/null; }

cleanup() {
	local p m i
	for p in $(t_ours "${HELD[@]}"); do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	# Deleting the veths deletes their programs.
	t_net_down
	ip link del "fsr$$" 2>/dev/null
	ip netns del "fbstE$$" 2>/dev/null
	# A detached program is freed a moment later; until then destroy
	# rightly refuses (the filter is in use).
	for i in $(seq 50); do
		"$FB" destroy default >/dev/null 2>&1 && break
		[ -e "$FLOWBLOOM_ROOT/default" ] || break
		sleep 0.1
	done
	for m in fb_filter fb_stats; do
		[ -n "${OUR_PINS[$m]:-}" ] && [ "$(pin_id "$GLOBALS/$m")" == "${OUR_PINS[$m]}" ] &&
			rm -f "$GLOBALS/$m"
	done
	for p in "${BPFFS_NEW[@]}"; do
		if [ -L "$p" ]; then rm -f "$p"; elif [ -d "$p" ]; then rmdir "$p" 2>/dev/null; fi
	done
	t_cleanup_filters
	rm -rf --one-file-system "$P" 2>/dev/null
	[ -n "${XDP_SQUAT:-}" ] && rm -rf --one-file-system /sys/fs/bpf/xdp
}
t_traps

if [ -e "$GLOBALS/fb_filter" ] || [ -e "$GLOBALS/fb_stats" ]; then
	skip "status: $GLOBALS already holds fb_filter/fb_stats (another test running without the lock?)"
	t_end
	exit
fi

if ! t_net_pair; then
	fail "status: $T_NET_WHY"
	t_finish
fi
N1=$NSA
N2=$NSB
t_addr "$N1" "$VA" 198.51.100.1/24
t_addr "$N2" "$VB" 198.51.100.2/24

# udp_through N: N datagrams from N2 to N1, how many arrived. The
# receiver ends once all came, or 2 s after the sender is done (30 s at
# most): not 2 s from its own start, which a sender python started late
# on a loaded machine outlasts.
udp_through() {
	rm -f "$T_TMP/recv" "$T_TMP/sent.$1"
	nsenter --net="/run/netns/$N1" "$PY" -c '
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.1", 4000))
s.settimeout(0.2)
open(sys.argv[2], "w").write("ready\n")
n, end, cap = 0, None, time.time() + 30
while n < int(sys.argv[1]) and time.time() < min(cap, end or cap):
    if end is None and os.path.exists(sys.argv[3]):
        end = time.time() + 2
    try:
        s.recv(100)
        n += 1
    except socket.timeout:
        pass
print(n)' "$1" "$T_TMP/ready.$1" "$T_TMP/sent.$1" >"$T_TMP/recv" &
	local r=$!
	t_wait_until 30 test -e "$T_TMP/ready.$1" || fail "the receiver in $1 not ready in 30 s"
	rm -f "$T_TMP/ready.$1"
	nsenter --net="/run/netns/$N2" "$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"flowbloom status test", ("198.51.100.1", 4000))
    time.sleep(0.02)' "$1"
	touch "$T_TMP/sent.$1"
	wait $r
	cat "$T_TMP/recv"
}
# counter COUNTER: default's packets for COUNTER.
counter() { "$FB" -j stats default | "$PY" -c "import json,sys; print(json.load(sys.stdin)['$1']['packets'])"; }
# status_line DEV: status's line for DEV in namespace $N1.
status_line() { grep -E "^$N1 +$1 " "$T_TMP/status.out"; }
run_status() {
	"$FB" status >"$T_TMP/status.out" 2>"$T_TMP/status.err"
	echo $?
}
prog_of() { ip -n "$N1" -d link show "$1" | grep -o 'prog/xdp id [0-9]*' | awk '{print $3}'; }

# --- Z: xdp/globals squatted. /sys/fs/bpf is mode 1777: before `create
# default` makes xdp/globals, user nobody can, and plant in it a link
# fb_filter to the pin of a filter that runs somewhere (here X of another
# root, on $VB). status must not believe it (it would show X's attachment
# as xdp/globals failing open) and says why in one note. Tried on a private
# xdp/globals ($P, a 1777 directory standing for /sys/fs/bpf), with nobody's
# directory and with nobody's link for xdp, and on the real /sys/fs/bpf/xdp
# when it does not exist yet.
P=/sys/fs/bpf/fbst_$$
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
mkdir -m 1777 "$P" && chmod 1777 "$P"
FLOWBLOOM_ROOT=$P/other "$FB" create X --capacity 100 --fp-rate 0.01 >/dev/null
FLOWBLOOM_ROOT=$P/other "$FB" -n "$N2" attach X "$VB" >/dev/null ||
	fail "squat: attach X (another root) to $VB"
XID=$(pin_id "$P/other/X/filter")
# squat_status LABEL XDP_DIR [ENV...]: status with ENV, where nobody made
# XDP_DIR/globals/fb_filter a link to X's pin: $VB's line, -j, the note.
squat_status() {
	local what=$1 x=$2
	shift 2
	env "$@" "$FB" status >"$T_TMP/status.out" 2>"$T_TMP/status.err"
	grep -qE "^$N2 +$VB +[a-z]+ +[0-9]+ +a filter not under $FLOWBLOOM_ROOT \(map $XID\)$" \
		"$T_TMP/status.out" && pass "$what: status shows X's map, not xdp/globals" ||
		fail "$what: status: $(grep " $VB " "$T_TMP/status.out")"
	grep -q "^flowbloom: note: $x.*\(belongs to uid 65534, not root\|symbolic link\): refusing" \
		"$T_TMP/status.err" && pass "$what: status notes why xdp/globals is not believed" ||
		fail "$what: status stderr: $(head -c 300 "$T_TMP/status.err")"
	env "$@" "$FB" -j status 2>/dev/null >"$T_TMP/status.json"
	check_eq "$what: status -j" "$("$PY" - "$T_TMP/status.json" "$N2" "$VB" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print([(x["maps"], x["fails_open"]) for x in j["attachments"] if x["netns"] == sys.argv[2] and x["device"] == sys.argv[3]])
PY
)" "[('other', False)]"
}
squat_globals() { # LABEL XDP_DIR [ENV...] (XDP_DIR's parent: a 1777 directory)
	local what=$1 x=$2
	shift 2
	"${NOBODY[@]}" mkdir -p "$x/globals" &&
		"${NOBODY[@]}" ln -s "$P/other/X/filter" "$x/globals/fb_filter" ||
		fail "$what: nobody cannot squat $x/globals"
	squat_status "$what, nobody's directory" "$x" "$@"
	rm -rf --one-file-system "$x"
	"${NOBODY[@]}" mkdir -p "$P/nb/globals" &&
		"${NOBODY[@]}" ln -s "$P/other/X/filter" "$P/nb/globals/fb_filter" &&
		"${NOBODY[@]}" ln -s "$P/nb" "$x" || fail "$what: nobody cannot plant $x"
	squat_status "$what, nobody's link for xdp" "$x" "$@"
	rm -rf --one-file-system "$x" "$P/nb"
}
squat_globals "private xdp/globals" "$P/xdp" FLOWBLOOM_IPROUTE_DIR="$P/xdp/globals"
if [ ! -e /sys/fs/bpf/xdp ] && [ ! -L /sys/fs/bpf/xdp ]; then
	XDP_SQUAT=1
	squat_globals "/sys/fs/bpf/xdp/globals" /sys/fs/bpf/xdp -u FLOWBLOOM_IPROUTE_DIR
	XDP_SQUAT=
else
	skip "squat: /sys/fs/bpf/xdp exists: the squat of the real xdp/globals is not tried"
fi
FLOWBLOOM_ROOT=$P/other "$FB" -n "$N2" detach "$VB" >/dev/null

"$FB" create default --capacity 1000 --fp-rate 0.01 >/dev/null
"$FB" add default src 198.51.100.2 >/dev/null # N2's address: dropped when filtered
OUR_PINS[fb_filter]=$(pin_id "$GLOBALS/fb_filter")
OUR_PINS[fb_stats]=$(pin_id "$GLOBALS/fb_stats")
GID=${OUR_PINS[fb_filter]}
check_eq "no attachment yet: datagrams arrive" "$(udp_through 5)" 5
check_eq "status: usage error with an argument" "$("$FB" status x >/dev/null 2>&1; echo $?)" 2

# --- A: ip -n (fails open)
if ! ip -n "$N1" link set dev "$VA" xdp obj "$OBJ" sec xdp 2>"$T_TMP/ip.err"; then
	fail "ip -n link set xdp obj: $(cat "$T_TMP/ip.err")"
fi
PROG=$(prog_of "$VA")
check_eq "ip -n: the xdp/globals pin is untouched" "$(pin_id "$GLOBALS/fb_filter")" "$GID"
check_eq "ip -n: a listed source's datagrams all pass (the program fails open)" "$(udp_through 10)" 10
check_eq "ip -n: default's counters saw nothing" "$(counter seen)" 0
rc=$(run_status)
check_eq "ip -n: status exits 3" "$rc" 3
status_line "$VA" | grep -qE " $PROG +PRIVATE MAPS \(fails open\)$" &&
	pass "ip -n: status lists it as PRIVATE MAPS (fails open)" ||
	fail "ip -n: status: $(cat "$T_TMP/status.out")"
grep -q 'FAILS\? OPEN' "$T_TMP/status.err" && pass "ip -n: status warns on stderr" ||
	fail "ip -n: status stderr: $(cat "$T_TMP/status.err")"
"$FB" -j status >"$T_TMP/status.json"
check_eq "ip -n: status -j" "$("$PY" - "$T_TMP/status.json" "$N1" "$VA" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
a = [x for x in j["attachments"] if x["netns"] == sys.argv[2] and x["device"] == sys.argv[3]]
print(len(a), a and a[0]["maps"], a and a[0]["filter"], a and a[0]["fails_open"], j["fails_open"] >= 1)
PY
)" "1 private None True True"
for verb in info stats; do
	"$FB" $verb default >"$T_TMP/v.out" 2>"$T_TMP/v.err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "warning: XDP program $PROG on $VA (netns $N1, .*FAILS OPEN" "$T_TMP/v.err"; then
		pass "ip -n: $verb default warns"
	else
		fail "ip -n: $verb default (exit $rc) did not warn: $(cat "$T_TMP/v.err")"
	fi
	"$FB" -j $verb default >"$T_TMP/v.json" 2>"$T_TMP/v.err"
	check_eq "ip -n: $verb -j default: fail_open lists it, stderr quiet" "$("$PY" - "$T_TMP/v.json" "$PROG" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print([x["prog_id"] for x in j.get("fail_open", []) if x["prog_id"] == int(sys.argv[2])] == [int(sys.argv[2])])
PY
)$(wc -c <"$T_TMP/v.err")" "True0"
done
# The walk refused (strace: every open of $N1 fails for descriptors):
# info and stats said nothing, as if no program failed open. Now a
# warning that it cannot be ruled out (-j: "fail_open": null), exit 0.
if command -v strace >/dev/null; then
	for verb in info stats; do
		strace -f -qq -o /dev/null -P "/run/netns/$N1" -e trace=openat -e inject=openat:error=EMFILE \
			"$FB" $verb default >/dev/null 2>"$T_TMP/v.err"
		check_eq "walk refused: $verb default warns that failing open is not ruled out" \
			"$?$(grep -c "^flowbloom: warning: cannot tell whether a flowbloom XDP program fails open (passes every packet): cannot tell where flowbloom's programs are attached: /run/netns/$N1: Too many open files$" "$T_TMP/v.err")" 01
		strace -f -qq -o /dev/null -P "/run/netns/$N1" -e trace=openat -e inject=openat:error=EMFILE \
			"$FB" -j $verb default >"$T_TMP/v.json" 2>/dev/null
		check_eq "walk refused: $verb -j default: fail_open null" \
			"$(t_json '"fail_open" in d and d["fail_open"] is None' "$T_TMP/v.json")" True
	done
else
	skip "walk refused: strace is not installed"
fi
ip -n "$N1" link set dev "$VA" xdp off

# --- B: nsenter --net (uses the filter); N1 also held by a process
nsenter --net="/run/netns/$N1" sleep 60 &
HELD+=($!)
if ! nsenter --net="/run/netns/$N1" ip link set dev "$VA" xdp obj "$OBJ" sec xdp 2>"$T_TMP/ip.err"; then
	fail "nsenter ip link set xdp obj: $(cat "$T_TMP/ip.err")"
fi
PROG=$(prog_of "$VA")
rc=$(run_status)
status_line "$VA" | grep -qE " $PROG +default \(drop; malformed drop\)$" && pass "nsenter: status shows filter default" ||
	fail "nsenter: status: $(cat "$T_TMP/status.out")"
check_eq "nsenter: listed once (named and held by a process)" "$(grep -c " $VA " "$T_TMP/status.out")" 1
"$FB" -j status >"$T_TMP/status.json"
others=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["fails_open"])' "$T_TMP/status.json")
if [ "$others" == 0 ]; then
	check_eq "nsenter: status exits 0" "$rc" 0
elif [[ "$others" =~ ^[0-9]+$ ]]; then
	skip "nsenter: status exit: $others attachment(s) of other tests fail open right now"
else
	fail "nsenter: status -j has no fails_open count"
fi
"$FB" info default >/dev/null 2>"$T_TMP/v.err"
grep -q "on $VA (netns $N1" "$T_TMP/v.err" && fail "nsenter: info warns: $(cat "$T_TMP/v.err")" ||
	pass "nsenter: info does not warn about it"
# Without bpffs (a mount namespace where it is unmounted): the attachment
# is still listed, and status says why its filter has no name.
unshare -m --propagation private sh -c 'umount -l /sys/fs/bpf && exec "$@"' _ "$FB" status \
	>"$T_TMP/nofs.out" 2>"$T_TMP/nofs.err"
grep -qE " $VA .* $PROG " "$T_TMP/nofs.out" && pass "no bpffs: status still lists the attachment" ||
	fail "no bpffs: status: $(cat "$T_TMP/nofs.out")"
grep -q "bpffs is not mounted at /sys/fs/bpf (mount -t bpf bpf /sys/fs/bpf): the filters these attachments use cannot be named or changed" \
	"$T_TMP/nofs.err" && pass "no bpffs: status says so" || fail "no bpffs: status stderr: $(cat "$T_TMP/nofs.err")"
before=$(counter dropped)
check_eq "nsenter: a listed source's datagrams are dropped" "$(udp_through 10)" 0
dropped=$(($(counter dropped) - before))
[ "$dropped" -ge 10 ] && pass "nsenter: stats count $dropped dropped" || fail "nsenter: stats count $dropped dropped"
nsenter --net="/run/netns/$N1" ip link set dev "$VA" xdp off

# --- C: a namespace no name points to, only a process
mkfifo "$T_TMP/ready"
unshare -n bash -c 'ip link add "$1" type veth peer name "$1"p && ip link set "$1" up &&
	ip link set dev "$1" xdp obj "$2" sec xdp && echo ready >"$3" && exec sleep 60' \
	_ "fsd$$" "$OBJ" "$T_TMP/ready" 2>"$T_TMP/unshare.err" &
HELD+=($!)
if timeout 20 cat "$T_TMP/ready" >/dev/null; then
	run_status >/dev/null
	# The holder says ready just before it execs sleep: status may see
	# either name.
	grep -qE "^pid ${HELD[1]} \((bash|sleep)\) +fsd$$ +native +[0-9]+ +default \(drop; malformed drop\)$" "$T_TMP/status.out" &&
		pass "unshare -n: status finds it (pid ${HELD[1]}), filter default" ||
		fail "unshare -n: status: $(cat "$T_TMP/status.out")"
else
	fail "unshare -n: ip link failed: $(cat "$T_TMP/unshare.err")"
fi
kill "${HELD[1]}" && wait "${HELD[1]}" 2>/dev/null

# --- D: the namespace status runs in, the initial one, is "root", also
# where PID 1's namespace link cannot be read (a sandbox's own init: it
# was then named by the first process found in it, "pid 2 (kthreadd)").
# A veth pair of the test's own in this namespace, no address, no traffic.
ours=$(stat -L -c %i /proc/self/ns/net)
if [ "$(stat -L -c %i /proc/1/ns/net 2>/dev/null)" == "$ours" ] ||
	{ [ "$(cat /proc/2/comm 2>/dev/null)" == kthreadd ] &&
		[ "$(stat -L -c %i /proc/2/ns/net 2>/dev/null)" == "$ours" ]; }; then
	if ip link add "fsr$$" type veth peer name "fsr$$p" 2>"$T_TMP/fsr.err" &&
		ip link set dev "fsr$$" xdp obj "$OBJ" sec xdp 2>>"$T_TMP/fsr.err"; then
		run_status >/dev/null
		grep -qE "^root +fsr$$ +(native|generic) +[0-9]+ +default \(drop; malformed drop\)$" "$T_TMP/status.out" &&
			pass "status names the initial namespace root" ||
			fail "initial namespace: status: $(cat "$T_TMP/status.out")"
	else
		fail "initial namespace: ip link: $(cat "$T_TMP/fsr.err")"
	fi
	ip link del "fsr$$" 2>/dev/null
else
	skip "initial namespace: status runs in another (a container)"
fi

# --- E: ip -n in a namespace only an open file holds: a process of this
# namespace opened its /run/netns name, then `ip netns del` removed it.
# status still finds the attachment (through the process's fd 3) and
# exits 3; info warns.
E=fbstE$$
if ip netns add "$E" && ip link add "fse$$" netns "$E" type veth peer name "fse$$p" netns "$E" &&
	ip -n "$E" link set dev "fse$$" xdp obj "$OBJ" sec xdp 2>"$T_TMP/ip.err"; then
	t_ns_holder "$E"
	EH=$T_HOLDER
	HELD+=("$EH")
	ip netns del "$E"
	rc=$(run_status)
	check_eq "fd-held namespace: status exits 3" "$rc" 3
	grep -qE "^pid $EH \(sleep\) fd 3 +fse$$ +native +[0-9]+ +PRIVATE MAPS \(fails open\)$" \
		"$T_TMP/status.out" && pass "fd-held namespace: status lists it, fails open" ||
		fail "fd-held namespace: status: $(cat "$T_TMP/status.out")"
	"$FB" info default 2>&1 >/dev/null | grep -q "on fse$$ (netns pid $EH (sleep) fd 3, native) FAILS OPEN" &&
		pass "fd-held namespace: info warns" || fail "fd-held namespace: info does not warn"
	kill "$EH" && wait "$EH" 2>/dev/null
else
	fail "fd-held namespace: $(cat "$T_TMP/ip.err")"
fi

# --- F: a status that may not look into processes. Without CAP_SYS_PTRACE
# every root process's /proc/PID/ns/net is refused (EACCES), as PID 1's is
# in a sandbox: a filter h attached (flowbloom attach) in a namespace only
# a process holds cannot be found. status skipped such processes silently:
# the attachment missing, exit 0. Now exit 1, naming the program found
# attached nowhere and the processes not looked into; -j lists both. A
# process in a namespace status visited (this shell's, refused the same
# way) is no gap once nothing is unplaced: exit 0.
NOPT=(setpriv --bounding-set -sys_ptrace --)
unshare -n sleep 60 &
FH=$!
HELD+=("$FH")
t_wait_until 10 test "$(readlink "/proc/$FH/ns/net" 2>/dev/null)" != "$(readlink /proc/self/ns/net)"
"$FB" create h --capacity 100 --fp-rate 0.01 >/dev/null
if ! "${NOPT[@]}" readlink "/proc/$FH/ns/net" >/dev/null 2>&1 &&
	nsenter --net="/proc/$FH/ns/net" ip link add "fsf$$" type veth peer name "fsf$$p" &&
	nsenter --net="/proc/$FH/ns/net" ip link set "fsf$$" up &&
	nsenter --net="/proc/$FH/ns/net" "$FB" attach h "fsf$$" --mode generic >/dev/null; then
	FP=$(nsenter --net="/proc/$FH/ns/net" ip -d link show "fsf$$" | grep -o 'prog/xdp id [0-9]*' | awk '{print $3}')
	"$FB" status >"$T_TMP/status.out" 2>&1
	grep -qE "^pid $FH \(sleep\) +fsf$$ +generic +$FP +h \(drop; malformed drop\)$" "$T_TMP/status.out" &&
		pass "refused processes: with CAP_SYS_PTRACE, status finds h in pid $FH's namespace" ||
		fail "refused processes: status: $(cat "$T_TMP/status.out")"
	"${NOPT[@]}" "$FB" status >"$T_TMP/status.out" 2>"$T_TMP/status.err"
	rc=$?
	grep -q " fsf$$ " "$T_TMP/status.out" && fail "refused processes: status without CAP_SYS_PTRACE found it?"
	check_eq "refused processes: status exits 1" "$rc" 1
	grep -q "no flowbloom XDP program attached" "$T_TMP/status.out" &&
		fail "refused processes: status says none attached"
	grep -qE "^flowbloom: cannot tell where flowbloom's programs are attached: program[s]? ([0-9]+, )*$FP\b.* found attached nowhere, and [0-9]+ process(es)? not looked into \(.*Permission denied" \
		"$T_TMP/status.err" && pass "refused processes: status names the program and the processes" ||
		fail "refused processes: status stderr: $(head -c 400 "$T_TMP/status.err")"
	"${NOPT[@]}" "$FB" -j status >"$T_TMP/status.json" 2>/dev/null
	check_eq "refused processes: status -j lists both" "$(head -1 "$T_TMP/status.json" | "$PY" -c '
import json, sys
j = json.loads(sys.stdin.readline())
print(int(sys.argv[1]) in j["not_found_attached"],
      [(r["pid"], r["comm"], r["what"], r["error"]) for r in j["not_looked_into"] if r["pid"] == int(sys.argv[2]) and r["what"] == "network namespace"],
      j["complete"])' "$FP" "$FH")" "True [($FH, 'sleep', 'network namespace', 'Permission denied')] False"
	nsenter --net="/proc/$FH/ns/net" "$FB" detach "fsf$$" >/dev/null
	# Without CAP_SYS_PTRACE, this shell's own entry is refused too:
	# its namespace (visited) is told by /proc/PID/net, no gap. (h on
	# $VA meanwhile: a program loaded, so status walks.)
	"$FB" -n "$N1" attach h "$VA" --mode generic >/dev/null
	"${NOPT[@]}" "$FB" -j status >"$T_TMP/status.json" 2>/dev/null
	"$FB" -n "$N1" detach "$VA" >/dev/null
	check_eq "refused processes: one in a visited namespace is no gap" "$("$PY" -c '
import json, sys
j = json.loads(open(sys.argv[1]).readline())
print([r for r in j["not_looked_into"] if r["pid"] == int(sys.argv[2]) and r["what"] == "network namespace"])' "$T_TMP/status.json" "$$")" "[]"
else
	skip "refused processes: setpriv without CAP_SYS_PTRACE still reads /proc/$FH/ns/net, or attach failed"
fi
kill "$FH" && wait "$FH" 2>/dev/null
"$FB" destroy h >/dev/null 2>&1

# --- G: what status could not read, as a monitoring check reads it. The
# device's link type not read (SIOCGIFHWADDR refused for memory; a device
# renamed or moved meanwhile): -j said "link_type": null but "ethernet":
# true, exit 0, as if known; now "ethernet" null and exit 1 naming the
# device (a layer-3 device passes every packet). The filter's directory
# not trusted (nobody's), its action needed (attach without --action):
# action null, exit 0, nothing said; now exit 1 saying why. Each state
# has every field.
FIELDS="action attachments capture_ring_bytes capture_running complete device ethernet fails_open filter filter_map_id gone_before_looked_into ifindex link_type malformed maps mode multi_buffer netns not_ethernet not_found_attached not_looked_into prog_id sketch_by"
# first FILE: its first line (the answer; an error's object follows it)
first() { head -1 "$1" >"$1.first" && echo "$1.first"; }
fields() { "$PY" -c '
import json, sys
j = json.loads(open(sys.argv[1]).readline())
print(" ".join(sorted(set(j) | set(k for a in j["attachments"] for k in a))))' "$1"; }
"$FB" create g --capacity 100 --fp-rate 0.01 >/dev/null
if "$FB" -n "$N1" attach g "$VA" --mode generic >/dev/null; then
	"$FB" -j status >"$T_TMP/status.json" 2>"$T_TMP/status.err"
	check_eq "status -j, all read: exit 0, every field" "$? $(fields "$T_TMP/status.json")" "0 $FIELDS"
	if command -v strace >/dev/null; then
		# The Nth ioctl of the machine-wide walk is $VA's link type read
		# (counted in a traced run just before; devices other suites make
		# or remove meanwhile move it): up to three tries, each aimed anew.
		aimed() {
			local n
			strace -f -qq -o "$T_TMP/trace" -e trace=ioctl "$FB" -j status >/dev/null 2>&1
			n=$(grep -v 'resumed>' "$T_TMP/trace" | grep -n "SIOCGIFHWADDR, {ifr_name=\"$VA\"" | head -1 | cut -d: -f1)
			strace -f -qq -o /dev/null -e trace=ioctl -e inject="ioctl:error=ENOMEM:when=${n:-0}" \
				"$FB" "$@" status >"$T_TMP/status.out" 2>"$T_TMP/status.err"
		}
		for try in 1 2 3; do
			aimed -j
			got="$? $(t_json "[(x['link_type'], x['ethernet']) for x in d['attachments'] if x['device'] == '$VA']" "$(first "$T_TMP/status.out")") $(fields "$T_TMP/status.out")"
			[ "$got" = "1 [(None, None)] $FIELDS" ] && break
		done
		check_eq "link type not read: exit 1, link_type and ethernet null, every field" "$got" \
			"1 [(None, None)] $FIELDS"
		for try in 1 2 3; do
			aimed
			got="$? $(grep -c "cannot tell whether 1 attachment gets an Ethernet header ($VA: Cannot allocate memory)" "$T_TMP/status.err")"
			[ "$got" = "1 1" ] && break
		done
		check_eq "... status: exit 1, naming the device" "$got" "1 1"
	else
		skip "link type not read: strace is not installed"
	fi
	chown 65534 "$FLOWBLOOM_ROOT/g"
	"$FB" -j status >"$T_TMP/status.json" 2>/dev/null
	check_eq "g's directory nobody's: exit 1, action null, every field" \
		"$? $(t_json "[x['action'] for x in d['attachments'] if x['device'] == '$VA']" "$(first "$T_TMP/status.json")") $(fields "$T_TMP/status.json")" \
		"1 [None] $FIELDS"
	"$FB" status >/dev/null 2>"$T_TMP/status.err"
	check_eq "... status: exit 1, saying why" "$? $(grep -c "cannot tell what an attachment does: .*/g belongs to uid 65534" "$T_TMP/status.err")" "1 1"
	chown 0 "$FLOWBLOOM_ROOT/g"
	"$FB" -n "$N1" detach "$VA" >/dev/null
else
	fail "G: attach g to $VA"
fi
"$FB" destroy g >/dev/null 2>&1

t_end
