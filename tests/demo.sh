#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What `make demo` runs: two network namespaces joined by a veth pair, a
# flowbloom filter on the receiver's end, traffic before and after blocking
# the sender's address, and the filter's counters. Needs root. Everything it
# makes (namespaces, veth, the filter demo<pid> in /sys/fs/bpf/flowbloom) is
# removed on exit, also on failure or Ctrl-C. Exits 0 when the traffic did
# what the demo says it does.
cd "$(dirname "$0")/.." || exit 1

FB=$PWD/build/flowbloom
# The namespaces and veth (t_net_pair: NSA sends, NSB receives, VA and VB).
source tests/lib/lib.sh
T_NAME=demo
NAME=demo$$ # a filter of its own, in the system root
A4=198.51.100.1
B4=198.51.100.2
PORT=5300
TMP=
SRV_PID=
CLEANED=
ATTACHED=
CREATED=
BAD=0
unset FLOWBLOOM_ROOT # the system's filters, as a user would have them

if [ -t 1 ]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD='' PLAIN=''; fi
say() { printf '\n%s==> %s%s\n' "$BOLD" "$*" "$PLAIN"; }
# Show a flowbloom command, then run it.
fb() {
	echo "    \$ flowbloom $*"
	"$FB" "$@" 2>&1 | sed 's/^/    /'
	return "${PIPESTATUS[0]}"
}

cleanup() {
	[ -n "$CLEANED" ] && return 0
	CLEANED=1
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
	[ -n "$ATTACHED" ] && "$FB" -n "$NSB" detach "$VB" >/dev/null 2>&1
	t_net_down # what still runs in the namespaces, the veth, the namespaces
	[ -n "$CREATED" ] && "$FB" destroy "$NAME" >/dev/null 2>&1
	[ -n "$TMP" ] && rm -rf "$TMP"
}
trap cleanup EXIT
trap 'echo; echo "interrupted: cleaning up"; exit 130' INT TERM

die() {
	echo "demo: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "needs root: it creates network namespaces and attaches XDP programs (sudo make demo)"
[ -x "$FB" ] || die "build/flowbloom is missing: run make"
stat -f -c %T /sys/fs/bpf 2>/dev/null | grep -q bpf || die "bpffs is not mounted: mount -t bpf bpf /sys/fs/bpf"
command -v nsenter >/dev/null || die "needs nsenter (util-linux)"
[ -n "$PY" ] || die "needs python3"
TMP=$(mktemp -d /tmp/fbdemo.XXXXXX)

# A UDP echo server, and senders that print how many answers came back.
cat >"$TMP/net.py" <<'EOF'
import os, select, socket, struct, sys, time
def answers(s, n, want):
    seen, end = set(), time.monotonic() + 1.0
    while len(seen) < n and select.select([s], [], [], max(0, end - time.monotonic()))[0]:
        q = want(s.recv(2048))
        if q is not None:
            seen.add(q)
    return len(seen)
cmd, n = sys.argv[1], int(sys.argv[2])
if cmd == 'serve':
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('0.0.0.0', n))
    open(sys.argv[3], 'w').close()
    while True:
        d, a = s.recvfrom(2048)
        s.sendto(d, a)
elif cmd == 'udp':  # udp N DST PORT
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(n):
        s.sendto(b'%d' % i, (sys.argv[3], int(sys.argv[4])))
    print(answers(s, n, lambda d: d))
elif cmd == 'ping':  # ping N DST: ICMP echo over a raw socket
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ident = os.getpid() & 0xffff
    for i in range(n):
        m = struct.pack('!BBHHH', 8, 0, 0, ident, i) + b'flowbloom!'
        c = sum(struct.unpack('!%dH' % (len(m) // 2), m))
        c = (c >> 16) + (c & 0xffff)
        m = m[:2] + struct.pack('!H', ~(c + (c >> 16)) & 0xffff) + m[4:]
        s.sendto(m, (sys.argv[3], 0))
    def want(d):
        t, _, _, i, q = struct.unpack('!BBHHH', d[(d[0] & 15) * 4:][:8])
        return q if t == 0 and i == ident else None
    print(answers(s, n, want))
EOF

# `ip netns exec` would hide bpffs (it remounts /sys): flowbloom enters a
# namespace itself with -n, other programs go through nsenter --net (inA).

# traffic WANT_UDP WANT_PING: 5 UDP datagrams and 3 pings from A to B.
traffic() {
	local udp ping
	udp=$(inA timeout 5 "$PY" "$TMP/net.py" udp 5 "$B4" "$PORT")
	ping=$(inA timeout 5 "$PY" "$TMP/net.py" ping 3 "$B4")
	echo "    UDP to $B4:$PORT: $udp of 5 answered; ping $B4: $ping of 3 answered"
	if [ "$udp" != "$1" ] || [ "$ping" != "$2" ]; then
		echo "    unexpected: wanted $1 and $2 answers"
		BAD=1
	fi
}

# IPv4 only, so that the counters show just the demo's packets (no IPv6
# router solicitations or multicast listener reports).
t_net_pair --no-ipv6 || die "$T_NET_WHY"
say "1. Two network namespaces joined by a veth pair: $NSA ($A4, sends) and $NSB ($B4, receives)"
t_addr "$NSA" "$VA" "$A4/24"
t_addr "$NSB" "$VB" "$B4/24"
nsenter --net="/run/netns/$NSB" -- "$PY" "$TMP/net.py" serve "$PORT" "$TMP/ready" \
	</dev/null >/dev/null 2>&1 &
SRV_PID=$!
for _ in $(seq 50); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
[ -e "$TMP/ready" ] || die "the UDP echo server in $NSB did not start"
echo "    a UDP echo server listens on $B4:$PORT in $NSB"

say "2. Create a Bloom filter sized for 1000 flows at a 0.1% false-positive rate"
fb create "$NAME" --capacity 1000 --fp-rate 0.001 || die "create failed"
CREATED=1

say "3. Attach it to $NSB's end of the veth, native XDP; a packet the filter knows is dropped"
fb -n "$NSB" attach "$NAME" "$VB" --mode native --action drop || die "attach failed"
ATTACHED=1

say "4. Traffic from $NSA: the filter is empty, everything arrives"
traffic 5 3
fb stats "$NAME"
echo "    seen: 5 datagrams, 3 echo requests and $NSA's ARP request (not IP: non_ip, always passed)"

say "5. Block the sender: every packet from $A4 now matches"
fb add "$NAME" src "$A4" || die "add failed"

say "6. The same traffic again: nothing gets through"
traffic 0 0
fb stats "$NAME"
echo "    matched, hit_src and dropped: the 5 datagrams and 3 echo requests from $A4"

say "7. The filter: its geometry, what it holds, and where it is attached"
fb -n "$NSB" info "$NAME"

say "8. Detach, destroy the filter, remove the namespaces"
fb -n "$NSB" detach "$VB" && ATTACHED=
fb destroy "$NAME" && CREATED=
cleanup
if [ "$BAD" -ne 0 ]; then
	echo "demo: the traffic did not do what it should (see 'unexpected' above)" >&2
	exit 1
fi
echo
echo "Done: nothing is left behind."
