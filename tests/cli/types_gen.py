#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Flows and captures for tests/cli/types_cli.sh.
#   types_gen.py flows FILE PCAP N OFF   N distinct UDP 5-tuples from index
#                                        OFF: one FLOW per line in FILE, one
#                                        packet each in PCAP (same order)
#   types_gen.py v6 PCAP N               N IPv6 UDP packets from
#                                        2001:db8:1::/48 to 2001:db8:2::1
# Flow i: 198.51.100.(i / 60000 % 256):(1 + i % 60000) ->
# 203.0.113.(i / 7 % 251):(53 + i % 7): distinct for i < 15,360,000.
import os, struct, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pkt import ether, ipv4_udp, pcap_header, pcap_write  # noqa: E402

def stamp(i):
    return 1700000000 + i // 1000000, i % 1000000

ETH4 = ether(0x0800)
ETH6 = ether(0x86dd)

def flow(i):
    return (198, 51, 100, (i // 60000) % 256), 1 + i % 60000, (203, 0, 113, (i // 7) % 251), 53 + i % 7

def v4frame(i):
    s, sp, d, dp = flow(i)
    return ETH4 + ipv4_udp(bytes(s), sp, bytes(d), dp, ident=i & 0xffff)

def flows(path, cap, n, off):
    """FILE and PCAP of flows off..off+n-1: what pcap_write() of v4frame()
    stamped by stamp() writes, a few times faster (the test makes a
    million): one pack per record, and the header checksum from the only words that vary, the id and the last
    octets of the addresses (RFC 1071: a sum of 16-bit words, folded)."""
    with open(path, "w") as f:
        f.write("".join("udp 198.51.100.%d:%d 203.0.113.%d:%d\n"
                        % ((i // 60000) % 256, 1 + i % 60000, (i // 7) % 251, 53 + i % 7)
                        for i in range(off, off + n)))
    hdr = struct.Struct("<IIII")
    frame = struct.Struct("!14s6H4B2H4H")  # Ethernet, IPv4 (dst as 2 words), UDP
    const = 0x4500 + 28 + 0x4011 + 0xC633 + 0x6400 + 0xCB00 + 0x7100
    with open(cap, "wb") as f:
        f.write(pcap_header())
        out = []
        for j, i in enumerate(range(off, off + n)):
            a, b, ident = (i // 60000) % 256, (i // 7) % 251, i & 0xffff
            t = const + ident + a + b
            while t >> 16:
                t = (t & 0xffff) + (t >> 16)
            out.append(hdr.pack(1700000000 + j // 1000000, j % 1000000, 42, 42))
            out.append(frame.pack(ETH4, 0x4500, 28, ident, 0, 0x4011, ~t & 0xffff,
                                  198, 51, 100, a, 0xCB00, 0x7100 | b, 1 + i % 60000, 53 + i % 7, 8, 0))
            if len(out) >= 131072:
                f.write(b"".join(out))
                out = []
        f.write(b"".join(out))

if sys.argv[1] == "flows":
    flows(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
elif sys.argv[1] == "v6":
    cap, n = sys.argv[2], int(sys.argv[3])
    src = lambda i: bytes.fromhex("20010db80001000000000000%08x" % (i + 1))
    dst = bytes.fromhex("20010db8000200000000000000000001")
    pcap_write(cap, (ETH6 + struct.pack("!IHBB", 0x60000000, 8, 17, 64) + src(i) + dst +
                     struct.pack("!HHHH", 1000 + i, 53, 8, 0) for i in range(n)), stamp)
