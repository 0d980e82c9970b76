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
# - what is no namespace where the walk looks is never opened (it used to
#   be, by path, after a stat: a FIFO's open waited for good): a FIFO in
#   /run/netns (status and -n), and a process's descriptor swapped between
#   a namespace and a FIFO with no writer, in a loop and, held by strace,
#   between the walk's stat and its open; every candidate opened O_PATH;
# - a device's name and a process's name (which root in a container, and
#   the process, choose) reach the terminal without their control
#   characters, in status and info; -j keeps them;
# - a namespace whose first path goes between status's listing and its
#   visit (strace holds the open): found through another (a second
#   process; the process in the namespace a name made again named), or,
#   gone for good, named in a note (-j: gone_before_looked_into).
source "$(dirname "$0")/../lib/lib.sh"
t_begin netns
HELD=()
cleanup() {
	local p
	for p in $(t_ours "${HELD[@]}"); do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	[ -n "${MNT:-}" ] && rm -f "$MNT"
	[ -n "${SWNS:-}" ] && ip netns del "$SWNS" 2>/dev/null
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
	# (250 bytes: whole, as every run of a message up to 512 characters)
	check_eq "-n: a 250-byte name: its own namespace, without the device" \
		"$?:$(cat "$T_TMP/long.out" "$T_TMP/long.err")" \
		"1:flowbloom: no device 'fbnl$$' in network namespace '$LONG'"
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
grep -aqE "^pid $HOLDER \(\\\\x1b\]0;x\\\\a\\\\x1b\[2J\) +\\\\x1b\[7mfb$$ +native " "$T_TMP/esc.out" &&
	pass "status: control characters escaped" || fail "status: $(cat -v "$T_TMP/esc.out")"
grep -aqF "attached: \\x1b[7mfb$$ native" "$T_TMP/esc.out" && pass "info: control characters escaped" ||
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

# --- What is no namespace where the walk looks, or changes into none under
# it: a FIFO in /run/netns, and a process that swaps one descriptor
# between a namespace it holds (no name, no process in it: looked for as
# $VA's is, through open files) and a FIFO nobody writes to. The walk
# stat'ed a path, then open(2)ed it: a FIFO's open waits for a writer, so
# status hung for good (a device there would have been opened). Each run
# under timeout: it finishes, as without them ($VA's row; exit 0, or 3
# for another suite's attachment failing open beside this one); no
# path it finds is opened but with O_PATH (strace), only its own
# descriptor's /proc/self/fd link for setns(), without blocking.
# The FIFO lies in a /run/netns of a mount namespace of the test's own (a
# tmpfs over it), never the machine's: there an `ip netns list` beside
# this suite (the runner's check for leftovers) would wait on it for good.
in_fifo_ns() {
	unshare -m --propagation private sh -c 'mount -t tmpfs -o mode=0755 fbfifo /run/netns &&
		mkfifo "/run/netns/$0" && exec "$@"' "$@"
}
FIFO=fbfifo$$
in_fifo_ns "$FIFO" timeout 10 "$FB" -n "$FIFO" list >"$T_TMP/fifo.out" 2>&1
check_eq "-n: a FIFO in /run/netns: no namespace, no wait" "$?:$(cat "$T_TMP/fifo.out")" \
	"1:flowbloom: cannot enter network namespace 'fbfifo$$': not a network namespace"
in_fifo_ns "$FIFO" timeout 5 "$FB" status >"$T_TMP/fifo.out" 2>&1
rc=$?
grep -aqE "^pid $HOLDER \(sleep\) fd 3 +$VA " "$T_TMP/fifo.out" && [[ "$rc" == [03] ]] &&
	pass "status: a FIFO in /run/netns: skipped" ||
	fail "status, a FIFO in /run/netns: exit $rc: $(head -c 300 "$T_TMP/fifo.out")"
ip netns add "fbsw$$" && SWNS=fbsw$$
mkfifo "$T_TMP/swfifo"
"$PY" -c '
import os, sys, time
ns = os.open(sys.argv[1], os.O_RDONLY)
os.dup2(ns, 60)
os.close(ns)
fifo = os.open(sys.argv[2], os.O_RDONLY | os.O_NONBLOCK)
open(sys.argv[3], "w").write("ready\n")
end = time.time() + 600
while time.time() < end:
    os.dup2(60, 5)
    time.sleep(0.0003)
    os.dup2(fifo, 5)
    time.sleep(0.0003)' "/run/netns/$SWNS" "$T_TMP/swfifo" "$T_TMP/swready" &
HELD+=($!)
SWAPPER=$!
t_wait_until 20 test -s "$T_TMP/swready" || fail "the swapper did not start"
ip netns del "$SWNS" && SWNS=
bad=
for i in $(seq 150); do
	timeout 5 "$FB" status >"$T_TMP/sw.out" 2>&1
	rc=$?
	if [[ "$rc" != [03] ]] || ! grep -aqE "^pid $HOLDER \(sleep\) fd 3 +$VA " "$T_TMP/sw.out"; then
		bad="run $i: exit $rc: $(head -c 300 "$T_TMP/sw.out")"
		break
	fi
done
[ -z "$bad" ] && pass "status: a descriptor swapped to a FIFO: 150 runs, each with $VA's row" ||
	fail "status under a descriptor swapped to a FIFO: $bad"
kill "$SWAPPER" && wait "$SWAPPER" 2>/dev/null
# ... and the swap made at the moment, every time: status held (strace)
# at its open of the descriptor it found a namespace, which then becomes
# the FIFO; strace detached, the open goes on. status ends, as above.
if command -v strace >/dev/null; then
	# A namespace of its own (unshare, then back): its link reads
	# net:[INODE], which strace -P resolves to (never "/").
	rm -f "$T_TMP/swready"
	"$PY" -c '
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
orig = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
if libc.unshare(0x40000000):
    sys.exit("unshare: " + os.strerror(ctypes.get_errno()))
ns = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
if libc.setns(orig, 0x40000000):
    sys.exit("setns: " + os.strerror(ctypes.get_errno()))
os.close(orig)
os.dup2(ns, 60)
os.dup2(ns, 5)
os.close(ns)
fifo = os.open(sys.argv[2], os.O_RDONLY | os.O_NONBLOCK)
def swap(sig, frame):
    os.dup2(fifo, 5)
    open(sys.argv[4], "w").write("swapped\n")
signal.signal(signal.SIGUSR1, swap)
open(sys.argv[3], "w").write("ready\n")
time.sleep(600)' "" "$T_TMP/swfifo" "$T_TMP/swready" "$T_TMP/swapped" &
	HELD+=($!)
	SWAPPER=$!
	t_wait_until 20 test -s "$T_TMP/swready" || fail "the swapper did not start"
	strace -I1 -f -qq -o "$T_TMP/hold.st" -P "/proc/$SWAPPER/fd/5" -e trace=open,openat \
		-e inject=open,openat:delay_enter=60000000 \
		bash -c '"$0" status >"$1" 2>&1; echo $? >"$2"' "$FB" "$T_TMP/hold.out" "$T_TMP/hold.rc" &
	ST=$!
	if t_wait_until 20 grep -qs "\"/proc/$SWAPPER/fd/5\"" "$T_TMP/hold.st"; then
		SH=$(pgrep -P "$ST")
		FBP=$(pgrep -P "$SH")
		kill -USR1 "$SWAPPER"
		t_wait_until 20 test -s "$T_TMP/swapped" || fail "the swapper did not swap"
		kill "$ST" && wait "$ST" 2>/dev/null
		if t_wait_until 10 test -s "$T_TMP/hold.rc"; then
			check_eq "status: the descriptor found a namespace, a FIFO when opened: finishes" \
				"$(sed 's/^3$/0/' "$T_TMP/hold.rc"):$(grep -acE "^pid $HOLDER \(sleep\) fd 3 +$VA " "$T_TMP/hold.out")" "0:1"
		else
			fail "status: the descriptor found a namespace, a FIFO when opened: hangs ($(cat /proc/"$FBP"/stack 2>/dev/null | head -2 | tr '\n' ' '))"
			[ -n "$FBP" ] && kill "$FBP"
		fi
	else
		fail "status never opened /proc/$SWAPPER/fd/5: $(cat "$T_TMP/hold.st" 2>&1)"
		kill "$ST" && wait "$ST" 2>/dev/null
	fi
	kill "$SWAPPER" && wait "$SWAPPER" 2>/dev/null
else
	skip "status held at its open of a descriptor: strace is missing (make deps installs it)"
fi
if command -v strace >/dev/null; then
	in_fifo_ns "$FIFO" strace -f -qq -o "$T_TMP/sw.st" -e trace=open,openat timeout 20 "$FB" status >/dev/null 2>&1
	check_eq "status under strace: finishes" "$(($? == 3 ? 0 : $?))" 0
	# Candidates: names in /run/netns, processes' namespace links, open
	# files and mounts; our own /proc/self/fd link (the walk's descriptor).
	check_eq "status: every namespace candidate opened with O_PATH" "$(grep -E 'open(at)?\(.*"(/run/netns/[^"]+|/proc/[0-9]+/(ns/net|fd/[0-9]+|root/[^"]*))"' "$T_TMP/sw.st" |
		grep -v O_PATH | head -3)" ""
	check_eq "status: each reopened for setns() without blocking" "$(grep -E 'open(at)?\(.*"/proc/self/fd/[0-9]+"' "$T_TMP/sw.st" |
		grep -v 'O_PATH' | grep -v 'O_NONBLOCK' | head -3)" ""
