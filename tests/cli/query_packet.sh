#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `query NAME --packet`: what the data path does with one packet of each
# flow, through the real XDP program (BPF_PROG_TEST_RUN, nothing sent on
# any network). A filter of a source /24, a shape (udp to a /24, port 53),
# a 5-tuple, an IPv6 source /48 and an ICMP pair with a lifetime: packets
# each rule covers are dropped with the right kind and shape (and say
# permanent, or for the ICMP pair its generation), packets none covers
# pass; --action allow inverts the verdicts, --action monitor passes all,
# the matches unchanged; -f FILE gives the same answers; -j
# one object; the answers agree with `replay --explain` of the same
# packets written as a pcap by an independent builder (IPv4, IPv6, TCP,
# UDP, ICMP, ICMPv6); the filter's `stats` counters are unchanged; once
# a rule's lifetime ends its packet passes. What is not one packet (a prefix,
# a port range, `any`, one address, a missing port) and garbage are usage
# errors (exit 2) naming the argument; a bad line of -f FILE names
# FILE:LINE (exit 1), a file of none answers nothing (exit 0). --dev: with --action, without --packet, of a device
# without a program or of none: refused.
source "$(dirname "$0")/../lib/lib.sh"
t_begin query_packet
t_traps

# 8 Mbit, 8 hashes: a few rules, no false positive to allow for.
"$FB" create q --bits 8388608 --hashes 8 >/dev/null || fail "create q"
check "add: a source /24" "$FB" add q src 198.51.100.0/24
check "add: udp to a /24, port 53" "$FB" add q udp dst 203.0.113.0/24 dport 53
check "add: a 5-tuple" "$FB" add q tcp 203.0.113.5:1234 203.0.113.6:80
check "add: an IPv6 source /48" "$FB" add q src 2001:db8:1::/48
check "add: an ICMP pair for an hour" "$FB" add q --ttl 1h icmp src 203.0.113.9 dst 203.0.113.10

# The packets: each rule's, and ones no rule covers.
PKTS=(udp 198.51.100.9:1 203.0.113.1:53
	udp 203.0.113.200:5 203.0.113.1:53
	tcp 203.0.113.5:1234 203.0.113.6:80
	tcp 203.0.113.5:1235 203.0.113.6:80
	udp [2001:db8:1::5]:7 [2001:db8::1]:9
	icmp src 203.0.113.9 dst 203.0.113.10
	icmpv6 src 2001:db8:2::1 dst 2001:db8::1
	udp 203.0.113.200:5 203.0.113.1:54
	tcp [2001:db8:2::1]:443 [2001:db8::1]:51000)
WANT='drop src   udp 198.51.100.9:1 203.0.113.1:53 (permanent)
drop shape udp 203.0.113.200:5 203.0.113.1:53 [ipv4 proto dst/24 dport/16] (permanent)
drop flow  tcp 203.0.113.5:1234 203.0.113.6:80 (permanent)
pass -     tcp 203.0.113.5:1235 203.0.113.6:80
drop src   udp [2001:db8:1::5]:7 [2001:db8::1]:9 (permanent)
drop flow  icmp 203.0.113.9 203.0.113.10 (lifetime, generation 0, ends in S s)
pass -     icmpv6 2001:db8:2::1 2001:db8::1
pass -     udp 203.0.113.200:5 203.0.113.1:54
pass -     tcp [2001:db8:2::1]:443 [2001:db8::1]:51000
5 of 9 drop; 5 matched a rule'
stats0=$("$FB" -j stats q 2>&1)
# The seconds until the ICMP rule's generation ends move: "ends in S s".
norm() { sed -E 's/ends in [0-9]+\.[0-9] s/ends in S s/'; }
got=$("$FB" query q --packet "${PKTS[@]}" | norm)
check_eq "each rule's packet dropped, with its kind and shape; the others pass" "$got" "$WANT"
check_eq "--packet after the flows too" "$("$FB" query q "${PKTS[@]:0:3}" --packet | head -1)" \
	"drop src   udp 198.51.100.9:1 203.0.113.1:53 (permanent)"
check_eq "the rule question is still asked without --packet" \
	"$("$FB" query q udp 198.51.100.9:1 203.0.113.1:53 | tail -1)" "0 of 1 maybe"

# --action: the program's verdict for the action, the matches the same.
verdicts() { "$FB" -j query q --packet "$@" "${PKTS[@]}" | t_json '" ".join(r["verdict"] for r in d["results"])'; }
matches() { "$FB" -j query q --packet "$@" "${PKTS[@]}" | t_json '" ".join(str(r["match"]) for r in d["results"])'; }
check_eq "--action allow: the verdicts inverted" "$(verdicts --action allow)" \
	"pass pass pass drop pass pass drop drop drop"
check_eq "--action monitor: every packet passes" "$(verdicts --action=monitor)" \
	"pass pass pass pass pass pass pass pass pass"
