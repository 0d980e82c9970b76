#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make bench`: the benchmark suite (not part of `make test`). Prints every
# figure and, for each target, the ratio measured in this run against a
# baseline measured in this run, with `met` or `MISSED`.
#   bench.sh [REPEAT]   REPEAT packets per test_run (default 2M)
# BENCH chooses parts (default all, in this order):
#   main      ns/packet, fill, memory, DRAM targets, monitoring (sections 1-5)
#   prefix    prefix lists: the 1.5k partition, --confirm exact (6, 7), and the
#             table over 1k..10M entries (9; BENCH_PFX_SIZES=1000,1500,...)
#   types     the filter types side by side (8; docs/bench-types.txt)
#   verifier  instructions the verifier processes, per configuration (10)
#   capture   what `flowbloom capture` costs, idle and running (14)
#   compress  export file sizes at 1, 10, 50 % fill against the bound (15)
#   ttl       rules with a lifetime: a filter without them, with and without
#             the code; 1, 3, 4 live generations (bench_ttl.c)
#   shapes    rule shapes: 1, 4 and 8 masks against 5-tuple and source-only
#             filters, hit and miss (14)
#   live      live veth: count-only vs xdp-filter vs flowbloom, IPv4 and IPv6,
#             and flowbloom's parser alone (the most a filter that parses the
#             key as flowbloom does can reach); two cores against one (11,
#             12; LIVE_FRAMES, LIVE_ROUNDS)
#   stages    live veth: where a frame's time goes, the program cut after
#             its parser, its head, its probes, against count-only, the
#             whole program, and the whole program on a compact filter of the
#             same list (16; STAGES_ROUNDS; STAGES_OTHER=path of another
#             build's flowbloom adds its whole program, for A/B runs)
#   scale     live veth at scale: 1M and 10M blocked sources and a 1M-entry
#             DROP-shaped prefix list in flowbloom, an exact per-CPU hash map
#             (xdp-filter's design), an LPM trie and, for the host lists, a
#             receiver that only reads one line a frame (14; SCALE_ROUNDS,
#             SCALE_SIZES="1000000 10000000 pfx" by default)
#   del       counting filter: `del -f` against `add -f` (13;
#             tests/bench/bench_del.sh, BENCH_DEL_N flows, default 2M,
#             BENCH_DEL_ROUNDS rounds, default 3)
# e.g. `make bench BENCH="prefix verifier"`. The live part runs in a network
# namespace made here (veth pairs, documentation addresses only; tests/lib
# lib.sh's t_netns/t_veth) and removes it, its pins and its programs on
# exit; it attaches XDP programs, so it holds /tmp/fb-globals.lock while it
# runs (taken here; under `flock /tmp/fb-globals.lock make bench` it sees
# the lock held by its caller and goes on).
cd "$(dirname "$0")/../.." || exit 1
B=build/tests/bench/bench
# The CLI the parts run (FLOWBLOOM_BIN, as bench.c reads it; default this build's).
FB=${FLOWBLOOM_BIN:-$PWD/build/flowbloom}
source tests/lib/lib.sh
NS=fbbench$$
IN="nsenter --net=/run/netns/$NS"
TMP=$(mktemp -d /tmp/fbbench.XXXXXX)
: >"$TMP/all"
BENCH=${BENCH:-main types prefix verifier shapes ttl capture compress live stages scale del}
LIVE_FRAMES=${LIVE_FRAMES:-1000000}
LIVE_ROUNDS=${LIVE_ROUNDS:-9}
SCALE_ROUNDS=${SCALE_ROUNDS:-5}
STAGES_ROUNDS=${STAGES_ROUNDS:-11}
SCALE_SIZES=${SCALE_SIZES:-1000000 10000000 pfx}

# The C parts' filters (removed by them, unless killed).
export FBBENCH_ROOT=/sys/fs/bpf/fbbench_sh_$$
# libxdp (xdp-filter in the live part) makes /sys/fs/bpf/xdp for its pins
# and leaves it, empty: removed at exit if it was not there before.
XDP_DIR_BEFORE=$([ -e /sys/fs/bpf/xdp ] || [ -L /sys/fs/bpf/xdp ] && echo 1)

