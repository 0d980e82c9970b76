#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# End to end: real TCP, UDP and ICMP traffic, over IPv4 and IPv6, from
# namespace A to namespace B across a veth pair, with flowbloom's XDP program
# on B's end. Checks the drop, allow and monitor actions, detach, the
# `ip link ... xdp obj` path with the `default` filter, and the attach/detach
# errors. Verdicts come from whether the traffic gets an answer and from
# flowbloom's own counters (`stats -j`), never from a capture.
#
# Everything it makes (two namespaces, one veth pair, filters under a private
# FLOWBLOOM_ROOT, the `default` pins in /sys/fs/bpf/xdp/globals) is removed by
# the EXIT/INT/TERM trap, whatever the checks say. Addresses are from the
# documentation ranges only (198.51.100.0/24, 2001:db8::/32). The ip-link
# part holds /tmp/fb-globals.lock (t_lock_globals).
source "$(dirname "$0")/../lib/lib.sh"
t_begin e2e

FBOBJ=$(dirname "$FB")/flowbloom.bpf.o
# NSA (sender) and NSB (receiver, flowbloom on its veth end VB): t_net_pair.
A4=198.51.100.1
B4=198.51.100.2
A6=2001:db8:100::1
B6=2001:db8:100::2
TCP_PORT=5001
UDP_PORT=5002
UDP_PORT2=5003
SPORT=40000 # the source port of the one IPv4 UDP flow test 1 blocks
# Seconds a sender waits for its answers: it stops once all came, so
# generous (a loaded machine answers late); NONE_WAIT where none should
# come (blocked flows wait it out).
WAIT=10
NONE_WAIT=1
GLOBALS=/sys/fs/bpf/xdp/globals
SRV_PID=
CLEANED=
IPLINK_STARTED=
BPFFS_NEW=() # bpffs dirs/links absent before the ip-link test (removed after)
declare -A OUR_PINS # map ids of the globals pins this run created

# `ip netns exec` (and `ip -n`) unshares the mount namespace and mounts a
# fresh sysfs on /sys, which hides the bpffs at /sys/fs/bpf: flowbloom would
# say "bpffs is not mounted" and an `ip link ... obj` would pin into a
# throwaway bpffs of its own and never find the default filter. So device
# verbs run as `flowbloom -n NS`, which enters the network namespace only,
# and everything else (ip link ... obj, the traffic tool) under inA/inB
# (lib.sh: nsenter --net), which does the same.

# pin_id PATH: the id of the map pinned at PATH, or nothing.
pin_id() {
	bpftool -j map show pinned "$1" 2>/dev/null |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["id"])' 2>/dev/null
}

# Remove what the ip-link test made in bpffs: `flowbloom create default`
# makes xdp/ and xdp/globals/, iproute2's loader tc/, tc/globals/ and the ip
# symlink. Only those that did not exist before, and only if empty.
bpffs_restore() {
	local p m
	# The globals pins, if `destroy default` left them: only if they are
	# still the maps this run's `create default` pinned.
	for m in fb_filter fb_stats; do
		[ -n "${OUR_PINS[$m]:-}" ] && [ "$(pin_id "$GLOBALS/$m")" == "${OUR_PINS[$m]}" ] &&
			rm -f "$GLOBALS/$m"
	done
	OUR_PINS=()
	for p in "${BPFFS_NEW[@]}"; do
		if [ -L "$p" ]; then
			rm -f "$p"
		elif [ -d "$p" ]; then
			rmdir "$p" 2>/dev/null
		fi
	done
	BPFFS_NEW=()
}

cleanup() {
	[ -n "$CLEANED" ] && return 0
	CLEANED=1
	if [ -n "$SRV_PID" ]; then
		kill "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
	fi
	# Anything else still running in the namespaces (a sender cut short by
	# INT), the veth pair with any XDP program, the namespaces.
	t_net_down
	if [ -n "$IPLINK_STARTED" ]; then
		# Removes the globals pins only if they are this run's default.
		"$FB" destroy default >/dev/null 2>&1
		bpffs_restore
	fi
	t_cleanup_filters
}
t_traps

# check_ge LABEL GOT MIN
check_ge() {
	if [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge "$3" ]; then pass "$1"; else fail "$1: got '$2', want >= $3"; fi
}

