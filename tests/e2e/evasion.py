# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The traffic and the oracle of tests/e2e/evasion.sh.

Frames of blocked flows, each dressed in a header trick the Linux stack
accepts (VLAN priority tags, IPv4 options, fragments in any order, IPv6 extension
headers, padding, TCP options), sent with AF_PACKET from namespace A; the
oracle is namespace B's own stack: nftables counters on exactly the blocked
flows, at prerouting after conntrack's defragmentation (priority -150) and
at input, and UDP sockets bound to the blocked ports. One place holds the
rules: `rules` prints them for flowbloom, `nft` the ruleset that counts
them, `send` the frames; `report` compares the runs.

  evasion.py rules                      flowbloom FLOWs, one a line
  evasion.py nft                        the nftables ruleset (nft -f -)
  evasion.py send NSA NSB DEVA DEVB RUN OUT
                                        RUN's traffic from DEVA (in netns file NSA), counts
                                        per trick and rule in OUT (JSON)
  evasion.py report CONTROL DROP PASS   one line per check: "ok LABEL" or "bad LABEL: why"

The process starts in B (it binds the sockets and runs nft there) and
enters A (setns) only to open its AF_PACKET socket.
"""
import ctypes
import ipaddress
import json
import os
import select
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pkt import csum  # noqa: E402

MACA = bytes.fromhex("02fb0000000a")
MACB = bytes.fromhex("02fb0000000b")
PER = 6  # datagrams per trick and rule

# Addresses: A sends from S (SRC for the source rule, MARK for the
# markers), B owns B and PFX (inside the destination rule's prefix).
NET = {
    4: dict(S="203.0.113.10", SRC="203.0.113.66", MARK="203.0.113.20",
            B="198.51.100.2", PFX="198.51.100.130", PFXNET="198.51.100.128/26"),
    6: dict(S="2001:db8:200::10", SRC="2001:db8:200::66", MARK="2001:db8:200::20",
            B="2001:db8:100::2", PFX="2001:db8:300::130", PFXNET="2001:db8:300::/48"),
}
MARK_PORT = 7000
# The range 6000-6999 is 20 port prefixes of two lengths (/13 and /9):
# its ends and the edges of its first prefix.
RANGE_PORTS = [6000, 6001, 6143, 6144, 6998, 6999]

# The blocked rules, per family: name, flowbloom FLOW, nft match, and the
# flow the traffic is of (proto, src key, sport, dst key, dport(i)).
def rules(fam):
    n = NET[fam]
    ip = "ip" if fam == 4 else "ip6"

    def hp(a, p):
        return f"{a}:{p}" if fam == 4 else f"[{a}]:{p}"
    return [
        ("udp5", f"udp {hp(n['S'], 40001)} {hp(n['B'], 5001)}",
         f"{ip} saddr {n['S']} {ip} daddr {n['B']} udp sport 40001 udp dport 5001",
         (17, "S", lambda i: 40001, "B", lambda i: 5001)),
        ("tcp5", f"tcp {hp(n['S'], 40002)} {hp(n['B'], 5002)}",
         f"{ip} saddr {n['S']} {ip} daddr {n['B']} tcp sport 40002 tcp dport 5002",
         (6, "S", lambda i: 40002, "B", lambda i: 5002)),
        ("src", f"src {n['SRC']}", f"{ip} saddr {n['SRC']}",
         (17, "SRC", lambda i: 40003, "B", lambda i: 5003)),
        ("dst", f"dst {n['PFXNET']}", f"{ip} daddr {n['PFXNET']}",
         (17, "S", lambda i: 40004, "PFX", lambda i: 5004)),
        ("shape", f"udp dst {n['B']} dport 5005", f"{ip} daddr {n['B']} udp dport 5005",
         (17, "S", lambda i: 41000 + i, "B", lambda i: 5005)),
        ("range", f"udp dst {n['B']} dport 6000-6999", f"{ip} daddr {n['B']} udp dport 6000-6999",
         (17, "S", lambda i: 40006, "B", lambda i: RANGE_PORTS[i % len(RANGE_PORTS)])),
    ]


SOCK_PORTS = [5001, 5003, 5004, 5005] + RANGE_PORTS


def nft_ruleset():
    out = ["table inet evasion {"]
    for fam in (4, 6):
        for name, _, _, _ in rules(fam):
            for ch in ("pre", "in"):
                out.append(f"  counter {ch}{fam}_{name} {{\n  }}")
    # Any ct expression makes the namespace track connections, which
    # registers conntrack's defragmentation (priority -400): the chains
    # below count whole datagrams, not fragments.
    out.append("  chain track {\n    type filter hook prerouting priority -300; policy accept;\n"
               "    ct state new,established,related,invalid,untracked\n  }")
    for ch, hook, prio in (("pre", "prerouting", -150), ("in", "input", 0)):
        out.append(f"  chain {ch} {{\n    type filter hook {hook} priority {prio}; policy accept;")
        for fam in (4, 6):
            for name, _, match, _ in rules(fam):
                out.append(f"    {match} counter name \"{ch}{fam}_{name}\"")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------- packets

def pseudo(fam, src, dst, proto, length):
    if fam == 4:
        return src + dst + struct.pack("!BBH", 0, proto, length)
    return src + dst + struct.pack("!I3xB", length, proto)


def udp(fam, src, dst, sport, dport, payload, extra=b""):
    """A UDP datagram; extra: bytes after it inside the IP payload (the UDP
    length is shorter than the IP payload, which the stack trims)."""
    h = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    c = csum(pseudo(fam, src, dst, 17, 8 + len(payload)) + h + payload) or 0xffff
    return h[:6] + struct.pack("!H", c) + payload + extra


TCP_OPTS = (b"\x02\x04\x05\xb4"                   # MSS 1460
            b"\x04\x02"                           # SACK permitted
            b"\x08\x0a\x00\x00\x30\x39\x00\x00\x00\x00"  # timestamps
            b"\x01\x03\x03\x07"                   # NOP, window scale 7
            b"\x01\x01\x1e\x06\xde\xad\xbe\xef"    # NOPs, an unknown kind 30
            + b"\x01" * 12)                       # 40 bytes: data offset 15


def tcp(fam, src, dst, sport, dport, payload, opts=b""):
    """A SYN (no GRO merging, a reset from B at most), with data."""
    assert len(opts) % 4 == 0
    off = (20 + len(opts)) // 4
    h = struct.pack("!HHIIBBHHH", sport, dport, 0x10000 + sport, 0, off << 4, 0x02, 65535, 0, 0) + opts
    c = csum(pseudo(fam, src, dst, 6, len(h) + len(payload)) + h + payload)
    return h[:16] + struct.pack("!H", c) + h[18:] + payload


def ipv4(src, dst, proto, body, ident, opts=b"", frag=0, mf=False, tot=None):
    assert len(opts) % 4 == 0
    ihl = 5 + len(opts) // 4
    tot = ihl * 4 + len(body) if tot is None else tot
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, tot, ident, (0x2000 if mf else 0) | frag // 8,
                    64, proto, 0, src, dst) + opts
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + body


def ipv6(src, dst, nh, body):
    return struct.pack("!IHBB16s16s", 0x60000000, len(body), nh, 64, src, dst) + body


def opthdr(nh, size=8):
    """Hop-by-hop or destination options of size bytes: experimental
    options (type 0x1e, skipped by those who do not know them) and PadN,
    never more than 7 padding bytes in a row (Linux refuses more)."""
    assert size % 8 == 0 and size >= 8
    body, left = b"", size - 2
    while left > 7:
        n = min(255, left - 2)
        body += bytes([0x1e, n]) + b"\xaa" * n
        left -= 2 + n
    if left == 1:
        body += b"\x00"
    elif left:
        body += bytes([1, left - 2]) + b"\0" * (left - 2)
    return bytes([nh, size // 8 - 1]) + body


def rthdr0(nh, addr):
    """Routing header type 0 with segments left 0: processed as done."""
    return bytes([nh, 2, 0, 0]) + b"\0" * 4 + addr


def fraghdr(nh, off, mf, ident):
    return struct.pack("!BBHI", nh, 0, off | (1 if mf else 0), ident)


def eth(payload, ethertype, tags=(), trailer=b""):
    """tags: (TPID, VID) outermost first."""
    out = MACB + MACA
    for tpid, vid in tags:
        out += struct.pack("!HH", tpid, vid)
    return out + struct.pack("!H", ethertype) + payload + trailer


# ------------------------------------------------------------- tricks
#
# A trick makes the frames of one datagram: trick(d) -> [frame bytes],
# where d holds the datagram (fam, src, dst, proto, l4 segment, ident) and
# helpers. kind: "core" (the stack takes it: the control run must count
# every datagram), "oracle" (the stack decides: counted or not, reported)
# or "malformed" (flowbloom cannot finish parsing it, by design: dropped
# under the default policy, reported under --malformed pass).

class D:
    pass


def l3(d, l4=None, **kw):
    """The datagram's IP packet (no fragmentation)."""
    l4 = d.l4 if l4 is None else l4
    if d.fam == 4:
        return ipv4(d.src, d.dst, d.proto, l4, d.ident, **kw)
    return ipv6(d.src, d.dst, d.proto, l4)


