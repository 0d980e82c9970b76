#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Prefix lists at the CLI: `load`, `export`, `import`, `info`.
#
# List formats: FireHOL netsets ('#' comments), Spamhaus DROP ('; SBL'),
# plain addresses, ranges (198.51.100.10-198.51.100.20 becomes the fewest
# prefixes), FLOW lines, '-' for stdin, several files in one call, all
# mixed; duplicates count once. Which packets then drop is checked exactly:
# a Python reference (the ipaddress module) reads the same files, a pcap of
# packets at every prefix's edges and just beside them is replayed with
# `replay -j --explain` against a 1 MiB filter (no false positive possible
# for a few dozen rules) and every verdict must equal the reference's. A bad
# line (first, middle, last; length /33 and /129, garbage, a reversed or
# mixed-family range, a bad FLOW) rejects the whole load naming FILE:LINE
# and leaves the filter as it was (`info -j` digest, flows, kinds, lengths).
#
# Export -> import on a fresh filter: identical `info -j`, identical `query`
# answers on 10,000 random flows and addresses, identical `replay --explain`
# verdicts on real captures after loading rules that match them; a counting
# filter keeps its counters. Corrupt files (a flipped byte in the magic,
# version, header, prefix table, bits and checksum; truncated to 0 bytes and
# more; wrong version or magic with a valid checksum; bad geometry with a
# valid checksum; trailing bytes) are refused with a clear error and
# nothing is created. `export NAME - | import - NAME2` works.
#
# `info -j`: probes per packet and the per-packet rate follow the loaded
# lengths. A filter whose 4 IPv4 source lengths are taken: a shorter new
# length is expanded into a kept one; a longer one is refused naming
# --replace, nothing changed; `load --replace` then succeeds. A plain load
# that pushes the rate over the target warns; --replace re-sizes.
#
# Addresses: documentation ranges only (198.51.100.0/24, 203.0.113.0/24,
# 2001:db8::/32); the captures are tcpdump's test files, replayed with
# BPF_PROG_TEST_RUN only: nothing is sent on any network.
source "$(dirname "$0")/../lib/lib.sh"
t_begin prefix_cli
t_traps

BIG=(--bits 8388608 --hashes 8) # 1 MiB
info_field() { "$FB" -j info "$1" | t_json "d['$2']"; }
state() {
	"$FB" -j info "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["digest"], d["flows"], d["kinds"], json.dumps(d["prefix_lengths"]))'
}
lengths() {
	"$FB" -j info "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(str(x["length"]) for x in d["prefix_lengths"] if x["list"] == sys.argv[1]))' "$2"
}
json_field() { t_json "d['$1']"; }
state_bytes() { "$FB" -j info "$1" | json_field bytes; }

# The reference: parse lists the way the documentation says, write a pcap
# of packets around every rule, and the verdict each packet must get.
cat >"$T_TMP/ref.py" <<'PY'
import ipaddress as ip, random, struct, sys
from pkt import pcap_write

def net(s):
    n = ip.ip_network(s, strict=False)
    # ::ffff:a.b.c.d/96+n is the IPv4 prefix a.b.c.d/n
    if n.version == 6 and n.prefixlen >= 96 and n.subnet_of(ip.ip_network("::ffff:0:0/96")):
        n = ip.ip_network((int(n.network_address) & 0xffffffff, n.prefixlen - 96))
    return n

def endpoint(s):
    if s.startswith("["):
        a, p = s[1:].split("]:")
    else:
        a, p = s.rsplit(":", 1)
    return ip.ip_address(a), int(p)

def parse(files):
    src, dst, flows = [], [], set()
    for f in files:
        for line in open(f):
            for c in "#;":
                line = line.split(c)[0]
            w = line.split()
            if not w:
                continue
            if len(w) == 1 and "-" in w[0]:
                lo, hi = (ip.ip_address(x) for x in w[0].split("-"))
                src += [net(str(n)) for n in ip.summarize_address_range(lo, hi)]
            elif len(w) == 1:
                src.append(net(w[0]))
            elif w[0] in ("src", "dst"):
                (src if w[0] == "src" else dst).append(net(w[1]))
            else:
                (sa, sp), (da, dp) = endpoint(w[1]), endpoint(w[2])
                flows.add(({"udp": 17, "tcp": 6}[w[0]], sa, sp, da, dp))
    return src, dst, flows

def inside(a, nets):
    return any(a.version == n.version and a in n for n in nets)

OTHER = {4: ip.ip_address("203.0.113.250"), 6: ip.ip_address("2001:db8:ffff::250")}

def packets(src, dst, flows, seed):
    r = random.Random(seed)
    out = []
    for nets, is_src in ((src, True), (dst, False)):
        for n in nets:
            top = 2 ** (32 if n.version == 4 else 128) - 1
            a0, a1 = int(n.network_address), int(n.broadcast_address)
            cands = [a0, a1, r.randint(a0, a1)] + [x for x in (a0 - 1, a1 + 1) if 0 <= x <= top]
            for x in cands:
                a = ip.IPv6Address(x) if n.version == 6 else ip.IPv4Address(x)
                o = OTHER[n.version]
                out.append((17, a, 40000, o, 53) if is_src else (17, o, 40000, a, 53))
    for (p, sa, sp, da, dp) in flows:
        out += [(p, sa, sp, da, dp), (p, sa, sp, da, dp + 1), (p, da, dp, sa, sp)]
    return out

