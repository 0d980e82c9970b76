#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What a filter costs in the kernel, as `info` reports it, against what
# bpftool says the kernel holds: the memlock of every map pinned in the
# filter's directory (monitor/ included) and of every map its outer maps
# hold, each counted once, for a plain, a counting (with rules with a
# lifetime), a confirming (before and after 20,000 rules), a cuckoo and a
# scalable filter (and `metrics`, its kernel-memory gauge, the same).
# `create --confirm exact` says what its exact sets cost
# from the start. The exact sets' bound: a capacity whose sets the kernel
# cannot make (more than 2^28 - 1 hash buckets) is refused before anything
# is made, naming the option; one just under it (2^27 rules, 2 GiB of
# buckets) is made, where it was refused with the kernel's E2BIG.
source "$(dirname "$0")/../lib/lib.sh"
t_begin memory
t_traps

if ! command -v bpftool >/dev/null; then
	skip "bpftool not installed (make deps installs it)"
	t_finish
fi

# bpftool_total NAME: memlock of everything the filter holds, by bpftool.
bpftool_total() {
	python3 - "$FLOWBLOOM_ROOT/$1" <<'PY'
import json, os, subprocess, sys
def show(args):
    return json.loads(subprocess.check_output(["bpftool", "-j", "map"] + args))
seen, total = set(), 0
def add(m):
    global total
    if m["id"] in seen:
        return
    seen.add(m["id"])
    total += m["bytes_memlock"]
    if m["type"] == "array_of_maps":
        for e in show(["dump", "id", str(m["id"])]):
            inner = e.get("inner_map_id") or e.get("value")
            if isinstance(inner, list):
                inner = int.from_bytes(bytes(int(x, 16) for x in inner), "little")
            if inner:
                add(show(["show", "id", str(inner)]))
for d, _, files in os.walk(sys.argv[1]):
    for f in files:
        add(show(["show", "pinned", os.path.join(d, f)]))
print(total)
PY
}
# info_total NAME: info -j's kernel_memory total.
info_total() { "$FB" -j info "$1" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel_memory"]["total"])'; }
# same NAME LABEL: info's total is bpftool's.
same() {
	local got want
	got=$(info_total "$1")
	want=$(bpftool_total "$1")
	check_eq "$2: info's kernel memory is bpftool's ($want)" "$got" "$want"
	check_eq "$2: metrics says the same" \
		"$("$FB" metrics "$1" | sed -n 's/^flowbloom_filter_kernel_memory_bytes{filter="'"$1"'"} //p')" "$want"
}

check "create plain" "$FB" create plain --capacity 100000 --fp-rate 0.001
same plain "plain"
"$FB" info plain >"$T_TMP/info" 2>&1
check_eq "info says it in text too" "$(grep -c '^  kernel memory [0-9]* bytes in [0-9]* maps: bits [0-9]* other [0-9]*$' "$T_TMP/info")" 1

check "create counting" "$FB" create cnt --capacity 100000 --fp-rate 0.001 --counting
for i in $(seq 1 50); do echo "src 198.51.100.$i"; done >"$T_TMP/ttl.txt"
check "rules with a lifetime" "$FB" load cnt "$T_TMP/ttl.txt" --ttl 10m
check "more, ending later" "$FB" add cnt src 203.0.113.9 --ttl 2h
same cnt "counting, 2 generations"
parts=$("$FB" -j info cnt | python3 -c '
import json, sys
m = json.load(sys.stdin)["kernel_memory"]
print(m["counters"] > 0, m["generations"] >= 2 * 262144, sum(v for k, v in m.items() if k not in ("total", "maps")) == m["total"])')
check_eq "... counters and generations (two chunks at least) counted, parts add up" "$parts" "True True True"
# What it costs: the filter's outer map has 8,197 slots, a few filled; one
# lookup per slot made `metrics` of 300 filters 2.5 million bpf calls
# (1.3 s). Read in one batch, a few dozen calls a filter; a kernel that
# stops a batch at an empty slot (before 2025) is still read slot by slot.
if command -v strace >/dev/null; then
	strace -f -qq -o "$T_TMP/st" -e trace=bpf "$FB" metrics cnt >/dev/null 2>&1
	if grep -q 'BPF_MAP_LOOKUP_BATCH.*= -1 EINTR' "$T_TMP/st"; then
		skip "memory read in one batch: this kernel stops a batch lookup at an empty slot"
	else
		n=$(grep -c '^[0-9]* *bpf(' "$T_TMP/st")
		check_eq "metrics of one filter: its outer map read in a batch, not slot by slot ($n bpf calls)" \
			"$((n > 0 && n < 500))" 1
	fi
else
	skip "bpf calls of metrics: strace is missing (make deps installs it)"
fi

check "create confirming" "$FB" create cx --capacity 100000 --fp-rate 0.001 --confirm exact
"$FB" info cx >/dev/null
same cx "confirm exact, empty"
check_eq "create says what the exact sets cost from the start" \
	"$("$FB" create cy --capacity 100000 --fp-rate 0.001 --confirm exact | grep -c '^  (--confirm exact: [0-9]* bytes of kernel memory in all now')" 1
python3 -c '
for i in range(20000):
    print("udp 198.51.100.%d:%d 203.0.113.%d:53" % (i % 250, 1024 + i, i % 200))' >"$T_TMP/flows.txt"
before=$(info_total cx)
check "20,000 rules" "$FB" load cx "$T_TMP/flows.txt"
same cx "confirm exact, 20,000 rules"
after=$(info_total cx)
check_eq "... the exact set grew with them (at least 40 bytes a rule)" "$((after - before >= 20000 * 40))" 1

check "create cuckoo" "$FB" create ck --capacity 10000 --fp-rate 0.001 --type cuckoo
same ck "cuckoo"
check "create scalable" "$FB" create gr --capacity 10000 --fp-rate 0.001 --grow
same gr "scalable"

# The exact sets' bound: refused before anything is made, naming it.
t_refused 1 "a capacity the exact sets cannot hold is refused" \
	"--confirm exact holds at most 134217728 rules.*--capacity 134217729 is too large" \
	"$FB" create huge --capacity 134217729 --fp-rate 0.5 --confirm exact
check_eq "... and leaves nothing" "$(ls "$FLOWBLOOM_ROOT" | grep -c huge)" 0
# Just under it (twice the capacity is past 2^27 rules): made, at 2 GiB of
# hash buckets, when the machine has the memory to spare.
avail=$(awk '/^MemAvailable:/ {print int($2 / 1048576)}' /proc/meminfo)
if [ "$avail" -lt 8 ]; then
	skip "fewer than 8 GiB available: the 2 GiB exact set not tried"
else
	check "capacity 67108865 with --confirm exact (sets of 2^27 rules)" \
		"$FB" create big --capacity 67108865 --fp-rate 0.5 --confirm exact
	check_eq "... its 2 GiB hash table in info" \
		"$("$FB" -j info big | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel_memory"]["exact_sets"] >= 2 << 30)')" True
	check "destroy it" "$FB" destroy big
fi
t_end
