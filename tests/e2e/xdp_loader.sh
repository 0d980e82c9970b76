#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# flowbloom under xdp-tools' xdp-loader (libxdp), beside other XDP programs.
#
# 1. libxdp reads the object's run config from its BTF: priority 10 and
#    chain call on XDP_PASS (`xdp-loader load -vv` prints what it parsed).
# 2. `xdp-loader load -p /sys/fs/bpf/xdp/globals` loads build/flowbloom.bpf.o
#    on a veth in native and in skb mode; the program finds the `default`
#    filter's pins there: `flowbloom stats default` sees the traffic, a
#    listed source is dropped, `info default` names the device; then
#    `xdp-loader unload`.
# 3. With a second program of ours (build/xdp_count.bpf.o, a counting
#    pass-through) on the same veth under libxdp's dispatcher: both see
#    traffic, and what flowbloom drops never reaches the second one. The
#    dispatcher needs freplace (BPF_PROG_TYPE_EXT) programs; a kernel that
#    refuses them makes libxdp fall back to one program per interface, and
#    this part is then skipped with the reason.
#
# It uses the `default` filter's pins in /sys/fs/bpf/xdp/globals: it holds
# /tmp/fb-globals.lock (t_lock_globals). Everything it makes (a namespace, a veth
# pair, its pins) is removed by the EXIT/INT/TERM trap. Addresses from
# 198.51.100.0/24 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin xdp_loader

BUILD=$(dirname "$FB")
FBOBJ=$BUILD/flowbloom.bpf.o
XCOBJ=$BUILD/xdp_count.bpf.o
# NSA, NSB, VA, VB, MACA, MACB: t_net_pair (lib.sh).
A4=198.51.100.1   # allowed source
BAD4=198.51.100.3 # listed (blocked) source
B4=198.51.100.2
GLOBALS=/sys/fs/bpf/xdp/globals
XCPIN=/sys/fs/bpf/fbtest_xc_$$ # the second program's map pins
NEW_DIRS=()                    # bpffs dirs absent before (removed if empty)
CREATED_DEFAULT=

cleanup() {
	local d
	# Deleting the veth pair deletes any XDP program on it, dispatcher
	# included; xdp-loader unload ran before, normally.
	t_net_down
	[ -n "$CREATED_DEFAULT" ] && "$FB" destroy default >/dev/null 2>&1
	rm -f "$XCPIN"/* 2>/dev/null
	rmdir "$XCPIN" 2>/dev/null
	for ((d = ${#NEW_DIRS[@]} - 1; d >= 0; d--)); do
		rmdir "${NEW_DIRS[d]}" 2>/dev/null
	done
	t_cleanup_filters
}
t_traps

# stat_of NAME COUNTER: packets of one of flowbloom's counters.
stat_of() {
	t_stat "$FB" "$1" "$2"
}

# xc_count: packets the second program saw (its per-CPU counter, summed).
xc_count() {
	bpftool -j map dump pinned "$XCPIN/xc_count" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)[0]
vals = d.get("values") or d.get("formatted", {}).get("values")
print(sum(int(v["value"], 0) if isinstance(v["value"], str) else
          int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little") for v in vals))'
}

# send SRC N: N UDP datagrams from SRC (an address of A) to B.
send() {
	inA "$PY" -c "$T_UDP_SEND" "$1" "$B4" "$2"
}

# seen_since N0 N: default has seen N packets since its seen counter was N0
# (nothing else crosses the veth: static neighbours, no IPv6).
seen_since() { [ $(($(stat_of default seen) - $1)) -ge "$2" ]; }

setup() {
	local d
	[ "$(id -u)" -eq 0 ] || t_skip_all "needs root"
	[ -n "$PY" ] || t_skip_all "needs python3"
	command -v xdp-loader >/dev/null || t_skip_all "needs xdp-loader (Debian xdp-tools)"
	stat -f -c %T /sys/fs/bpf 2>/dev/null | grep -q bpf || t_skip_all "bpffs is not mounted"
	[ -x "$FB" ] && [ -f "$FBOBJ" ] && [ -f "$XCOBJ" ] || {
		fail "not built (run make)"
		t_finish
	}
	t_lock_globals || t_skip_all "$T_LOCK_WHY"
	# A default filter of someone else's: not ours to use or remove.
	[ -e "$GLOBALS/fb_filter" ] && t_skip_all "a 'default' filter exists already (not one of this suite's)"
	for d in /sys/fs/bpf/xdp "$GLOBALS"; do
		[ -d "$d" ] || NEW_DIRS+=("$d")
	done
	# No IPv6 chatter (router solicitations): the counts stay exact.
	t_net_pair --no-ipv6 || t_skip_all "$T_NET_WHY"
	t_addr "$NSA" "$VA" "$A4/24" "$BAD4/24"
	t_addr "$NSB" "$VB" "$B4/24"
	# Static neighbours: no ARP, so every packet the programs see is ours.
	t_neigh "$NSA" "$VA" "$MACB" "$B4"
	t_neigh "$NSB" "$VB" "$MACA" "$A4" "$BAD4"
	check "create default" "$FB" create default --capacity 1000 --fp-rate 0.001
	CREATED_DEFAULT=1
	check "add the blocked source" "$FB" add default src "$BAD4"
}

# 1. The run config, as libxdp parses it from the object's BTF.
test_run_config() {
	local out
	out=$(inB xdp-loader load -vv -m skb -p "$GLOBALS" "$VB" "$FBOBJ" 2>&1)
	if grep -q 'Run prio: 10\. Chain call actions: XDP_PASS$' <<<"$out"; then
		pass "run config: priority 10, chain call on XDP_PASS"
	else
		fail "run config not parsed: $(grep -m1 'Run prio' <<<"$out")"
	fi
	# Fallback or dispatcher: the next part tells which.
	if grep -q 'Falling back to loading single prog without dispatcher' <<<"$out"; then
		DISPATCHER=
		FALLBACK_WHY=$(grep -m1 -E "Compatibility check.*failed" <<<"$out" | sed "s/^ *//")
	else
		DISPATCHER=1
	fi
	check "xdp-loader unload" inB xdp-loader unload -a "$VB"
}