# check_fails_one LABEL CMD...: fails, with exactly one line on stderr.
check_fails_one() {
	local label=$1
	shift
	if "$@" >"$T_TMP/out" 2>"$T_TMP/err"; then
		fail "$label: succeeded, should have failed"
	elif [ "$(wc -l <"$T_TMP/err")" -ne 1 ]; then
		fail "$label: want one line on stderr, got: $(head -c 300 "$T_TMP/err")"
	else
		pass "$label"
	fi
}

# counter FILTER NAME: packets of one counter, -1 if unreadable.
counter() {
	"$FB" -j stats "$1" 2>/dev/null |
		"$PY" -c 'import json,sys
try: print(json.load(sys.stdin)[sys.argv[1]]["packets"])
except Exception: print(-1)' "$2"
}

# balanced FILTER: every packet seen got one verdict, in one snapshot. A
# packet counted as seen whose verdict is not yet counted (a program run in
# flight while we read) can make one read uneven: try a few times.
balanced() {
	local _
	for _ in 1 2 3 4 5; do
		"$FB" -j stats "$1" | "$PY" -c 'import json,sys
s = json.load(sys.stdin)
sys.exit(s["seen"]["packets"] != s["dropped"]["packets"] + s["passed"]["packets"])' && return 0
		sleep 0.2
	done
	"$FB" stats "$1"
	return 1
}

# attached_to FILTER DEV: `info` (run where DEV lives) lists DEV.
attached_to() {
	"$FB" -n "$NSB" -j info "$1" |
		"$PY" -c 'import json,sys; sys.exit(not any(a["dev"] == sys.argv[1] for a in json.load(sys.stdin)["attached"]))' "$2"
}

# not_attached FILTER: `info` lists no device at all.
not_attached() {
	"$FB" -n "$NSB" -j info "$1" |
		"$PY" -c 'import json,sys; sys.exit(len(json.load(sys.stdin)["attached"]) != 0)'
}

has_xdp() { ip -n "$NSB" -o link show dev "$VB" | grep -q ' xdp'; }
no_xdp() { ! has_xdp; }

# Traffic from A to B; each prints how many of its packets got an answer.
#   udp SRC SPORT DST DPORT N   tcp SRC DST DPORT N   icmp SRC DST N
send() {
	local kind=$1
	shift
	inA timeout 30 "$PY" "$T_TMP/fbnet.py" "$kind" "$@" "$WAIT"
}

write_fbnet() {
	cat >"$T_TMP/fbnet.py" <<'EOF'
# Tiny traffic tool: `serve` answers TCP and UDP on the given ports (dual
# stack); udp/tcp/icmp send N packets and print how many were answered.
import os, select, socket, struct, sys, time
from pkt import csum

def fam(addr):
    return socket.AF_INET6 if ':' in addr else socket.AF_INET

def serve(ready, ports):
    socks, conns = [], []
    for p in ports:
        for typ in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
            s = socket.socket(socket.AF_INET6, typ)
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(('::', p))
            if typ == socket.SOCK_STREAM:
                s.listen(16)
            socks.append(s)
    open(ready, 'w').close()
    while True:
        for s in select.select(socks + conns, [], [])[0]:
            if s in conns:
                try:
                    d = s.recv(4096)
                except OSError:
                    d = b''
                if d:
                    s.sendall(d)
                else:
                    conns.remove(s)
                    s.close()
            elif s.type == socket.SOCK_STREAM:
                conns.append(s.accept()[0])
            else:
                d, a = s.recvfrom(4096)
                s.sendto(d, a)

def collect(s, n, wait, want):
    seen, end = set(), time.monotonic() + wait
    while len(seen) < n:
        left = end - time.monotonic()
        if left <= 0 or not select.select([s], [], [], left)[0]:
            break
        q = want(s.recv(4096))
        if q is not None:
            seen.add(q)
    return len(seen)

def udp(src, sport, dst, dport, n, wait):
    s = socket.socket(fam(dst), socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, sport))
    for i in range(n):
        s.sendto(b'flowbloom %d' % i, (dst, dport))
    return collect(s, n, wait, lambda d: d)

