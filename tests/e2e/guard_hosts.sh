#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `guard` against a flood from one address spread over random source
# ports, live: frames sent from one namespace (AF_PACKET) to a veth whose
# XDP program monitors (generic mode).
#  - a sketch by flow (the default): every packet of the flood is a flow
#    of its own, none rises among the top talkers, and guard --pps 1000
#    never bans the source sending 2000 pps (the limit the option lifts);
#  - attach --sketch-by src: the same flood is one talker, banned within
#    two intervals; a source at 20 pps over random ports is not; top ranks
#    it as `src ADDR`, traffic estimates it; status and attach say it;
#    guard --by dst on it is refused;
#  - the option is a monitoring option like --epsilon: a second device
#    asking for another sketch key is refused (the maps are shared), one
#    asking nothing shares the source sketch; attach --replace with
#    another key makes the maps anew.
# Addresses: 198.51.100.0/24 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin guard_hosts

cleanup() {
	t_kill ${GPID:-} ${HPID:-} ${APID:-} ${SPID:-}
	t_cleanup_filters
}
t_traps

t_net_pair --no-ipv6 || t_skip_all "$T_NET_WHY"
t_addr "$NSB" "$VB" 198.51.100.1/24
check "create g" "$FB" create g --capacity 1000 --fp-rate 0.0001

# send SECS SRC=PPS...: UDP frames from SRC at PPS, paced, each from a
# random source port (a flow of its own: 65535 ports, a few packets each),
# through VA; then "SRC PACKETS" a line. With SEND_STOP=FILE, it stops
# early once FILE exists.
send() {
	inA "$PY" - "$VA" "$@" <<'PYEOF'
import os, random, socket, sys, time
from pkt import udp4
dev, secs = sys.argv[1], float(sys.argv[2])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
rnd = random.Random(7)
sp = []
for a in sys.argv[3:]:
    src, _, pps = a.partition("=")
    pool = [udp4(src, rnd.randrange(1024, 65536), "198.51.100.1", 9) for _ in range(4096)]
    sp.append([pool, float(pps), 0])
stop = os.environ.get("SEND_STOP")
t0 = time.time()
while time.time() - t0 < secs and not (stop and os.path.exists(stop)):
    now = time.time() - t0
    for f in sp:
        want = int(f[1] * now)
        while f[2] < want:
            s.send(f[0][f[2] % len(f[0])])
            f[2] += 1
    time.sleep(0.0005)
for a, f in zip(sys.argv[3:], sp):
    print(a.partition("=")[0], f[2])
PYEOF
}

# guard_run LABEL: guard -j over a 4 s flood of .7 at 2000 pps and .8 at
# 20 pps, both over random ports; its events in $T_TMP/LABEL.ev.
guard_run() {
	"$FB" -j guard g --into g --pps 1000 --ttl 3s --interval 0.5s 2>"$T_TMP/$1.ev" >/dev/null &
	GPID=$!
	t_wait_until 10 t_looping "$GPID"
	send 4 198.51.100.7=2000 198.51.100.8=20 >"$T_TMP/$1.sent"
	kill -TERM "$GPID"
	wait "$GPID"
	GPID=""
}

# bans LABEL: the addresses banned, in order, one a line.
bans() {
	"$PY" -c '
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        e = json.loads(l)
        if e["event"] == "ban":
            print(e["address"])' "$T_TMP/$1.ev"
}

# --- a sketch by flow: the port-spread flood goes unseen ---------------------------
check "attach g --monitor (by flow)" "$FB" -n "$NSB" attach g "$VB" --mode generic --action drop --monitor
guard_run flow
check_eq "sketch by flow: the flood over random ports is not banned (no flow of it is heavy)" \
	"$(bans flow | tr '\n' ' ')" ""

# --- a sketch by source address ---------------------------------------------------
# The program detached lives on while any process holds it: status's walk,
# another attach's check of the maps' users, bpftool, each open every
# loaded program in turn, a moment that a loaded machine stretches. Such a
# program feeds nothing: an attach with another sketch key right after the
# detach is not refused for it ("attached elsewhere"). Here a process holds
# the program across the detach until the attach has ended (refused) or
# waits for the program to go (asleep between two looks).
prog=$(ip -n "$NSB" -o link show "$VB" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
"$PY" - "${prog:-0}" "$T_TMP/release" >"$T_TMP/held" 2>&1 <<'PYEOF' &
import ctypes, os, platform, sys, time
nr = {"x86_64": 321, "aarch64": 280, "riscv64": 280}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
attr = (ctypes.c_uint32 * 32)(int(sys.argv[1]))  # BPF_PROG_GET_FD_BY_ID: prog_id
fd = libc.syscall(nr, 13, attr, ctypes.sizeof(attr))
if fd < 0:
    sys.exit("BPF_PROG_GET_FD_BY_ID %s: %s" % (sys.argv[1], os.strerror(ctypes.get_errno())))
print("held", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.01)
PYEOF
HPID=$!
# ended_or_asleep PID: PID has ended (gone or a zombie), or sleeps in
# nanosleep.
ended_or_asleep() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" == Z ] || grep -q nanosleep "/proc/$1/wchan" 2>/dev/null
}
t_wait_until 10 grep -qs held "$T_TMP/held"
check "detach (the program held by another process)" "$FB" -n "$NSB" detach "$VB"
"$FB" -n "$NSB" attach g "$VB" --mode generic --action drop --monitor --sketch-by src >"$T_TMP/att" 2>&1 &
APID=$!
t_wait_until 20 ended_or_asleep "$APID"
touch "$T_TMP/release"
wait "$HPID"
check_eq "... the detached program held by another process (program $prog) until attach waited" \
	"$?:$(cat "$T_TMP/held")" "0:held"
