#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What a list costs the CLI in memory, per rule (docs/performance.md, "The
# CLI's memory per rule"): 1M distinct 5-tuples, each into a fresh filter
# sized for them.
# - A Bloom filter: `load`, `load --replace` and `apply` peak at no more
#   than 42 bytes a rule of RSS above the same command of a one-rule list
#   (a rule is 40 bytes; the duplicate drop sorts in place: glibc's qsort
#   took 16 bytes a rule more: 46 in all).
# - A cuckoo filter: `load` fits an address space (prlimit --as) of the
#   one-rule load's plus 100 bytes a rule (its write plan's stores are 16
#   bytes: at 24 it needed about 117); `load --replace` peaks at no more
#   than 60 bytes a rule of RSS (the table it fills aside is planned a
#   chunk at a time: planned whole, 114).
# And the list is the one loaded: the filter holds every rule, the count
# is the list's.
source "$(dirname "$0")/../lib/lib.sh"
t_begin listmem
t_traps

N=1000000
python3 - "$T_TMP/list" "$N" <<'PY'
import sys
n = int(sys.argv[2])
with open(sys.argv[1], "w") as f:
    for b in range(0, n, 100000):
        f.write("".join("udp [2001:db8::%x:%x]:%d [2001:db8:1::%x]:53\n" %
                        (i >> 16, i & 0xffff, 1024 + i % 60000, i % 4096)
                        for i in range(b, min(n, b + 100000))))
PY
head -n 1 "$T_TMP/list" >"$T_TMP/one"
flows() { "$FB" -j info "$1" >"$T_TMP/info.json" 2>&1; t_json 'd["flows"]' "$T_TMP/info.json"; }

# maxrss CMD...: the peak RSS (KiB) of CMD, which must succeed.
maxrss() {
	python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if r.returncode == 0 else -1)' "$@"
}
# per_rule VERB: bytes a rule above the one-rule list, of VERB on a Bloom
# filter sized for N.
per_rule() {
	local base peak
	base=$(run "$1" "$T_TMP/one")
	peak=$(run "$1" "$T_TMP/list")
	if [ "$base" -lt 0 ] || [ "$peak" -lt 0 ]; then
		echo failed
	else
		echo $(((peak - base) * 1024 / N))
	fi
}
run() {
	"$FB" destroy bl >/dev/null 2>&1
	if [ "$1" = apply ]; then
		printf 'capacity = %s\nfp-rate = 0.001\nload = %s\n' "$N" "$2" >"$T_TMP/bl.conf"
		maxrss "$FB" apply "$T_TMP/bl.conf"
		return
	fi
	# shellcheck disable=SC2086 # TYPE is words
	"$FB" create bl --capacity "$N" --fp-rate 0.001 $TYPE >/dev/null
	case $1 in
	load) maxrss "$FB" load bl "$2" ;;
	replace) maxrss "$FB" load bl "$2" --replace ;;
	esac
}
TYPE=
for verb in load replace apply; do
	b=$(per_rule "$verb")
	check_eq "$verb of $N rules: at most 42 bytes a rule ($b)" "$([ "$b" != failed ] && [ "$b" -le 42 ] && echo ok)" ok
	check_eq "... the filter holds them all" "$(flows bl)" "$N"
done
# A cuckoo table a replace fills aside is planned a chunk at a time.
TYPE="--type cuckoo"
b=$(per_rule replace)
check_eq "cuckoo: replace with $N rules: at most 60 bytes a rule ($b)" "$([ "$b" != failed ] && [ "$b" -le 60 ] && echo ok)" ok
check_eq "... the filter holds them all" "$(flows bl)" "$N"

# A cuckoo filter's load in a bounded address space.
# fits LIMIT-MiB LIST: does `load` of LIST into a fresh cuckoo filter fit?
fits() {
	"$FB" destroy ck >/dev/null 2>&1
	"$FB" create ck --capacity "$N" --fp-rate 0.001 --type cuckoo >/dev/null &&
		prlimit --as=$(($1 << 20)) "$FB" load ck "$2" >"$T_TMP/out" 2>&1
}
base=8
while ! fits "$base" "$T_TMP/one" && [ "$base" -lt 256 ]; do base=$((base + 4)); done
limit=$((base + N * 100 / 1048576))
check "cuckoo: $N rules in $limit MiB of address space (one rule: $base)" fits "$limit" "$T_TMP/list"
check_eq "... the filter holds them all" "$(flows ck)" "$N"
t_finish
