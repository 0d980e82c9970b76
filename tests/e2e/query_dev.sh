#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `query --packet --dev DEV` and `replay --dev DEV` against the live
# verdict of the program attached on DEV, for real: a veth pair between
# two namespaces (IPv6 off: every frame B's program sees is the test's
# own), seven frames sent one at a time with AF_PACKET from A, each one's
# verdict on B read from the filter's counters (seen +1, dropped +1 or
# not). The frames: UDP a source rule holds, UDP no rule holds, TCP a
# 5-tuple holds, a malformed TCP packet (its header cut to 2 bytes) from
# the listed source and one from another, a first fragment cut before its
# ports, a non-IP frame. Filter q's own action is monitor; for every
# attachment of q on B's veth (its own action, drop, allow, monitor) x
# (malformed default, pass, drop), native mode, one more in generic mode,
# and one made by `apply` from a file (action allow, malformed drop), and
# on jumbo frames (MTU 9000) in native mode (multi-buffer) and generic:
# `replay --dev` of the same frames as a capture gives the live verdict of
# each frame, `query --packet --dev` that of the three well-formed ones,
# and both name the attachment's settings; without --dev, the filter's own
# action gives another answer than the device's under `--action allow`
# (what --dev is for). Refused: DEV running no XDP program, another
# tool's program, flowbloom on another filter (named), no such device
# (-n NETNS missing), --dev with --action or --malformed, --dev without
# --packet.
source "$(dirname "$0")/../lib/lib.sh"
t_begin query_dev
t_traps
t_udp_pair 198.51.100.2 203.0.113.10 203.0.113.66 || t_skip_all "$T_NET_WHY"

fbB() { "$FB" -n "$NSB" "$@"; }
FR=$T_TMP/frames.py
cat >"$FR" <<'PY'
import socket, struct, sys
from pkt import csum, ether, ip4, pcap_write, tcp4, udp4

MACA = bytes.fromhex("02fb0000000a")
MACB = bytes.fromhex("02fb0000000b")
B = "198.51.100.2"


def ipv4(proto, src, l4, frag):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 7, frag, 64, proto, 0, ip4(src), ip4(B))
    return ether(0x0800, MACB, MACA) + ip[:10] + struct.pack("!H", csum(ip)) + ip[12:] + l4


def to_b(fr):
    return MACB + MACA + fr[12:]


def udp_big(src, total=None):
    """A 5000-byte UDP datagram; total: its IPv4 total length, if not its own."""
    l4 = struct.pack("!HHHH", 40000, 9, 8 + 5000, 0) + b"x" * 5000
    fr = ipv4(17, src, l4, 0x4000)
    if total is None:
        return fr
    ip = bytearray(fr[14:34])
    ip[2:4] = struct.pack("!H", total)
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", csum(bytes(ip)))
    return fr[:14] + bytes(ip) + fr[34:]


FRAMES = [
    to_b(udp4("203.0.113.66", 40000, B, 9)),   # the source rule's
    to_b(udp4("203.0.113.10", 40000, B, 9)),   # no rule's
    to_b(tcp4("203.0.113.10", 40002, B, 5002)),  # the 5-tuple's
    ipv4(6, "203.0.113.66", b"\x9c\x40", 0x4000),  # malformed, the source rule's
    ipv4(6, "203.0.113.10", b"\x9c\x40", 0x4000),  # malformed, no rule's
    ipv4(17, "203.0.113.10", b"\x9c\x40", 0x2000),  # a first fragment without ports
    ether(0x88b5, MACB, MACA) + b"not IP: a local experimental ethertype",
]
# Jumbo frames: longer than a page, well-formed and malformed (a total
# length shorter than its header).
BIG = [udp_big("203.0.113.10"), udp_big("203.0.113.10", 10), udp_big("203.0.113.66", 10)]
frames = BIG if sys.argv[2] == "big" else FRAMES
if sys.argv[1] == "pcap":
    pcap_write(sys.argv[3], frames)
else:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((sys.argv[3], 0))
    s.send(frames[int(sys.argv[4])])
PY
"$PY" "$FR" pcap small "$T_TMP/small.pcap" || fail "the capture"
"$PY" "$FR" pcap big "$T_TMP/big.pcap" || fail "the capture of jumbo frames"
SET=small # the frames sent and replayed
NFRAMES=7
FLOWS=(udp 203.0.113.66:40000 198.51.100.2:9 udp 203.0.113.10:40000 198.51.100.2:9
	tcp 203.0.113.10:40002 198.51.100.2:5002)

