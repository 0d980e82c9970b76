#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs every test (what `make test` calls) and adds up their closing lines
# into one: "N passed, N failed[, N skipped]". Needs root, bpffs and a
# BPF-enabled kernel.
#
# TESTS="unit cli" limits the run to some suites (by name); a word ending in
# / selects a kind: TESTS="unit/ cli/" runs every suite in tests/unit and
# tests/cli. Words mix: TESTS="program/ e2e".
#
# Suites run side by side, TESTS_JOBS at a time (default: twice the CPUs;
# TESTS_JOBS=1 runs them one after the other, their output as it comes).
# Each suite's output is printed whole when it ends, under "== NAME", and
# closed by "-- NAME: N passed, N failed (N s)". Two rules keep them apart:
# - a suite that calls t_lock_globals (tests/lib/lib.sh: the real
#   /sys/fs/bpf/xdp/globals and /sys/fs/bpf/flowbloom) never runs beside
#   another that does;
# - everything else a suite makes is its own (FLOWBLOOM_ROOT, namespace and
#   device names, temporary files: with $$), and its checks do not depend on
#   an idle CPU (tests/lib/lib.sh says how).
# The longest suites start first: each run's times are kept in
# build/tests/times for the next (fresh trees: e2e, cli, then the C suites).
cd "$(dirname "$0")/.." || exit 1
source tests/lib/lockheld.sh

# Suites are found, not listed, by folder: a C suite is tests/KIND/test_NAME.c
# (KIND unit or program) built into build/tests/KIND/test_NAME, a shell suite
# tests/KIND/NAME.sh (KIND cli or e2e). tests/lib, tests/bench and demo.sh
# are not suites.
KINDS="e2e cli program unit"
find_suites() { # [KIND...]: "KIND/NAME" per line
	local k f n kinds=${*:-$KINDS}
	for k in $kinds; do
		for f in tests/"$k"/test_*.c; do
			[ -f "$f" ] || continue
			n=${f##*/test_}
			echo "$k/${n%.c}"
		done
		for f in tests/"$k"/*.sh; do
			[ -f "$f" ] || continue
			n=$(basename "$f" .sh)
			echo "$k/$n"
		done
	done
}
ALL=$(find_suites)
if [ -n "${TESTS:-}" ]; then
	SUITES=""
	for w in $TESTS; do
		case "$w" in
		*/) m=$(find_suites "${w%/}") ;;
		*) m=$(echo "$ALL" | grep -E "/$w\$") ;;
		esac
		[ -n "$m" ] || m="?/$w" # reported below as no such suite
		SUITES="$SUITES $m"
	done
else
	SUITES=$ALL
fi

JOBS=${TESTS_JOBS:-$((2 * $(nproc)))}
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || {
	echo "TESTS_JOBS must be a positive number, not '$JOBS'"
	exit 2
}
TIMES=build/tests/times # "KIND/NAME SECONDS" of the last run of each suite
OUT=$(mktemp -d /tmp/fbtest-run.XXXXXX)
total_pass=0
total_fail=0
total_skip=0
broken=""
declare -A PID_OF NAME_OF START_OF LOCK_OF
declare -A TIME
LOCKED=""
INTERRUPTED=""

mount | grep -q ' /sys/fs/bpf type bpf' || mount -t bpf bpf /sys/fs/bpf

# The order: by last run's time, longest first (unknown ones first of all,
# in the order found).
if [ -f "$TIMES" ]; then
	while read -r ks secs; do TIME[$ks]=$secs; done <"$TIMES"
fi
SUITES=$(for ks in $SUITES; do echo "${TIME[$ks]:-999999} $ks"; done | sort -s -k1,1nr | cut -d' ' -f2)

# cmd_of KIND/NAME: the command of a suite, in CMD; 1 if there is none.
cmd_of() {
	local k=${1%%/*} s=${1#*/}
	if [ -f "tests/$k/test_$s.c" ] && [ -x "build/tests/$k/test_$s" ]; then
		CMD=(build/tests/"$k"/test_"$s")
	elif [ -f "tests/$k/$s.sh" ]; then
		CMD=(bash "tests/$k/$s.sh")
	else
		return 1
	fi
}

# lock_of KIND/NAME: "globals" if the suite takes the globals lock.
lock_of() {
	local f="tests/${1%%/*}/${1#*/}.sh"
	[ -f "$f" ] && grep -q '^[[:space:]]*t_lock_globals' "$f" && echo globals
}