def e(d, pkt, tags=(), trailer=b""):
    return eth(pkt, 0x0800 if d.fam == 4 else 0x86dd, tags, trailer)


def pieces(data, cuts):
    """data cut at the byte offsets cuts: [(offset, bytes, more)]."""
    edges = [0] + list(cuts) + [len(data)]
    return [(a, data[a:b], b != len(data)) for a, b in zip(edges, edges[1:]) if b > a]


def v4frags(d, cuts, opts=b"", order=None, extra=()):
    ps = (pieces(d.l4, cuts) if cuts is not None else []) + list(extra)
    order = range(len(ps)) if order is None else order
    return [ipv4(d.src, d.dst, d.proto, ps[i][1], d.ident, opts if ps[i][0] == 0 else b"",
                 ps[i][0], ps[i][2]) for i in order]


def v6frags(d, cuts, unfrag=(), frag_part=(), order=None, extra=()):
    """unfrag: ext headers before the Fragment header (builders taking the
    next header); frag_part: after it, inside the fragmented data."""
    data, nh = d.l4, d.proto
    for b in reversed(frag_part):
        data, nh = b(nh) + data, b.proto
    ps = pieces(data, cuts) + list(extra)
    order = range(len(ps)) if order is None else order
    out = []
    for i in order:
        off, chunk, more = ps[i]
        body, first = fraghdr(nh, off, more, d.ident) + chunk, 44
        for b in reversed(unfrag):
            body, first = b(first) + body, b.proto
        out.append(ipv6(d.src, d.dst, first, body))
    return out


