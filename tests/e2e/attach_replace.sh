#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom attach NAME DEV --replace`, on a veth pair between two
# namespaces: the flowbloom program running on DEV (another filter's, or
# NAME's with other options) gives way to NAME's in one step. A listed
# source sending all the while, swaps back and forth never let one of its
# datagrams through, where detach then attach does (the gap it closes,
# measured the same way); the new filter's rules decide at once. Refused,
# the device left as it was: another tool's program, another mode, and a
# device running a program without --replace. On a free device it attaches.
# Jumbo frames (MTU 9000): native mode loads the program multi-buffer,
# which drops and counts 8000-byte datagrams whole; replay gives a real TCP
# transfer's jumbo segments the device's verdicts. An attach and a
# destroy of one filter at once: one of the two, never both.
#
# Filters live under a private FLOWBLOOM_ROOT (no `default` filter: no lock
# needed). The trap removes the namespaces and the veth pair.
# Addresses: 198.51.100.0/24.
source "$(dirname "$0")/../lib/lib.sh"
t_begin attach_replace
t_traps

A4=198.51.100.1
BAD4=198.51.100.3
BAD4B=198.51.100.4
B4=198.51.100.2
XCOBJ=$(dirname "$FB")/xdp_count.bpf.o
# Another tool's program: loaded with `ip -n`, whose private mount
# namespace takes the pin of its map (ip link pins it by name in
# /sys/fs/bpf/tc/globals, and xdp-loader makes /sys/fs/bpf/xdp: both
# shared with the machine's `default` filter).

fbB() { "$FB" -n "$NSB" "$@"; }

