#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom ipfix` end to end: a filter attached (XDP, generic) with
# --monitor --new-flows to a veth between two network namespaces; real UDP
# and TCP, IPv4 and IPv6, across it (one flow dropped by the filter). The
# exporter runs in the receiving namespace and sends:
# - over UDP to nfcapd (Debian nfdump): `nfdump -r` must show every flow sent,
#   with its addresses, ports and protocol, and the counts;
# - over TCP to tests/e2e/ipfix_decode.py, a collector written from RFC 7011:
#   the exact templates, every new flow's fields, estimate records that are
#   never below the truth with their confidence interval, sequence numbers
#   (data records sent before each message), the observation domain;
# - over UDP with a short --template-refresh: templates sent again;
# - over UDP to a port nobody listens on, then to a collector started late,
#   and over TCP to a collector that restarts: the exporter survives, and
#   later records arrive after their templates, in a new session;
# - with --monitor alone (no new-flow events): estimates only.
# SIGTERM ends it cleanly (exit 0, a summary line).
#
# The EXIT trap stops the collectors and exporters, removes the namespaces
# and every pin. Addresses: 198.51.100.0/24, 2001:db8::/32 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin ipfix

DECODE=$(cd "$(dirname "$0")" && pwd)/ipfix_decode.py
BG=()

