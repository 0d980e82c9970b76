#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The CLI facing bad input: every mistake gives one clear line on stderr,
# a non-zero exit, and leaves the filter exactly as it was (its bits are
# compared before and after through `info -j`).
source "$(dirname "$0")/../lib/lib.sh"
t_begin cli
t_traps

state() { "$FB" -j info f1 | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["flows"], d["bits_set"], d["kinds"])'; }

check "create f1" "$FB" create f1 --capacity 1000 --fp-rate 0.01
check "add a flow" "$FB" add f1 udp 198.51.100.1:53 203.0.113.7:4000
before=$(state)

# Usage errors exit 2; failures exit 1.
"$FB" frobnicate >/dev/null 2>&1; check_eq "unknown verb exits 2" $? 2
"$FB" --frob list >/dev/null 2>&1; check_eq "unknown global option exits 2" $? 2
"$FB" create f9 --capacity 10 --fp-rate 0.1 --frob >/dev/null 2>&1; check_eq "unknown verb option exits 2" $? 2
check_fails "unknown verb" "$FB" frobnicate
# Output that never arrived is a failure, said on stderr: a cron job's
# `flowbloom -j info f1 >state.json` on a full disk, or run with stdout
# closed, must not exit 0 with the file empty or cut short.
for v in "list" "info f1" "-j info f1" "help" "-V"; do
	"$FB" $v >/dev/full 2>"$T_TMP/err"
	check_eq "$v >/dev/full: exit 1, the write error said" \
		"$? $(grep -c '^flowbloom: write error on stdout' "$T_TMP/err")" "1 1"
done
"$FB" list >&- 2>"$T_TMP/err"
check_eq "list with stdout closed: exit 1, the write error said" \
	"$? $(grep -c '^flowbloom: write error on stdout' "$T_TMP/err")" "1 1"
# A standard descriptor the caller closed is never one of flowbloom's own
# files: bgp with stdin closed read its state directory as its input
# ("reading stdin: Is a directory"), and metrics --textfile with stdout
# and stderr closed wrote the file through descriptor 2, where errors go.
# A closed stdin still reads as one, a closed stdout still writes as one.
# The grammar is the synopsis's whatever the environment: with
# POSIXLY_CORRECT set, getopt stopped at NAME and `create NAME --capacity
# N` was a usage error (unexpected '--capacity').
check "POSIXLY_CORRECT set: create NAME --capacity N --fp-rate P" \
	env POSIXLY_CORRECT=1 "$FB" create cb --capacity 100 --fp-rate 0.01 --counting
"$FB" create cb --capacity 100 --fp-rate 0.01 --counting >/dev/null 2>&1
"$FB" bgp cb --state "$T_TMP/cb.bgp" <&- 2>"$T_TMP/err"
check_eq "bgp with stdin closed: exit 1, stdin named as closed" \
	"$? $(grep -c 'reading stdin: Bad file descriptor' "$T_TMP/err")" "1 1"
if command -v strace >/dev/null; then
	# (but its libraries, which the loader opens and closes first)
	strace -qq -o "$T_TMP/trace" -e trace=openat "$FB" metrics cb --textfile "$T_TMP/m.prom" >&- 2>&-
	check_eq "metrics --textfile with stdout and stderr closed: done, through none of 0-2" \
		"$? $(grep -v '\.so[.0-9]*"\|/ld\.so\.cache"\|"/dev/null"' "$T_TMP/trace" | grep -c ' = [012]$')" "0 0"
else
	skip "metrics with stdout and stderr closed: strace is not installed"
fi
"$FB" destroy cb >/dev/null
"$FB" -j info nosuch >/dev/full 2>"$T_TMP/err"
check_eq "a failure to /dev/full: its exit 1 and its one line, nothing added" \
	"$? $(wc -l <"$T_TMP/err")" "1 1"
# A loop ends on a write error rather than polling into nothing forever.
timeout 20 "$FB" stats f1 --watch 0.1 >/dev/full 2>"$T_TMP/err"
check_eq "stats --watch >/dev/full: ends, exit 1, the write error said" \
	"$? $(grep -c '^flowbloom: write error on stdout' "$T_TMP/err")" "1 1"
