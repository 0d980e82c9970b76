# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shell test helpers: a private bpffs root, checks that count, cleanup, the
# network namespaces and veth pairs of the e2e suites, and the lock on the
# real /sys/fs/bpf/xdp/globals. Source it; call `t_begin NAME` first and
# end with `t_finish` (or `t_end`).
#
# A suite in short (tests/KIND/NAME.sh is found by tests/run.sh):
#
#   source "$(dirname "$0")/../lib/lib.sh"
#   t_begin NAME                # FLOWBLOOM_ROOT, $T_TMP, counters
#   cleanup() { ...; }          # optional: what the suite must undo
#   t_traps                     # cleanup + namespaces removed on EXIT/INT/TERM
#   t_net_pair || t_skip_all "$T_NET_WHY"
#   t_addr "$NSA" "$VA" 198.51.100.1/24 2001:db8::1/64
#   t_addr "$NSB" "$VB" 198.51.100.2/24 2001:db8::2/64
#   check "LABEL" "$FB" ...     # pass/fail/skip, check_eq, check_fails
#   t_finish                    # cleanup, the closing line, exit status
#
# Run one suite alone with `bash tests/KIND/NAME.sh` (TEST_VERBOSE=1 prints
# every PASS too), or several with TESTS="NAME..." bash tests/run.sh.
#
# - The closing line is "N passed, N failed[, N skipped]": tests/run.sh adds
#   them up. A skip is not a pass: say what is missing.
# - Every suite has its own FLOWBLOOM_ROOT and its own namespace names (with
#   $$), so suites run side by side (tests/run.sh runs several at once).
#   What they do share: the real /sys/fs/bpf/xdp/globals, where `create
#   default` pins and `ip link ... obj` looks: a suite that touches it
#   calls t_lock_globals first (tests/run.sh also never starts two such
#   suites together), and the CPU: check correctness, not speed, and give
#   waits for traffic or daemons generous limits (a loaded machine answers
#   late). Speed targets belong in tests/bench.
# - Network tests only in namespaces and veth pairs made with t_netns /
#   t_veth / t_net_pair, with addresses of 198.51.100.0/24, 203.0.113.0/24
#   and 2001:db8::/32 (t_addr refuses others). They are removed on exit by
#   t_traps (t_net_down): the processes in them killed, the veth deleted
#   (which detaches their XDP programs), the namespaces deleted. Run other
#   programs in them with inA/inB or nsenter --net (not `ip netns exec` or
#   `ip -n` for anything that needs bpffs: those remount /sys).
# - A suite's time is mostly processes started: keep them few. python3 here
#   is one interpreter resolved once ($PY: a pyenv-style shim costs 0.2 s a
#   call); read JSON with t_json (one python serves every call); replay
#   several captures in one `replay` where the filter is the same (each
#   replay loads and verifies the program: 0.3 s of CPU); wait for a
#   condition with t_wait_until rather than sleep a fixed time.
# - Packets and pcap files made in python come from tests/lib/pkt.py (on
#   PYTHONPATH for every python a suite starts): one checksum, one pcap
#   writer, not a copy per suite.

FB=${FB:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/flowbloom}
# The captures: ../shared/pcaps beside the checkout, or, from a git
# worktree elsewhere, beside its main checkout; PCAPS=DIR to say.
if [ -z "${PCAPS:-}" ]; then
	PCAPS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/../shared/pcaps
	if [ ! -d "$PCAPS" ] && c=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse \
		--path-format=absolute --git-common-dir 2>/dev/null); then
		[ -d "$(dirname "$c")/../shared/pcaps" ] && PCAPS=$(cd "$(dirname "$c")/../shared/pcaps" && pwd)
	fi
fi
T_PASS=0
T_FAIL=0
T_SKIP=0