def v4flags(pkt, flags):
    """IPv4 pkt with its flags/fragment offset field set to flags."""
    h = pkt[:6] + struct.pack("!H", flags) + pkt[8:10] + b"\0\0" + pkt[12:(pkt[0] & 15) * 4]
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + pkt[len(h):]


def plen0(pkt):
    """IPv6 pkt with payload length 0 (a jumbogram's)."""
    return pkt[:4] + b"\0\0" + pkt[6:]


def ext(proto, make):
    """An extension header builder: make(nh) -> bytes; .proto its number."""
    def b(nh):
        return make(nh)
    b.proto = proto
    return b


HBH = ext(0, lambda nh: opthdr(nh, 8))
DST = ext(60, lambda nh: opthdr(nh, 8))
DST16 = ext(60, lambda nh: opthdr(nh, 16))
DSTBIG = ext(60, lambda nh: opthdr(nh, 1024))
ATOMIC = ext(44, lambda nh: fraghdr(nh, 0, False, 0x5eed))


def v6chain(d, hdrs, tags=(), trailer=b""):
    body, nh = d.l4, d.proto
    for b in reversed(hdrs):
        body, nh = b(nh) + body, b.proto
    return [e(d, ipv6(d.src, d.dst, nh, body), tags, trailer)]


def rt0(d):
    return ext(43, lambda nh: rthdr0(nh, d.dst))


Q, AD = 0x8100, 0x88a8
IPOPT_NOP = b"\x01\x01\x01\x00"  # NOP NOP NOP EOL
IPOPT_RA = b"\x94\x04\x00\x00"   # router alert
# Record route (room for two) and a timestamp (room for two), 40 bytes.
IPOPT_MAX = (b"\x07\x0b\x04" + b"\0" * 8 + b"\x01"
             + b"\x44\x0c\x05\x00" + b"\0" * 8 + b"\x94\x04\x00\x00" + b"\x01" * 11 + b"\x00")