# report KIND/NAME SECONDS [streamed]: the suite's block (unless it was
# streamed already) and its closing line, added to the totals.
report() {
	local ks=$1 s=${1#*/} secs=$2 log=$OUT/${1//\//_} last p f k rc
	rc=$(cat "$log.rc" 2>/dev/null)
	if [ -z "${3:-}" ]; then
		echo "== $s"
		grep -a -v -E '^[0-9]+ passed, [0-9]+ failed' "$log"
	fi
	last=$(grep -a -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	if [ -z "$last" ]; then
		echo "$s: no closing line (exit ${rc:-?})"
		broken="$broken $s"
		return
	fi
	p=$(echo "$last" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$last" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	k=$(echo "$last" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + ${k:-0}))
	[ "${rc:-1}" -ne 0 ] && [ "$f" -eq 0 ] && broken="$broken $s"
	echo "-- $s: $last ($secs s)"
	[ -n "$INTERRUPTED" ] || TIME[$ks]=$secs
}

# start KIND/NAME: run it in the background (its own process group, so
# that an interrupt can stop it with everything it started).
start() {
	local ks=$1 log=$OUT/${1//\//_}
	"${CMD[@]}" </dev/null >"$log" 2>&1 &
	PID_OF[$ks]=$!
	NAME_OF[$!]=$ks
	SUITE_PIDS="$SUITE_PIDS$! "
	START_OF[$ks]=$SECONDS
	LOCK_OF[$ks]=$(lock_of "$ks")
	[ -n "${LOCK_OF[$ks]}" ] && LOCKED="$LOCKED ${LOCK_OF[$ks]} " && RAN_LOCKED=1
}

# reap: wait for any running suite to end, report it.
reap() {
	local pid ks rc
	wait -n -p pid
	rc=$?
	ks=${NAME_OF[$pid]:-}
	[ -n "$ks" ] || return 0
	echo "$rc" >"$OUT/${ks//\//_}.rc"
	unset "NAME_OF[$pid]" "PID_OF[$ks]"
	[ -n "${LOCK_OF[$ks]}" ] && LOCKED=${LOCKED/ ${LOCK_OF[$ks]} /}
	report "$ks" $((SECONDS - START_OF[$ks]))
}

# What the suites must leave as they found it: bpffs's top level and the
# network namespaces. The machine is shared: another run (another tree's, a
# hand's) makes and removes entries meanwhile, so an entry new since the
# start is judged only if this run's suites made it:
# - it names one of their PIDs (every suite names what it makes with $$:
#   fbtest_NAME_PID, namespaces fbTAGA<PID>), and that PID is not alive
#   again (all of them have ended);
# - or it is an entry of the globals lock (t_lock_globals in
#   tests/lib/lib.sh: xdp, tc, ip, flowbloom), a suite of this run took
#   that lock, and no one else holds it now (it is read under the lock).
# Others are counted too (a suite that named something without its PID),
# or named in a note with TESTS_SHARED=1 (another run shares the machine).
SUITE_PIDS=" "
RAN_LOCKED=""
GLOBALS_LOCK=/tmp/fb-globals.lock
machine() {
	ls -A /sys/fs/bpf 2>/dev/null
	ip netns list 2>/dev/null | sed 's/^\([^ ]*\).*/netns \1/'
}
BEFORE=$(machine | sort)
# globals_quiet: 0 if no one but this run can be at work on the globals
# entries: the lock is free (then held on fd GLOBALS_FD until it is
# closed), or an ancestor holds it (`flock /tmp/fb-globals.lock make test`,
# a suite's t_lock_globals): a descriptor of the lock file whose fdinfo
# lists a lock. Opened read-only and only as root's regular file
# (t_lock_globals's rule).
globals_quiet() {
	local lk=$GLOBALS_LOCK
	[ -e "$lk" ] || [ -L "$lk" ] || return 0
	[ ! -L "$lk" ] && [ -f "$lk" ] && [ "$(stat -c %u "$lk")" == 0 ] || return 1
	lock_held_here "$lk" && return 0
	exec {GLOBALS_FD}<"$lk" && flock -n "$GLOBALS_FD"
}
# left_behind: LEFT (this run's entries still there) and OTHERS (new ones
# that are not this run's and name no live process).
left_behind() {
	local e n ours live now globals=""
	LEFT=""
	OTHERS=""
	[ -n "$RAN_LOCKED" ] && globals_quiet && globals=1
	now=$(machine | sort)
	[ -n "${GLOBALS_FD:-}" ] && exec {GLOBALS_FD}<&-
	while read -r e; do
		[ -n "$e" ] || continue
		ours=
		live=
		for n in $(echo "$e" | grep -oE '[0-9]+'); do
			kill -0 "$n" 2>/dev/null && live=1
			[[ "$SUITE_PIDS" == *" $n "* ]] && ours=1
		done
		case "$e" in xdp | tc | ip | flowbloom) ours=$globals ;; esac
		if [ -n "$live" ]; then
			continue
		elif [ -n "$ours" ]; then
			LEFT="$LEFT $e"
		else
			OTHERS="$OTHERS $e"
		fi
	done < <(comm -13 <(echo "$BEFORE") <(echo "$now"))
}

# finish: keep this run's times (the next run's order), the closing line.
finish() {
	local ks
	if [ -d build/tests ]; then
		for ks in "${!TIME[@]}"; do echo "$ks ${TIME[$ks]}"; done | sort >"$TIMES.new" &&
			mv "$TIMES.new" "$TIMES"
	fi
	rm -rf "$OUT"
	[ -n "$broken" ] && echo "suites that did not finish cleanly:$broken" && total_fail=$((total_fail + 1))
	left_behind
	[ -n "$LEFT" ] && echo "left behind in bpffs or as namespaces:$LEFT" && total_fail=$((total_fail + 1))
	# Others: a leftover not named by its suite's PID, or another run's.
	# Counted unless the machine is said to be shared (TESTS_SHARED=1).
	if [ -n "$OTHERS" ] && [ -n "${TESTS_SHARED:-}" ]; then
		echo "note: new in bpffs or as namespaces, not made by this run's suites (another run's?):$OTHERS"
	elif [ -n "$OTHERS" ]; then
		echo "new in bpffs or as namespaces, named by no suite of this run (TESTS_SHARED=1 if another run shares the machine):$OTHERS"
		total_fail=$((total_fail + 1))
	fi
	if [ "$total_skip" -gt 0 ]; then
		echo "$total_pass passed, $total_fail failed, $total_skip skipped"
	else
		echo "$total_pass passed, $total_fail failed"
	fi
}

# On INT or TERM: TERM to every running suite's process group; each cleans
# up (t_traps) and prints its closing line, reported as it ends.
interrupted() {
	local pid
	INTERRUPTED=1
	echo "interrupted: stopping the suites still running"
	for pid in "${!NAME_OF[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
	while [ ${#NAME_OF[@]} -gt 0 ]; do reap; done
	broken="$broken (interrupted)"
	finish
	exit 130
}

if [ "$JOBS" -eq 1 ]; then
	for ks in $SUITES; do
		if ! cmd_of "$ks"; then
			echo "no such suite: ${ks#*/}"
			broken="$broken ${ks#*/}"
			continue
		fi
		echo "== ${ks#*/}"
		t0=$SECONDS
		log=$OUT/${ks//\//_}
		[ -n "$(lock_of "$ks")" ] && RAN_LOCKED=1
		# The suite's PID: the pipeline's first part, which execs it.
		{
			echo "$BASHPID" >"$log.pid"
			exec "${CMD[@]}"
		} 2>&1 | tee "$log" | grep -a -v -E '^[0-9]+ passed, [0-9]+ failed'
		echo "${PIPESTATUS[0]}" >"$log.rc"
		SUITE_PIDS="$SUITE_PIDS$(cat "$log.pid") "
		report "$ks" $((SECONDS - t0)) streamed
	done
else
	# Job control: each suite in a process group of its own.
	set -m
	trap interrupted INT TERM
	pending=($SUITES)
	while [ ${#pending[@]} -gt 0 ] || [ ${#NAME_OF[@]} -gt 0 ]; do
		# Start the first pending suites that may run now.
		rest=()
		for ks in "${pending[@]}"; do
			if [ ${#NAME_OF[@]} -ge "$JOBS" ]; then
				rest+=("$ks")
			elif ! cmd_of "$ks"; then
				echo "no such suite: ${ks#*/}"
				broken="$broken ${ks#*/}"
			elif [ -n "$(lock_of "$ks")" ] && [[ "$LOCKED" == *" $(lock_of "$ks") "* ]]; then
				rest+=("$ks")
			else
				start "$ks"
			fi
		done
		pending=("${rest[@]}")
		[ ${#NAME_OF[@]} -gt 0 ] && reap
	done
	set +m
fi

finish
[ "$total_fail" -eq 0 ]
