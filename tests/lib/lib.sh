# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shell test helpers: a private bpffs root, checks that count, cleanup.
# Source it; call `t_begin NAME` first and `t_end` last.

FB=${FB:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/flowbloom}
PCAPS=${PCAPS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/../shared/pcaps}
T_PASS=0
T_FAIL=0
T_SKIP=0

# Each script gets its own filter root so tests never touch real filters.
t_begin() {
	T_NAME=$1
	export FLOWBLOOM_ROOT=/sys/fs/bpf/fbtest_${T_NAME}_$$
	T_TMP=$(mktemp -d "/tmp/fbtest.$T_NAME.XXXXXX")
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

# check_eq LABEL GOT WANT
check_eq() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1: got '$2', want '$3'"; fi
}

# Remove every filter under our root, and the root itself.
t_cleanup_filters() {
	local d
	[ -d "$FLOWBLOOM_ROOT" ] || return 0
	for d in "$FLOWBLOOM_ROOT"/*/; do
		[ -d "$d" ] || continue
		rm -f "$d"/* 2>/dev/null
		rmdir "$d" 2>/dev/null
	done
	rmdir "$FLOWBLOOM_ROOT" 2>/dev/null
	return 0
}

t_end() {
	t_cleanup_filters
	rm -rf "$T_TMP"
	if [ "$T_SKIP" -gt 0 ]; then echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"; else echo "$T_PASS passed, $T_FAIL failed"; fi
	[ "$T_FAIL" -eq 0 ]
}

# t_traps: the script's cleanup() runs at exit, and on INT/TERM before the
# closing line and exit 130. t_finish: cleanup, the closing line, exit.
t_traps() {
	trap cleanup EXIT
	trap 'echo "interrupted"; cleanup; t_end; exit 130' INT TERM
}

t_finish() {
	cleanup
	t_end
	exit $?
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
	"$1" -j stats "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]]["packets"])' "$3"
}