assert len(IPOPT_MAX) == 40

TRICKS = []


def trick(name, fams, kind="core", protos=(6, 17)):
    def reg(f):
        TRICKS.append((name, fams, kind, protos, f))
        return f
    return reg


# Link layer: both families. B has no VLAN devices (the kernel these tests
# run on has none: CONFIG_VLAN_8021Q is off), and without one the stack
# takes only tags of VLAN 0 (priority tags: __netif_receive_skb_core strips
# them, one after the other, however many); other VLANs it drops (oracle:
# the control run shows 0). Tags carry priority and DEI bits beside VLAN 0.
for _n, _tags, _kind in (("plain", (), "core"),
                         ("prio_8100", ((Q, 0xa000),), "core"),
                         ("prio_88a8", ((AD, 0x3000),), "core"),
                         ("prio_88a8_8100", ((AD, 0), (Q, 0xe000)), "core"),
                         ("prio_8100_8100", ((Q, 0x2000), (Q, 0)), "core"),
                         ("vlan_100", ((Q, 100),), "oracle"),
                         ("qinq_300_30", ((AD, 300), (Q, 30)), "oracle"),
                         # One more tag than the parser reads.
                         ("prio_3_tags", ((Q, 0), (AD, 0), (Q, 0)), "malformed")):
    trick(_n, (4, 6), _kind)(lambda d, t=_tags: [e(d, l3(d), t)])
trick("pad_trailer", (4, 6))(lambda d: [e(d, l3(d), trailer=bytes(range(37)))])
trick("udp_len_short", (4, 6), protos=(17,))(
    lambda d: [e(d, l3(d, udp(d.fam, d.src, d.dst, d.sport, d.dport, d.payload, b"\x13" * 12)))])
trick("tcp_options", (4, 6), protos=(6,))(
    lambda d: [e(d, l3(d, tcp(d.fam, d.src, d.dst, d.sport, d.dport, d.payload, TCP_OPTS)))])

# IPv4 header tricks.
trick("ipv4_opt_nop", (4,))(lambda d: [e(d, l3(d, opts=IPOPT_NOP))])
trick("ipv4_opt_ra", (4,))(lambda d: [e(d, l3(d, opts=IPOPT_RA))])
trick("ipv4_ihl15", (4,))(lambda d: [e(d, l3(d, opts=IPOPT_MAX))])
trick("ipv4_ihl15_2tags_pad", (4,))(lambda d: [e(d, l3(d, opts=IPOPT_MAX), ((AD, 0), (Q, 0)), b"\0" * 9)])
# The reserved ("evil") flag, and DF beside MF: the stack ignores them.
trick("ipv4_evil_bit", (4,))(lambda d: [e(d, v4flags(l3(d), 0x8000))])
trick("frag4_df_mf", (4,))(
    lambda d: [e(d, v4flags(p, 0x6000) if i == 0 else p) for i, p in enumerate(v4frags(d, [8]))])
# The parser reads IPv4 ports from the frame, not bounded by the total
# length (bpf/parsing.bpf.h says why): a total length that cuts the ports,
# harmless ones in the padding after it, whole (oracle: the transport
# drops it) and as a first fragment of 2 bytes overlapping one with
# another source port, which a stack letting the later bytes win would
# make the blocked 5-tuple of (oracle: Linux drops the queue).
trick("ipv4_tot_cuts_ports", (4,), "oracle")(
    lambda d: [e(d, l3(d, d.l4[:2], tot=22), trailer=b"\x1b\x59" + d.l4[4:])])
trick("frag4_tiny_overlap", (4,), "oracle")(
    lambda d: [e(d, ipv4(d.src, d.dst, d.proto, b"\x04\xd2" + d.l4[2:8], d.ident, mf=True)),
               e(d, ipv4(d.src, d.dst, d.proto, d.l4[:2], d.ident, mf=True), trailer=b"\x1b\x59" + d.l4[4:8]),
               e(d, ipv4(d.src, d.dst, d.proto, d.l4[8:], d.ident, frag=8))])
