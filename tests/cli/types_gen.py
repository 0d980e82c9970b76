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
import struct, sys

def csum(b):
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while t >> 16:
        t = (t & 0xffff) + (t >> 16)
    return ~t & 0xffff

def pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i // 1000000, i % 1000000, len(fr), len(fr)) + fr)

ETH4 = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"
ETH6 = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x86\xdd"

def flow(i):
    return (198, 51, 100, (i // 60000) % 256), 1 + i % 60000, (203, 0, 113, (i // 7) % 251), 53 + i % 7

def v4frame(i):
    s, sp, d, dp = flow(i)
    udp = struct.pack("!HHHH", sp, dp, 8, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, i & 0xffff, 0, 64, 17, 0, bytes(s), bytes(d))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ETH4 + ip + udp

if sys.argv[1] == "flows":
    path, cap, n, off = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    with open(path, "w") as f:
        f.write("".join("udp %d.%d.%d.%d:%d %d.%d.%d.%d:%d\n" % (*flow(i)[0], flow(i)[1], *flow(i)[2], flow(i)[3])
                        for i in range(off, off + n)))
    pcap(cap, (v4frame(i) for i in range(off, off + n)))
elif sys.argv[1] == "v6":
    cap, n = sys.argv[2], int(sys.argv[3])
    src = lambda i: bytes.fromhex("20010db80001000000000000%08x" % (i + 1))
    dst = bytes.fromhex("20010db8000200000000000000000001")
    pcap(cap, (ETH6 + struct.pack("!IHBB", 0x60000000, 8, 17, 64) + src(i) + dst +
               struct.pack("!HHHH", 1000 + i, 53, 8, 0) for i in range(n)))