cleanup() {
	rm -rf "$FBBENCH_ROOT" 2>/dev/null
	if [ -e "/run/netns/$NS" ]; then
		$IN xdp-filter unload --all >/dev/null 2>&1
	fi
	t_net_down
	for d in live stages; do
		[ -d "/sys/fs/bpf/fbbench_${d}_$$" ] || continue
		for f in live tight; do
			FLOWBLOOM_ROOT=/sys/fs/bpf/fbbench_${d}_$$ "$FB" destroy "$f" >/dev/null 2>&1
		done
		rmdir "/sys/fs/bpf/fbbench_${d}_$$" 2>/dev/null
	done
	if [ -d "/sys/fs/bpf/fbbench_scale_$$" ]; then
		FLOWBLOOM_ROOT=/sys/fs/bpf/fbbench_scale_$$ "$FB" destroy scale >/dev/null 2>&1
		rmdir "/sys/fs/bpf/fbbench_scale_$$" 2>/dev/null
	fi
	rm -rf "$TMP"
	if [ -z "$XDP_DIR_BEFORE" ] && [ -d /sys/fs/bpf/xdp ] && [ ! -L /sys/fs/bpf/xdp ]; then
		rmdir /sys/fs/bpf/xdp 2>/dev/null
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

has() { case " $BENCH " in *" $1 "*) return 0 ;; esac; return 1; }

# run CMD...: run a part, its output also kept for the summary.
run() {
	"$@" | tee -a "$TMP/all"
	return "${PIPESTATUS[0]}"
}

# target, ratio, median, wall, cpu: how the figures are judged.
source tests/bench/figures.sh
FIG_ALL=$TMP/all

echo "flowbloom benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(getconf _NPROCESSORS_ONLN) CPUs"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared; see docs/bench.txt)"
# What makes hosts differ (docs/performance.md, "Hosts differ"): the CPU,
# its last-level cache, and whether every return pays a mitigation thunk.
VULN=/sys/devices/system/cpu/vulnerabilities
echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)," \
	"L3 $(lscpu 2>/dev/null | awk -F': +' '/^L3 cache/ { print $2; exit }')," \
	"spec_rstack_overflow: $(cat $VULN/spec_rstack_overflow 2>/dev/null || echo unknown)," \
	"retbleed: $(cat $VULN/retbleed 2>/dev/null || echo unknown)"
echo "parts: $BENCH"

if has main; then
	run "$B" "$@" || exit 1
fi
if has prefix; then
	run "$B" prefix || exit 1
fi
# The C parts after prefix's first half, each `bench PART` (prefix's table
# is the part pfxtable).
for part in types prefix verifier capture compress ttl shapes; do
	has "$part" || continue
	[ "$part" == prefix ] && sub=pfxtable || sub=$part
	run "$B" "$sub" || exit 1
done

# Frames the receiver on veth $1 dropped in XDP so far.
drops() {
	$IN ethtool -S "$1" | awk '/rx_queue_[0-9]+_xdp_drops/ { s += $2 } END { print s + 0 }'
}

