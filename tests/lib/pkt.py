# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Packets and pcap files for the python of the test suites.

The one copy of what the suites' python (the heredocs of tests/cli/*.sh and
tests/e2e/*.sh, tests/cli/types_gen.py, tests/e2e/evasion.py) builds
frames and captures with. tests/lib/lib.sh puts tests/lib on PYTHONPATH
for every python a suite starts, in a namespace or not, so a heredoc only
says `from pkt import csum, ip4, pcap_write`; a .py file run by hand puts
its ../lib on sys.path itself.

  csum(b)           the Internet checksum of b (RFC 1071): the ones'
                    complement of the ones'-complement sum of its 16-bit
                    big-endian words, an odd last byte padded with a zero.
                    Over an IPv4 header whose checksum field is 0 it is
                    that field; over an ICMPv4 message likewise; over a
                    pseudo-header + UDP/TCP segment, the L4 checksum.
  ip4(a)            "198.51.100.1" -> its 4 bytes.
  ether(ethertype, dst=MAC_DST, src=MAC_SRC)
                    an Ethernet II header, 14 bytes; the default addresses
                    are locally administered (02:00:00:00:00:02 and :01).
  ipv4_udp(src, sport, dst, dport, payload=b"", ident=0)
                    an IPv4 packet (IHL 5, TOS 0, no flags or fragment
                    offset, TTL 64, header checksum set) holding one UDP
                    datagram (UDP checksum 0: none, RFC 768); src and dst
                    are 4 bytes each (ip4() makes them).
  pcap_header(linktype=1)
                    the 24-byte pcap file header: magic 0xa1b2c3d4 written
                    little-endian (microsecond stamps), version 2.4, zone
                    and accuracy 0, snaplen 65535, the link type (1
                    Ethernet, 276 LINUX_SLL2).
  pcap_record(frame, sec=0, usec=0)
                    one record: its 16-byte header (stamp, captured and
                    original length, both len(frame)) and the frame.
  pcap_write(path, frames, stamp=None, linktype=1)
                    a pcap file of frames (any iterable), record i stamped
                    stamp(i) -> (sec, usec), or 0.0 without stamp.

Whole Ethernet frames, addresses written as text ("198.51.100.1",
"2001:db8::1"), every checksum set:

  a6(a)             "2001:db8::1" -> its 16 bytes.
  v4(proto, src, dst, l4) / v6(proto, src, dst, l4)
                    Ethernet + an IPv4 header (IHL 5, ident 7, DF, TTL 64,
                    checksum set) or IPv6 header (hop limit 64) around the
                    upper-layer bytes l4.
  l4sum(l4, at, pseudo)
                    l4 with the checksum over pseudo + l4 written at at.
  tcp(sport, dport, pseudo)
                    a 20-byte TCP SYN, its checksum over pseudo (the
                    pseudo-header's addresses; length and protocol added).
  tcp4, udp4, tcp6, udp6(src, sport, dst, dport)
                    a TCP SYN or a UDP datagram of 4 bytes ("ping") in a
                    frame.
  icmp4(src, dst) / icmp6(src, dst)
                    an ICMP / ICMPv6 echo request (id 1, seq 1, "ping").

Sending (in a namespace, as root):

  send_paced(dev, secs, specs)
                    for secs seconds, through an AF_PACKET socket on dev,
                    UDP frames (udp4, port 4000 to 198.51.100.1:9) from
                    each spec "SRC=PPS[@FROM-TO]": SRC at PPS frames a
                    second, never ahead of PPS x time, from FROM to TO s
                    (all of secs without).

The pcap layout is libpcap's savefile format (pcap-savefile(5); the IETF
draft draft-ietf-opsawg-pcap describes the same bytes).
"""
import json
import os
import socket
import struct
import time

MAC_DST = b"\x02\x00\x00\x00\x00\x02"
MAC_SRC = b"\x02\x00\x00\x00\x00\x01"


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip4(a):
    return bytes(int(x) for x in a.split("."))


def ether(ethertype, dst=MAC_DST, src=MAC_SRC):
    return dst + src + struct.pack("!H", ethertype)


def ipv4_udp(src, sport, dst, dport, payload=b"", ident=0):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident, 0, 64, 17, 0, src, dst)
    return ip[:10] + struct.pack("!H", csum(ip)) + ip[12:] + udp


def pcap_header(linktype=1):
    return struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, linktype)


def pcap_record(frame, sec=0, usec=0):
    return struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame


def pcap_write(path, frames, stamp=None, linktype=1):
    with open(path, "wb") as f:
        f.write(pcap_header(linktype))
        for i, fr in enumerate(frames):
            f.write(pcap_record(fr, *(stamp(i) if stamp else (0, 0))))


def a6(a):
    return socket.inet_pton(socket.AF_INET6, a)


def v4(proto, src, dst, l4):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 7, 0x4000, 64, proto, 0, ip4(src), ip4(dst))
    return ether(0x0800) + ip[:10] + struct.pack("!H", csum(ip)) + ip[12:] + l4


def v6(proto, src, dst, l4):
    return ether(0x86dd) + struct.pack("!IHBB16s16s", 0x60000000, len(l4), proto, 64, a6(src), a6(dst)) + l4


def l4sum(l4, at, pseudo):
    return l4[:at] + struct.pack("!H", csum(pseudo + l4)) + l4[at + 2:]


def tcp(sport, dport, pseudo):
    seg = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 5 << 4, 2, 65535, 0, 0)
    return l4sum(seg, 16, pseudo + struct.pack("!BBH", 0, 6, len(seg)))


def tcp4(src, sport, dst, dport):
    return v4(6, src, dst, tcp(sport, dport, ip4(src) + ip4(dst)))


def tcp6(src, sport, dst, dport):
    return v6(6, src, dst, tcp(sport, dport, a6(src) + a6(dst)))


def udp4(src, sport, dst, dport):
    return ether(0x0800) + ipv4_udp(ip4(src), sport, ip4(dst), dport, b"ping")


def udp6(src, sport, dst, dport):
    seg = struct.pack("!HHHH", sport, dport, 12, 0) + b"ping"
    return v6(17, src, dst, l4sum(seg, 6, a6(src) + a6(dst) + struct.pack("!IxxxB", len(seg), 17)))


def icmp4(src, dst):
    msg = struct.pack("!BBHHH", 8, 0, 0, 1, 1) + b"ping"
    return v4(1, src, dst, l4sum(msg, 2, b""))


def icmp6(src, dst):
    msg = struct.pack("!BBHHH", 128, 0, 0, 1, 1) + b"ping"
    return v6(58, src, dst, l4sum(msg, 2, a6(src) + a6(dst) + struct.pack("!IxxxB", len(msg), 58)))


def send_paced(dev, secs, specs):
    # PACED_LOG=FILE: what was sent, when: a JSON list of [seconds since
    # the start, spec index, frames], a line of it per burst, so a check
    # judges the rate the sender achieved (a loaded machine stalls it,
    # then it catches up), not the one it was asked for.
    log = [] if os.environ.get("PACED_LOG") else None
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    sp = []
    for a in specs:
        src, _, rest = a.partition("=")
        pps, _, win = rest.partition("@")
        lo, _, hi = win.partition("-") if win else ("0", "", str(secs))
        sp.append([udp4(src, 4000, "198.51.100.1", 9), float(pps), float(lo), float(hi), 0])
    t0 = time.time()
    while time.time() - t0 < secs:
        now = time.time() - t0
        for i, f in enumerate(sp):
            want = int(f[1] * (min(now, f[3]) - f[2])) if now >= f[2] else 0
            n = f[4]
            while f[4] < want:
                s.send(f[0])
                f[4] += 1
            if log is not None and f[4] > n:
                log.append([round(time.time() - t0, 6), i, f[4] - n])
        time.sleep(0.0005)
    if log is not None:
        with open(os.environ["PACED_LOG"], "w") as fp:
            json.dump(log, fp)