def frame(p, sa, sp, da, dp):
    eth = bytes.fromhex("00005e005302" "00005e005301")
    l4 = struct.pack("!HHHH", sp, dp, 8, 0) if p == 17 else \
        struct.pack("!HHIIBBHHH", sp, dp, 1, 0, 0x50, 0x10, 1024, 0, 0)
    if sa.version == 4:
        iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0, 64, p, 0,
                          sa.packed, da.packed)
        return eth + b"\x08\x00" + iph + l4
    iph = struct.pack("!IHBB16s16s", 6 << 28, len(l4), p, 64, sa.packed, da.packed)
    return eth + b"\x86\xdd" + iph + l4

def write_pcap(path, pkts):
    pcap_write(path, (frame(*pk) for pk in pkts), lambda i: (i, 0))

# ref.py PCAP EXPECT LISTFILE...: the pcap, and one verdict per line
if __name__ == "__main__":
    src, dst, flows = parse(sys.argv[3:])
    pk = packets(src, dst, flows, 7)
    write_pcap(sys.argv[1], pk)
    with open(sys.argv[2], "w") as f, open(sys.argv[2] + ".desc", "w") as g:
        for (p, sa, sp, da, dp) in pk:
            hit = inside(sa, src) or inside(da, dst) or (p, sa, sp, da, dp) in flows
            f.write(("drop" if hit else "pass") + "\n")
            g.write("%d:%s:%d->%s:%d\n" % (p, sa, sp, da, dp))
PY

# Verdicts of a replay, one per line.
verdicts() {
	"$FB" -j replay "$1" "$2" --explain | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if "packet" in d:
        print(d["verdict"])'
}

# check_exact LABEL FILTER LISTFILE...: every packet around every rule gets
# the reference's verdict.
check_exact() {
	local label=$1 name=$2
	shift 2
	python3 "$T_TMP/ref.py" "$T_TMP/x.pcap" "$T_TMP/x.want" "$@"
	verdicts "$name" "$T_TMP/x.pcap" >"$T_TMP/x.got"
	local n d p
	n=$(wc -l <"$T_TMP/x.want")
	d=$(grep -c drop "$T_TMP/x.want")
	p=$((n - d))
	if cmp -s "$T_TMP/x.got" "$T_TMP/x.want" && [ "$d" -gt 0 ] && [ "$p" -gt 0 ]; then
		pass "$label: $n packets ($d drop, $p pass) as the reference says"
	else
		fail "$label: verdicts differ from the reference ($n packets, $d should drop):" \
			"$(paste -d' ' "$T_TMP/x.got" "$T_TMP/x.want" "$T_TMP/x.want.desc" |
				awk '$1 != $2 { printf "packet %d (%s) got %s want %s; ", NR, $3, $1, $2 }' | head -c 400)"
	fi
}

# ---------------------------------------------------------------------------
# 6. List formats

cat >"$T_TMP/netset.txt" <<'EOF'
#
# example_level1
#
# ipv4 hash:net ipset
#
# shaped like a FireHOL netset: comments, then one prefix or address a line
#
198.51.100.0/26
198.51.100.77
203.0.113.128/25
2001:db8:1::/48
EOF
cat >"$T_TMP/drop.txt" <<'EOF'
; Spamhaus DROP List 2025/01/01 - (c) 2025 The Spamhaus Project SLU
; https://www.spamhaus.org/drop/drop.txt
; Last-Modified: Wed, 01 Jan 2025 00:00:00 GMT
198.51.100.96/27 ; SBL000001
203.0.113.64/27 ; SBL000002
2001:db8:2::/47 ; SBL000003
EOF
printf '198.51.100.200\r\n  2001:db8::66\t\n\n203.0.113.9\n' >"$T_TMP/plain.txt"
cat >"$T_TMP/flows.txt" <<'EOF'
# FLOW lines mixed in
udp 198.51.100.1:53 203.0.113.7:4000   # a 5-tuple
tcp [2001:db8::1]:443 [2001:db8::2]:51000
src 198.51.100.160/27
dst 203.0.113.32/29 ; a destination rule
dst 2001:db8:3::/64
198.51.100.128-198.51.100.224
EOF
check "create L (1 MiB)" "$FB" create L "${BIG[@]}"
out=$("$FB" -j load L "$T_TMP/netset.txt" "$T_TMP/drop.txt" "$T_TMP/plain.txt" - <"$T_TMP/flows.txt" 2>"$T_TMP/err")
check_eq "L: load netset, DROP, plain and FLOWs from stdin in one call: exit 0" $? 0
# 4 + 3 + 3 + 2 flows + 3 address rules + the range .128-.224 (128/26, 192/27, 224/32);
# four IPv4 source lengths (/25 /26 /27 /32), no expansion
check_eq "L: rules loaded" "$(echo "$out" | json_field loaded)" 18
check_eq "L: no expansion note (few lengths)" "$(grep -c expanded "$T_TMP/err")" 0
check_exact "L: all formats" L "$T_TMP/netset.txt" "$T_TMP/drop.txt" "$T_TMP/plain.txt" "$T_TMP/flows.txt"
check_eq "L: query on the rule keys" \
	"$("$FB" query L src 198.51.100.0/26 src 203.0.113.128/25 src 2001:db8:2::/47 src 198.51.100.77 dst 203.0.113.32/29 udp 198.51.100.1:53 203.0.113.7:4000 src 198.51.100.128/26 src 198.51.100.192/27 src 198.51.100.224 | tail -1)" \
	"9 of 9 maybe"
