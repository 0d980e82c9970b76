# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The frames and the model of tests/e2e/allowlist.sh.

What each action does with what a real link carries besides the listed
flows: ARP, LLDP, MPLS, 802.3 frames, IPv6 neighbour discovery and router
advertisements, ICMP errors about a listed flow (PMTU's fragmentation
needed and packet too big, port unreachable), DHCP offers, VLAN and QinQ
tags (and a third tag), IPv4 and IPv6 fragments of a listed flow (first
and later), a TCP RST of a listed flow, malformed frames. Each frame is
sent alone with AF_PACKET from the namespace this runs in (A), and the
filter's counters read before and after give its live verdict and how it
was counted; `replay` of the same frames and `query --packet` of those it
can build must say the same, and all must be what the model says.

  allowlist.py pcap FILE                  every frame, in a pcap
  allowlist.py run FB NAME DEV ACTION MALFORMED [ONLY]
                                          send each frame (or those whose
                                          labels ONLY, comma-separated,
                                          names, each then matching a rule
                                          of another shape the test added)
                                          from DEV, attached
                                          to NAME with ACTION and MALFORMED
                                          ("-": the default); one line per
                                          check, "ok LABEL" or "bad LABEL: why"

The filter holds the listed flows (LISTED): tcp A4:40000 -> B4:80 and its
IPv6 twin, udp A4:5000 -> B4:53 and its IPv6 twin.
"""
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pkt import a6, csum, ether, icmp6, ip4, ipv4_udp, l4sum, pcap_write, tcp4, tcp6, v4, v6  # noqa: E402

MACA = bytes.fromhex("02fb0000000a")
MACB = bytes.fromhex("02fb0000000b")
A4, B4, R4 = "198.51.100.1", "203.0.113.2", "198.51.100.254"
A6, B6, R6 = "2001:db8:1::1", "2001:db8:2::2", "2001:db8:1::fe"
LISTED = ["tcp %s:40000 %s:80" % (A4, B4), "tcp [%s]:40000 [%s]:80" % (A6, B6),
          "udp %s:5000 %s:53" % (A4, B4), "udp [%s]:5000 [%s]:53" % (A6, B6)]


def ip4hdr(proto, src, dst, plen, frag=0x4000, ident=7, ihl=5, ver=4):
    ip = struct.pack("!BBHHHBBH4s4s", ver << 4 | ihl, 0, 20 + plen, ident, frag, 64, proto, 0,
                     ip4(src), ip4(dst))
    return ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]


def ip6hdr(nh, src, dst, plen, hl=64):
    return struct.pack("!IHBB16s16s", 0x60000000, plen, nh, hl, a6(src), a6(dst))


def icmp6msg(t, c, body, src, dst):
    msg = struct.pack("!BBH", t, c, 0) + body
    return l4sum(msg, 2, a6(src) + a6(dst) + struct.pack("!IxxxB", len(msg), 58))


def frames():
    """(label, frame, class, query FLOW or None). class: "listed" (a rule
    matches), "other" (parsed, no rule), "non_ip", "malformed",
    "listed_malformed", "fragment" (a later fragment no rule matches)."""
    t, u = tcp4(A4, 40000, B4, 80), tcp4(A4, 40001, B4, 80)
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, MACA, ip4(A4), b"\0" * 6, ip4(B4))
    rst = struct.pack("!HHIIBBHHH", 40000, 80, 1, 0, 5 << 4, 0x04, 0, 0, 0)
    rst = l4sum(rst, 16, ip4(A4) + ip4(B4) + struct.pack("!BBH", 0, 6, 20))
    ns = b"\0\0\0\0" + a6(B6)
    ra = struct.pack("!BBHII", 64, 0, 1800, 0, 0)
    fn = struct.pack("!BBHHH", 3, 4, 0, 0, 1400) + ip4hdr(6, B4, A4, 20) + struct.pack("!HHI", 80, 40000, 1)
    ptb = struct.pack("!I", 1280) + ip6hdr(6, B6, A6, 20) + struct.pack("!HHI", 80, 40000, 1)
    pu = struct.pack("!BBHHH", 3, 3, 0, 0, 0) + ip4hdr(17, B4, A4, 8) + struct.pack("!HHHH", 53, 5000, 8, 0)
    pay = b"x" * 32
    useg = struct.pack("!HHHH", 5000, 53, 8 + 2 * len(pay), 0) + pay
    tag = lambda *t: b"".join(struct.pack("!HH", v, p) for v, p in t)  # noqa: E731
    return [
        ("tcp4 listed", t, "listed", LISTED[0]),
        ("tcp4 unlisted", u, "other", "tcp %s:40001 %s:80" % (A4, B4)),
        ("tcp6 listed", tcp6(A6, 40000, B6, 80), "listed", LISTED[1]),
        ("tcp6 unlisted", tcp6(A6, 40001, B6, 80), "other", "tcp [%s]:40001 [%s]:80" % (A6, B6)),
        ("tcp4 RST of the listed flow", v4(6, A4, B4, rst), "listed", None),
        ("ARP request", ether(0x0806) + arp, "non_ip", None),
        ("LLDP", ether(0x88cc) + bytes.fromhex("0207046e6f6e6501") + b"\0" * 40, "non_ip", None),
        ("MPLS holding IPv4", ether(0x8847) + struct.pack("!I", 100 << 12 | 0x100 | 64) + u[14:], "non_ip", None),
        ("802.3 LLC (STP)", ether(38) + b"\x42\x42\x03" + b"\0" * 35, "non_ip", None),
        ("VLAN-tagged ARP", ether(0x8100) + tag((10, 0x0806)) + arp, "non_ip", None),
        ("ICMPv6 neighbour solicitation from fe80::1",
         ether(0x86dd) + ip6hdr(58, "fe80::1", "ff02::1:ff00:2", 24, 255)
         + icmp6msg(135, 0, ns, "fe80::1", "ff02::1:ff00:2"), "other", "icmpv6 src fe80::1 dst ff02::1:ff00:2"),
        ("ICMPv6 router advertisement from fe80::1",
         ether(0x86dd) + ip6hdr(58, "fe80::1", "ff02::1", 16, 255) + icmp6msg(134, 0, ra, "fe80::1", "ff02::1"),
         "other", "icmpv6 src fe80::1 dst ff02::1"),
        ("ICMP fragmentation needed about the listed flow", v4(1, R4, B4, l4sum(fn, 2, b"")), "other",
         "icmp src %s dst %s" % (R4, B4)),
        ("ICMPv6 packet too big about the listed flow", v6(58, R6, B6, icmp6msg(2, 0, ptb, R6, B6)), "other",
         "icmpv6 src %s dst %s" % (R6, B6)),
        ("ICMP port unreachable from the listed peer", v4(1, A4, B4, l4sum(pu, 2, b"")), "other",
         "icmp src %s dst %s" % (A4, B4)),
        ("DHCP offer", ether(0x0800) + ipv4_udp(ip4(R4), 67, ip4("255.255.255.255"), 68, b"\x02" + b"\0" * 239),
         "other", "udp %s:67 255.255.255.255:68" % R4),
        ("VLAN listed", ether(0x8100) + tag((10, 0x0800)) + t[14:], "listed", None),
        ("VLAN unlisted", ether(0x8100) + tag((10, 0x0800)) + u[14:], "other", None),
        ("QinQ listed", ether(0x88a8) + tag((20, 0x8100), (10, 0x0800)) + t[14:], "listed", None),
        ("QinQ unlisted", ether(0x88a8) + tag((20, 0x8100), (10, 0x0800)) + u[14:], "other", None),
        ("three tags, listed", ether(0x88a8) + tag((20, 0x8100), (10, 0x8100), (5, 0x0800)) + t[14:],
         "malformed", None),
        ("IPv4 first fragment of the listed UDP flow",
         ether(0x0800) + ip4hdr(17, A4, B4, len(useg), frag=0x2000, ident=99) + useg, "listed", None),
        ("IPv4 later fragment of the listed UDP flow",
         ether(0x0800) + ip4hdr(17, A4, B4, len(pay), frag=len(useg) // 8, ident=99) + pay, "fragment", None),
        ("IPv6 first fragment of the listed UDP flow",
         ether(0x86dd) + ip6hdr(44, A6, B6, 8 + len(useg)) + struct.pack("!BBHI", 17, 0, 1, 77) + useg,
         "listed", None),
        ("IPv6 later fragment of the listed UDP flow",
         ether(0x86dd) + ip6hdr(44, A6, B6, 8 + len(pay)) + struct.pack("!BBHI", 17, 0, len(useg), 77) + pay,
         "fragment", None),
        ("IPv4 IHL 4", ether(0x0800) + ip4hdr(6, A4, B4, 20, ihl=4) + t[34:], "malformed", None),
        ("version 6 under ethertype IPv4", ether(0x0800) + ip4hdr(6, A4, B4, 20, ver=6) + t[34:], "malformed",
         None),
        ("listed TCP cut after its ports", t[:40], "listed_malformed", None),
        ("unlisted TCP cut after its ports", u[:40], "malformed", None),
        ("IPv4 header cut short", t[:24], "malformed", None),
        ("ethertype IPv4 and nothing after", t[:14], "malformed", None),
        ("an echo request (for the recipes)", icmp6(A6, B6), "other", None),
    ]


def model(cls, action, malformed):
    """The verdict cli.md and operations.md give."""
    if cls == "non_ip":
        return "pass"
    if cls in ("listed", "listed_malformed", "recipe"):
        return "drop" if action == "drop" else "pass"
    if cls == "malformed":
        if malformed != "-":
            return malformed
        return "pass" if action == "monitor" else "drop"
    return "drop" if action == "allow" else "pass"


def counted(cls):
    """The counters besides seen and the verdict's that the frame moves."""
    return {"listed": {"matched", "hit_flow"}, "listed_malformed": {"matched", "hit_flow", "malformed"},
            "recipe": {"matched", "hit_shape"}, "non_ip": {"non_ip"}, "malformed": {"malformed"}, "fragment": {"fragments"}, "other": set()}[cls]