# No abbreviations (detach and destroy share a start), but the one verb a
# word begins, or that begins it, is named; two candidates, none.
t_refused 2 "an abbreviated verb: the verb named" "unknown verb 'lis' (did you mean list? see flowbloom help)" "$FB" lis
t_refused 2 "a verb with a tail: the verb named" "unknown verb 'attached' (did you mean attach? see flowbloom help)" "$FB" attached f1
t_refused 2 "stat: stats or status, no guess" "unknown verb 'stat' (see flowbloom help)" "$FB" stat f1
t_refused 2 "help of an abbreviated verb: the verb named" "unknown verb 'inf' (did you mean info? see flowbloom help)" "$FB" help inf
check_fails "create: existing name" "$FB" create f1 --capacity 10 --fp-rate 0.1
check_fails "create: capacity 0" "$FB" create f2 --capacity 0 --fp-rate 0.1
check_fails "create: capacity not a number" "$FB" create f2 --capacity 12x --fp-rate 0.1
check_fails "create: negative capacity" "$FB" create f2 --capacity -5 --fp-rate 0.1
check_fails "create: fp-rate 0" "$FB" create f2 --capacity 10 --fp-rate 0
check_fails "create: fp-rate 1" "$FB" create f2 --capacity 10 --fp-rate 1
check_fails "create: fp-rate 1.5" "$FB" create f2 --capacity 10 --fp-rate 1.5
check_fails "create: fp-rate nan" "$FB" create f2 --capacity 10 --fp-rate nan
check_fails "create: capacity without rate" "$FB" create f2 --capacity 10
check_fails "create: both geometries" "$FB" create f2 --capacity 10 --fp-rate 0.1 --bits 64 --hashes 2
check_fails "create: hashes 0" "$FB" create f2 --bits 1024 --hashes 0
check_fails "create: hashes 17" "$FB" create f2 --bits 1024 --hashes 17
check_fails "create: too big" "$FB" create f2 --capacity 100000000000 --fp-rate 0.0001
check_fails "create: bad layout" "$FB" create f2 --capacity 10 --fp-rate 0.1 --layout fancy
t_refused 2 "create: bad name (slash), a usage error" "bad filter name 'a/b'" "$FB" create a/b --capacity 10 --fp-rate 0.1
t_refused 2 "create: bad name (dot), a usage error" "bad filter name 'a.b'" "$FB" create a.b --capacity 10 --fp-rate 0.1
check_eq "no filter f2 was left behind" "$("$FB" list | grep -c '^f2 ')" 0

check_fails "unknown filter: info" "$FB" info nosuch
check_fails "unknown filter: add" "$FB" add nosuch udp 198.51.100.1:1 203.0.113.1:2
check_fails "unknown filter: destroy" "$FB" destroy nosuch
check_fails "add: port 65536" "$FB" add f1 udp 198.51.100.1:65536 203.0.113.7:4000
check_fails "add: bad address" "$FB" add f1 udp 198.51.100.300:1 203.0.113.7:4000
# Decimal without a leading zero: iptables reads port 053 as octal 43,
# iproute2 /024 as /20; refused rather than guessed.
check_fails "add: port with a leading zero (053)" "$FB" add f1 udp 198.51.100.1:053 203.0.113.7:4000
check_fails "add: dport with a leading zero" "$FB" add f1 udp dst 203.0.113.0/24 dport 053
check_fails "add: port range with a leading zero" "$FB" add f1 tcp dport 1024-02047
# Common slips get a message that says what to write.
check_fails "add: a bare address" "$FB" add f1 203.0.113.1
grep -q "argument 1: '203.0.113.1' is an address, not a protocol: write src 203.0.113.1 or dst 203.0.113.1" "$T_TMP/err" &&
	pass "... says to write src or dst" || fail "... said '$(cat "$T_TMP/err")'"
check_fails "add: /33" "$FB" add f1 src 203.0.113.0/33
grep -q "bad prefix length in '203.0.113.0/33' (0 to 32 for IPv4" "$T_TMP/err" &&
	pass "... states the range" || fail "... said '$(cat "$T_TMP/err")'"
