#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Rules with a lifetime and `flowbloom guard`, live: a sender namespace
# (202 source addresses) and a receiver namespace whose veth carries the XDP
# program, attached with --monitor to filter g, which guard both reads and
# bans into. The receiver counts every datagram per source and time.
#  - add --ttl 2s: a source's traffic dropped from the add until 2 s, and
#    arriving again by 2 s + 2 s/4;
#  - a flood from 4 sources among 200 others (5 pps each): the 3 not in
#    --never banned within two intervals, their traffic dropped while the
#    ban lasts, extended while they flood, unbanned (their low-rate traffic
#    arrives again) within TTL + TTL/4 of their last interval above; the
#    4th spared; none of the 200 others ever banned or dropped; metrics;
#  - a concurrent --dry-run guard into filter d: the same bans reported, d
#    unchanged (digest, no generation, no counter pin); another, --by dst,
#    reports the flooded destination;
#  - `ipfix g` to the RFC 7011 decoder: each ban and its end a record
#    (templates 262/263, firewallEvent 1 and 2);
#  - the ban limit, while .230-.232 flood: guard --max-bans 2 into g bans
#    2, extends them, and reports the 3rd as not banned each interval
#    (counted, not announced), whose traffic arrives; guard into c2
#    (--capacity 2) holds 2 of them, into c3 (--capacity 3) all 3 though
#    the extensions hold the first 2 twice; once the bans end, a 4th flood
#    from .233 is banned by all; a --bits filter's capacity is m ln 2 / k;
#  - a `load --replace --ttl` that takes guard's ban away: guard writes it
#    again within two intervals, the flood dropped again;
#  - --announce under ExaBGP peering BIRD: the blackhole route with community
#    65535:666 appears in BIRD and is withdrawn when the ban ends.
# Addresses: 198.51.100.0/24 only; AS 64512/64513. The EXIT trap removes the
# namespaces, the daemons (run only inside them) and every pin.
source "$(dirname "$0")/../lib/lib.sh"
t_begin guard

NS=fbgS$$ # sender: 198.51.100.20-219 (200), .230-.233 (floods), .2
NR=fbgR$$ # receiver: 198.51.100.1, the XDP filter
VS=fbgvs$$
VR=fbgvr$$