# IPv4 fragments (the data of a first fragment is at least 8 bytes: the
# stack drops a shorter non-last one).
trick("frag4_first8", (4,))(lambda d: [e(d, p) for p in v4frags(d, [8])])
trick("frag4_reversed", (4,))(lambda d: [e(d, p) for p in v4frags(d, [8, 24], order=[2, 1, 0])])
trick("frag4_first_in_middle", (4,))(lambda d: [e(d, p) for p in v4frags(d, [16, 32], order=[2, 0, 1])])
trick("frag4_all8", (4,))(lambda d: [e(d, p) for p in v4frags(d, range(8, len(d.l4), 8))])
trick("frag4_opts_vlan", (4,))(lambda d: [e(d, p, ((Q, 0x4000),)) for p in v4frags(d, [8, 24], IPOPT_MAX)])
# A duplicate inside an earlier fragment: dropped alone, the datagram kept.
trick("frag4_dup", (4,))(lambda d: [e(d, p) for p in v4frags(d, [16], order=[0, 2, 1],
                                                           extra=[(8, d.l4[8:16], True)])])
# A partial overlap: Linux drops the whole datagram (oracle).
trick("frag4_overlap", (4,), "oracle")(
    lambda d: [e(d, p) for p in v4frags(d, [16], order=[0, 2, 1], extra=[(8, d.l4[8:24], True)])])
# A first fragment of 12 bytes, not a multiple of 8: the stack keeps 8
# of them, and the second fragment starts at 8 (oracle).
trick("frag4_first12", (4,), "oracle")(
    lambda d: [e(d, p) for p in v4frags(d, None, extra=[(0, d.l4[:12], True), (8, d.l4[8:], False)])])
# Another first fragment (benign ports) after the real one (oracle: the
# stack keeps the first it got).
trick("frag4_first_twice", (4,), "oracle")(
    lambda d: [e(d, p) for p in v4frags(d, [8], order=[0, 2, 1],
                                        extra=[(0, b"\x9c\x41\x1b\x59" + d.l4[4:8], True)])])

# IPv6 extension headers.
trick("ipv6_hbh", (6,))(lambda d: v6chain(d, [HBH]))
trick("ipv6_dstopts", (6,))(lambda d: v6chain(d, [DST16]))
trick("ipv6_rt0_segleft0", (6,))(lambda d: v6chain(d, [rt0(d)]))
trick("ipv6_chain4", (6,))(lambda d: v6chain(d, [HBH, DST, rt0(d), DST16]))
trick("ipv6_atomic_frag", (6,))(lambda d: v6chain(d, [ATOMIC]))
trick("ipv6_atomic_chain", (6,))(lambda d: v6chain(d, [HBH, ATOMIC, rt0(d), DST16]))
# Orders Linux refuses at the Fragment header (after a routing or
# destination options header, or a second one), after nftables saw them:
# counted at prerouting and input, never delivered (oracle).
trick("ipv6_two_atomic", (6,), "oracle")(lambda d: v6chain(d, [ATOMIC, ATOMIC]))
trick("ipv6_dstopts_1k", (6,))(lambda d: v6chain(d, [DSTBIG]))
trick("ipv6_chain8_2tags_pad", (6,))(lambda d: v6chain(d, [HBH] + [DST] * 7, ((AD, 0), (Q, 0)), b"\0" * 11))
trick("ipv6_chain9", (6,), "malformed")(lambda d: v6chain(d, [HBH] + [DST] * 8))
# Payload length 0 before hop-by-hop options without a jumbo option: the
# stack takes the frame's length (ipv6_rcv() trims only when the length is
# not 0), trailing bytes and all. Without hop-by-hop it trims the packet
# to its fixed header (oracle: nothing is delivered).
trick("ipv6_plen0_hbh", (6,))(lambda d: [e(d, plen0(ipv6(d.src, d.dst, 0, HBH(d.proto) + d.l4)))])
trick("ipv6_plen0_hbh_pad", (6,))(
    lambda d: [e(d, plen0(ipv6(d.src, d.dst, 0, HBH(d.proto) + d.l4)), trailer=b"\x5a" * 23)])