check_fails "add: /129" "$FB" add f1 dst 2001:db8::/129
grep -q "(0 to 128 for IPv6" "$T_TMP/err" && pass "... the IPv6 range" || fail "... said '$(cat "$T_TMP/err")'"
check_fails "add: protocol number with a leading zero" "$FB" add f1 proto 017 dst 203.0.113.7
check_fails "add: prefix length with a leading zero (/024)" "$FB" add f1 src 198.51.100.0/024
"$FB" add f1 src 198.51.100.0/024 2>"$T_TMP/err"
check "... and the error says why" grep -q "bad prefix length in '198.51.100.0/024' (0 to 32 for IPv4, decimal without a leading zero)" "$T_TMP/err"
check_fails "add: unknown protocol" "$FB" add f1 frob 198.51.100.1:1 203.0.113.7:4000
check_fails "add: tcp without ports" "$FB" add f1 tcp 198.51.100.1 203.0.113.7
check_fails "add: second FLOW bad" "$FB" add f1 udp 198.51.100.9:1 203.0.113.7:2 src nonsense
check_fails "add: no FLOW" "$FB" add f1
check_fails "add: missing file" "$FB" add f1 -f "$T_TMP/nope"
# -f twice before NAME: the first file's flows used to be dropped silently.
printf 'src 198.51.100.71\n' >"$T_TMP/f1.txt"
printf 'src 198.51.100.72\n' >"$T_TMP/f2.txt"
"$FB" add -f "$T_TMP/f1.txt" -f "$T_TMP/f2.txt" f1 >/dev/null 2>&1
check_eq "add: -f twice is a usage error" $? 2
"$FB" del --file="$T_TMP/f1.txt" -f "$T_TMP/f2.txt" f1 >/dev/null 2>&1
check_eq "del: -f twice is a usage error" $? 2
check_fails "attach: missing device" "$FB" attach f1 nosuchdev0
# An argument the verb cannot take is a usage error, as query --packet's;
# the same in a file names FILE:LINE, exit 1 (docs/cli.md, Exit status).
printf 'src 198.51.100.0/24\n' >"$T_TMP/addr.txt"
t_refused 2 "traffic: a prefix argument, a usage error" \
	"argument 1: the sketch counts 5-tuples" "$FB" traffic f1 src 198.51.100.0/24
t_refused 1 "traffic: a prefix line, FILE:LINE" \
	"addr.txt:1: the sketch counts 5-tuples" "$FB" traffic f1 -f "$T_TMP/addr.txt"
check_fails "detach: missing device" "$FB" detach nosuchdev0
# The sketch's limits (monitoring.md: eps >= 2.6e-6, delta >= e^-8) are the
# option's range: a value past them is a usage error stating it, before any
# device is looked at (it was accepted by the option, then refused by the
# sizing with exit 1).
t_refused 2 "attach --epsilon 0.000001: usage error, the real range" \
	"bad value '0.000001' for --epsilon (want 2.59236e-06 to 0.5)" "$FB" attach f1 nosuchdev0 --epsilon 0.000001
t_refused 2 "attach --delta 0.0001: usage error, the real range" \
	"bad value '0.0001' for --delta (want 0.000335463 to 0.5)" "$FB" attach f1 nosuchdev0 --delta 0.0001
t_refused 1 "attach --epsilon 0.0000026 --delta 0.00034: in range (the device is what fails)" \
	"no device 'nosuchdev0'" "$FB" attach f1 nosuchdev0 --epsilon 0.0000026 --delta 0.00034

# Every time takes a unit as --ttl does (a bare number: seconds), out of
# its range a usage error stating it in those units; in range, the value
# is taken and what fails is what comes next.
t_refused 2 "attach --age 1y: a duration's units" \
	"bad duration '1y' for --age (want a number with ms, s, m, h or d, from 100ms to 7d)" "$FB" attach f1 nosuchdev0 --age 1y
t_refused 1 "attach --age 2m: taken (the device is what fails)" "no device 'nosuchdev0'" "$FB" attach f1 nosuchdev0 --age 2m
t_refused 2 "top --interval 2q: usage error" "bad duration '2q' for --interval" "$FB" top f1 --interval 2q
t_refused 1 "top --interval 500ms: taken (no sketch is what fails)" "has no traffic sketch" "$FB" top f1 --interval 500ms
t_refused 2 "capture --duration 0: usage error, the range" "from 1ms to 365d" "$FB" capture f1 -w "$T_TMP/c.pcapng" --duration 0
t_refused 1 "capture --duration 300ms: taken (not attached is what fails)" "is not attached" \
	"$FB" capture f1 -w "$T_TMP/c.pcapng" --duration 300ms