# 2. flowbloom alone under xdp-loader, in each mode.
test_alone() {
	local mode=$1 seen0 drop0 pass0
	check "$mode: xdp-loader load" inB xdp-loader load -m "$mode" -p "$GLOBALS" "$VB" "$FBOBJ"
	seen0=$(stat_of default seen)
	drop0=$(stat_of default dropped)
	pass0=$(stat_of default passed)
	send "$A4" 50
	send "$BAD4" 30
	t_wait_until 30 seen_since "$seen0" 80
	check_eq "$mode: flowbloom saw every packet" "$(($(stat_of default seen) - seen0))" 80
	check_eq "$mode: the listed source dropped" "$(($(stat_of default dropped) - drop0))" 30
	check_eq "$mode: the others passed" "$(($(stat_of default passed) - pass0))" 50
	if "$FB" -n "$NSB" -j info default | "$PY" -c 'import json,sys
sys.exit(not any(a["dev"] == sys.argv[1] for a in json.load(sys.stdin)["attached"]))' "$VB"; then
		pass "$mode: info default names $VB"
	else
		fail "$mode: info default does not name $VB"
	fi
	check "$mode: xdp-loader unload" inB xdp-loader unload -a "$VB"
	if ip -n "$NSB" -o link show dev "$VB" | grep -q ' xdp'; then
		fail "$mode: an XDP program is left on $VB"
	else
		pass "$mode: nothing left on $VB"
	fi
}

