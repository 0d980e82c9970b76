# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the batch crash suites share (batch_crash.sh for cuckoo and d-left,
# count_batch_crash.sh for counting filters): sourced after lib.sh.

# matched NAME PCAP...: packets of each capture the program matched
matched() {
	"$FB" -j replay "$@" 2>>"$T_TMP/replay.err" | sed -n 's/.*"matched":\([0-9]*\).*/\1/p' | paste -sd' '
}
# counts NAME FILE: what `count` says of each of FILE's flows, one a line
# (its smallest counter; a cuckoo or d-left table's copies, a fingerprint
# another flow shares counted too: compared with the same flows' figure
# before, never with a number)
counts() { "$FB" count "$1" -f "$2" | awk '{print $1}'; }
# twin NAME: rNAME, the same filter (its export imported: the same key,
# so the same fingerprints), for what an unkilled run leaves
twin() {
	"$FB" export "$1" "$T_TMP/$1.fbx" >/dev/null && "$FB" import "$T_TMP/$1.fbx" "r$1" >/dev/null ||
		fail "$1: export and import"
}
# killed W ARGS...: run flowbloom ARGS, SIGKILLed at its Wth pause after a
# store (the test pause FLOWBLOOM_TEST_RELOC_DELAY_US); its exit status
# (137: killed)
killed() {
	local w=$1
	shift
	FLOWBLOOM_TEST_RELOC_DELAY_US=1 strace -f -qq -o /dev/null -e trace=nanosleep,clock_nanosleep \
		-e inject=nanosleep,clock_nanosleep:signal=KILL:when=$w "$FB" "$@" >/dev/null 2>&1 &
	wait $! 2>/dev/null
}
