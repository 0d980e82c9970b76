#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Evasion, with the kernel's own stack as the oracle: no packet may evade a
# rule by header tricks (docs/security.md). Namespace A sends, with
# AF_PACKET, thousands of frames of blocked flows (a UDP and a TCP 5-tuple,
# a source, a destination prefix, `udp dst B dport N`, a port range; IPv4
# and IPv6), each datagram dressed in a header trick the Linux stack
# accepts: 0, 1 and 2 VLAN tags (802.1Q and 802.1ad priority tags), IPv4
# options up to IHL 15, reserved flag bits (IPv4's, and the IPv6 fragment
# header's), IPv6 payload length 0 before hop-by-hop options (the frame's
# length), IPv4 and IPv6 fragments (a first fragment of 8
# bytes, out of order, all of 8 bytes, duplicates, overlaps), IPv6
# hop-by-hop, destination options (up to 1 KiB), routing type 0 with
# segments left 0, atomic fragments, chains of up to 8 headers, fragments
# whose fragmentable part starts with destination options, padding
# past the IP length (in a first fragment cut inside its header chain, a
# made-up rest of the chain and harmless ports), a UDP length short of the
# IP payload, TCP options.
# Namespace B counts them with nftables, on exactly the blocked flows, at
# prerouting after conntrack's defragmentation (priority -150) and at
# input, and receives them on UDP sockets bound to the blocked ports
# (tests/e2e/evasion.py builds the frames and reads the oracle).
#
# Three runs of the same traffic, flowbloom attached natively to B's veth:
# - control: an empty filter, `--action monitor` (every frame reaches the
#   stack, whatever flowbloom's parser makes of it). The stack must count every datagram of the
#   tricks it is known to take (this is what lets the test fail: frames the
#   stack dropped on its own would prove nothing);
# - drop: the filter with the rules, default malformed policy: no datagram
#   of a blocked flow counted anywhere, none on a socket;
# - pass: the same, `--malformed pass`: the same, except for frames the
#   parser cannot finish by design (a third VLAN tag, nine extension
#   headers), which that policy lets through: their counts are reported.
# Tricks whose fate is the stack's own (overlapping fragments, a second
# first fragment, the transport header in the second IPv6 fragment, an IP
# length that cuts the ports with harmless ones in the padding) are
# reported as counted in the control run, and must be 0 when protected.
# The table printed at the end gives every trick's counts.
source "$(dirname "$0")/../lib/lib.sh"
t_begin evasion
t_traps

EV="$(dirname "$0")/evasion.py"
command -v nft >/dev/null || t_skip_all "needs nft (nftables: make deps)"
t_net_pair || t_skip_all "$T_NET_WHY"

# B: the addresses the blocked flows go to (one inside the destination
# rule's prefix), no reverse-path filter (the sources are A's, not routed
# back), static neighbours (no ARP or neighbour discovery for the resets
# and port-unreachables B answers with), the nftables counters. No VLAN
# devices: this kernel has none (CONFIG_VLAN_8021Q), so the tagged frames
# the stack takes are priority tags (VLAN 0), which it strips.
setup_b() {
	inB sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		"net.ipv4.conf.$VB.rp_filter=0" || return 1
	t_addr "$NSB" "$VB" 198.51.100.2/24 198.51.100.130/32 2001:db8:100::2/64 2001:db8:300::130/128 || return 1
	t_neigh "$NSB" "$VB" "$MACA" 203.0.113.10 203.0.113.66 203.0.113.20 \
		2001:db8:200::10 2001:db8:200::66 2001:db8:200::20 || return 1
	"$PY" "$EV" nft | inB nft -f - || return 1
}
check "B: addresses, neighbours, nftables counters" setup_b

check "create ctl (empty) and blk" "$FB" create ctl --capacity 1000 --fp-rate 0.0001
check "create blk" "$FB" create blk --capacity 1000 --fp-rate 0.0001
"$PY" "$EV" rules >"$T_TMP/rules"
check "add the blocked rules to blk" "$FB" add blk -f "$T_TMP/rules"
# 5005 is one shape per family, 6000-6999 two more (/13 and /9 prefixes).
check_eq "blk holds 6 rule shapes" "$("$FB" -j info blk | t_json 'len(d["shapes"])')" 6

# run NAME FILTER [ATTACH OPTION...]: attach FILTER to B's veth, send the
# traffic, detach; the counts in $T_TMP/NAME.json.
run() {
	local name=$1 filter=$2 ok=1
	shift 2
	check "$name: attach $filter $*" "$FB" -n "$NSB" attach "$filter" "$VB" --mode native "$@" || return 1
	if ! inB timeout 120 "$PY" "$EV" send "/run/netns/$NSA" "/run/netns/$NSB" "$VA" "$VB" \
		"$name" "$T_TMP/$name.json" >"$T_TMP/$name.out" 2>&1; then
		fail "$name: the traffic: $(tail -c 400 "$T_TMP/$name.out")"
		ok=0
	fi
	check "$name: detach" "$FB" -n "$NSB" detach "$VB"
	[ "$ok" = 1 ]
}

t0=$SECONDS
if run control ctl --action monitor && run drop blk && run pass blk --malformed pass; then
	# flowbloom's own counters agree it dropped something of each run.
	check "blk dropped packets" test "$(t_stat "$FB" blk dropped)" -gt 0
	"$PY" "$EV" report "$T_TMP/control.json" "$T_TMP/drop.json" "$T_TMP/pass.json" >"$T_TMP/report"
	while IFS= read -r line; do
		case $line in
		"ok "*) pass "${line#ok }" ;;
		"bad "*) fail "${line#bad }" ;;
		table) break ;;
		esac
	done <"$T_TMP/report"
	sed -n '/^table$/,$p' "$T_TMP/report" | tail -n +2
	echo "three runs of traffic in $((SECONDS - t0)) s"
fi
t_finish
