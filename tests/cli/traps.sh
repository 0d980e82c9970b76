#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Traps an unprivileged user (nobody, through setpriv) sets before root runs
# a command, on paths the other suites do not cover:
# - `status` (and every verb that looks for flowbloom's attachments) visits
#   network namespaces that other mount namespaces bind-mount, through
#   /proc/PID/root and the mount point that namespace's mountinfo names.
#   nobody, in a user and mount namespace of its own, bind-mounts a network
#   namespace and hides the mount under a tmpfs holding a FIFO of that
#   name (status must end, not wait on the FIFO forever), or a symbolic
#   link to root's own FIFO in a root-only directory (status must not open
#   it: its writer, waiting, stays blocked), or a symbolic link loop (status
#   must not fail, exit 1, "cannot tell", at nobody's say-so: the mount is
#   as gone, the program attached nowhere still said). Status walks those mounts only
#   while some flowbloom program is attached nowhere: a `replay` waiting on
#   its capture holds one. A FUSE server stopped under such a mount (made
#   by root here: /dev/fuse may be root's only) must not stall status
#   either.
# - apply NAME.conf and ipfix --config: root's file in a directory others
#   may rename files in (not sticky), or another user's, is refused; there
#   nobody moves root's b.conf (action allow) over a.conf. Through root's
#   link, the directory the file is in counts; a sticky one (/tmp) is
#   fine.
# - bash completion offers the device names of a namespace others name
#   (-n NETNS: a container's), which must never run as commands.
source "$(dirname "$0")/../lib/lib.sh"
t_begin traps

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
NB=$(mktemp -d /tmp/fbtest.traps.nb.XXXXXX)
chown 65534:65534 "$NB"
chmod 0755 "$NB"
HELD=()
cleanup() {
	local p
	exec 7>&- 2>/dev/null
	for p in $(t_ours "${HELD[@]}"); do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$NB"
	[ -n "${NSMADE:-}" ] && ip netns del "$NS" 2>/dev/null
}
t_traps

# nobody_ns SCRIPT: run SCRIPT as nobody in a user, mount and network
# namespace of its own, then sleep there until killed; its pid in NBPID
# once the script is done (0 if it failed: its stderr in $T_TMP/nb.err).
nobody_ns() {
	rm -f "$NB/ready"
	"${NOBODY[@]}" unshare -Urmn --propagation private sh -c \
		"$1"' && echo ready >"$0/ready" && exec sleep 300' "$NB" 2>"$T_TMP/nb.err" &
	NBPID=$!
	HELD+=("$NBPID")
	t_wait_until 20 test -s "$NB/ready" || NBPID=0
}

nobody_done() {
	[ "$NBPID" != 0 ] && kill "$NBPID" 2>/dev/null && wait "$NBPID" 2>/dev/null
	NBPID=0
}

# --- status: mounts of other mount namespaces
check "create f" "$FB" create f --capacity 100 --fp-rate 0.01
mkfifo "$T_TMP/feed"
"$FB" replay f "$T_TMP/feed" >"$T_TMP/replay.out" 2>&1 &
HELD+=($!)
exec 7>"$T_TMP/feed" # replay now waits on its capture, the program loaded
nowhere() { "$FB" status 2>&1 | grep -q "found attached nowhere"; }
t_wait_until 30 nowhere && pass "a program attached nowhere (replay waiting)" ||
	fail "no program attached nowhere: $("$FB" status 2>&1 | head -c 300)"

if ! "${NOBODY[@]}" unshare -Urmn true 2>/dev/null; then
	skip "nobody's mount traps: no unprivileged user namespaces here"
