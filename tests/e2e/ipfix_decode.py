#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# An IPFIX collector for the tests, written from RFC 7011 alone (so it checks
# libfixbuf's output rather than trusting it): listens on UDP or TCP, decodes
# every message, and writes one JSON object a line to OUT:
#   {"msg": {"version", "length", "export_time", "seq", "domain", "data_records",
#            "recv": CLOCK_MONOTONIC seconds when it arrived}}
#   {"template": ID, "fields": [[IE, LEN, PEN], ...]}
#   {"withdrawn": ID} for a template withdrawal (a template record of no
#       fields, section 8.1; the template is then unknown)
#   {"tid": ID, "rec": {"IE": value or [values...]}}
#   {"error": "..."} for anything malformed.
# Usage: ipfix_decode.py udp|tcp ADDR PORT OUT [TEE_PORT...]   (runs until SIGTERM)
#   UDP datagrams are also forwarded, as they are, to 127.0.0.1:TEE_PORT (so
#   other collectors see the very same stream).
# And two helpers for the sums the tests compare:
#   ipfix_decode.py sum OUT...   packets and octets per flow in the flow and
#       estimate records (templates 258-261), one JSON object
#   ipfix_decode.py truth PCAP   the same from a capture (Ethernet): every IPv4
#       and IPv6 packet's IP total length, per flow
#   ipfix_decode.py gaps PCAP   the longest time between two packets of a flow
#       in the capture, in seconds, per flow
# A flow is "PROTO SRC SPORT DST DPORT"; ICMP and ICMPv6 have ports 0.
import ipaddress
import json
import signal
import socket
import struct
import sys
import time



def flowkey(proto, src, sport, dst, dport):
    if proto in (1, 58):
        sport = dport = 0
    return "%d %s %d %s %d" % (proto, ipaddress.ip_address(src), sport,
                               ipaddress.ip_address(dst), dport)


def sums(paths):
    tot = {}
    for path in paths:
        for line in open(path):
            o = json.loads(line)
            if o.get("tid", 0) not in (258, 259, 260, 261):
                continue
            r = o["rec"]
            k = flowkey(r["4"], r.get("8") or r.get("27"), r["7"], r.get("12") or r.get("28"),
                        r["11"])
            t = tot.setdefault(k, [0, 0])
            t[0] += r["2"]
            t[1] += r.get("1", r.get("352", 0))
    return tot


def truth(path, times=None):
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    off, tot = 24, {}
    while off + 16 <= len(data):
        sec, usec, incl = struct.unpack(end + "III", data[off:off + 12])
        f = data[off + 16:off + 16 + incl]
        off += 16 + incl
        et = struct.unpack("!H", f[12:14])[0]
        ip = f[14:]
        if et == 0x0800:
            n, proto, src, dst = struct.unpack("!H", ip[2:4])[0], ip[9], ip[12:16], ip[16:20]
            l4 = ip[(ip[0] & 15) * 4:]
        elif et == 0x86dd:
            n, proto, src, dst = struct.unpack("!H", ip[4:6])[0] + 40, ip[6], ip[8:24], ip[24:40]
            l4 = ip[40:]
            while proto in (0, 43, 60):  # hop-by-hop, routing, destination options
                proto, l4 = l4[0], l4[(l4[1] + 1) * 8:]
        else:
            continue
        sport, dport = struct.unpack("!HH", l4[:4]) if proto in (6, 17) else (0, 0)
        t = tot.setdefault(flowkey(proto, src, sport, dst, dport), [0, 0])
        t[0] += 1
        t[1] += n
        if times is not None:
            times.setdefault(flowkey(proto, src, sport, dst, dport), []).append(
                sec + usec / (1e9 if magic in (0xa1b23c4d, 0x4d3cb2a1) else 1e6))
    return tot


def gaps(path):
    times = {}
    truth(path, times)
    return {k: max([b - a for a, b in zip(v, v[1:])] or [0]) for k, v in times.items()}


if sys.argv[1] == "sum":
    print(json.dumps(sums(sys.argv[2:])))
    sys.exit(0)