# Debian's python3 (`make deps` installs it) where there is one, else the
# interpreter PATH leads to, past any shim. Exported: child scripts reuse it.
if [ -z "${PY:-}" ] || [ ! -x "$PY" ]; then
	if [ -x /usr/bin/python3 ]; then
		PY=/usr/bin/python3
	else
		PY=$(command python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
	fi
fi
export PY
python3() { "$PY" "$@"; }
# tests/lib/pkt.py (the Internet checksum, IPv4/UDP frames, pcap files) is
# importable by every python a suite starts, in a namespace or not:
# `from pkt import csum, ip4, pcap_write` in a heredoc.
T_PYLIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$T_PYLIB/lockheld.sh"
case ":${PYTHONPATH:-}:" in
*":$T_PYLIB:"*) ;;
*) export PYTHONPATH=$T_PYLIB${PYTHONPATH:+:$PYTHONPATH} ;;
esac

# Each script gets its own filter root so tests never touch real filters.
# The umask is the usual 022 whatever the caller's: files a suite writes
# for flowbloom to read (apply's and ipfix's configurations) are refused
# when others may write them, as under umask 000. A check of what the
# umask does to flowbloom sets its own (export_sec.sh, squat.sh).
t_begin() {
	T_NAME=$1
	umask 022
	export FLOWBLOOM_ROOT=/sys/fs/bpf/fbtest_${T_NAME}_$$
	T_TMP=$(mktemp -d "/tmp/fbtest.$T_NAME.XXXXXX")
	t_json_start
}

# t_json EXPR [FILE]: the value of the python expression EXPR, where d is
# the JSON document in FILE (stdin without FILE); status 1 (and nothing on
# stdout) if it is not JSON or EXPR fails. `t_json True FILE` checks that
# FILE is JSON. One python process, started by t_begin, answers every call
# (a python per call costs 20-80 ms; the suites make thousands of calls):
# call it from the script and its $(...), not from a background job.
T_JSON_SERVER='import json, sys
for line in sys.stdin:
    try:
        expr, path = line.rstrip("\n").split("\t", 1)
        with open(path, "rb") as f:
            d = json.load(f)
        out = "0" + str(eval(expr, {"json": json}, {"d": d}))
    except Exception as e:
        out = "1" + repr(e)
    sys.stdout.write(out.replace("\n", "\x1e") + "\n")
    sys.stdout.flush()'
t_json_start() {
	local r w
	[ -n "${T_JSON_PID:-}" ] && return 0
	coproc T_JSON_CO { exec "$PY" -u -c "$T_JSON_SERVER"; }
	T_JSON_PID=$T_JSON_CO_PID
	# Not a job of the script: its `wait` must not wait for the server.
	disown "$T_JSON_PID"
	# Copies: bash keeps a coprocess's own descriptors from subshells
	# (a pipeline's right-hand side is one).
	exec {w}>&"${T_JSON_CO[1]}" {r}<&"${T_JSON_CO[0]}"
	T_JSON_W=$w
	T_JSON_R=$r
}
t_json() {
	local f=${2:-} r
	if [ -z "$f" ]; then
		f=$T_TMP/t_json.$BASHPID
		cat >"$f"
	fi
	if [ -n "${T_JSON_W:-}" ] && kill -0 "$T_JSON_PID" 2>/dev/null &&
		printf '%s\t%s\n' "$1" "$f" >&"$T_JSON_W" 2>/dev/null &&
		IFS= read -r r <&"$T_JSON_R"; then
		:
	else # no server (or it died): a python of our own
		r=$(printf '%s\t%s\n' "$1" "$f" | "$PY" -c "$T_JSON_SERVER")
	fi
	[ -n "${2:-}" ] || rm -f "$f"
	[ "${r:0:1}" == 0 ] || return 1
	r=${r:1}
	printf '%s\n' "${r//$'\x1e'/$'\n'}"
}

pass() { T_PASS=$((T_PASS + 1)); [ -n "${TEST_VERBOSE:-}" ] && echo "PASS $*"; return 0; }
fail() { T_FAIL=$((T_FAIL + 1)); echo "FAIL $*"; return 1; }
skip() { T_SKIP=$((T_SKIP + 1)); echo "SKIP $*"; }

