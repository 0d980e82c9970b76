#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# No write lost to a concurrent one: every writing verb raced against the
# others, on every filter type, and the result held against the one serial
# order the race must equal.
#
# The races are made, not hoped for. A writer opens the filter, then waits
# for its lock (an flock on the filter's bpffs directory): the suite holds
# that lock itself while the writers start, and lets go only once
# /proc/locks shows all of them queued on it; a swapping writer (`load
# --replace`, `apply`, `fold`, `merge`, `destroy`, `export`) is held
# right after it took the lock (strace delays its flock's return) until
# the others have opened the filter as it was and queued behind it. So
# every writer works on a filter array opened before the last writer
# changed it, the case where a write can land in a retired array (or a
# mapping too short for a grown one), and the serial order is known.
#
# Checked after each race: every flow added matches (`query`), every flow
# deleted is gone (`count`), `info`'s flows figure is exactly the adds
# minus the deletes, `check` is clean, nothing is left staged, every
# command exited 0 or with the documented refusal (a deleted flow deleted
# again, a filter destroyed while the command waited for its lock, a name
# another create holds), and for plain and counting filters the content
# digest equals that of a copy (same key: an export imported) given the
# same commands one after the other. Then free-running loops of writers,
# and the data path: replay (BPF_PROG_TEST_RUN of every packet) of flows
# present throughout, while adds, deletes, replaces and growth run beside
# it: not one miss.
#
# Not raced here: guard writes through the path `add --ttl` takes (raced
# here; guard itself, live, in tests/e2e/guard.sh); attach, detach and
# capture change no filter's content.
source "$(dirname "$0")/../lib/lib.sh"
t_begin concurrent
GEN="python3 $(dirname "$0")/types_gen.py"
JOBS=()
HOLDER=""
# The holder and the jobs stopped only while still this shell's children
# (t_kill): a PID waited for is the kernel's to give again.
cleanup() {
	[ -n "$HOLDER" ] && t_kill "$HOLDER"
	t_kill "${JOBS[@]}"
	wait 2>/dev/null
	t_cleanup_filters
	rm -rf "$T_TMP"
}
t_traps
command -v strace >/dev/null || t_skip_all "strace is missing (make deps installs it)"
command -v flock >/dev/null || t_skip_all "flock(1) is missing (util-linux)"

# Flow sets (types_gen.py: flow i is a distinct UDP 5-tuple): B the base,
# P its first half (present throughout), D1 and D2 parts of its second half
# (deleted), W1..W3 added, R a replacement holding all of B and more.
$GEN flows "$T_TMP/b.txt" "$T_TMP/b.pcap" 2000 0
$GEN flows "$T_TMP/p.txt" "$T_TMP/p.pcap" 1000 0
sed -n 1001,1250p "$T_TMP/b.txt" >"$T_TMP/d1.txt"
sed -n 1251,1500p "$T_TMP/b.txt" >"$T_TMP/d2.txt"
cat "$T_TMP/d1.txt" "$T_TMP/d2.txt" >"$T_TMP/d.txt"
for i in 1 2 3; do $GEN flows "$T_TMP/w$i.txt" /dev/null 1000 $((10000 + 1000 * i)); done
$GEN flows "$T_TMP/r2.txt" /dev/null 2000 20000
cat "$T_TMP/b.txt" "$T_TMP/r2.txt" >"$T_TMP/r.txt"
cat "$T_TMP/w1.txt" "$T_TMP/w2.txt" "$T_TMP/w3.txt" >"$T_TMP/w.txt"
# A scalable filter only grows past its first chunk (256 KiB) with some
# 85,000 flows: its base and writers are larger.
$GEN flows "$T_TMP/sb.txt" /dev/null 60000 100000
for i in 1 2 3; do $GEN flows "$T_TMP/sw$i.txt" /dev/null 30000 $((200000 + 30000 * i)); done
mkfifo "$T_TMP/go"

TYPES=(bloom counting cuckoo dleft scalable)
declare -A OPTS=(
	[bloom]="--capacity 20000 --fp-rate 0.001"
	[counting]="--counting --capacity 20000 --fp-rate 0.001"
	[cuckoo]="--type cuckoo --capacity 20000 --fp-rate 0.001"
	[dleft]="--type dleft --capacity 20000 --fp-rate 0.001"
	[scalable]="--grow --capacity 1000 --fp-rate 0.01"
)
deletes() { [ "$1" = counting ] || [ "$1" = cuckoo ] || [ "$1" = dleft ]; }
# del's options: a cuckoo or d-left filter without exact sets needs --force.
delopt() { [ "$1" = cuckoo ] || [ "$1" = dleft ] && echo --force; }
# Types whose content is a function of the set of commands, whatever
# their order (bits ORed, counters summed): their digest is compared.
commutes() { [ "$1" = bloom ] || [ "$1" = counting ]; }