t_refused 2 "stats --watch 3x: usage error" "bad duration '3x' for --watch (want a number with ms, s, m, h or d, from 100ms to 1d)" \
	"$FB" stats f1 --watch 3x
t_refused 1 "ipfix --interval 1m --idle-timeout 500ms: taken (no monitoring is what fails)" "has no monitoring" \
	"$FB" ipfix f1 --collector 198.51.100.10:4739 --interval 1m --idle-timeout 500ms
printf 'collector = 198.51.100.10:4739\nactive-timeout = 5x\n' >"$T_TMP/ipfix.conf"
t_refused 2 "ipfix --config: a bad time names FILE:LINE" \
	"$T_TMP/ipfix.conf:2: bad duration '5x' for --active-timeout" "$FB" ipfix f1 --config "$T_TMP/ipfix.conf"
# stats --watch 150ms polls every 150 ms: 6 lines, stopped then (SIGINT),
# their times a median 0.5 s apart at most (every second, the default,
# would be 1 s apart). By its own times, not lines counted in a fixed 2 s
# that a loaded machine spends partly starting it.
"$FB" -j stats f1 --watch 150ms >"$T_TMP/watch.json" &
WP=$!
t_wait_until 30 eval '[ "$(grep -c "\"filter\"" "$T_TMP/watch.json")" -ge 6 ]'
kill -INT "$WP"
wait "$WP"
n=$(grep -c '"filter"' "$T_TMP/watch.json")
gap=$("$PY" -c '
import datetime, json, sys
t = [datetime.datetime.strptime(json.loads(l)["time"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() for l in open(sys.argv[1])]
g = sorted(b - a for a, b in zip(t, t[1:]))
print("%.3f" % g[len(g) // 2] if g else "none")' "$T_TMP/watch.json" 2>/dev/null)
check "stats --watch 150ms: polls every 150 ms ($n lines, a median ${gap} s apart)" \
	eval '[ "$n" -ge 6 ] && [ "$gap" != none ] && [ "${gap%.*}" = 0 ] && [ "${gap#*.}" -lt 500 ]'
# Its "time", as flows' and guard's, to the microsecond: at 150 ms a
# poll, whole seconds gave several lines the same time.
check_eq "stats -j --watch: each time to the microsecond, each another" "$("$PY" -c '
import json, re, sys
t = [json.loads(l)["time"] for l in open(sys.argv[1])]
print(sum(bool(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", x)) for x in t), len(set(t)))
' "$T_TMP/watch.json")" "$n $n"

# A file with one bad line is rejected whole, naming file:line.
for where in first middle last; do
	f=$T_TMP/bad-$where.txt
	python3 - "$f" "$where" <<'PY'
import sys
path, where = sys.argv[1], sys.argv[2]
lines = ["udp 198.51.100.%d:%d 203.0.113.%d:53" % (i % 250, 1024 + i, i % 200) for i in range(20000)]
bad = {"first": 0, "middle": 10000, "last": 19999}[where]
lines[bad] = "udp 198.51.100.1:99999 203.0.113.1:53"
open(path, "w").write("# generated\n" + "\n".join(lines) + "\n")
PY
	line=$(( $(grep -n 99999 "$f" | cut -d: -f1) ))
	"$FB" add f1 -f "$f" >/dev/null 2>"$T_TMP/err"
	check_eq "bad $where line: exit 1" $? 1
	check_eq "bad $where line: error names file:line" \
		"$(grep -c "$f:$line:" "$T_TMP/err")" 1
done
printf 'udp 198.51.100.1:1 203.0.113.1:2\nbogus\n' | "$FB" add f1 -f - >/dev/null 2>"$T_TMP/err"
check_eq "stdin bad line named <stdin>:2" "$(grep -c '<stdin>:2:' "$T_TMP/err")" 1
check_eq "filter unchanged after every rejected input" "$(state)" "$before"

# JSON mode: errors as {"error": ...} on stdout too.
out=$("$FB" -j info nosuch 2>/dev/null)
check_eq "JSON error object" "$(echo "$out" | python3 -c 'import json,sys; print("error" in json.load(sys.stdin))')" True

# bpffs not mounted where the root points.
FLOWBLOOM_ROOT=/tmp/not-bpffs/flowbloom check_fails "bpffs not mounted" "$FB" list
FLOWBLOOM_ROOT=/tmp/not-bpffs/flowbloom "$FB" list 2>&1 | grep -q "bpffs is not mounted" &&
	pass "bpffs message" || fail "bpffs message"

# Good input still works: files with comments and blank lines, stdin.
printf '# comment\n\nudp 198.51.100.2:1 203.0.113.2:2  # trailing\n\tsrc 2001:db8::7\r\n' >"$T_TMP/good.txt"
check "add from a file with comments" "$FB" add f1 -f "$T_TMP/good.txt"
check "add from stdin" bash -c "echo 'dst 203.0.113.99' | '$FB' add f1 -f -"
out=$("$FB" query f1 udp 198.51.100.2:1 203.0.113.2:2 src 2001:db8::7 dst 203.0.113.99 udp 198.51.100.2:1 203.0.113.2:3 | tail -1)
check_eq "query summary" "$out" "3 of 4 maybe"
check_eq "help per verb" "$("$FB" add help | head -1)" "Usage: flowbloom add NAME FLOW... [--ttl DURATION] | add NAME -f FILE [--ttl DURATION]"
# README's synopsis is `flowbloom help`, word for word.
readme=$(dirname "$FB")/../README.md
check_eq "README synopsis equals flowbloom help" \
	"$(awk '/^## Use$/ { u = 1; next } u && /^```$/ { if (c++) exit; next } u && c' "$readme")" \
	"$("$FB" help)"
# The hash by default: NH for block-lists and monitoring, SipHash-1-3 (a
# PRF) for allow-lists; nh-v1 (old filters only) is not offered.
hash_of() { "$FB" -j info "$1" | sed -n 's/.*"hash": *"\([^"]*\)".*/\1/p' | head -1; }
"$FB" create hd --capacity 100 --fp-rate 0.01 >/dev/null
"$FB" create hm --capacity 100 --fp-rate 0.01 --action monitor >/dev/null
"$FB" create ha --capacity 100 --fp-rate 0.01 --action allow >/dev/null
"$FB" create hs --capacity 100 --fp-rate 0.01 --hash siphash13 >/dev/null
check_eq "default hash, drop" "$(hash_of hd)" nh
check_eq "default hash, monitor" "$(hash_of hm)" nh
check_eq "default hash, allow" "$(hash_of ha)" siphash13
check_eq "--hash siphash13" "$(hash_of hs)" siphash13
check_fails "create: --hash nh-v1 is not offered" "$FB" create hv --capacity 100 --fp-rate 0.01 --hash nh-v1
for f in hd hm ha hs; do "$FB" destroy "$f" >/dev/null; done
# --version: the build (git describe of the tree it was built from, as the
# build recorded it: a commit may have come since), the libbpf it runs
# with, the formats it reads; nothing may follow it.
top=$(cd "$(dirname "$FB")/.." && pwd)
want=$(cat "$(dirname "$FB")/version" 2>/dev/null)
check_eq "--version names the build" "$("$FB" --version | head -1)" "flowbloom $want"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$top" rev-parse -q --verify "${want%-dirty}^{commit}" >/dev/null &&
		pass "... a commit of this repository ($want)" || fail "... '$want' is no commit here"
fi
check_eq "-V: three lines" "$("$FB" -V | wc -l)" 3
"$FB" -V | sed -n 2p | grep -qE '^libbpf v[0-9]+\.[0-9]+' && pass "-V names libbpf" || fail "-V: $("$FB" -V | sed -n 2p)"
check_eq "-j --version is one object" "$("$FB" -j --version | t_json '" ".join(sorted(d)) + " " + d["version"]')" \
	"export_format libbpf pinned_layout version $want"
"$FB" -V list >/dev/null 2>"$T_TMP/err"
check_eq "-V VERB: a usage error" "$?:$(cat "$T_TMP/err")" "2:flowbloom: -V takes nothing after it"
# A range written with blanks ("A - B") is named as such, not as an
# address where a protocol belongs; two addresses on a line say one a line.
printf '203.0.113.20 - 203.0.113.30\n' >"$T_TMP/range.txt"
b2=$(state)
t_refused 1 "load: a range with blanks, said so" \
	"range.txt:1: a range is written without blanks: '203.0.113.20-203.0.113.30'" "$FB" load f1 "$T_TMP/range.txt"
printf '203.0.113.20 203.0.113.30\n' >"$T_TMP/two.txt"
t_refused 1 "load: two addresses on a line" "two.txt:1: .*a file, of load or -f, also takes bare addresses, one a line" \
	"$FB" load f1 "$T_TMP/two.txt"
check_eq "... the filter as it was" "$(state)" "$b2"
# load --replace of an input without rules (a download that failed into an
# empty file, a list of comments only) is refused, the filter left as it
# was: a cron job's refresh must not wipe a block-list, nor empty an
# allow-list (every packet dropped). --allow-empty empties it, said on
# stderr; a load without --replace adds nothing; a list with rules says
# nothing on stderr.
"$FB" create fe --capacity 100 --fp-rate 0.01 >/dev/null
"$FB" add fe src 198.51.100.5 >/dev/null
"$FB" add fe src 198.51.100.6 --ttl 1h >/dev/null
fe() { "$FB" -j info fe | t_json 'd["flows"], d["bits_set"]'; }
fe0=$(fe)
printf '# FireHOL header only\n\n; a comment\n' >"$T_TMP/comments.txt"
t_refused 1 "load --replace of an empty file: refused" \
	"^flowbloom: /dev/null holds no rules: nothing replaced (--allow-empty empties the filter)$" \
	"$FB" load fe /dev/null --replace
check_eq "... the filter as it was" "$(fe)" "$fe0"
t_refused 1 "load --replace of a list of comments: refused" \
	"comments.txt holds no rules: nothing replaced (--allow-empty" "$FB" load fe "$T_TMP/comments.txt" --replace
t_refused 1 "load --replace of two lists without rules: both named" \
	"/dev/null, .*comments.txt hold no rules: nothing replaced" \
	"$FB" load fe /dev/null "$T_TMP/comments.txt" --replace
t_refused 1 "load --replace of empty stdin: refused" "<stdin> holds no rules" \
	"$FB" load fe - --replace </dev/null
t_refused 1 "load --replace --ttl of an empty file: refused, the rules with a lifetime kept" \
	"/dev/null holds no rules: nothing replaced (--allow-empty takes the rules with a lifetime away)" \
	"$FB" load fe /dev/null --replace --ttl 1h
check_eq "... the filter as it was" "$(fe)" "$fe0"
"$FB" -j load fe /dev/null --replace >"$T_TMP/out" 2>"$T_TMP/err"
check_eq "-j: exit 1, the refusal as a JSON error" "$?:$(t_json 'd["error"]' "$T_TMP/out")" \
	"1:/dev/null holds no rules: nothing replaced (--allow-empty empties the filter)"
t_refused 2 "--allow-empty without --replace: a usage error" "--allow-empty goes with --replace" \
	"$FB" load fe /dev/null --allow-empty
t_refused 1 "... of no filter: the filter named first" "fe9" "$FB" load fe9 /dev/null --replace
"$FB" load fe /dev/null >/dev/null 2>"$T_TMP/err"
check_eq "load (no --replace) of an empty file: exit 0, nothing on stderr" "$?:$(cat "$T_TMP/err")" "0:"
check_eq "... the filter as it was" "$(fe)" "$fe0"
"$FB" load fe /dev/null --replace --allow-empty >/dev/null 2>"$T_TMP/err"
check_eq "load --replace --allow-empty of an empty input: exit 0, a warning" "$?:$(cat "$T_TMP/err")" \
	"0:flowbloom: warning: the input held no rules: 'fe' now has no permanent rules"
check_eq "... the rule with a lifetime kept" "$("$FB" query fe src 198.51.100.5 src 198.51.100.6 | tail -1)" \
	"1 of 2 maybe"
printf 'src 198.51.100.5\n' >"$T_TMP/one.txt"
"$FB" load fe "$T_TMP/one.txt" --replace >/dev/null 2>"$T_TMP/err"
check_eq "load --replace of a list: nothing on stderr" "$?:$(cat "$T_TMP/err")" "0:"
"$FB" load fe "$T_TMP/comments.txt" "$T_TMP/one.txt" --replace >/dev/null 2>"$T_TMP/err"
check_eq "load --replace of an empty list beside one with rules: done" "$?:$(cat "$T_TMP/err")" "0:"
"$FB" destroy fe >/dev/null
# A 5th prefix length refused: the lengths the filter would have listed
# shortest first, as info lists them (they came in the table's order).
"$FB" create fl --capacity 100 --fp-rate 0.01 >/dev/null
"$FB" add fl src 203.0.113.0/25 src 203.0.113.0/26 src 203.0.113.0/27 >/dev/null
printf 'src 203.0.113.0/24\nsrc 203.0.113.0/28\n' >"$T_TMP/more.txt"
t_refused 1 "add -f: a 5th length, the lengths listed shortest first" \
	"more.txt:2: 'src 203.0.113.0/28': it would need a 5th IPv4 source prefix length: .* and would have: /24 /25 /26 /27 (" \
	"$FB" add fl -f "$T_TMP/more.txt"
"$FB" destroy fl >/dev/null
# add's rate: in millions for a list, as it is for a few flows (one flow
# read "(0.00 M flows/s)").
"$FB" add f1 src 198.51.100.77 >"$T_TMP/o" 2>&1
grep -qE '^added 1 flow to f1 in [0-9.]+ ms \([1-9][0-9]* flows/s\)$' "$T_TMP/o" &&
	pass "add of one flow: its rate in flows/s" || fail "add of one flow: $(cat "$T_TMP/o")"
# list says what each filter does: its action, counters, exact sets.
"$FB" create lc --capacity 100 --fp-rate 0.01 --counting --action monitor >/dev/null
"$FB" create lx --capacity 100 --fp-rate 0.01 --confirm exact --action allow >/dev/null
check_eq "list: action, counting, confirm" "$("$FB" list | grep -E '^l[cx] ' | sed 's/  */ /g')" \
	"lc blocked m=2064384 k=4 flows=0 action=monitor counting
lx blocked m=2064384 k=4 flows=0 action=allow confirm=exact"
check_eq "list -j: the same" "$("$FB" -j list | t_json '[(x["name"], x["action"], x["counter_bits"], x["confirm_exact"]) for x in d["filters"] if x["name"] in ("lc", "lx")]')" \
	"[('lc', 'monitor', 4, False), ('lx', 'allow', 0, True)]"
"$FB" destroy lc >/dev/null
"$FB" destroy lx >/dev/null
# --compact: the bits the size needs in whole pages (k = 4 here); the
# filter answers for what it holds; `load --replace` with more rules than
# its capacity re-sizes it compact again (more pages, still one chunk);
# export and import keep it.
"$FB" create cp --capacity 100 --fp-rate 0.01 --compact >"$T_TMP/o"
check_eq "create --compact: m in whole pages, k = 4, the chunk's bytes" "$(head -1 "$T_TMP/o")" \
	"created cp: m=32768 bits, k=4, 262144 bytes"
check_eq "info: compact" "$("$FB" info cp | sed -n 3p)" \
	"  m=32768 bits (64 blocks of 512), memory 262144 bytes, compact (bits in whole pages)"
for i in $(seq 1 3000); do echo "src 203.0.$((i / 250)).$((i % 250))"; done >"$T_TMP/3k.txt"
"$FB" load cp "$T_TMP/3k.txt" --replace >/dev/null
check_eq "load --replace of 3000 rules: compact, re-sized in whole pages for them" \
	"$("$FB" -j info cp | t_json 'd["compact"], d["blocks"], d["hashes"], d["flows"]')" "(True, 192, 4, 3000)"
check_eq "... every rule answers maybe" \
	"$("$FB" query cp src 203.0.0.1 src 203.0.11.249 | tail -1)" "2 of 2 maybe"
"$FB" export cp "$T_TMP/cp.fbx" >/dev/null && "$FB" import "$T_TMP/cp.fbx" cp2 >/dev/null
check_eq "export, import: still compact" "$("$FB" -j info cp2 | t_json 'd["compact"], d["blocks"]')" "(True, 192)"
"$FB" destroy cp >/dev/null
"$FB" destroy cp2 >/dev/null
# query -j names its filter, as count, traffic and query --packet do.
"$FB" -j query f1 udp 198.51.100.1:53 203.0.113.7:4000 >"$T_TMP/q.json"
check_eq "query -j: filter, results, maybe, total" \
	"$(t_json 'd["filter"], d["results"][0]["result"], d["maybe"], d["total"]' "$T_TMP/q.json")" "('f1', 'maybe', 1, 1)"
# metrics NAME NAME: a filter named twice has its series once (Prometheus
# refuses duplicate samples; promtool's lint does not see them).
check_eq "metrics f1 f1: each series once" \
	"$("$FB" metrics f1 f1 | grep -c '^flowbloom_seen_packets_total{filter="f1"} ')" 1
check_eq "metrics -j f1 f1: one sample per family" \
	"$("$FB" -j metrics f1 f1 | t_json 'set(len(m["samples"]) for m in d["metrics"])')" "{1}"
# Counters past 2^53 (a byte counter passes it in 8 days at 100 Gb/s):
# metrics and metrics -j give them digit for digit, as stats -j does. The
# cell of passed unmatched packets is set behind the CLI's back: 2^52 + 1
# packets and 6e17 + 1 bytes on each CPU.
"$FB" create big --capacity 100 --fp-rate 0.01 >/dev/null
bpftool map update pinned "$FLOWBLOOM_ROOT/big/stats" key hex 00 00 00 00 value hex $(python3 -c '
import struct
print(struct.pack("<QQ", 2**52 + 1, 6 * 10**17 + 1).hex(" "), "00 " * 16 * 135)')
"$FB" -j stats big >"$T_TMP/big.stats"
"$FB" -j metrics big >"$T_TMP/big.mj"
"$FB" metrics big >"$T_TMP/big.prom"
check_eq "metrics past 2^53: text and -j equal stats -j" "$(python3 - "$T_TMP"/big.{stats,mj,prom} <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
want = {"flowbloom_%s_%s_total" % (c, u): v[u] for c, v in st.items() if isinstance(v, dict) for u in v}
mj = {m["name"]: m["samples"][0]["value"] for m in json.load(open(sys.argv[2]))["metrics"]}
txt = {l.split("{")[0]: int(l.split()[1]) for l in open(sys.argv[3]) if l[0] != "#"}
print(want["flowbloom_seen_bytes_total"] > 2**53,
      [k for k in want if mj.get(k) != want[k] or type(mj.get(k)) is not int or txt.get(k) != want[k]])
PY
)" "True []"
"$FB" destroy big >/dev/null
# card's arguments are SRCs (filters or export files), as its synopsis says.
t_refused 2 "card: missing SRC, named as the synopsis names it" "missing SRC" "$FB" card
t_refused 2 "card: three SRCs" "at most two SRCs" "$FB" card f1 f1 f1
# apply's file name names the filter: one that cannot be a filter name is
# refused naming the file (a name over 63 characters used to exit 1 with
# nothing said at all).
mkdir -m 0755 "$T_TMP/conf"
printf 'capacity = 1000\nfp-rate = 0.01\n' >"$T_TMP/conf/x.y.conf"
long=$(printf 'a%.0s' $(seq 70))
cp "$T_TMP/conf/x.y.conf" "$T_TMP/conf/$long.conf"
t_refused 2 "apply: file name not a filter name, the file named (a usage error)" \
	"^flowbloom: $T_TMP/conf/x.y.conf: the file must be named NAME.conf, NAME the filter: bad filter name 'x.y'" \
	"$FB" apply --check "$T_TMP/conf/x.y.conf"
t_refused 2 "apply: a 70-character file name, the file named" \
	"^flowbloom: $T_TMP/conf/$long.conf: .*at most 63" "$FB" apply --check "$T_TMP/conf/$long.conf"
check "destroy f1" "$FB" destroy f1
t_end