trick("ipv6_plen0", (6,), "oracle")(lambda d: [e(d, plen0(l3(d)))])
# IPv6 fragments.
trick("frag6_first8", (6,))(lambda d: [e(d, p) for p in v6frags(d, [8])])
trick("frag6_reversed", (6,))(lambda d: [e(d, p) for p in v6frags(d, [8, 24], order=[2, 1, 0])])
trick("frag6_first_in_middle", (6,))(lambda d: [e(d, p) for p in v6frags(d, [16, 32], order=[2, 0, 1])])
trick("frag6_all8", (6,))(lambda d: [e(d, p) for p in v6frags(d, range(8, len(d.l4), 8))])
# The fragment header's reserved byte and two reserved bits set.
trick("frag6_resbits", (6,))(
    lambda d: [e(d, p[:41] + b"\xff" + p[42:43] + bytes([p[43] | 6]) + p[44:]) for p in v6frags(d, [8])])
trick("frag6_chain", (6,))(
    lambda d: [e(d, p, ((Q, 0),)) for p in v6frags(d, [40], unfrag=[HBH], frag_part=[rt0(d), DST])])
# The first fragment ends inside the header chain, with another extension
# header after the cut: RFC 8200 says drop it, Linux reassembles it (its
# check, ipv6_frag_thdr_truncated(), cannot walk the chain and lets it
# be). The ports are only in the second fragment. Under --malformed pass
# these went past every 5-tuple and port rule (fb_split_drop() in
# bpf/flowbloom.bpf.c closed it).
trick("frag6_cut_in_header", (6,))(
    lambda d: [e(d, p, ((Q, 0),)) for p in v6frags(d, [16], unfrag=[HBH], frag_part=[rt0(d), DST])])
# The fragmentable part starts with destination options: the later
# fragments' fragment header names them (60), not the transport, and the
# first carries the ports (RFC 8200: the whole header chain).
trick("frag6_dstopts_first", (6,))(lambda d: [e(d, p) for p in v6frags(d, [16], frag_part=[DST])])
trick("frag6_dstopts_reversed", (6,))(
    lambda d: [e(d, p) for p in v6frags(d, [24, 40], frag_part=[DST16], order=[2, 1, 0])])
trick("frag6_cut_between_headers", (6,))(
    lambda d: [e(d, p) for p in v6frags(d, [16], frag_part=[DST16, DST], order=[1, 0])])


def padded_first(d):
    """frag6_cut_in_header's first fragment, whose frame goes on past its
    IP length with the rest of the chain and a transport header to a
    harmless port (40001 -> 7001): padding the stack trims, so it
    reassembles the datagram with the second fragment's real ports. A
    parser that reads the frame instead of the packet saw a datagram to
    port 7001 and passed both fragments under every port rule."""
    data = DST16(DST.proto) + DST(d.proto) + d.l4
    first, second = v6frags(d, [8], frag_part=[DST16, DST])
    fake = data[8:24] + b"\x9c\x41\x1b\x59" + d.l4[4:]
    return [e(d, first, trailer=fake), e(d, second)]


trick("frag6_cut_padded", (6,))(padded_first)
trick("frag6_after_rt0", (6,), "oracle")(
    lambda d: [e(d, p) for p in v6frags(d, [16], unfrag=[HBH, DST, rt0(d)])])
trick("frag6_dup", (6,), "oracle")(lambda d: [e(d, p) for p in v6frags(d, [16], order=[0, 2, 1],
                                                                     extra=[(8, d.l4[8:16], True)])])
trick("frag6_overlap", (6,), "oracle")(
    lambda d: [e(d, p) for p in v6frags(d, [16], order=[0, 2, 1], extra=[(8, d.l4[8:24], True)])])
# The upper-layer header in the second fragment (RFC 8200 says drop it).
trick("frag6_ports_in_second", (6,), "oracle")(
    lambda d: [e(d, p) for p in v6frags(d, [8], frag_part=[DST])])
trick("frag6_first_twice", (6,), "oracle")(
    lambda d: [e(d, p) for p in v6frags(d, [8], order=[0, 2, 1],
                                        extra=[(0, b"\x9c\x41\x1b\x59" + d.l4[4:8], True)])])


