#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Real captures (../shared/pcaps, tcpdump's test suite): every packet goes
# through the real program with `flowbloom replay`. No packet may abort.
# Then every flow the program reported (its own key, from --explain) is
# added, and a second replay must match every packet that has a key: zero
# false negatives, whatever the capture throws at the parser. A later
# fragment of TCP, UDP, UDP-Lite or SCTP is the exception: its key has port
# 0, and a 5-tuple fixes its ports, so its own key (udp A:0 B:0) must not
# match it (it passes; its first fragment decides).
source "$(dirname "$0")/../lib/lib.sh"
t_begin pcaps
t_traps

if [ ! -d "$PCAPS" ]; then
	skip "captures: $PCAPS not found"
	t_end
	exit
fi
"$FB" create caps --capacity 20000 --fp-rate 0.0001 >/dev/null || fail "create"

# All captures in one replay (one program load); JSON lines out.
# tcpdump's fuzzed captures hold records longer than their frames were on
# the wire (see the end): warned of, naming file and record, and nothing
# else on stderr.
explain_all() {
	"$FB" -j replay caps "$PCAPS"/*.pcap --explain >"$1" 2>"$T_TMP/all.err" ||
		fail "replay exited non-zero: $(grep -m1 error "$1")"
	check_eq "stderr: warnings naming a file and a record only" \
		"$(grep -cv '^flowbloom: warning: [^ ]*\.pcap: record [0-9]*: ' "$T_TMP/all.err")" 0
}

explain_all "$T_TMP/first.json"
python3 - "$T_TMP/first.json" "$T_TMP/flows.txt" >"$T_TMP/sum1" <<'PY'
import json, sys
pk = ab = keyed = 0
flows = set()
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "packet" not in d:
        continue
    pk += 1
    ab += d["verdict"] == "aborted"
    if d.get("parse") == "ok":
        keyed += 1
        flows.add(d["flow"])
open(sys.argv[2], "w").write("".join(f + "\n" for f in sorted(flows)))
print(pk, ab, keyed, len(flows))
PY
read -r packets aborted keyed nflows <"$T_TMP/sum1"
[ "${packets:-0}" -gt 3000 ] && pass "replayed $packets packets" || fail "replayed only ${packets:-0} packets"
check_eq "no packet aborted" "$aborted" 0
[ "${nflows:-0}" -gt 100 ] && pass "$nflows distinct flows keyed" || fail "only ${nflows:-0} flows"

check "add every flow the program reported" "$FB" add caps -f "$T_TMP/flows.txt"

explain_all "$T_TMP/second.json"
python3 - "$T_TMP/second.json" >"$T_TMP/sum2" <<'PY'
import json, sys
keyed = missed = ab = later = wrong = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "packet" not in d:
        continue
    ab += d["verdict"] == "aborted"
    if d.get("parse") != "ok":
        continue
    keyed += 1
    if d.get("fragment") and d["flow"].split()[0] in ("tcp", "udp", "udplite", "sctp"):
        later += 1
        if d.get("match") == "flow" or d["verdict"] != "pass":
            wrong += 1
            if wrong <= 5:
                print("PORT-0 MATCH", d, file=sys.stderr)
    elif d.get("match") != "flow" or d["verdict"] != "drop":
        missed += 1
        if missed <= 5:
            print("MISS", d, file=sys.stderr)
print(keyed, missed, ab, later, wrong)
PY
read -r keyed2 missed aborted2 later wrong <"$T_TMP/sum2"
check_eq "second replay keys the same packets" "$keyed2" "$keyed"
check_eq "zero false negatives: every keyed packet matches" "$missed" 0
[ "${later:-0}" -gt 0 ] && pass "$later later fragments of protocols with ports" ||
	fail "no later fragment of a protocol with ports in the captures"
check_eq "... none matched by its own key's 5-tuple (port 0)" "$wrong" 0
check_eq "no packet aborted (second replay)" "$aborted2" 0

# --malformed drop (with --action monitor) drops exactly the malformed
# packets: take the capture with the most of them.
read -r mfile mcount < <(python3 - "$T_TMP/first.json" <<'PY'
import json, sys, collections
c = collections.Counter()
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("parse") == "malformed":
        c[d["file"]] += 1
f, n = c.most_common(1)[0] if c else ("", 0)
print(f.rsplit("/", 1)[-1], n)
PY
)
# The filter holds 5-tuples only, which a malformed packet cannot match.
drops_of() {
	"$FB" -j replay caps "$PCAPS/$mfile" "$@" |
		python3 -c 'import json,sys; print(json.loads(sys.stdin.read().splitlines()[-1])["drop"])'
}
if [ -n "$mfile" ]; then
	check_eq "--malformed drop drops the $mcount malformed packets of $mfile" \
		"$(drops_of --action monitor --malformed drop)" "$mcount"
	# The default for a block- or allow-list: what cannot be classified is
	# dropped. Every other packet of the capture is in the filter, so an
	# allow-list passes it: the drops are exactly the malformed packets.
	check_eq "--action allow drops the $mcount malformed packets by default" \
		"$(drops_of --action allow)" "$mcount"
	check_eq "--action allow --malformed pass drops nothing" \
		"$(drops_of --action allow --malformed pass)" 0
	check_eq "--action monitor passes them by default" "$(drops_of --action monitor)" 0
else
	fail "no capture has a malformed packet"
fi
# A capture that cannot be read is named once, with the reason.
"$FB" replay caps "$T_TMP/missing.pcap" >/dev/null 2>"$T_TMP/err" && fail "replay of a missing file succeeded"
check_eq "a missing capture: one line naming it once" "$(cat "$T_TMP/err")" \
	"flowbloom: $T_TMP/missing.pcap: No such file or directory"
printf 'not a capture at all, not even its magic\n' >"$T_TMP/text.pcap"
"$FB" replay caps "$T_TMP/text.pcap" >/dev/null 2>"$T_TMP/err" && fail "replay of a text file succeeded"
check_eq "a file that is no capture: named, with the reason" "$(cat "$T_TMP/err")" \
	"flowbloom: $T_TMP/text.pcap: unknown file format"
# A capture broken after its first record (cut inside the second, as a
# copy of a capture still being written is; or a record longer than its
# snap length): the error names the file and the record, the packets
# before it are replayed and summed up, and replay exits 1.
python3 - "$T_TMP/cutrec.pcap" "$T_TMP/badlen.pcap" <<'PY'
import struct, sys
from pkt import pcap_header, pcap_record, udp4, udp6
a, b = udp4("198.51.100.9", 1, "203.0.113.1", 53), udp6("2001:db8::1", 1000, "2001:db8::2", 53)
open(sys.argv[1], "wb").write(pcap_header() + pcap_record(a) + pcap_record(b)[:30])
open(sys.argv[2], "wb").write(pcap_header() + pcap_record(a) + pcap_record(a) +
                              struct.pack("<IIII", 0, 0, 1 << 20, 1 << 20) + b)
PY
"$FB" replay caps "$T_TMP/cutrec.pcap" >"$T_TMP/cut.out" 2>"$T_TMP/err" && fail "replay of a cut capture succeeded"
check_eq "a capture cut inside a record: the file and the record named" "$(cat "$T_TMP/err")" \
	"flowbloom: $T_TMP/cutrec.pcap: record 2: truncated dump file; tried to read 66 captured bytes, only got 14"
check "... the record before it replayed" grep -q "cutrec.pcap: 1 packet: " "$T_TMP/cut.out"
LONG=$T_TMP/$(printf 'd%.0s' {1..200})/$(printf 'e%.0s' {1..200})
mkdir -p "$LONG" && cp "$T_TMP/cutrec.pcap" "$LONG/"
"$FB" replay caps "$LONG/cutrec.pcap" >/dev/null 2>"$T_TMP/err"
check_eq "... named whole, however long its path" "$(cut -d: -f2 "$T_TMP/err")" " $LONG/cutrec.pcap"
"$FB" -j replay caps "$T_TMP/badlen.pcap" >"$T_TMP/out" 2>"$T_TMP/err" && fail "replay of a bad record length succeeded"
check_eq "a record longer than the snap length: the file and the record named (-j)" \
	"$(head -1 "$T_TMP/out")" \
	"{\"error\":\"$T_TMP/badlen.pcap: record 3: invalid packet capture length 1048576, bigger than snaplen of 65535\"}"
check_eq "... then the summary of the 2 records before" \
	"$(tail -1 "$T_TMP/out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["packets"])')" 2
# A record the capture cut short (tcpdump -s 54: caplen < len) is replayed
# as kept, so an IPv6 UDP datagram cut after its IP header is malformed
# here while the device saw it whole: replay says which records those are.
python3 - "$T_TMP/snap.pcap" <<'PY'
import struct, sys
from pkt import pcap_header, pcap_record, udp6
fr = udp6("2001:db8::1", 1000, "2001:db8::2", 53)
with open(sys.argv[1], "wb") as f:
    f.write(pcap_header() + pcap_record(fr))
    f.write(struct.pack("<IIII", 0, 0, 54, len(fr)) + fr[:54])
PY
"$FB" -j replay caps --explain "$T_TMP/snap.pcap" >"$T_TMP/snap.json"
check_eq "a record the capture truncated: said per packet and counted" "$(python3 - "$T_TMP/snap.json" <<'PY'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
print([(x.get("truncated"), x.get("parse")) for x in d[:-1]], d[-1].get("truncated"))
PY
)" "[(False, 'ok'), (True, 'malformed')] 1"
check "... and in the text summary" bash -c \
	'"$1" replay caps "$2" | grep -q "1 malformed, .*, 1 truncated by the capture$"' _ "$FB" "$T_TMP/snap.pcap"
# A malformed packet is matched on its addresses, if the parser read them:
# --explain names them beside the rule kind that matched (else the rule
# that decided could not be told), and says none were read for a frame
# cut before them.
check "add a source rule for the truncated packet" "$FB" add caps src 2001:db8::1
python3 - "$T_TMP/snap.pcap" <<'PY2'
import struct, sys
from pkt import udp6
fr = udp6("2001:db8::1", 1000, "2001:db8::2", 53)
with open(sys.argv[1], "ab") as f:
    f.write(struct.pack("<IIII", 0, 0, 30, len(fr)) + fr[:30])
PY2
check_eq "--explain: the addresses of a malformed packet, and the rule" \
	"$("$FB" replay caps --explain "$T_TMP/snap.pcap" | sed -n '2,3p' | tr -s ' ')" \
	"2 drop src (malformed: src 2001:db8::1 dst 2001:db8::2) (permanent) (truncated capture)
3 drop - (malformed) (truncated capture)"
check_eq "... -j: addresses" "$("$FB" -j replay caps --explain "$T_TMP/snap.pcap" | python3 -c '
import json, sys
print([json.loads(l).get("addresses", "-") for l in sys.stdin][:3])')" \
	"[None, 'src 2001:db8::1 dst 2001:db8::2', None]"
# Raw IP captures (link types RAW, IPV4, IPV6) get a made-up Ethernet
# header whose EtherType the link type gives (RAW: the version's, 6 for
# IPv6, else IPv4), as the sender's stack would have labelled them: a
# record that is no valid IP is malformed (dropped by an allow-list by
# default), not a non-IP frame passed; an empty record is skipped as a
# runt, as an empty Ethernet or cooked one is; an IPv6 packet in an IPV4
# capture is malformed IPv4.
python3 - "$T_TMP/raw.pcap" "$T_TMP/ipv4.pcap" <<'PY'
import sys
from pkt import pcap_header, pcap_record, udp4, udp6
ip4, ip6 = udp4("198.51.100.9", 1, "203.0.113.1", 53)[14:], udp6("2001:db8::1", 1, "2001:db8::2", 53)[14:]
open(sys.argv[1], "wb").write(pcap_header(101) + b"".join(pcap_record(r) for r in
                              (b"", bytes(28), b"\x55" + ip4[1:], ip4, ip6)))
open(sys.argv[2], "wb").write(pcap_header(228) + pcap_record(ip6) + pcap_record(ip4))
PY
raw_counts() {
	"$FB" -j replay caps "$@" | python3 -c 'import json,sys
d = json.loads(sys.stdin.read().splitlines()[-1])
print(d["packets"], d["skipped_runt"], d["non_ip"], d["malformed"], d["drop"])'
}
check_eq "raw IP: an empty record a runt, two that are no IP malformed (packets runt non-ip malformed drop)" \
	"$(raw_counts "$T_TMP/raw.pcap" --action monitor --malformed drop)" "5 1 0 2 2"
check_eq "... each dropped by an allow-list's default" "$("$FB" replay caps --explain --action allow \
	"$T_TMP/raw.pcap" | sed -n '2,3p' | tr -s ' ')" "2 drop - (malformed: src 0.0.0.0 dst 0.0.0.0)
3 drop - (malformed: src 198.51.100.9 dst 203.0.113.1)"
check_eq "link type IPV4: an IPv6 packet is malformed IPv4, the IPv4 one parsed" \
	"$(raw_counts "$T_TMP/ipv4.pcap" --action monitor --malformed drop)" "2 0 0 1 1"
# `-` is stdin, as for load and import (`tcpdump -w - | flowbloom replay
# NAME -`), named <stdin>; a closed stdin is an error naming it.
check_eq "a capture from a pipe: - is stdin" \
	"$(cat "$T_TMP/ipv4.pcap" | "$FB" replay caps - 2>&1 | cut -d';' -f1)" \
	"<stdin>: 2 packets: 1 pass, 1 drop, 0 aborted"
check_eq "... its errors name <stdin> and the record" \
	"$(cat "$T_TMP/cutrec.pcap" | "$FB" replay caps - 2>&1 >/dev/null)" \
	"flowbloom: <stdin>: record 2: truncated dump file; tried to read 66 captured bytes, only got 14"
check_eq "... a closed stdin" "$("$FB" replay caps - 2>&1 >/dev/null <&-)" \
	"flowbloom: <stdin>: Bad file descriptor"
# A record holding more bytes than its frame had on the wire (caplen >
# len: no capture writes one; tcpdump prints "[Invalid header]" for it)
# is replayed as the device saw it, at its length on the wire, and said:
# once per file on stderr naming the first such record, per packet with
# --explain, counted in the summary. Here an IPv6 UDP datagram whose UDP
# header was never on the wire (len 54) is malformed, not the datagram
# the extra bytes make; one of 10 bytes on the wire is a runt.
python3 - "$T_TMP/over.pcap" <<'PY'
import struct, sys
from pkt import pcap_header, pcap_record, udp6
fr = udp6("2001:db8::1", 1000, "2001:db8::2", 53)
with open(sys.argv[1], "wb") as f:
    f.write(pcap_header() + pcap_record(fr))
    f.write(struct.pack("<IIII", 0, 0, len(fr), 54) + fr)
    f.write(struct.pack("<IIII", 0, 0, len(fr), 10) + fr)
PY
"$FB" -j replay caps --explain "$T_TMP/over.pcap" >"$T_TMP/over.json" 2>"$T_TMP/err" ||
	fail "replay of a record longer than on the wire exited non-zero"
check_eq "caplen > len: replayed at its length on the wire, said per packet and counted" \
	"$(python3 - "$T_TMP/over.json" <<'PY'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
print([(x.get("overlong"), x.get("parse", x.get("verdict"))) for x in d[:-1]],
      d[-1].get("overlong"), d[-1].get("skipped_runt"), d[-1].get("malformed"))
PY
)" "[(False, 'ok'), (True, 'malformed'), (True, 'skipped')] 2 1 1"
check_eq "... one warning naming the file and the first such record" "$(cat "$T_TMP/err")" \
	"flowbloom: warning: $T_TMP/over.pcap: 2 records hold more bytes than their frames had on the wire, replayed as their length on the wire; the first: record 2, 66 bytes captured of a 54-byte frame"
head -c $((24 + 16 + 66 + 16 + 66)) "$T_TMP/over.pcap" >"$T_TMP/over1.pcap"
check_eq "... the text summary and the warning for one record" \
	"$("$FB" replay caps "$T_TMP/over1.pcap" 2>&1 | sed 's/^.*1 malformed, .*, /... /')" \
	"flowbloom: warning: $T_TMP/over1.pcap: record 2: 66 bytes captured of a 54-byte frame: replayed as its 54 bytes on the wire
... 1 longer than on the wire"
# A test run the kernel refuses (strace makes the third BPF_PROG_TEST_RUN
# fail, aimed again from each try's trace until that is the call it hit):
# named by its record, as every other replay message names one, counted in
# the summary, exit 1.
if command -v strace >/dev/null; then
	strace -f -qq -o "$T_TMP/tr.trace" -e trace=bpf "$FB" replay caps "$PCAPS/IGMP_V1.pcap" >/dev/null 2>&1
	got=
	for try in 1 2 3; do
		when=$(grep -n 'BPF_PROG_TEST_RUN' "$T_TMP/tr.trace" | sed -n 3p | cut -d: -f1)
		strace -f -qq -o "$T_TMP/tr.trace" -e trace=bpf -e inject=bpf:error=EFAULT:when="$when" \
			"$FB" replay caps "$PCAPS/IGMP_V1.pcap" >"$T_TMP/tr.out" 2>"$T_TMP/err"
		rc=$?
		[ "$(grep 'INJECTED' "$T_TMP/tr.trace" | grep -c 'BPF_PROG_TEST_RUN')" = 1 ] || continue
		got="exit $rc: $(cat "$T_TMP/err") / $(sed 's/^.*skipped (runt)//' "$T_TMP/tr.out")"
		break
	done
	check_eq "replay whose third test run fails: exit 1, the record named, counted" "$got" \
		"exit 1: flowbloom: $PCAPS/IGMP_V1.pcap: record 3: test run failed: Bad address / , 1 not run (test run failed)"
else
	skip "replay whose test run fails: strace is not installed"
fi
"$FB" destroy caps >/dev/null || fail "destroy"
t_end
