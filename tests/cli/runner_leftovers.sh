#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tests/run.sh names what its suites left in bpffs's top level, and only
# that: the machine is shared, and another run's entries, made and removed
# while this one runs, are not its failure. It used to blame every entry
# new since its start: a bgp_hostile run failed with "left behind: ip tc"
# (iproute2's directories, made by another tree's locked suite at work),
# a guard run with another's namespace. Copies of run.sh run fake suites
# in a scratch tree:
# - one leaves a bpffs directory named with its PID: reported, and failed;
# - while it runs, "another run" makes a bpffs directory without a suite's
#   PID and /sys/fs/bpf/ip: with TESTS_SHARED=1 a note, not a failure;
#   without it a failure of its own (a suite's leftover not named by its
#   PID is never let pass); in parallel and with TESTS_JOBS=1;
# - a suite of the run that takes the globals lock leaves /sys/fs/bpf/ip:
#   reported (the lock is held by an ancestor, this suite: no one else can
#   have made it).
# It makes /sys/fs/bpf/ip when there is none: holds /tmp/fb-globals.lock.
source "$(dirname "$0")/../lib/lib.sh"
t_begin runner_leftovers
t_lock_globals || t_skip_all "$T_LOCK_WHY"

TREE=$T_TMP/tree
OTHER=/sys/fs/bpf/fbroth_$(tr 0-9 a-j <<<"$$")
IP_OURS=""
cleanup() {
	local d
	[ -f "$T_TMP/made" ] && while read -r d; do
		case "$d" in /sys/fs/bpf/fbrlk_*) rmdir "$d" 2>/dev/null ;; esac
	done <"$T_TMP/made"
	rmdir "$OTHER" 2>/dev/null
	[ -n "$IP_OURS" ] && rmdir /sys/fs/bpf/ip 2>/dev/null
	t_cleanup_filters
}
t_traps
if [ -e /sys/fs/bpf/ip ] || [ -L /sys/fs/bpf/ip ]; then
	t_skip_all "/sys/fs/bpf/ip exists (iproute2's, left by an earlier run?): remove it"
fi

mkdir -p "$TREE/tests/cli" "$TREE/tests/lib"
cp "$(dirname "$0")/../run.sh" "$TREE/tests/run.sh"
cp "$(dirname "$0")/../lib/lockheld.sh" "$TREE/tests/lib/"
# leak: leaves a directory named with its PID, as a suite that forgot one.
cat >"$TREE/tests/cli/leak.sh" <<EOF
mkdir /sys/fs/bpf/fbrlk_\$\$ && echo /sys/fs/bpf/fbrlk_\$\$ >>"$T_TMP/made"
echo "1 passed, 0 failed"
EOF
# slow: runs until the test says go (meanwhile "another run" works).
cat >"$TREE/tests/cli/slow.sh" <<EOF
touch "$T_TMP/started"
for i in \$(seq 300); do [ -e "$T_TMP/go" ] && break; sleep 0.1; done
echo "1 passed, 0 failed"
EOF
# lockd: takes the globals lock (as run.sh reads it) and leaves ip.
cat >"$TREE/tests/cli/lockd.sh" <<EOF
t_lock_globals() { :; }
	t_lock_globals
mkdir /sys/fs/bpf/ip
echo "1 passed, 0 failed"
EOF

# run_meanwhile JOBS SHARED: the fake run of leak and slow; while slow
# runs, another's entries appear, and go once the run is over.
run_meanwhile() {
	rm -f "$T_TMP/started" "$T_TMP/go"
	TESTS="leak slow" TESTS_JOBS=$1 TESTS_SHARED=$2 bash "$TREE/tests/run.sh" >"$T_TMP/run.out" 2>&1 &
	local pid=$!
	t_wait_until 30 test -e "$T_TMP/started"
	mkdir "$OTHER" && mkdir /sys/fs/bpf/ip && IP_OURS=1
	touch "$T_TMP/go"
	wait "$pid"
	echo "exit $?" >>"$T_TMP/run.out"
	rmdir "$OTHER" /sys/fs/bpf/ip
	IP_OURS=""
}
for run in "2 1" "1 1" "2 ''" "1 ''"; do
	read -r jobs shared <<<"$run"
	run_meanwhile "$jobs" "$shared"
	leak=$(tail -1 "$T_TMP/made")
	what="TESTS_JOBS=$jobs TESTS_SHARED=$shared"
	check_eq "$what: the suite's own leftover named, and only it" \
		"$(grep '^left behind' "$T_TMP/run.out")" "left behind in bpffs or as namespaces: ${leak##*/}"
	if [ -n "$shared" ]; then
		check_eq "... failed: one failure, exit 1" \
			"$(grep -E '^[0-9]+ passed|^exit' "$T_TMP/run.out" | paste -sd' ')" "2 passed, 1 failed exit 1"
		check_eq "... another's entries in a note" "$(grep '^note:' "$T_TMP/run.out")" \
			"note: new in bpffs or as namespaces, not made by this run's suites (another run's?): ${OTHER##*/} ip"
	else
		check_eq "... failed: two failures, exit 1" \
			"$(grep -E '^[0-9]+ passed|^exit' "$T_TMP/run.out" | paste -sd' ')" "2 passed, 2 failed exit 1"
		check_eq "... the entries no suite names counted too" "$(grep '^new in' "$T_TMP/run.out")" \
			"new in bpffs or as namespaces, named by no suite of this run (TESTS_SHARED=1 if another run shares the machine): ${OTHER##*/} ip"
	fi
	rmdir "$leak"
done

# A suite of the run took the globals lock: ip is its.
TESTS="lockd" bash "$TREE/tests/run.sh" >"$T_TMP/run.out" 2>&1
echo "exit $?" >>"$T_TMP/run.out"
IP_OURS=1
check_eq "a locked suite's ip left behind: named" "$(grep -E '^left behind|^note:' "$T_TMP/run.out")" \
	"left behind in bpffs or as namespaces: ip"
check_eq "... failed" "$(grep -E '^[0-9]+ passed|^exit' "$T_TMP/run.out" | paste -sd' ')" "1 passed, 1 failed exit 1"
t_finish
