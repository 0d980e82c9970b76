#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The monitoring verbs from the command line: top, traffic, flows (and
# --follow), stats --watch, metrics (and --textfile), attach's monitoring
# options, their errors, two attaches with monitoring at once. Traffic
# comes from `test_monitor feed` (a Zipf trace through the real program,
# BPF_PROG_TEST_RUN), and, in the last
# part, from ping across a veth pair between two network namespaces this
# script creates. `metrics` is checked by a strict parser of the Prometheus
# text format (and by promtool when installed), and against `stats -j`.
#
# The EXIT trap removes the namespaces and every pin under the private
# FLOWBLOOM_ROOT. Addresses: 198.51.100.0/24 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin monitor_cli

FEED=$(dirname "$FB")/tests/program/test_monitor
BG=()

cleanup() {
	local d
	t_kill "${BG[@]}"
	t_net_down
	# Monitoring pins live in NAME/monitor/ (lib.sh removes plain files).
	for d in "$FLOWBLOOM_ROOT"/*/monitor; do
		[ -d "$d" ] && rm -f "$d"/* && rmdir "$d"
	done
	t_cleanup_filters
}
t_traps

json() { "$PY" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# A strict reader of the Prometheus text exposition format 0.0.4: every line
# a HELP, a TYPE or a sample; names and label names by the grammar; label
# values with only \\ \" \n escapes; one TYPE and one HELP per family, before
# its samples; a family's samples together; no series twice; counters named
# *_total and never negative. Prints "name{labels} value" per sample.
cat >"$T_TMP/promparse.py" <<'PY'
import math, re, sys
NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LNAME = r'[a-zA-Z_][a-zA-Z0-9_]*'
LVAL = r'"(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r'^(%s)(\{(?:%s=%s(?:,%s=%s)*,?)?\})? (\S+)(?: (-?\d+))?$' % (NAME, LNAME, LVAL, LNAME, LVAL))
text = sys.stdin.read()
if text and not text.endswith('\n'):
    sys.exit('no newline at the end')
types, helps, done, series, current = {}, {}, set(), set(), None
def fam(name, kind):
    for suf in ('_total', '_count', '_sum', '_bucket', '_created', ''):
        if suf and name.endswith(suf) and name[:-len(suf)] in types:
            return name[:-len(suf)]
    return name
for n, line in enumerate(text.split('\n')[:-1], 1):
    bad = lambda why: sys.exit('line %d: %s: %r' % (n, why, line))
    if line.startswith('#'):
        m = re.match(r'^# (HELP|TYPE) (%s) (.*)$' % NAME, line)
        if not m:
            if re.match(r'^# (HELP|TYPE)', line):
                bad('malformed HELP/TYPE')
            continue
        what, name, rest = m.groups()
        if what == 'TYPE':
            if rest not in ('counter', 'gauge', 'histogram', 'summary', 'untyped'):
                bad('unknown type')
            if name in types or name in done:
                bad('second TYPE, or TYPE after samples')
            types[name] = rest
        else:
            if name in helps:
                bad('second HELP')
            if re.search(r'\\[^\\n]', rest):
                bad('bad escape in HELP')
            helps[name] = rest
        continue
    if not line.strip():
        bad('blank line')
    m = SAMPLE.match(line)
    if not m:
        bad('not a sample')
    name, labels, value = m.group(1), m.group(2) or '', m.group(3)
    f = fam(name, types.get(name))
    if f != current:
        if f in done:
            bad('family %s split' % f)
        if current:
            done.add(current)
        current = f
    try:
        v = float(value)
    except ValueError:
        if value not in ('+Inf', '-Inf', 'NaN'):
            bad('bad value')
        v = float(value.replace('Inf', 'inf').replace('NaN', 'nan'))
    key = name + labels
    if key in series:
        bad('duplicate series')
    series.add(key)
    if types.get(f) == 'counter':
        if not name.endswith('_total'):
            bad('counter not named *_total')
        if v < 0 or math.isnan(v):
            bad('negative counter')
    print(key, value)
if not series:
    sys.exit('no samples')
PY
promcheck() { "$PY" "$T_TMP/promparse.py"; }

check "create f1" "$FB" create f1 --capacity 1000 --fp-rate 0.01
check "create f2 (no monitoring)" "$FB" create f2 --capacity 1000 --fp-rate 0.01

# --- traffic: 200000 packets over 5000 flows (Zipf 1.1) -------------------
IFS=$'\t' read -r HEAVY HP HB < <("$FEED" feed f1 200000 5000)
# HEAVY: the heaviest flow as FLOW words; HP, HB: its exact packets, bytes.
read -r -a HEAVY3 <<<"$HEAVY"
[ -n "$HP" ] && pass "feed a Zipf trace" || fail "feed a Zipf trace"

# --- top -------------------------------------------------------------------
out=$("$FB" -j top f1)
check_eq "top: N is every packet" "$(echo "$out" | json 'd["total_packets"]')" 200000
check_eq "top: 10 flows" "$(echo "$out" | json 'len(d["flows"])')" 10
check_eq "top: the heaviest flow first" "$(echo "$out" | json 'd["flows"][0]["flow"]')" "${HEAVY3[*]}"
check_eq "top: its estimate is not below the truth" \
	"$(echo "$out" | json "d['flows'][0]['packets'] >= $HP and d['flows'][0]['bytes'] >= $HB")" True
check_eq "top: and within the bound" \
	"$(echo "$out" | json "d['flows'][0]['packets'] <= $HP + d['max_error_packets']")" True
check_eq "top: sorted by packets" \
	"$(echo "$out" | json 'all(a["packets"] >= b["packets"] for a, b in zip(d["flows"], d["flows"][1:]))')" True
out=$("$FB" -j top f1 -n 3 --by bytes)
check_eq "top -n 3 --by bytes" \
	"$(echo "$out" | json 'len(d["flows"]) == 3 and d["by"] == "bytes" and all(a["bytes"] >= b["bytes"] for a, b in zip(d["flows"], d["flows"][1:]))')" True
check "top, plain" "$FB" top f1
grep -q "^   1 " "$T_TMP/out" && pass "top plain: ranked lines" || fail "top plain: ranked lines"
out=$("$FB" -j top f1 --interval 0.2)
check_eq "top --interval: nothing sent meanwhile, N = 0" "$(echo "$out" | json 'd["total_packets"]')" 0
check_eq "top --interval: ... and no flow listed" "$(echo "$out" | json 'len(d["flows"])')" 0

# --- traffic -----------------------------------------------------------------
out=$("$FB" -j traffic f1 "${HEAVY3[@]}" udp 198.51.100.250:1 203.0.113.250:2)
check_eq "traffic: estimate within [truth, truth + bound]" \
	"$(echo "$out" | json "d['flows'][0]['packets'] >= $HP and d['flows'][0]['packets'] - $HP <= d['max_error_packets'] and d['flows'][0]['bytes'] >= $HB")" True
check_eq "traffic: a flow never sent is at most the bound" \
	"$(echo "$out" | json "d['flows'][1]['packets'] <= d['max_error_packets']")" True
printf '%s\n' "${HEAVY3[*]}" >"$T_TMP/flows.txt"
check_eq "traffic -f FILE" "$("$FB" -j traffic f1 -f "$T_TMP/flows.txt" | json 'len(d["flows"])')" 1
# -f is placed as for add/del/query/count: before NAME too, or as --file.
check_eq "traffic -f FILE NAME" "$("$FB" -j traffic -f "$T_TMP/flows.txt" f1 | json 'len(d["flows"])')" 1
check_eq "traffic NAME --file=FILE" "$("$FB" -j traffic f1 --file="$T_TMP/flows.txt" | json 'len(d["flows"])')" 1
"$FB" traffic f1 -f "$T_TMP/flows.txt" "${HEAVY3[@]}" >/dev/null 2>&1; check_eq "traffic: FLOWs and -f: usage error" $? 2
check_fails "traffic: an address is not a 5-tuple" "$FB" traffic f1 src 198.51.100.1
check_fails "traffic: no FLOW" "$FB" traffic f1
check_fails "traffic: filter without monitoring" "$FB" traffic f2 "${HEAVY3[@]}"
grep -q -- "--monitor" "$T_TMP/err" && pass "traffic: says how to turn it on" || fail "traffic: says how to turn it on"
check_fails "top: no such filter" "$FB" top nosuch
check_fails "top: filter without monitoring" "$FB" top f2
"$FB" top f1 -n 0 >/dev/null 2>&1; check_eq "top -n 0: usage error" $? 2
"$FB" top f1 --by frames >/dev/null 2>&1; check_eq "top --by frames: usage error" $? 2
"$FB" top f1 --interval -1 >/dev/null 2>&1; check_eq "top --interval -1: usage error" $? 2
"$FB" top >/dev/null 2>&1; check_eq "top without NAME: usage error" $? 2
# The monitoring directory is checked as the rest of the pin tree (and
# reached through the filter's verified directory, never its path again).
M=$FLOWBLOOM_ROOT/f1/monitor
chmod 0777 "$M"
check_eq "top: a monitoring directory others may write: refused" "$("$FB" top f1 2>&1 >/dev/null)" \
	"flowbloom: $M is writable by other users (mode 0777): refusing to use it"
chmod 0700 "$M"
mv "$M" "${M}_real" && ln -s "${M}_real" "$M"
check_eq "top: a symbolic link for the monitoring directory: refused" "$("$FB" top f1 2>&1 >/dev/null)" \
	"flowbloom: cannot open $M: not a directory of flowbloom's"
rm "$M" && mv "${M}_real" "$M"
check "top: the monitoring directory back" "$FB" top f1

# --- flows -------------------------------------------------------------------
out=$("$FB" -j flows f1)
events=$(echo "$out" | grep -c '"flow"')
summary=$(echo "$out" | tail -1)
check_eq "flows: one event per new flow, as counted" "$events" "$(echo "$summary" | json 'd["new_flows"]')"
check_eq "flows: none lost" "$(echo "$summary" | json 'd["lost"]')" 0
check_eq "flows: every line is JSON with time, flow, verdict" \
	"$(echo "$out" | head -n -1 | "$PY" -c 'import json,sys; print(all({"time","flow","verdict","dev","bytes"} <= json.loads(l).keys() for l in sys.stdin))')" True
check_eq "flows: drained, a second call has none" "$("$FB" -j flows f1 | grep -c '"flow"')" 0
check_fails "flows: filter without new-flow detection" "$FB" flows f2

# --follow: a stream until Ctrl-C, exit 0; events for the flows fed meanwhile.
"$FB" -j flows f1 --follow >"$T_TMP/follow" 2>"$T_TMP/follow.err" &
fpid=$!
BG+=("$fpid")
T_WAIT_STEP=0.02 t_wait_until 10 t_looping "$fpid" || fail "flows --follow: not in its loop after 10 s"
check_fails "flows: a second reader is refused" "$FB" flows f1
"$FEED" feed f1 20000 6000 >/dev/null # flows 5000-5999 are new
# every new flow detected (sent or lost: metrics) streamed
streamed() {
	local new
	new=$("$FB" metrics f1 | awk '$1 == "flowbloom_monitor_new_flows_total{filter=\"f1\"}" { print $2 }')
	[ -n "$new" ] && [ "$((events + $(grep -c '"flow"' "$T_TMP/follow")))" -ge "$new" ]
}
t_wait_until 10 streamed
kill -INT "$fpid"
wait "$fpid"
check_eq "flows --follow: Ctrl-C exits 0" $? 0
n=$(grep -c '"flow"' "$T_TMP/follow")
new=$("$FB" -j flows f1 | tail -1 | json 'd["new_flows"]')
check_eq "flows --follow: every event streamed" "$((events + n))" "$new"
[ "$n" -gt 0 ] && pass "flows --follow: saw the new flows" || fail "flows --follow: saw none"
check_eq "flows --follow: one JSON object per line" \
	"$("$PY" -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]; print(1)' "$T_TMP/follow")" 1

# --- stats --watch -------------------------------------------------------------
"$FB" -j stats f1 --watch 0.2 >"$T_TMP/watch" &
wpid=$!
BG+=("$wpid")
T_WAIT_STEP=0.02 t_wait_until 10 t_looping "$wpid" || fail "stats --watch: not in its loop after 10 s"
"$FEED" feed f1 5000 6000 >/dev/null
# an interval that saw the feed (pps above 0), and one more line
rated() { grep -q '"seen":{[^}]*"pps":[1-9]' "$T_TMP/watch"; }
t_wait_until 10 rated
n=$(wc -l <"$T_TMP/watch")
lines() { [ "$(wc -l <"$T_TMP/watch")" -gt "$1" ]; }
t_wait_until 10 lines "$n"
kill -INT "$wpid"
wait "$wpid"
check_eq "stats --watch: Ctrl-C exits 0" $? 0
check_eq "stats --watch: JSON lines with rates" \
	"$("$PY" -c '
import json,sys
L=[json.loads(l) for l in open(sys.argv[1])]
print(len(L) >= 2 and all("pps" in d["seen"] and "bps" in d["seen"] and d["interval"] > 0 for d in L) and any(d["seen"]["pps"] > 0 for d in L))' "$T_TMP/watch")" True
"$FB" stats f1 --watch 0.2 >"$T_TMP/watchp" &
wpid=$!
BG+=("$wpid")
t_wait_until 10 grep -q "^seen " "$T_TMP/watchp"
kill -TERM "$wpid"
wait "$wpid"
check_eq "stats --watch: SIGTERM exits 0 too" $? 0
grep -q "^seen " "$T_TMP/watchp" && pass "stats --watch plain: counter lines" || fail "stats --watch plain"
"$FB" stats f1 --watch 0 >/dev/null 2>&1; check_eq "stats --watch 0: usage error" $? 2
"$FB" stats f1 --watch x >/dev/null 2>&1; check_eq "stats --watch x: usage error" $? 2

# --- metrics -------------------------------------------------------------------
"$FB" metrics f1 >"$T_TMP/m1" 2>&1
check_eq "metrics: exit 0" $? 0
if promcheck <"$T_TMP/m1" >"$T_TMP/m1.samples" 2>"$T_TMP/m1.err"; then
	pass "metrics: strict Prometheus text format"
else
	fail "metrics: strict Prometheus text format: $(cat "$T_TMP/m1.err")"
fi
"$FB" -j stats f1 >"$T_TMP/stats.json"
check_eq "metrics: every counter equals stats -j" "$("$PY" - "$T_TMP/stats.json" "$T_TMP/m1.samples" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
m = dict(l.split() for l in open(sys.argv[2]))
# (fail_open: attachments anywhere on the system that fail open, listed
# when there are any; other tests may make one at any moment)
bad = [c for c, v in st.items() if c not in ('filter', 'fail_open') for u in ('packets', 'bytes')
       if m.get('flowbloom_%s_%s_total{filter="f1"}' % (c, u)) != str(v[u])]
print(bad or 'ok')
PY
)" ok
check_eq "metrics: the sketch's N equals top's" \
	"$(grep '^flowbloom_monitor_packets_total{filter="f1"}' "$T_TMP/m1.samples" | cut -d' ' -f2)" \
	"$("$FB" -j top f1 | json 'd["total_packets"]')"
check_eq "metrics: new flows and lost events" \
	"$(grep -c -E '^flowbloom_monitor_(new_flows|events_lost)_total\{filter="f1"\}' "$T_TMP/m1.samples")" 2
"$FB" metrics >"$T_TMP/mall"
check_eq "metrics without NAME: every filter, one family each" \
	"$(promcheck <"$T_TMP/mall" | grep -c '^flowbloom_seen_packets_total')" 2
check "metrics --textfile" "$FB" metrics f1 f2 --textfile "$T_TMP/fb.prom"
promcheck <"$T_TMP/fb.prom" >/dev/null 2>&1 && pass "textfile: valid" || fail "textfile: valid"
check_eq "textfile: no temporary file left" "$(ls -A "$T_TMP" | grep -c -e '^\.fb\.prom' -e '^fb\.prom\.')" 0
check_fails "metrics --textfile in a missing directory" "$FB" metrics f1 --textfile "$T_TMP/no/such/x.prom"
check_fails "metrics: no such filter" "$FB" metrics nosuch
check_eq "metrics -j: JSON" "$("$FB" -j metrics f1 | json 'any(m["name"] == "flowbloom_monitor_packets_total" for m in d["metrics"])')" True
check_eq "metrics -j: counters exact" \
	"$("$FB" -j metrics f1 | json '[m["samples"][0]["value"] for m in d["metrics"] if m["name"] == "flowbloom_seen_bytes_total"][0]')" \
	"$(json 'd["seen"]["bytes"]' <"$T_TMP/stats.json")"
if command -v promtool >/dev/null; then
	check "promtool check metrics" bash -c "promtool check metrics <'$T_TMP/m1'"
else
	skip "promtool check metrics: promtool not installed (the strict parser above ran)"
fi

# --- attach with monitoring, real traffic ----------------------------------------
t_net_pair || {
	skip "attach --monitor: $T_NET_WHY"
	t_finish
}
t_addr "$NSA" "$VA" 198.51.100.1/24
t_addr "$NSB" "$VB" 198.51.100.2/24
check_fails "attach: --epsilon 2" "$FB" -n "$NSB" attach f2 "$VB" --mode generic --epsilon 2
check_fails "attach: --ring not a power of 2" "$FB" -n "$NSB" attach f2 "$VB" --mode generic --ring 5000
check_fails "attach: --age 0" "$FB" -n "$NSB" attach f2 "$VB" --mode generic --age 0
check "attach --monitor --new-flows" "$FB" -n "$NSB" attach f2 "$VB" --mode generic --monitor --new-flows --age 30
grep -q "monitoring: sketch" "$T_TMP/out" && pass "attach: describes the monitoring" || fail "attach: describes the monitoring"
check_fails "attach a second device with other monitoring: refused" \
	"$FB" -n "$NSA" attach f2 "$VA" --mode generic --monitor --epsilon 0.01
check "attach a second device sharing the maps" "$FB" -n "$NSA" attach f2 "$VA" --mode generic --monitor
check "detach the second device" "$FB" -n "$NSA" detach "$VA"
# Five UDP datagrams of 100 bytes from a fixed port: one flow.
inA "$PY" -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.1", 40001))
for i in range(5):
    s.sendto(b"m" * 100, ("198.51.100.2", 5000))
    time.sleep(0.05)
'
UFLOW="udp 198.51.100.1:40001 198.51.100.2:5000"
# (the program counts as the datagrams arrive: a loaded machine is late)
top_has_5() { "$FB" -j top f2 | json "sum(f['packets'] for f in d['flows'] if f['flow'] == '$UFLOW') >= 5" | grep -q True; }
t_wait_until 20 top_has_5
out=$("$FB" -j top f2)
check_eq "top: the datagrams are the top flow" "$(echo "$out" | json 'd["flows"][0]["flow"]')" "$UFLOW"
check_eq "top: 5 packets of 142 bytes" \
	"$(echo "$out" | json '(d["flows"][0]["packets"], d["flows"][0]["bytes"])')" "(5, 710)"
# The attached program's hash words (its read-only data, cfg_mon_nh) are
# SipHash-1-3 of their index under the maps' key, computed here from the
# SipHash paper, none key0 * c_i + key1: the words top just hashed with.
cat >"$T_TMP/words.py" <<'PY'
import json, sys
M = 2**64 - 1
rotl = lambda x, b: ((x << b) | (x >> (64 - b))) & M
def rnd(v):
    v[0] = (v[0] + v[1]) & M; v[1] = rotl(v[1], 13) ^ v[0]; v[0] = rotl(v[0], 32)
    v[2] = (v[2] + v[3]) & M; v[3] = rotl(v[3], 16) ^ v[2]
    v[0] = (v[0] + v[3]) & M; v[3] = rotl(v[3], 21) ^ v[0]
    v[2] = (v[2] + v[1]) & M; v[1] = rotl(v[1], 17) ^ v[2]; v[2] = rotl(v[2], 32)
def sip13(k0, k1, m):  # one 8-byte message word
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d, k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]
    for w in (m, 8 << 56):
        v[3] ^= w; rnd(v); v[0] ^= w
    v[2] ^= 0xff
    for _ in range(3):
        rnd(v)
    return v[0] ^ v[1] ^ v[2] ^ v[3]
def find(o):
    if isinstance(o, dict):
        return o["cfg_mon_nh"] if "cfg_mon_nh" in o else next((r for r in map(find, o.values()) if r is not None), None)
    if isinstance(o, list):
        return next((r for r in map(find, o) if r is not None), None)
words = [int(x) & M for x in find(json.load(open(sys.argv[1])))]
cfg = bytes(int(x, 16) for x in json.load(open(sys.argv[2]))["value"])
k0, k1 = int.from_bytes(cfg[32:40], "little"), int.from_bytes(cfg[40:48], "little")
odd = [0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9, 0x94d049bb133111eb, 0xd6e8feb86659fd93, 0xc2b2ae3d27d4eb4f]
linear = [(k0 * c + k1) & M for c in odd] + [k1]
print(words == [sip13(k0, k1, 0x6e686b7700000000 | i) for i in range(6)],
      any(w == l for w, l in zip(words, linear)))
PY
pid=$(ip -n "$NSB" -o link show "$VB" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
for id in $(bpftool -j prog show id "$pid" | json '" ".join(map(str, d["map_ids"]))'); do
	case $(bpftool -j map show id "$id" | json 'd.get("name", "")') in
	*.rodata) bpftool -j map dump id "$id" >"$T_TMP/rodata.json" ;;
	esac
done
bpftool -j map lookup pinned "$FLOWBLOOM_ROOT/f2/monitor/config" key 0 0 0 0 >"$T_TMP/mcfg.json"
check_eq "the attached program's words: SipHash-1-3 of the maps' key, none linear" \
	"$("$PY" "$T_TMP/words.py" "$T_TMP/rodata.json" "$T_TMP/mcfg.json" 2>&1)" "True False"
# Device names are those of the namespace flowbloom runs in: -n NETNS.
out=$("$FB" -n "$NSB" -j flows f2)
check_eq "flows: the flow reported once, on $VB, passed" \
	"$(echo "$out" | "$PY" -c 'import json,sys; L=[json.loads(l) for l in sys.stdin]; E=[e for e in L if e.get("flow")==sys.argv[1]]; print(len(E), E[0]["dev"], E[0]["verdict"], E[0]["bytes"])' "$UFLOW")" \
	"1 $VB pass 142"
# From another namespace (here the root one) the event's ifindex is that of
# $VB in $NSB, which names some other device here (ifb0, eth0): the reader
# names the attachment's device and its namespace, never this one's.
new_flows() { "$FB" metrics f2 | awk '/^flowbloom_monitor_new_flows_total/ {print $2}'; }
udp_from() { # PORT: one datagram from 198.51.100.1:PORT to :5000, seen
	local n0
	n0=$(new_flows)
	inA "$PY" -c 'import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("198.51.100.1",int(sys.argv[1]))); s.sendto(b"n"*10,("198.51.100.2",5000))' "$1"
	t_wait_until 20 eval '[ "$(new_flows)" -gt "$n0" ]'
}
dev_of() { # FLOW: "dev netns" of its event in the -j lines on stdin
	"$PY" -c 'import json,sys; E=[json.loads(l) for l in sys.stdin]; E=[e for e in E if e.get("flow")==sys.argv[1]]; print(len(E), E[0]["dev"], E[0].get("netns"), E[0]["ifindex"]) if E else print(0)' "$1"
}
IFB=$(ip -n "$NSB" -o link show "$VB" | cut -d: -f1)
IFA=$(ip -n "$NSA" -o link show "$VA" | cut -d: -f1)
udp_from 40002
out=$("$FB" -j flows f2)
check_eq "flows from the root namespace: the device of $NSB, with its namespace" \
	"$(echo "$out" | dev_of "udp 198.51.100.1:40002 198.51.100.2:5000")" "1 $VB $NSB $IFB"
udp_from 40003
out=$("$FB" flows f2)
check_eq "flows (text) from the root namespace: '$VB (netns $NSB)'" \
	"$(echo "$out" | grep -F "198.51.100.1:40003 " | sed -E 's/^\S+ (.*) +pass .*/\1/; s/ +$//')" "$VB (netns $NSB)"
udp_from 40004
out=$("$FB" -n "$NSB" flows f2)
check_eq "flows (text) in the attachment's namespace: the plain name" \
	"$(echo "$out" | grep -F "198.51.100.1:40004 " | awk '{print $2}')" "$VB"
# The same ifindex attached in two namespaces: which one saw the packet is
# not in the event, so neither name is printed.
if [ "$IFA" = "$IFB" ]; then
	check "attach $VA too, sharing the maps" "$FB" -n "$NSA" attach f2 "$VA" --mode generic --monitor --new-flows --age 30
	udp_from 40005
	out=$("$FB" -j flows f2)
	check_eq "flows: one ifindex in two namespaces: no name" \
		"$(echo "$out" | dev_of "udp 198.51.100.1:40005 198.51.100.2:5000")" "1 ifindex $IFB None $IFB"
	udp_from 40006
	check_eq "flows (text): one ifindex in two namespaces: both named" \
		"$("$FB" flows f2 | grep -F "198.51.100.1:40006 " | sed -E 's/^\S+ (.*) +pass .*/\1/; s/ +$//')" \
		"ifindex $IFB (netns $NSA or $NSB)"
	check "detach $VA" "$FB" -n "$NSA" detach "$VA"
else
	skip "flows: one ifindex in two namespaces: $VA is $IFA, $VB $IFB"
fi
# A reader of the monitoring maps, when the filter is detached everywhere
# and attached again: attach makes new maps, which the reader would never
# see fed; it says so and exits 1 (ipfix's unit then starts it again).
"$FB" -j flows f2 --follow >"$T_TMP/follow2" 2>"$T_TMP/follow2.err" &
fpid=$!
T_WAIT_STEP=0.02 t_wait_until 10 t_looping "$fpid" || fail "flows --follow: not in its loop after 10 s"
check "detach" "$FB" -n "$NSB" detach "$VB"
check "attach again, --monitor --new-flows" "$FB" -n "$NSB" attach f2 "$VB" --mode generic --monitor --new-flows --age 30
t_wait_until 10 eval '! kill -0 $fpid 2>/dev/null' || kill "$fpid" 2>/dev/null
wait "$fpid"
check_eq "flows --follow over maps made anew: exits 1" $? 1
grep -q "the monitoring maps of 'f2' were made anew (detached, then attached again): these are fed no more" \
	"$T_TMP/follow2.err" && pass "... saying why" || fail "... said: $(cat "$T_TMP/follow2.err")"
check "detach" "$FB" -n "$NSB" detach "$VB"
# Maps another flowbloom version made (their config says layout 1, as
# before the seen-set's 16-bit tags): readers refuse them and say what to
# do; attach makes them anew, no program using them.
v=$(bpftool -j map lookup pinned "$FLOWBLOOM_ROOT/f2/monitor/config" key 0 0 0 0 |
	"$PY" -c 'import json,sys; v=json.load(sys.stdin)["value"]; v[4:8]=["0x01","0x00","0x00","0x00"]; print(" ".join(v))')
bpftool map update pinned "$FLOWBLOOM_ROOT/f2/monitor/config" key 0 0 0 0 value $v
t_refused 1 "top over maps of another layout" \
	"the monitoring maps of 'f2' are of another flowbloom's layout (1, this one reads 2, 3 and 4): detach the filter everywhere and attach it again" \
	"$FB" top f2
# metrics (the textfile timer, the Prometheus scrape) still reports the
# filter, which still filters: its counters, not its monitoring series,
# and a note says what to do. (It left the whole filter out: every series
# of a filter still dropping traffic gone after an upgrade.)
"$FB" metrics f2 >"$T_TMP/mold" 2>"$T_TMP/mold.err"
check_eq "metrics over maps of another layout: exit 0" $? 0
check_eq "... the filter's counters, valid, its monitoring series left out" \
	"$(promcheck <"$T_TMP/mold" | grep -c -e '^flowbloom_seen_packets_total{filter="f2"}' \
		-e '^flowbloom_monitor_')" 1
grep -q "note: the monitoring maps of 'f2' are of another flowbloom's layout (1, this one reads 2, 3 and 4): detach the filter everywhere and attach it again" \
	"$T_TMP/mold.err" && pass "... and a note says what to do" || fail "... said: $(cat "$T_TMP/mold.err")"
"$FB" metrics >"$T_TMP/mold" 2>/dev/null
check_eq "metrics without NAME: f2 still reported" \
	"$(promcheck <"$T_TMP/mold" | grep -c '^flowbloom_seen_packets_total{filter="f2"}')" 1
check "attach makes them anew" "$FB" -n "$NSB" attach f2 "$VB" --mode generic --monitor --new-flows
check "top reads them" "$FB" top f2
# Their layout is 4, by flow or by address: NH's key words are SipHash-1-3
# of the maps' key. Earlier builds read 2 (by flow), or 2 and 3 (by
# address), with key words linear in the key, and check the version and
# no flag: they refuse these maps as another layout rather than hash into
# them, or read them, with other words (test_monitor's words part).
mlayout() { bpftool -j map lookup pinned "$FLOWBLOOM_ROOT/f2/monitor/config" key 0 0 0 0 |
	"$PY" -c 'import json,sys; print(int(json.load(sys.stdin)["value"][4], 16))'; }
check_eq "maps of a sketch by flow: layout 4 (earlier builds refuse them)" "$(mlayout)" 4
check "detach" "$FB" -n "$NSB" detach "$VB"
check "attach --sketch-by src" "$FB" -n "$NSB" attach f2 "$VB" --mode generic --monitor --sketch-by src
check_eq "maps of a sketch by address: layout 4 (earlier builds refuse them)" "$(mlayout)" 4
check_eq "top reads them, by source" "$("$FB" -j top f2 | json 'd["sketch_by"]')" src
check "detach" "$FB" -n "$NSB" detach "$VB"
# Two devices attached with monitoring at once: both programs feed the
# pinned maps, which top, flows and guard read. Each attach saw no program
# feeding them, and the second made them anew: the first device's program
# fed maps nobody read, its traffic invisible. strace holds the first 1 s
# once it made the maps, before it loads its program (at libbpf's one
# uname(2)); the second runs meanwhile.
feeds() { # NS DEV: does DEV's program use f3's pinned accounting map?
	local id
	id=$(ip -n "$1" -o link show "$2" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	[ -n "$id" ] && bpftool -j prog show id "$id" | "$PY" -c 'import json, sys
print(int(sys.argv[1]) in json.load(sys.stdin)["map_ids"])' \
		"$(bpftool -j map show pinned "$FLOWBLOOM_ROOT/f3/monitor/flows" | t_json "d['id']")"
}
if ! command -v strace >/dev/null; then
	skip "two attaches with monitoring at once: strace is missing"
else
	"$FB" create f3 --capacity 1000 --fp-rate 0.01 >/dev/null
	strace -f -qq -o /dev/null -e trace=uname -e inject=uname:delay_enter=1000000 \
		"$FB" -n "$NSB" attach f3 "$VB" --mode generic --accounting >"$T_TMP/at1" 2>&1 &
	p1=$!
	T_WAIT_STEP=0.01 t_wait_until 10 test -e "$FLOWBLOOM_ROOT/f3/monitor/config" ||
		fail "the first attach made no monitoring maps"
	check "two attaches with monitoring at once: the second" \
		"$FB" -n "$NSA" attach f3 "$VA" --mode generic --accounting
	wait "$p1"
	r1=$?
	check_eq "... the first: $(cat "$T_TMP/at1")" "$r1" 0
	check_eq "... both programs feed the pinned maps" "$(feeds "$NSB" "$VB") $(feeds "$NSA" "$VA")" "True True"
	"$FB" -n "$NSB" detach "$VB" >/dev/null
	"$FB" -n "$NSA" detach "$VA" >/dev/null
	check "destroy f3" "$FB" destroy f3
fi
check "destroy f1" "$FB" destroy f1
check "destroy f2" "$FB" destroy f2
check_eq "destroy removes the monitoring pins" "$(ls -A "$FLOWBLOOM_ROOT" 2>/dev/null | wc -l)" 0
t_finish