# prog_on DEV: the id of the XDP program on B's DEV.
prog_on() { ip -n "$NSB" -o link show "$1" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p'; }

# B's receiver: counts the datagrams to B4:9 from each source until
# stopped (SIGTERM), then prints "SRC COUNT" lines.
RECV='import signal, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 9))
n = {}
def done(*_):
    for k, v in sorted(n.items()):
        print(k, v)
    sys.stdout.flush()
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
open(sys.argv[2], "w").close()
while True:
    d, a = s.recvfrom(2048)
    n[a[0]] = n.get(a[0], 0) + 1'

# A's sender: datagrams from SRC to B4:9 until FILE exists; how many.
FLOOD='import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
n = 0
while not os.path.exists(sys.argv[3]):
    for i in range(200):
        s.sendto(b"flowbloom", (sys.argv[2], 9))
    n += 200
print(n)'

# through SWAPS...: while A floods from BAD4 (dropped by both filters),
# run each swap command in turn (the words of one are joined by '+');
# prints "SENT LEAKED OK": the datagrams sent, how many reached B's socket,
# and how many of 5 from A4 (blocked by neither) did.
through() {
	local stop=$T_TMP/stop ready=$T_TMP/ready rp fp sent leaked ok cmd
	rm -f "$stop" "$ready"
	# nsenter runs python in its place: $! is the receiver's own PID.
	nsenter --net="/run/netns/$NSB" -- "$PY" -c "$RECV" "$B4" "$ready" >"$T_TMP/recv" &
	rp=$!
	t_wait_until 30 test -e "$ready"
	# 5 from a source nobody blocks: the receiver counts what arrives.
	inA "$PY" -c "$T_UDP_SEND" "$A4" "$B4" 5
	nsenter --net="/run/netns/$NSA" -- "$PY" -c "$FLOOD" "$BAD4" "$B4" "$stop" >"$T_TMP/sent" &
	fp=$!
	sleep 0.2
	for cmd in "$@"; do
		fbB ${cmd//+/ } >>"$T_TMP/swaps" 2>&1 || echo "swap failed: $cmd" >>"$T_TMP/swaps"
	done
	sleep 0.2
	touch "$stop"
	wait "$fp"
	sleep 0.2
	kill -TERM "$rp"
	wait "$rp"
	sent=$(cat "$T_TMP/sent")
	leaked=$(awk -v s="$BAD4" '$1 == s { print $2 }' "$T_TMP/recv")
	ok=$(awk -v s="$A4" '$1 == s { print $2 }' "$T_TMP/recv")
	echo "${sent:-0} ${leaked:-0} ${ok:-0}"
}

setup() {
	[ -n "$PY" ] || t_skip_all "needs python3"
	[ -x "$FB" ] || {
		fail "flowbloom is not built (run make)"
		t_finish
	}
	t_udp_pair "$B4" "$A4" "$BAD4" "$BAD4B" || t_skip_all "$T_NET_WHY"
	check "create a" "$FB" create a --capacity 1000 --fp-rate 0.001
	check "create b" "$FB" create b --capacity 1000 --fp-rate 0.001
	check "a blocks one source" "$FB" add a src "$BAD4"
	check "b blocks it and another" "$FB" add b src "$BAD4" src "$BAD4B"
}

# the flowbloom program of another filter gives way in one step.
test_swap() {
	local id0 r
	check "attach a" fbB attach a "$VB"
	id0=$(prog_on "$VB")
	t_refused 1 "attach b without --replace: refused" \
		"$VB already runs flowbloom (program $id0, native): detach it first, or attach --replace" \
		fbB attach b "$VB"
	check_eq "... a's program still runs" "$(prog_on "$VB")" "$id0"
	check "attach b --replace" fbB attach b "$VB" --replace
	grep -q "attached b to $VB (native) in place of program $id0" "$T_TMP/out" &&
		pass "... says which program it replaced" || fail "... said: $(cat "$T_TMP/out")"
	check_eq "... b runs there now" "$(fbB -j info b | t_json "d['attached']" | grep -c "$VB")" 1
	check_eq "... a no longer" "$(fbB -j info a | t_json "d['attached']" | grep -c "$VB")" 0
	# apply of a's file, naming the device b runs on: refused, pointing here.
	printf 'capacity = 1000\nfp-rate = 0.001\nattach = %s native\n' "$VB" >"$T_TMP/a.conf"
	t_refused 1 "apply of a's file on b's device: refused, naming attach --replace" \
		"a.conf:3: $VB already has an XDP program .* which does not run filter 'a': detach it first, or move the device to it in one step with attach --replace" \
		fbB apply "$T_TMP/a.conf"
	id0=$(prog_on "$VB")
	r=$(fbB -j attach a "$VB" --replace | t_json "d['replaced_program']")
	check_eq "-j: the program replaced" "$r" "$id0"
	# The new filter decides at once: b's second source.
	check "attach b --replace again" fbB attach b "$VB" --replace
	inA "$PY" -c "$T_UDP_SEND" "$BAD4B" "$B4" 20
	t_wait_until 30 eval '[ "$(t_stat "$FB" b dropped)" -ge 20 ]'
	check_eq "b's own rule drops at once" "$(t_stat "$FB" b dropped)" 20
}

# No datagram of a source both filters block passes while they swap; the
# same measurement with detach then attach shows the gap --replace closes.
test_gap() {
	local swaps=() i sent leaked ok
	for i in 1 2 3 4 5 6 7 8; do
		swaps+=("attach+a+$VB+--replace" "attach+b+$VB+--replace")
	done
	read -r sent leaked ok < <(through "${swaps[@]}")
	check_eq "the receiver counts: A's 5 datagrams arrived" "$ok" 5
	check_eq "16 swaps under a flood: every swap done" "$(grep -c 'swap failed' "$T_TMP/swaps")" 0
	[ "$sent" -gt 1000 ] && pass "the flood ran ($sent datagrams)" || fail "the flood sent only $sent"
	check_eq "16 swaps under a flood of $sent: none through" "$leaked" 0
	swaps=()
	for i in 1 2 3 4; do
		swaps+=("detach+$VB" "attach+a+$VB")
	done
	read -r sent leaked ok < <(through "${swaps[@]}")
	check_eq "the receiver counts: A's 5 datagrams arrived" "$ok" 5
	[ "$leaked" -gt 0 ] && pass "detach then attach, the same flood: $leaked through (the gap)" ||
		fail "detach then attach let nothing through: the measurement cannot see a gap"
}

# The same filter with other options: the action changes in one step.
test_options() {
	check "attach a --replace --action monitor" fbB attach a "$VB" --replace --action monitor
	local d0
	d0=$(t_stat "$FB" a dropped)
	inA "$PY" -c "$T_UDP_SEND" "$BAD4" "$B4" 10
	t_wait_until 30 eval '[ "$(t_stat "$FB" a matched)" -ge 10 ]'
	check_eq "... monitor: nothing dropped" "$(($(t_stat "$FB" a dropped) - d0))" 0
	check "attach a --replace (its own action again)" fbB attach a "$VB" --replace
	test_options_monitor
}

# Monitoring options the program replaced had: they bind no swap. Fed by
# that program only, the maps are made anew for the new options (it used
# to be refused as "attached elsewhere", the program it replaces taken for
# another attachment); fed by an attachment elsewhere too, other options
# are refused and the device keeps its program.
test_options_monitor() {
	local id0 n0
	check "attach a --replace --monitor" fbB attach a "$VB" --replace --monitor
	inA "$PY" -c "$T_UDP_SEND" "$A4" "$B4" 10
	t_wait_until 30 eval '[ "$(fbB -j top a | t_json "d[\"total_packets\"]")" -ge 10 ]'
	n0=$(fbB -j top a | t_json 'd["total_packets"]')
	check "... --replace --monitor --action monitor: the same monitoring" \
		fbB attach a "$VB" --replace --monitor --action monitor
	check_eq "... its sketch kept, not made anew (top's total still counts the 10)" \
		"$(fbB -j top a | t_json "d['total_packets'] >= $n0 >= 10")" True
	check "... --replace --new-flows: the sketch's program gives way" \
		fbB attach a "$VB" --replace --new-flows
	grep -q "^monitoring: new flows" "$T_TMP/out" &&
		pass "... monitoring new flows" || fail "... said: $(cat "$T_TMP/out")"
	check "... --replace --accounting" fbB attach a "$VB" --replace --accounting
	check "a on A's device too, the same options" \
		"$FB" -n "$NSA" attach a "$VA" --mode generic --accounting
	id0=$(prog_on "$VB")
	t_refused 1 "... then --replace --monitor on B's: refused (A's feeds the maps)" \
		"filter 'a' is attached elsewhere with other monitoring" \
		fbB attach a "$VB" --replace --monitor
	check_eq "... B's program unchanged" "$(prog_on "$VB")" "$id0"
	check "detach A's" "$FB" -n "$NSA" detach "$VA"
	check "attach a --replace (no monitoring)" fbB attach a "$VB" --replace
}

# Refused, the device as it was.
test_refused() {
	local id0
	id0=$(prog_on "$VB")
	t_refused 1 "--replace --mode generic of a native attachment: refused" \
		"$VB runs flowbloom in native mode: --replace keeps its mode" \
		fbB attach b "$VB" --replace --mode generic
	check_eq "... the program unchanged" "$(prog_on "$VB")" "$id0"
	check "detach" fbB detach "$VB"
	check "--replace on a free device: attaches" fbB attach b "$VB" --replace --mode generic
	check_eq "... in generic mode" "$(ip -n "$NSB" -o link show "$VB" | grep -c ' xdpgeneric')" 1
	check "detach" fbB detach "$VB"
	if [ -f "$XCOBJ" ]; then
		check "another tool's program" ip -n "$NSB" link set dev "$VB" xdp obj "$XCOBJ" sec xdp
		id0=$(prog_on "$VB")
		t_refused 1 "--replace of another tool's program: refused" \
			"the XDP program on $VB (id $id0, '.*') is not flowbloom's" \
			fbB attach a "$VB" --replace
		check_eq "... it still runs" "$(prog_on "$VB")" "$id0"
		check "... removed" ip -n "$NSB" link set dev "$VB" xdp off
	else
		fail "$XCOBJ is not built (run make)"
	fi
}

# Jumbo frames: a veth pair of MTU 9000, which native XDP takes from a
# multi-buffer program only (a frame above one page). attach loads that
# one and says so; datagrams of 8000 bytes from the listed source are all
# dropped and counted whole (8042 bytes a frame), others pass whole.
BIG='import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
for i in range(int(sys.argv[3])):
    s.sendto(b"j" * 8000, (sys.argv[2], 9))'
# An IPv6 datagram of a blocked 5-tuple behind two destination-options
# headers of 2048 bytes (7 unknown options each, which Linux skips: the
# stack takes it): its UDP header lies past the first buffer (about 3,500
# bytes), where the parser cannot read it. Under --malformed pass it used
# to pass (malformed) and reach B's socket; one buffer, in generic mode,
# drops it. Now dropped under drop and allow whatever --malformed says.
# The same frame in a capture: `replay` gives the verdict the device gave
# (it used to pass it, its program of one buffer reading the first page
# only). CHAIN FILE.pcap N writes N of them there instead.
CHAIN='import socket, struct, sys
from pkt import csum, pcap_write
src, dst = (socket.inet_pton(socket.AF_INET6, a) for a in ("2001:db8:1::1", "2001:db8:1::2"))
udp = struct.pack("!HHHH", 1111, 53, 12, 0) + b"jumb"
udp = udp[:6] + struct.pack("!H", csum(src + dst + struct.pack("!I", 12) + b"\0\0\0\x11" + udp)) + udp[8:]
opts = (bytes([0x1e, 255]) + bytes(255)) * 7 + bytes([0x1e, 245]) + bytes(245)
chain = bytes([60, 255]) + opts + bytes([17, 255]) + opts
ip6 = struct.pack("!IHBB", 6 << 28, len(chain + udp), 60, 64) + src + dst
frame = bytes.fromhex("02fb0000000b02fb0000000a86dd") + ip6 + chain + udp
if sys.argv[1].endswith(".pcap"):
    pcap_write(sys.argv[1], [frame] * int(sys.argv[2]))
    sys.exit(0)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for i in range(int(sys.argv[2])):
    s.send(frame)'
test_mtu_chain() {
	local d0
	check "a blocks an IPv6 5-tuple" "$FB" add a udp "[2001:db8:1::1]:1111" "[2001:db8:1::2]:53"
	check "attach --malformed pass (multi-buffer)" fbB attach a "$VB" --replace --malformed pass
	# status says what the attachment decides with: its action, its
	# malformed policy, multi-buffer (it said none of them).
	check_eq "status: the filter's action, --malformed pass, multi-buffer" \
		"$("$FB" status 2>/dev/null | awk -v d="$VB" '$2 == d { $1 = $2 = $3 = $4 = ""; print }' | sed 's/^ *//')" \
		"a (drop; malformed pass; multi-buffer)"
	check_eq "status -j: the same" \
		"$("$FB" -j status | t_json "[(x['action'], x['malformed'], x['multi_buffer']) for x in d['attachments'] if x['device'] == '$VB']")" \
		"[('drop', 'pass', True)]"
	d0=$(t_stat "$FB" a dropped)
	inA "$PY" -c "$CHAIN" "$VA" 5
	t_wait_until 30 eval '[ $(($(t_stat "$FB" a dropped) - d0)) -ge 5 ]'
	check_eq "its datagrams with 4,096 bytes of extension headers: 5 dropped" \
		"$(($(t_stat "$FB" a dropped) - d0))" 5
	"$PY" -c "$CHAIN" "$T_TMP/chain.pcap" 5
	check_eq "... replay --malformed pass of them: 5 dropped, as on the device" \
		"$("$FB" -j replay a "$T_TMP/chain.pcap" --malformed pass | t_json "d['drop']")" 5
	check "attach again, default --malformed" fbB attach a "$VB" --replace
}

# Jumbo TCP segments of a real connection (A's TCP stack, segmentation
# offloads off: frames of up to 9014 bytes), written by tcpdump on A's
# side: `replay` gives them the verdicts the device gave. Passed while no
# rule matches (the transfer completes, replay passes every frame); with
# the connection's 5-tuple blocked, the same frames sent again onto the
# link are all dropped on the device, and replay drops them all.
TCPSINK='import socket, sys
s = socket.socket()
s.bind((sys.argv[1], 5001))
s.listen(1)
open(sys.argv[2], "w").close()
c, _ = s.accept()
n = 0
while True:
    d = c.recv(65536)
    if not d:
        break
    n += len(d)
print(n)'
TCPSEND='import socket, sys
s = socket.socket()
s.bind((sys.argv[1], 40123))
s.connect((sys.argv[2], 5001))
s.sendall(b"j" * 300000)
s.close()'
# INJECT FILE.pcap DEV: every frame of the capture sent onto DEV.
INJECT='import socket, struct, sys
d = open(sys.argv[1], "rb").read()
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[2], 0))
at = 24
while at < len(d):
    n = struct.unpack("<IIII", d[at:at + 16])[2]
    s.send(d[at + 16:at + 16 + n])
    at += 16 + n'