def tcp(src, dst, dport, n, wait):
    got = 0
    for i in range(n):
        s = socket.socket(fam(dst), socket.SOCK_STREAM)
        s.settimeout(wait)
        try:
            s.bind((src, 0))
            s.connect((dst, dport))
            s.sendall(b'flowbloom')
            got += s.recv(64) == b'flowbloom'
        except OSError:
            pass
        finally:
            s.close()
    return got

def icmp(src, dst, n, wait):
    v6 = ':' in dst
    if v6:
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        req, rep = 128, 129
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        req, rep = 8, 0
    s.bind((src, 0))
    ident = os.getpid() & 0xffff
    for i in range(n):
        m = struct.pack('!BBHHH', req, 0, 0, ident, i) + b'flowbloom!'
        if not v6:  # the kernel computes ICMPv6 checksums itself
            m = m[:2] + struct.pack('!H', csum(m)) + m[4:]
        s.sendto(m, (dst, 0))

    def want(d):
        if not v6:
            d = d[(d[0] & 15) * 4:]  # raw IPv4 sockets see the IP header
        if len(d) < 8:
            return None
        t, _, _, i, q = struct.unpack('!BBHHH', d[:8])
        return q if t == rep and i == ident else None
    return collect(s, n, wait, want)

a = sys.argv[1:]
if a[0] == 'serve':
    serve(a[1], [int(p) for p in a[2:]])
elif a[0] == 'udp':
    print(udp(a[1], int(a[2]), a[3], int(a[4]), int(a[5]), float(a[6])))
elif a[0] == 'tcp':
    print(tcp(a[1], a[2], int(a[3]), int(a[4]), float(a[5])))
elif a[0] == 'icmp':
    print(icmp(a[1], a[2], int(a[3]), float(a[4])))
EOF
}

# ---------------------------------------------------------------- setup

# Skips are not passes: each says what is missing, then the closing line.
setup() {
	[ "$(id -u)" -eq 0 ] || t_skip_all "needs root"
	[ -n "$PY" ] || t_skip_all "needs python3"
	stat -f -c %T /sys/fs/bpf 2>/dev/null | grep -q bpf || t_skip_all "bpffs is not mounted at /sys/fs/bpf"
	[ -x "$FB" ] && [ -f "$FBOBJ" ] || { fail "flowbloom is not built (run make)"; t_finish; }
	t_net_pair || t_skip_all "$T_NET_WHY"
	t_addr "$NSA" "$VA" "$A4/24" "$A6/64"
	t_addr "$NSB" "$VB" "$B4/24" "$B6/64"
	# IPv6 neighbours are static: neighbour discovery is ICMPv6, which an
	# allow-list drops unless listed and a `src A6` rule drops too; that
	# would test ND, not flowbloom. IPv4 keeps ARP, which (not being IP)
	# always passes, and test 2 checks that it does.
	t_neigh "$NSA" "$VA" "$MACB" "$B6"
	t_neigh "$NSB" "$VB" "$MACA" "$A6"

	write_fbnet
	# Not through inB: a function in the background is a subshell, and $!
	# would be its pid. nsenter execs python, so $! is the listener's own.
	# Its output goes to a file: an open stdout would keep a pipe reading
	# this script's output waiting.
	nsenter --net="/run/netns/$NSB" -- "$PY" "$T_TMP/fbnet.py" serve "$T_TMP/ready" \
		"$TCP_PORT" "$UDP_PORT" "$UDP_PORT2" </dev/null >"$T_TMP/serve.log" 2>&1 &
	SRV_PID=$!
	t_wait_until 30 test -e "$T_TMP/ready" || { fail "the listener in $NSB did not start"; t_finish; }
}

# The six kinds of traffic each get all their answers.
all_arrive() {
	local why=$1
	check_eq "$why: UDP/IPv4 arrives" "$(send udp $A4 $SPORT $B4 $UDP_PORT 3)" 3
	check_eq "$why: UDP/IPv6 arrives" "$(send udp $A6 $SPORT $B6 $UDP_PORT 3)" 3
	check_eq "$why: TCP/IPv4 arrives" "$(send tcp $A4 $B4 $TCP_PORT 1)" 1
	check_eq "$why: TCP/IPv6 arrives" "$(send tcp $A6 $B6 $TCP_PORT 1)" 1
	check_eq "$why: ICMP echo/IPv4 arrives" "$(send icmp $A4 $B4 3)" 3
	check_eq "$why: ICMPv6 echo arrives" "$(send icmp $A6 $B6 3)" 3
}