else
	# A FIFO over nobody's bind mount of its network namespace.
	nobody_ns 'mkdir "$0/d" && touch "$0/d/ns" && mount --bind /proc/self/ns/net "$0/d/ns" &&
		mount -t tmpfs t "$0/d" && mkfifo "$0/d/ns"'
	if [ "$NBPID" != 0 ]; then
		grep -q " $NB/d/ns .* nsfs " "/proc/$NBPID/mountinfo" &&
			pass "nobody's namespace mount listed (hidden under a FIFO)" ||
			fail "nobody's mount not listed: $(grep nsfs "/proc/$NBPID/mountinfo")"
		timeout 10 "$FB" status >"$T_TMP/st.out" 2>"$T_TMP/st.err"
		rc=$?
		[ "$rc" != 124 ] && pass "status ends (exit $rc), never waits on nobody's FIFO" ||
			fail "status waited on nobody's FIFO over its mount (killed after 10 s)"
		timeout 10 "$FB" -j status >/dev/null 2>&1
		[ $? != 124 ] && pass "status -j ends too" || fail "status -j waited on nobody's FIFO"
	else
		fail "nobody's FIFO trap not set: $(head -c 300 "$T_TMP/nb.err")"
	fi
	nobody_done

	# A symbolic link there to root's FIFO, in a root-only directory,
	# whose writer waits for a reader: status must not be that reader.
	mkfifo -m 0600 "$T_TMP/rootfifo"
	(echo opened >"$T_TMP/rootfifo") 2>/dev/null &
	W=$!
	HELD+=("$W")
	nobody_ns 'mkdir "$0/e" && touch "$0/e/ns" && mount --bind /proc/self/ns/net "$0/e/ns" &&
		mount -t tmpfs t "$0/e" && ln -s '"$T_TMP/rootfifo"' "$0/e/ns"'
	if [ "$NBPID" != 0 ]; then
		timeout 10 "$FB" status >"$T_TMP/st.out" 2>"$T_TMP/st.err"
		rc=$?
		check_eq "link to root's FIFO: status ends" "$([ $rc != 124 ] && echo yes)" yes
		sleep 0.2
		kill -0 "$W" 2>/dev/null && pass "status never opened root's FIFO through nobody's link" ||
			fail "status opened root's FIFO through nobody's link (its writer got a reader)"
	else
		fail "nobody's link trap not set: $(head -c 300 "$T_TMP/nb.err")"
	fi
	nobody_done
	kill "$W" 2>/dev/null

	# A symbolic link loop there: status says what it found, not that it
	# cannot tell (exit 1) at nobody's say-so.
	nobody_ns 'mkdir "$0/l" && touch "$0/l/ns" && mount --bind /proc/self/ns/net "$0/l/ns" &&
		mount -t tmpfs t "$0/l" && ln -s ns "$0/l/ns"'
	if [ "$NBPID" != 0 ]; then
		timeout 10 "$FB" status >"$T_TMP/st.out" 2>"$T_TMP/st.err"
		rc=$?
		! grep -q "$NB" "$T_TMP/st.err" && [ "$rc" != 1 ] && [ "$rc" != 124 ] &&
			pass "link loop: status exits $rc, nobody's mount as gone" ||
			fail "link loop: status exit $rc: $(head -c 300 "$T_TMP/st.err")"
		grep -q "found attached nowhere" "$T_TMP/st.err" &&
			pass "link loop: the program attached nowhere still said" ||
			fail "link loop: status stderr: $(head -c 300 "$T_TMP/st.err")"
	else
		fail "nobody's loop trap not set: $(head -c 300 "$T_TMP/nb.err")"
	fi
	nobody_done
fi

# A FUSE file system whose server stops answering, under a namespace's
# bind mount in another mount namespace: the lookup itself waits, in a
# wait no signal ends. Where /dev/fuse is 0666 (Debian's default) any user
# can do this in a user namespace; a stalled sshfs in a container does it
# by itself. Made by root here (/dev/fuse may be root's only), in a mount
# namespace of its own: status must still end, within a few seconds. A
# watchdog wakes the server after 15 s, so a status stuck in the lookup
# ends then (and is timed).
if ! command -v bindfs >/dev/null; then
	skip "stalled FUSE: bindfs not installed"
else
	mkdir "$T_TMP/fsrc" "$T_TMP/fmnt"
	touch "$T_TMP/fsrc/ns"
	unshare -m --propagation private sh -c 'bindfs -f -o entry_timeout=0,attr_timeout=0 "$1" "$2" &
		echo $! >"$3.bf"
		i=0
		until mountpoint -q "$2" || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
		unshare -n mount --bind /proc/self/ns/net "$2/ns" && echo ready >"$3" && exec sleep 300' \
		_ "$T_TMP/fsrc" "$T_TMP/fmnt" "$T_TMP/fready" 2>"$T_TMP/fuse.err" &
	HELD+=($!)
	# stalled BF WHAT WHY: status with the FUSE server BF stopped (woken
	# after 15 s at the latest) ends within 10 s.
	stalled() {
		local wd t0 rc ms
		kill -STOP "$1"
		(sleep 15 && kill -CONT "$1") 2>/dev/null &
		wd=$!
		t0=$(date +%s%N)
		timeout -k 5 30 "$FB" status >"$T_TMP/st.out" 2>"$T_TMP/st.err"
		rc=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		kill -CONT "$1" 2>/dev/null
		kill "$wd" 2>/dev/null
		[ "$ms" -lt 10000 ] && pass "$2: status ends in $ms ms (exit $rc)" ||
			fail "$2: status took $ms ms ($3)"
	}
	if t_wait_until 20 test -s "$T_TMP/fready"; then
		BF=$(cat "$T_TMP/fready.bf")
		stalled "$BF" "stalled FUSE" "waited in the lookup until the server woke"
		kill "$BF" 2>/dev/null
	else
		fail "stalled FUSE: not set up: $(head -c 300 "$T_TMP/fuse.err")"
	fi

	# A process whose root is a FUSE mount (pivot_root into it, in a
	# mount namespace of its own, the server outside it) holds its root
	# open: /proc/PID/fd/3 reads "/", as an open namespace file whose
	# mount is gone does, and status looked at it with a stat the stopped
	# server never answered.
	mkdir -p "$T_TMP/rsrc/old" "$T_TMP/rmnt"
	mkfifo "$T_TMP/rhold"
	unshare -m --propagation private sh -c 'bindfs -f -o entry_timeout=0,attr_timeout=0 "$1" "$2" &
		echo $! >"$3.bf"
		i=0
		until mountpoint -q "$2" || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
		exec unshare -m --propagation private sh -c "cd \"\$1\" && pivot_root . old &&
			exec 3</ && echo \$\$ >\"/old\$2\" && read x <\"/old\$3\"" _ "$2" "$3" "$4"' \
		_ "$T_TMP/rsrc" "$T_TMP/rmnt" "$T_TMP/rready" "$T_TMP/rhold" 2>"$T_TMP/fuse.err" &
	HELD+=($!)
	if t_wait_until 20 test -s "$T_TMP/rready" && [ "$(readlink "/proc/$(cat "$T_TMP/rready")/fd/3")" = / ]; then
		BF=$(cat "$T_TMP/rready.bf")
		stalled "$BF" "root on a stalled FUSE" "its stat waited until the server woke"
		kill "$(cat "$T_TMP/rready")" "$BF" 2>/dev/null
	else
		fail "root on a stalled FUSE: not set up: $(head -c 300 "$T_TMP/fuse.err")"
	fi