check "create q (its own action: monitor)" "$FB" create q --capacity 1000 --fp-rate 0.0001 --action monitor
check "add a source and a 5-tuple" "$FB" add q src 203.0.113.66 tcp 203.0.113.10:40002 198.51.100.2:5002
check "create r" "$FB" create r --capacity 100 --fp-rate 0.01

seen_since() { [ $(($(t_stat "$FB" "$1" seen) - $2)) -ge 1 ]; }
# live FILTER: each frame sent alone; "drop" or "pass" per frame as the
# program on B's veth gave it, on one line ("lost" if it never saw one,
# the last word then; "extra" if it saw more than it was sent).
live() {
	local i s0 d0 s1 out=""
	for ((i = 0; i < NFRAMES; i++)); do
		s0=$(t_stat "$FB" "$1" seen)
		d0=$(t_stat "$FB" "$1" dropped)
		inA "$PY" "$FR" send "$SET" "$VA" "$i"
		if ! t_wait_until 30 seen_since "$1" "$s0"; then
			out+=" lost" # (the rest not sent: 30 s each)
			break
		fi
		s1=$(t_stat "$FB" "$1" seen)
		if [ $((s1 - s0)) -ne 1 ]; then
			out+=" extra"
		elif [ $(($(t_stat "$FB" "$1" dropped) - d0)) -eq 1 ]; then
			out+=" drop"
		else
			out+=" pass"
		fi
	done
	echo "${out# }"
}
# replayed FILTER [OPTION...]: replay's verdict per frame, on one line.
replayed() {
	fbB -j replay "$1" "$T_TMP/$SET.pcap" --explain "${@:2}" |
		"$PY" -c 'import json, sys
print(" ".join(d["verdict"] for d in map(json.loads, sys.stdin) if "packet" in d))'
}
# queried FILTER [OPTION...]: query --packet's verdict per well-formed frame.
queried() {
	fbB -j query "$1" --packet "${FLOWS[@]}" "${@:2}" |
		t_json '" ".join(r["verdict"] for r in d["results"])'
}
# The settings both name, as "action malformed".
named() {
	fbB -j query "$1" --packet "${FLOWS[@]:0:3}" --dev "$VB" | t_json 'd["dev"]["action"] + " " + d["dev"]["malformed"]'
}

# compare LABEL FILTER WANT_SETTINGS: the live verdicts against replay
# --dev and query --packet --dev, while FILTER is attached to $VB.
compare() {
	local lv
	lv=$(live "$2")
	case $lv in
	*lost* | *extra*) fail "$1: the live verdicts: $lv" ;;
	esac
	check_eq "$1: replay --dev gives the live verdicts" "$(replayed "$2" --dev "$VB")" "$lv"
	check_eq "$1: query --packet --dev gives the live verdicts" "$(queried "$2" --dev "$VB")" \
		"$(echo "$lv" | cut -d' ' -f1-3)"
	check_eq "$1: -j names its action and malformed policy" "$(named "$2")" "$3"
}

for action in "" drop allow monitor; do
	for malformed in "" pass drop; do
		opts=()
		[ -n "$action" ] && opts+=(--action "$action")
		[ -n "$malformed" ] && opts+=(--malformed "$malformed")
		label="attach ${opts[*]:-(the defaults)}"
		act=${action:-monitor}
		if [ -n "$malformed" ]; then
			mal=$malformed
		elif [ "$act" = monitor ]; then
			mal=pass
		else
			mal=drop
		fi
		check "$label" fbB attach q "$VB" "${opts[@]}" || continue
		compare "$label" q "$act $mal"
		if [ "$action" = allow ] && [ -z "$malformed" ]; then
			# What --dev is for: the filter's own action gives
			# another answer than the device's.
			[ "$(queried q)" != "$(queried q --dev "$VB")" ] &&
				pass "without --dev: the filter's own action, not the device's" ||
				fail "without --dev: the same answer as the device's allow-list"
			check "the text names the device and its settings" bash -c \
				'"$1" -n "$2" query q --packet "${@:4}" --dev "$3" | tail -1 |
				grep -q "^1 of 3 drop; 2 matched a rule (as on $3: action allow, malformed packets dropped)$"' \
				_ "$FB" "$NSB" "$VB" "${FLOWS[@]}"
			check "... replay's summary too" bash -c \
				'"$1" -n "$2" replay q "$4" --dev "$3" |
				grep -q " (as on $3: action allow, malformed packets dropped)$"' \
				_ "$FB" "$NSB" "$VB" "$T_TMP/small.pcap"
		fi
		check "detach" fbB detach "$VB"
	done