def datagrams(fam, run, seq0):
    """Every (trick, rule, kind, [frames]) of a family, deterministic per run."""
    n = NET[fam]
    addr = {k: ipaddress.ip_address(v).packed for k, v in n.items() if k != "PFXNET"}
    out = []
    seq = seq0
    for tname, fams, kind, protos, make in TRICKS:
        if fam not in fams:
            continue
        for rname, _, _, (proto, sk, sport, dk, dport) in rules(fam):
            if proto not in protos:
                continue
            frames = []
            for i in range(PER):
                d = D()
                d.fam, d.proto = fam, proto
                d.src, d.dst = addr[sk], addr[dk]
                d.sport, d.dport = sport(i), dport(i)
                seq += 1
                d.ident = seq & 0xffff
                d.payload = f"EV {run} {fam} {tname} {rname} {i} ".encode().ljust(48, b".")
                if proto == 17:
                    d.l4 = udp(fam, d.src, d.dst, d.sport, d.dport, d.payload)
                else:
                    d.l4 = tcp(fam, d.src, d.dst, d.sport, d.dport, d.payload)
                frames += make(d)
            out.append((tname, rname, kind, proto, frames))
    return out, seq


# ------------------------------------------------------------- sending

CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)


def setns(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {path}")
    finally:
        os.close(fd)


def nft_reset():
    out = subprocess.run(["nft", "-j", "reset", "counters", "table", "inet", "evasion"],
                         check=True, capture_output=True, text=True).stdout
    return {c["counter"]["name"]: c["counter"]["packets"]
            for c in json.loads(out)["nftables"] if "counter" in c}


def xdp_drops(dev):
    """veth's XDP drops (all queues), for the report."""
    out = subprocess.run(["ethtool", "-S", dev], capture_output=True, text=True).stdout
    return sum(int(l.split(":")[1]) for l in out.splitlines() if "_xdp_drops:" in l)


def send(nsa, nsb, dev_a, dev_b, run, outpath):
    socks = {}
    for p in SOCK_PORTS + [MARK_PORT]:
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        s.bind(("::", p))
        s.setblocking(False)
        socks[p] = s
    setns(nsa)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((dev_a, 0))
    setns(nsb)
    nft_reset()
    mark_no = [0]

    def drain():
        got = []
        for p, s in socks.items():
            if p == MARK_PORT:
                continue
            while True:
                try:
                    got.append(s.recv(2048))
                except BlockingIOError:
                    break
        return got

    def marker():
        """Wait until B has taken every frame sent before (one queue, in
        order): a datagram no rule blocks, to a socket of ours."""
        mark_no[0] += 1
        want = f"MARK {run} {mark_no[0]}".encode()
        for fam in (4, 6):
            n = NET[fam]
            src, dst = (ipaddress.ip_address(n[k]).packed for k in ("MARK", "B"))
            d = D()
            d.fam, d.src, d.dst, d.proto, d.ident = fam, src, dst, 17, 0
            d.l4 = udp(fam, src, dst, MARK_PORT, MARK_PORT, want)
            tx.send(e(d, l3(d)))
        seen, end = 0, time.monotonic() + 10
        while seen < 2 and time.monotonic() < end:
            if select.select([socks[MARK_PORT]], [], [], 0.5)[0]:
                while True:
                    try:
                        if socks[MARK_PORT].recv(2048) == want:
                            seen += 1
                    except BlockingIOError:
                        break
        if seen < 2:
            raise SystemExit(f"marker {want!r} never arrived: B did not take the traffic")

    results = []
    seq = {"control": 0, "drop": 100000, "pass": 200000}.get(run, 300000)
    base_drops = xdp_drops(dev_b)
    for fam in (4, 6):
        batch, seq = datagrams(fam, run, seq)
        by_trick = {}
        for tname, rname, kind, proto, frames in batch:
            by_trick.setdefault(tname, (kind, []))[1].append((rname, proto, frames))
        for tname, (kind, items) in by_trick.items():
            nframes = 0
            for rname, proto, frames in items:
                for f in frames:
                    tx.send(f)
                nframes += len(frames)
            marker()
            counts = nft_reset()
            got = drain()
            drops = xdp_drops(dev_b)
            for rname, proto, frames in items:
                tag = f"EV {run} {fam} {tname} {rname} ".encode()
                results.append(dict(
                    fam=fam, trick=tname, rule=rname, kind=kind, proto=proto,
                    frames=len(frames), datagrams=PER,
                    pre=counts[f"pre{fam}_{rname}"], inp=counts[f"in{fam}_{rname}"],
                    sock=sum(1 for g in got if g.startswith(tag)) if proto == 17 else None))
            results.append(dict(fam=fam, trick=tname, rule="*", frames=nframes,
                                xdp_drops=drops - base_drops))
            base_drops = drops
            # Anything of another trick or run on the sockets is a leak
            # the per-trick counts would miss.
            stray = [g for g in got if not g.startswith(f"EV {run} {fam} {tname} ".encode())]
            if stray:
                results.append(dict(fam=fam, trick=tname, rule="?", stray=len(stray)))
    with open(outpath, "w") as f:
        json.dump(results, f)


# ------------------------------------------------------------- report

def report(paths):
    runs = {}
    for label, p in zip(("control", "drop", "pass"), paths):
        with open(p) as f:
            runs[label] = json.load(f)
    idx = {lab: {(r["fam"], r["trick"], r["rule"]): r for r in rs} for lab, rs in runs.items()}
    lines = []
    table = []

    def chk(ok, label, why=""):
        lines.append(("ok " if ok else "bad ") + label + ("" if ok else ": " + why))

    for lab, rs in runs.items():
        stray = sum(r.get("stray", 0) for r in rs)
        chk(stray == 0, f"{lab}: the sockets got only this run's datagrams", f"{stray} strays")
    keys = [(r["fam"], r["trick"]) for r in runs["control"] if r["rule"] == "*"]
    for fam, tname in keys:
        rows = [r for (f, t, rule), r in idx["control"].items() if f == fam and t == tname and rule not in "*?"]
        kind = rows[0]["kind"]
        tot = {lab: dict(pre=0, inp=0, sock=0, frames=0, dgrams=0) for lab in runs}
        for r in rows:
            key = (fam, tname, r["rule"])
            for lab in runs:
                x = idx[lab][key]
                for k in ("pre", "inp", "frames"):
                    tot[lab][k] += x[k]
                tot[lab]["sock"] += x["sock"] or 0
                tot[lab]["dgrams"] += x["datagrams"]
            c = idx["control"][key]
            label = f"ipv{fam} {tname} {r['rule']}"
            if kind != "oracle":
                want = c["datagrams"]
                ok = c["pre"] == want and c["inp"] == want and (c["sock"] is None or c["sock"] == want)
                chk(ok, f"control: the stack counts every {label} datagram",
                    f"pre {c['pre']} input {c['inp']} socket {c['sock']}, want {want}")
            for lab in ("drop", "pass"):
                x = idx[lab][key]
                leaked = max(x["pre"], x["inp"], x["sock"] or 0)
                if lab == "pass" and kind == "malformed":
                    continue  # reported below: not parsed, passed by choice
                chk(leaked == 0, f"{lab}: no {label} datagram reaches the stack",
                    f"pre {x['pre']} input {x['inp']} socket {x['sock']} (control {c['pre']})")
        drops = {lab: idx[lab][(fam, tname, "*")]["xdp_drops"] for lab in runs}
        table.append((f"ipv{fam}", tname, kind, tot["control"]["frames"], tot["control"]["dgrams"],
                      tot["control"]["pre"], tot["control"]["inp"], tot["control"]["sock"], drops["control"],
                      tot["drop"]["pre"], tot["drop"]["inp"], tot["drop"]["sock"], drops["drop"],
                      tot["pass"]["pre"], tot["pass"]["inp"], tot["pass"]["sock"], drops["pass"]))
    for l in lines:
        print(l)
    print("table")
    head = ("fam   trick                    kind      frames dgrams | control: pre   in sock xdrop |"
            " drop: pre  in sock xdrop | pass: pre  in sock xdrop")
    fmt = "%-5s %-24s %-9s %6d %6d |         %4d %4d %4d %5d |       %3d %3d %3d %5d |       %3d %3d %3d %5d"
    print(head)
    for t in table:
        print(fmt % t)
    print(fmt % ("all", "", "", *[sum(t[i] for t in table) for i in range(3, 17)]))


def main():
    cmd = sys.argv[1]
    if cmd == "rules":
        for fam in (4, 6):
            for _, flow, _, _ in rules(fam):
                print(flow)
    elif cmd == "nft":
        sys.stdout.write(nft_ruleset())
    elif cmd == "send":
        send(*sys.argv[2:8])
    elif cmd == "report":
        report(sys.argv[2:5])
    else:
        raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