# live_run FAMILY GEN:IDLE:CPU...: Mpps dropped by the receivers of the
# generators (rxN for genN), all run at once: frames dropped / the longest
# generator's wall time (the 100,000 warm-up frames each are not counted),
# then, after a colon, frames / CPU time summed over the generators (each
# generator thread's CPU time includes the receiver's XDP run in its
# softirq; time slices of other processes are not in it). Fails unless the
# receivers dropped every frame sent.
live_run() {
	local fam=$1 spec rx d0=0 d1=0 secs cpu out n=0
	shift
	for spec in "$@"; do
		rx=rx${spec#gen}
		rx=${rx%%:*}
		d0=$((d0 + $(drops "$rx")))
		n=$((n + 1))
	done
	out=$("$B" gen "$NS" "$fam" "$LIVE_FRAMES" "$@") || return 1
	secs=$(echo "$out" | awk '{ print $NF }')
	cpu=$(echo "$out" | awk -v f="$LIVE_FRAMES" '{ for (i = 2; i < NF; i += 2) s += f / $i; printf "%.3f", s / 1e6 }')
	for spec in "$@"; do
		rx=rx${spec#gen}
		rx=${rx%%:*}
		d1=$((d1 + $(drops "$rx")))
	done
	# Every frame's source is listed: a receiver that let one through is
	# not doing its work, and its rate would not be the rate of a filter.
	# (A count-only receiver may drop a few more: the kernel's own IPv6
	# frames, e.g. MLD reports, sent out of the generator's veth.)
	local got=$((d1 - d0 - 100000 * n))
	if [ "$got" -lt $((LIVE_FRAMES * n)) ]; then
		echo "bench: $got of $((LIVE_FRAMES * n)) frames dropped ($fam: $*): a receiver did not drop every frame" >&2
		return 1
	fi
	awk -v d="$got" -v s="$secs" -v c="$cpu" 'BEGIN { printf "%.3f:%s", d / s / 1e6, c }'
}

# list_filters RULES: the live parts' two filters in $FLOWBLOOM_ROOT (made
# here), each holding RULES (a line a rule), sized for them at 1 % as an
# operator sizes one: live (all of its 256 KiB chunk's bits) and tight
# (create --compact: the bits its size needs, in whole pages of the chunk).
list_filters() {
	local n
	n=$(wc -l <"$1")
	mkdir -p "$FLOWBLOOM_ROOT" &&
		"$FB" create live --capacity "$n" --fp-rate 0.01 >/dev/null &&
		"$FB" add live -f "$1" >/dev/null &&
		"$FB" create tight --capacity "$n" --fp-rate 0.01 --compact >/dev/null &&
		"$FB" add tight -f "$1" >/dev/null
}

# list_filters_down: both filters and their root gone, the globals lock
# released.
list_filters_down() {
	"$FB" destroy tight >/dev/null
	"$FB" destroy live >/dev/null
	rmdir "$FLOWBLOOM_ROOT" 2>/dev/null
	unset FLOWBLOOM_ROOT
	t_unlock_globals
}

if has live; then
	echo
	echo "11. live veth: 64-byte UDP frames, every source on the block list, every frame dropped"
	t_lock_globals || {
		echo "live: $T_LOCK_WHY" >&2
		exit 1
	}
	t_netns "$NS" || {
		echo "live: $T_NET_WHY" >&2
		exit 1
	}
	# idle1 and idle2 stay down: a generator attaches its program to one
	# (live frames then cost 35 us a call, not 24 ms: ../shared/NOTES.md).
	for i in 1 2; do
		t_veth "$NS" "idle$i" "$NS" "idle${i}p" || exit 1
	done
	for i in 1 2 3 4 5 6 7; do
		t_veth "$NS" "gen$i" "$NS" "rx$i" &&
			ip -n "$NS" link set "gen$i" up && ip -n "$NS" link set "rx$i" up || exit 1
	done
	"$B" srcs 4 >"$TMP/src4" && "$B" srcs 6 >"$TMP/src6" || exit 1
	# rx1: count and drop, the ceiling.
	"$B" count "$NS" rx1 || exit 1
	# rx2: xdp-filter, driven by its own CLI, both families' sources.
	$IN xdp-filter load rx2 -m native -f ipv4,ipv6 -p allow || exit 1
	t0=$(date +%s.%N)
	while read -r a; do
		$IN xdp-filter ip "$a" -m src || exit 1
	done < <(cat "$TMP/src4" "$TMP/src6")
	t1=$(date +%s.%N)
	id=$($IN ip link show rx2 | grep -o 'prog/xdp id [0-9]*' | awk '{ print $3 }' | head -1)
	echo "  xdp-filter $(dpkg-query -W -f '${Version}' xdp-tools 2>/dev/null): $(cat "$TMP/src4" "$TMP/src6" | wc -l) sources added in $(echo "$t1 - $t0" | bc) s (a process each); program: $(bpftool prog show id "$id" | head -1 | awk '{ print $4 }')"
	# rx3, rx4, rx5: flowbloom, filter live made by the CLI (list_filters:
	# sized for its sources at 1 %, it takes one 256 KiB chunk and gets
	# all of its bits, far below 1 %); rx6: the same list in tight, the
	# compact filter.
	export FLOWBLOOM_ROOT=/sys/fs/bpf/fbbench_live_$$
	sed 's/^/src /' "$TMP/src4" "$TMP/src6" >"$TMP/rules"
	list_filters "$TMP/rules" || exit 1
	for i in 3 4 5; do
		"$FB" -n "$NS" attach live "rx$i" --mode native >/dev/null || exit 1
	done
	"$FB" -n "$NS" attach tight rx6 --mode native >/dev/null || exit 1
	# rx7: flowbloom's program on live cut after its parser (the stages
	# part's object, bench stage-rx): the key made, no head, no probe, the
	# frame dropped: the most a filter that parses the key as flowbloom
	# does can reach.
	"$B" stage-rx "$NS" rx7 live 1 || exit 1
	echo "  flowbloom: $("$FB" info live | grep -Ei 'hash|bits|layout' | tr -s ' \n' ' ')"
	echo "  flowbloom --compact: $("$FB" info tight | grep -Ei 'hash|bits|layout' | tr -s ' \n' ' ')"
	echo "  $LIVE_FRAMES frames per run, median of $LIVE_ROUNDS rounds; IPv4: $(wc -l <"$TMP/src4") sources (all of 198.51.100.0/24 and 203.0.113.0/24), IPv6: $(wc -l <"$TMP/src6") (2001:db8::1:0/116)"
	echo "  generator and receiver on CPU 1 (on veth the receiver's XDP program runs on the sender's CPU)"
	echo "  Mpps: frames dropped / wall time (medians of the rounds; the targets); per CPU:"
	echo "  frames / the generator thread's CPU time, which holds the receiver's XDP run"
	echo "  and not other processes' time slices (medians, beside)"
	for fam in 4 6; do
		declare -A R=()
		for r in $(seq "$LIVE_ROUNDS"); do
			for i in 1 2 3 6 7; do
				R[$i]+="$(live_run "$fam" "gen$i:idle1:1") " || exit 1
			done
		done
		for i in 1 2 3 6 7; do
			M[$fam$i]=$(echo "${R[$i]}" | wall | median)
			C[$fam$i]=$(echo "${R[$i]}" | cpu | median)
		done
		printf '  IPv%s  count-only %5.2f Mpps   xdp-filter %5.2f Mpps   flowbloom %5.2f Mpps   --compact %5.2f Mpps   parser alone %5.2f Mpps\n' \
			"$fam" "${M[${fam}1]}" "${M[${fam}2]}" "${M[${fam}3]}" "${M[${fam}6]}" "${M[${fam}7]}"
		printf '        per CPU second: %5.2f / %5.2f / %5.2f / %5.2f / %5.2f Mpps\n' "${C[${fam}1]}" "${C[${fam}2]}" "${C[${fam}3]}" "${C[${fam}6]}" "${C[${fam}7]}"
		printf '        runs (wall:cpu): count-only %s\n        xdp-filter %s\n        flowbloom %s\n        --compact %s\n        parser alone %s\n' \
			"${R[1]}" "${R[2]}" "${R[3]}" "${R[6]}" "${R[7]}"
		unset R
	done
	for fam in 4 6; do
		target "live IPv$fam: flowbloom / xdp-filter" \
			"$(echo "${M[${fam}3]} / ${M[${fam}2]}" | bc -l)" 1.2 at_least
		target "live IPv$fam: flowbloom / count-only" \
			"$(echo "${M[${fam}3]} / ${M[${fam}1]}" | bc -l)" 0.75 at_least
		ratio "live IPv$fam: xdp-filter / count-only" "$(echo "${M[${fam}2]} / ${M[${fam}1]}" | bc -l)"
		ratio "live IPv$fam, per CPU second: flowbloom / xdp-filter" "$(echo "${C[${fam}3]} / ${C[${fam}2]}" | bc -l)"
		ratio "live IPv$fam, per CPU second: flowbloom / count-only" "$(echo "${C[${fam}3]} / ${C[${fam}1]}" | bc -l)"
		ratio "live IPv$fam: flowbloom --compact / xdp-filter" "$(echo "${M[${fam}6]} / ${M[${fam}2]}" | bc -l)"
		ratio "live IPv$fam: flowbloom --compact / count-only" "$(echo "${M[${fam}6]} / ${M[${fam}1]}" | bc -l)"
		ratio "live IPv$fam: flowbloom's parser alone / xdp-filter" "$(echo "${M[${fam}7]} / ${M[${fam}2]}" | bc -l)"
		ratio "live IPv$fam: flowbloom's parser alone / count-only" "$(echo "${M[${fam}7]} / ${M[${fam}1]}" | bc -l)"
	done
	target "live: flowbloom ns/frame IPv6 / IPv4" "$(echo "${M[43]} / ${M[63]}" | bc -l)" 1.2 at_most
	ratio "live, per CPU second: flowbloom ns/frame IPv6 / IPv4" "$(echo "${C[43]} / ${C[63]}" | bc -l)"

	echo
	echo "12. two cores: flowbloom on rx4 and rx5 (one filter), generators gen4 on CPU 0 and"
	echo "    gen5 on CPU 1 started together, each into its own veth pair; one core: gen4 alone"
	echo "    on CPU 1. Mpps = frames dropped by both receivers / the longer generator's wall"
	echo "    time (the target); per CPU second: the generators' frames / their CPU times, summed"
	for fam in 4 6; do
		one="" two=""
		for r in $(seq "$LIVE_ROUNDS"); do
			one+="$(live_run "$fam" gen4:idle1:1) " || exit 1
			two+="$(live_run "$fam" gen4:idle1:0 gen5:idle2:1) " || exit 1
		done
		m1=$(echo "$one" | wall | median)
		m2=$(echo "$two" | wall | median)
		c1=$(echo "$one" | cpu | median)
		c2=$(echo "$two" | cpu | median)
		printf '  IPv%s  one core %5.2f Mpps   two cores %5.2f Mpps   (per CPU second: %5.2f, %5.2f)\n' \
			"$fam" "$m1" "$m2" "$c1" "$c2"
		printf '        runs (wall:cpu): one %s\n        two %s\n' "$one" "$two"
		target "two cores / one core, flowbloom, IPv$fam" "$(echo "$m2 / $m1" | bc -l)" 1.8 at_least
		ratio "two cores / one core, IPv$fam, per CPU second" "$(echo "$c2 / $c1" | bc -l)"
	done
	"$FB" -n "$NS" detach rx3 >/dev/null
	"$FB" -n "$NS" detach rx4 >/dev/null
	"$FB" -n "$NS" detach rx5 >/dev/null
	"$FB" -n "$NS" detach rx6 >/dev/null
	ip -n "$NS" link set rx7 xdp off 2>/dev/null
	$IN xdp-filter unload rx2 >/dev/null
	t_net_down
	list_filters_down
fi

if has stages; then
	echo
	echo "16. where a frame's time goes, live: the live part's filter (2,508 sources, every"
	echo "    frame listed and dropped) in the program cut after a stage of its data path"
	echo "    (include/flowbloom/bench.h), one receiver each, and the whole program on the"
	echo "    same list in a compact filter (create --compact); ns of generator CPU time a"
	echo "    frame (the receiver's XDP run is in it), median and fastest of $STAGES_ROUNDS rounds"
	echo "    of $LIVE_FRAMES frames, the receivers in turn, on CPU 1"
	t_lock_globals || {
		echo "stages: $T_LOCK_WHY" >&2
		exit 1
	}
	t_netns "$NS" || {
		echo "stages: $T_NET_WHY" >&2
		exit 1
	}
	t_veth "$NS" idle1 "$NS" idle1p || exit 1
	RX="count parse head probe whole compact"
	[ -n "${STAGES_OTHER:-}" ] && RX+=" other"
	i=0
	for r in $RX; do
		i=$((i + 1))
		t_veth "$NS" "gen$i" "$NS" "rx$i" &&
			ip -n "$NS" link set "gen$i" up && ip -n "$NS" link set "rx$i" up || exit 1
	done
	export FLOWBLOOM_ROOT=/sys/fs/bpf/fbbench_stages_$$
	{ "$B" srcs 4 && "$B" srcs 6; } | sed 's/^/src /' >"$TMP/rules" || exit 1
	list_filters "$TMP/rules" || exit 1
	"$B" count "$NS" rx1 || exit 1
	for st in 1 2 3; do
		"$B" stage-rx "$NS" "rx$((st + 1))" live "$st" || exit 1
	done
	"$FB" -n "$NS" attach live rx5 --mode native >/dev/null || exit 1
	"$FB" -n "$NS" attach tight rx6 --mode native >/dev/null || exit 1
	echo "    live: $("$FB" info live | grep -E 'layout|bits' | tr -s ' \n' ' ')"
	echo "    compact: $("$FB" info tight | grep -E 'layout|bits' | tr -s ' \n' ' ')"
	if [ -n "${STAGES_OTHER:-}" ]; then
		"$STAGES_OTHER" -n "$NS" attach live rx7 --mode native >/dev/null || exit 1
		echo "    other: $STAGES_OTHER"
	fi
	nrx=$i
	for fam in 4 6; do
		declare -A NSF=()
		for r in $(seq "$STAGES_ROUNDS"); do
			# The receivers in turn, the order reversed every other round.
			order=$(seq "$nrx")
			[ $((r % 2)) = 0 ] && order=$(seq "$nrx" -1 1)
			for i in $order; do
				# live_run's Mpps per CPU second, as ns a frame.
				out=$(live_run "$fam" "gen$i:idle1:1") || exit 1
				NSF[$i]+="$(echo "$out" | awk -F: '{ printf "%.2f", 1000 / $2 }') "
			done
		done
		echo "  IPv$fam                      ns a frame: median   fastest   stage (medians)"
		i=0 prev=""
		for r in $RX; do
			i=$((i + 1))
			m=$(echo "${NSF[$i]}" | median)
			f=$(echo "${NSF[$i]}" | tr ' ' '\n' | grep . | sort -g | head -1)
			case $r in
			count) what="count-only" ;;
			parse) what="cut after the parser" ;;
			head) what="cut after the head" ;;
			probe) what="cut after the probes" ;;
			whole) what="the whole program" ;;
			compact) what="the whole program, compact filter" ;;
			other) what="the other build's whole program" ;;
			esac
			d=""
			if [ "$r" = compact ]; then
				d=$(awk -v a="$m" -v b="$whole" 'BEGIN { printf "%+6.1f (against the whole program)", a - b }')
			elif [ "$r" = other ]; then
				d=$(awk -v a="$m" -v b="$whole" 'BEGIN { printf "%+6.1f (against this build)", a - b }')
			elif [ -n "$prev" ]; then
				d=$(awk -v a="$m" -v b="$prev" 'BEGIN { printf "%+6.1f", a - b }')
			fi
			printf '    %-34s %7.2f  %7.2f   %s\n' "$what" "$m" "$f" "$d"
			prev=$m
			[ "$r" = count ] && count=$m
			[ "$r" = whole ] && whole=$m
			[ "$r" = compact ] && compact=$m
		done
		ratio "live IPv$fam, stages: flowbloom / count-only (CPU time)" "$(echo "$count / $whole" | bc -l)"
		ratio "live IPv$fam, stages: flowbloom --compact / count-only (CPU time)" "$(echo "$count / $compact" | bc -l)"
		unset NSF
	done
	for i in 2 3 4; do
		ip -n "$NS" link set "rx$i" xdp off 2>/dev/null
	done
	"$FB" -n "$NS" detach rx5 >/dev/null
	"$FB" -n "$NS" detach rx6 >/dev/null
	[ -n "${STAGES_OTHER:-}" ] && "$STAGES_OTHER" -n "$NS" detach rx7 >/dev/null
	t_net_down
	list_filters_down
