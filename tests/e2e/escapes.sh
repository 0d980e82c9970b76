#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Strings others chose reach the operator's terminal escaped, never as
# control characters: a list's line quoted in an error, a BGP peer's
# route in bgp's messages, a device's name (root of a container's
# namespace sets it: the kernel takes ESC, C1 controls and bytes of no
# UTF-8 sequence in one) in status, info and flows, and the name of a
# process holding a namespace (any process sets its own) in status's
# "pid N (NAME) fd M". Each control character (C0, DEL, and a C1 control:
# U+009B is CSI to a terminal, as ESC '[' is) and each byte of no UTF-8
# sequence shows as \xHH (\a, \r, ... for the usual ones), as ls -b and
# systemd show them; -j keeps the strings as they are (\u escapes, a byte
# of no UTF-8 sequence as U+FFFD) and stays JSON.
# status sees every attachment on the machine: this suite holds
# /tmp/fb-globals.lock (t_lock_globals), as linktype.sh does, so that
# status.sh never sees its attachment. Addresses: 198.51.100.0/24.
source "$(dirname "$0")/../lib/lib.sh"
t_begin escapes
t_lock_globals || t_skip_all "$T_LOCK_WHY"

HOLDER=""
cleanup() {
	t_kill $HOLDER
	for d in "$FLOWBLOOM_ROOT"/*/monitor; do
		[ -d "$d" ] && rm -f "$d"/* && rmdir "$d"
	done
}
t_traps

# raw FILE: what of FILE a terminal would obey or cannot decode: control
# characters but newline, C1 controls, bytes of no UTF-8 sequence; "" if
# none.
raw() {
	"$PY" - "$@" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
s = b.decode("utf-8", "replace")
bad = sorted({c for c in s if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0 or c == "\ufffd"})
print(" ".join("U+%04X" % ord(c) for c in bad))
PY
}

# --- A list's line: ESC, BEL, a C1 CSI in UTF-8 (c2 9b), a lone 9b
# and ff (no UTF-8 sequence).
check "create F" "$FB" create F --capacity 100 --fp-rate 0.01 --counter-bits 4
printf 'src 198.51.100.7\nsrc 198.51.100.\033]0\a\302\2332J\233\377z\r\n' >"$T_TMP/esc.txt"
"$FB" load F "$T_TMP/esc.txt" >"$T_TMP/out" 2>"$T_TMP/err"
check_eq "load: exit 1" $? 1
check_eq "load: the line quoted, escaped" "$(cat "$T_TMP/err")" \
	"flowbloom: $T_TMP/esc.txt:2: bad address or prefix '198.51.100.\\x1b]0\\a\\xc2\\x9b2J\\x9b\\xffz' (want ADDR or ADDR/LEN)"
check_eq "load: nothing on stderr a terminal obeys" "$(raw "$T_TMP/err")" ""
"$FB" -j load F "$T_TMP/esc.txt" >"$T_TMP/out.json" 2>/dev/null
check_eq "load -j: the error is JSON, the message as on stderr" \
	"$(t_json "d['error']" "$T_TMP/out.json")" "$(sed 's/^flowbloom: //' "$T_TMP/err")"

# --- A directory in the filters' root named with an escape sequence (only
# root makes one there; escaped all the same): list calls it broken, by its
# name escaped.
mkdir "$FLOWBLOOM_ROOT/"$'x\e[2J\xc2\x9by'
"$FB" list >"$T_TMP/list" 2>&1
grep -q '^x\\x1b\[2J\\xc2\\x9by  *BROKEN: bad filter name' "$T_TMP/list" && pass "list: the name escaped" ||
	fail "list: $(cat -v "$T_TMP/list")"
check_eq "list: nothing a terminal obeys" "$(raw "$T_TMP/list")" ""
rmdir "$FLOWBLOOM_ROOT/"$'x\e[2J\xc2\x9by'

# --- A BGP peer's route (ExaBGP's JSON decodes \u001b, \u009b).
t_exa_ann '198.51.100.\u009b2J\u001b]0\u0007' | "$FB" bgp F --state "$T_TMP/bgp.state" >"$T_TMP/out" 2>"$T_TMP/err"
grep -qF "from 198.51.100.9: prefix '198.51.100.\\xc2\\x9b2J\\x1b]0\\a' has no length; not applied" "$T_TMP/err" &&
	pass "bgp: the peer's route quoted, escaped" || fail "bgp: $(cat -v "$T_TMP/err")"
check_eq "bgp: nothing on stderr a terminal obeys" "$(raw "$T_TMP/err")" ""

# --- A device's name, in a namespace of the test's own: ESC, BEL, a C1
# CSI, a byte of no UTF-8 sequence (the kernel refuses only '/', ':' and
# blanks).
t_netns fbescA$$ fbescB$$ || t_skip_all "$T_NET_WHY"
NSA=fbescA$$
NSB=fbescB$$
VA=fbesca$$
VB=$'e\e\a\xc2\x9b\xff'$$
VBX="e\\x1b\\a\\xc2\\x9b\\xff$$"
FFFD=$'\xef\xbf\xbd' # U+FFFD, as python shows a lone byte JSON wrote as \ufffd
t_veth "$NSA" "$VA" "$NSB" "$VB" 02:fb:00:00:00:0a 02:fb:00:00:00:0b || t_skip_all "$T_NET_WHY"
for n in "$NSA:$VA" "$NSB:$VB"; do
	t_in "${n%%:*}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "${n%%:*}" link set "${n#*:}" up
done
t_addr "$NSA" "$VA" 198.51.100.1/24
t_addr "$NSB" "$VB" 198.51.100.2/24
t_neigh "$NSA" "$VA" 02:fb:00:00:00:0b 198.51.100.2
check "attach F --monitor --new-flows to the device" \
	"$FB" -n "$NSB" attach F "$VB" --mode generic --monitor --new-flows --age 30
grep -qF "attached F to $VBX (generic" "$T_TMP/out" && pass "attach: the device's name escaped" ||
	fail "attach: $(cat -v "$T_TMP/out")"

# flows: the device of each new flow (flows drains the events: kept).
send() {
	inA "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.1", int(sys.argv[1])))
s.sendto(b"m" * 100, ("198.51.100.2", 5000))' "$1"
}
# flows_got OUT [-j]: flows' events so far added to OUT; one there yet?
flows_got() {
	"$FB" $2 flows F | grep "198.51.100.1" >>"$1"
	[ -s "$1" ]
}
send 40001
t_wait_until 30 flows_got "$T_TMP/flows"
grep -aqF " $VBX (netns $NSB) pass " "$T_TMP/flows" && grep -q "udp 198.51.100.1:40001 198.51.100.2:5000$" "$T_TMP/flows" &&
	pass "flows: the device's name escaped" || fail "flows: $(cat -v "$T_TMP/flows")"
check_eq "flows: nothing a terminal obeys" "$(raw "$T_TMP/flows")" ""
send 40002
t_wait_until 30 flows_got "$T_TMP/flows.json" -j
head -1 "$T_TMP/flows.json" >"$T_TMP/flow1.json"
check_eq "flows -j: the device's name as it is (a lone byte as U+FFFD)" \
	"$(t_json "(d['dev'], d['netns'], d['sport'])" "$T_TMP/flow1.json")" "('e\\x1b\\x07\\x9b$FFFD$$', '$NSB', 40002)"
check_eq "flows -j: nothing a terminal obeys" "$(raw "$T_TMP/flows.json")" ""

# A process named with an escape sequence and a C1 CSI holds the
# namespace open (fd 3), its name removed: status calls it by the
# process's name.
"$PY" -c '
import ctypes, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
if fd != 3:
    os.dup2(fd, 3)
    os.close(fd)
ctypes.CDLL(None).prctl(15, b"\x1b]0;pwned\x07\r\xc2\x9b", 0, 0, 0)
open(sys.argv[2], "w").write("ready\n")
time.sleep(600)' "/run/netns/$NSB" "$T_TMP/ready" &
HOLDER=$!
t_wait_until 20 test -s "$T_TMP/ready"
ip netns del "$NSB"
LABEL="pid $HOLDER (\\x1b]0;pwned\\a\\r\\xc2\\x9b) fd 3"
"$FB" status >"$T_TMP/status" 2>&1
grep -aqF "$LABEL $VBX generic " "$T_TMP/status" &&
	pass "status: the process's and the device's names escaped" || fail "status: $(cat -v "$T_TMP/status")"
check_eq "status: nothing a terminal obeys" "$(raw "$T_TMP/status")" ""
"$FB" -n "../../proc/$HOLDER/fd/3" info F >"$T_TMP/info" 2>&1
grep -aqF "attached: $VBX generic" "$T_TMP/info" &&
	pass "info: the device's name escaped" || fail "info: $(cat -v "$T_TMP/info")"
check_eq "info: nothing a terminal obeys" "$(raw "$T_TMP/info")" ""
"$FB" -j status >"$T_TMP/status.json" 2>/dev/null
check_eq "status -j: the names as they are" \
	"$(t_json "[(a['netns'], a['device']) for a in d['attachments'] if a['device'].endswith('$$') and a['device'][0] == 'e']" "$T_TMP/status.json")" \
	"[('pid $HOLDER (\\x1b]0;pwned\\x07\\r\\x9b) fd 3', 'e\\x1b\\x07\\x9b$FFFD$$')]"
check_eq "status -j: nothing a terminal obeys (\\u escapes)" "$(raw "$T_TMP/status.json")" ""
grep -q '\\u001b]0;pwned\\u0007\\u000d\\u009b' "$T_TMP/status.json" && pass "status -j: C0 and C1 as \\u escapes" ||
	fail "status -j: $(cat -v "$T_TMP/status.json")"

# The verbs' own lines naming a device: query --packet --dev's "as on
# DEV", and attach's warning of an allow filter holding no rules (both
# printed the name raw).
"$FB" -n "../../proc/$HOLDER/fd/3" query F --packet --dev "$VB" udp 198.51.100.1:1 198.51.100.2:2 >"$T_TMP/qdev" 2>&1
grep -aqF "(as on $VBX: action" "$T_TMP/qdev" && pass "query --packet --dev: the device's name escaped" ||
	fail "query --packet --dev: $(cat -v "$T_TMP/qdev")"
check_eq "query --packet --dev: nothing a terminal obeys" "$(raw "$T_TMP/qdev")" ""
"$FB" -n "../../proc/$HOLDER/fd/3" detach "$VB" >/dev/null 2>&1
"$FB" create E --capacity 100 --fp-rate 0.01 >/dev/null
"$FB" -n "../../proc/$HOLDER/fd/3" attach E "$VB" --mode generic --action allow >/dev/null 2>"$T_TMP/allow"
grep -aqF "warning: filter 'E' holds no rules: under allow $VBX drops" "$T_TMP/allow" &&
	pass "attach: the empty allow filter's warning escapes the device's name" ||
	fail "attach: $(cat -v "$T_TMP/allow")"
check_eq "attach's warning: nothing a terminal obeys" "$(raw "$T_TMP/allow")" ""
"$FB" -n "../../proc/$HOLDER/fd/3" detach "$VB" >/dev/null 2>&1
# apply's line for a device it finds running the filter already
printf 'capacity = 100\nfp-rate = 0.01\nattach = %s generic\n' "$VB" >"$T_TMP/A.conf"
"$FB" -n "../../proc/$HOLDER/fd/3" apply "$T_TMP/A.conf" >/dev/null 2>&1
"$FB" -n "../../proc/$HOLDER/fd/3" apply "$T_TMP/A.conf" >"$T_TMP/again" 2>&1
grep -aqF "A already attached to $VBX (generic" "$T_TMP/again" &&
	pass "apply: the device's name escaped" || fail "apply: $(cat -v "$T_TMP/again")"
check_eq "apply: nothing a terminal obeys" "$(raw "$T_TMP/again")" ""
"$FB" -n "../../proc/$HOLDER/fd/3" apply --down "$T_TMP/A.conf" >/dev/null 2>&1

t_kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
HOLDER=""
t_finish