check_eq "L: query on keys never loaded" \
	"$("$FB" query L src 198.51.100.0/24 src 198.51.100.0/27 dst 198.51.100.0/26 src 203.0.113.32/29 udp 198.51.100.1:53 203.0.113.7:4001 | tail -1)" \
	"0 of 5 maybe"

# Ranges: exactly the addresses from .10 to .20, and 2001:db8::5 to ::10.
printf '198.51.100.10-198.51.100.20\n2001:db8::5-2001:db8::10 ; v6\n' >"$T_TMP/ranges.txt"
check "create R (1 MiB)" "$FB" create R "${BIG[@]}"
out=$("$FB" -j load R "$T_TMP/ranges.txt")
# .10/31 .12/30 .16/30 .20/32; ::5/128 ::6/127 ::8/125 ::10/128
check_eq "R: two ranges become 8 prefixes" "$(echo "$out" | json_field loaded)" 8
check_eq "R: the prefixes are the fewest covering ones" \
	"$("$FB" query R src 198.51.100.10/31 src 198.51.100.12/30 src 198.51.100.16/30 src 198.51.100.20 src 2001:db8::5 src 2001:db8::6/127 src 2001:db8::8/125 src 2001:db8::10 | tail -1)" \
	"8 of 8 maybe"
python3 - "$T_TMP/r.pcap" "$T_TMP/r.want" "$T_TMP/ref.py" <<'PY'
import importlib.util, ipaddress as ip, sys
spec = importlib.util.spec_from_file_location("ref", sys.argv[3])
ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(ref)
pk, want = [], []
for i in range(256):
    pk.append((17, ip.ip_address("198.51.100.%d" % i), 40000, ip.ip_address("203.0.113.1"), 53))
    want.append("drop" if 10 <= i <= 20 else "pass")
for i in range(64):
    pk.append((17, ip.ip_address("2001:db8::%x" % i), 40000, ip.ip_address("2001:db8:ffff::1"), 53))
    want.append("drop" if 5 <= i <= 16 else "pass")
ref.write_pcap(sys.argv[1], pk)
open(sys.argv[2], "w").write("\n".join(want) + "\n")
PY
verdicts R "$T_TMP/r.pcap" >"$T_TMP/r.got"
check_eq "R: exactly 198.51.100.10-.20 and 2001:db8::5-::10 drop (320 sources tried)" \
	"$(cmp -s "$T_TMP/r.got" "$T_TMP/r.want" && echo same)" same
# A range inside a list of five IPv4 lengths: the cheapest fit expands its
# /31 (198.51.100.2/31) into two /32s; every address must still drop.
cat >"$T_TMP/ranges9.txt" <<'LIST'
198.51.100.1-198.51.100.3
203.0.113.0/24
198.51.100.128/25
203.0.113.128/25
198.51.100.64/26
203.0.113.64/26
LIST
check "create R9 (1 MiB)" "$FB" create R9 "${BIG[@]}"
"$FB" -j load R9 "$T_TMP/ranges9.txt" >"$T_TMP/out" 2>"$T_TMP/err"
check_eq "R9: five lengths: loaded with an expansion note" "$(grep -c 'note: expanded 7 prefixes into 8' "$T_TMP/err")" 1
check_eq "R9: 4 IPv4 source lengths, /31 gone" \
	"$(lengths R9 'IPv4 source' | wc -w) $(lengths R9 'IPv4 source' | tr ' ' '\n' | grep -c '^31$')" "4 0"
check_exact "R9: a range whose /31 was expanded into /32s" R9 "$T_TMP/ranges9.txt"
# info prints a list's lengths shortest first, whatever the table's order.
check_eq "R9: info lists the IPv4 source lengths shortest first" \
	"$("$FB" info R9 | sed -n 's/^  IPv4 source prefix lengths: //p')" \
	"$(lengths R9 'IPv4 source' | tr ' ' '\n' | sort -n | sed 's|^|/|' | paste -sd' ')"

# query of a plain address answers as the data path: covered by a prefix.
q=$("$FB" query R src 198.51.100.11 | head -1)
check_eq "query of an address inside 198.51.100.10/31 says maybe" "$q" "maybe src 198.51.100.11"

# Duplicates count once: the same prefix spelled four ways.
printf '198.51.100.0/24\n198.51.100.7/24\nsrc 198.51.100.0/24\n198.51.100.99/24 ; again\n::ffff:198.51.100.0/120\n' >"$T_TMP/dups.txt"
check "create D" "$FB" create D "${BIG[@]}"
check_eq "D: five spellings of one prefix load as one rule" \
	"$("$FB" -j load D "$T_TMP/dups.txt" | json_field loaded)" 1
check_eq "D: one flow counted" "$(info_field D flows)" 1

# Bad lines: the whole load is refused, naming FILE:LINE; nothing changes.
before=$(state L)
python3 - "$T_TMP" <<'PY'
import sys
good = ["198.51.100.%d/32" % i for i in range(100)] + ["2001:db8:%x::/48" % i for i in range(100)]
bad = {"len33": "198.51.100.0/33", "len129": "2001:db8::/129", "garbage": "not-an-address",
       "reversed": "198.51.100.20-198.51.100.10", "mixed": "198.51.100.1-2001:db8::1",
       "emptylen": "198.51.100.0/", "badflow": "udp 198.51.100.1:99999 203.0.113.1:53",
       "extra": "198.51.100.0/24 198.51.100.1", "len024": "198.51.100.0/024"}