# ---------------------------------------------------------------- tests

# 1. drop: a 5-tuple, then a source address.
test_drop() {
	local d0 d1 m0 hf0 hs0
	check "create fb1" "$FB" create fb1 --capacity 1000 --fp-rate 0.001
	# Native XDP on a veth runs in the veth's own NAPI poll, which the
	# kernel turns on when a program is attached: the peer sends as usual,
	# needing no XDP program of its own (checked on 6.18).
	check "attach fb1 (drop, native)" "$FB" -n "$NSB" attach fb1 "$VB" --mode native --action drop
	check "ip link shows xdp on $VB" has_xdp
	check "info fb1 lists $VB as attached" attached_to fb1 "$VB"
	all_arrive "drop, empty filter"

	check "add the UDP/IPv4 5-tuple" "$FB" add fb1 udp "$A4:$SPORT" "$B4:$UDP_PORT"
	d0=$(counter fb1 dropped)
	m0=$(counter fb1 matched)
	hf0=$(counter fb1 hit_flow)
	check_eq "blocked UDP/IPv4 flow gets no answer" "$(WAIT=$NONE_WAIT send udp $A4 $SPORT $B4 $UDP_PORT 5)" 0
	d1=$(counter fb1 dropped)
	check_eq "dropped grew by the 5 packets sent" "$((d1 - d0))" 5
	check_eq "matched grew by 5" "$(($(counter fb1 matched) - m0))" 5
	check_eq "hit_flow grew by 5" "$(($(counter fb1 hit_flow) - hf0))" 5
	check_eq "UDP/IPv4, other source port, arrives" "$(send udp $A4 $((SPORT + 1)) $B4 $UDP_PORT 3)" 3
	check_eq "UDP/IPv4, other destination port, arrives" "$(send udp $A4 $SPORT $B4 $UDP_PORT2 3)" 3
	check_eq "TCP/IPv4 still arrives" "$(send tcp $A4 $B4 $TCP_PORT 1)" 1
	check_eq "ICMP/IPv4 still arrives" "$(send icmp $A4 $B4 3)" 3
	check_eq "UDP/IPv6, same ports, arrives" "$(send udp $A6 $SPORT $B6 $UDP_PORT 3)" 3
	check_eq "ICMPv6 still arrives" "$(send icmp $A6 $B6 3)" 3
	check_eq "nothing else was dropped" "$(counter fb1 dropped)" "$d1"

	check "add src $A6" "$FB" add fb1 src "$A6"
	d0=$(counter fb1 dropped)
	hs0=$(counter fb1 hit_src)
	check_eq "ICMPv6 from $A6 gets no answer" "$(WAIT=$NONE_WAIT send icmp $A6 $B6 3)" 0
	check_eq "dropped grew by the 3 echo requests" "$(($(counter fb1 dropped) - d0))" 3
	check_eq "hit_src grew by 3" "$(($(counter fb1 hit_src) - hs0))" 3
	check_eq "UDP/IPv6 from $A6 gets no answer" "$(WAIT=$NONE_WAIT send udp $A6 $((SPORT + 2)) $B6 $UDP_PORT 3)" 0
	check_eq "TCP/IPv6 from $A6 gets no answer" "$(WAIT=$NONE_WAIT send tcp $A6 $B6 $TCP_PORT 1)" 0
	check_eq "ICMP/IPv4 still arrives" "$(send icmp $A4 $B4 3)" 3
	check_eq "TCP/IPv4 still arrives" "$(send tcp $A4 $B4 $TCP_PORT 1)" 1
	check_eq "UDP/IPv4, unlisted flow, still arrives" "$(send udp $A4 $((SPORT + 1)) $B4 $UDP_PORT 3)" 3
	check_ge "matched counts both rule kinds" "$(counter fb1 matched)" 11
	check_ge "hit_src counts every IPv6 packet dropped" "$(counter fb1 hit_src)" 7
	check "seen = dropped + passed" balanced fb1
	check_fails "destroy fb1 while attached" "$FB" -n "$NSB" destroy fb1
}