# 3. flowbloom and a second program under the dispatcher.
test_two() {
	local mode=$1 seen0 drop0 pass0 xc0 out
	if [ -z "$DISPATCHER" ]; then
		skip "$mode: two programs on one interface: libxdp has no dispatcher on this kernel ($FALLBACK_WHY; it needs BPF_PROG_TYPE_EXT programs)"
		return
	fi
	mkdir -p "$XCPIN"
	check "$mode: load flowbloom" inB xdp-loader load -m "$mode" -p "$GLOBALS" "$VB" "$FBOBJ"
	check "$mode: load the second program" inB xdp-loader load -m "$mode" -p "$XCPIN" "$VB" "$XCOBJ"
	out=$(inB xdp-loader status "$VB" 2>&1)
	if grep -q xdp_dispatcher <<<"$out" && grep -q flowbloom <<<"$out" && grep -q xdp_count <<<"$out"; then
		pass "$mode: both under the dispatcher"
	else
		fail "$mode: xdp-loader status: $out"
	fi
	seen0=$(stat_of default seen)
	drop0=$(stat_of default dropped)
	pass0=$(stat_of default passed)
	xc0=$(xc_count)
	send "$A4" 50
	send "$BAD4" 30
	t_wait_until 30 seen_since "$seen0" 80
	check_eq "$mode: flowbloom saw every packet" "$(($(stat_of default seen) - seen0))" 80
	check_eq "$mode: flowbloom dropped the listed source" "$(($(stat_of default dropped) - drop0))" 30
	check_eq "$mode: flowbloom passed the others" "$(($(stat_of default passed) - pass0))" 50
	check_eq "$mode: the second program saw exactly what flowbloom passed" "$(($(xc_count) - xc0))" 50
	check "$mode: xdp-loader unload --all" inB xdp-loader unload -a "$VB"
	rm -f "$XCPIN"/xc_count
}

# 4. A device another program runs: attach names it and does not send the
# operator to `flowbloom detach`, which refuses a program not flowbloom's;
# a device flowbloom runs already: detach it first.
test_taken() {
	mkdir -p "$XCPIN"
	check "taken: the other program loaded alone" inB xdp-loader load -m native -p "$XCPIN" "$VB" "$XCOBJ"
	t_refused 1 "taken: attach names the other program, not flowbloom's" \
		"already runs XDP program [0-9]* ('[a-z_]*', native), not flowbloom's: one program per device (to share it, load flowbloom's object with xdp-loader)" \
		"$FB" -n "$NSB" attach default "$VB"
	t_refused 1 "taken: detach refuses it" "is not flowbloom's; not detaching" "$FB" -n "$NSB" detach "$VB"
	check "taken: xdp-loader unload" inB xdp-loader unload -a "$VB"
	rm -f "$XCPIN"/xc_count
	check "taken: flowbloom attached (generic)" "$FB" -n "$NSB" attach default "$VB" --mode generic
	t_refused 1 "taken: attach again: flowbloom's, detach it first" \
		"already runs flowbloom (program [0-9]*, generic): detach it first" \
		"$FB" -n "$NSB" attach default "$VB" --mode native
	test_detach_race
	check "taken: detach" "$FB" -n "$NSB" detach "$VB"
}

# A detach that finds flowbloom's program, and another tool's program there
# when it acts: its netlink request (the second sendto; the first is the
# query) is held back 3 s by strace while flowbloom's program is detached
# and the other loaded. The kernel must refuse the request (it names the
# program detach saw), and the other program stays. Ends with flowbloom's
# program attached again (generic).
test_detach_race() {
	if ! command -v strace >/dev/null; then
		skip "taken: detach racing another tool (strace is not installed)"
		return
	fi
	(strace -f -qq -o /dev/null -e trace=sendto -e inject=sendto:delay_enter=3000000:when=2 \
		"$FB" -n "$NSB" detach "$VB" >"$T_TMP/race" 2>&1
		echo "exit $?" >>"$T_TMP/race") &
	sleep 1
	inB ip link set dev "$VB" xdpgeneric off
	inB xdp-loader load -m skb -p "$XCPIN" "$VB" "$XCOBJ" >/dev/null 2>&1
	wait
	check "taken: detach racing another tool: refused, saying why" \
		grep -q "changed while detaching (program [0-9]* is gone); not detaching" "$T_TMP/race"
	check_eq "... exit 1" "$(tail -1 "$T_TMP/race")" "exit 1"
	check "... the other tool's program still runs" \
		bash -c "nsenter --net=/run/netns/$NSB ip -d link show $VB | grep -q 'name xdp_\(count\|dispatcher\)'"
	check "... xdp-loader unload" inB xdp-loader unload -a "$VB"
	rm -f "$XCPIN"/xc_count
	check "... flowbloom attached again (generic)" "$FB" -n "$NSB" attach default "$VB" --mode generic
}

setup
test_run_config
test_taken
for mode in native skb; do
	test_alone "$mode"
	test_two "$mode"
done
t_finish
