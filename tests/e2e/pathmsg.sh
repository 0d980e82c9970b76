#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What a message shows of a path the operator gave (or a file named): each
# verb run twice, on files in a short directory and in a deep one (3870
# bytes: 16 names of control bytes and escape sequences, \x01 ESC [2J DEL),
# plus an argument of 5000 bytes. In the deep runs:
# - no control byte reaches stderr or stdout (escaped, \xHH): the file's
#   name in a warning (host bits) and in a verb's own line on stdout
#   (export, capture, apply --check) was printed raw;
# - each line ends as the short run's (the reason, what was left as it
#   was): the message was cut at 8192 bytes, inside the escaped path, so
#   no reason was said at all;
# - each line stays short (the path's middle left out, "...(N bytes)...",
#   its start and its end, the file's name, kept).
# Verbs: load (bad line, missing file, host bits), apply (a conf whose list
# is missing; --check), export, import, metrics --textfile, guard --never,
# bgp --state, capture -w (a veth pair of the suite's own).
source "$(dirname "$0")/../lib/lib.sh"
t_begin pathmsg
t_traps
t_net_pair || t_skip_all "$T_NET_WHY"

SHORT=$T_TMP/s
DEEP=$("$PY" -c '
import os, sys
d = sys.argv[1].encode() + b"/d"
os.mkdir(d)
for i in range(16):
    d += b"/" + b"\x01\x1b[2J\x7f" * 40
    os.mkdir(d)
sys.stdout.buffer.write(d)' "$T_TMP")
LONGARG=$T_TMP/$(printf 'L%.0s' $(seq 5000))
mkdir -p "$SHORT"
for d in "$SHORT" "$DEEP"; do
	printf 'udp 198.51.100.1:53 203.0.113.7:4000\nbogus line here\n' >"$d/list.txt"
	printf 'src 198.51.100.1/24\n' >"$d/hb.txt"
	printf 'capacity = 100\nfp-rate = 0.01\nload = %s/nolist\n' "$d" >"$d/pa.conf"
	printf 'capacity = 100\nfp-rate = 0.01\n' >"$d/pb.conf"
	printf 'udp 198.51.100.1:53 203.0.113.7:4000\nudp 198.51.100.1:53 203.0.113.7:4000\n' >"$d/dup.txt"
	printf 'udp 198.51.100.2:53 203.0.113.7:4000\n' >"$d/absent.txt"
	: >"$d/empty.txt"
	for i in $(seq 1 300); do echo "udp 198.51.100.$((i % 250)):$i 203.0.113.7:4000"; done >"$d/big.txt"
	# two records of more bytes than their frames had on the wire
	"$PY" - "$d/over.pcap" <<'PY'
import struct, sys
f = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + bytes([0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0,
    198, 51, 100, 1, 203, 0, 113, 7]) + struct.pack("!HHHH", 53, 4000, 8, 0)
r = struct.pack("<IIII", 1, 0, len(f) + 12, len(f)) + f + bytes(12)
open(sys.argv[1], "wb").write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1) + r + r)
PY
done
"$FB" create pf --capacity 100 --fp-rate 0.01 >/dev/null || fail "create pf"
"$FB" create pc --counting --capacity 100 --fp-rate 0.01 >/dev/null || fail "create pc"
"$FB" create pk --type cuckoo --capacity 16 --fp-rate 0.01 >/dev/null || fail "create pk"
"$FB" -n "$NSA" attach pf "$VA" >/dev/null || fail "attach pf to $VA"

