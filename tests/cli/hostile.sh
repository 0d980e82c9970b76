#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Bypasses found by hostile testing (issue 9), each replayed through the
# real program from a capture built here, with the CLI a user would run:
#  - an IPv6 packet from ::ffff:198.51.100.5 took IPv4 rules and walked past
#    `dst 2001:db8:ffff::/48` and `dst ::/0`;
#  - nine IPv6 extension headers (or a truncated TCP header) made a packet
#    "malformed", and malformed packets passed every rule by default;
#  - IPv4 with tot_len 0 (BIG TCP / GSO, as generic XDP sees it) was called
#    malformed, so its 5-tuple rule never applied;
#  - `load` expanded an IPv6 ::fffe:0:0/95 into ::ffff:0:0/96 and filed it
#    as IPv4 /0: every IPv4 packet matched;
#  - with --confirm exact, an IPv6 rule ::/0 in the LPM trie confirmed any
#    false positive of an IPv4 packet (one trie for both families);
#  - a UDP 5-tuple with port 0 (`udp src A sport 0 dst B dport 0`, UDP port
#    0 floods) matched every non-first fragment from A to B, whatever its
#    datagram's ports: their key has port 0;
#  - a tiny first fragment (RFC 1858: the TCP header split over two
#    fragments) was malformed, and its ports were not read: under
#    --malformed pass it went past `tcp dport 22`.
# Every frame exists only inside BPF_PROG_TEST_RUN; nothing is sent.
source "$(dirname "$0")/../lib/lib.sh"
t_begin hostile
t_traps

# One capture per name: NAME.pcap in $T_TMP (Ethernet, one frame each line
# of the table below).
python3 - "$T_TMP" <<'PY'
import ipaddress, struct, sys
from pkt import pcap_write
out = sys.argv[1]

def eth(t):
    return bytes.fromhex("00005e005302" "00005e005301") + struct.pack("!H", t)

def a6(s):
    return ipaddress.IPv6Address(s).packed

def a4(s):
    return ipaddress.IPv4Address(s).packed

def udp(sp, dp, n=8):
    return struct.pack("!HHHH", sp, dp, 8 + n, 0) + bytes(n)

def tcp(sp, dp):
    return struct.pack("!HHIIBBHHH", sp, dp, 1, 0, 0x50, 0x18, 65535, 0, 0) + bytes(8)

def ip6(src, dst, nh, payload):
    return eth(0x86dd) + struct.pack("!IHBB", 0x60000000, len(payload), nh, 64) + a6(src) + a6(dst) + payload

def ip4(src, dst, proto, payload, tot=None, frag=0):
    n = 20 + len(payload) if tot is None else tot
    return eth(0x0800) + struct.pack("!BBHHHBBH", 0x45, 0, n, 1, frag, 64, proto, 0) + a4(src) + a4(dst) + payload

def frag6(nh, off, m):  # offset in 8-byte units, M flag
    return struct.pack("!BBHI", nh, 0, off << 3 | m, 7)

def dstopts(nh):  # 8 bytes: next header, length 0, PadN of 4
    return bytes([nh, 0, 1, 4, 0, 0, 0, 0])

def chain(n, last, payload):
    b = payload
    for i in range(n):
        b = dstopts(last if i == 0 else 60) + b
    return b

frames = {
    # IPv6 packets with a v4-mapped source
    "mapped": [ip6("::ffff:198.51.100.5", "2001:db8:ffff::1", 17, udp(40000, 53)),
               ip6("::ffff:198.51.100.5", "::ffff:203.0.113.77", 17, udp(40000, 53))],
    "v4": [ip4("198.51.100.5", "203.0.113.77", 17, udp(40000, 53))],
    # 9 and 12 destination-options headers before TCP, from a blocked source
    "exthdrs": [ip6("2001:db8::66", "2001:db8::1", 60, chain(9, 6, tcp(51000, 443))),
                ip6("2001:db8::66", "2001:db8::1", 60, chain(12, 6, tcp(51000, 443)))],
    # TCP cut inside its header, from the same source
    "cut": [ip6("2001:db8::66", "2001:db8::1", 6, tcp(51000, 443)[:10])],
    # IPv4 TCP, tot_len 0 (BIG TCP); the same with UDP stays malformed
    "tso": [ip4("198.51.100.9", "203.0.113.9", 6, tcp(51000, 443), tot=0)],
    "udp0": [ip4("198.51.100.9", "203.0.113.9", 17, udp(40000, 53), tot=0)],
    # a UDP datagram from port 0, then the first and a later fragment of one
    # from 40000 to 53, and a later fragment of an ICMP echo; IPv4 and IPv6
    "port0": [ip4("198.51.100.5", "203.0.113.7", 17, udp(0, 0)),
              ip4("198.51.100.5", "203.0.113.7", 17, udp(40000, 53, 16), frag=0x2000),
              ip4("198.51.100.5", "203.0.113.7", 17, bytes(16), frag=3),
              ip4("198.51.100.5", "203.0.113.7", 1, bytes(16), frag=3)],
    "port0v6": [ip6("2001:db8::5", "2001:db8::7", 17, udp(0, 0)),
                ip6("2001:db8::5", "2001:db8::7", 44, frag6(17, 0, 1) + udp(40000, 53, 16)),
                ip6("2001:db8::5", "2001:db8::7", 44, frag6(17, 3, 0) + bytes(16)),
                ip6("2001:db8::5", "2001:db8::7", 44, frag6(58, 3, 0) + bytes(16))],
    # tiny first fragments (RFC 1858): the TCP header split, its first 8
    # bytes (ports, sequence number) in the first fragment, to port 22
    "tiny": [ip4("198.51.100.5", "203.0.113.7", 6, tcp(51000, 22)[:8], frag=0x2000),
             ip6("2001:db8::5", "2001:db8::7", 44, frag6(6, 0, 1) + tcp(51000, 22)[:8])],
}
for name, fl in frames.items():
    pcap_write(f"{out}/{name}.pcap", fl, lambda i: (1700000000 + i, 0))