done

if check "attach q in generic mode, --action allow --malformed pass" \
	fbB attach q "$VB" --mode generic --action allow --malformed pass; then
	compare "generic mode" q "allow pass"
	check "detach" fbB detach "$VB"
fi

# apply's file: its action (the filter's, made by apply) and its
# malformed policy.
mkdir -p "$T_TMP/conf"
cat >"$T_TMP/conf/qa.conf" <<EOF
capacity = 1000
fp-rate = 0.0001
action = allow
attach = $VB native
malformed = drop
EOF
if check "apply a file: action allow, malformed drop" fbB apply "$T_TMP/conf/qa.conf"; then
	check "add to qa" "$FB" add qa src 203.0.113.66 tcp 203.0.113.10:40002 198.51.100.2:5002
	compare "apply" qa "allow drop"
	check "apply --down" fbB apply --down "$T_TMP/conf/qa.conf"
fi

# Jumbo frames (MTU 9000): a malformed frame longer than a page is
# dropped by a multi-buffer program (native mode: its headers may run past
# the first buffer, the only one it parses) even under --malformed pass,
# and passed by generic mode's, which reads it whole; replay --dev reads it
# as the device does (it was replayed multi-buffer whatever the device).
if ip -n "$NSA" link set "$VA" mtu 9000 && ip -n "$NSB" link set "$VB" mtu 9000; then
	SET=big NFRAMES=3
	for mode in native generic; do
		check "attach q --mode $mode --action drop --malformed pass (MTU 9000)" \
			fbB attach q "$VB" --mode "$mode" --action drop --malformed pass || continue
		lv=$(live q)
		check_eq "jumbo frames, $mode: the live verdicts" "$lv" \
			"pass $([ "$mode" = native ] && echo drop || echo pass) drop"
		check_eq "jumbo frames, $mode: replay --dev gives them" "$(replayed q --dev "$VB")" "$lv"
		check "detach" fbB detach "$VB"
	done
	SET=small NFRAMES=7
else
	fail "MTU 9000 on the veth pair"
fi

# --- refusals
P=(udp 203.0.113.66:40000 198.51.100.2:9)
t_refused 1 "no XDP program on DEV" "^flowbloom: $VB runs no XDP program: no filter decides its packets" \
	fbB query q --packet "${P[@]}" --dev "$VB"
t_refused 1 "... replay" "^flowbloom: $VB runs no XDP program" fbB replay q "$T_TMP/small.pcap" --dev "$VB"
check "attach q to $VB" fbB attach q "$VB"
t_refused 1 "no such device: $VB is in $NSB, not here; -n named" "^flowbloom: no device '$VB' (one in a named network namespace: flowbloom -n NETNS ...)$" \
	"$FB" query q --packet "${P[@]}" --dev "$VB"
t_refused 1 "another filter's: named" "^flowbloom: $VB runs filter 'q' (XDP program [0-9]*), not 'r'$" \
	fbB query r --packet "${P[@]}" --dev "$VB"
t_refused 1 "... replay" "^flowbloom: $VB runs filter 'q' (XDP program [0-9]*), not 'r'$" \
	fbB replay r "$T_TMP/small.pcap" --dev "$VB"
t_refused 2 "--dev with --action" "give --dev, or --action and --malformed, not both" \
	fbB query q --packet "${P[@]}" --dev "$VB" --action drop
t_refused 2 "--malformed with --dev (replay)" "give --dev, or --action and --malformed, not both" \
	fbB replay q "$T_TMP/small.pcap" --malformed pass --dev "$VB"
t_refused 2 "--dev without --packet" "\-\-action, \-\-malformed and \-\-dev go with \-\-packet" \
	fbB query q "${P[@]}" --dev "$VB"
t_refused 2 "--dev twice" "\-\-dev given twice" fbB replay q "$T_TMP/small.pcap" --dev "$VB" --dev "$VB"
check "detach" fbB detach "$VB"
if ip -n "$NSB" link set "$VB" xdpgeneric obj "$(dirname "$FB")/xdp_count.bpf.o" sec xdp 2>"$T_TMP/ip.err"; then
	t_refused 1 "another tool's program" "^flowbloom: the XDP program on $VB (id [0-9]*, 'xdp_count') is not flowbloom's$" \
		fbB query q --packet "${P[@]}" --dev "$VB"
	ip -n "$NSB" link set "$VB" xdpgeneric off
else
	fail "ip link ... xdp obj xdp_count.bpf.o: $(head -c 200 "$T_TMP/ip.err")"
fi
t_finish