for name, line in bad.items():
    for where, at in (("first", 0), ("middle", 100), ("last", 199)):
        lines = list(good)
        lines[at] = line
        open("%s/bad-%s-%s.txt" % (sys.argv[1], name, where), "w").write(
            "# generated\n" + "\n".join(lines) + "\n")
PY
for name in len33 len129 garbage reversed mixed emptylen badflow extra len024; do
	for where in first middle last; do
		f=$T_TMP/bad-$name-$where.txt
		case $where in first) line=2 ;; middle) line=102 ;; last) line=201 ;; esac
		"$FB" load L "$f" >/dev/null 2>"$T_TMP/err"
		rc=$?
		if [ "$rc" -eq 1 ] && [ "$(grep -c "$f:$line:" "$T_TMP/err")" -eq 1 ] &&
			[ "$(wc -l <"$T_TMP/err")" -eq 1 ]; then
			pass "bad line ($name, $where): refused naming $f:$line"
		else
			fail "bad line ($name, $where): exit $rc, stderr: $(head -c 200 "$T_TMP/err")"
		fi
	done
done
check_eq "bad lines: L unchanged (digest, flows, kinds, lengths)" "$(state L)" "$before"
"$FB" load L "$T_TMP/netset.txt" "$T_TMP/bad-garbage-last.txt" >/dev/null 2>"$T_TMP/err"
check_eq "bad line in the second file: exit 1" $? 1
check_eq "bad line in the second file: named" "$(grep -c "bad-garbage-last.txt:201:" "$T_TMP/err")" 1
printf '198.51.100.1\n198.51.100.0/40\n' | "$FB" load L - >/dev/null 2>"$T_TMP/err"
check_eq "bad line on stdin: named <stdin>:2" "$(grep -c '<stdin>:2:' "$T_TMP/err")" 1
printf '198.51.100.1\n198.51\0.100.2\n' >"$T_TMP/nul.txt"
check_fails "a NUL byte in a line" "$FB" load L "$T_TMP/nul.txt"
check_fails "a missing file" "$FB" load L "$T_TMP/nope.txt"
check_fails "no file at all" "$FB" load L
check_eq "every refused load: L unchanged" "$(state L)" "$before"

# ---------------------------------------------------------------------------
# 7. Export -> import

check "create E (capacity 5000, 0.1%)" "$FB" create E --capacity 5000 --fp-rate 0.001
python3 - "$T_TMP/elist.txt" <<'PY'
import random, sys
r = random.Random(11)
out = []
for i in range(300):
    out.append("198.51.100.%d/%d" % (r.randrange(256), r.choice([24, 26, 28, 32])))
    out.append("2001:db8:%x:%x::/%d" % (r.randrange(65536), r.randrange(65536), r.choice([32, 40, 48, 64])))
    out.append("dst 203.0.113.%d/%d" % (r.randrange(256), r.choice([25, 27, 29, 31])))
    out.append("udp 198.51.100.%d:%d 203.0.113.%d:53" % (r.randrange(256), 1024 + i, r.randrange(256)))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
check "E: load 1200 mixed rules" "$FB" load E "$T_TMP/elist.txt"
check "E: export (plain: the damage below is to the plain form)" "$FB" export E "$T_TMP/e.fbx" --plain
# The writer's temporary files are hidden (.e.fbx.XXXX, user/lib/safefile.c).
check_eq "E: export leaves no temporary file" "$(ls -A "$T_TMP" | grep -c -e '^\.e\.fbx' -e '^e\.fbx\.')" 0
check "E2: import" "$FB" import "$T_TMP/e.fbx" E2
same_info() {
	"$FB" -j info "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
# (fail_open: the attachments anywhere on the system that fail open, not
# a property of the filter; other tests may make one at any moment)
for k in ("name", "attached", "fail_open"): d.pop(k, None)
print(json.dumps(d, sort_keys=True))'
}
check_eq "E2: info -j identical to E's (digest, geometry, lengths, rates)" "$(same_info E2)" "$(same_info E)"
python3 - "$T_TMP/queries.txt" <<'PY'
import random, sys
r = random.Random(12)
out = []
for i in range(10000):
    c = i % 5
    if c == 0:
        out.append("src 198.51.100.%d/%d" % (r.randrange(256), r.choice([24, 26, 28, 30, 32])))
    elif c == 1:
        out.append("src 2001:db8:%x:%x::/%d" % (r.randrange(65536), r.randrange(65536), r.choice([32, 40, 48, 56, 64])))
    elif c == 2:
        out.append("dst 203.0.113.%d/%d" % (r.randrange(256), r.choice([25, 27, 29, 31, 32])))
    elif c == 3:
        out.append("udp 198.51.100.%d:%d 203.0.113.%d:53" % (r.randrange(256), 1024 + r.randrange(300), r.randrange(256)))
    else:
        out.append("tcp [2001:db8::%x]:%d [2001:db8::%x]:443" % (r.randrange(65536), r.randrange(65536), r.randrange(65536)))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
"$FB" query E -f "$T_TMP/queries.txt" >"$T_TMP/q1"
"$FB" query E2 -f "$T_TMP/queries.txt" >"$T_TMP/q2"
check_eq "E2: 10,000 query answers identical to E's" "$(cmp -s "$T_TMP/q1" "$T_TMP/q2" && echo same)" same
maybes=$(tail -1 "$T_TMP/q1" | cut -d' ' -f1)
if [ "${maybes:-0}" -gt 100 ] && [ "${maybes:-0}" -lt 9000 ]; then
	pass "E: the queries mix maybes ($maybes) and noes"