jfield() { t_json "d['$1']"; }
maybes() { "$FB" query "$1" -f "$2" | tail -1 | cut -d' ' -f1; }
nflows() { "$FB" -j info "$1" | jfield flows; }
digest() { "$FB" -j info "$1" | jfield digest; }
# the sum of count's answers for the flows of FILE
counted() { "$FB" -j count "$1" -f "$2" | t_json "sum(r['count'] for r in d['results'])"; }
clean() { "$FB" -j check "$1" 2>&1 | t_json "d['clean']"; }
staged() { ls -A "$FLOWBLOOM_ROOT" 2>/dev/null | grep '^~' | paste -sd' '; }
lines() { wc -l <"$1"; }

# --- Making the races.
# lockid NAME: the filter directory's id as /proc/locks writes it
lockid() {
	local s
	read -r -a s < <(stat -c '%Hd %Ld %i' "$FLOWBLOOM_ROOT/$1")
	printf '%02x:%02x:%s' "${s[0]}" "${s[1]}" "${s[2]}"
}
# queued N: N processes wait for the lock LID (and someone holds it)
queued() {
	[ "$(grep -c -- "-> FLOCK .* $LID " /proc/locks)" -ge "$1" ] &&
		grep -v -- '->' /proc/locks | grep -q " $LID "
}
# soon SECS CMD...: t_wait_until at a finer step (a swap holds the lock
# for 0.3 s)
soon() { T_WAIT_STEP=0.01 t_wait_until "$@"; }
# hold NAME: take NAME's lock as a writer would, until release N lets go
# of it once N processes queue behind it.
hold() {
	LID=$(lockid "$1")
	flock "$FLOWBLOOM_ROOT/$1" cat "$T_TMP/go" >/dev/null &
	HOLDER=$!
	soon 10 queued 0 || fail "the suite could not take $1's lock"
}
release() {
	soon 20 queued "$1" || fail "$1 writers did not queue for the lock"
	echo >"$T_TMP/go"
	wait "$HOLDER"
	HOLDER=""
}
# job ID CMD...: CMD in the background, its stdin $IN (/dev/null if
# unset); its output in ID.out, ID.err, ID.rc
job() {
	local id=$1
	shift
	rm -f "$T_TMP/$id.rc"
	(
		"$@" <"${IN:-/dev/null}" >"$T_TMP/$id.out" 2>"$T_TMP/$id.err"
		echo $? >"$T_TMP/$id.rc"
	) &
	JOBS+=($!)
}
waitjobs() {
	wait "${JOBS[@]}"
	JOBS=()
}
# swapper ID WHEN CMD...: a job that, once its WHEN-th flock returns (the
# filter's lock taken), keeps the lock 0.3 s, and returns once the lock is
# held (someone holds it: this job, if WHEN counts right) or the job ended. The writers
# started next begin after it took the lock: the serial order is the swap
# first, whatever the timing.
# behind N WHAT: the N writers queued behind the swap (on a machine so
# loaded that they did not within its 0.3 s, they ran after it: the same
# serial order, a weaker race; said, not failed).
behind() {
	soon 20 queued_or_over "$1" || true
	queued "$1" || echo "note: $2: the writers ran after the swap instead of queuing behind it"
}
queued_or_over() { queued "$1" || [ -e "$T_TMP/$SWAP.rc" ]; }
swapper() {
	local id=$1 when=$2
	shift 2
	SWAP=$id
	job "$id" strace -f -qq -o /dev/null -e trace=flock \
		-e inject=flock:delay_exit=300000:when="$when" "$@"
	# On a machine so loaded that this shell did not run during the 0.3 s,
	# the swap is over (its exit status is checked by the caller) and the
	# writers started next run after it: the same serial order.
	soon 10 queued_or_over 0 || fail "$id neither took the lock nor ended"
	queued 0 || echo "note: $id: the swap was over before the writers started"
}
# expect ID LABEL [REFUSAL]: the job exited 0 (nothing on stderr), or with
# REFUSAL (an extended regex) exit 1 and that one line on stderr.
expect() {
	local rc err
	rc=$(cat "$T_TMP/$1.rc" 2>/dev/null)
	err=$(head -c 300 "$T_TMP/$1.err")
	if [ "$rc" = 0 ] && [ -z "$err" ]; then
		pass "$2"
	elif [ -n "${3:-}" ] && [ "$rc" = 1 ] && [ "$(lines "$T_TMP/$1.err")" = 1 ] &&
		grep -Eq "$3" "$T_TMP/$1.err"; then
		pass "$2 (refused: $err)"
	else
		fail "$2: exit ${rc:-none}: $err"
	fi
}
# refused ID LABEL REFUSAL: the job must have been refused so
refused() {
	if [ "$(cat "$T_TMP/$1.rc")" = 1 ] && grep -Eq "$3" "$T_TMP/$1.err"; then
		pass "$2"
	else
		fail "$2: exit $(cat "$T_TMP/$1.rc"): $(head -c 300 "$T_TMP/$1.err")"
	fi
}
# ref NAME: NAME-ref, a copy with NAME's key and content (export, import)
ref() {
	"$FB" export "$1" "$T_TMP/$1.fbx" --plain >/dev/null &&
		"$FB" import "$T_TMP/$1.fbx" "$1-ref" >/dev/null
}
# same NAME LABEL: NAME has the content of NAME-ref (then NAME-ref goes)
same() {
	check_eq "$2: the content equals the serial order's" "$(digest "$1")" "$(digest "$1-ref")"
	"$FB" destroy "$1-ref" >/dev/null
}
# present NAME FILE LABEL: every flow of FILE matches
present() { check_eq "$3" "$(maybes "$1" "$2")" "$(lines "$2")"; }
# absent NAME FILE LABEL: no flow of FILE is held (a false positive of a
# cuckoo or d-left fingerprint aside: at most 1 %)
absent() {
	local c
	c=$(counted "$1" "$2")
	if [ "$c" -le $(($(lines "$2") / 100)) ]; then pass "$3 ($c)"; else fail "$3: $c copies counted"; fi
}
# whole NAME LABEL FLOWS: info's flows, check clean, nothing staged
whole() {
	check_eq "$2: info counts $3 flows" "$(nflows "$1")" "$3"
	check_eq "$2: check is clean" "$(clean "$1")" True
	check_eq "$2: nothing left staged" "$(staged)" ""
}