def stats(fb, name):
    d = json.loads(subprocess.run([fb, "-j", "stats", name], check=True, capture_output=True).stdout)
    return {k: v["packets"] for k, v in d.items() if isinstance(v, dict)}


def run(fb, name, dev, action, malformed, only=None):
    fr = frames()
    opts = ["--action", action] + (["--malformed", malformed] if malformed != "-" else [])
    tag = "%s%s" % (action, "" if malformed == "-" else ", --malformed " + malformed)
    with tempfile.NamedTemporaryFile(suffix=".pcap") as p:
        pcap_write(p.name, [f for _, f, _, _ in fr])
        out = subprocess.run([fb, "-j", "replay", name, p.name, "--explain"] + opts, check=True,
                             capture_output=True, text=True).stdout
    replay = {d["packet"]: d["verdict"] for d in map(json.loads, out.splitlines()) if "packet" in d}
    qf = [q for _, _, _, q in fr if q]
    out = subprocess.run([fb, "-j", "query", name, "--packet"] + " ".join(qf).split() + opts, check=True,
                         capture_output=True, text=True).stdout
    query = dict(zip(qf, (r["verdict"] for r in json.loads(out)["results"])))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    for i, (label, f, cls, q) in enumerate(fr):
        if only:
            if label not in only:
                continue
            cls = "recipe"
        want = model(cls, action, malformed)
        b = stats(fb, name)
        s.send(MACB + MACA + f[12:])
        end = time.time() + 5
        while True:
            a = stats(fb, name)
            if a["seen"] != b["seen"] or time.time() > end:
                break
            time.sleep(0.02)
        d = {k: a[k] - b[k] for k in a}
        live = "drop" if d["dropped"] else "pass" if d["passed"] else "none"
        moved = {k for k, v in d.items() if v and k not in ("seen", "dropped", "passed")}
        why = []
        if d["seen"] != 1 or d["dropped"] + d["passed"] != 1:
            why.append("seen %+d, dropped %+d, passed %+d" % (d["seen"], d["dropped"], d["passed"]))
        if live != want:
            why.append("live %s" % live)
        if moved != counted(cls):
            why.append("counted in %s, want %s" % (sorted(moved), sorted(counted(cls))))
        if replay.get(i + 1) != want:
            why.append("replay says %s" % replay.get(i + 1))
        if q and query[q] != want:
            why.append("query --packet says %s" % query[q])
        print("%s %s: %s %s%s" % ("bad" if why else "ok", tag, label, want,
                                  " (" + "; ".join(why) + ")" if why else ""))


if __name__ == "__main__":
    if sys.argv[1] == "pcap":
        pcap_write(sys.argv[2], [f for _, f, _, _ in frames()])
    elif sys.argv[1] == "run":
        run(*sys.argv[2:7], only=sys.argv[7].split(",") if len(sys.argv) > 7 else None)