# check LABEL CMD...: passes when CMD succeeds.
check() {
	local label=$1
	shift
	if "$@" >"$T_TMP/out" 2>&1; then pass "$label"; else fail "$label: $(head -c 300 "$T_TMP/out")"; fi
}

# check_fails LABEL CMD...: passes when CMD fails with one line on stderr.
check_fails() {
	local label=$1
	shift
	if "$@" >"$T_TMP/out" 2>"$T_TMP/err"; then
		fail "$label: succeeded, should have failed"
	elif [ "$(wc -l <"$T_TMP/err")" -lt 1 ]; then
		fail "$label: failed with nothing on stderr"
	else
		pass "$label"
	fi
}

# t_refused RC LABEL PATTERN CMD...: CMD exits RC with PATTERN on stderr;
# a failure (RC 1) says it in one line, a usage error (RC 2) may follow
# its line with the synopsis.
t_refused() {
	local want=$1 label=$2 pat=$3 rc
	shift 3
	"$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$label: exit $rc, want $want ($(head -c 200 "$T_TMP/err"))"
	elif { [ "$want" -eq 1 ] && [ "$(wc -l <"$T_TMP/err")" -ne 1 ]; } || ! grep -q -- "$pat" "$T_TMP/err"; then
		fail "$label: stderr '$(head -c 300 "$T_TMP/err")', want a line matching '$pat'"
	else
		pass "$label"
	fi
}

# check_eq LABEL GOT WANT
check_eq() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1: got '$2', want '$3'"; fi
}

# Remove every filter under our root, and the root itself.
# Recursively: a filter's monitor/ and generation directories too. Only a
# root of our own making (t_begin's fbtest_* directory in bpffs) is removed.
t_cleanup_filters() {
	case "$FLOWBLOOM_ROOT" in
	/sys/fs/bpf/fbtest_*) ;;
	*) return 0 ;;
	esac
	t_cleanup_apply_locks
	[ -d "$FLOWBLOOM_ROOT" ] || return 0
	rm -rf --one-file-system "$FLOWBLOOM_ROOT" 2>/dev/null
	return 0
}

