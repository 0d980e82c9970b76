#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Devices whose packets reach XDP without an Ethernet header. On a layer-3
# device (a tun made IFF_TUN|IFF_NO_PI, link/none: as WireGuard, IP tunnels
# and PPP are) XDP hands the program the IP header first, which it would
# read as an Ethernet header with a made-up type: every packet non-IP,
# passed, whatever the rules. In a namespace of the test's own:
# - `attach` refuses the tun (generic and native, with --monitor too: no
#   monitoring maps made) with one line naming it, its link type and what
#   to do instead; `apply` and `apply --check` refuse an attach line naming
#   it (FILE:LINE, no filter created);
# - `attach` still takes a veth (native), filtering real UDP across the
#   pair, and loopback (generic: its frames carry an Ethernet header),
#   filtering UDP a namespace sends itself;
# - an object loaded on the tun by `ip link` (iproute2 pointed at a private
#   bpffs directory with TC_BPF_MNT, holding the `default` filter's pins of
#   a private FLOWBLOOM_ROOT) really passes UDP the rules block (the tun's
#   packets written into it, counted as non_ip), and `status` lists it as
#   NO ETHERNET HEADER and exits 3 (-j: ethernet false, link type 65534);
#   `detach` removes it.
# status sees every attachment on the machine: the tun's would make
# status.sh's own runs exit 3, so this suite holds /tmp/fb-globals.lock
# (t_lock_globals) and never runs beside it. Addresses: 198.51.100.0/24,
# 203.0.113.0/24.
source "$(dirname "$0")/../lib/lib.sh"
t_begin linktype
t_lock_globals || t_skip_all "$T_LOCK_WHY"

OBJ=$(cd "$(dirname "$0")/../.." && pwd)/build/flowbloom.bpf.o
IPDIR=/sys/fs/bpf/fbtest_linktype_ip_$$ # iproute2's bpffs (TC_BPF_MNT)
export FLOWBLOOM_IPROUTE_DIR=$IPDIR/xdp/globals
cleanup() {
	t_net_down # deletes the tun with its namespace
	rm -rf --one-file-system "$IPDIR" 2>/dev/null
}
t_traps

t_net_pair --no-ipv6 || t_skip_all "$T_NET_WHY"
TUN=fbltt$$
t_addr "$NSA" "$VA" 198.51.100.1/24
t_addr "$NSB" "$VB" 198.51.100.2/24
t_neigh "$NSA" "$VA" "$MACB" 198.51.100.2
t_neigh "$NSB" "$VB" "$MACA" 198.51.100.1
inB ip tuntap add dev "$TUN" mode tun || t_skip_all "cannot make a tun device"
inB ip link set "$TUN" up
t_addr "$NSB" "$TUN" 203.0.113.1/24
fbB() { "$FB" -n "$NSB" "$@"; }
# B's UDP to port 9 of 198.51.100.2 (T_UDP_SEND's port) and to 203.0.113.1
# port 4000 is blocked.
check "create F" "$FB" create F --capacity 100 --fp-rate 0.01
check "add F's rules" "$FB" add F udp dst 198.51.100.2 dport 9 udp dst 203.0.113.1 dport 4000

# --- attach and apply refuse the tun
WHY="cannot attach to $TUN (link/none: a layer-3 device such as tun or WireGuard): its packets reach XDP without an Ethernet header"
t_refused 1 "attach --mode generic refuses the tun" "$WHY" fbB attach F "$TUN" --mode generic
grep -q "attach to the Ethernet device the traffic arrives on" "$T_TMP/err" &&
	pass "... and says what to do instead" || fail "the refusal: $(cat "$T_TMP/err")"
t_refused 1 "attach (native) refuses the tun" "$WHY" fbB attach F "$TUN"
t_refused 1 "attach --monitor refuses the tun" "$WHY" fbB attach F "$TUN" --mode generic --monitor
check_eq "... before making monitoring maps" "$(ls "$FLOWBLOOM_ROOT/F")" "$(printf 'filter\nstats')"
check_eq "the tun has no XDP program" "$(inB ip link show "$TUN" | grep -c ' xdp')" 0
printf 'capacity = 100\nfp-rate = 0.01\nattach = %s generic\nattach = %s generic\n' "$VB" "$TUN" >"$T_TMP/G.conf"
t_refused 1 "apply --check refuses the tun's attach line" "G.conf:4: $WHY" fbB apply --check "$T_TMP/G.conf"
t_refused 1 "apply refuses it" "G.conf:4: $WHY" fbB apply "$T_TMP/G.conf"
check_eq "... and creates nothing" "$("$FB" list | awk '{print $1}' | tr '\n' ' ')" "F "
check_eq "... attaches nothing" "$(inB ip link show "$VB" | grep -c ' xdp')" 0