# ---------------------------------------------------------------------------
# The same verb four times at once: add -f FILE, add -f - (stdin), load
# (adds) and add FLOW... on argv, all opened before the first one writes.
for t in "${TYPES[@]}"; do
	"$FB" create "$t" ${OPTS[$t]} >/dev/null || fail "$t: create"
	if [ "$t" = scalable ]; then
		base=sb w=(sw1 sw2 sw3)
	else
		base=b w=(w1 w2 w3)
	fi
	"$FB" add "$t" -f "$T_TMP/$base.txt" >/dev/null || fail "$t: add the base"
	commutes "$t" && ref "$t"
	hold "$t"
	job a1 "$FB" add "$t" -f "$T_TMP/${w[0]}.txt"
	IN=$T_TMP/${w[1]}.txt job a2 "$FB" add "$t" -f -
	job a3 "$FB" load "$t" "$T_TMP/${w[2]}.txt"
	job a4 "$FB" add "$t" $(head -3 "$T_TMP/${w[2]}.txt" | tr '\n' ' ')
	release 4
	waitjobs
	for j in a1 a2 a3 a4; do expect $j "$t: 4 writers at once: $j"; done
	cat "$T_TMP/$base.txt" "$T_TMP/${w[0]}.txt" "$T_TMP/${w[1]}.txt" "$T_TMP/${w[2]}.txt" \
		>"$T_TMP/all.txt"
	present "$t" "$T_TMP/all.txt" "$t: 4 writers at once: every flow matches"
	# a4's 3 flows are a3's too: a Bloom filter counts them, a table holds copies
	whole "$t" "$t: 4 writers at once" $(($(lines "$T_TMP/all.txt") + 3))
	if commutes "$t"; then
		for i in 0 1 2; do "$FB" add "$t-ref" -f "$T_TMP/${w[$i]}.txt" >/dev/null; done
		"$FB" add "$t-ref" $(head -3 "$T_TMP/${w[2]}.txt" | tr '\n' ' ') >/dev/null
		same "$t" "$t: 4 writers at once"
	fi
done