test_mtu_tcp() {
	local tcpd sink n big d0 got
	inA ethtool -K "$VA" tso off gso off >/dev/null 2>&1
	# nsenter runs tcpdump in its place: $! is tcpdump's own PID.
	nsenter --net="/run/netns/$NSA" -- tcpdump -Z root --immediate-mode -i "$VA" -U \
		-w "$T_TMP/tcp.pcap" "tcp and src host $A4" 2>"$T_TMP/tcpdump.err" &
	tcpd=$!
	t_wait_until 30 grep -q "listening on" "$T_TMP/tcpdump.err"
	rm -f "$T_TMP/ready"
	inB "$PY" -c "$TCPSINK" "$B4" "$T_TMP/ready" >"$T_TMP/sink" &
	sink=$!
	t_wait_until 30 test -e "$T_TMP/ready"
	inA "$PY" -c "$TCPSEND" "$A4" "$B4"
	wait "$sink"
	check_eq "a TCP transfer of 300000 bytes over MTU 9000, multi-buffer: all arrived" \
		"$(cat "$T_TMP/sink")" 300000
	sleep 0.3
	kill -INT "$tcpd"
	wait "$tcpd" 2>/dev/null
	n=$(tcpdump -r "$T_TMP/tcp.pcap" 2>/dev/null | wc -l)
	big=$(tcpdump -r "$T_TMP/tcp.pcap" greater 3521 2>/dev/null | wc -l)
	[ "$big" -gt 20 ] && pass "... $n TCP frames captured, $big of them past the first buffer" ||
		fail "... $n TCP frames captured, $big past 3520 bytes"
	check_eq "... replay: every frame passed, as on the device" \
		"$("$FB" -j replay a "$T_TMP/tcp.pcap" | t_json "(d['pass'], d['drop'], d['malformed'])")" \
		"($n, 0, 0)"
	check "block the connection's 5-tuple" "$FB" add a tcp "$A4:40123" "$B4:5001"
	d0=$(t_stat "$FB" a dropped)
	inA "$PY" -c "$INJECT" "$T_TMP/tcp.pcap" "$VA"
	t_wait_until 30 eval '[ $(($(t_stat "$FB" a dropped) - d0)) -ge $n ]'
	got=$(($(t_stat "$FB" a dropped) - d0))
	check_eq "... its captured frames sent again: all $n dropped on the device" "$got" "$n"
	check_eq "... replay: all $n dropped, matched by the 5-tuple" \
		"$("$FB" -j replay a "$T_TMP/tcp.pcap" | t_json "(d['drop'], d['matched'], d['malformed'])")" \
		"($n, $n, 0)"
}

