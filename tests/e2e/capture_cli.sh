#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `replay` of Linux cooked captures, as `tcpdump -i any` writes them: SLL2
# (link type 276, libpcap >= 1.10, Debian 12) and SLL v1 (113). A real
# capture is made by tcpdump -i any inside a network namespace this script
# creates, of UDP over IPv4 and IPv6 and TCP between two namespaces joined
# by a veth pair; replayed through the real program against a filter
# holding the UDP flows, every datagram must match, and the same records
# rewritten as SLL v1 must give the same answers. Then crafted SLL2
# records: shorter than the header (runts), header only, truncated IP, a
# VLAN tag, a non-IP protocol: nothing aborts, each lands where it should.
source "$(dirname "$0")/../lib/lib.sh"
t_begin capture_cli
TD=""
cleanup() {
	[ -n "$TD" ] && kill "$TD" 2>/dev/null
	t_net_down
	t_cleanup_filters
}
t_traps
json() { python3 -c "import json,sys; d=json.loads(sys.stdin.read().splitlines()[-1]); print($1)"; }
# records_at_least PCAP N: PCAP (being written) holds N records or more.
records_at_least() {
	python3 - "$@" <<'PY'
import struct, sys
b, n, o = open(sys.argv[1], "rb").read(), 0, 24
while o + 16 <= len(b):
    o += 16 + struct.unpack("<I", b[o + 8:o + 12])[0]
    n += o <= len(b)
sys.exit(n < int(sys.argv[2]))
PY
}

check "create" "$FB" create cap --capacity 1000 --fp-rate 0.001
UFLOW4="udp 198.51.100.1:40001 198.51.100.2:5000"
UFLOW6="udp [2001:db8:c::1]:40002 [2001:db8:c::2]:5001"
check "add the UDP flows" "$FB" add cap $UFLOW4 $UFLOW6

if ! command -v tcpdump >/dev/null; then
	skip "tcpdump not installed (make deps installs it)"
elif ! t_net_pair; then
	skip "$T_NET_WHY"
else
	t_addr "$NSA" "$VA" 198.51.100.1/24 2001:db8:c::1/64
	t_addr "$NSB" "$VB" 198.51.100.2/24 2001:db8:c::2/64
	# No neighbour discovery to wait for: B's address is known to A.
	t_neigh "$NSA" "$VA" "$MACB" 2001:db8:c::2
	cap=$T_TMP/any.pcap
	nsenter --net="/run/netns/$NSB" tcpdump -i any --immediate-mode -Z root -U -n -w "$cap" 2>"$T_TMP/td.err" &
	TD=$!
	t_wait_until 30 grep -q "listening on" "$T_TMP/td.err" || fail "tcpdump did not start in 30 s"
	inA "$PY" -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.1", 40001))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s6.bind(("2001:db8:c::1", 40002))
for i in range(5):
    s.sendto(b"x" * 100, ("198.51.100.2", 5000))
    s6.sendto(b"y" * 60, ("2001:db8:c::2", 5001))
    time.sleep(0.02)
for i in range(2):  # refused: SYN out, RST back
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        t.connect(("198.51.100.2", 5003))
    except OSError:
        pass
    t.close()