fi
exec 7>&-

# --- apply NAME.conf and ipfix --config in a directory others may change:
# the file is root's and writable by no one else, but whoever may rename
# files in its directory can move root's other configuration (b.conf,
# action allow) over its name, and apply would make filter a of it.
CD=$(mktemp -d /tmp/fbtest.traps.conf.XXXXXX)
chmod 0777 "$CD"
printf 'capacity = 100\nfp-rate = 0.01\n' >"$CD/ta.conf"
printf 'capacity = 100\nfp-rate = 0.01\naction = allow\n' >"$CD/tb.conf"
"${NOBODY[@]}" mv "$CD/tb.conf" "$CD/ta.conf" || fail "nobody could not rename root's file"
t_refused 1 "apply: a file in a directory others may write (not sticky): refused" \
	"ta.conf: refusing a file in a directory others may write to" "$FB" apply "$CD/ta.conf"
check_eq "... no filter made of it" "$("$FB" list | grep -c '^ta ')" 0
cp "$CD/ta.conf" "$CD/x.ipfix"
t_refused 2 "ipfix --config there: refused" "x.ipfix: refusing a file in a directory others may write to" \
	"$FB" ipfix f --config "$CD/x.ipfix"
chmod 1777 "$CD"
check "apply: the same in a sticky directory (/tmp): read" "$FB" apply --check "$CD/ta.conf"
chmod 0755 "$CD"
chown 65534 "$CD"
t_refused 1 "apply: a file in nobody's directory: refused" \
	"ta.conf: refusing a file in a directory of uid 65534" "$FB" apply --check "$CD/ta.conf"
ln -s "$CD/ta.conf" "$T_TMP/ta.conf"
t_refused 1 "apply: through root's link to it: refused" \
	"ta.conf: refusing a file in a directory of uid 65534" "$FB" apply --check "$T_TMP/ta.conf"
rm -rf "$CD"

# --- bash completion: the devices of a namespace someone else names
# (a container's root renames the devices of its own namespace, which
# root reaches with -n NETNS). compgen -W expands each word it is given,
# command substitutions and redirections included: a device named
# '$(>pwned)' made a file as root at a TAB. Names are offered, never run.
COMPLETION=$(cd "$(dirname "$0")/../../dist" && pwd)/flowbloom.bash
NS=fbtraps$$
comp() {
	PATH="$(dirname "$FB"):$PATH" bash -c '
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_flowbloom; ((${#COMPREPLY[@]})) && printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort | tr "\n" " "' _ \
		"$COMPLETION" "$@"
}
if ip netns add "$NS" 2>"$T_TMP/ns.err"; then
	NSMADE=1
	if nsenter --net="/run/netns/$NS" ip link add '$(>pwned)' type veth peer name 'x`>pwned2`' \
		2>"$T_TMP/ns.err"; then
		mkdir "$T_TMP/cwd"
		got=$(cd "$T_TMP/cwd" && comp flowbloom -n "$NS" attach f "")
		check_eq "completion: no file made by a device's name" "$(ls -A "$T_TMP/cwd")" ""
		check_eq "completion: the names offered, quoted" "$got" '\$\(\>pwned\) lo x\`\>pwned2\` '
		got=$(cd "$T_TMP/cwd" && comp flowbloom -n "$NS" attach f '$')
		check_eq "completion: a prefix matched as text" "$got" '\$\(\>pwned\) '
	else
		fail "completion: devices not made: $(head -c 300 "$T_TMP/ns.err")"
	fi
else
	fail "completion: ip netns add: $(head -c 300 "$T_TMP/ns.err")"
fi

t_finish