PY

# replay FILTER "PCAP..." [OPTS...] -> per packet "parse match verdict;",
# the captures in order (one replay: one program load for all of them)
replay() {
	local f=$1 p caps=()
	for p in $2; do caps+=("$T_TMP/$p.pcap"); done
	shift 2
	"$FB" -j replay "$f" "${caps[@]}" --explain "$@" 2>"$T_TMP/err" |
		python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if "packet" in d:
        print(d.get("parse"), d.get("match") or "-", d["verdict"])' | tr '\n' ';'
}

"$FB" create h --capacity 10000 --fp-rate 0.0001 >/dev/null || fail "create"

# 1. v4-mapped sources meet IPv6 rules, never IPv4 ones.
"$FB" add h dst 2001:db8:ffff::/48 >/dev/null
check_eq "IPv6 from ::ffff:198.51.100.5 to a blocked /48 is dropped" \
	"$(replay h mapped)" "ok dst drop;ok - pass;"
"$FB" load h - --replace <<<"dst ::/0" >/dev/null 2>&1
check_eq "dst ::/0 drops every IPv6 packet, v4-mapped ones too, and no IPv4 one" \
	"$(replay h "mapped v4")" "ok dst drop;ok dst drop;ok - pass;"
"$FB" load h - --replace <<<"src 198.51.100.0/24" >/dev/null 2>&1
check_eq "an IPv4 source rule never matches an IPv6 packet from ::ffff:198.51.100.5" \
	"$(replay h "mapped v4")" "ok - pass;ok - pass;ok src drop;"
"$FB" load h - --replace <<<"udp 198.51.100.5:40000 203.0.113.77:53" >/dev/null 2>&1
check_eq "an IPv4 5-tuple never matches the IPv6 packet with the same mapped addresses" \
	"$(replay h "mapped v4")" "ok - pass;ok - pass;ok flow drop;"
"$FB" load h - --replace <<<"src ::ffff:0:0/96" >/dev/null 2>&1
check_eq "src ::ffff:0:0/96 (hex: IPv6) drops v4-mapped IPv6 sources, no IPv4 packet" \
	"$(replay h "mapped v4")" "ok src drop;ok src drop;ok - pass;"
check_eq "query answers as the data path: IPv6 ::ffff:c633:6405 maybe, IPv4 198.51.100.5 no" \
	"$("$FB" query h src ::ffff:c633:6405 src 198.51.100.5 | cut -c1-5 | head -2 | tr -d ' ' | tr '\n' ,)" \
	"maybe,no,"

# 2. What the parser cannot finish is still matched on its addresses, and
#    what no rule decides is dropped by default on a block-list.
"$FB" load h - --replace <<<"src 2001:db8::66" >/dev/null 2>&1
check_eq "9 and 12 extension headers from a blocked source: dropped (even --malformed pass)" \
	"$(replay h exthdrs --malformed pass)" "malformed src drop;malformed src drop;"
check_eq "a truncated TCP header from a blocked source: dropped" \
	"$(replay h cut --malformed pass)" "malformed src drop;"
"$FB" load h - --replace <<<"src 2001:db8::67" >/dev/null 2>&1
check_eq "malformed, no rule decides: dropped by default (action drop)" \
	"$(replay h exthdrs)" "malformed - drop;malformed - drop;"
check_eq "... and by default under --action allow" \
	"$(replay h cut --action allow)" "malformed - drop;"
check_eq "... passed under --action monitor" "$(replay h cut --action monitor)" "malformed - pass;"
check_eq "... passed with --malformed pass" "$(replay h cut --malformed pass)" "malformed - pass;"

# 3. tot_len 0: the frame's length, for TCP (BIG TCP); not for UDP.
"$FB" load h - --replace <<<"tcp 198.51.100.9:51000 203.0.113.9:443" >/dev/null 2>&1
check_eq "IPv4 TCP with tot_len 0 parses, and its 5-tuple rule drops it" \
	"$(replay h tso --malformed pass)" "ok flow drop;"
check_eq "IPv4 UDP with tot_len 0 is still malformed" \
	"$(replay h udp0 --malformed pass)" "malformed - pass;"