check_eq "--action drop: the filter's own" "$(verdicts --action drop --malformed drop)" \
	"drop drop drop pass drop drop pass pass pass"
check_eq "the matches whatever the action" "$(matches --action allow)" \
	"src shape flow None src flow None None None"
"$FB" -j query q --packet "${PKTS[@]:0:6}" >"$T_TMP/j"
check_eq "-j: one object, its counts" "$(t_json 'd["filter"], d["drop"], d["pass"], d["matched"], d["total"]' "$T_TMP/j")" \
	"('q', 2, 0, 2, 2)"
check_eq "-j: a shape's fields" "$(t_json 'd["results"][1]["shape"]' "$T_TMP/j")" "ipv4 proto dst/24 dport/16"

# -f FILE: the same answers.
printf '%s\n' "# the packets" "${PKTS[*]:0:3}" "" "${PKTS[*]:3:3}  # a comment" "${PKTS[*]:6:3}" \
	"${PKTS[*]:9:3}" "${PKTS[*]:12:3}" "${PKTS[*]:15:5}" "${PKTS[*]:20:5}" "${PKTS[*]:25:3}" \
	"${PKTS[*]:28:3}" >"$T_TMP/flows"
check_eq "-f FILE: the same answers" "$("$FB" query q --packet -f "$T_TMP/flows" | norm)" "$WANT"

# The same packets as a capture, built here, through replay --explain.
$PY - "$T_TMP/p.pcap" <<'PY'
import sys
from pkt import icmp4, icmp6, pcap_write, tcp4, tcp6, udp4, udp6