# run LABEL DIR ARGS...: the verb with {} in ARGS standing for DIR; its
# exit, stdout and stderr in $T_TMP/LABEL.{rc,out,err}.
run() {
	local label=$1 dir=$2 a args=()
	shift 2
	for a in "$@"; do args+=("${a//\{\}/$dir}"); done
	timeout 20 "$FB" "${args[@]}" >"$T_TMP/$label.out" 2>"$T_TMP/$label.err" </dev/null
	echo $? >"$T_TMP/$label.rc"
}
# same NAME ARGS...: run short and deep, and compare.
same() {
	local name=$1 why
	shift
	run "$name.s" "$SHORT" "$@"
	[ -z "${BETWEEN:-}" ] || eval "$BETWEEN"
	run "$name.d" "$DEEP" "$@"
	why=$("$PY" - "$T_TMP/$name" <<'PY'
import re, sys
p = sys.argv[1]
def rd(k, f):
    return open("%s.%s.%s" % (p, k, f), "rb").read()
bad = []
if rd("s", "rc") != rd("d", "rc"):
    bad.append("exit %s, short %s" % (rd("d", "rc").strip(), rd("s", "rc").strip()))
for f in ("err", "out"):
    # times differ from run to run
    s, d = (re.sub(rb"[0-9.]+ (ms|s)\b", b"T", rd(k, f)).splitlines() for k in "sd")
    if any((c < 0x20 and c != 9) or c == 0x7f for c in b"".join(d)):
        bad.append("a control byte on std" + f)
    if len(s) != len(d):
        bad.append("%d lines on std%s, short %d" % (len(d), f, len(s)))
    for a, b in zip(s, d):
        if len(b) > 1200:
            bad.append("a line of %d bytes" % len(b))
        # from the last path's last name on: the file, why, what then
        t = a[a.rfind(b"/") + 1:]
        if not b.endswith(t):
            bad.append("ends %r, short %r" % (b[-len(t) - 20:], t))
print("; ".join(bad)[:600])
PY
)
	[ -z "$why" ] && pass "$name: escaped, short, ends as with a short path" ||
		fail "$name: $why ($(head -c 300 "$T_TMP/$name.d.err" | cat -v))"
}

same load-bad load pf {}/list.txt
same load-missing load pf {}/nope.txt
same load-hostbits load pf {}/hb.txt
same apply-missing-list apply {}/pa.conf
same apply-check apply {}/pb.conf --check
same export export pf {}/out.fbx
same export-nodir export pf {}/nodir/out.fbx
same import-missing import {}/nope.fbx pf2
same textfile-nodir metrics pf --textfile {}/nodir/x.prom
same never-missing guard pf --into pc --pps 10 --ttl 1m --never {}/nope --count 1
same state-nodir bgp pc --state {}/nodir/st
same capture-nodir -n "$NSA" capture pf -w {}/nodir/x.pcap --duration 1
same capture -n "$NSA" capture pf -w {}/x.pcap --duration 1
# Lines that named the file raw and whole: replay's warning of records
# longer than on the wire, import's line on stdout, the note of rules a
# file names again; "FILE:LINE" of a rule del did not find was cut at 600
# bytes (the file's name and the line lost), and a usage error at 512
# (its reason lost).
same replay-overlong replay pf {}/over.pcap
BETWEEN='"$FB" destroy pi >/dev/null' same import-ok import {}/out.fbx pi
"$FB" destroy pi >/dev/null
same add-again add pc -f {}/dup.txt
same del-absent del pc -f {}/absent.txt
same into-file merge pf pf --into {}/m.fbx
# The names of empty lists a replace refuses, and "FILE:LINE" of a rule a
# full cuckoo filter refuses, were cut at 511 bytes (no file, no line).
same empty-replace load pf --replace {}/empty.txt
same cuckoo-full load pk {}/big.txt

# A directory a killed create left, its name chosen by whoever made it:
# list's note shows it escaped.
mkdir "$FLOWBLOOM_ROOT/~pm$$"$'\x1b[2J'
"$FB" list >/dev/null 2>"$T_TMP/stale.err"
grep -qF "left $FLOWBLOOM_ROOT/~pm$$\\x1b[2J: flowbloom destroy pm$$\\x1b[2J removes it" "$T_TMP/stale.err" &&
	! grep -q $'\x1b' "$T_TMP/stale.err" &&
	pass "list: a stale directory's name in its note, escaped" ||
	fail "list: a stale directory's name: $(cat -v "$T_TMP/stale.err")"
rmdir "$FLOWBLOOM_ROOT/~pm$$"$'\x1b[2J'

# An argument of 5000 bytes: its start and end, and why.
for v in "load pf" "export pf" "metrics pf --textfile" "guard pf --into pc --pps 10 --ttl 1m --count 1 --never"; do
	# shellcheck disable=SC2086
	"$FB" $v "$LONGARG" >/dev/null 2>"$T_TMP/long.err"
	[[ "$(wc -c <"$T_TMP/long.err")" -lt 600 && "$(cat "$T_TMP/long.err")" =~ ^flowbloom:\ $T_TMP/L+\.\.\.\(4[0-9]{3}\ bytes\)\.\.\.L+:\ (File\ name\ too\ long|not\ a\ file\ name)$ ]] &&
		pass "$v: a 5000-byte argument: start, end, reason" ||
		fail "$v: a 5000-byte argument: $(head -c 400 "$T_TMP/long.err")"
done

"$FB" -n "$NSA" detach "$VA" >/dev/null
t_cleanup_filters
t_finish