cleanup() {
	local p d
	for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.2
	t_net_down
	for d in "$FLOWBLOOM_ROOT"/*/monitor; do
		[ -d "$d" ] && rm -f "$d"/* && rmdir "$d"
	done
	t_cleanup_filters
}
t_traps

ina() { inA "$@"; }
# wait_listen udp|tcp PORT: until the collector in NSB has bound its port (a
# fixed sleep lost the first records on a loaded machine).
wait_listen() {
	local i
	for i in $(seq 100); do
		nsenter --net="/run/netns/$NSB" ss -Hln"${1:0:1}" "sport = :$2" | grep -q . && return 0
		sleep 0.1
	done
	fail "collector on $1 port $2 never listened"
}

# --- usage and errors ------------------------------------------------------------
"$FB" create nomon --capacity 1000 --fp-rate 0.01 >/dev/null
"$FB" ipfix nomon >/dev/null 2>&1
check_eq "ipfix: --collector is required (usage error)" "$?" 2
"$FB" ipfix nomon --collector 127.0.0.1 >/dev/null 2>&1
check_eq "ipfix: a collector without a port (usage error)" "$?" 2
"$FB" ipfix nomon --collector 127.0.0.1:70000 >/dev/null 2>&1
check_eq "ipfix: port 70000 (usage error)" "$?" 2
"$FB" ipfix nomon --collector 127.0.0.1:4739 --interval 0 >/dev/null 2>&1
check_eq "ipfix: --interval 0 (usage error)" "$?" 2
check_fails "ipfix: a filter without monitoring" "$FB" ipfix nomon --collector 127.0.0.1:4739
check_fails "ipfix: no such filter" "$FB" ipfix nosuch --collector 127.0.0.1:4739
"$FB" destroy nomon >/dev/null

t_net_pair || t_skip_all "$T_NET_WHY"
t_addr "$NSA" "$VA" 198.51.100.1/24 2001:db8::1/64
t_addr "$NSB" "$VB" 198.51.100.2/24 2001:db8::2/64
IFINDEX=$(ip -n "$NSB" -o link show "$VB" | cut -d: -f1)

check "create" "$FB" create f --capacity 1000 --fp-rate 0.001 --counting
check "block two flows" "$FB" add f udp 198.51.100.1:40003 198.51.100.2:5003 udp 198.51.100.1:41003 198.51.100.2:5003
check "attach --monitor --new-flows" "$FB" -n "$NSB" attach f "$VB" --mode generic --monitor --new-flows

# The traffic, from A to B: three UDP flows of 5 datagrams (100 bytes of
# payload: 142-byte frames), the third dropped by the filter; one IPv6 UDP
# flow of 3; one TCP connection. Source ports are fixed so flows are known.
traffic() {
	local base=$1
	nsenter --net="/run/netns/$NSB" "$PY" -c '
import socket, sys
ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("198.51.100.2", int(sys.argv[1]))); ls.listen(1); ls.settimeout(3)
c, _ = ls.accept(); c.recv(100); c.close()' $((base + 80)) &
	local srv=$!
	sleep 0.3
	ina "$PY" -c '
import socket, sys
b = int(sys.argv[1])
for i in (1, 2, 3):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("198.51.100.1", b + i))
    for _ in range(5):
        s.sendto(b"m" * 100, ("198.51.100.2", 5000 + i))
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("2001:db8::1", b + 4))
for _ in range(3):
    s.sendto(b"x" * 50, ("2001:db8::2", 5004))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.bind(("198.51.100.1", b + 5))
t.connect(("198.51.100.2", b + 80)); t.send(b"hello"); t.close()' "$base"
	wait $srv
}

# --- UDP to nfcapd, read back with nfdump -r ---------------------------------------
mkdir -p "$T_TMP/nf"
nsenter --net="/run/netns/$NSB" nfcapd -w "$T_TMP/nf" -b 127.0.0.1 -p 9995 -t 3600 >"$T_TMP/nfcapd.log" 2>&1 &
NFCAPD=$!
BG+=($NFCAPD)
sleep 0.5
"$FB" -n "$NSB" ipfix f --collector 127.0.0.1:9995 --interval 1 >"$T_TMP/exp.out" 2>"$T_TMP/exp.err" &
EXP=$!
BG+=($EXP)
sleep 0.5
traffic 40000
sleep 1.5
kill -TERM $EXP
wait $EXP
check_eq "ipfix: SIGTERM ends it with status 0" "$?" 0
grep -q "^sent [1-9][0-9]* new-flow records and [1-9][0-9]* estimate records" "$T_TMP/exp.out" &&
	pass "ipfix: summary line on exit" || fail "ipfix: summary line: $(cat "$T_TMP/exp.out" "$T_TMP/exp.err")"
kill -TERM $NFCAPD
wait $NFCAPD 2>/dev/null
NFFILE=$(ls "$T_TMP"/nf/nfcapd.* 2>/dev/null | grep -v current | head -1)
if [ -z "$NFFILE" ]; then
	fail "nfcapd wrote no file: $(cat "$T_TMP/nfcapd.log")"
else
	nfdump -q -r "$NFFILE" -o "fmt:%sa %da %sp %dp %pr %pkt %byt" | sed 's/  */ /g; s/^ //; s/ $//' >"$T_TMP/nfdump.txt"
	for want in "198.51.100.1 198.51.100.2 40001 5001 UDP" "198.51.100.1 198.51.100.2 40002 5002 UDP" \
		"198.51.100.1 198.51.100.2 40003 5003 UDP" "2001:db8::1 2001:db8::2 40004 5004 UDP" \
		"198.51.100.1 198.51.100.2 40005 40080 TCP"; do
		grep -q "^$want " "$T_TMP/nfdump.txt" && pass "nfdump -r shows $want" ||
			fail "nfdump -r shows $want: $(head -c 600 "$T_TMP/nfdump.txt")"
	done
	# nfcapd 1.7.1 does not read forwardingStatus from IPFIX (only from
	# NetFlow v9): the verdict is checked by the RFC 7011 decoder below.
	check_eq "nfdump: the new-flow record of a flow (1 packet, its 142 bytes)" \
		"$(grep -c "^198.51.100.1 198.51.100.2 40001 5001 UDP 1 142$" "$T_TMP/nfdump.txt")" 1
	check_eq "nfdump: the estimate record of a 5-datagram flow (5 packets, 710 bytes)" \
		"$(grep -c "^198.51.100.1 198.51.100.2 40002 5002 UDP 5 710$" "$T_TMP/nfdump.txt")" 1
fi

# --- TCP to the RFC 7011 decoder ------------------------------------------------------
nsenter --net="/run/netns/$NSB" "$PY" "$DECODE" tcp 127.0.0.1 4739 "$T_TMP/tcp.json" &
BG+=($!)
wait_listen tcp 4739
"$FB" -n "$NSB" ipfix f --collector 127.0.0.1:4739 --tcp --interval 0.5 --observation-domain 7 \
	>"$T_TMP/exp.out" 2>"$T_TMP/exp.err" &
EXP=$!
BG+=($EXP)
sleep 0.5
# Same 5-tuples as before are in the seen-set (60 s period): new ports.
traffic 41000
sleep 1.2
kill -INT $EXP
wait $EXP
check_eq "ipfix --tcp: SIGINT ends it with status 0" "$?" 0
sleep 0.3
"$PY" - "$T_TMP/tcp.json" "$IFINDEX" >"$T_TMP/tcp.check" 2>&1 <<'EOF'
import json, sys, time
L = [json.loads(l) for l in open(sys.argv[1])]
ifindex = int(sys.argv[2])
def ok(label, cond):
    print(("PASS " if cond else "FAIL ") + label)
errors = [l for l in L if "error" in l]
ok("decoder: no malformed message or set %s" % errors[:2], not errors)
msgs = [l["msg"] for l in L if "msg" in l]
ok("decoder: messages received", len(msgs) > 0)
ok("every message: version 10, observation domain 7",
   all(m["version"] == 10 and m["domain"] == 7 for m in msgs))
seq, good = 0, True
for m in msgs:
    good &= m["seq"] == seq
    seq += m["data_records"]
ok("sequence numbers count the data records sent before each message", good)
T = {l["template"]: [tuple(f) for f in l["fields"]] for l in L if "template" in l}
common_nf = [(152, 8, 0), (153, 8, 0)]
tail_nf = [(7, 2, 0), (11, 2, 0), (4, 1, 0), (10, 4, 0), (89, 1, 0), (2, 8, 0), (1, 8, 0)]
ok("template 256: new flow, IPv4", T.get(256) == common_nf + [(8, 4, 0), (12, 4, 0)] + tail_nf)
ok("template 257: new flow, IPv6", T.get(257) == common_nf + [(27, 16, 0), (28, 16, 0)] + tail_nf)
tail_est = [(7, 2, 0), (11, 2, 0), (4, 1, 0), (2, 8, 0), (1, 8, 0), (338, 8, 0), (337, 8, 0),
            (336, 8, 0), (337, 8, 0), (336, 8, 0)]
ok("template 258: estimate, IPv4, with RFC 5477 confidence fields",
   T.get(258) == common_nf + [(8, 4, 0), (12, 4, 0)] + tail_est)
ok("template 259: estimate, IPv6", T.get(259) == common_nf + [(27, 16, 0), (28, 16, 0)] + tail_est)
R = [l for l in L if "rec" in l]
def find(tid, sp, dp):
    return [r["rec"] for r in R if r["tid"] == tid and r["rec"]["7"] == sp and r["rec"]["11"] == dp]
for sp, dp, fwd in ((41001, 5001, 64), (41002, 5002, 64), (41003, 5003, 129)):
    n = find(256, sp, dp)
    ok("new flow %d->%d: one record" % (sp, dp), len(n) == 1)
    if n:
        r = n[0]
        ok("new flow %d->%d: addresses, protocol, ingressInterface, 1 packet of 142 bytes, "
           "forwardingStatus %d" % (sp, dp, fwd),
           (r["8"], r["12"], r["4"], r["10"], r["2"], r["1"], r["89"]) ==
           ("198.51.100.1", "198.51.100.2", 17, ifindex, 1, 142, fwd))
        ok("new flow %d->%d: start time is now (epoch ms)" % (sp, dp), abs(r["152"] / 1000 - time.time()) < 60)
v6 = find(257, 41004, 5004)
ok("IPv6 new flow: addresses", len(v6) == 1 and (v6[0]["27"], v6[0]["28"]) == ("2001:db8::1", "2001:db8::2"))
tcp = find(256, 41005, 41080)
ok("TCP new flow: protocol 6", len(tcp) == 1 and tcp[0]["4"] == 6)
E = find(258, 41002, 5002)
ok("estimate records for the 5-datagram flow", len(E) >= 1)
tp = sum(e["2"] for e in E)
tb = sum(e["1"] for e in E)
ok("estimates never below the truth: %d packets, %d bytes over the intervals" % (tp, tb),
   tp >= 5 and tb >= 710)
good = all(0 <= e["337"][0] <= e["2"] == e["336"][0] and 0 <= e["337"][1] <= e["1"] == e["336"][1]
           and 0.99 < e["338"] < 1 for e in E)
ok("estimate records: 0 <= lower <= reported = upper for packets and octets, confidence "
   "1 - delta' (0.993 at the defaults)", good)
ok("estimate records: the lower limits are below the truth (%g packets, %g bytes)" %
   (sum(e["337"][0] for e in E), sum(e["337"][1] for e in E)),
   sum(e["337"][0] for e in E) <= 5 and sum(e["337"][1] for e in E) <= 710)
ok("estimate records: intervals end after they start", all(e["153"] >= e["152"] for e in E))
EOF
while read -r verdict label; do
	if [ "$verdict" = PASS ]; then pass "ipfix --tcp: $label"; else fail "ipfix --tcp: $label"; fi
done <"$T_TMP/tcp.check"
[ -s "$T_TMP/tcp.check" ] || fail "ipfix --tcp: the check did not run"
check "block a flow for the next part" "$FB" add f udp 198.51.100.1:42003 198.51.100.2:5003

# --- UDP: template refresh; collector missing, then started ---------------------------
"$FB" -n "$NSB" ipfix f --collector 127.0.0.1:4740 --interval 60 --template-refresh 0.3 \
	>"$T_TMP/exp.out" 2>"$T_TMP/exp.err" &
EXP=$!
BG+=($EXP)
sleep 0.3
# Nobody listens yet: the datagrams are refused (ICMP port unreachable).
ina "$PY" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("198.51.100.1", 42001))
s.sendto(b"a" * 10, ("198.51.100.2", 5001))'
sleep 0.8
nsenter --net="/run/netns/$NSB" "$PY" "$DECODE" udp 127.0.0.1 4740 "$T_TMP/udp.json" &
BG+=($!)
wait_listen udp 4740
# The exporter cannot know when a UDP collector appears: its first send after
# the refusals may still report the old ICMP error and start a new session
# (templates first, a second later). Send the next flow once the collector
# has templates, as an operator's collector would have after a refresh.
for i in $(seq 50); do grep -q '"template"' "$T_TMP/udp.json" 2>/dev/null && break; sleep 0.1; done
ina "$PY" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("198.51.100.1", 42003))
s.sendto(b"b" * 10, ("198.51.100.2", 5003))'
sleep 1.5
kill -TERM $EXP
wait $EXP
check_eq "ipfix (collector late): still running, exits 0" "$?" 0
sleep 0.2
"$PY" - "$T_TMP/udp.json" >"$T_TMP/udp.check" 2>&1 <<'EOF'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
def ok(label, cond):
    print(("PASS " if cond else "FAIL ") + label)