# ---------------------------------------------------------------------------
# Adds and deletes at once (the types that delete), and the same delete
# twice: one of the two finds the flows gone and is refused whole.
for t in counting cuckoo dleft; do
	commutes "$t" && ref "$t"
	hold "$t"
	job a1 "$FB" add "$t" -f "$T_TMP/w3.txt"
	job d1 "$FB" del "$t" $(delopt $t) -f "$T_TMP/d1.txt"
	IN=$T_TMP/d2.txt job d2 "$FB" del "$t" $(delopt $t) -f -
	job d3 "$FB" del "$t" $(delopt $t) -f "$T_TMP/d1.txt"
	release 4
	waitjobs
	expect a1 "$t: add beside deletes"
	expect d2 "$t: del -f - beside an add"
	if [ "$(cat "$T_TMP/d1.rc")$(cat "$T_TMP/d3.rc")" = 01 ]; then
		refused d3 "$t: the same delete twice: the second refused" "nothing deleted"
	else
		refused d1 "$t: the same delete twice: the second refused" "nothing deleted"
		expect d3 "$t: the same delete twice: the first done"
	fi
	present "$t" "$T_TMP/w3.txt" "$t: add beside deletes: its flows match"
	present "$t" "$T_TMP/p.txt" "$t: add beside deletes: the flows kept match"
	absent "$t" "$T_TMP/d.txt" "$t: the deleted flows are gone"
	# B (2000) + W1, W2 (1000 each) + W3 (1000, twice) + 3 on argv - D (500)
	whole "$t" "$t: adds and deletes at once" 5503
	if commutes "$t"; then
		"$FB" add "$t-ref" -f "$T_TMP/w3.txt" >/dev/null
		"$FB" del "$t-ref" -f "$T_TMP/d.txt" >/dev/null
		same "$t" "$t: adds and deletes at once"
	fi
done

# ---------------------------------------------------------------------------
# Writers against a swap: `load --replace` (`apply` for the plain filter)
# holds the lock while the others open the filter as it was, then switches
# arrays (and counters): the others, queued, must write into the new one.
# The serial order is replace, add W1, add W2, del D.
printf 'capacity = 20000\nfp-rate = 0.001\nload = r.txt\n' >"$T_TMP/bloom.conf"
for t in "${TYPES[@]}"; do
	commutes "$t" && ref "$t"
	LID=$(lockid "$t")
	if [ "$t" = bloom ]; then
		swapper sw 1 "$FB" apply "$T_TMP/bloom.conf"
	else
		swapper sw 1 "$FB" load "$t" "$T_TMP/r.txt" --replace
	fi
	job a1 "$FB" add "$t" -f "$T_TMP/w1.txt"
	IN=$T_TMP/w2.txt job a2 "$FB" add "$t" -f -
	n=2
	deletes "$t" && job d1 "$FB" del "$t" $(delopt $t) -f "$T_TMP/d.txt" && n=3
	behind $n "$t: replace"
	waitjobs
	expect sw "$t: the swap (load --replace or apply)"
	expect a1 "$t: add -f across a swap"
	expect a2 "$t: add -f - across a swap"
	present "$t" "$T_TMP/w1.txt" "$t: added across a swap: W1 matches"
	present "$t" "$T_TMP/w2.txt" "$t: added across a swap: W2 matches"
	present "$t" "$T_TMP/p.txt" "$t: the replacement's flows match"
	present "$t" "$T_TMP/r2.txt" "$t: the replacement's new flows match"
	if deletes "$t"; then
		expect d1 "$t: del across a swap"
		absent "$t" "$T_TMP/d.txt" "$t: deleted across a swap: gone"
		whole "$t" "$t: across a swap" 5500
	else
		whole "$t" "$t: across a swap" 6000
	fi
	if commutes "$t"; then
		"$FB" load "$t-ref" "$T_TMP/r.txt" --replace >/dev/null
		"$FB" add "$t-ref" -f "$T_TMP/w1.txt" >/dev/null
		"$FB" add "$t-ref" -f "$T_TMP/w2.txt" >/dev/null
		deletes "$t" && "$FB" del "$t-ref" -f "$T_TMP/d.txt" >/dev/null
		same "$t" "$t: across a swap"
	fi
done

# del of a prefix a load expanded (held as its longer pieces) queued
# behind a `load --replace` whose list holds it whole: it must delete it as
# the new array holds it, not as the old one did (it was refused, "'src
# 198.18.0.0/22' is not in filter", the /21 left matching).
printf '%s\n' 198.51.96.0/19 203.0.112.0/20 198.18.0.0/21 198.19.8.0/22 198.19.16.0/23 \
	198.19.20.0/24 >"$T_TMP/six.txt"