fi

if has scale; then
	echo
	echo "14. live at scale: 64-byte IPv6 UDP frames, every source on the block list, every frame"
	echo "    dropped; sources in 2001:db8::/32 (tests/bench/scale.h). Receivers: count-only (rx1),"
	echo "    flowbloom (rx2, \`create --capacity N --fp-rate 0.01\`, filled as \`load --replace\`"
	echo "    does), an exact per-CPU hash map with a counter per source (rx3, xdp-filter's"
	echo "    design), an LPM trie (rx4), and for hosts a program that parses and reads one random"
	echo "    line of an array flowbloom's size (rx5, 'one line') and one that does only what a"
	echo "    keyed probe must: NH of the source under the filter's descriptor, its line of a copy"
	echo "    of the filter's bits, the k-bit test (rx6, 'probe floor'). Generator and receiver on CPU 1; $LIVE_FRAMES frames a"
	echo "    run, medians of $SCALE_ROUNDS rounds; Mpps (wall) and per CPU second as in 11."
	t_lock_globals || {
		echo "scale: $T_LOCK_WHY" >&2
		exit 1
	}
	ip netns add "$NS" || exit 1
	ip -n "$NS" link set lo up
	ip -n "$NS" link add idle1 type veth peer name idle1p || exit 1
	for i in 1 2 3 4 5 6; do
		ip -n "$NS" link add "gen$i" type veth peer name "rx$i" &&
			ip -n "$NS" link set "gen$i" up && ip -n "$NS" link set "rx$i" up || exit 1
	done
	"$B" count "$NS" rx1 || exit 1
	export FLOWBLOOM_ROOT=/sys/fs/bpf/fbbench_scale_$$
	mkdir -p "$FLOWBLOOM_ROOT"
	for what in $SCALE_SIZES; do
		if [ "$what" = pfx ]; then
			n=1000000
			label="1,000,000 prefixes shaped like DROP (100,000 /43-/56, the rest /64: DROP's /11-/24 and hosts, 32 bits down)"
		else
			n=$what
			label="$(printf "%'d" "$what") sources (/128)"
		fi
		echo "  $label"
		"$FB" create scale --capacity "$n" --fp-rate 0.01 >/dev/null || exit 1
		read -r fn fmem fsec fk < <("$B" scale-fill scale "$what") || exit 1
		"$FB" -n "$NS" attach scale rx2 --mode native >/dev/null || exit 1
		emem="" esec=""
		if [ "$what" != pfx ]; then
			read -r _ emem esec < <("$B" scale-rx "$NS" rx3 exact "$what") || exit 1
		fi
		read -r _ lmem lsec < <("$B" scale-rx "$NS" rx4 lpm "$what") || exit 1
		if [ "$what" != pfx ]; then
			"$B" scale-rx "$NS" rx5 line "$what" >/dev/null || exit 1
			"$B" scale-rx "$NS" rx6 floor "$what" >/dev/null || exit 1
		fi
		printf '    memory: flowbloom %s bytes (%s rules after expansion, k=%s, filled in %s s); ' \
			"$fmem" "$fn" "$fk" "$fsec"
		[ -n "$emem" ] && printf 'per-CPU hash %s bytes (memlock, filled in %s s); ' "$emem" "$esec"
		printf 'LPM trie %s bytes (memlock, filled in %s s)\n' "$lmem" "$lsec"
		export BENCH_SCALE=$what
		declare -A R=()
		rx="1 2 4"
		[ "$what" != pfx ] && rx="1 2 3 4 5 6"
		for r in $(seq "$SCALE_ROUNDS"); do
			for i in $rx; do
				R[$i]+="$(live_run 6 "gen$i:idle1:1") " || exit 1
			done
		done
		unset BENCH_SCALE
		for i in $rx; do
			S[$i]=$(echo "${R[$i]}" | wall | median)
			SC[$i]=$(echo "${R[$i]}" | cpu | median)
		done
		printf '    Mpps: count-only %5.2f   flowbloom %5.2f' "${S[1]}" "${S[2]}"
		[ "$what" != pfx ] && printf '   per-CPU hash %5.2f' "${S[3]}"
		printf '   LPM trie %5.2f' "${S[4]}"
		[ "$what" != pfx ] && printf '   one line %5.2f   probe floor %5.2f' "${S[5]}" "${S[6]}"
		printf '\n    per CPU second: %5.2f / %5.2f' "${SC[1]}" "${SC[2]}"
		[ "$what" != pfx ] && printf ' / %5.2f' "${SC[3]}"
		printf ' / %5.2f' "${SC[4]}"
		[ "$what" != pfx ] && printf ' / %5.2f / %5.2f' "${SC[5]}" "${SC[6]}"
		printf '\n'
		[ "$what" != pfx ] &&
			echo "    (one line: rx5 parses, reads one random line of an array flowbloom's size and drops, nothing else)"
		for i in $rx; do
			printf '    runs (wall:cpu) rx%s: %s\n' "$i" "${R[$i]}"
		done
		if [ "$what" != pfx ]; then
			ratio "live, $label: one line / per-CPU hash" "$(echo "${S[5]} / ${S[3]}" | bc -l)"
			ratio "  flowbloom / one line" "$(echo "${S[2]} / ${S[5]}" | bc -l)"
			ratio "  flowbloom / probe floor" "$(echo "${S[2]} / ${S[6]}" | bc -l)"
			ratio "  probe floor / per-CPU hash" "$(echo "${S[6]} / ${S[3]}" | bc -l)"
			if [ "$what" = 10000000 ]; then
				target "live, 10M sources: flowbloom / per-CPU hash" "$(echo "${S[2]} / ${S[3]}" | bc -l)" 3 at_least
			else
				ratio "live, $label: flowbloom / per-CPU hash" "$(echo "${S[2]} / ${S[3]}" | bc -l)"
			fi
			ratio "  per CPU second: flowbloom / per-CPU hash" "$(echo "${SC[2]} / ${SC[3]}" | bc -l)"
		fi
		if [ "$what" = 10000000 ]; then
			target "live, 10M sources: flowbloom / LPM trie" "$(echo "${S[2]} / ${S[4]}" | bc -l)" 3 at_least
		else
			ratio "live, ${what/pfx/1M DROP-shaped prefixes}: flowbloom / LPM trie" "$(echo "${S[2]} / ${S[4]}" | bc -l)"
		fi
		ratio "  per CPU second: flowbloom / LPM trie" "$(echo "${SC[2]} / ${SC[4]}" | bc -l)"
		ratio "  flowbloom / count-only" "$(echo "${S[2]} / ${S[1]}" | bc -l)"
		"$FB" -n "$NS" detach rx2 >/dev/null
		$IN ip link set dev rx3 xdp off 2>/dev/null
		$IN ip link set dev rx4 xdp off 2>/dev/null
		$IN ip link set dev rx5 xdp off 2>/dev/null
		$IN ip link set dev rx6 xdp off 2>/dev/null
		"$FB" destroy scale >/dev/null
		unset R
	done
	ip netns del "$NS"
	rmdir "$FLOWBLOOM_ROOT" 2>/dev/null
	unset FLOWBLOOM_ROOT
	exec 8>&-