cleanup() {
	[ -f "$T_TMP/exa.pid" ] && kill "$(cat "$T_TMP/exa.pid")" 2>/dev/null
	[ -f "$T_TMP/bird.pid" ] && kill "$(cat "$T_TMP/bird.pid")" 2>/dev/null
	[ -n "${GPID:-}" ] && kill "$GPID" 2>/dev/null
	[ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null
	[ -n "${FPID:-}" ] && kill "$FPID" 2>/dev/null
	[ -n "${DSTPID:-}" ] && kill "$DSTPID" 2>/dev/null
	t_kill ${SPID:-}
	[ -n "${EXP:-}" ] && kill "$EXP" 2>/dev/null
	[ -n "${COL:-}" ] && kill "$COL" 2>/dev/null
	sleep 0.2
	ip netns del "$NS" 2>/dev/null
	ip netns del "$NR" 2>/dev/null
	t_cleanup_filters
}
t_traps

# --- usage ---------------------------------------------------------------------------
"$FB" create u --capacity 100 --fp-rate 0.01 >/dev/null
for bad in "u --into u --ttl 2s" "u --into u --pps 10" "u --pps 10 --ttl 2s" \
	"u --into u --pps 10 --ttl 0s" "u --into u --pps 10 --ttl 2x" "u --into u --bps 10 --ttl 1s --by both" \
	"u --into u --pps 10 --ttl 1s --flowspec" "u --into u --pps 10 --ttl 1s --announce=x"; do
	"$FB" guard $bad >/dev/null 2>&1
	check_eq "guard $bad: usage error" "$?" 2
done
for v in 0 -1 1.5 x 4294967297 ""; do
	"$FB" guard u --into u --pps 10 --ttl 2s --max-bans "$v" >/dev/null 2>"$T_TMP/err"
	check_eq "guard --max-bans '$v': usage error" "$?" 2
	check "... saying so" grep -q "bad value '$v' for --max-bans (want 1 to 4294967296)" "$T_TMP/err"
done
"$FB" guard u --into u --pps 10 --ttl 2s --max-bans >/dev/null 2>&1
check_eq "guard --max-bans without a value: usage error" "$?" 2
# stdout carries only ExaBGP commands: with -j, a usage error (before
# --announce is even read) or a run-time error is text on stderr, never a
# JSON object on stdout that ExaBGP would take for a command.
"$FB" -j guard u --into u --ttl 2s --announce >"$T_TMP/out" 2>"$T_TMP/err"
check_eq "guard -j, usage error: exit 2" "$?" 2
check_eq "... nothing on stdout" "$(wc -c <"$T_TMP/out")" 0
check "... the error on stderr" grep -q "missing --pps N or --bps N" "$T_TMP/err"
"$FB" -j guard u --into nosuch --pps 10 --ttl 2s --announce >"$T_TMP/out" 2>/dev/null
check_eq "guard -j, a missing filter: nothing on stdout" "$(wc -c <"$T_TMP/out")" 0
check_fails "guard: a filter without monitoring is refused" "$FB" guard u --into u --pps 10 --ttl 2s
echo "198.51.100.7 junk" >"$T_TMP/bad.never"
"$FB" add u src 198.51.100.9 --ttl 5m >/dev/null
"$FB" guard u --into u --pps 10 --ttl 2s --never "$T_TMP/bad.never" 2>"$T_TMP/err" >/dev/null
check "guard: a bad --never file is named FILE:LINE" grep -q "bad.never:1:" "$T_TMP/err"
check_fails "add --ttl: a cuckoo filter is refused" bash -c \
	"'$FB' create cu --type cuckoo --capacity 100 --fp-rate 0.01 >/dev/null && '$FB' add cu src 198.51.100.9 --ttl 5s"
"$FB" add u src 198.51.100.9 --ttl 3d >/dev/null 2>&1
check_eq "add --ttl 3d: accepted" "$?" 0
"$FB" add u src 198.51.100.9 --ttl 31d >/dev/null 2>&1
check_eq "add --ttl 31d: usage error" "$?" 2
"$FB" destroy u >/dev/null
"$FB" destroy cu >/dev/null

if ! ip netns add "$NS" 2>/dev/null || ! ip netns add "$NR" 2>/dev/null; then
	skip "guard: cannot create network namespaces"
	t_finish
fi
ip link add "$VS" netns "$NS" type veth peer name "$VR" netns "$NR"
{
	echo "addr add 198.51.100.2/24 dev $VS"
	for i in $(seq 20 219) 230 231 232 233; do echo "addr add 198.51.100.$i/24 dev $VS"; done
	echo "link set $VS up"
	echo "link set lo up"
} | ip -n "$NS" -batch -
ip -n "$NR" addr add 198.51.100.1/24 dev "$VR"
ip -n "$NR" link set "$VR" up
ip -n "$NR" link set lo up

check "create g" "$FB" create g --capacity 10000 --fp-rate 0.0001
check "attach g with monitoring" "$FB" -n "$NR" attach g "$VR" --mode generic --action drop --monitor
check "create d (the dry run's target)" "$FB" create d --capacity 1000 --fp-rate 0.0001
"$FB" add d src 198.51.100.99 >/dev/null
D_BEFORE=$("$FB" -j info d | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["digest"], d["flows"], len(d["generations"]))')
echo 198.51.100.233 >"$T_TMP/never"
echo "# operators' own" >>"$T_TMP/never"
echo "203.0.113.0/24" >>"$T_TMP/never"

# verdicts FILE N LABEL: a python checker's N lines "PASS|FAIL what" as
# checks, and that there were N.
verdicts() {
	check_eq "$3: $2 verdicts" "$(wc -l <"$1")" "$2"
	while read -r v label; do
		if [ "$v" = PASS ]; then pass "$label"; else fail "$label"; fi
	done <"$1"
}
# receiver OUT: every datagram on port 9 by source and arrival time, into
# OUT (JSON), in the background ($RX), from its socket bound (waited for
# here: a loaded machine starts python late, and the first datagrams would
# be missed) until rx_stop: once $T_TMP/rx.stop exists and 0.5 s passed
# without a datagram (at most 120 s). Not a fixed time: a sender started
# late would outlast it.
receiver() {
	rm -f "$T_TMP/rx.stop"
	nsenter --net="/run/netns/$NR" "$PY" -c '
import json, os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
s.bind(("198.51.100.1", 9))
s.settimeout(0.5)
got, end = {}, time.time() + 120
while time.time() < end:
    try:
        d, a = s.recvfrom(100)
    except socket.timeout:
        if os.path.exists(sys.argv[2]):
            break
        continue
    got.setdefault(a[0], []).append(round(time.time(), 4))
json.dump(got, open(sys.argv[1], "w"))' "$1" "$T_TMP/rx.stop" &
	RX=$!
	t_wait_until 20 rx_bound || fail "the receiver did not bind port 9 within 20 s"
}
rx_bound() { nsenter --net="/run/netns/$NR" ss -Hlun "sport = :9" | grep -q .; }
rx_stop() {
	touch "$T_TMP/rx.stop"
	wait "$RX"
}
# ready PID...: each (a guard, an exporter) in its loop, the filter open,
# before traffic starts (a loaded machine starts them late: a flood begun
# before a guard reads would not be seen as the checks say).
ready() {
	local p
	for p in "$@"; do
		t_wait_until 20 t_looping "$p" || fail "process $p not in its loop within 20 s"
	done
}
receiver "$T_TMP/rx.json"

# Guards: the real one, and a dry run into d; events as JSON lines.
"$FB" -j guard g --into g --pps 300 --ttl 2s --interval 0.5s --never "$T_TMP/never" \
	>"$T_TMP/guard.out" 2>"$T_TMP/guard.ev" &
GPID=$!
"$FB" -j guard g --into d --pps 300 --ttl 2s --interval 0.5s --never "$T_TMP/never" --dry-run \
	>"$T_TMP/dry.out" 2>"$T_TMP/dry.ev" &
DPID=$!
"$FB" -j guard g --into d --pps 3000 --ttl 2s --interval 0.5s --by dst --dry-run \
	>/dev/null 2>"$T_TMP/dst.ev" &
DSTPID=$!
"$FB" create f3 --capacity 1000 --fp-rate 0.0001 >/dev/null
"$FB" guard g --into f3 --pps 300 --ttl 2s --interval 0.5s --never "$T_TMP/never" --announce --flowspec \
	>"$T_TMP/fs.out" 2>/dev/null &
FPID=$!

# An IPFIX exporter of g, to the RFC 7011 decoder: guard's bans and their
# ends as records.
nsenter --net="/run/netns/$NR" "$PY" "$(dirname "$0")/ipfix_decode.py" tcp 127.0.0.1 4739 "$T_TMP/ipfix.json" &
COL=$!
col_listens() { nsenter --net="/run/netns/$NR" ss -Hltn "sport = :4739" | grep -q .; }
t_wait_until 20 col_listens || fail "the IPFIX collector did not listen within 20 s"
"$FB" -n "$NR" ipfix g --collector 127.0.0.1:4739 --tcp --interval 60 >"$T_TMP/ipfix.out" 2>/dev/null &
EXP=$!
ready $GPID $DPID $DSTPID $FPID $EXP

# Datagrams the kernel lost on the way (not the filter: a full socket
# buffer or backlog on a loaded machine): UDP input errors (a full receive buffer) in the
# receiver's namespace, the backlog drops of every CPU.
klost() {
	nsenter --net="/run/netns/$NR" awk '$1 == "Udp:" && $2 ~ /^[0-9]/ { print $4 }' /proc/net/snmp
	"$PY" -c 'print(sum(int(l.split()[1], 16) for l in open("/proc/net/softnet_stat")))'
}
KLOST0=$(klost | paste -sd' ')

# add --ttl 2s on source .20 (which sends 50 pps throughout).
T_ADD0=$("$PY" -c 'import time; print(time.time())')
"$FB" add g src 198.51.100.20 --ttl 2s >/dev/null
T_ADD1=$("$PY" -c 'import time; print(time.time())')

# The sender: 200 sources at 5 pps (.20 at 50), for 9 s; .230-.233 flood at
# about 1600 pps from 1 s to 3 s, then send 5 pps.
nsenter --net="/run/netns/$NS" "$PY" -c '
import json, socket, sys, time
srcs = ["198.51.100.%d" % i for i in range(20, 220)]
floods = ["198.51.100.%d" % i for i in (230, 231, 232, 233)]
socks = {}
for a in srcs + floods:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((a, 0))
    socks[a] = s
sent = {a: 0 for a in socks}
bursts = {a: [] for a in floods}  # when each flood sent its 8 datagrams
t0 = time.time()
fs, fe = t0 + 1.0, t0 + 3.0
nxt = {a: t0 + (i % 40) * 0.005 for i, a in enumerate(srcs + floods)}
while True:
    now = time.time()
    if now > t0 + 9.0:
        break
    for a in socks:
        if a in floods and fs <= now < fe:
            for _ in range(8):
                socks[a].sendto(b"flood", ("198.51.100.1", 9))
                sent[a] += 1
            bursts[a].append(now)
            continue
        if now >= nxt[a]:
            socks[a].sendto(b"x", ("198.51.100.1", 9))
            sent[a] += 1
            nxt[a] += 0.02 if a == "198.51.100.20" else 0.2
    time.sleep(0.005)
json.dump({"t0": t0, "flood_start": fs, "flood_end": fe, "sent": sent, "bursts": bursts},
          open(sys.argv[1], "w"))
' "$T_TMP/tx.json"
rx_stop
KLOST1=$(klost | paste -sd' ')
kill -TERM $GPID $DPID $FPID $DSTPID
wait $DSTPID
DSTPID=""
wait $GPID
check_eq "guard: exit 0 on SIGTERM" "$?" 0
wait $DPID
wait $FPID
GPID=""
DPID=""
FPID=""
kill -TERM $EXP
wait $EXP
check_eq "ipfix: exit 0 on SIGTERM" "$?" 0
check "ipfix: its summary counts the mitigation records it sent" \
	grep -Eq "^sent [1-9][0-9]* mitigation records \(bans and their ends" "$T_TMP/ipfix.out"
# The collector has decoded everything once it says the connection closed.
t_wait_until 10 grep -q '"closed": true' "$T_TMP/ipfix.json" ||
	fail "ipfix: the collector did not see the exporter's connection close within 10 s"
kill -TERM $COL
wait $COL 2>/dev/null
EXP=""
COL=""
"$PY" - "$T_TMP/ipfix.json" <<'PYEOF' >"$T_TMP/ipfix.verdicts"
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
def say(ok, label):
    print(("PASS " if ok else "FAIL ") + label)
T = {l["template"]: [tuple(f) for f in l["fields"]] for l in L if "template" in l}
tup = [(152, 8, 0), (153, 8, 0)]
tail = [(7, 2, 0), (11, 2, 0), (4, 1, 0), (233, 1, 0), (89, 1, 0)]
say(not [l for l in L if "error" in l], "ipfix: the decoder found nothing malformed")
say(T.get(262) == tup + [(8, 4, 0), (12, 4, 0)] + tail, "ipfix: template 262, mitigation event IPv4")
say(T.get(263) == tup + [(27, 16, 0), (28, 16, 0)] + tail, "ipfix: template 263, mitigation event IPv6")
R = [l["rec"] for l in L if l.get("tid") == 262]
ev = sorted((r["8"], r["233"]) for r in R)
# Two guards ban into their filters from g's sketch (into g, and --flowspec into f3).
want = sorted([("198.51.100.%d" % a, e) for a in (230, 231, 232) for e in ("01", "02")] * 2)
say(ev == want, "ipfix: per guard, a ban (firewallEvent 1) and its end (2) for each of the 3: %s" % ev)
say(all(r["12"] == "0.0.0.0" and r["89"] == 129 for r in R),
    "ipfix: the banned address as source, forwardingStatus dropped (ACL)")
ends = [r for r in R if r["233"] == "02"]
say(all(r["153"] - r["152"] >= 2000 for r in ends),
    "ipfix: each end record spans the ban (start to end >= the 2 s TTL)")
PYEOF
while read -r v label; do
	if [ "$v" = PASS ]; then pass "$label"; else fail "$label"; fi
done <"$T_TMP/ipfix.verdicts"
for a in 230 231 232; do
	check_eq "--flowspec: a discard announced and withdrawn for .$a" \
		"$(grep -c -e "^announce flow route { match { source 198.51.100.$a/32; } then { discard; } }$" \
			-e "^withdraw flow route { match { source 198.51.100.$a/32; } }$" "$T_TMP/fs.out")" 2
done
check_eq "--flowspec: nothing else on stdout" "$(wc -l <"$T_TMP/fs.out")" 6

"$PY" - "$T_TMP" "$T_ADD0" "$T_ADD1" "$KLOST0" "$KLOST1" <<'PYEOF' >"$T_TMP/verdicts"
import datetime, json, sys
d, add0, add1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
klost = [b - a for a, b in zip(map(int, sys.argv[4].split()), map(int, sys.argv[5].split()))]
tx = json.load(open(d + "/tx.json"))
rx = json.load(open(d + "/rx.json"))
def events(f):
    out = []
    for line in open(f):
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        e["t"] = datetime.datetime.strptime(e["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
        out.append(e)
    return out
ev, dry = events(d + "/guard.ev"), events(d + "/dry.ev")
def say(ok, label):
    print(("PASS " if ok else "FAIL ") + label)
fs, fe, interval, ttl = tx["flood_start"], tx["flood_end"], 0.5, 2.0
floods = ["198.51.100.%d" % i for i in (230, 231, 232)]
bans = {e["address"]: e for e in ev if e["event"] == "ban"}
unbans = {e["address"]: e for e in ev if e["event"] == "unban"}
say(sorted(bans) == floods, "the 3 flooding sources banned, no other: %s" % sorted(bans))
late = {a: round(bans[a]["t"] - fs, 3) for a in bans}
say(all(0 < v <= 2 * interval + 0.25 for v in late.values()),
    "each banned within two intervals of the flood's start: %s s" % late)
say(all(bans[a]["pps_lower"] > 300 and bans[a]["pps_lower"] <= bans[a]["pps"] for a in bans),
    "each ban's lower limit above 300 pps, below the estimate")
say([e["address"] for e in ev if e["event"] == "spare"] == ["198.51.100.233"],
    "the source in --never spared (one event), never banned")
say(sorted(unbans) == floods, "all 3 unbanned: %s" % sorted(unbans))
# Extended while flooding: the last interval above ends by fe + interval,
# and no sooner than an interval before the flood's last half second
# above twice the limit, by the sender's clock (last): one of the two
# intervals that half second overlaps saw it above (a sender starved on a
# loaded machine can fall below the limit before fe).
def last_above(a):
    b = tx["bursts"][a]
    return max([t for i, t in enumerate(b) if 8 * sum(1 for u in b[:i + 1] if u > t - interval)
                >= 2 * 300 * interval] or [0])
last = {a: last_above(a) for a in floods}
ends = {a: round(unbans[a]["t"] - fe, 3) for a in unbans}
say(all(unbans[a]["t"] - last[a] >= ttl - interval - 0.05 and v <= interval + ttl * 1.25 + interval + 0.3
        for a, v in ends.items()),
    "each unbanned TTL to TTL + TTL/4 after its last interval above: %s s after the flood, "
    "%s s after its last half second above twice the limit" %
    (ends, {a: round(unbans[a]["t"] - last[a], 3) for a in unbans}))
def arrivals(a, lo, hi):
    return sum(1 for t in rx.get(a, []) if lo <= t < hi)
dropped = {a: arrivals(a, bans[a]["t"] + 0.05, unbans[a]["t"] - 0.05) for a in floods if a in unbans}
say(all(v == 0 for v in dropped.values()), "nothing from them arrived while banned: %s" % dropped)
back = {a: arrivals(a, unbans[a]["t"] + 0.05, 1e12) for a in floods if a in unbans}
say(all(v > 0 for v in back.values()), "their traffic arrives again once unbanned: %s" % back)
n233 = len(rx.get("198.51.100.233", []))
say(tx["sent"]["198.51.100.233"] - n233 <= max(tx["sent"]["198.51.100.233"] * 0.1, sum(klost)),
    "the spared source's flood arrived: %d of %d (the kernel lost %d)" %
    (n233, tx["sent"]["198.51.100.233"], sum(klost)))
others = ["198.51.100.%d" % i for i in range(21, 220)]
lost = {a: tx["sent"][a] - len(rx.get(a, [])) for a in others if tx["sent"][a] != len(rx.get(a, []))}
say(sum(lost.values()) <= sum(klost),
    "all 199 other sources' packets arrived, none dropped by the filter: %s (the kernel lost %d: "
    "UDP input errors %d, backlog %d)" % (lost, sum(klost), klost[0], klost[1]))
# add --ttl 2s on .20: dropped from the add to 2 s, back by 2.5 s.
r20 = rx.get("198.51.100.20", [])
inside = [round(t - add0, 3) for t in r20 if add1 < t < add0 + 2.0 - 0.02]
say(not inside, "add --ttl 2s: nothing from .20 for 2 s after the add (%s)" % inside[:5])
first = min([t for t in r20 if t > add1] or [1e12]) - add1
say(2.0 - 0.05 <= first <= 2.5 + 0.1,
    "add --ttl 2s: .20 arrives again %.3f s after the add (2 to 2.5 s)" % first)
dst = events(d + "/dst.ev")
say([(e["event"], e["by"], e["address"]) for e in dst if e["event"] == "ban"] ==
    [("ban", "dst", "198.51.100.1")] and dst[0]["t"] > fs,
    "--by dst: the flooded destination, once the flood began (all sources together)")
say(sorted(e["address"] for e in dry if e["event"] == "ban") == floods and
    all(e["dry_run"] for e in dry), "dry run: the same 3 bans reported, marked dry_run")
PYEOF
while read -r v label; do
	if [ "$v" = PASS ]; then pass "$label"; else fail "$label"; fi
done <"$T_TMP/verdicts"

"$FB" metrics >"$T_TMP/metrics"
check_eq "metrics: guard bans" "$(grep '^flowbloom_guard_bans_total{filter="g"}' "$T_TMP/metrics" | awk '{print $2}')" 3
check_eq "metrics: guard unbans" "$(grep '^flowbloom_guard_unbans_total{filter="g"}' "$T_TMP/metrics" | awk '{print $2}')" 3
check_eq "metrics: no active ban" "$(grep '^flowbloom_guard_active_bans{filter="g"}' "$T_TMP/metrics" | awk '{print $2}')" 0
D_AFTER=$("$FB" -j info d | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["digest"], d["flows"], len(d["generations"]))')
check_eq "dry run: d unchanged (digest, flows, generations)" "$D_AFTER" "$D_BEFORE"
check "dry run: no counter pin beside d" test ! -e "$FLOWBLOOM_ROOT/d/guard"
check_eq "dry run: nothing on stdout" "$(cat "$T_TMP/dry.out" "$T_TMP/guard.out" | wc -c)" 0
check "g is clean" "$FB" check g

# --- --announce to a reader that stops reading, or has gone ------------------------
# ExaBGP stuck (its pipe full and never read again): guard goes on banning,
# and a SIGTERM ends it within a second, saying what it could not write.
# ExaBGP slow (the pipe read again later): every command arrives, whole.
# ExaBGP gone (the pipe closed): exit 1 with the reason, not death by
# SIGPIPE. Three guards into f4-f6 while .230-.232 flood again for 2.5 s.
for b in f4 f5 f6; do "$FB" create $b --capacity 1000 --fp-rate 0.0001 >/dev/null; done
"$PY" - "$FB" "$T_TMP" "$NS" <<'PYEOF' >"$T_TMP/stuck.verdicts"
import fcntl, os, re, signal, subprocess, sys, threading, time
fb, d, ns = sys.argv[1:4]
def say(ok, label):
    print(("PASS " if ok else "FAIL ") + label)
def wait(p, secs):
    try:
        return p.wait(timeout=secs)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return "none"
def full_pipe():
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: one page
    fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
    try:
        while True:
            os.write(w, b"#\n")
    except BlockingIOError:
        pass
    fcntl.fcntl(w, fcntl.F_SETFL, 0)  # guard gets a blocking pipe, as from ExaBGP
    return r, w
def guard(into, w, *opts):
    err = open("%s/%s.err" % (d, into), "w")
    p = subprocess.Popen([fb, *opts, "guard", "g", "--into", into, "--pps", "300", "--ttl", "30s",
                          "--interval", "0.5s", "--announce"], stdout=w, stderr=err)
    os.close(w)
    return p
ra, wa = full_pipe()
rb, wb = full_pipe()
rc, wc = os.pipe()
os.close(rc)
# -j: events as JSON on stderr, and errors as text there only (a JSON error
# object on stdout would be a command to ExaBGP, and would wait for it).
stuck, slow, gone = guard("f4", wa, "-j"), guard("f5", wb), guard("f6", wc)
def until(cond, secs):  # a condition, not a fixed wait (a loaded machine is late)
    end = time.time() + secs
    while not cond() and time.time() < end:
        time.sleep(0.1)
    return cond()
def looping(p):  # as t_looping: the filter open, waiting for its next interval
    try:
        fd = "/proc/%d/fd/" % p.pid
        maps = any("bpf-map" in os.readlink(fd + f) for f in os.listdir(fd))
        return maps and re.search("nanosleep|epoll|poll|select", open("/proc/%d/wchan" % p.pid).read())
    except OSError:
        return False
# The 3 guards reading before the flood (20 s at most: else the checks
# below fail).
until(lambda: all(looping(p) for p in (stuck, slow, gone)), 20)
flood = subprocess.Popen(["nsenter", "--net=/run/netns/" + ns, sys.executable, "-c", """
import socket, time
ss = []
for a in (230, 231, 232):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("198.51.100.%d" % a, 0))
    ss.append(s)
end = time.time() + 2.5
while time.time() < end:
    for s in ss:
        for _ in range(8):
            s.sendto(b"flood", ("198.51.100.1", 9))
    time.sleep(0.005)
"""])
time.sleep(1.5)
out = []
def read_all():  # the slow reader reads again, to the end
    while True:
        b = os.read(rb, 65536)
        if not b:
            break
        out.append(b)
reader = threading.Thread(target=read_all)
reader.start()
time.sleep(2)
flood.wait()
bans = lambda f: sorted(set(re.findall(r'(?:guard: ban src |"event": "ban", "by": "src", "address": ")(198\.51\.100\.\d+)',
                                      open("%s/%s.err" % (d, f)).read())))
floods = ["198.51.100.%d" % a for a in (230, 231, 232)]
until(lambda: bans("f4") == floods and bans("f5") == floods, 10)
wchan = open("/proc/%d/wchan" % stuck.pid).read() if stuck.poll() is None else "exited"
say(stuck.poll() is None and "pipe" not in wchan,
    "guard --announce, stdout never read: running, not blocked on it (%s)" % wchan)
say(bans("f4") == floods, "... and banning all 3 floods all the same: %s" % bans("f4"))
say(bans("f5") == floods, "guard --announce, stdout read late: the 3 banned: %s" % bans("f5"))
rc6 = wait(gone, 3)
err6 = open(d + "/f6.err").read()
say(rc6 == 1 and "ExaBGP gone" in err6,
    "guard --announce, stdout closed: exit 1 (%s), the reason said" % rc6)
t = time.time()
stuck.send_signal(signal.SIGTERM)
slow.send_signal(signal.SIGTERM)
rc = wait(stuck, 3)
took = time.time() - t
say(rc == 1 and took < 2, "stdout never read: SIGTERM ends guard in %.2f s, exit %s" % (took, rc))
say("6 commands for ExaBGP not written" in open(d + "/f4.err").read(),
    "... saying the 3 announcements and 3 withdrawals were not written")
rc5 = wait(slow, 3)
say(rc5 == 0, "stdout read late: exit 0 on SIGTERM (%s)" % rc5)
reader.join(timeout=3)
lines = [l for l in b"".join(out).decode().split("\n") if l != "#"]
want = ["announce route %s/32 next-hop self community [65535:666]" % a for a in floods] + \
       ["withdraw route %s/32 next-hop self" % a for a in floods]
say(lines[-1] == "" and sorted(lines[:-1]) == sorted(want),
    "... every command arrived, each a whole line, nothing else: %s" % lines)
PYEOF
verdicts "$T_TMP/stuck.verdicts" 8 "guard --announce to a stuck, slow or gone reader"

# --- the ban limit -----------------------------------------------------------------
# .230 and .231 flood from 0 to 2 s, each really above 300 pps, .232 from
# 1 s to 2 s; .233 from 4 s to 5.5 s, after their bans (TTL 1 s) have ended.
# Guards read g every 0.25 s: one bans into g itself (attached: its bans
# drop) with --max-bans 2 and --announce; others into c2 and c3, created
# for 2 and 3 flows (the default limit: the capacity). By the time .232
# floods, the bans of .230 and .231 have been extended: c3 holds each of
# them in two generations or more, two addresses all the same, and bans
# .232. c2 is queried for the 3 floods, and c3's rules counted, meanwhile.
"$FB" create c2 --capacity 2 --fp-rate 0.01 >/dev/null
"$FB" create c3 --capacity 3 --fp-rate 0.01 >/dev/null
receiver "$T_TMP/lim.rx"
"$FB" -j guard g --into g --pps 300 --ttl 1s --interval 0.25s --max-bans 2 --announce \
	>"$T_TMP/mb.out" 2>"$T_TMP/mb.ev" &
GPID=$!
"$FB" -j guard g --into c2 --pps 300 --ttl 1s --interval 0.25s >/dev/null 2>"$T_TMP/c2.ev" &
DPID=$!
"$FB" -j guard g --into c3 --pps 300 --ttl 1s --interval 0.25s >/dev/null 2>"$T_TMP/c3.ev" &
FPID=$!
ready $GPID $DPID $FPID
# c2 and c3 read from the flood's start (the sender's lim.tx.go), every 0.2 s.
(
	t_wait_until 30 test -e "$T_TMP/lim.tx.go"
	for i in $(seq 12); do
		sleep 0.2
		"$FB" query c2 src 198.51.100.230 src 198.51.100.231 src 198.51.100.232 | tail -1 >>"$T_TMP/c2.q"
		"$FB" -j info c3 >>"$T_TMP/c3.info"
		echo >>"$T_TMP/c3.info"
	done
) &
QPID=$!
nsenter --net="/run/netns/$NS" "$PY" -c '
import json, socket, sys, time
socks = {}
for a in (230, 231, 232, 233):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("198.51.100.%d" % a, 0))
    socks["198.51.100.%d" % a] = s
sent = {a: 0 for a in socks}
t0 = time.time()
open(sys.argv[1] + ".go", "w").close()
while True:
    now = time.time() - t0
    if now > 5.5:
        break
    on = [230, 231, 232] if 1.0 <= now < 2.0 else [230, 231] if now < 1.0 else [233] if now >= 4.0 else []
    for a in on:
        for _ in range(8):
            socks["198.51.100.%d" % a].sendto(b"flood", ("198.51.100.1", 9))
            sent["198.51.100.%d" % a] += 1
    time.sleep(0.005)
json.dump({"t0": t0, "sent": sent}, open(sys.argv[1], "w"))' "$T_TMP/lim.tx"
wait $QPID
rx_stop
kill -TERM $GPID $DPID $FPID
wait $GPID
wait $DPID
wait $FPID
GPID=""
DPID=""
FPID=""
"$FB" metrics >"$T_TMP/metrics"
"$PY" - "$T_TMP" >"$T_TMP/lim.verdicts" <<'PYEOF'
import datetime, json, re, sys
d = sys.argv[1]
tx, rx = json.load(open(d + "/lim.tx")), json.load(open(d + "/lim.rx"))
def say(ok, label):
    print(("PASS " if ok else "FAIL ") + label)
def events(f):
    out = []
    for line in open(f):
        if line.startswith("{"):
            e = json.loads(line)
            e["t"] = datetime.datetime.strptime(e["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                tzinfo=datetime.timezone.utc).timestamp()
            out.append(e)
    return out
def metric(name, f):
    m = re.search(r'^%s\{filter="%s"\} (\S+)$' % (name, f), open(d + "/metrics").read(), re.M)
    return int(float(m.group(1))) if m else None
t0 = tx["t0"]
two, third = ["198.51.100.230", "198.51.100.231"], "198.51.100.232"
ev = {"g": events(d + "/mb.ev"), "c2": events(d + "/c2.ev"), "c3": events(d + "/c3.ev")}
for f, by in (("g", "max_bans"), ("c2", "capacity")):
    first = [e for e in ev[f] if e["t"] < t0 + 3.5]
    bans = sorted(e["address"] for e in first if e["event"] == "ban")
    lim = [e for e in first if e["event"] == "limit"]
    say(bans == two, "%s: the 2 floods from the start banned, the 3rd not (%s): %s" % (f, by, bans))
    say(lim and {e["address"] for e in lim} == {third},
        "%s: the 3rd reported as not banned, no other: %s" % (f, sorted({e["address"] for e in lim})))
    say(all(e["limit"] == 2 and e["limit_by"] == by and e["held"] == 2 for e in lim),
        "%s: each refusal names the limit (2, %s) and what it holds (2): %s" %
        (f, by, sorted({(e["limit"], e["limit_by"], e["held"]) for e in lim})))
    ts = [e["t"] for e in lim]
    gaps = [round(b - a, 3) for a, b in zip(ts, ts[1:])]
    # An event's time is when it is printed, after its interval's reading:
    # a guard stalled there (a loaded machine) prints the next interval's
    # soon after. Two refusals of one interval would repeat its reading.
    reading = lambda e: (e["pps"], e["pps_lower"], e["bps"], e["flows"])
    say(len(ts) >= 2 and all(b["t"] - a["t"] >= 0.1 or reading(a) != reading(b)
                             for a, b in zip(lim, lim[1:])),
        "%s: one refusal per interval (0.25 s) at most: %d, %s s apart" % (f, len(ts), gaps))
    say(metric("flowbloom_guard_limited_total", f) == len([e for e in ev[f] if e["event"] == "limit"]),
        "%s: refusals counted in metrics: %s" % (f, metric("flowbloom_guard_limited_total", f)))
for f in ("g", "c2", "c3"):
    later = [e["address"] for e in ev[f] if e["event"] == "ban" and e["t"] >= t0 + 3.5]
    say(later == ["198.51.100.233"] and not [e for e in ev[f] if e["event"] == "limit" and e["t"] >= t0 + 3.5],
        "%s: once the bans ended, the 4th flood banned, nothing refused: %s" % (f, later))
bans3 = sorted(e["address"] for e in ev["c3"] if e["event"] == "ban" and e["t"] < t0 + 3.5)
held3 = 0
for doc in open(d + "/c3.info").read().split("\n\n"):
    if doc.strip():
        held3 = max(held3, sum(g["flows"] for g in json.loads(doc)["generations"] if not g["expired"]))
say(bans3 == two + [third] and not [e for e in ev["c3"] if e["event"] == "limit"],
    "c3 (--capacity 3): the 3 banned, none refused, its generations holding up to %d rules "
    "(extensions: an address in two or more counts once): %s" % (held3, bans3))
say(held3 > 3, "c3: the extensions did put more than 3 rules in it (%d)" % held3)
ban_t = {e["address"]: e["t"] for e in ev["g"] if e["event"] == "ban" and e["t"] < t0 + 3.5}
def arrivals(a, lo, hi):
    return sum(1 for t in rx.get(a, []) if lo <= t < hi)
kept = {a: arrivals(a, ban_t[a] + 0.05, t0 + 2.0) for a in ban_t}
say(ban_t and all(v == 0 for v in kept.values()),
    "--max-bans 2: the 2 banned dropped to the flood's end, extended past their 1 s TTL: %s" % kept)
got3 = arrivals(third, t0, t0 + 2.5)
say(got3 >= tx["sent"][third] * 0.9,
    "--max-bans 2: the 3rd's flood not dropped by the filter: %d of %d arrived" % (got3, tx["sent"][third]))
out = open(d + "/mb.out").read().split("\n")
ann = sorted(l.split()[2] for l in out if l.startswith("announce"))
say(ann == sorted(["%s/32" % a for a in two] + ["198.51.100.233/32"]),
    "--announce: the bans announced, not the refused one: %s" % ann)
q = [l.split()[0] for l in open(d + "/c2.q") if l.strip()]
say(len(q) == 12 and max(map(int, q)) == 2,
    "c2 (--capacity 2) held at most 2 of the 3 floods while they flooded: %s" % q)
PYEOF
verdicts "$T_TMP/lim.verdicts" 19 "the ban limit"
check "c2 is clean" "$FB" check c2
check "c3 is clean" "$FB" check c3
# A --bits/--hashes filter: its capacity is m ln 2 / k (the load its k is
# optimal for). bb: m = 2064384 bits, k = 7, 204417 flows.
"$FB" create bb --bits 512 --hashes 7 >/dev/null
"$PY" -c '
for i in range(204416):
    print("src 2001:db8::%x:%x" % (i >> 16, i & 0xffff))' >"$T_TMP/bb.list"
"$FB" add bb -f "$T_TMP/bb.list" >/dev/null
"$FB" guard g --into bb --pps 300 --ttl 1s --interval 0.05s --count 1 2>"$T_TMP/err" >/dev/null
check "bb, 1 flow below m ln 2 / k: no note" bash -c "! grep -q 'its capacity' '$T_TMP/err'"
"$FB" add bb src 2001:db8:1::1 >/dev/null
"$FB" guard g --into bb --pps 300 --ttl 1s --interval 0.05s --count 1 2>"$T_TMP/err" >/dev/null
check "bb at m ln 2 / k: guard says no new ban will be made" \
	grep -q "'bb' holds 204417 flows, its capacity 204417 (m ln 2 / k): no new ban" "$T_TMP/err"

# --- a replace that takes guard's bans -----------------------------------------------
# `load --replace --ttl` replaces the generations of rules with a lifetime,
# guard's bans with them. guard (--ttl 30s) bans .230, which floods for 5 s;
# an operator's replace takes the ban away; guard, whose record still says
# the ban lasts, finds the filter no longer holds it and writes it again
# within two intervals: from 1.5 s after the replace to the flood's end,
# none of .230's datagrams arrive. (Before, they all did: the record alone
# decided, until its 30 s ran out.)
receiver "$T_TMP/rep.rx"
"$FB" -j guard g --into g --pps 300 --ttl 30s --interval 0.5s >/dev/null 2>"$T_TMP/rep.ev" &
GPID=$!
ready $GPID
# The flood: until rep.stop exists (at most 30 s), each burst's time in rep.tx.
nsenter --net="/run/netns/$NS" "$PY" -c '
import json, os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.230", 0))
sent, end = [], time.time() + 30.0
while time.time() < end and not os.path.exists(sys.argv[2]):
    for _ in range(8):
        s.sendto(b"flood", ("198.51.100.1", 9))
    sent.append(time.time())
    time.sleep(0.005)
json.dump(sent, open(sys.argv[1], "w"))' "$T_TMP/rep.tx" "$T_TMP/rep.stop" &
SPID=$!
t_wait_until 20 grep -q '"event": "ban".*"198.51.100.230"' "$T_TMP/rep.ev"
check "replace: guard banned the flood" grep -q '"event": "ban".*"198.51.100.230"' "$T_TMP/rep.ev"
echo "src 198.51.100.99" >"$T_TMP/rep.list"
T_REP=$(date +%s%N)
check "replace: load --replace --ttl 1m with another list" \
	"$FB" load g "$T_TMP/rep.list" --replace --ttl 1m
# (Two intervals: 1 s; 10 s for a loaded machine.)
rebanned() { [ "$("$FB" query g src 198.51.100.230 | head -1 | awk '{print $1}')" = maybe ]; }
t_wait_until 10 rebanned
check_eq "replace: guard wrote the ban again" \
	"$("$FB" query g src 198.51.100.230 | head -1 | awk '{print $1}')" maybe
# The flood goes on to 3 s after the replace at least: the check below
# has its 1.5 s of flood to look at.
past() { [ "$(date +%s%N)" -ge "$1" ]; }
t_wait_until 20 past $((T_REP + 3000000000))
touch "$T_TMP/rep.stop"
wait $SPID
SPID=""
rx_stop
kill -TERM $GPID
wait $GPID
GPID=""
"$PY" - "$T_TMP/rep.rx" "$T_TMP/rep.tx" "$T_REP" <<'PYEOF' >"$T_TMP/rep.verdicts"
import json, sys
rx, tx, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3]) / 1e9 + 1.5
sent = sum(8 for u in tx if u >= t)
got = sum(1 for u in rx.get("198.51.100.230", []) if u >= t)
print("%s replace: .230 flooded on from 1.5 s after the replace (%d datagrams)" % ("PASS" if sent else "FAIL", sent))
print("%s replace: none of the flood arrived from 1.5 s after the replace (%d did)" % ("FAIL" if got else "PASS", got))
PYEOF
verdicts "$T_TMP/rep.verdicts" 2 "replace"
check "detach" "$FB" -n "$NR" detach "$VR"

# --- --announce under ExaBGP peering BIRD ------------------------------------------
for tool in bird birdc exabgp; do
	if ! command -v $tool >/dev/null; then
		skip "guard --announce: $tool not installed (make deps)"
		t_finish
	fi
done
# BIRD in the sender namespace (.2), ExaBGP and guard with the receiver (.1).
cat >"$T_TMP/bird.conf" <<EOF
router id 198.51.100.2;
protocol device {}
flow4 table ft4;
protocol bgp up { local 198.51.100.2 as 64512; neighbor 198.51.100.1 as 64513;
  ipv4 { import all; export none; };
  flow4 { table ft4; import all; export none; }; }
EOF
nsenter --net="/run/netns/$NS" bird -c "$T_TMP/bird.conf" -s "$T_TMP/bird.ctl" -P "$T_TMP/bird.pid"
cat >"$T_TMP/exabgp.conf" <<EOF
process guard {
	run $FB guard g --into g --pps 300 --ttl 2s --interval 0.5s --announce;
	encoder text;
}
process guardfs {
	run $FB guard g --into f3 --pps 300 --ttl 2s --interval 0.5s --announce --flowspec;
	encoder text;
}
neighbor 198.51.100.2 {
	router-id 198.51.100.1;
	local-address 198.51.100.1;
	local-as 64513;
	peer-as 64512;
	family { ipv4 unicast; ipv4 flow; }
	api { processes [ guard guardfs ]; }
}
EOF
check "attach g again" "$FB" -n "$NR" attach g "$VR" --mode generic --action drop --monitor
check "f3 still clean for the second guard" "$FB" check f3
(cd "$T_TMP" && exec env exabgp_daemon_user=root exabgp_daemon_daemonize=false \
	exabgp_api_cli=false exabgp_log_destination="$T_TMP/exabgp.log" \
	nsenter --net="/run/netns/$NR" exabgp "$T_TMP/exabgp.conf" >>"$T_TMP/exa.out" 2>&1) &
echo $! >"$T_TMP/exa.pid"
birdc() { command birdc -s "$T_TMP/bird.ctl" "$@"; }
ms() { echo $(($(date +%s%N) / 1000000)); }
route_up() { birdc show route for 198.51.100.230/32 all | grep -q "(65535,666)"; }
route_gone() { ! birdc show route for 198.51.100.230/32 | grep -q "198.51.100.230/32"; }
flow_up() { birdc show route table ft4 | grep -q "flow4 { src 198.51.100.230/32; }"; }
flow_gone() { ! flow_up; }
if [ "$(t_wait_for 30 bash -c "command birdc -s '$T_TMP/bird.ctl' show protocols up | grep -q Established")" = timeout ]; then
	fail "guard --announce: the BGP session did not come up ($(tail -c 300 "$T_TMP/exa.out"))"
	t_finish
fi
pass "guard --announce: ExaBGP (running guard) peers with BIRD"
# ExaBGP's two guards (the flowbloom processes in NR) in their loops
# before the flood: a loaded machine may start them after its 2 s.
exa_guards() {
	local p n=0
	for p in $(ip netns pids "$NR"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = flowbloom ] && t_looping "$p" && n=$((n + 1))
	done
	[ "$n" = 2 ]
}
t_wait_until 20 exa_guards || fail "guard --announce: ExaBGP's 2 guards not running within 20 s"
check "before the flood: no route" route_gone
nsenter --net="/run/netns/$NS" "$PY" -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.230", 0))
end = time.time() + 2.0
while time.time() < end:
    for _ in range(8):
        s.sendto(b"flood", ("198.51.100.1", 9))
    time.sleep(0.005)' &
FLOOD=$!
took=$(t_wait_for 20 route_up)
if [ "$took" != timeout ]; then pass "the blackhole route reaches BIRD with community 65535:666 within ${took} s"; else fail "no route in BIRD: $(birdc show route all | tail -5 | tr '\n' ' ') $(tail -c 300 "$T_TMP/exa.out")"; fi
took=$(t_wait_for 10 flow_up)
if [ "$took" != timeout ]; then pass "--flowspec: the FlowSpec discard reaches BIRD"; else fail "--flowspec: no flow4 route in BIRD: $(birdc show route table ft4 all | tail -5 | tr '\n' ' ')"; fi
check "next hop: guard's side (next-hop self)" bash -c "command birdc -s '$T_TMP/bird.ctl' show route for 198.51.100.230/32 all | grep -q 'BGP.next_hop: 198.51.100.1'"
wait $FLOOD
T_END=$(ms)
took=$(t_wait_for 20 route_gone)
if [ "$took" != timeout ]; then
	pass "the route is withdrawn when the ban ends (${took} s after the flood)"
	gone=$((($(ms) - T_END)))
	check_eq "... not before the TTL (2 s)" "$([ "$gone" -ge 1900 ] && echo yes)" yes
else
	fail "the route was never withdrawn"
fi
check "--flowspec: the FlowSpec route is withdrawn too" t_wait_for 10 flow_gone
grep -q '"announce route 198.51.100.230/32 next-hop self community \[65535:666\]"\|announce route 198.51.100.230/32' "$T_TMP/exabgp.log" "$T_TMP/exa.out" 2>/dev/null
t_finish