# t_cleanup_apply_locks: the lock files `apply` made for this suite's
# root (/run/flowbloom/apply-NAME-HASH.lock, HASH the FNV-1a 64 of the
# root: user/cli/cmd_apply.c), which stay after their apply as the
# boot's do, and bgp's records of its state files (bgp-NAME-HASH.feeds,
# user/cli/bgpfeeds.c). Only at the end, when none of ours can hold them.
t_cleanup_apply_locks() {
	local h
	[ -d /run/flowbloom ] || return 0
	h=$(python3 -c 'import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x100000001b3) % 2**64
print("%016x" % h)' "$FLOWBLOOM_ROOT" 2>/dev/null) || return 0
	[ -n "$h" ] && find /run/flowbloom -maxdepth 1 -type f \( -name "apply-*-$h.lock" -o \
		-name "bgp-*-$h.feeds" \) -delete 2>/dev/null
	return 0
}

t_end() {
	t_cleanup_filters
	rm -rf "$T_TMP"
	if [ "$T_SKIP" -gt 0 ]; then echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"; else echo "$T_PASS passed, $T_FAIL failed"; fi
	[ "$T_FAIL" -eq 0 ]
}

# t_traps: at exit the script's cleanup() (if it has one) runs, then
# t_net_down and t_cleanup_filters, and $T_TMP goes; on INT/TERM the same
# before the closing line and exit 130.
# t_finish: the same cleanup, the closing line, exit. t_skip_all REASON:
# one skip naming the suite and REASON, then t_finish.
# (Only in the suite's own shell: bash forks a background command's child
# with the traps still set, and a kill landing before its exec runs them
# there. That child removed $T_TMP and the namespaces mid-suite.)
t_exit() {
	[ "$BASHPID" = "${T_MAIN:-$BASHPID}" ] || return 1
	[ -n "${T_EXITED:-}" ] && return 0
	T_EXITED=1
	declare -F cleanup >/dev/null && cleanup
	t_net_down
	t_cleanup_filters
	[ -n "${T_JSON_PID:-}" ] && kill "$T_JSON_PID" 2>/dev/null
	return 0
}

t_traps() {
	# The script's own stdout and stderr, for the handlers: a trap runs
	# with the redirections of what it interrupts (a function called with
	# >FILE would swallow the closing line).
	exec {T_STDOUT}>&1 {T_STDERR}>&2
	T_MAIN=$BASHPID
	trap 't_exit && rm -rf "$T_TMP"' EXIT
	trap t_interrupted INT TERM
}
t_interrupted() {
	[ "$BASHPID" = "$T_MAIN" ] || exit 143
	{
		echo "interrupted"
		t_exit
		t_end
	} >&"$T_STDOUT" 2>&"$T_STDERR"
	exit 130
}

t_finish() {
	t_exit
	t_end
	exit $?
}

t_skip_all() {
	skip "$T_NAME: $1"
	t_finish
}

# t_lock_globals: wait for, then hold until exit, /tmp/fb-globals.lock, the
# lock of the real /sys/fs/bpf/xdp/globals (the `default` filter's ip-link
# pins), of /sys/fs/bpf/xdp itself and of the real filter root
# /sys/fs/bpf/flowbloom. Every test that creates `default`, loads an object
# with ip link or xdp-loader, or makes or removes those directories takes
# it; tests/run.sh runs no two of them together. Another tree's tests (or
# `make bench`) may hold it for minutes: after 15 minutes, returns 1 with
# the reason in T_LOCK_WHY. Under `flock /tmp/fb-globals.lock make test`
# (the lock held by an ancestor) it returns at once: the run holds it.
# The name is predictable and /tmp is everyone's: the file is made with
# O_EXCL (noclobber: never through a planted link), mode 0600 (no other
# user can open it to hold the lock), and used only if it is a regular
# file of root's (not another user's file, link or FIFO, which would hold
# the run or make root create a file where the link points).
# T_GLOBALS_LOCK names another file (squat.sh attacks one).
t_lock_globals() {
	local lk=${T_GLOBALS_LOCK:-/tmp/fb-globals.lock}
	if [ ! -e "$lk" ] && [ ! -L "$lk" ]; then
		(
			umask 077
			set -C
			: >"$lk"
		) 2>/dev/null
	fi
	if [ -L "$lk" ] || [ ! -f "$lk" ] || [ "$(stat -c %u "$lk")" != 0 ]; then
		T_LOCK_WHY="$lk is not a regular file of root's ($(stat -c '%F of uid %u' "$lk" 2>&1)): remove it"
		return 1
	fi
	chmod 600 "$lk" || {
		T_LOCK_WHY="cannot chmod $lk"
		return 1
	}
	# Held by this shell or an ancestor (lockheld.sh).
	lock_held_here "$lk" && return 0
	exec {T_GLOBALS_FD}>>"$lk" || {
		T_LOCK_WHY="cannot open $lk"
		return 1
	}
	flock -w 900 "$T_GLOBALS_FD" && return 0
	T_LOCK_WHY="$lk held by another test for 15 minutes"
	return 1
}
t_unlock_globals() {
	[ -n "${T_GLOBALS_FD:-}" ] && exec {T_GLOBALS_FD}>&-
	T_GLOBALS_FD=
}

# ---------------------------------------------------------------- network

T_NETNS=() # namespaces made here, removed by t_net_down
T_VETH=()  # NS:DEV of veth ends made here, deleted first

# t_netns NAME...: make network namespaces, lo up in each (removed by
# t_net_down). On failure returns 1 with the reason in T_NET_WHY.
t_netns() {
	local n err
	if [ "$(id -u)" -ne 0 ]; then
		T_NET_WHY="network namespaces need root"
		return 1
	fi
	if ! command -v nsenter >/dev/null || ! ip netns list >/dev/null 2>&1; then
		T_NET_WHY="needs ip netns (iproute2) and nsenter (util-linux)"
		return 1
	fi
	for n in "$@"; do
		if ! err=$(ip netns add "$n" 2>&1); then
			T_NET_WHY="cannot create network namespaces: $err"
			return 1
		fi
		T_NETNS+=("$n")
		ip -n "$n" link set lo up
	done
}

# t_veth NS1 DEV1 NS2 DEV2 [MAC1 MAC2]: a veth pair, DEV1 in NS1 and DEV2 in
# NS2 (the same namespace will do), left down. Returns 1 (T_NET_WHY) if
# veth is not available.
t_veth() {
	local mac1=() mac2=() err
	[ -n "${5:-}" ] && mac1=(address "$5")
	[ -n "${6:-}" ] && mac2=(address "$6")
	if ! err=$(ip link add "$2" "${mac1[@]}" netns "$1" type veth \
		peer name "$4" "${mac2[@]}" netns "$3" 2>&1); then
		T_NET_WHY="veth is not available: $err"
		return 1
	fi
	T_VETH+=("$1:$2")
}

# t_net_pair [--no-ipv6]: namespaces $NSA and $NSB joined by a veth pair,
# $VA (MAC $MACA) in NSA and $VB ($MACB) in NSB; lo and both ends up.
# --no-ipv6 turns IPv6 off in both namespaces (no router solicitations or
# MLD: every packet the programs see is the test's own). The names carry
# the suite's name and $$. Returns 1 with the reason in T_NET_WHY.
t_net_pair() {
	local tag=${T_NAME//_/} n
	tag=${tag:0:4}
	NSA=fb${tag}A$$
	NSB=fb${tag}B$$
	VA=fb${tag}a$$ # within IFNAMSIZ (15): 2 + 4 + 1 + 7
	VB=fb${tag}b$$
	MACA=02:fb:00:00:00:0a
	MACB=02:fb:00:00:00:0b
	t_netns "$NSA" "$NSB" && t_veth "$NSA" "$VA" "$NSB" "$VB" "$MACA" "$MACB" || return 1
	for n in "$NSA:$VA" "$NSB:$VB"; do
		[ "${1:-}" != --no-ipv6 ] || t_in "${n%%:*}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		ip -n "${n%%:*}" link set "${n#*:}" up
	done
}

# t_addr NS DEV ADDR/LEN...: add addresses (IPv6 without duplicate address
# detection: usable at once). Only documentation addresses are accepted.
t_addr() {
	local ns=$1 dev=$2 a
	shift 2
	for a in "$@"; do
		case "${a%/*}" in
		198.51.100.* | 203.0.113.*) ip -n "$ns" addr add "$a" dev "$dev" || return 1 ;;
		2001:db8:* | 2001:DB8:*) ip -n "$ns" addr add "$a" dev "$dev" nodad || return 1 ;;
		*)
			echo "t_addr: $a is not in 198.51.100.0/24, 203.0.113.0/24 or 2001:db8::/32" >&2
			return 1
			;;
		esac
	done
}