# --- veth and loopback: attached, filtering
# dropped_since N0 N: F dropped N packets since its counter was N0.
dropped_since() { [ $(($(t_stat "$FB" F dropped) - $1)) -eq "$2" ]; }
check "attach F to the veth (native)" fbB attach F "$VB"
d0=$(t_stat "$FB" F dropped)
n0=$(t_stat "$FB" F non_ip)
inA "$PY" -c "$T_UDP_SEND" 198.51.100.1 198.51.100.2 5
t_wait_until 10 dropped_since "$d0" 5 && pass "veth: the blocked UDP is dropped" ||
	fail "veth: dropped $(($(t_stat "$FB" F dropped) - d0)) of 5"
check_eq "veth: no packet taken for non-IP" "$(t_stat "$FB" F non_ip)" "$n0"
check "detach the veth" fbB detach "$VB"
check "attach F to loopback (generic)" fbB attach F lo --mode generic
d0=$(t_stat "$FB" F dropped)
inB "$PY" -c "$T_UDP_SEND" 198.51.100.2 198.51.100.2 5
t_wait_until 10 dropped_since "$d0" 5 && pass "loopback: the blocked UDP is dropped" ||
	fail "loopback: dropped $(($(t_stat "$FB" F dropped) - d0)) of 5"
check_eq "loopback: no packet taken for non-IP" "$(t_stat "$FB" F non_ip)" "$n0"
check "detach loopback" fbB detach lo

# --- an object on the tun by ip link: it passes everything; status says so
mkdir -p "$IPDIR/xdp"
check "create default (pins in a private xdp/globals)" "$FB" create default --capacity 100 --fp-rate 0.01
check "add default's rule" "$FB" add default udp dst 203.0.113.1 dport 4000
check "ip link set $TUN xdpgeneric obj (a private bpffs for iproute2)" \
	env TC_BPF_MNT="$IPDIR" nsenter --net="/run/netns/$NSB" ip link set dev "$TUN" xdpgeneric obj "$OBJ" sec xdp
# Five datagrams to the blocked 203.0.113.1:4000, written into the tun
# (the kernel receives them from it), to a socket bound there.
got=$(inB "$PY" - "$TUN" <<'PY'
import fcntl, os, socket, struct, sys, time
from pkt import ip4, ipv4_udp
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("203.0.113.1", 4000))
r.settimeout(0.2)
fd = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", sys.argv[1].encode(), 0x0001 | 0x1000))  # TUNSETIFF: IFF_TUN | IFF_NO_PI
for i in range(5):
    os.write(fd, ipv4_udp(ip4("203.0.113.9"), 40000, ip4("203.0.113.1"), 4000, b"linktype", i + 1))
n, end = 0, time.time() + 3
while n < 5 and time.time() < end:
    try:
        r.recv(100)
        n += 1
    except socket.timeout:
        pass
print(n)
PY
)
check_eq "ip link on the tun: every blocked datagram arrives" "$got" 5
check_eq "... each counted as non-IP" "$(t_stat "$FB" default non_ip)" 5
"$FB" status >"$T_TMP/status.out" 2>"$T_TMP/status.err"
check_eq "status exits 3" "$?" 3
grep -qE "^$NSB +$TUN +generic +[0-9]+ +default \(drop; malformed drop\); NO ETHERNET HEADER \(link/none: [^)]*\): passes every packet$" \
	"$T_TMP/status.out" && pass "status: the tun's attachment, NO ETHERNET HEADER" ||
	fail "status: $(cat "$T_TMP/status.out")"
grep -q "^flowbloom: 1 attachment on a device without an Ethernet header" "$T_TMP/status.err" &&
	pass "status: says so on stderr" || fail "status stderr: $(cat "$T_TMP/status.err")"
"$FB" -j status >"$T_TMP/status.json" 2>/dev/null
check_eq "status -j: the tun's attachment" "$(t_json "[(x['link_type'], x['ethernet'], x['fails_open']) for x in d['attachments'] if x['netns'] == '$NSB' and x['device'] == '$TUN']" "$T_TMP/status.json")" "[(65534, False, False)]"
check_eq "status -j: counted in not_ethernet" "$(t_json "d['not_ethernet'] >= 1" "$T_TMP/status.json")" True
check "detach removes it" fbB detach "$TUN"
"$FB" status >"$T_TMP/status.out" 2>&1
check_eq "status no longer lists it" "$(grep -c " $TUN " "$T_TMP/status.out")" 0
check "destroy default" "$FB" destroy default
t_finish