else
	fail "E: $maybes of 10000 maybe: not a useful comparison"
fi

# Real captures: rules that match some of their packets, then replay both.
CAPS=()
for c in mptcp-v0.pcap pim-packet-assortment.pcap vrrp.pcap babel_rfc6126bis.pcap OSPFv3_with_AH.pcap bgp-4byte-asn.pcap; do
	[ -f "$PCAPS/$c" ] && CAPS+=("$PCAPS/$c")
done
if [ "${#CAPS[@]}" -eq 0 ]; then
	skip "captures: none of the chosen ones in $PCAPS"
else
	check "create P" "$FB" create P --capacity 2000 --fp-rate 0.001
	"$FB" -j replay P "${CAPS[@]}" --explain >"$T_TMP/p0.json"
	python3 - "$T_TMP/p0.json" "$T_TMP/prules.txt" <<'PY'
import ipaddress as ip, json, sys
flows = []
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("parse") == "ok" and d.get("flow") and d["flow"] not in flows:
        flows.append(d["flow"])
out = []
for i, f in enumerate(flows):
    w = f.split()
    if len(w) != 3:
        continue
    def addr(s):
        if s.startswith("["):
            return ip.ip_address(s[1:].split("]")[0])
        try:
            return ip.ip_address(s)
        except ValueError:
            return ip.ip_address(s.rsplit(":", 1)[0])
    if i % 4 == 0:
        out.append(f)  # the 5-tuple
    elif i % 4 == 1:
        a = addr(w[1]); out.append("%s" % ip.ip_network((a, 24 if a.version == 4 else 64), strict=False))
    elif i % 4 == 2:
        a = addr(w[2]); out.append("dst %s" % ip.ip_network((a, 28 if a.version == 4 else 56), strict=False))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
	check "P: load rules taken from the captures" "$FB" load P "$T_TMP/prules.txt"
	check "P: export to stdout, import from stdin" bash -c "'$FB' export P - | '$FB' import - P2"
	"$FB" -j replay P "${CAPS[@]}" --explain | grep '"packet"' >"$T_TMP/p1.json"
	"$FB" -j replay P2 "${CAPS[@]}" --explain | grep '"packet"' >"$T_TMP/p2.json"
	check_eq "P2: replay --explain of ${#CAPS[@]} captures identical to P's" \
		"$(cmp -s "$T_TMP/p1.json" "$T_TMP/p2.json" && echo same)" same
	drops=$(grep -c '"verdict":"drop"' "$T_TMP/p1.json")
	passes=$(grep -c '"verdict":"pass"' "$T_TMP/p1.json")
	if [ "$drops" -gt 20 ] && [ "$passes" -gt 20 ]; then
		pass "P: $drops drops, $passes passes"
	else
		fail "P: $drops drops, $passes passes: the rules do not exercise both"
	fi
	check_eq "P2: digest identical" "$(info_field P2 digest)" "$(info_field P digest)"
fi

# Counting filters carry their counters.
check "create C (counting)" "$FB" create C --capacity 10000 --fp-rate 0.01 --counting
head -400 "$T_TMP/elist.txt" >"$T_TMP/c1.txt"
check "C: load 400 rules" "$FB" load C "$T_TMP/c1.txt"
grep '^udp' "$T_TMP/elist.txt" | head -50 >"$T_TMP/c2.txt"
check "C: add 50 flows a second time" "$FB" add C -f "$T_TMP/c2.txt"
check "C: export" "$FB" export C "$T_TMP/c.fbx"
check "C2: import" "$FB" import "$T_TMP/c.fbx" C2
check_eq "C2: digest (bits and counters) identical" "$(info_field C2 digest)" "$(info_field C digest)"
check_eq "C2: counter width" "$(info_field C2 counter_bits)" "$(info_field C counter_bits)"
# count and query read FLOWs: bare prefixes are written "src P" there.
sed -E 's/^([0-9a-f:.]+\/[0-9]+)$/src \1/' "$T_TMP/elist.txt" >"$T_TMP/eflows.txt"
"$FB" count C -f "$T_TMP/eflows.txt" >"$T_TMP/k1"
"$FB" count C2 -f "$T_TMP/eflows.txt" >"$T_TMP/k2"
check_eq "C2: count identical on 1200 rules" \
	"$(cmp -s "$T_TMP/k1" "$T_TMP/k2" && wc -l <"$T_TMP/k1")" 1200
check_eq "C2: the 400 loaded rules count 1 or more" "$(head -400 "$T_TMP/k2" | grep -c '^0 ')" 0
check_eq "C2: the twice-added flows count 2 or more" "$("$FB" count C2 -f "$T_TMP/c2.txt" | grep -c -E '^[01] ')" 0
check "C2: del works on the imported counters" "$FB" del C2 -f "$T_TMP/c2.txt"
check_eq "C2: after del the flows still count 1 or more" "$("$FB" count C2 -f "$T_TMP/c2.txt" | grep -c -E '^0 ')" 0

# Corrupt, truncated, incompatible files: refused, nothing created.
names=$("$FB" list)
python3 - "$T_TMP/e.fbx" "$T_TMP" <<'PY'
import struct, sys, zlib
src, d = sys.argv[1], sys.argv[2]
b = bytearray(open(src, "rb").read())
n = len(b)
def put(name, data):
    open("%s/bad-%s.fbx" % (d, name), "wb").write(bytes(data))