fi

if has del; then
	n=${BENCH_DEL_N:-2000000}
	rounds=${BENCH_DEL_ROUNDS:-3}
	echo
	echo "13. counting filter, bulk add and delete of $n UDP flows through the CLI (tests/bench/bench_del.sh $n),"
	echo "    $rounds rounds (a fresh filter each); the ratios use the medians"
	: >"$TMP/del"
	for r in $(seq "$rounds"); do
		bash tests/bench/bench_del.sh "$n" "$FB" | tee -a "$TMP/del" | sed 's/^/  /'
		[ "${PIPESTATUS[0]}" = 0 ] || {
			echo "del: tests/bench/bench_del.sh failed" >&2
			exit 1
		}
	done
	# The target uses CPU time (user + sys): on this shared machine the wall
	# clock also counts other processes' time slices (the verbs make no
	# blocking call; the involuntary context switches of a run are hundreds).
	a=$(awk '$1 == "add" { print $7 + $10 }' "$TMP/del" | median)
	d=$(awk '$1 == "del" { print $7 + $10 }' "$TMP/del" | median)
	[ -n "$a" ] && [ -n "$d" ] || exit 1
	target "del -f / add -f, CPU time (user + sys, medians)" "$(echo "$d / $a" | bc -l)" 1.0 at_most
	a=$(awk '$1 == "add" { print $4 }' "$TMP/del" | median)
	d=$(awk '$1 == "del" { print $4 }' "$TMP/del" | median)
	ratio "del -f / add -f, wall (medians)" "$(echo "$d / $a" | bc -l)"
	# The CLI's own timing of the work (without process start and parsing), if it says.
	a=$(grep '^add' "$TMP/del" | grep -o 'in [0-9.]* ms' | awk '{ print $2 }' | median)
	d=$(grep '^del' "$TMP/del" | grep -o 'in [0-9.]* ms' | awk '{ print $2 }' | median)
	if [ -n "$a" ] && [ -n "$d" ]; then
		ratio "del / add, as timed by the CLI (medians)" "$(echo "$d / $a" | bc -l)"
	fi
fi
echo
echo "Summary: every target of this run ($(grep -cE ' (met|MISSED)$' "$TMP/all") targets, $(grep -cE ' met$' "$TMP/all") met); load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -E ' (met|MISSED)$' "$TMP/all"
exit 0