else
	skip "status's opens: strace is missing (make deps installs it)"
fi
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

# --- A namespace whose path goes away between the walk's listing and its
# visit, while another holds it: strace holds status's open of that path
# until the path is gone. It was skipped (one visit per namespace, by the
# first path found): the attachment there missing, exit 0.
# in_own_ns TAG DEV: a process alone in a namespace of its own, with veth
# DEV there (T_PID; ready once TAG's file says so).
in_own_ns() {
	unshare -n sh -c 'ip link add "$1" type veth peer name "$1p" && echo ready >"$2" &&
		exec sleep 600' _ "$2" "$T_TMP/$1.ready" &
	T_PID=$!
	HELD+=("$T_PID")
	t_wait_until 20 test -s "$T_TMP/$1.ready" || fail "$1: the namespace's process did not start"
}
# held_status TAG PATH ACTION [ARGS]: status (ARGS), its first open of
# PATH held 8 s; ACTION (a shell command) runs once the walk has listed
# PATH (its stat), while the open waits.
# held_elsewhere TAG DEV: TAG's status shows DEV through a process other
# than FIRST (one that held the namespace when FIRST went).
held_elsewhere() {
	grep -aE " $2 " "$T_TMP/$1.out" | grep -qv "^pid $FIRST "
}
held_status() {
	local tag=$1 path=$2 act=$3
	shift 3
	rm -f "$T_TMP/$tag.st"
	# The open is held 8 s: the act (a kill, a name made again) and the
	# process's exit must land inside it even on a loaded CI machine.
	# (Where status is while it waits: its own namespace, not the last
	# it visited, where `ip netns pids` would name it to whoever owns it.)
	(t_wait_until 20 grep -qs "stat.*\"$path\"" "$T_TMP/$tag.st" &&
		sleep 0.5 && p=$(grep -m1 "stat.*\"$path\"" "$T_TMP/$tag.st" | awk '{ print $1 }') &&
		{ [ "$(readlink "/proc/$p/ns/net")" = "$(readlink /proc/self/ns/net)" ] && echo home || echo away; } >"$T_TMP/$tag.where"
		eval "$act") &
	strace -f -qq -o "$T_TMP/$tag.st" -P "$path" -e trace=openat,newfstatat,stat,statx \
		-e inject=openat:delay_enter=8000000:when=1 "$FB" "$@" status >"$T_TMP/$tag.out" \
		2>"$T_TMP/$tag.err"
	echo $? >"$T_TMP/$tag.rc"
	wait $!
}
if command -v strace >/dev/null; then
	# Two processes in one namespace; the first (listed first: the
	# lower pid) exits.
	in_own_ns two "fbg2$$"
	FIRST=$T_PID
	nsenter --net="/proc/$FIRST/ns/net" sleep 600 &
	SECOND=$!
	HELD+=("$SECOND")
	"$FB" -n "../../proc/$FIRST/ns/net" attach nx "fbg2$$" >/dev/null || fail "attach nx to fbg2$$"
	held_status two "/proc/$FIRST/ns/net" "kill $FIRST"
	check_eq "status: the first process of a namespace exits before its visit: found through the second" \
		"$(sed 's/^3$/0/' "$T_TMP/two.rc"):$(grep -acE "^pid $SECOND \(sleep\) +fbg2$$ +native +[0-9]+ +nx " "$T_TMP/two.out")" "0:1"
	grep -q DELAYED "$T_TMP/two.st" || fail "status was not held at its open of /proc/$FIRST/ns/net"
	check_eq "status waits on an open in its own namespace, not in the last one it visited" \
		"$(cat "$T_TMP/two.where" 2>/dev/null)" home
	kill "$SECOND" && wait "$SECOND" 2>/dev/null

	# A name in /run/netns deleted and made again (another namespace
	# now) while a process is still in the one it named: that one is
	# visited, through the process (the new one was, under the name).
	ip netns add "fbgn$$" && SHORT=fbgn$$
	ip -n "$SHORT" link add "fbgn$$" type veth peer name "fbgn$$p"
	"$FB" -n "$SHORT" attach nx "fbgn$$" >/dev/null || fail "attach nx to fbgn$$"
	nsenter --net="/run/netns/$SHORT" sleep 600 &
	SECOND=$!
	HELD+=("$SECOND")
	held_status renamed "/run/netns/$SHORT" "ip netns del $SHORT && ip netns add $SHORT"
	check_eq "status: a name made again for another namespace: the old one found through its process" \
		"$(sed 's/^3$/0/' "$T_TMP/renamed.rc"):$(grep -acE "^pid $SECOND \(sleep\) +fbgn$$ +native " "$T_TMP/renamed.out")" "0:1"
	kill "$SECOND" && wait "$SECOND" 2>/dev/null
	ip netns del "$SHORT"
	SHORT=

	# Its only process exits: the namespace and its device go; the
	# program (held by the filter) is found attached nowhere, and status
	# says which namespace went before it was looked into (it said
	# nothing). -j: gone_before_looked_into.
	in_own_ns one "fbg1$$"
	FIRST=$T_PID
	"$FB" -n "../../proc/$FIRST/ns/net" attach nx "fbg1$$" >/dev/null || fail "attach nx to fbg1$$"
	held_status one "/proc/$FIRST/ns/net" "kill $FIRST"
	# (Another process may hold the namespace meanwhile: a status of a
	# suite running beside this one holds every namespace it walks. Then
	# it is not gone, and the attachment is shown through that process.)
	# (Or named by another path that reached it meanwhile: a status of
	# another suite holding it for a moment, gone too by the visit.)
	{ grep -aqF "found attached nowhere, and 1 network namespace gone before it was looked into (pid $FIRST (sleep)): every path to it went away meanwhile" "$T_TMP/one.err" ||
		grep -aqE "found attached nowhere, and [0-9]+ network namespaces? gone before (it was|they were) looked into \(" "$T_TMP/one.err" ||
		held_elsewhere one "fbg1$$"; } &&
		pass "status: a namespace gone before its visit: said, naming it" ||
		fail "status, a namespace gone before its visit: $(cat "$T_TMP/one.rc" "$T_TMP/one.err")"
	in_own_ns onej "fbg3$$"
	FIRST=$T_PID
	"$FB" -n "../../proc/$FIRST/ns/net" attach nx "fbg3$$" >/dev/null || fail "attach nx to fbg3$$"
	held_status onej "/proc/$FIRST/ns/net" "kill $FIRST" -j
	check_eq "status -j: gone_before_looked_into (or held by another process meanwhile)" \
		"$(t_json "len(d['gone_before_looked_into']) > 0 or any(a['device'] == 'fbg3$$' and not a['netns'].startswith('pid $FIRST ') for a in d['attachments'])" "$T_TMP/onej.out")" "True" ||
		echo "# status -j said: $(t_json "(d['gone_before_looked_into'], [a for a in d['attachments'] if a['device'] == 'fbg3$$'])" "$T_TMP/onej.out" 2>&1 | head -c 600)"
else
	skip "status while a namespace's path goes: strace is missing (make deps installs it)"
fi

t_finish