pcap_write(sys.argv[1], [
    udp4("198.51.100.9", 1, "203.0.113.1", 53),
    udp4("203.0.113.200", 5, "203.0.113.1", 53),
    tcp4("203.0.113.5", 1234, "203.0.113.6", 80),
    tcp4("203.0.113.5", 1235, "203.0.113.6", 80),
    udp6("2001:db8:1::5", 7, "2001:db8::1", 9),
    icmp4("203.0.113.9", "203.0.113.10"),
    icmp6("2001:db8:2::1", "2001:db8::1"),
    udp4("203.0.113.200", 5, "203.0.113.1", 54),
    tcp6("2001:db8:2::1", 443, "2001:db8::1", 51000),
])
PY
# (verdict, match, flow, shape) per packet, from either verb.
same() { t_json '"\n".join("%s %s %s %s" % (r["verdict"], r["match"], r["flow"], r.get("shape")) for r in d["results"])'; }
"$FB" -j replay q "$T_TMP/p.pcap" --explain >"$T_TMP/replay" 2>&1
replayed=$($PY -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "packet" in r:
        print("%s %s %s %s" % (r["verdict"], r["match"], r["flow"], r.get("shape")))' "$T_TMP/replay")
check_eq "replay --explain of the same packets: 9 answers" "$(echo "$replayed" | grep -c .)" 9
check_eq "query --packet agrees with replay --explain, packet by packet" \
	"$("$FB" -j query q --packet "${PKTS[@]}" | same)" "$replayed"
check_eq "... under --action allow too" \
	"$("$FB" -j query q --packet --action allow "${PKTS[@]}" | same)" \
	"$("$FB" -j replay q "$T_TMP/p.pcap" --explain --action allow | $PY -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    if "packet" in r:
        print("%s %s %s %s" % (r["verdict"], r["match"], r["flow"], r.get("shape")))')"
check_eq "the filter's stats counters are unchanged" "$("$FB" -j stats q 2>&1)" "$stats0"

# Not one packet, or not a FLOW: usage errors naming the argument.
t_refused 2 "a prefix" "argument 1: 'src 198.51.100.0/24' is not one packet: it names one address" \
	"$FB" query q --packet src 198.51.100.0/24
t_refused 2 "a rule's prefix, after a packet" "argument 4: 'tcp src 198.51.100.1 dst 203.0.113.0/31 sport 1 dport 5' is not one packet: an address is a prefix" \
	"$FB" query q --packet udp 198.51.100.9:1 203.0.113.1:53 tcp src 198.51.100.1 dst 203.0.113.0/31 sport 1 dport 5
t_refused 2 "a port range" "argument 1: .* is not one packet: it makes several rules" \
	"$FB" query q --packet udp src 198.51.100.1 dst 203.0.113.1 sport 1 dport 5-6
t_refused 2 "a port range of one prefix" "is not one packet: a port is a range" \
	"$FB" query q --packet udp src 198.51.100.1 dst 203.0.113.1 sport 1 dport 4-5
t_refused 2 "any" "argument 1: 'any src 198.51.100.1 dst 203.0.113.1' is not one packet: it fixes no protocol" \
	"$FB" query q --packet any src 198.51.100.1 dst 203.0.113.1
t_refused 2 "a missing side" "is not one packet: an address is missing" \
	"$FB" query q --packet udp dst 203.0.113.0/24 dport 53
t_refused 2 "a missing port" "is not one packet: a port is missing" \
	"$FB" query q --packet udp src 198.51.100.1 dst 203.0.113.1 dport 5
t_refused 2 "garbage" "argument 4: unknown protocol 'garbage'" \
	"$FB" query q --packet udp 198.51.100.9:1 203.0.113.1:53 garbage
t_refused 2 "a bad action" "drop" "$FB" query q --packet --action maybe udp 198.51.100.9:1 203.0.113.1:53
t_refused 2 "no FLOW" "no FLOW given" "$FB" query q --packet
t_refused 2 "--action without --packet" "\-\-action, \-\-malformed and \-\-dev go with \-\-packet" \
	"$FB" query q udp 198.51.100.9:1 203.0.113.1:53 --action allow
# --dev (the live verdicts: tests/e2e/query_dev.sh): with --action, without
# --packet, on a device without a program or none at all.
t_refused 2 "--dev with --action" "give --dev, or --action and --malformed, not both" \
	"$FB" query q --packet --dev lo --action allow udp 198.51.100.9:1 203.0.113.1:53
t_refused 2 "--dev without --packet" "\-\-action, \-\-malformed and \-\-dev go with \-\-packet" \
	"$FB" query q udp 198.51.100.9:1 203.0.113.1:53 --dev lo
t_refused 1 "--dev of a device without a program" "^flowbloom: lo runs no XDP program" \
	"$FB" query q --packet --dev lo udp 198.51.100.9:1 203.0.113.1:53
t_refused 1 "--dev of no device" "^flowbloom: no device 'fbnone$$'" \
	"$FB" query q --packet --dev "fbnone$$" udp 198.51.100.9:1 203.0.113.1:53
printf 'udp 198.51.100.9:1 203.0.113.1:53\n\n# fine so far\nudp dst 203.0.113.0/24 dport 53  # a rule\n' >"$T_TMP/bad"
t_refused 1 "-f FILE: a rule names FILE:LINE" "^flowbloom: $T_TMP/bad:4: 'udp dst 203.0.113.0/24 dport 53' is not one packet" \
	"$FB" query q --packet -f "$T_TMP/bad"
printf 'udp 198.51.100.9:1 203.0.113.1:53\nudp 198.51.100.9:1\n' >"$T_TMP/bad2"
t_refused 1 "-f FILE: garbage names FILE:LINE" "^flowbloom: $T_TMP/bad2:2: 'udp' needs SRC and DST" \
	"$FB" query q --packet -f "$T_TMP/bad2"
t_refused 1 "a filter that is not there" "no filter named 'nope'" \
	"$FB" query nope --packet udp 198.51.100.9:1 203.0.113.1:53
# A file of no packets (comments only, or empty: a list that came out
# empty) is answered as every verb reading -f answers it (query, count,
# traffic, add, del: nothing, exit 0), not as a usage error (exit 2).
printf '# nothing today\n\n' >"$T_TMP/none"
check_eq "-f FILE of no packets: no answers, exit 0, as query -f" \
	"$("$FB" query q --packet -f "$T_TMP/none" 2>&1; echo "rc=$?")" "0 of 0 drop; 0 matched a rule
rc=0"
check_eq "... -j: total 0" "$("$FB" -j query q --packet -f "$T_TMP/none" | t_json 'd["total"], d["results"]')" "(0, [])"

# A lifetime ends: the data path passes its packet. The drop is asserted
# by a query that ended within the lifetime (timed from before the add):
# on a machine so loaded that add and query took longer, the verdict
# says nothing, and the pair is added again with a lifetime twice as long
# (up to 24 s) rather than failing or passing on the clock.
ttl=3
while :; do
	t0=$(date +%s%N)
	check "add: an ICMP pair for $ttl s" "$FB" add q --ttl ${ttl}s icmp src 203.0.113.11 dst 203.0.113.12
	got=$("$FB" query q --packet icmp src 203.0.113.11 dst 203.0.113.12 | head -1 |
		norm | sed -E 's/generation [0-9]+/generation G/')
	took=$((($(date +%s%N) - t0) / 1000000))
	[ "$took" -ge $((ttl * 1000)) ] && [ "$ttl" -lt 24 ] || break
	echo "note: add and query took $took ms, more than the lifetime: again for $((2 * ttl)) s"
	ttl=$((2 * ttl))
done
check_eq "its packet dropped while it lasts ($took ms after the add started)" "$got" \
	"drop flow  icmp 203.0.113.11 203.0.113.12 (lifetime, generation G, ends in S s)"
t_wait_until $((10 + 2 * ttl)) eval '[ "$("$FB" query q --packet icmp src 203.0.113.11 dst 203.0.113.12 | head -1)" == "pass -     icmp 203.0.113.11 203.0.113.12" ]' &&
	pass "its lifetime over: its packet passes" || fail "the ICMP rule still drops after its lifetime"
t_finish