def recrc(x):
    x = bytearray(x)
    x[-4:] = struct.pack("<I", zlib.crc32(bytes(x[:-4])) & 0xffffffff)
    return x
for name, off in (("magic", 0), ("version", 8), ("hdrsize", 12), ("layout", 16),
                  ("nblocks", 24), ("key", 40), ("lengths", 73), ("bits0", 136),
                  ("bitsmid", 136 + (n - 140) // 2), ("bitslast", n - 5), ("crc", n - 1)):
    x = bytearray(b); x[off] ^= 0x20; put("flip-" + name, x)
for cut in (0, 1, 8, 135, 139, 140, n // 2, n - 4, n - 1):
    put("trunc-%d" % cut, b[:cut])
x = bytearray(b); x[8] = 3; put("version3", recrc(x))
x = bytearray(b); x[0:8] = b"FLOWBLX\n"; put("magicX", recrc(x))
x = bytearray(b); x[18] = 0; put("k0", recrc(x))
x = bytearray(b); x[18] = 17; put("k17", recrc(x))
x = bytearray(b); x[16] = 9; put("layout9", recrc(x))
x = bytearray(b); x[17] = 99; put("hash99", recrc(x))
x = bytearray(b); x[20] = 7; put("action7", recrc(x))
x = bytearray(b); x[19] = 3; put("cbits3", recrc(x))
x = bytearray(b); x[28] |= 0x80; put("kinds", recrc(x))
x = bytearray(b); x[72] = 9; put("nlengths9", recrc(x))
x = bytearray(b); x[72] = max(x[72], 1); x[73] = 200; put("length200", recrc(x))
put("trailing1", b + b"\0")
put("trailing100", b + bytes(100))
put("twice", b + b)
PY
for f in "$T_TMP"/bad-*.fbx; do
	what=$(basename "$f" .fbx)
	"$FB" import "$f" Z >/dev/null 2>"$T_TMP/err"
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(wc -l <"$T_TMP/err")" -eq 1 ] && grep -q "nothing imported" "$T_TMP/err" &&
		[ "$("$FB" list)" == "$names" ]; then
		pass "import $what: refused, nothing created"
	else
		fail "import $what: exit $rc, stderr '$(head -c 200 "$T_TMP/err")', list $("$FB" list | tr '\n' ' ')"
		"$FB" destroy Z >/dev/null 2>&1
	fi
done
# The message says what is wrong.
msg() { "$FB" import "$T_TMP/bad-$1.fbx" Z 2>&1 >/dev/null | grep -c -i -- "$2"; }
check_eq "flipped magic byte: 'magic'" "$(msg flip-magic magic)" 1
check_eq "flipped version byte: 'version'" "$(msg flip-version version)" 1
check_eq "flipped bits byte: 'checksum'" "$(msg flip-bitsmid checksum)" 1
check_eq "flipped checksum byte: 'checksum'" "$(msg flip-crc checksum)" 1
# A length no list can hold is refused before the checksum is read.
check_eq "flipped prefix table byte: 'checksum' or 'prefix length'" \
	"$(msg flip-lengths 'checksum\|prefix length')" 1
check_eq "0 bytes: 'too short'" "$(msg trunc-0 'too short')" 1
check_eq "one byte short: 'truncated'" "$(msg trunc-$(($(stat -c %s "$T_TMP/e.fbx") - 1)) truncated)" 1
check_eq "version 3 with a valid checksum: 'version'" "$(msg version3 version)" 1
check_eq "wrong magic with a valid checksum: 'magic'" "$(msg magicX magic)" 1
check_eq "trailing bytes: 'trailing'" "$(msg trailing1 trailing)" 1
check_fails "import a missing file" "$FB" import "$T_TMP/nope.fbx" Z
check_fails "import onto an existing name" "$FB" import "$T_TMP/e.fbx" E2
check_eq "import onto an existing name: E2 unchanged" "$(same_info E2)" "$(same_info E)"
t_refused 2 "import to a bad name: a usage error" "bad filter name 'a.b'" "$FB" import "$T_TMP/e.fbx" a.b
check_fails "export to a directory that does not exist" "$FB" export E "$T_TMP/no/such/dir/e.fbx"
check_eq "after every refused import: the same filters" "$("$FB" list)" "$names"
check "E3: export - | import -" bash -c "'$FB' export E - | '$FB' import - E3"
check_eq "E3: info identical to E's" "$(same_info E3)" "$(same_info E)"

# A filter that confirms hits (create --confirm exact): an import must keep
# confirming (or the export must refuse), else verdicts change. A 512-bit
# filter holding 2000 flows answers "maybe" to nearly everything, so the
# difference shows on any traffic.
if "$FB" create X --bits 512 --hashes 1 --confirm exact >/dev/null 2>&1; then
	python3 - "$T_TMP/x.txt" "$T_TMP/xq.pcap" "$T_TMP/ref.py" <<'PY'
import importlib.util, ipaddress as ip, sys
spec = importlib.util.spec_from_file_location("ref", sys.argv[3])
ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(ref)
open(sys.argv[1], "w").write("".join("udp 198.51.100.%d:%d 203.0.113.%d:53\n" % (i % 256, 1024 + i, i % 200) for i in range(2000)))
ref.write_pcap(sys.argv[2], [(17, ip.ip_address("198.51.100.%d" % (i % 256)), 60000 + i,
                              ip.ip_address("203.0.113.9"), 53) for i in range(200)])
PY
	check "X: load 2000 flows" "$FB" load X "$T_TMP/x.txt"
	if "$FB" export X "$T_TMP/x.fbx" >/dev/null 2>"$T_TMP/err"; then
		check "X2: import" "$FB" import "$T_TMP/x.fbx" X2
		check_eq "X2: still confirms hits (confirm_exact)" "$(info_field X2 confirm_exact)" "$(info_field X confirm_exact)"
		verdicts X "$T_TMP/xq.pcap" | sort | uniq -c | tr -s ' ' >"$T_TMP/xv1"
		verdicts X2 "$T_TMP/xq.pcap" | sort | uniq -c | tr -s ' ' >"$T_TMP/xv2"
		check_eq "X2: verdicts on 200 unlisted flows identical to X's ($(tr '\n' ' ' <"$T_TMP/xv1"))" \
			"$(tr '\n' ' ' <"$T_TMP/xv2")" "$(tr '\n' ' ' <"$T_TMP/xv1")"
	else
		pass "X: export of a --confirm exact filter refused: $(head -c 120 "$T_TMP/err")"
	fi
else
	skip "create --confirm exact not available"
fi

# ---------------------------------------------------------------------------
# 8. info -j, full length lists, --replace

check "create I" "$FB" create I --capacity 10000 --fp-rate 0.01
printf '198.51.100.0/24\n198.51.100.64/28\n198.51.100.9\n2001:db8:1::/48\n2001:db8:2::/64\ndst 203.0.113.0/24\nudp 198.51.100.1:53 203.0.113.7:4000\n' >"$T_TMP/i1.txt"
check "I: load 3 IPv4 src, 2 IPv6 src, 1 IPv4 dst length and a flow" "$FB" load I "$T_TMP/i1.txt"
rates() {
	"$FB" -j info "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = {}
for x in d["prefix_lengths"]:
    n[x["list"]] = n.get(x["list"], 0) + 1
v4 = n.get("IPv4 source", 0) + n.get("IPv4 destination", 0)
v6 = n.get("IPv6 source", 0) + n.get("IPv6 destination", 0)
want = ("flow" in d["kinds"].split(",")) + max(v4, v6)
r = d["fp_rate_expected"]
per = 1 - (1 - r) ** want
ok = abs(d["fp_rate_per_packet"] - per) <= 1e-4 * per + 1e-300
print(d["probes_per_packet"], want, "consistent" if ok else "rate %g, want %g" % (d["fp_rate_per_packet"], per))'
}
check_eq "I: 5 probes (1 flow + 3 src + 1 dst for IPv4), rate per packet follows" "$(rates I)" "5 5 consistent"
check_eq "I: IPv4 source lengths" "$(lengths I 'IPv4 source' | tr ' ' '\n' | sort -n | tr '\n' ' ')" "24 28 32 "
printf 'dst 2001:db8:a::/32\ndst 2001:db8:b::/40\ndst 2001:db8:c::/48\ndst 2001:db8:d::/56\n' | "$FB" load I - >/dev/null
check_eq "I: + 4 IPv6 dst lengths: IPv6 now needs 1 + 2 + 4 = 7 probes" "$(rates I)" "7 7 consistent"

check "create F (capacity 10000, 1%)" "$FB" create F --capacity 10000 --fp-rate 0.01
for l in 17 18 19 20; do echo "198.51.$((l * 4)).0/$l"; done >"$T_TMP/f8.txt"
check "F: load 4 IPv4 source lengths" "$FB" load F "$T_TMP/f8.txt"
before=$(state F)
lbefore=$(lengths F 'IPv4 source')
echo "203.0.113.0/25" >"$T_TMP/f25.txt"
"$FB" load F "$T_TMP/f25.txt" >/dev/null 2>"$T_TMP/err"
check_eq "F: a 5th, longer length: refused" $? 1
check_eq "F: the error names --replace" "$(grep -c -- '--replace' "$T_TMP/err")" 1
check_eq "F: the error is one line" "$(wc -l <"$T_TMP/err")" 1
check_eq "F: nothing changed" "$(state F)" "$before"
check_fails "F: add with a 5th length is refused too" "$FB" add F src 203.0.113.0/25
check_eq "F: still nothing changed" "$(state F)" "$before"
echo "198.51.0.0/16" >"$T_TMP/f16.txt"
"$FB" -j load F "$T_TMP/f16.txt" >"$T_TMP/out" 2>"$T_TMP/err"
check_eq "F: a shorter new length is expanded into a kept one: exit 0" $? 0
check_eq "F: ... /16 into two /17s" "$(json_field prefixes_after_expansion <"$T_TMP/out")" 2
check_eq "F: ... with a note" "$(grep -c 'note: expanded' "$T_TMP/err")" 1
check_eq "F: lengths still the same 4" "$(lengths F 'IPv4 source')" "$lbefore"
check_eq "F: both halves of the /16 are in" "$("$FB" query F src 198.51.0.0/17 src 198.51.128.0/17 | tail -1)" "2 of 2 maybe"
out=$("$FB" -j load F "$T_TMP/f8.txt" "$T_TMP/f16.txt" "$T_TMP/f25.txt" --replace 2>"$T_TMP/err")
check_eq "F: load --replace with all three lists: exit 0" $? 0
check_eq "F: replaced" "$(echo "$out" | json_field replaced)" True
# Lengths chosen by cost (a miss pays a probe per length): the filter's
# one chunk holds every rule expanded to /25, so one length.
n=$(lengths F 'IPv4 source' | wc -w)
check_eq "F: one IPv4 source length after --replace (the chunk holds them all as /25s)" "$n" 1
check_eq "F: ... so one probe per packet" "$(echo "$out" | json_field probes_per_packet)" 1
check_eq "F: ... in the same memory" "$(state_bytes F)" 262144
check_eq "F: /25 among them" "$(lengths F 'IPv4 source' | tr ' ' '\n' | grep -c '^25$')" 1
check_eq "F: the old rules survive the replace (loaded again)" \
	"$("$FB" query F src 203.0.113.0/25 | tail -1)" "1 of 1 maybe"
# Replace with a list needing 5 lengths (10 here): expanded, not refused.
for l in 8 10 12 14 16 18 20 22 24 26; do echo "198.51.100.0/$l"; done >"$T_TMP/f10.txt"
out=$("$FB" -j load F "$T_TMP/f10.txt" --replace 2>/dev/null)
check_eq "F: load --replace of 10 lengths (expanded): replaced" "$(echo "$out" | json_field replaced)" True
# /8 as /26s would be 2^18 entries, more than the chunk holds at 1 %: two
# lengths, the /8 as /16s.
check_eq "F: 2 lengths, /16 and /26" "$(lengths F 'IPv4 source')" "16 26"
check_eq "F: ... still one chunk" "$(state_bytes F)" 262144
check_eq "F: the filter holds exactly the replaced list's rules" \
	"$(info_field F flows)" "$(echo "$out" | json_field loaded)"
check_eq "F: the old rules are gone" "$("$FB" query F src 203.0.113.0/25 | tail -1)" "0 of 1 maybe"
# A filter of fixed geometry (no rate to spend): the fewest entries, 4 lengths.
check "create G (--bits 1000000 --hashes 7)" "$FB" create G --bits 1000000 --hashes 7
gout=$("$FB" -j load G "$T_TMP/f10.txt" --replace 2>/dev/null)
check_eq "G: load --replace of 10 lengths: replaced" "$(echo "$gout" | json_field replaced)" True
check_eq "G: 4 lengths, the fewest entries" "$(lengths G 'IPv4 source' | wc -w)" 4
check_eq "G: ... 10 prefixes into 52 entries (/10 /14 /20 /26)" "$(echo "$gout" | json_field prefixes_after_expansion) $(lengths G 'IPv4 source')" "52 10 14 20 26"
check "destroy G" "$FB" destroy G

# Lengths 24 bits apart: any 4 of the 5 take one length's rules times 2^24,
# more than a list may expand into. Refused naming the line of the rule
# the cheapest fit expands (the one /32: the other lengths but the longest
# have two rules) and the lengths; nothing changed.
printf '%s\n' 2001:db8:100::/56 2001:db8:101::/56 2001:db8:300::/80 2001:db8:301::/80 \
	'# x' 2001:db8::/32 2001:db8:400::/104 2001:db8:401::/104 2001:db8:500::1 >"$T_TMP/gap6.txt"
for how in "" --replace; do
	before=$(state F)
	t_refused 1 "F: 5 IPv6 lengths 24 bits apart${how:+ ($how)}: refused, naming the line" \
		"gap6.txt:6: 'src 2001:db8::/32': IPv6 source rules use 5 prefix lengths (/32 /56 /80 /104 /128); fitting them into 4 would take 16777223 entries" \
		"$FB" load F "$T_TMP/gap6.txt" $how
	check_eq "F: ... nothing changed" "$(state F)" "$before"
done

# The rate per packet: a plain load over the target warns, --replace re-sizes.
# (Created for 100 flows, W gets a whole chunk: 2 Mbit; some 180,000
# distinct rules are far over it.)
check "create W (capacity 100, 1%)" "$FB" create W --capacity 100 --fp-rate 0.01
python3 -c '
for i in range(100000):
    print("2001:db8:%x:%x::/64" % (i >> 16, i & 0xffff))
    print("198.51.%d.%d/%d" % ((i >> 8) & 255, i & 255, [30, 31, 32][i % 3]))' >"$T_TMP/w.txt"
bits0=$(info_field W bits)
check_eq "W: k = 4 (its chunk holds 100 flows at 1 % with four bits)" "$(info_field W hashes)" 4
"$FB" load W "$T_TMP/w.txt" >/dev/null 2>"$T_TMP/err"
check_eq "W: a load far over capacity: exit 0" $? 0
check_eq "W: ... with a warning naming load --replace" "$(grep -c 'warning:.*load --replace' "$T_TMP/err")" 1
check "W: load --replace" "$FB" load W "$T_TMP/w.txt" --replace
check_eq "W: no warning after --replace" "$("$FB" load W "$T_TMP/w.txt" --replace 2>&1 >/dev/null | grep -c 'warning: expected false-positive')" 0
python3 - "$("$FB" -j info W)" "$bits0" >"$T_TMP/wsz" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
print("grown" if d["bits"] > int(sys.argv[2]) else "same", "met" if d["fp_rate_per_packet"] <= 0.01 * 1.0001 else "missed %g" % d["fp_rate_per_packet"])
PY
check_eq "W: re-sized, per-packet rate <= 1%" "$(cat "$T_TMP/wsz")" "grown met"
check_eq "W: ... and k = 8 (four bits would miss the rate in the new size)" "$(info_field W hashes)" 8

for f in $("$FB" list | cut -d' ' -f1); do "$FB" destroy "$f" >/dev/null || fail "destroy $f"; done
check_eq "every filter destroyed" "$("$FB" list | wc -l)" 0
t_end