# 4. Expansion never moves a prefix into the other family: ten IPv6 lengths
#    (one must be expanded: ::fffe:0:0/95 into two /96s, one of them
#    ::ffff:0:0/96), no IPv4 rule at all.
cat >"$T_TMP/v6.txt" <<'EOF'
::fffe:0:0/95
2001:db8:1::/96
2001:db8:2::/100
2001:db8:3::/104
2001:db8:4::/108
2001:db8:5::/112
2001:db8:6::/116
2001:db8:7::/120
2001:db8:8::/124
2001:db8:9::1
EOF
check "load ten IPv6 prefix lengths (expands)" "$FB" load h "$T_TMP/v6.txt" --replace
check_eq "info: no IPv4 source prefix length" \
	"$("$FB" -j info h | python3 -c '
import json, sys
d = json.load(sys.stdin)
print([p["length"] for p in d["prefix_lengths"] if p["list"].startswith("IPv4")])')" "[]"
check_eq "an IPv4 packet does not match; the v4-mapped IPv6 packets do (::fffe:0:0/95)" \
	"$(replay h "v4 mapped")" "ok - pass;ok src drop;ok src drop;"

# 5. A 5-tuple of a protocol with ports fixes its ports: a later fragment,
#    whose ports are not in it (its key has port 0), never meets one, even
#    with port 0 (it passes, as its first fragment decides); its first
#    fragment does. A protocol without ports has nothing missing: an ICMP
#    5-tuple still meets its later fragments.
printf '%s\n' "udp src 198.51.100.5 sport 0 dst 203.0.113.7 dport 0" \
	"udp [2001:db8::5]:0 [2001:db8::7]:0" "udp 198.51.100.5:40000 203.0.113.7:53" \
	"icmp 198.51.100.5 203.0.113.7" "ipv6-icmp 2001:db8::5 2001:db8::7" >"$T_TMP/p0.txt"
"$FB" load h "$T_TMP/p0.txt" --replace >/dev/null 2>&1 || fail "load port-0 5-tuples"
check_eq "UDP port 0 5-tuples: drop port 0, not a later fragment of port 40000 to 53" \
	"$(replay h "port0 port0v6")" \
	"ok flow drop;ok flow drop;ok - pass;ok flow drop;ok flow drop;ok - pass;ok - pass;ok flow drop;"
check_eq "... under allow, a later fragment is not allowed by a port-0 5-tuple" \
	"$(replay h "port0 port0v6" --action allow)" \
	"ok flow pass;ok flow pass;ok - drop;ok flow pass;ok flow pass;ok - drop;ok - drop;ok flow pass;"

# 6. A tiny first fragment is malformed (its TCP header is cut), but its
#    ports are in it, and the datagram the kernel reassembles has them:
#    port rules and 5-tuples meet it, so --malformed pass does not carry
#    it past `tcp dport 22`.
printf '%s\n' "tcp dport 22" >"$T_TMP/tiny.txt"
"$FB" load h "$T_TMP/tiny.txt" --replace >/dev/null 2>&1 || fail "load tcp dport 22"
check_eq "tiny first fragments to port 22 meet 'tcp dport 22' (--malformed pass)" \
	"$(replay h tiny --malformed pass)" "malformed shape drop;malformed shape drop;"
printf '%s\n' "tcp 198.51.100.5:51000 203.0.113.7:22" "tcp [2001:db8::5]:51000 [2001:db8::7]:22" \
	>"$T_TMP/tiny.txt"
"$FB" load h "$T_TMP/tiny.txt" --replace >/dev/null 2>&1 || fail "load the 5-tuples"
check_eq "... and their 5-tuples (--malformed pass)" \
	"$(replay h tiny --malformed pass)" "malformed flow drop;malformed flow drop;"
printf '%s\n' "tcp dport 23" >"$T_TMP/tiny.txt"
"$FB" load h "$T_TMP/tiny.txt" --replace >/dev/null 2>&1 || fail "load tcp dport 23"
check_eq "... another port's rule does not: malformed, passed as asked" \
	"$(replay h tiny --malformed pass)" "malformed - pass;malformed - pass;"

"$FB" destroy h >/dev/null || fail "destroy"

# 7. Confirmation keeps the families apart: in a saturated filter (every
#    probe says "maybe"), an IPv4 packet's Bloom hit on the IPv4 /32 list
#    must not be confirmed by the IPv6 rule ::/0.
python3 -c '
for i in range(4000):
    print("udp 203.0.113.%d:%d 198.51.100.%d:9" % (i % 250, 1024 + i, i % 200))
print("src 203.0.113.250")
print("src ::/0")' >"$T_TMP/sat.txt"
"$FB" create c --bits 512 --hashes 1 --confirm exact >/dev/null || fail "create c"
check "load a list that saturates 512 bits" "$FB" load c "$T_TMP/sat.txt"
check_eq "--confirm exact: IPv4 packet not confirmed by ::/0; v4-mapped IPv6 ones are" \
	"$(replay c "v4 mapped")" "ok - pass;ok src drop;ok src drop;"
"$FB" destroy c >/dev/null || fail "destroy c"
t_end