# t_neigh NS DEV MAC ADDR...: static neighbours (no ARP or neighbour
# discovery to wait for, or to see in the counters).
t_neigh() {
	local ns=$1 dev=$2 mac=$3 a
	shift 3
	for a in "$@"; do
		ip -n "$ns" neigh add "$a" lladdr "$mac" dev "$dev" nud permanent || return 1
	done
}

# t_in NS CMD...: run CMD in namespace NS (network only: bpffs stays
# visible). inA / inB: the same in $NSA / $NSB.
t_in() {
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" -- "$@"
}
inA() { t_in "$NSA" "$@"; }
inB() { t_in "$NSB" "$@"; }

# t_send_paced SECS SRC=PPS[@FROM-TO]...: UDP frames from each SRC at PPS
# to the peer, paced (never ahead of PPS x time; tests/lib/pkt.py
# send_paced), from FROM to TO s (all SECS without), through VA from NSA.
t_send_paced() {
	inA "$PY" -c 'import sys; from pkt import send_paced; send_paced(sys.argv[1], float(sys.argv[2]), sys.argv[3:])' "$VA" "$@"
}

# t_net_down: kill what still runs in our namespaces (it would keep them,
# and their veth, alive), delete the veth (detaching any XDP program now,
# not when the namespace is freed), delete the namespaces. Idempotent.
t_net_down() {
	local n pid
	for n in "${T_NETNS[@]}"; do
		for pid in $(ip netns pids "$n" 2>/dev/null); do
			kill "$pid" 2>/dev/null
		done
	done
	for n in "${T_VETH[@]}"; do
		ip -n "${n%%:*}" link del "${n#*:}" 2>/dev/null
	done
	for n in "${T_NETNS[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
	T_VETH=()
	T_NETNS=()
	return 0
}

