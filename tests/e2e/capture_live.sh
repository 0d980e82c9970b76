#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom capture` on a live attachment: two network namespaces this
# script creates, joined by a veth pair, the filter attached (native XDP)
# on the receiver. A known mix of UDP datagrams (IPv4 and IPv6, one per
# rule kind: 5-tuple, source prefix, destination prefix, and traffic no
# rule matches), each with a payload naming it, is sent from the other
# side. Checked: with sampling 1 the dropped frames are all in the file
# and nothing passed is (tshark reads the verdict and rule kind of each,
# tcpdump reads the file); 1 in 4 gives exactly every fourth frame; the
# passed ones, as classic pcap, after SIGINT; SIGHUP keeps the file; -w -
# into tcpdump; --snaplen; the -j summary; the program is never reloaded
# and is left with capture off; a second capture is refused; a capture
# killed with SIGKILL stops costing the data path by itself (the program
# turns it off once the lease runs out) and the next capture takes over;
# one stopped (SIGSTOP) past its lease is off meanwhile and on again when
# resumed; one over two devices puts each frame on its own pcapng
# interface; a frame a rule with a lifetime dropped says so in its
# comment; usage errors.
# Addresses: 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin capture_live
NSA=fbkA$$
NSB=fbkB$$
VA=fbkva$$
VB=fbkvb$$
BG=()
cleanup() {
	local p
	for p in $(t_ours "${BG[@]}"); do kill -9 "$p" 2>/dev/null; done
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	t_cleanup_filters
}
t_traps

if ! command -v tshark >/dev/null || ! command -v tcpdump >/dev/null; then
	skip "tshark or tcpdump not installed (make deps installs them)"
	t_finish
fi
if ! ip netns add "$NSA" 2>/dev/null || ! ip netns add "$NSB" 2>/dev/null; then
	skip "cannot create network namespaces"
	t_finish
fi
ip link add "$VA" netns "$NSA" type veth peer name "$VB" netns "$NSB"
ip -n "$NSA" addr add 198.51.100.1/24 dev "$VA"
ip -n "$NSA" addr add 203.0.113.7/32 dev "$VA"
ip -n "$NSA" addr add 2001:db8:c::1/64 dev "$VA" nodad
ip -n "$NSB" addr add 198.51.100.2/24 dev "$VB"
ip -n "$NSB" addr add 2001:db8:c::2/64 dev "$VB" nodad
ip -n "$NSA" link set "$VA" up
ip -n "$NSB" link set "$VB" up
MAC=$(ip -n "$NSB" -br link show "$VB" | awk '{print $3}')
# No neighbour discovery: A knows B's address for every destination.
for a in 198.51.100.2 198.51.100.3 2001:db8:c::2; do
	ip -n "$NSA" neigh add "$a" dev "$VA" lladdr "$MAC"
done
INA="nsenter --net=/run/netns/$NSA"

check "create" "$FB" create cap --capacity 1000 --fp-rate 0.0001
check "rules of every kind" "$FB" add cap udp 198.51.100.1:40001 198.51.100.2:5000 \
	udp [2001:db8:c::1]:40003 [2001:db8:c::2]:5001 src 203.0.113.7 dst 198.51.100.3
check "attach (native)" "$FB" -n "$NSB" attach cap "$VB" --mode native
prog_id() { nsenter --net="/run/netns/$NSB" ip link show "$VB" | grep -o 'prog/xdp id [0-9]*' | awk '{print $3}'; }
PROG=$(prog_id)