'
	# tcpdump stops at once on SIGINT: what it has not written yet is
	# lost. Wait for the 10 datagrams and 2 x SYN + RST (ARP may come too).
	t_wait_until 30 records_at_least "$cap" 14
	kill -INT "$TD"
	wait "$TD"
	TD=""
	check_eq "tcpdump -i any wrote link type 276 (LINUX_SLL2)" \
		"$(python3 -c 'import struct,sys; print(struct.unpack("<I", open(sys.argv[1], "rb").read()[20:24])[0])' "$cap")" 276

	"$FB" -j replay cap "$cap" --explain >"$T_TMP/sll2.json" 2>"$T_TMP/err"
	check_eq "replay of the SLL2 capture: exit 0" "$?:$(head -c 200 "$T_TMP/err")" "0:"
	count() { grep -F "\"flow\":\"$2\"" "$1" | grep -c '"match":"flow"'; }
	check_eq "SLL2: the 5 IPv4 datagrams match" "$(count "$T_TMP/sll2.json" "$UFLOW4")" 5
	check_eq "SLL2: the 5 IPv6 datagrams match" "$(count "$T_TMP/sll2.json" "$UFLOW6")" 5
	check_eq "SLL2: the refused TCP connections are keyed, not matched" \
		"$(grep '"flow":"tcp 198.51.100.1:[0-9]* 198.51.100.2:5003"' "$T_TMP/sll2.json" | grep -c '"verdict":"pass"')" 2
	check_eq "SLL2: nothing aborted or malformed" \
		"$(json '(d["aborted"], d["malformed"], d["skipped_runt"])' <"$T_TMP/sll2.json")" "(0, 0, 0)"

	# The same records as SLL v1: pkttype, hatype, halen, addr[8], protocol.
	python3 - "$cap" "$T_TMP/sll1.pcap" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
out = bytearray(b[:20] + struct.pack("<I", 113))
o = 24
while o < len(b):
    ts, tu, cl, ln = struct.unpack("<IIII", b[o:o + 16])
    r = b[o + 16:o + 16 + cl]
    o += 16 + cl
    proto, _, ifi, hat, pkt, hal = struct.unpack("!HHIHBB", r[:12])
    v1 = struct.pack("!HHH", pkt, hat, hal) + r[12:20] + struct.pack("!H", proto) + r[20:]
    out += struct.pack("<IIII", ts, tu, len(v1), ln - 4) + v1
open(sys.argv[2], "wb").write(out)
PY
	"$FB" -j replay cap "$T_TMP/sll1.pcap" --explain >"$T_TMP/sll1.json"
	check_eq "SLL v1: the same per-packet answers" \
		"$(grep '"packet"' "$T_TMP/sll1.json" | sed 's/"file":"[^"]*",//')" \
		"$(grep '"packet"' "$T_TMP/sll2.json" | sed 's/"file":"[^"]*",//')"
fi

# Crafted SLL2 records.
python3 - "$T_TMP/bad.pcap" <<'PY'
import struct, sys
from pkt import ip4, ipv4_udp, pcap_write
def ip_udp(sp, dp):
    return ipv4_udp(ip4("198.51.100.1"), sp, ip4("198.51.100.2"), dp, ident=1)
def sll2(proto, payload):
    return struct.pack("!HHIHBB", proto, 0, 2, 1, 0, 6) + b"\x02\0\0\0\0\x01\0\0" + payload
recs = [
    b"",                                    # runt: empty
    b"\x08",                                # runt: 1 byte
    sll2(0x0800, b"")[:19],                 # runt: header less one byte
    sll2(0x0800, b""),                      # header only: IPv4 with no header
    sll2(0x0800, ip_udp(40001, 5000)[:10]), # truncated IPv4 header
    sll2(0x0800, ip_udp(40001, 5000)),      # the flow
    sll2(0x8100, b"\x00\x07\x08\x00" + ip_udp(40001, 5000)),  # VLAN 7, the flow
    sll2(0x0004, b"\xaa\xaa\x03" + b"\0" * 40),                # LLC: not IP
    sll2(0x86dd, b"\x60" + b"\0" * 10),     # truncated IPv6
]
pcap_write(sys.argv[1], recs, linktype=276)
PY
"$FB" add cap udp 198.51.100.1:40001 198.51.100.2:5000 >/dev/null 2>&1
"$FB" -j replay cap "$T_TMP/bad.pcap" >"$T_TMP/bad.json" 2>"$T_TMP/err"
check_eq "crafted SLL2: exit 0" "$?:$(head -c 200 "$T_TMP/err")" "0:"
check_eq "crafted SLL2: packets, runts, malformed, non-IP, matched, aborted" \
	"$(json '(d["packets"], d["skipped_runt"], d["malformed"], d["non_ip"], d["matched"], d["aborted"])' <"$T_TMP/bad.json")" \
	"(9, 3, 3, 1, 2, 0)"
check "destroy" "$FB" destroy cap
t_end
