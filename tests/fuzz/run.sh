#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Run the libFuzzer harnesses (tests/fuzz/NAME_fuzz.c), one at a time, one
# process each, for SECONDS each (default 180):
#   bash tests/fuzz/run.sh [SECONDS] [NAME...]     e.g. bash tests/fuzz/run.sh 60 flow bgp
# Builds them first (make fuzz). Each starts from its seeds
# (tests/fuzz/corpus/NAME, read only) and what earlier runs kept
# (build/fuzz/corpus/NAME, where new inputs go); its log is
# build/fuzz/logs/NAME.log, an input that broke a promise
# build/fuzz/crash/NAME-crash-* (replay: build/fuzz/NAME_fuzz FILE, with
# FUZZ_VERBOSE=1 to see what the library reported). One line per harness:
# executions, coverage, and whether it found something. Exit 1 if any did.
cd "$(dirname "$0")/../.." || exit 1
SECONDS_EACH=180
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
	SECONDS_EACH=$1
	shift
fi
ALL="flow list lines bgp bgpstate bgpjournal bgpnames applyconf optfile units escape fbx pcap"
NAMES=${*:-$ALL}

# NAME: libFuzzer options beside the corpus (dictionary, input size).
opts_of() {
	case "$1" in
	flow) echo "-dict=tests/fuzz/flow.dict -max_len=512" ;;
	list) echo "-dict=tests/fuzz/flow.dict -max_len=2048" ;;
	lines) echo "-max_len=20000" ;;
	bgp) echo "-dict=tests/fuzz/bgp.dict -max_len=4096" ;;
	bgpstate) echo "-dict=tests/fuzz/bgpstate.dict -max_len=2048" ;;
	bgpjournal) echo "-dict=tests/fuzz/bgp.dict -max_len=4096" ;;
	bgpnames) echo "-dict=tests/fuzz/bgp.dict -max_len=2048" ;;
	applyconf) echo "-dict=tests/fuzz/applyconf.dict -max_len=1024" ;;
	optfile) echo "-dict=tests/fuzz/optfile.dict -max_len=2048" ;;
	units) echo "-max_len=64" ;;
	escape) echo "-max_len=512" ;;
	fbx) echo "-max_len=16384" ;;
	pcap) echo "-dict=tests/fuzz/pcap.dict -max_len=4096" ;;
	*) return 1 ;;
	esac
}
# NAME: seed folders (list also starts from the FLOW lines).
seeds_of() {
	case "$1" in
	list) echo "tests/fuzz/corpus/list tests/fuzz/corpus/flow" ;;
	*) echo "tests/fuzz/corpus/$1" ;;
	esac
}

for n in $NAMES; do
	opts_of "$n" >/dev/null || {
		echo "no harness '$n' (have: $ALL)"
		exit 2
	}
done
make -s fuzz || exit 1
mkdir -p build/fuzz/logs build/fuzz/crash
found=0
for n in $NAMES; do
	mkdir -p "build/fuzz/corpus/$n"
	log=build/fuzz/logs/$n.log
	before=$(ls build/fuzz/crash | grep -c "^$n-" || true)
	# shellcheck disable=SC2046
	"build/fuzz/${n}_fuzz" "build/fuzz/corpus/$n" $(seeds_of "$n") $(opts_of "$n") \
		-max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="build/fuzz/crash/$n-" </dev/null >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
	after=$(ls build/fuzz/crash | grep -c "^$n-" || true)
	if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
		found=1
		what="FOUND: $(grep -m1 -E '^fuzz:|ERROR:|runtime error' "$log") ($(ls -t build/fuzz/crash | grep "^$n-" | head -1))"
	else
		what="nothing found"
	fi
	printf '%-10s %10s execs in %ss (%s/s), cov %s, ft %s, corpus %s: %s\n' "$n" "${execs:-?}" \
		"${secs:-?}" "$(( ${execs:-0} / (${secs:-1} > 0 ? ${secs:-1} : 1) ))" "${cov:-?}" \
		"${ft:-?}" "${corp:-?}" "$what"
done
exit $found