# send N [KINDS]: N datagrams of each kind, from one CPU (sampling is per
# CPU), payload KIND-I. d4 d6 ds dd are dropped (5-tuple v4 and v6, source,
# destination rule), p4 p6 pass.
SENDER='import socket, sys
n = int(sys.argv[1]); kinds = sys.argv[2].split(",")
def s4(src, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((src, port)); return s
def s6(port):
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.bind(("2001:db8:c::1", port)); return s
out = {
    "d4": (s4("198.51.100.1", 40001), ("198.51.100.2", 5000)),
    "d6": (s6(40003), ("2001:db8:c::2", 5001)),
    "ds": (s4("203.0.113.7", 40005), ("198.51.100.2", 5000)),
    "dd": (s4("198.51.100.1", 40006), ("198.51.100.3", 5000)),
    "p4": (s4("198.51.100.1", 40002), ("198.51.100.2", 5000)),
    "p6": (s6(40004), ("2001:db8:c::2", 5001)),
}
for i in range(n):
    for k in kinds:
        s, dst = out[k]
        s.sendto(b"%s-%d" % (k.encode(), i), dst)'
send() { $INA taskset -c 0 python3 -c "$SENDER" "$1" "${2:-d4,d6,ds,dd,p4,p6}"; }

# start NAME ARGS...: a capture in the background (stdout/stderr to
# $T_TMP/NAME.out/.err), once it says it is capturing (30 s at most: a
# loaded machine starts it late).
start() {
	local name=$1
	shift
	"$FB" -n "$NSB" "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err" &
	CAP=$!
	BG+=("$CAP")
	t_wait_until 30 started_or_gone "$T_TMP/$name.err"
	grep -q "^flowbloom: capturing " "$T_TMP/$name.err" && return 0
	fail "capture $name did not start: $(head -c 300 "$T_TMP/$name.err")"
	return 1
}
started_or_gone() { grep -q "^flowbloom: capturing " "$1" || ! kill -0 "$CAP" 2>/dev/null; }
# seen D0 N: wait until the filter dropped N frames more than D0 (the
# last frame send sent is a dropped one: the program has seen them all
# and put them in the ring) before a signal ends the capture; 20 s at
# most, a fixed sleep being too short on a loaded machine.
dropped_by() { [ "$(dropped)" -ge "$1" ]; }
seen() { t_wait_until 20 dropped_by $(($1 + $2)) || fail "the filter dropped $(($(dropped) - $1)) of $2 frames in 20 s"; }
# finish: wait for the capture started last; its exit status.
finish() {
	local rc
	wait "$CAP"
	rc=$?
	return $rc
}
json() { python3 -c "import json,sys; d=json.loads(sys.stdin.read().splitlines()[-1]); print($1)"; }
# The program's capture maps by name: "CTL RINGS" (their ids).
cap_maps() {
	bpftool -j prog show id "$PROG" | python3 -c '
import json, subprocess, sys
ids = json.load(sys.stdin)["map_ids"]
maps = {m["name"]: m["id"] for m in json.loads(subprocess.check_output(["bpftool", "-j", "map", "show"])) if m["id"] in ids}
print(maps.get(".data.fbcap", "none"), maps.get("fb_cap_rings", "none"))'
}
# ctl: the control block's on, owner and lease (bpftool reads it by its
# BTF), and how many ring buffers the program holds.
ctl() {
	local rings
	rings=$(bpftool -j map dump id "$RINGMAP" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
	bpftool -j map dump id "$CTLMAP" | python3 -c '
import json, sys
e = json.load(sys.stdin)[0]
c = e.get("formatted", e)["value"][".data.fbcap"][0]["fb_cap"]
print(c["on"], c["owner"], c["lease"], sys.argv[1])' "$rings"
}
read -r CTLMAP RINGMAP < <(cap_maps)
dropped() { t_stat "$FB" cap dropped; }
# tfields FILE FIELD...: tshark's fields (in the order of FIELDS), one frame per line;
# tshark reads each file once (FIELDS), the answers come from its table.
FIELDS="frame.verdict.ebpf_xdp frame.comment udp.payload frame.interface_name frame.cap_len frame.len"
tfields() {
	local f=$1 cols="" w i
	shift
	[ -f "$f.tsv" ] || tshark -r "$f" -T fields -E separator=/t $(printf -- '-e %s ' $FIELDS) >"$f.tsv" 2>/dev/null
	for w in "$@"; do
		i=1
		for x in $FIELDS; do [ "$x" = "$w" ] && cols="$cols${cols:+,}$i"; i=$((i + 1)); done
	done
	cut -f"$cols" "$f.tsv"
}
# payloads FILE: the UDP payloads as text, sorted.
payloads() { tfields "$1" udp.payload | while read -r h; do echo "$h" | xxd -r -p; echo; done | grep . | sort; }
expect() { # KINDS N: the payloads send N KINDS gives, sorted
	local k i
	for k in ${1//,/ }; do for ((i = 0; i < $2; i++)); do echo "$k-$i"; done; done | sort
}

# 1. Every dropped frame, nothing passed, 20 of each kind.
D0=$(dropped)
if start drop -j capture cap -w "$T_TMP/drop.pcapng" --count 80 --duration 20; then
	send 20
	finish
	check_eq "drop capture: exit 0" "$?:$(grep -v "^flowbloom: capturing dropped packets of 'cap' on" "$T_TMP/drop.err" | head -c 200)" "0:"
	f=$T_TMP/drop.pcapng
	check_eq "the dropped frames, every one of them, and nothing passed" \
		"$(payloads "$f" | tr '\n' ' ')" "$(expect d4,d6,ds,dd 20 | tr '\n' ' ')"
	check_eq "tcpdump reads all 80" "$(tcpdump -r "$f" -n 2>/dev/null | grep -c UDP)" 80
	check_eq "every frame's pcapng verdict is XDP_DROP (1)" \
		"$(tfields "$f" frame.verdict.ebpf_xdp | sort | uniq -c | awk '{print $1":"$2}')" "80:1"
	check_eq "rule kinds in the comments: 40 flow, 20 src, 20 dst" \
		"$(tfields "$f" frame.comment | sort | uniq -c | awk '{print $1, $NF}' | tr '\n' ';')" \
		"20 rule=dst;40 rule=flow;20 rule=src;"
	check_eq "the kind of each frame is its rule's" \
		"$(tfields "$f" frame.comment udp.payload | awk '{print $3, $NF}' | while read -r r p; do echo "$r $(echo "$p" | xxd -r -p | cut -c1-2)"; done | sort -u | tr '\n' ';')" \
		"rule=dst dd;rule=flow d4;rule=flow d6;rule=src ds;"
	check_eq "interface name in the file" "$(tfields "$f" frame.interface_name | sort -u)" "$VB"
	check_eq "-j summary: written, matched, sampled, lost, verdict" \
		"$(json '(d["written"], d["matched"], d["sampled"], d["lost"], d["verdict"], d["devices"][0]["dev"])' <"$T_TMP/drop.out")" \
		"(80, 80, 80, 0, 'drop', '$VB')"
	check_eq "the filter's own counter agrees" "$(($(dropped) - D0))" 80
	check_eq "the file is 0600" "$(stat -c %a "$f")" 600
	check_eq "no reload: the same program is attached" "$(prog_id)" "$PROG"
	check_eq "after the capture: capture off, no owner, no lease, no ring" "$(ctl)" "0 0 0 0"
fi

# 2. 1 in 4, from one CPU: exactly every fourth frame, from the first.
if start s4 -j capture cap -w "$T_TMP/s4.pcapng" --sample 4 --duration 20; then
	D=$(dropped)
	send 40 d4
	seen "$D" 40
	kill -INT "$CAP"
	finish
	check_eq "--sample 4: frames 0, 4, ..., 36 of 40" "$(payloads "$T_TMP/s4.pcapng" | tr '\n' ' ')" \
		"$(for i in 0 12 16 20 24 28 32 36 4 8; do printf 'd4-%s ' $i; done)"
	check_eq "--sample 4: -j matched 40, sampled 10, written 10" \
		"$(json '(d["matched"], d["sampled"], d["written"], d["sample"])' <"$T_TMP/s4.out")" "(40, 10, 10, 4)"
fi

# 3. Passed frames, classic pcap, ended by SIGINT.
if start pass capture cap -w "$T_TMP/pass.pcap" --verdict pass --format pcap; then
	D=$(dropped)
	send 10 p4,d4,p6,dd
	seen "$D" 20
	kill -INT "$CAP"
	finish
	check_eq "SIGINT: exit 0" "$?" 0
	f=$T_TMP/pass.pcap
	check_eq "pcap: nanosecond magic" "$(od -An -tx4 -N4 "$f" | tr -d ' ')" a1b23c4d
	check_eq "--verdict pass: the passed datagrams, none dropped" \
		"$(payloads "$f" | grep -E '^(p|d)' | tr '\n' ' ')" "$(expect p4,p6 10 | tr '\n' ' ')"
	check_eq "plain summary names the file" "$(grep -c "written to $f (pcap)" "$T_TMP/pass.out")" 1
fi
# SIGHUP (the terminal or ssh session went away) ends it as SIGINT does:
# the file is kept, capture switched off.
if start hup capture cap -w "$T_TMP/hup.pcapng"; then
	D=$(dropped)
	send 3 d4
	seen "$D" 3
	kill -HUP "$CAP"
	finish
	check_eq "SIGHUP: exit 0, the frames kept" \
		"$?:$(payloads "$T_TMP/hup.pcapng" 2>/dev/null | tr '\n' ' ')" "0:d4-0 d4-1 d4-2 "
	check_eq "SIGHUP: capture off at once" "$(ctl)" "0 0 0 0"
fi
# The wall clock stepped during a capture (NTP at boot; clockstep.c,
# preloaded into the capture alone, steps its clock back an hour): frames
# after the step carry the new time, as tcpdump's would.
if cc -shared -fPIC -o "$T_TMP/clockstep.so" "$(dirname "$0")/clockstep.c" -ldl 2>/dev/null; then
	echo 0 >"$T_TMP/step"
	if FB_CLOCKSTEP_FILE=$T_TMP/step LD_PRELOAD=$T_TMP/clockstep.so \
		start step capture cap -w "$T_TMP/step.pcapng" --count 2 --duration 20; then
		# The capture takes the clock again at each renewal of its lease
		# (every 250 ms, after reading its ring): the first frame in the
		# ring, read in the loop of a renewal (the 2nd that begins after
		# it) before the step; a renewal after the step before the second
		# frame. Conditions, not fixed waits: a loaded machine may hold the
		# capture back past any.
		lease_moved() { [ "$(ctl | cut -d' ' -f3)" != "$L" ]; }
		renewed() {
			L=$(ctl | cut -d' ' -f3)
			t_wait_until 20 lease_moved || fail "clock step: the lease not renewed in 20 s"
		}
		D=$(dropped)
		send 1 d4
		seen "$D" 1
		renewed
		renewed
		echo -3600 >"$T_TMP/step"
		renewed
		send 1 d4
		finish
		check_eq "clock stepped back 1 h: the second frame's time follows" \
			"$(tshark -r "$T_TMP/step.pcapng" -T fields -e frame.time_epoch 2>/dev/null |
				awk 'NR == 1 { a = $1 } NR == 2 { d = $1 - a; print (d < -3590 && d > -3610) ? "yes" : d }')" yes
	fi
else
	skip "no C compiler for clockstep.c: the clock step"
fi
# A full disk (a 64 KiB tmpfs in a private mount namespace, about 100 of
# these frames, sent over 2 s): the capture ends with exit 1, naming the
# cause, and keeps the frames that reached the file whole before (flushed
# every 256 frames and 250 ms) as a complete file tshark reads, no
# temporary file left.
unshare -m --propagation private env LC_ALL=C bash -c '
	mkdir -p "$1/full" && mount -t tmpfs -o size=64k,mode=0755 fbtest "$1/full" || exit 9
	"$2" -n "$3" capture cap -w "$1/full/c.pcapng" --duration 20 >"$1/full.out" 2>"$1/full.err" &
	for i in $(seq 300); do grep -q "^flowbloom: capturing" "$1/full.err" && break; sleep 0.1; done
	$4 python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((\"198.51.100.1\", 40001))
for i in range(200):
    s.sendto(b\"%04d\" % i + b\"f\" * 496, (\"198.51.100.2\", 5000))
    if i % 10 == 9: time.sleep(0.1)"
	wait $!
	echo $? >"$1/full.rc"
	ls -A "$1/full" >"$1/full.ls"
	cp "$1/full/c.pcapng" "$1/full.pcapng" 2>/dev/null
	exit 0
' _ "$T_TMP" "$FB" "$NSB" "$INA"
if [ $? = 9 ]; then
	skip "ENOSPC: cannot mount a tmpfs here"
else
	check_eq "full disk: exit 1, the cause named" \
		"$(cat "$T_TMP/full.rc"):$(grep -c 'c.pcapng: write failed: No space left on device' "$T_TMP/full.err")" "1:1"
	check_eq "full disk: the file, no temporary one" "$(tr '\n' ' ' <"$T_TMP/full.ls")" "c.pcapng "
	n=$(tshark -r "$T_TMP/full.pcapng" 2>"$T_TMP/full.tshark" | wc -l)
	check_eq "full disk: tshark reads the file whole, and frames are in it" \
		"$(grep -v '^Running as user' "$T_TMP/full.tshark"):$([ "${n:-0}" -gt 0 ] && echo some)" ":some"
	check_eq "full disk: the summary counts the frames kept" \
		"$(grep -o '^cap: [0-9]* packets written' "$T_TMP/full.out")" "cap: $n packets written"
	check_eq "full disk: capture off" "$(ctl)" "0 0 0 0"
fi

# 4. To stdout, into tcpdump; --snaplen.
"$FB" -n "$NSB" capture cap -w - --count 5 --snaplen 40 --duration 20 2>"$T_TMP/pipe.err" |
	tcpdump -r - -n -e 2>/dev/null >"$T_TMP/pipe.txt" &
PIPE=$!
# $! is the pipeline's last process: the capture too (jobs -p: its first),
# else a cleanup kills tcpdump alone and the capture runs on after the
# suite, up to its --duration, in the namespace.
BG+=("$PIPE" "$(jobs -p %%)")
t_wait_until 30 grep -q "^flowbloom: capturing " "$T_TMP/pipe.err" || fail "-w -: the capture did not start in 30 s"
send 5 d4
wait "$PIPE"
check_eq "-w - | tcpdump -r -: 5 frames" "$(grep -c 'length' "$T_TMP/pipe.txt")" 5
check_eq "-w -: the summary on stderr" "$(grep -c '5 packets written to -' "$T_TMP/pipe.err")" 1
# A reader that goes away: the capture ends by itself, capture off.
timeout 10 bash -c '"$1" -n "$2" capture cap -w - --duration 20 2>"$3" | head -c 64 >/dev/null; echo "${PIPESTATUS[0]}" >"$3.rc"' _ "$FB" "$NSB" "$T_TMP/gone.err"
check_eq "-w -, the reader gone: exit 1, naming the pipe" \
	"$(cat "$T_TMP/gone.err.rc" 2>/dev/null):$(grep -c 'Broken pipe' "$T_TMP/gone.err")" "1:1"
check_eq "... and capture is off" "$(ctl)" "0 0 0 0"
# Ctrl-C of `capture -w - | READER`: the terminal's SIGINT reaches both,
# and the reader can be gone before capture has written the frames it
# still holds. That is the stop asked for, not a failed write: exit 0, no
# error (it said "-: write failed: Broken pipe" and exited 1 when the
# reader went first, under a flood about half the time; "Interrupted system
# call" when the signal cut a write the full pipe held, 1 round in 30 under
# load). Five rounds.
CTRLC='import os, signal, subprocess, sys, time
fb, ns, err = sys.argv[1:4]
r, w = os.pipe()
rd = subprocess.Popen(["cat"], stdin=r, stdout=subprocess.DEVNULL, process_group=0)
os.close(r)
with open(err, "w") as e:
    cap = subprocess.Popen([fb, "-n", ns, "capture", "cap", "-w", "-", "--duration", "20"],
                           stdout=w, stderr=e, process_group=rd.pid)
os.close(w)
for i in range(200):
    if "capturing" in open(err).read():
        break
    time.sleep(0.05)
time.sleep(0.3)
os.killpg(rd.pid, signal.SIGINT)
print(cap.wait())
rd.wait()'
ctrlc=""
for i in 1 2 3 4 5; do
	send 100000 d4 &
	flood=$!
	ctrlc+="$(python3 -c "$CTRLC" "$FB" "$NSB" "$T_TMP/ctrlc.err"):$(grep -c 'write failed' "$T_TMP/ctrlc.err") "
	wait "$flood"
done
check_eq "Ctrl-C of capture -w - | cat under a flood, 5 rounds: exit 0, no error" "$ctrlc" \
	"0:0 0:0 0:0 0:0 0:0 "
check_eq "... and capture is off" "$(ctl)" "0 0 0 0"

if start snap capture cap -w "$T_TMP/snap.pcapng" --snaplen 40 --count 1 --duration 20; then
	send 1 d6
	finish
	check_eq "--snaplen 40: 40 bytes kept of a longer frame" \
		"$(tfields "$T_TMP/snap.pcapng" frame.cap_len frame.len | tr '\t' ' ')" "40 66"
fi

# 5. One capture at a time.
if start one capture cap -w "$T_TMP/one.pcapng" --duration 20; then
	check_fails "a second capture is refused" "$FB" -n "$NSB" capture cap -w "$T_TMP/two.pcapng"
	check_eq "... saying why" "$(grep -c 'one capture at a time' "$T_TMP/err")" 1
	check_eq "... and leaves no file" "$(ls -A "$T_TMP" | grep -c two)" 0
	send 3 d4
	kill -TERM "$CAP"
	finish
	check_eq "SIGTERM: exit 0, the first capture's frames kept" \
		"$?:$(payloads "$T_TMP/one.pcapng" | tr '\n' ' ')" "0:d4-0 d4-1 d4-2 "
fi

# 6. SIGKILL: the program turns capture off once the lease runs out.
if start killed capture cap -w "$T_TMP/killed.pcapng" --verdict any --duration 20 --buffer 8M; then
	kill -9 "$CAP"
	wait "$CAP" 2>/dev/null
	check_eq "killed: capture still on at once (and its ring)" "$(ctl | cut -d' ' -f1,4)" "1 1"
	sleep 2.2
	send 1 p4
	check_eq "killed: off after the lease (2 s) and a packet" "$(ctl | cut -d' ' -f1)" 0
	# Its ring buffer (--buffer bytes) stays held in the program: status says so.
	check_eq "status: the killed capture's ring is reported, with its size" \
		"$("$FB" status 2>&1 >/dev/null | grep -c "program $PROG on $VB .*holds a capture ring buffer of 8388608 bytes that no capture uses")" 1
	check_eq "status -j: its size, no capture running" "$("$FB" -j status | json \
		"[(a['capture_ring_bytes'], a['capture_running']) for a in d['attachments'] if a['prog_id'] == $PROG]")" \
		"[(8388608, False)]"
	if start after -j capture cap -w "$T_TMP/after.pcapng" --count 2 --duration 20; then
		check_eq "status: a running capture's ring is its own (not reported)" \
			"$("$FB" status 2>&1 >/dev/null | grep -c "program $PROG on")" 0
		send 2 d4
		finish
		check_eq "the next capture takes over" "$?:$(json 'd["written"]' <"$T_TMP/after.out")" "0:2"
		check_eq "... and frees the ring when it ends" "$("$FB" -j status | json \
			"[(a['capture_ring_bytes'], a['capture_running']) for a in d['attachments'] if a['prog_id'] == $PROG]")" \
			"[(0, False)]"
	fi
fi
if start killed2 capture cap -w "$T_TMP/killed2.pcapng" --duration 20; then
	kill -9 "$CAP"
	wait "$CAP" 2>/dev/null
	# At once: the dead holder's lease is waited out (at most 2 s), not refused.
	if start after2 -j capture cap -w "$T_TMP/after2.pcapng" --count 1 --duration 20; then
		check_eq "a dead capture's lease is waited out" \
			"$(grep -c 'which is gone' "$T_TMP/after2.err")" 1
		send 1 d4
		finish
		check_eq "... then capture works" "$?:$(json 'd["written"]' <"$T_TMP/after2.out")" "0:1"
	fi
fi
# A capture stopped past its lease: off meanwhile, on again when it resumes.
if start stopped -j capture cap -w "$T_TMP/stopped.pcapng" --count 2 --duration 20; then
	kill -STOP "$CAP"
	sleep 2.2
	send 1 p4
	check_eq "stopped (SIGSTOP) past the lease: capture off" "$(ctl | cut -d' ' -f1)" 0
	kill -CONT "$CAP"
	# resumed, it turns capture on again: then the frames are sent
	capture_on() { [ "$(ctl | cut -d' ' -f1)" = 1 ]; }
	t_wait_until 10 capture_on || fail "resumed: capture not on again after 10 s"
	send 2 d4
	finish
	check_eq "... resumed: on again, the pause counted" \
		"$?:$(json '(d["written"], d["lease_lapses"])' <"$T_TMP/stopped.out")" "0:(2, 1)"
fi
check_eq "still no reload after all of it" "$(prog_id)" "$PROG"

# 7. Two devices: a second veth pair into B, the filter attached there too;
# one capture covers both, each frame on its own interface.
ip link add "${VA}2" netns "$NSA" type veth peer name "${VB}2" netns "$NSB"
ip -n "$NSA" addr add 203.0.113.1/24 dev "${VA}2"
ip -n "$NSB" addr add 203.0.113.2/24 dev "${VB}2"
ip -n "$NSA" link set "${VA}2" up
ip -n "$NSB" link set "${VB}2" up
ip -n "$NSA" neigh add 203.0.113.2 dev "${VA}2" lladdr "$(ip -n "$NSB" -br link show "${VB}2" | awk '{print $3}')"
check "attach to a second device" "$FB" -n "$NSB" attach cap "${VB}2" --mode native
check "a rule for it" "$FB" add cap udp 203.0.113.1:40007 203.0.113.2:5002
if start two -j capture cap -w "$T_TMP/two.pcapng" --count 4 --duration 20; then
	$INA python3 -c 'import socket
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind(("198.51.100.1", 40001))
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); b.bind(("203.0.113.1", 40007))
for i in range(2):
    a.sendto(b"one-%d" % i, ("198.51.100.2", 5000)); b.sendto(b"two-%d" % i, ("203.0.113.2", 5002))'
	finish
	check_eq "two devices: each frame on its device's interface" \
		"$(tfields "$T_TMP/two.pcapng" udp.payload frame.interface_name | while read -r p d; do echo "$d $(echo "$p" | xxd -r -p)"; done | sort | tr '\n' ';')" \
		"$VB one-0;$VB one-1;${VB}2 two-0;${VB}2 two-1;"
	check_eq "two devices: -j lists both" "$(json 'sorted(x["dev"] for x in d["devices"])' <"$T_TMP/two.out")" "['$VB', '${VB}2']"
fi
# One of the two detached under a running capture: it says so at once,
# naming the device, and goes on with the other.
if start twogone capture cap -w "$T_TMP/twogone.pcapng" --duration 20; then
	check "detach the second device" "$FB" -n "$NSB" detach "${VB}2"
	gone_said() { grep -q "${VB}2.*capture there ended" "$T_TMP/twogone.err"; }
	t_wait_until 20 gone_said
	check_eq "a device detached under the capture: a note names it" \
		"$(grep -c "program on ${VB}2 (id [0-9]*) was detached: capture there ended" "$T_TMP/twogone.err")" 1
	D=$(dropped)
	send 2 d4
	seen "$D" 2
	kill -INT "$CAP"
	finish
	check_eq "... the capture goes on with the other device" \
		"$?:$(payloads "$T_TMP/twogone.pcapng" | tr '\n' ' ')" "0:d4-0 d4-1 "
fi

# 8. A rule with a lifetime (the data path decides it from the rule's
# generation): its frames' comments say so, a permanent rule's do not.
ip -n "$NSA" addr add 203.0.113.8/32 dev "$VA"
check "a source rule with a lifetime" "$FB" add cap src 203.0.113.8 --ttl 10m
if start life -j capture cap -w "$T_TMP/life.pcapng" --count 4 --duration 20; then
	$INA python3 -c 'import socket
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind(("203.0.113.7", 40005))
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); b.bind(("203.0.113.8", 40008))
for i in range(2):
    a.sendto(b"perm-%d" % i, ("198.51.100.2", 5000)); b.sendto(b"life-%d" % i, ("198.51.100.2", 5000))'
	finish
	check_eq "lifetime: the comment says which rules have one" \
		"$(tfields "$T_TMP/life.pcapng" udp.payload frame.comment | while IFS=$'\t' read -r c p; do echo "$(echo "$p" | xxd -r -p | cut -d- -f1) $c"; done | sort -u | tr '\n' ';')" \
		"life flowbloom: verdict=drop rule=src lifetime=yes;perm flowbloom: verdict=drop rule=src;"
fi

# 9. Usage and errors.
code() { "$@" >/dev/null 2>&1; echo $?; }
check_eq "no -w: usage error" "$(code "$FB" -n "$NSB" capture cap)" 2
check_eq "--sample 0: usage error" "$(code "$FB" -n "$NSB" capture cap -w x --sample 0)" 2
check_eq "--snaplen 5000: usage error" "$(code "$FB" -n "$NSB" capture cap -w x --snaplen 5000)" 2
check_eq "--buffer 1000: usage error" "$(code "$FB" -n "$NSB" capture cap -w x --buffer 1000)" 2
check_eq "--verdict maybe: usage error" "$(code "$FB" -n "$NSB" capture cap -w x --verdict maybe)" 2
check_eq "-j -w -: usage error" "$(code "$FB" -n "$NSB" -j capture cap -w -)" 2
check_fails "a filter attached nowhere" "$FB" capture cap -w "$T_TMP/x.pcapng"
check_fails "--dev it is not attached to" "$FB" -n "$NSB" capture cap -w "$T_TMP/x.pcapng" --dev lo
check_fails "no such filter" "$FB" -n "$NSB" capture nosuch -w "$T_TMP/x.pcapng"
check_eq "errors leave no file" "$(ls -A "$T_TMP" | grep -c '^x\|^\.x')" 0
check "detach" "$FB" -n "$NSB" detach "$VB"
t_finish
