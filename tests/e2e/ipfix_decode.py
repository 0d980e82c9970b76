#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# An IPFIX collector for the tests, written from RFC 7011 alone (so it checks
# libfixbuf's output rather than trusting it): listens on UDP or TCP, decodes
# every message, and writes one JSON object a line to OUT:
#   {"msg": {"version", "length", "export_time", "seq", "domain", "data_records"}}
#   {"template": ID, "fields": [[IE, LEN, PEN], ...]}
#   {"tid": ID, "rec": {"IE": value or [values...]}}
#   {"error": "..."} for anything malformed.
# Usage: ipfix_decode.py udp|tcp ADDR PORT OUT   (runs until SIGTERM)
import ipaddress
import json
import signal
import socket
import struct
import sys

proto, addr, port, out_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
out = open(out_path, "w", buffering=1)
templates = {}  # (domain, tid) -> fields
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))

UNSIGNED = {1, 2, 4, 7, 10, 11, 89, 152, 153}
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
                  "domain": dom, "data_records": ndata}})
    for r in recs:
        emit(r)


if proto == "udp":
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    emit({"listening": True})
    while True:
        message(s.recv(65535))
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