echo 198.18.0.0/21 >"$T_TMP/one.txt"
for t in counting cuckoo; do
	"$FB" create "x$t" ${OPTS[$t]} >/dev/null
	for i in 1 2; do "$FB" load "x$t" "$T_TMP/six.txt" >/dev/null 2>&1; done
	LID=$(lockid "x$t")
	swapper sw 1 "$FB" load "x$t" "$T_TMP/one.txt" --replace
	job d1 "$FB" del "x$t" $(delopt $t) src 198.18.0.0/21
	behind 1 "$t: replace, then del of a prefix"
	waitjobs
	expect sw "$t: the replace holding the /21 whole"
	expect d1 "$t: del of a prefix expanded before a replace"
	check_eq "$t: ... the /21 is gone" "$("$FB" count "x$t" src 198.18.0.0/21 | cut -d' ' -f1)" 0
	check_eq "$t: ... check is clean" "$(clean "x$t")" True
	"$FB" destroy "x$t" >/dev/null
done

# fold and merge (into one of its sources) switch arrays too; export
# reads under a shared lock: it must hold the content before the add.
$GEN flows "$T_TMP/m.txt" /dev/null 500 40000
for t in bloom counting; do
	ref "$t"
	LID=$(lockid "$t")
	swapper fo 1 "$FB" fold "$t"
	job a3 "$FB" add "$t" -f "$T_TMP/w3.txt"
	behind 1 "$t: fold"
	waitjobs
	expect fo "$t: fold"
	expect a3 "$t: add across a fold"
	present "$t" "$T_TMP/w3.txt" "$t: added across a fold: W3 matches"
	present "$t" "$T_TMP/w1.txt" "$t: folded: W1 still matches"
	"$FB" fold "$t-ref" >/dev/null
	"$FB" add "$t-ref" -f "$T_TMP/w3.txt" >/dev/null
	whole "$t" "$t: across a fold" "$(nflows "$t-ref")"
	same "$t" "$t: across a fold"

	# merge X --into NAME, X being NAME's copy with M added: the
	# merge's exclusive lock is its third flock (shared, unlocked, then it)
	ref "$t"
	"$FB" import "$T_TMP/$t.fbx" x >/dev/null
	"$FB" add x -f "$T_TMP/m.txt" >/dev/null
	"$FB" export x "$T_TMP/x.fbx" --plain >/dev/null
	"$FB" destroy x >/dev/null
	swapper me 3 "$FB" merge "$T_TMP/x.fbx" "$t" --into "$t"
	job a1 "$FB" add "$t" -f "$T_TMP/w1.txt"
	behind 1 "$t: merge"
	waitjobs
	expect me "$t: merge into itself"
	expect a1 "$t: add across a merge"
	present "$t" "$T_TMP/m.txt" "$t: merged: M matches"
	present "$t" "$T_TMP/w1.txt" "$t: added across a merge: W1 matches"
	"$FB" merge "$T_TMP/x.fbx" "$t-ref" --into "$t-ref" >/dev/null
	"$FB" add "$t-ref" -f "$T_TMP/w1.txt" >/dev/null
	whole "$t" "$t: across a merge" "$(nflows "$t-ref")"
	same "$t" "$t: across a merge"

	# export under its shared lock, an add queued behind it
	before=$(digest "$t")
	swapper ex 1 "$FB" export "$t" "$T_TMP/e.fbx" --plain
	job a2 "$FB" add "$t" -f "$T_TMP/m.txt"
	behind 1 "$t: export"
	waitjobs
	expect ex "$t: export"
	expect a2 "$t: add after an export"
	"$FB" import "$T_TMP/e.fbx" e >/dev/null
	check_eq "$t: the export holds the content before the add" "$(digest e)" "$before"
	"$FB" destroy e >/dev/null

	# check --repair takes the writers' lock: beside two adds
	ref "$t"
	hold "$t"
	job ck "$FB" check "$t" --repair
	job a1 "$FB" add "$t" -f "$T_TMP/w2.txt"
	job a2 "$FB" add "$t" -f "$T_TMP/p.txt"
	release 3
	waitjobs
	expect ck "$t: check --repair beside writers"
	expect a1 "$t: add beside check --repair (1)"
	expect a2 "$t: add beside check --repair (2)"
	"$FB" add "$t-ref" -f "$T_TMP/w2.txt" >/dev/null
	"$FB" add "$t-ref" -f "$T_TMP/p.txt" >/dev/null
	whole "$t" "$t: beside check --repair" "$(nflows "$t-ref")"
	same "$t" "$t: beside check --repair"