msgs = [i for i, l in enumerate(L) if "msg" in l]
tmsgs = set()
cur = None
for i, l in enumerate(L):
    if "msg" in l:
        cur = i
    elif "template" in l:
        tmsgs.add(cur)
ok("template refresh: templates in at least 4 messages in 2 s (every 0.3 s), got %d" % len(tmsgs),
   len(tmsgs) >= 4)
# A UDP collector that starts late may get records (of any flow the veth
# carried, IPv6 neighbour discovery included) in messages before the next
# template refresh: RFC 7011 section 8.4 has it discard them. What the
# exporter owes it: nothing malformed, and every record after the first
# templates decodable.
first = next((i for i, l in enumerate(L) if "template" in l), len(L))
ok("no record before its template (once templates arrived), nothing malformed",
   not [l for i, l in enumerate(L) if "error" in l and
        (i > first or "before its template" not in l["error"])])
rec = [l["rec"] for l in L if l.get("tid") == 256 and l["rec"]["7"] == 42003]
ok("record sent after the collector started arrives, dropped (129)", len(rec) == 1 and rec[0]["89"] == 129)
EOF
while read -r verdict label; do
	if [ "$verdict" = PASS ]; then pass "ipfix --udp: $label"; else fail "ipfix --udp: $label"; fi