# t_udp_pair B_ADDR A_ADDR...: t_net_pair --no-ipv6 with IPv4 addresses
# (/24) and static neighbours both ways (no ARP: every packet the programs
# see is the test's): B_ADDR on $VB, the A_ADDRs on $VA. Returns 1 with the
# reason in T_NET_WHY.
t_udp_pair() {
	local b=$1
	shift
	t_net_pair --no-ipv6 || return 1
	t_addr "$NSA" "$VA" "${@/%//24}" && t_addr "$NSB" "$VB" "$b/24" &&
		t_neigh "$NSA" "$VA" "$MACB" "$b" && t_neigh "$NSB" "$VB" "$MACA" "$@"
}

# t_ns_holder NS: a process (sleep, its PID in T_HOLDER) holding network
# namespace NS open as its fd 3, as a runtime's handle does, so that NS
# outlives `ip netns del NS`. The file is opened before the fork: the
# child's own open raced a deletion right after. It returns once the child
# is sleep: until its exec it is a bash holding the file as fd 7 too (a
# status right after listed "pid N (bash) fd 7").
t_ns_holder() {
	exec 7<"/run/netns/$1"
	sleep 600 3<&7 7<&- &
	T_HOLDER=$!
	exec 7<&-
	t_wait_until 20 t_exec_done "$T_HOLDER" sleep
}
# t_ours PID...: those PIDs still children of this shell; t_kill PID...:
# SIGTERM to them. For cleanups: a background process once waited for is
# gone, and its PID the kernel's to give again (pid_max may be 32768: on a
# busy machine the PIDs come round in minutes): a plain `kill` of it hits
# whatever has it now, another suite's shell even (which then ends
# "interrupted").
t_ours() {
	local p
	for p in "$@"; do
		[ "$(awk '$1 == "PPid:" { print $2 }' "/proc/$p/status" 2>/dev/null)" == "$$" ] && echo "$p"
	done
	return 0
}
t_kill() {
	local p
	for p in $(t_ours "$@"); do kill "$p" 2>/dev/null; done
	return 0
}
# t_exec_done PID NAME: PID runs NAME (a child made with & is the shell
# until it execs)
t_exec_done() {
	[ "$(cat "/proc/$1/comm" 2>/dev/null)" == "$2" ]
}

# t_bgp_traps: the bgp suites' cleanup (t_traps): their input, fd 9,
# closed, and their bgp, BP, stopped and waited for if still theirs.
t_bgp_traps() {
	BP=""
	cleanup() {
		exec 9>&- 2>/dev/null
		[ -n "$BP" ] && t_kill "$BP" && wait "$BP" 2>/dev/null
	}
	t_traps
}