test_mtu() {
	local d0 b0 s0 out
	ip -n "$NSA" link set "$VA" mtu 9000
	ip -n "$NSB" link set "$VB" mtu 9000
	check "MTU 9000, native: attached" fbB attach a "$VB"
	grep -q "attached a to $VB (native, multi-buffer)" "$T_TMP/out" &&
		pass "... multi-buffer, and says so" || fail "... said: $(cat "$T_TMP/out")"
	check_eq "... -j says so too" \
		"$(fbB -j attach a "$VB" --replace | t_json "d.get('multi_buffer')")" True
	d0=$(t_stat "$FB" a dropped)
	b0=$("$FB" -j stats a | t_json "d['dropped']['bytes']")
	inA "$PY" -c "$BIG" "$BAD4" "$B4" 20
	t_wait_until 30 eval '[ $(($(t_stat "$FB" a dropped) - d0)) -ge 20 ]'
	check_eq "8000-byte datagrams of the listed source: 20 dropped" \
		"$(($(t_stat "$FB" a dropped) - d0))" 20
	check_eq "... counted whole: 20 x 8042 bytes" \
		"$(($("$FB" -j stats a | t_json "d['dropped']['bytes']") - b0))" $((20 * 8042))
	# capture reads across the buffers: each frame 8042 bytes long, the
	# default snap length (4096) of it kept, its bytes the datagram's.
	if command -v tshark >/dev/null; then
		fbB capture a -w "$T_TMP/big.pcapng" --count 3 --duration 20 >"$T_TMP/cap.out" 2>&1 &
		local cp=$!
		t_wait_until 30 t_looping "$cp"
		inA "$PY" -c "$BIG" "$BAD4" "$B4" 3
		wait "$cp"
		check_eq "capture of 3 jumbo frames: length, kept, a payload byte" \
			"$(tshark -r "$T_TMP/big.pcapng" -T fields -e frame.len -e frame.cap_len -e data.data 2>/dev/null |
				awk '{ print $1, $2, substr($3, 1, 2) }' | sort -u)" "8042 4096 6a"
	else
		skip "tshark not installed (make deps installs it): capture of jumbo frames"
	fi
	s0=$(t_stat "$FB" a passed)
	inA "$PY" -c "$BIG" "$A4" "$B4" 10
	t_wait_until 30 eval '[ $(($(t_stat "$FB" a passed) - s0)) -ge 10 ]'
	check_eq "... of another source: 10 passed" "$(($(t_stat "$FB" a passed) - s0))" 10
	test_mtu_chain
	test_mtu_tcp
	check "detach" fbB detach "$VB"
	check "MTU 9000, generic: attached" fbB attach a "$VB" --mode generic
	out=$(cat "$T_TMP/out")
	check_eq "... as one buffer" "$out" "attached a to $VB (generic)"
	check "attach --replace --action monitor" fbB attach a "$VB" --replace --action monitor
	check_eq "status: action monitor (not the filter's drop), malformed packets pass" \
		"$("$FB" status 2>/dev/null | awk -v d="$VB" '$2 == d { print $5, $6, $7, $8 }')" \
		"a (monitor; malformed pass)"
	check "detach" fbB detach "$VB"
	ip -n "$NSA" link set "$VA" mtu 1500
	ip -n "$NSB" link set "$VB" mtu 1500
	check "MTU 1500, native: attached" fbB attach a "$VB"
	check_eq "... as one buffer" "$(cat "$T_TMP/out")" "attached a to $VB (native)"
	check "detach" fbB detach "$VB"
}