done <"$T_TMP/udp.check"

# --- TCP: the collector restarts ------------------------------------------------------
send1() {
	ina "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("198.51.100.1", int(sys.argv[1])))
s.sendto(b"c" * 10, ("198.51.100.2", 5001))' "$1"
}
nsenter --net="/run/netns/$NSB" "$PY" "$DECODE" tcp 127.0.0.1 4741 "$T_TMP/tcp1.json" &
COL=$!
BG+=($COL)
wait_listen tcp 4741
"$FB" -n "$NSB" ipfix f --collector 127.0.0.1:4741 --tcp >"$T_TMP/exp.out" 2>"$T_TMP/exp.err" &
EXP=$!
BG+=($EXP)
sleep 0.5
send1 44001
sleep 0.5
kill $COL
wait $COL 2>/dev/null
sleep 0.3
send1 44002 # into the closed connection: the exporter learns it is gone
sleep 0.5
send1 44003
sleep 0.5
nsenter --net="/run/netns/$NSB" "$PY" "$DECODE" tcp 127.0.0.1 4741 "$T_TMP/tcp2.json" &
BG+=($!)
wait_listen tcp 4741
sleep 1.5
send1 44004
sleep 0.5
kill -TERM $EXP
wait $EXP
check_eq "ipfix --tcp, collector restarted: still running, exits 0" "$?" 0
check_eq "... the failure reported once" "$(grep -c 'retrying' "$T_TMP/exp.err")" 1
"$PY" - "$T_TMP/tcp1.json" "$T_TMP/tcp2.json" >"$T_TMP/tcp2.check" 2>&1 <<'EOF'
import json, sys
A = [json.loads(l) for l in open(sys.argv[1])]
B = [json.loads(l) for l in open(sys.argv[2])]
def ok(label, cond):
    print(("PASS " if cond else "FAIL ") + label)