# t_bgp_start NAME STATE [OPTION...]: bgp on NAME, its input the FIFO on
# fd 9, its PID in BP, its output in $T_TMP/bgp.out and bgp.err. The
# error file is emptied here, not only by the background job's
# redirection, which may come after a check read the last run's lines.
# t_bgp_stop: end of its input; bgp's exit status.
t_bgp_start() {
	rm -f "$T_TMP/fifo"
	mkfifo "$T_TMP/fifo"
	: >"$T_TMP/bgp.err"
	"$FB" bgp "$1" --state "$2" "${@:3}" <"$T_TMP/fifo" >"$T_TMP/bgp.out" 2>"$T_TMP/bgp.err" &
	BP=$!
	exec 9>"$T_TMP/fifo"
}
t_bgp_stop() {
	local rc
	exec 9>&-
	wait "$BP"
	rc=$?
	BP=""
	return $rc
}

# ExaBGP's JSON for the bgp suites, from peer 198.51.100.9: t_exa_ann NLRI
# announces a blackhole route (community 65535:666), t_exa_wd NLRI
# withdraws it.
T_EXA_NB='"neighbor": {"address": {"local": "198.51.100.2", "peer": "198.51.100.9"}, "direction": "receive"'
T_EXA_BH='"attribute": {"community": [[65535, 666]]}'
t_exa_ann() { printf '{"type": "update", %s, "message": {"update": {%s, "announce": {"ipv4 unicast": {"x": [{"nlri": "%s"}]}}}}}}\n' "$T_EXA_NB" "$T_EXA_BH" "$1"; }
t_exa_wd() { printf '{"type": "update", %s, "message": {"update": {"withdraw": {"ipv4 unicast": [{"nlri": "%s"}]}}}}}\n' "$T_EXA_NB" "$1"; }

# ---------------------------------------------------------------- traffic

# t_wait_for SECS CMD...: as t_wait_until, quiet, and prints how long it
# took ("S.d" seconds) or "timeout" (status 1): for figures like "the route
# came up after 1.3 s".
t_wait_for() {
	local secs=$1 t0
	shift
	t0=$(date +%s%N)
	until "$@" >/dev/null 2>&1; do
		if [ $((($(date +%s%N) - t0) / 1000000)) -gt $((secs * 1000)) ]; then
			echo timeout
			return 1
		fi
		sleep 0.1
	done
	t0=$((($(date +%s%N) - t0) / 1000000))
	printf '%d.%d\n' $((t0 / 1000)) $((t0 % 1000 / 100))
}

# t_wait_until SECS CMD...: run CMD every 0.1 s (T_WAIT_STEP) until it
# succeeds, for at most SECS seconds; CMD's last status. For "the program
# has seen every packet sent": a fixed sleep is too short on a loaded
# machine and too long on an idle one.
t_wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep "${T_WAIT_STEP:-0.1}"
	done
}

# t_looping PID: the flowbloom process PID (or its child: a `timeout`
# or `nsenter` in front of it) is in its loop: it holds bpf-map
# descriptors (the filter opened) and sleeps until its next poll or event
# (/proc/PID/wchan: nanosleep, epoll or poll). For "destroy it under a
# running loop", "a second reader is refused": a fixed wait after the
# start is too short on a loaded machine.
t_looping() {
	local p
	for p in "$1" $(pgrep -P "$1"); do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -q 'bpf-map' &&
			grep -qE 'nanosleep|epoll|poll|select' "/proc/$p/wchan" 2>/dev/null && return 0
	done
	return 1
}

# The e2e suites' UDP sender, for a namespace's python ($PY -c "$T_UDP_SEND"
# SRC DST N): N datagrams from SRC to DST port 9.
T_UDP_SEND='import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
for i in range(int(sys.argv[3])):
    s.sendto(b"flowbloom", (sys.argv[2], 9))'

# t_stat FLOWBLOOM NAME COUNTER: the packets of counter COUNTER of NAME.
t_stat() {
	"$1" -j stats "$2" | t_json "d['$3']['packets']"
}