done

# ---------------------------------------------------------------------------
# Rules with a lifetime (add --ttl: a generation made or joined under the
# lock) beside a plain add and a delete, on a counting filter: count
# (permanent and live generations together) is 1 for every flow added.
"$FB" create tt ${OPTS[counting]} >/dev/null
"$FB" add tt -f "$T_TMP/b.txt" >/dev/null
hold tt
job a1 "$FB" add tt -f "$T_TMP/w1.txt" --ttl 1h
IN=$T_TMP/w2.txt job a2 "$FB" add tt -f - --ttl 1h
job a3 "$FB" add tt -f "$T_TMP/w3.txt"
job d1 "$FB" del tt -f "$T_TMP/d.txt"
release 4
waitjobs
for j in a1 a2 a3 d1; do
	[ "$(cat "$T_TMP/$j.rc")" = 0 ] && pass "ttl: $j beside the others" ||
		fail "ttl: $j: $(head -c 300 "$T_TMP/$j.err")"
done
check_eq "ttl: every flow added counted once" "$(counted tt "$T_TMP/w.txt")" 3000
absent tt "$T_TMP/d.txt" "ttl: the deleted flows are gone"
present tt "$T_TMP/p.txt" "ttl: the flows kept match"
check_eq "ttl: check is clean" "$(clean tt)" True
"$FB" destroy tt >/dev/null

# ---------------------------------------------------------------------------
# The BGP feed (ExaBGP's JSON on stdin, routes reference-counted in a state
# file) beside add and del on its counting filter: 20 routes announced, 10
# withdrawn; the others' flows added and deleted as asked.
"$FB" create rtbh ${OPTS[counting]} >/dev/null
"$FB" add rtbh -f "$T_TMP/b.txt" >/dev/null
"$PY" - >"$T_TMP/bgp.in" <<'PYEOF'
import json
nb = {"address": {"local": "198.51.100.2", "peer": "198.51.100.9"}, "direction": "receive"}
def msg(update):
    return json.dumps({"type": "update", "neighbor": dict(nb, message={"update": update})})
print(json.dumps({"type": "state", "neighbor": dict(nb, state="up")}))
for i in range(100, 120):
    print(msg({"attribute": {"community": [[65535, 666]]},
               "announce": {"ipv4 unicast": {"198.51.100.9": [{"nlri": "203.0.113.%d/32" % i}]}}}))
for i in range(100, 110):
    print(msg({"withdraw": {"ipv4 unicast": [{"nlri": "203.0.113.%d/32" % i}]}}))
PYEOF
hold rtbh
IN=$T_TMP/bgp.in job bg "$FB" bgp rtbh --state "$T_TMP/rtbh.bgp"
job a1 "$FB" add rtbh -f "$T_TMP/w1.txt"
job d1 "$FB" del rtbh -f "$T_TMP/d1.txt"
release 3
waitjobs
check_eq "bgp beside add and del: exit 0" "$(cat "$T_TMP/bg.rc")" 0
grep -q "20 added and 10 deleted by this run" "$T_TMP/bg.err" && pass "bgp: 20 added, 10 deleted" ||
	fail "bgp: $(tail -1 "$T_TMP/bg.err")"
expect a1 "bgp: an add beside it"
expect d1 "bgp: a del beside it"
q=$("$FB" query rtbh $(for i in $(seq 110 119); do echo dst 203.0.113.$i; done) | tail -1)
check_eq "bgp: the 10 routes held match" "$q" "10 of 10 maybe"
q=$("$FB" count rtbh $(for i in $(seq 100 109); do echo dst 203.0.113.$i; done) | cut -d' ' -f1 | paste -sd+ | bc)
check_eq "bgp: the 10 withdrawn are gone" "$q" 0
present rtbh "$T_TMP/w1.txt" "bgp: the add's flows match"
absent rtbh "$T_TMP/d1.txt" "bgp: the del's flows are gone"
whole rtbh "bgp beside add and del" $((2000 + 1000 - 250 + 10))
"$FB" destroy rtbh >/dev/null

