#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Permanent or lifetime: `query NAME --packet` and `replay --explain` say
# whether the rule that decided a packet is one of the filter's own
# (permanent) or a rule with a lifetime, with its generation and when that
# ends, as the XDP program itself records it (BPF_PROG_TEST_RUN, nothing
# sent). On a filter with permanent rules (a source /25, an IPv6 source
# /48) and rules with a lifetime in three generations (a source /24, a
# shape, a 5-tuple of each family): each packet names the right one; a
# packet that a permanent and a lifetime rule both hold is the permanent
# rule's (the program probes the filter's own rules first); one that two
# generations hold is the first generation's in slot order (generation
# 0 before 1, though 1 ends sooner), whatever the rule kinds; a packet no
# rule covers says neither. Text and -j, on the default filter (NH,
# blocked; of several chunks, and of one, which the data path reads
# beside its head) and on a classic SipHash one (the other probe path),
# and replay --explain of the same packets as a pcap built here agrees.
source "$(dirname "$0")/../lib/lib.sh"
t_begin trace_life
t_traps

# The seconds move: "ends in S s".
norm() { sed -E 's/(ends in|ended) [0-9]+\.[0-9] s/\1 S s/'; }
# The generation an add reported ("... generation N, which ends in ...").
gen_of() { sed -nE 's/.*: generation ([0-9]+), which ends in.*/\1/p'; }

PKTS=(udp 198.51.100.9:1 203.0.113.1:53
	udp 203.0.113.9:1 203.0.113.1:7
	udp 198.51.100.200:5 198.51.100.1:53
	udp 203.0.113.200:5 198.51.100.1:53
	tcp 198.51.100.7:1 203.0.113.1:80
	tcp [2001:db8:2::1]:443 [2001:db8::1]:51000
	udp [2001:db8:1::5]:7 [2001:db8::1]:9
	udp 198.51.100.200:5 203.0.113.1:54)

# The same packets as a capture.
$PY - "$T_TMP/p.pcap" <<'PY'
import sys
from pkt import pcap_write, tcp4, tcp6, udp4, udp6

pcap_write(sys.argv[1], [
    udp4("198.51.100.9", 1, "203.0.113.1", 53),
    udp4("203.0.113.9", 1, "203.0.113.1", 7),
    udp4("198.51.100.200", 5, "198.51.100.1", 53),
    udp4("203.0.113.200", 5, "198.51.100.1", 53),
    tcp4("198.51.100.7", 1, "203.0.113.1", 80),
    tcp6("2001:db8:2::1", 443, "2001:db8::1", 51000),
    udp6("2001:db8:1::5", 7, "2001:db8::1", 9),
    udp4("198.51.100.200", 5, "203.0.113.1", 54),
])
PY

# one LABEL CREATE-OPTIONS...: the whole check on one filter.
one() {
	local label=$1 f=trl$RANDOM ga gb gc want got rows
	shift
	"$FB" create "$f" "$@" >/dev/null || { fail "$label: create"; return; }
	check "$label: add: permanent rules" "$FB" add "$f" src 198.51.100.0/25 src 2001:db8:1::/48
	ga=$("$FB" add "$f" --ttl 1h src 203.0.113.0/24 | gen_of)
	gb=$("$FB" add "$f" --ttl 10m udp dst 198.51.100.0/24 dport 53 | gen_of)
	gc=$("$FB" add "$f" --ttl 20m tcp 198.51.100.7:1 203.0.113.1:80 | gen_of)
	check_eq "$label: an IPv6 5-tuple joins the 20 min generation" \
		"$("$FB" add "$f" --ttl 20m tcp [2001:db8:2::1]:443 [2001:db8::1]:51000 | gen_of)" "$gc"
	check_eq "$label: three generations, in slot order as added" "$ga $gb $gc" "0 1 2"

	want="drop src   udp 198.51.100.9:1 203.0.113.1:53 (permanent)
drop src   udp 203.0.113.9:1 203.0.113.1:7 (lifetime, generation $ga, ends in S s)
drop shape udp 198.51.100.200:5 198.51.100.1:53 [ipv4 proto dst/24 dport/16] (lifetime, generation $gb, ends in S s)
drop src   udp 203.0.113.200:5 198.51.100.1:53 (lifetime, generation $ga, ends in S s)
drop src   tcp 198.51.100.7:1 203.0.113.1:80 (permanent)
drop flow  tcp [2001:db8:2::1]:443 [2001:db8::1]:51000 (lifetime, generation $gc, ends in S s)
drop src   udp [2001:db8:1::5]:7 [2001:db8::1]:9 (permanent)
pass -     udp 198.51.100.200:5 203.0.113.1:54
7 of 8 drop; 7 matched a rule"
	got=$("$FB" query "$f" --packet "${PKTS[@]}" | norm)
	check_eq "$label: query --packet: permanent, or lifetime and generation, per packet" "$got" "$want"

	# -j: the same, and when each generation ends (a rule of lifetime T
	# ends with a generation ending within T / 4 after it).
	"$FB" -j query "$f" --packet "${PKTS[@]}" >"$T_TMP/q.json"
	rows=$($PY -c '
import json, sys
life = {0: 3600, 1: 600, 2: 1200}
for r in json.load(open(sys.argv[1]))["results"]:
    e = r.get("ends_in")
    ok = "-" if e is None else ["out", "in"][life[r["generation"]] < e <= 1.25 * life[r["generation"]]]
    print(r["match"], r["lifetime"], r.get("generation"), ok)' "$T_TMP/q.json")
	check_eq "$label: -j: lifetime, generation, ends_in in its bounds" "$rows" "src False None -
src True 0 in
shape True 1 in
src True 0 in
src False None -
flow True 2 in
src False None -
None None None -"

	# replay --explain of the same packets as a capture: the same answers.
	"$FB" replay "$f" "$T_TMP/p.pcap" --explain >"$T_TMP/r.txt" 2>&1
	check_eq "$label: replay --explain: the same per packet" \
		"$(head -8 "$T_TMP/r.txt" | norm | tr -s ' ')" \
		"$(echo "$want" | head -8 | awk '{ print NR " " $0 }' | tr -s ' ')"
	"$FB" -j replay "$f" "$T_TMP/p.pcap" --explain >"$T_TMP/r.json"
	rows=$($PY -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "packet" in r:
        print(r["verdict"], r["match"], r["flow"], r["lifetime"], r.get("generation"))' "$T_TMP/r.json")
	check_eq "$label: replay -j --explain: 8 answers" "$(echo "$rows" | grep -c .)" 8
	check_eq "$label: replay -j --explain agrees with query -j" "$rows" "$($PY -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(r["verdict"], r["match"], r["flow"], r["lifetime"], r.get("generation"))' "$T_TMP/q.json")"
	"$FB" destroy "$f" >/dev/null || fail "$label: destroy"
}

one "blocked NH" --bits 8388608 --hashes 8
one "blocked NH, one chunk" --bits 262144 --hashes 4
one "classic SipHash" --bits 8388608 --hashes 8 --layout classic --hash siphash13
t_finish