# attach and destroy of one filter at once: one of the two is done, never
# both. destroy used to take the filter away while attach loaded its
# program, which was then attached all the same, running on the destroyed
# filter's maps (status: "a filter not under ..."): rules nobody could
# change any more. strace holds attach 1 s before it loads its program (at
# libbpf's one uname(2)), the filter open; destroy runs meanwhile.
has_maps() { ls -l "/proc/$(pgrep -P "$1")/fd" 2>/dev/null | grep -q bpf-map; }
test_destroy() {
	local sp arc drc
	command -v strace >/dev/null || {
		skip "attach and destroy at once: strace is missing"
		return
	}
	"$FB" create c --capacity 1000 --fp-rate 0.001 >/dev/null
	strace -f -qq -o /dev/null -e trace=uname -e inject=uname:delay_enter=1000000 \
		"$FB" -n "$NSB" attach c "$VB" --mode generic >"$T_TMP/at.out" 2>&1 &
	sp=$!
	T_WAIT_STEP=0.01 t_wait_until 10 has_maps "$sp" || fail "attach did not open c"
	"$FB" destroy c >"$T_TMP/ds.out" 2>&1
	drc=$?
	wait "$sp"
	arc=$?
	check_eq "attach and destroy at once: destroy done, attach refused, not both done ($(prog_on "$VB"))" \
		"$drc $arc" "0 1"
	grep -q "filter 'c' was destroyed while this command waited for its lock" "$T_TMP/at.out" &&
		pass "... attach says the filter was destroyed" || fail "... attach said: $(cat "$T_TMP/at.out")"
	check_eq "... no program on $VB" "$(prog_on "$VB")" ""
	fbB detach "$VB" >/dev/null 2>&1
	"$FB" destroy c >/dev/null 2>&1
}

setup
test_destroy
test_mtu
test_swap
test_gap
test_options
test_refused
t_finish