# ---------------------------------------------------------------------------
# Free-running: three loops of adds (30 files of 100 flows) and, where the
# type deletes, one of deletes (5 of 100), on every type, while the data
# path (replay: the real program, BPF_PROG_TEST_RUN) looks for P, present
# throughout, again and again; a counting and a cuckoo filter are replaced
# (by a list holding P) and a scalable one grows meanwhile. Not one miss.
split -l 100 -d -a 2 "$T_TMP/w.txt" "$T_TMP/wc."
split -l 100 -d -a 1 "$T_TMP/d.txt" "$T_TMP/dc."
adds() { # NAME FIRST: every third chunk of W from FIRST
	local i
	for ((i = $2; i < 30; i += 3)); do
		"$FB" add "$1" -f "$T_TMP/wc.$(printf %02d $i)" >/dev/null || return 1
	done
}
dels() { # NAME TYPE: D, in 5 chunks
	local i
	for i in 0 1 2 3 4; do "$FB" del "$1" $(delopt "$2") -f "$T_TMP/dc.$i" >/dev/null || return 1; done
}
churn() { # NAME TYPE: what changes the filter's arrays while the program reads
	case "$2" in
	scalable) for i in 1 2 3; do "$FB" add "$1" -f "$T_TMP/sw$i.txt" >/dev/null || return 1; done ;;
	*) for i in 1 2; do "$FB" load "$1" "$T_TMP/r.txt" --replace >/dev/null || return 1; done ;;
	esac
}
replays() { # NAME: P replayed 3 times; the matches of each, one line
	local i
	for i in 1 2 3; do
		"$FB" -j replay "$1" "$T_TMP/p.pcap" 2>&1 | sed -n 's/.*"matched":\([0-9]*\).*/\1/p'
	done | paste -sd' '
}
for t in "${TYPES[@]}"; do
	l=l$t
	"$FB" create $l ${OPTS[$t]} >/dev/null
	"$FB" add $l -f "$T_TMP/b.txt" >/dev/null
	for k in 0 1 2; do job l$k adds $l $k; done
	deletes "$t" && job ld dels $l "$t"
	waitjobs
	bad=""
	for j in l0 l1 l2 ld; do
		[ -f "$T_TMP/$j.rc" ] && [ "$(cat "$T_TMP/$j.rc")" != 0 ] && bad="$bad $j: $(head -c 200 "$T_TMP/$j.err")"
	done
	check_eq "$t: free-running writers: every command done" "$bad" ""
	present $l "$T_TMP/w.txt" "$t: free-running writers: every flow added matches"
	if deletes "$t"; then
		absent $l "$T_TMP/d.txt" "$t: free-running writers: the deleted flows are gone"
		whole $l "$t: free-running writers" 4500
	else
		whole $l "$t: free-running writers" 5000
	fi
	case "$t" in
	counting | cuckoo | scalable)
		job ch churn $l "$t"
		got=$(replays $l)
		waitjobs
		expect ch "$t: replaced or grown under traffic"
		check_eq "$t: the program matched all of P, present throughout, every time" "$got" "1000 1000 1000"
		present $l "$T_TMP/p.txt" "$t: after the churn, P matches"
		;;
	esac
	"$FB" destroy $l >/dev/null
done

# ---------------------------------------------------------------------------
# Writers against destroy: opened before it, queued behind it, they fail
# saying the filter went (nothing is written anywhere); two destroys at
# once: one, the other finds no filter. Then create, create and import of
# one name at once: one filter, whole; the others refused; nothing staged.
for t in "${TYPES[@]}"; do
	LID=$(lockid "$t")
	# destroy's 3rd flock: its 1st and 2nd take and release the root's
	# (stale staging directories are looked for under it)
	swapper ds 3 "$FB" destroy "$t"
	job a1 "$FB" add "$t" -f "$T_TMP/w1.txt"
	n=1
	deletes "$t" && job d1 "$FB" del "$t" $(delopt $t) -f "$T_TMP/d1.txt" && n=2
	behind $n "$t: destroy"
	waitjobs
	expect ds "$t: destroy beside writers"
	gone="was destroyed while this command waited|no filter named '$t'"
	refused a1 "$t: add queued behind destroy: refused" "$gone"
	deletes "$t" && refused d1 "$t: del queued behind destroy: refused" "$gone"
	check_eq "$t: destroyed: nothing left" "$(ls -A "$FLOWBLOOM_ROOT" 2>/dev/null | grep -x -- "~*$t" )" ""
