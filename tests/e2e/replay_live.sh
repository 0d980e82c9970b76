#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# replay against the live program, frame by frame. Every frame of the
# shared captures (../shared/pcaps) that a veth can carry (14 to 65535
# bytes, the veth's MTU 65521) is sent through a veth pair into the
# program attached on its far end, against a filter holding every other
# flow the captures have; `flowbloom capture --verdict any` writes each
# with the verdict the kernel gave. Then: the capture holds every frame
# sent, byte for byte (to its snap length, 4096), in order; tcpdump reads
# it whole; `replay` of the capture gives every frame the verdict the
# live program gave (the round trip); and `replay` of the original
# captures gives the same verdicts record by record.
source "$(dirname "$0")/../lib/lib.sh"
t_begin replay_live
CAP=""
cleanup() {
	t_kill $CAP
	t_net_down
	t_cleanup_filters
}
t_traps
if [ ! -d "$PCAPS" ]; then
	skip "captures: $PCAPS not found"
	t_finish
fi
command -v tcpdump >/dev/null || { skip "tcpdump not installed (make deps installs it)"; t_finish; }
t_net_pair --no-ipv6 || { skip "$T_NET_WHY"; t_finish; }

check "create" "$FB" create rl --capacity 20000 --fp-rate 0.0001
# Every other flow the program keys in the captures: drops and passes.
"$FB" -j replay rl "$PCAPS"/*.pcap --explain 2>/dev/null | "$PY" -c '
import json, sys
fl = sorted({d["flow"] for d in map(json.loads, sys.stdin) if d.get("parse") == "ok"})
print("\n".join(fl[::2]))' >"$T_TMP/flows.txt"
check "add every other flow" "$FB" add rl -f "$T_TMP/flows.txt"
# Jumbo frames too: the largest MTU a veth takes, on both ends.
ip -n "$NSA" link set "$VA" mtu 65521 && ip -n "$NSB" link set "$VB" mtu 65521 ||
	fail "veth MTU 65521"
check "attach (native)" "$FB" -n "$NSB" attach rl "$VB" --mode native

# The frames to send, in order, as "file record" lines.
"$PY" - "$T_TMP/sent.txt" "$T_TMP/frames.bin" "$PCAPS"/*.pcap <<'PY'
import struct, sys
sent, frames = open(sys.argv[1], "w"), open(sys.argv[2], "wb")
for path in sys.argv[3:]:
    b = open(path, "rb").read()
    e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    o, n = 24, 0
    while o + 16 <= len(b):
        cap, ln = struct.unpack(e + "II", b[o + 8:o + 16])
        fr = b[o + 16:o + 16 + cap]
        o += 16 + cap
        n += 1
        if len(fr) < cap:
            break
        if 14 <= len(fr) <= 65535 and cap <= ln:
            sent.write("%s %d\n" % (path.rsplit("/", 1)[-1], n))
            frames.write(struct.pack("<I", len(fr)) + fr)
PY
N=$(wc -l <"$T_TMP/sent.txt")
[ "$N" -gt 3000 ] && pass "$N frames to send" || fail "only $N frames to send"

"$FB" -n "$NSB" -j capture rl -w "$T_TMP/live.pcapng" --verdict any --count "$N" \
	--duration 120 --buffer 64M >"$T_TMP/cap.out" 2>"$T_TMP/cap.err" &
CAP=$!
# (30 s at most: a loaded machine starts it late, and frames sent before
# would be missed)
t_wait_until 30 grep -q "^flowbloom: capturing " "$T_TMP/cap.err" ||
	fail "capture did not start in 30 s: $(head -c 300 "$T_TMP/cap.err")"
inA taskset -c 0 "$PY" - "$VA" "$T_TMP/frames.bin" <<'PY'
import socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
b, o, i = open(sys.argv[2], "rb").read(), 0, 0
while o < len(b):
    n = struct.unpack("<I", b[o:o + 4])[0]
    s.send(b[o + 4:o + 4 + n])
    o += 4 + n
    i += 1
    if i % 200 == 0:
        time.sleep(0.01)
PY
wait "$CAP"
check_eq "capture: exit 0, nothing lost" "$?:$("$PY" -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(d["written"], d["lost"])' "$T_TMP/cap.out")" "0:$N 0"
CAP=""

# The capture's frames and the kernel's verdicts (epb_verdict, type 2).
"$PY" - "$T_TMP/live.pcapng" "$T_TMP/frames.bin" >"$T_TMP/live.txt" <<'PY'
import struct, sys
b, o, got = open(sys.argv[1], "rb").read(), 0, []
while o + 12 <= len(b):
    t, ln = struct.unpack("<II", b[o:o + 8])
    if t == 6:
        cap = struct.unpack("<I", b[o + 20:o + 24])[0]
        fr = b[o + 28:o + 28 + cap]
        p, v = o + 28 + (cap + 3) // 4 * 4, None
        while p < o + ln - 4:
            c, l = struct.unpack("<HH", b[p:p + 4])
            if c == 0:
                break
            if c == 7 and b[p + 4] == 2:
                v = struct.unpack("<Q", b[p + 5:p + 13])[0]
            p += 4 + (l + 3) // 4 * 4
        got.append((fr, v))
    o += ln
f, o, same = open(sys.argv[2], "rb").read(), 0, 0
i = 0
while o < len(f):
    n = struct.unpack("<I", f[o:o + 4])[0]
    same += i < len(got) and got[i][0] == f[o + 4:o + 4 + min(n, 4096)]
    o += 4 + n
    i += 1
print(len(got), same)
for fr, v in got:
    print(v)
PY
read -r ngot nsame <"$T_TMP/live.txt"
check_eq "the capture holds every frame sent, byte for byte, in order" "$ngot $nsame" "$N $N"
check_eq "tcpdump reads it whole" \
	"$(tcpdump -r "$T_TMP/live.pcapng" -nq -# 2>/dev/null | grep -o '^ *[0-9]*' | tail -1 | tr -d ' ')" "$N"
verdicts() { "$FB" -j replay rl "$@" --explain | "$PY" -c '
import json, sys
n = {"aborted": 0, "drop": 1, "pass": 2, "tx": 3, "redirect": 4}
for d in map(json.loads, sys.stdin):
    if "packet" in d:
        print(d["file"].rsplit("/", 1)[-1], d["packet"], n.get(d["verdict"], d["verdict"]))'; }
tail -n +2 "$T_TMP/live.txt" >"$T_TMP/kernel.txt"
verdicts "$T_TMP/live.pcapng" | awk '{print $3}' >"$T_TMP/round.txt"
check "replay of the capture: every frame the live program's verdict" \
	diff -q "$T_TMP/kernel.txt" "$T_TMP/round.txt"
verdicts "$PCAPS"/*.pcap >"$T_TMP/orig.txt"
# The original records sent, with the kernel's verdict beside replay's.
awk 'NR == FNR { v[NR] = $1; next } { print $1, $2, v[FNR] }' "$T_TMP/kernel.txt" "$T_TMP/sent.txt" |
	sort >"$T_TMP/want.txt"
awk 'NR == FNR { s[$1 " " $2] = 1; next } ($1 " " $2) in s' "$T_TMP/sent.txt" "$T_TMP/orig.txt" |
	sort >"$T_TMP/have.txt"
check "replay of the shared captures: every frame sent the live program's verdict" \
	diff -q "$T_TMP/want.txt" "$T_TMP/have.txt"
diff "$T_TMP/want.txt" "$T_TMP/have.txt" | head -5
check_eq "... both verdicts among them" "$(awk '{print $1}' "$T_TMP/kernel.txt" | sort -u | tr '\n' ' ')" "1 2 "
t_finish