ok("first collector got the first flow", any(l.get("rec", {}).get("7") == 44001 for l in A))
ok("new connection: no error (no data before its templates)", not [l for l in B if "error" in l])
msgs = [l["msg"] for l in B if "msg" in l]
ok("new connection: sequence numbers start again at 0", msgs and msgs[0]["seq"] == 0)
ok("new connection: the flow sent after it arrives", any(l.get("rec", {}).get("7") == 44004 for l in B))
EOF
while read -r verdict label; do
	if [ "$verdict" = PASS ]; then pass "ipfix --tcp: $label"; else fail "ipfix --tcp: $label"; fi
done <"$T_TMP/tcp2.check"

check "detach" "$FB" -n "$NSB" detach "$VB"
check "destroy" "$FB" destroy f

# --- a sketch without new-flow events: estimates only -----------------------------
check "create g" "$FB" create g --capacity 1000 --fp-rate 0.001
check "attach g --monitor (no --new-flows)" "$FB" -n "$NSB" attach g "$VB" --mode generic --monitor
nsenter --net="/run/netns/$NSB" "$PY" "$DECODE" tcp 127.0.0.1 4742 "$T_TMP/tcp3.json" &
BG+=($!)
wait_listen tcp 4742
"$FB" -n "$NSB" ipfix g --collector 127.0.0.1:4742 --tcp --interval 0.5 >"$T_TMP/exp.out" 2>"$T_TMP/exp.err" &
EXP=$!
BG+=($EXP)
sleep 0.3
for p in 45001 45002; do send1 $p; done
sleep 1.2
kill -TERM $EXP
wait $EXP
check_eq "ipfix, sketch only: exits 0" "$?" 0
sleep 0.2
check_eq "ipfix, sketch only: no new-flow record" "$(grep -c '"tid": 25[67]' "$T_TMP/tcp3.json")" 0
check_eq "ipfix, sketch only: an estimate record per flow sent" \
	"$(grep -c '"tid": 258, "rec": {[^}]*"7": 4500[12]' "$T_TMP/tcp3.json")" 2
check "detach g" "$FB" -n "$NSB" detach "$VB"
check "destroy g" "$FB" destroy g
t_finish