done
"$FB" create c0 ${OPTS[counting]} >/dev/null
"$FB" export c0 "$T_TMP/c.fbx" --plain >/dev/null
"$FB" destroy c0 >/dev/null
bad=""
for i in 1 2 3 4; do
	job c1 "$FB" create c ${OPTS[counting]}
	job c2 "$FB" create c ${OPTS[counting]}
	job c3 "$FB" import "$T_TMP/c.fbx" c
	waitjobs
	ok=0
	for j in c1 c2 c3; do
		if [ "$(cat "$T_TMP/$j.rc")" = 0 ]; then
			ok=$((ok + 1))
		elif ! grep -Eq "already exists|another create or import of 'c' is in progress" "$T_TMP/$j.err" ||
			[ "$(lines "$T_TMP/$j.err")" != 1 ]; then
			bad="$bad round $i $j: $(head -c 200 "$T_TMP/$j.err");"
		fi
	done
	[ "$ok" = 1 ] || bad="$bad round $i: $ok of 3 made c;"
	[ "$(clean c)" = True ] || bad="$bad round $i: c not clean;"
	[ -z "$(staged)" ] || bad="$bad round $i: staged $(staged);"
	"$FB" create c ${OPTS[counting]} >/dev/null 2>&1 && bad="$bad round $i: c made twice;"
	hold c
	job x1 "$FB" destroy c
	job x2 "$FB" destroy c
	release 2
	waitjobs
	if [ "$(cat "$T_TMP/x1.rc")$(cat "$T_TMP/x2.rc")" = 01 ]; then x=x2; else x=x1; fi
	[ "$(cat "$T_TMP/$x.rc")" = 1 ] && grep -q "no filter named 'c'" "$T_TMP/$x.err" ||
		bad="$bad round $i: destroy twice: $(cat "$T_TMP/x1.rc" "$T_TMP/x2.rc" | paste -sd/) $(head -c 200 "$T_TMP/$x.err");"
	[ -z "$(ls -A "$FLOWBLOOM_ROOT" 2>/dev/null | grep -- 'c$')" ] || bad="$bad round $i: left $(ls -A "$FLOWBLOOM_ROOT");"
done
check_eq "create, create and import of one name at once; destroy twice at once (4 rounds)" "$bad" ""

# A create between its staging directory's mkdir and its lock on it: strace
# holds every flock of the first create 0.4 s, and a second create of the
# name starts inside that window. It must not take the first one's
# directory for a dead create's and remove it (both then failed, "cannot
# pin the maps of 'c' in ~c: No such file or directory"): one makes c, the
# other is told another create is in progress.
job s1 strace -f -qq -o /dev/null -e trace=flock -e inject=flock:delay_enter=400000 \
	"$FB" create c ${OPTS[counting]}
sleep 0.2
job s2 "$FB" create c ${OPTS[counting]}
waitjobs
rcs="$(cat "$T_TMP/s1.rc")$(cat "$T_TMP/s2.rc")"
check "a create inside another's mkdir-to-lock window: one of the two makes c ($rcs)" \
	test "$rcs" = 01 -o "$rcs" = 10
check "... the other says another create is in progress or c exists" \
	grep -Eqh "another create or import of 'c' is in progress|already exists" "$T_TMP/s1.err" "$T_TMP/s2.err"
check_eq "... and nothing else: $(cat "$T_TMP/s1.err" "$T_TMP/s2.err" | head -c 300)" \
	"$(cat "$T_TMP/s1.err" "$T_TMP/s2.err" | grep -vEc "another create or import of 'c' is in progress|already exists")" 0
check_eq "... c is clean, nothing staged" "$(clean c) $(staged)" "True "
"$FB" destroy c >/dev/null

# Two applies of one file at once, the filter absent (a reload while the
# start runs): both succeed, as one after the other would; one filter,
# holding the file's list.
cp "$T_TMP/bloom.conf" "$T_TMP/ap.conf"
bad=""
for i in 1 2 3; do
	job p1 "$FB" apply "$T_TMP/ap.conf"
	job p2 "$FB" apply "$T_TMP/ap.conf"
	waitjobs
	for j in p1 p2; do
		[ "$(cat "$T_TMP/$j.rc")" = 0 ] || bad="$bad round $i $j: $(head -c 200 "$T_TMP/$j.err");"
	done
	[ "$(maybes ap "$T_TMP/r.txt")" = 4000 ] || bad="$bad round $i: the list is not all in;"
	[ "$(clean ap)" = True ] || bad="$bad round $i: not clean;"
	"$FB" destroy ap >/dev/null
	[ -z "$(ls -A "$FLOWBLOOM_ROOT" 2>/dev/null | grep -- 'ap$')" ] || bad="$bad round $i: left $(ls -A "$FLOWBLOOM_ROOT");"
done
check_eq "two applies of one file at once, the filter absent: both done (3 rounds)" "$bad" ""

t_finish