if sys.argv[1] == "gaps":
    print(json.dumps(gaps(sys.argv[2])))
    sys.exit(0)
if sys.argv[1] == "truth":
    print(json.dumps(truth(sys.argv[2])))
    sys.exit(0)

proto, addr, port, out_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
tees = [int(p) for p in sys.argv[5:]]
out = open(out_path, "w", buffering=1)
templates = {}  # (domain, tid) -> fields
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))

UNSIGNED = {1, 2, 4, 5, 6, 7, 10, 11, 14, 32, 58, 61, 89, 136, 139, 152, 153, 352}
FLOAT = {336, 337, 338}


def value(ie, raw):
    if ie in (8, 12):
        return str(ipaddress.IPv4Address(raw))
    if ie in (27, 28):
        return str(ipaddress.IPv6Address(raw))
    if ie in FLOAT:
        return struct.unpack("!d", raw)[0]
    if ie in UNSIGNED:
        return int.from_bytes(raw, "big")
    return raw.hex()


def emit(o):
    out.write(json.dumps(o) + "\n")


def message(m):
    recv = time.monotonic()
    if len(m) < 16:
        return emit({"error": "short message"})
    ver, length, etime, seq, dom = struct.unpack("!HHIII", m[:16])
    if ver != 10 or length != len(m):
        return emit({"error": "bad header: version %d length %d of %d" % (ver, length, len(m))})
    ndata = 0
    off = 16
    recs = []
    while off < length:
        if off + 4 > length:
            return emit({"error": "truncated set header"})
        sid, slen = struct.unpack("!HH", m[off:off + 4])
        if slen < 4 or off + slen > length:
            return emit({"error": "bad set length %d" % slen})
        body, off = m[off + 4:off + slen], off + slen
        if sid == 2:
            p = 0
            while p + 4 <= len(body):
                tid, n = struct.unpack("!HH", body[p:p + 4])
                p += 4
                if n == 0:
                    templates.pop((dom, tid), None)
                    recs.append({"withdrawn": tid})
                    continue
                fields = []
                for _ in range(n):
                    ie, fl = struct.unpack("!HH", body[p:p + 4])
                    p += 4
                    pen = 0
                    if ie & 0x8000:
                        pen = struct.unpack("!I", body[p:p + 4])[0]
                        p += 4
                        ie &= 0x7fff
                    fields.append([ie, fl, pen])
                templates[(dom, tid)] = fields
                recs.append({"template": tid, "fields": fields})
        elif sid >= 256:
            fields = templates.get((dom, sid))
            if fields is None:
                recs.append({"error": "data set %d before its template" % sid})
                continue
            size = sum(f[1] for f in fields)
            p = 0
            while p + size <= len(body) and size:
                rec = {}
                for ie, fl, pen in fields:
                    v = value(ie, body[p:p + fl])
                    p += fl
                    k = str(ie)
                    if k in rec:
                        rec[k] = (rec[k] if isinstance(rec[k], list) else [rec[k]]) + [v]
                    else:
                        rec[k] = v
                recs.append({"tid": sid, "rec": rec})
                ndata += 1
    emit({"msg": {"version": ver, "length": length, "export_time": etime, "seq": seq,
                  "domain": dom, "data_records": ndata, "recv": recv}})
    for r in recs:
        emit(r)


if proto == "udp":
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    tee = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    emit({"listening": True})
    while True:
        m = s.recv(65535)
        for p in tees:
            tee.sendto(m, ("127.0.0.1", p))
        message(m)
else:
    ls = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(4)
    emit({"listening": True})
    while True:
        c, _ = ls.accept()
        emit({"connection": True})
        buf = b""
        while True:
            d = c.recv(65536)
            if not d:
                break
            buf += d
            while len(buf) >= 4:
                n = struct.unpack("!H", buf[2:4])[0]
                if n < 16:
                    emit({"error": "bad message length %d" % n})
                    buf = b""
                    break
                if len(buf) < n:
                    break
                message(buf[:n])
                buf = buf[n:]
        emit({"closed": True})
        c.close()