# 4. detach: the blocked flows come back, the device has no program.
test_detach() {
	check "detach $VB" "$FB" -n "$NSB" detach "$VB"
	check "ip link shows no xdp on $VB" no_xdp
	check_eq "detached: blocked UDP/IPv4 flow arrives" "$(send udp $A4 $SPORT $B4 $UDP_PORT 3)" 3
	check_eq "detached: ICMPv6 from $A6 arrives" "$(send icmp $A6 $B6 3)" 3
	check "info fb1 lists no device" not_attached fb1
}

# 2. allow: only what is listed passes. The filter lists ICMP echo both
# ways over IPv4 and IPv6 (port-less protocols take bare addresses).
test_allow() {
	local d0 n0
	check "create fb2" "$FB" create fb2 --capacity 1000 --fp-rate 0.001
	check "add the ICMP flows" "$FB" add fb2 icmp "$A4" "$B4" icmpv6 "$A6" "$B6"
	check "attach fb2 (allow, native)" "$FB" -n "$NSB" attach fb2 "$VB" --mode native --action allow
	# Forget B's IPv4 address so the ping needs ARP: ARP is not IP, so it
	# passes an allow-list (counted as non_ip).
	ip -n "$NSA" neigh flush dev "$VA"
	n0=$(counter fb2 non_ip)
	check_eq "allow: ICMP/IPv4 (listed) arrives" "$(send icmp $A4 $B4 3)" 3
	check_ge "allow: ARP passed as non_ip" "$(($(counter fb2 non_ip) - n0))" 1
	check_eq "allow: ICMPv6 (listed) arrives" "$(send icmp $A6 $B6 3)" 3
	d0=$(counter fb2 dropped)
	check_eq "allow: UDP/IPv4 (unlisted) gets no answer" "$(WAIT=$NONE_WAIT send udp $A4 $SPORT $B4 $UDP_PORT 4)" 0
	# >=: A's own IPv6 multicast (MLD, router solicitations) is unlisted
	# too and may be dropped in the same second.
	check_ge "allow: the 4 UDP packets were counted dropped" "$(($(counter fb2 dropped) - d0))" 4
	check_eq "allow: TCP/IPv4 (unlisted) gets no answer" "$(WAIT=$NONE_WAIT send tcp $A4 $B4 $TCP_PORT 1)" 0
	check_eq "allow: UDP/IPv6 (unlisted) gets no answer" "$(WAIT=$NONE_WAIT send udp $A6 $SPORT $B6 $UDP_PORT 3)" 0
	check_ge "allow: matched counts the echo requests" "$(counter fb2 hit_flow)" 6
	check "detach $VB" "$FB" -n "$NSB" detach "$VB"
}

# 3. monitor: fb1 still holds the UDP 5-tuple and src A6; all is counted,
# nothing is dropped.
test_monitor() {
	local m0 d0
	check "attach fb1 (monitor, native)" "$FB" -n "$NSB" attach fb1 "$VB" --mode native --action monitor
	m0=$(counter fb1 matched)
	d0=$(counter fb1 dropped)
	all_arrive "monitor"
	# Listed: the 3 UDP/IPv4 packets of the 5-tuple, and every IPv6 packet
	# from A6 (3 UDP + 3 ICMPv6 + the TCP exchange, at least 3).
	check_ge "monitor: matched counts the listed traffic" "$(($(counter fb1 matched) - m0))" 12
	check_eq "monitor: dropped stays the same" "$(counter fb1 dropped)" "$d0"
	check "detach $VB" "$FB" -n "$NSB" detach "$VB"
}

