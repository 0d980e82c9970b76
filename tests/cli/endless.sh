#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Input without end: `yes ADDR | flowbloom load NAME -`, a download that
# streams forever, a list another process keeps appending to. Each verb
# that holds a list (load, load --replace, apply, add -f, del -f) is
# refused in bounded memory, naming FILE:LINE, the filter left as it was:
# past the most different rules the filter can hold (rules/capacity.h;
# guard --never: past FB_NEVER_MAX, before the guard starts), or, input
# that only repeats itself, at the 1 GiB bound of a pipe; a regular file
# that grows while it is read, where it passes the size it had. Every
# command runs under `ulimit -v` (MEM KiB of address space) and `timeout`:
# without the bounds each ran out of memory there (or never ended)
# instead.
source "$(dirname "$0")/../lib/lib.sh"
t_begin endless
GROWER=
cleanup() { [ -n "$GROWER" ] && kill "$GROWER" 2>/dev/null; }
t_traps

MEM=600000
# endless: distinct IPv6 addresses of 2001:db8::/32, without end.
endless() { awk 'BEGIN { for (i = 0;; i++) printf "2001:db8::%x:%x\n", int(i / 65536), i % 65536 }'; }
export -f endless
# bounded LABEL PATTERN CMD: CMD (a shell line) exits 1 with one line
# matching PATTERN, within MEM KiB and 120 s.
bounded() {
	t_refused 1 "$1" "$2" bash -c "ulimit -v $MEM; $3"
}
flows() { "$FB" -j info "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["flows"])'; }

check "create a filter of 2 Mbit" "$FB" create small --bits 4096 --hashes 2
check "create a counting one" "$FB" create cnt --capacity 1000 --fp-rate 0.001 --counting
check "something in it" "$FB" add small src 198.51.100.7

# Past the filter's bits: more rules than it could usefully hold.
bounded "load - of distinct addresses without end" \
	"<stdin>:[0-9]*: more than 2064384 different rules (one per bit of the filter" \
	"endless | timeout 120 '$FB' load small -"
bounded "add -f - of distinct addresses without end" \
	"<stdin>:[0-9]*: more than 2064384 different flows (one per bit" \
	"endless | timeout 120 '$FB' add small -f -"
bounded "del -f - without end (a counting filter)" \
	"<stdin>:[0-9]*: more than [0-9]* different flows (one per bit" \
	"endless | timeout 120 '$FB' del cnt -f -"
check_eq "the filter as it was" "$(flows small)" 1

# One address again and again: taken once, so in bounded memory until the
# pipe's bound (load --replace of a filter sized by rate may grow it up to
# the largest filter: hundreds of millions of rules).
bounded "yes ADDR | load --replace -" "<stdin>:[0-9]*: more than 1024 MiB from a pipe" \
	"yes 203.0.113.1 | timeout 120 '$FB' load cnt - --replace"
bounded "yes ADDR | add -f -" "<stdin>:[0-9]*: more than 1024 MiB from a pipe" \
	"yes 203.0.113.1 | timeout 120 '$FB' add small -f -"
check_eq "the filter as it was" "$(flows small)" 1

# apply: the bound of the filter the file describes.
printf 'bits = 4096\nhashes = 2\nload = /dev/stdin\n' >"$T_TMP/ap.conf"
bounded "apply --check of a list without end" \
	"/dev/stdin:[0-9]*: more than 2064384 different rules" \
	"endless | timeout 120 '$FB' apply --check '$T_TMP/ap.conf'"

# A regular file another process keeps appending to, faster than it is
# read: refused where the read passes the size the file had.
echo 198.51.100.9 >"$T_TMP/grow.txt"
yes 203.0.113.9 >>"$T_TMP/grow.txt" &
GROWER=$!
t_wait_until 10 bash -c "[ \$(stat -c %s '$T_TMP/grow.txt') -gt 10000000 ]"
bounded "load of a file being appended to" "grow.txt:[0-9]*: changed while it was read (grew past" \
	"timeout 120 '$FB' load small '$T_TMP/grow.txt'"
bounded "add -f of a file being appended to" "grow.txt:[0-9]*: changed while it was read (grew past" \
	"timeout 120 '$FB' add small -f '$T_TMP/grow.txt'"
kill "$GROWER"
wait "$GROWER" 2>/dev/null
GROWER=
check_eq "the filter as it was" "$(flows small)" 1

# guard --never: a list of whom to protect, read before the guard starts.
# Past 65536 different entries refused; one address again and again taken
# once, up to the pipe's bound (held whole before: out of memory).
NV="--into small --pps 1 --ttl 10 --never"
bounded "guard --never - of distinct addresses without end" \
	"<stdin>:[0-9]*: more than 65536 different addresses and prefixes" \
	"endless | timeout 120 '$FB' guard small $NV -"
bounded "yes ADDR | guard --never -" "<stdin>:[0-9]*: more than 1024 MiB from a pipe" \
	"yes 198.51.100.1 | timeout 120 '$FB' guard small $NV -"
endless | head -n 65537 >"$T_TMP/never.txt"
bounded "guard --never of 65537 different addresses" \
	"never.txt:65537: more than 65536 different addresses and prefixes" \
	"timeout 120 '$FB' guard small $NV '$T_TMP/never.txt'"
# The bound is on different entries: 65536 of them, each three times, are
# taken (guard goes on to the filter, which has no sketch).
endless | head -n 65536 >"$T_TMP/never.txt"
cat "$T_TMP/never.txt" "$T_TMP/never.txt" "$T_TMP/never.txt" >"$T_TMP/never3.txt"
bounded "guard --never of 65536 addresses three times: read" "'small' has no traffic sketch" \
	"timeout 120 '$FB' guard small $NV '$T_TMP/never3.txt'"

# A list that repeats itself below the bound still loads, once each.
for i in 1 2 3; do seq -f '2001:db8::1:%g' 1 2000; done >"$T_TMP/rep.txt"
check "a list naming its rules three times" "$FB" load cnt "$T_TMP/rep.txt"
check_eq "  ... each once" "$(flows cnt)" 2000
t_finish