HPID=""
wait "$APID"
check_eq "attach --sketch-by src: the detached program held elsewhere is no attachment" \
	"$?: $(cat "$T_TMP/att")" "0: $(cat "$T_TMP/att")"
APID=""
check "... says the sketch is by source address" grep -q "by source address" "$T_TMP/att"
"$FB" -j status >"$T_TMP/st.json"
check_eq "status -j: sketch_by src" \
	"$(t_json '[a["sketch_by"] for a in d["attachments"] if a["device"] == "'"$VB"'"]' "$T_TMP/st.json")" "['src']"
check "status: 'sketch by src'" bash -c "'$FB' status | grep '$VB' | grep -q 'sketch by src'"
t_refused 1 "guard --by dst on a sketch by source: refused" "counts source addresses (attach --sketch-by src): guard --by dst" \
	"$FB" guard g --into g --pps 1000 --ttl 3s --by dst --count 1
guard_run src
check_eq "sketch by src: the flooding source is banned, the 20 pps one is not" \
	"$(bans src | tr '\n' ' ')" "198.51.100.7 "
check "... within two intervals of the flood's start" "$PY" -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
b = [e for e in ev if e["event"] == "ban"]
sys.exit(not (b and b[0]["pps_lower"] > 1000 and b[0]["flows"] == 1))' "$T_TMP/src.ev"
# (Until its ban is said or 10 s have passed: a loaded machine may start
# the sender after a fixed count of intervals.)
"$FB" guard g --into g --pps 1000 --ttl 3s --interval 0.5s --dry-run 2>"$T_TMP/txt.ev" >/dev/null &
GPID=$!
t_wait_until 10 t_looping "$GPID"
send 1.5 198.51.100.9=2000 >/dev/null
t_wait_until 10 grep -q "ban src 198\.51\.100\.9" "$T_TMP/txt.ev"
kill -TERM "$GPID"
wait "$GPID"
GPID=""
check "... a text event names no flows (the address is counted whole)" \
	grep -Eq "ban src 198\.51\.100\.9: [0-9.]+ pps, [0-9]+ bit/s \(at least [0-9.]+ pps, [0-9]+ bit/s\);" "$T_TMP/txt.ev"

# top and traffic read addresses. top's 0.5 s interval lists only what
# sent in it: top again while the sender runs (a loaded machine starts it
# late), for 20 s at most.
top_sees() {
	"$FB" top g -n 3 --interval 0.5s >"$T_TMP/top" 2>&1 &&
		grep -Eq "^ +1 .* src 198\.51\.100\.10$" "$T_TMP/top"
}
SEND_STOP=$T_TMP/stop send 25 198.51.100.10=500 >/dev/null &
SPID=$!
t_wait_until 20 top_sees
touch "$T_TMP/stop"
wait "$SPID"
SPID=""
check "top: source addresses in its title" grep -q "^top [0-9]* source addresses of 'g' by packets" "$T_TMP/top"
check "top: says what a line is" grep -q "the sketch counts source addresses (attach --sketch-by src)" "$T_TMP/top"
check "top: the sender as 'src 198.51.100.10'" grep -Eq "^ +1 .* src 198\.51\.100\.10$" "$T_TMP/top"
check_eq "top -j: sketch_by src" "$("$FB" -j top g | t_json 'd["sketch_by"]')" src
sent=$(awk '$1 == "198.51.100.7" { print $2 }' "$T_TMP/src.sent")
p=$("$FB" -j traffic g src 198.51.100.7 | t_json 'd["flows"][0]["packets"]')
check "traffic src 198.51.100.7: its $sent packets of ~8000 flows in one estimate ($p)" \
	test "${p:-0}" -ge "${sent:-1}" -a "${p:-0}" -le $((${sent:-0} + 100))
check_eq "traffic: a 5-tuple of it stands for its address" \
	"$("$FB" -j traffic g udp 198.51.100.7:1 198.51.100.1:9 | t_json 'd["flows"][0]["packets"], d["flows"][0]["flow"]')" \
	"($p, 'src 198.51.100.7')"
t_refused 2 "traffic: a dst rule on a sketch by source: a usage error" "counts source addresses" \
	"$FB" traffic g dst 198.51.100.1

# --- shared maps: another key refused, none asked shares ---------------------------
ip -n "$NSB" link add fbghd$$ type veth peer name fbghe$$ &&
	ip -n "$NSB" link set fbghd$$ up && ip -n "$NSB" link set fbghe$$ up
t_refused 1 "a second device with --sketch-by dst: refused (shared maps)" "attached elsewhere with other monitoring" \
	"$FB" -n "$NSB" attach g fbghd$$ --mode generic --monitor --sketch-by dst
check "a second device with --monitor alone: shares the sketch by source" "$FB" -n "$NSB" attach g fbghd$$ --mode generic --monitor
check_eq "... both attachments count by source" \
	"$("$FB" -j status | t_json '[a["sketch_by"] for a in d["attachments"] if a["filter"] == "g"]')" "['src', 'src']"
check "detach it" "$FB" -n "$NSB" detach fbghd$$
check "attach --replace --sketch-by dst: maps made anew" \
	"$FB" -n "$NSB" attach g "$VB" --replace --monitor --sketch-by dst
check_eq "... status: sketch by dst" \
	"$("$FB" -j status | t_json '[a["sketch_by"] for a in d["attachments"] if a["filter"] == "g"]')" "['dst']"
t_refused 1 "guard (--by src) on a sketch by destination: refused" "guard --by src needs a sketch by flow or by source address" \
	"$FB" guard g --into g --pps 1000 --ttl 3s --count 1
t_finish