# 5. `ip link ... xdp obj` loads the object unchanged: it finds the maps of
# the `default` filter pinned in /sys/fs/bpf/xdp/globals.
test_iplink() {
	local p d0
	t_lock_globals || {
		skip "ip link: $T_LOCK_WHY"
		return
	}
	if [ -e "$GLOBALS/fb_filter" ] || [ -e "$GLOBALS/fb_stats" ]; then
		skip "ip link: $GLOBALS/fb_filter or fb_stats already exists (not ours; left alone)"
		return
	fi
	for p in /sys/fs/bpf/xdp /sys/fs/bpf/xdp/globals /sys/fs/bpf/tc /sys/fs/bpf/tc/globals /sys/fs/bpf/ip; do
		[ -e "$p" ] || [ -L "$p" ] || BPFFS_NEW=("$p" "${BPFFS_NEW[@]}")
	done
	IPLINK_STARTED=1
	check "create default" "$FB" create default --capacity 1000 --fp-rate 0.001
	check "default is pinned for ip link" test -e "$GLOBALS/fb_filter" -a -e "$GLOBALS/fb_stats"
	OUR_PINS[fb_filter]=$(pin_id "$GLOBALS/fb_filter")
	OUR_PINS[fb_stats]=$(pin_id "$GLOBALS/fb_stats")
	check "ip link set $VB xdpdrv obj flowbloom.bpf.o" \
		inB ip link set dev "$VB" xdpdrv obj "$FBOBJ" sec xdp
	check "ip link shows xdp on $VB" has_xdp
	check "info default lists $VB" attached_to default "$VB"
	check_eq "ip link: UDP/IPv4 arrives before the add" "$(send udp $A4 $SPORT $B4 $UDP_PORT 3)" 3
	check_ge "ip link: the program counts into default's stats" "$(counter default seen)" 3
	check "add the flow to default after attaching" "$FB" add default udp "$A4:$SPORT" "$B4:$UDP_PORT"
	d0=$(counter default dropped)
	check_eq "ip link: added flow gets no answer" "$(WAIT=$NONE_WAIT send udp $A4 $SPORT $B4 $UDP_PORT 5)" 0
	check_eq "ip link: stats default counts 5 dropped" "$(($(counter default dropped) - d0))" 5
	check_eq "ip link: other flow arrives" "$(send udp $A4 $((SPORT + 1)) $B4 $UDP_PORT 3)" 3
	check "ip link set $VB xdp off" inB ip link set dev "$VB" xdp off
	check "ip link shows no xdp on $VB" no_xdp
	check_eq "xdp off: the flow arrives again" "$(send udp $A4 $SPORT $B4 $UDP_PORT 3)" 3
	check "destroy default" "$FB" destroy default
	check "$GLOBALS/fb_filter is gone" test ! -e "$GLOBALS/fb_filter"
	check "$GLOBALS/fb_stats is gone" test ! -e "$GLOBALS/fb_stats"
	bpffs_restore
	IPLINK_STARTED=
}

# 6. errors: one line on stderr, non-zero exit.
test_errors() {
	check "create fb6" "$FB" create fb6 --capacity 100 --fp-rate 0.01
	check_fails_one "-n with a missing namespace" "$FB" -n nosuch$$ list
	check_fails_one "attach to a missing device" "$FB" -n "$NSB" attach fb6 nosuch$$ --mode native
	check_fails_one "attach a missing filter" "$FB" -n "$NSB" attach nosuch "$VB" --mode native
	check "attach fb6" "$FB" -n "$NSB" attach fb6 "$VB" --mode native
	check_fails_one "attach twice to $VB" "$FB" -n "$NSB" attach fb6 "$VB" --mode native
	check_fails_one "attach another filter to $VB" "$FB" -n "$NSB" attach fb1 "$VB" --mode generic
	check_fails_one "destroy while attached" "$FB" -n "$NSB" destroy fb6
	# The same from the initial namespace, where $VB is not visible: the
	# filter is still attached, so this must fail too.
	check_fails_one "destroy while attached, from another netns" "$FB" destroy fb6
	check "detach $VB" "$FB" -n "$NSB" detach "$VB"
	check_fails_one "detach $VB again (no program)" "$FB" -n "$NSB" detach "$VB"
	check_fails_one "detach $VA (never had a program)" "$FB" -n "$NSA" detach "$VA"
	check_fails_one "detach a missing device" "$FB" -n "$NSB" detach nosuch$$
	"$FB" -n "$NSB" destroy fb6 >/dev/null 2>&1
}

setup
test_drop
test_detach
test_allow
test_monitor
test_iplink
test_errors
check "destroy fb1" "$FB" destroy fb1
check "destroy fb2" "$FB" destroy fb2
t_finish
