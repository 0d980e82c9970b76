#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `check` on damage that no flowbloom writer leaves and `check --repair`
# cannot undo, made behind the CLI's back with bpftool: the `ip link` pins
# of `default` holding other maps (an ip link program loaded while they
# were missing runs on those), and chunk slots of a filter that share one
# chunk (two parts of the bits made one: rules lost, seen by `query`).
# `check` must name each and exit 1; `check --repair` must say NOT
# repaired, exit 1 (a monitoring script must not take it as fixed), leave
# the damage as `check` found it and set no "repaired" in -j; the filter's
# counters and exact sets are not "repaired" against such bits. A healthy
# filter beside them stays clean, and `load --replace` makes the damaged
# one clean with every rule back. A filter that is not damaged but not
# trusted (its directory's owner or mode, a pin made a symbolic link) or
# not known (the kernel refuses a pin) is never called broken, and
# `check --repair` changes nothing on it.
source "$(dirname "$0")/../lib/lib.sh"
t_begin check_damage
t_traps

# The ip link pin directory of this suite's own `default`, in bpffs.
IPR=/sys/fs/bpf/fbtest_chkdmg_ipr_$$
export FLOWBLOOM_IPROUTE_DIR=$IPR/globals
cleanup() { rm -rf --one-file-system "$IPR" 2>/dev/null; }

# A healthy filter beside the damaged ones: clean before and after.
check "create ok" "$FB" create ok --capacity 1000 --fp-rate 0.01 --counting
check "ok: add a rule" "$FB" add ok src 198.51.100.1

# 1. default, its ip link pins replaced by another filter's maps.
check "create default" "$FB" create default --capacity 1000 --fp-rate 0.01
check "default: add a rule" "$FB" add default src 198.51.100.7
check "default: check clean" "$FB" check default
rm "$IPR/globals/fb_filter"
bpftool map pin pinned "$FLOWBLOOM_ROOT/ok/filter" "$IPR/globals/fb_filter" || fail "pin ok's map"
"$FB" check default >"$T_TMP/c" 2>&1
check_eq "default, pins of other maps: check exit 1" $? 1
check "... and says so" grep -q "name other maps than the filter's" "$T_TMP/c"
"$FB" check default --repair >"$T_TMP/c" 2>&1
check_eq "... check --repair exit 1: it cannot repair them" $? 1
check "... and says NOT repaired" grep -q "other maps than the filter's.*: NOT repaired" "$T_TMP/c"
check_eq "... its first line" "$(head -1 "$T_TMP/c")" "default: NOT clean (not all repaired)"
"$FB" -j check default --repair >"$T_TMP/j" 2>&1
check_eq "... -j: exit 1, not repaired, the pins stale" \
	"$? $(t_json 'd["repaired"], d["iproute_pins_stale"], d["clean"]' "$T_TMP/j")" "1 (False, True, False)"
check_eq "... the pins still other maps (check --repair left them)" \
	"$(bpftool -j map show pinned "$IPR/globals/fb_filter" | t_json 'd["id"]')" \
	"$(bpftool -j map show pinned "$FLOWBLOOM_ROOT/ok/filter" | t_json 'd["id"]')"
rm "$IPR/globals/fb_filter" "$IPR/globals/fb_stats"
check "... once removed, check --repair pins them again" "$FB" check default --repair
check "... and check is clean" "$FB" check default

# 2. Chunk slots sharing a chunk: a counting filter of 5 chunks with a
# rule in every chunk, chunk 1's slot made to hold chunk 2's map.
check "create big (counting, 5 chunks)" "$FB" create big --capacity 1000000 --fp-rate 0.01 --counting
for i in $(seq 1 200); do echo "src 203.0.113.$i"; done >"$T_TMP/rules"
check "big: add 200 rules" "$FB" add big -f "$T_TMP/rules"
check "big: check clean" "$FB" check big
# slots NAME: the map ids in the outer map's first 5 slots.
slots() { bpftool -j map dump pinned "$FLOWBLOOM_ROOT/$1/filter" | t_json '" ".join(str(int.from_bytes(bytes(int(b, 16) for b in e["value"]), "little")) for e in d[:5])'; }
read -r s0 s1 s2 s3 _ <<<"$(slots big)"
check_eq "big: the head in slot 0 and range slot 0, 4 more chunks" \
	"$([ "$s0" == "$s1" ] && [ "$s2" != "$s3" ] && echo yes)" yes
bpftool map update pinned "$FLOWBLOOM_ROOT/big/filter" key 2 0 0 0 value id "$s3" ||
	fail "put chunk 2 in chunk 1's slot"
lost=$("$FB" query big -f "$T_TMP/rules" | grep -c '^no ')
check_eq "big: rules in the chunk no slot holds now are lost" "$([ "$lost" -gt 0 ] && echo yes)" yes
"$FB" check big >"$T_TMP/c" 2>&1
check_eq "big: check exit 1" $? 1
check "... names the shared chunk" grep -q "1 chunk slot of the filter holds no chunk of its own" "$T_TMP/c"
"$FB" -j check big --repair >"$T_TMP/j" 2>&1
check_eq "... check --repair -j: exit 1, not repaired, 1 shared chunk" \
	"$? $(t_json 'd["repaired"], d["shared_chunks"]' "$T_TMP/j")" "1 (False, 1)"
"$FB" check big --repair >"$T_TMP/c" 2>&1
check_eq "... check --repair exit 1" $? 1
check "... and says NOT repaired" grep -q "holds no chunk of its own.*: NOT repaired" "$T_TMP/c"
check_eq "... the same rules lost, no other" "$("$FB" query big -f "$T_TMP/rules" | grep -c '^no ')" "$lost"
check "... check still reports it" bash -c "! '$FB' check big >/dev/null 2>&1"
check "load --replace with the rule list" "$FB" load big "$T_TMP/rules" --replace
check "... then check is clean" "$FB" check big
check_eq "... and every rule is back" "$("$FB" query big -f "$T_TMP/rules" | tail -1)" "200 of 200 maybe"

# 3. The same on a plain confirming filter: its exact sets keep every
# rule the shared chunk lost (check --repair does not take them out).
check "create px (plain, --confirm exact, 5 chunks)" \
	"$FB" create px --capacity 1000000 --fp-rate 0.01 --confirm exact
check "px: add 200 rules" "$FB" add px -f "$T_TMP/rules"
read -r s0 s1 s2 s3 _ <<<"$(slots px)"
bpftool map update pinned "$FLOWBLOOM_ROOT/px/filter" key 2 0 0 0 value id "$s3" ||
	fail "put chunk 2 in chunk 1's slot"
"$FB" -j check px --repair >"$T_TMP/j" 2>&1
check_eq "px: check --repair exit 1, not repaired, the exact sets keep 200 rules" \
	"$? $(t_json 'd["repaired"], d["shared_chunks"], d["exact_rules"]' "$T_TMP/j")" "1 (False, 1, 200)"
"$FB" -j check px >"$T_TMP/j" 2>&1
check_eq "... still 200 exact rules after it" "$(t_json 'd["exact_rules"]' "$T_TMP/j")" 200
check "load --replace with the rule list" "$FB" load px "$T_TMP/rules" --replace
check "... then check is clean" "$FB" check px

# 4. A pin replaced by a directory (what no pin is): damage, not a limit
# of this process (ulimit -n, memory), so called broken with the advice to
# destroy, as a missing pin is.
check "create dir" "$FB" create dir --capacity 100 --fp-rate 0.01 --counting
rm "$FLOWBLOOM_ROOT/dir/stats"
mkdir "$FLOWBLOOM_ROOT/dir/stats"
check_eq "a directory in place of a pin: list says BROKEN, incomplete" \
	"$("$FB" list | awk '$1 == "dir" { print $2, $6 }')" "BROKEN: incomplete"
"$FB" check dir >"$T_TMP/c" 2>&1
check_eq "... check exit 1" $? 1
check "... and says BROKEN" grep -q "^dir: BROKEN: filter 'dir' is incomplete" "$T_TMP/c"
t_refused 1 "... add refused, naming destroy" "is incomplete.*flowbloom destroy dir removes it" \
	"$FB" add dir src 198.51.100.1
check "... destroy removes it" "$FB" destroy dir

# 5. Not damage but not trusted: a filter directory nobody owns or anyone
# may write to, a pin replaced by a symbolic link (root's or nobody's).
# The filter may be whole; someone else may have put it there. check and
# list said "BROKEN" (the first two) or "BROKEN: ... incomplete ...
# destroy" (the links), and check --repair removed the staging directory
# beside it. They must say UNTRUSTED with the owner, mode or link found
# (check exit 1, -j "untrusted"), and check --repair change nothing: no
# unlink, rmdir or rename, the tree as it was.
# tree: the root's entries, with inode, owner, mode and link target
tree() { find "$FLOWBLOOM_ROOT" -printf '%P %i %U %m %y %l\n' | sort; }
for what in nobody 0777 rootlink nobodylink; do
	u=u_$what
	check "$what: create $u with a rule" \
		bash -c "'$FB' create $u --capacity 100 --fp-rate 0.01 --counting >/dev/null &&
			'$FB' add $u src 198.51.100.9 >/dev/null"
	mkdir "$FLOWBLOOM_ROOT/~$u" # a staging directory a killed create left
	case $what in
	nobody) chown 65534 "$FLOWBLOOM_ROOT/$u" && want="$u belongs to uid 65534" ;;
	0777) chmod 0777 "$FLOWBLOOM_ROOT/$u" && want="$u is writable by other users (mode 0777)" ;;
	*link)
		rm "$FLOWBLOOM_ROOT/$u/stats"
		ln -s "$FLOWBLOOM_ROOT/ok/stats" "$FLOWBLOOM_ROOT/$u/stats"
		owner=0
		[ "$what" = nobodylink ] && owner=65534 && chown -h 65534 "$FLOWBLOOM_ROOT/$u/stats"
		want="$u/stats is a symbolic link to $FLOWBLOOM_ROOT/ok/stats, owned by uid $owner"
		;;
	esac
	before=$(tree)
	"$FB" check $u >"$T_TMP/c" 2>&1
	check_eq "$what: check exit 1" $? 1
	check "... says UNTRUSTED and what it found" grep -q "^$u: UNTRUSTED: .*$want" "$T_TMP/c"
	"$FB" -j check $u >"$T_TMP/j" 2>&1
	check_eq "... -j: exit 1, untrusted, not clean, not repaired, no broken" \
		"$? $(t_json '"untrusted" in d, d["clean"], d["repaired"], "broken" in d' "$T_TMP/j")" \
		"1 (True, False, False, False)"
	check_eq "... list says UNTRUSTED" \
		"$("$FB" list 2>/dev/null | awk -v n=$u '$1 == n { print $2 }')" "UNTRUSTED:"
	check_eq "... list -j: untrusted, naming what it found" \
		"$("$FB" -j list 2>/dev/null | t_json '[("untrusted" in f, "broken" in f, "'"$want"'" in f.get("untrusted", "")) for f in d["filters"] if f["name"] == "'$u'"]')" \
		"[(True, False, True)]"
	# metrics skips it, as it skips a broken one, says which (it said
	# "skipping broken filter" for these), shows it by its up 0 and
	# exits 1 (it exited 0, its series simply missing).
	"$FB" metrics >"$T_TMP/m" 2>"$T_TMP/me"
	check_eq "... metrics: exit 1, an error line: it skips an untrusted filter, and why" \
		"$? $(grep -c "^flowbloom: skipping untrusted filter '$u': .*$want" "$T_TMP/me") $(wc -l <"$T_TMP/me")" "1 1 1"
	check_eq "... never called broken" "$(grep -c "broken filter '$u'" "$T_TMP/me")" 0
	check_eq "... its only series: flowbloom_filter_up 0" "$(grep "filter=\"$u\"" "$T_TMP/m")" \
		"flowbloom_filter_up{filter=\"$u\"} 0"
	check "... the others' series still there, up 1" grep -q '^flowbloom_filter_up{filter="ok"} 1$' "$T_TMP/m"
	"$FB" metrics ok $u >"$T_TMP/m" 2>"$T_TMP/me"
	check_eq "... metrics ok $u (named): exit 1, it skips it, says why, its up 0, ok's 1" \
		"$? $(grep -c "^flowbloom: skipping untrusted filter '$u': .*$want" "$T_TMP/me") $(wc -l <"$T_TMP/me") $(
			grep -c -e "^flowbloom_filter_up{filter=\"$u\"} 0$" -e '^flowbloom_filter_up{filter="ok"} 1$' \
			-e "filter=\"$u\"" "$T_TMP/m")" "1 1 1 2"
	strace -f -qq -o "$T_TMP/trace" -e trace=bpf,unlink,unlinkat,rmdir,rename,renameat,renameat2 \
		"$FB" check $u --repair >"$T_TMP/c" 2>&1
	check_eq "... check --repair: exit 1, UNTRUSTED" "$? $(head -1 "$T_TMP/c" | cut -d: -f1,2)" "1 $u: UNTRUSTED"
	check_eq "... check --repair removes nothing, renames nothing, pins nothing" \
		"$(grep -v 'resumed>' "$T_TMP/trace" | grep -v 'bpf(BPF_\(OBJ_GET\|OBJ_GET_INFO_BY_FD\|MAP_LOOKUP_ELEM\|MAP_GET_FD_BY_ID\),')" ""
	check_eq "... the tree as it was (the staging directory too)" "$(tree)" "$before"
	rmdir "$FLOWBLOOM_ROOT/~$u"
	case $what in
	nobody | 0777)
		chown 0 "$FLOWBLOOM_ROOT/$u" && chmod 0700 "$FLOWBLOOM_ROOT/$u"
		check_eq "... given back to root: the rule is there, check clean" \
			"$("$FB" query $u src 198.51.100.9 | head -1 | cut -d' ' -f1) $("$FB" check $u | head -1)" \
			"maybe $u: clean"
		;;
	*) t_refused 1 "... add refused, naming the link" "stats is a symbolic link" \
		"$FB" add $u src 198.51.100.1 ;;
	esac
	check "... destroy removes it" "$FB" destroy $u
done

# 6. Opening a pin refused by the kernel (EPERM, EACCES on the bpf
# obj-get, as a security module may): check said "BROKEN: filter 'ok' is
# incomplete ... destroy", check --repair removed the staging directory
# beside it, list said BROKEN. Not known: check exits 1 naming the
# kernel's error, check --repair changes nothing, list -j says "error".
if command -v strace >/dev/null; then
	mkdir "$FLOWBLOOM_ROOT/~ok"
	before=$(tree)
	for cmd in "check ok" "check ok --repair" "-j list"; do
		# shellcheck disable=SC2086 # the command's words
		# (counted without --repair: that run would remove ~ok)
		strace -f -qq -o "$T_TMP/trace" -e trace=bpf "$FB" ${cmd% --repair} >/dev/null 2>&1
		for n in $(grep -v 'resumed>' "$T_TMP/trace" | grep -n 'BPF_OBJ_GET,' | cut -d: -f1); do
			for e in EPERM EACCES; do
				# shellcheck disable=SC2086
				strace -f -qq -o /dev/null -e trace=bpf -e inject="bpf:error=$e:when=$n" \
					"$FB" $cmd >"$T_TMP/out" 2>"$T_TMP/err"
				rc=$?
				case $cmd in
				check*) [ "$rc" = 1 ] && grep -q "^flowbloom: cannot open filter 'ok': $(
					[ $e = EPERM ] && echo Operation not permitted || echo Permission denied)" "$T_TMP/err" &&
					! grep -q 'BROKEN\|incomplete\|destroy\|clean\|removed' "$T_TMP/out" "$T_TMP/err" ;;
				*) grep -q '"error":"cannot open filter' "$T_TMP/out" &&
					! grep -q '"broken"' "$T_TMP/out" ;;
				esac || fail "$cmd, obj-get $n refused with $e: exit $rc, $(head -c 300 "$T_TMP/out" "$T_TMP/err")"
			done
		done
		[ -n "$n" ] || fail "$cmd: no bpf obj-get traced"
	done
	# metrics: the first obj-get (the first filter's) refused. It said
	# "skipping broken filter", then exited 0 (the filter's series
	# missing, nothing in the output to say so).
	strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:error=EPERM:when=1 \
		"$FB" metrics >"$T_TMP/m" 2>"$T_TMP/me"
	check_eq "metrics, a pin's obj-get refused: exit 1, says it skips a filter not known" \
		"$? $(grep -c "^flowbloom: skipping filter '[^']*' (not known): cannot open filter '[^']*': Operation not permitted" "$T_TMP/me")" "1 1"
	check_eq "... its up 0, the others' 1" "$(grep -c '^flowbloom_filter_up{filter="[^"]*"} 0$' "$T_TMP/m") $(
		grep -c '^flowbloom_filter_up{filter="[^"]*"} 1$' "$T_TMP/m")" "1 $(($(ls "$FLOWBLOOM_ROOT" | grep -cv '^~') - 1))"
	check_eq "... never called broken" "$(grep -c broken "$T_TMP/me")" 0
	check_eq "a pin's obj-get refused by the kernel: never BROKEN, not known; the tree as it was" \
		"$(tree)" "$before"
	rmdir "$FLOWBLOOM_ROOT/~ok"
else
	skip "strace is not installed (make deps installs it)"
fi

# 7. A filter destroyed between list's (or metrics') reading of the root
# and its open of the filter (strace holds the read's end): gone, as if
# listed after. list -j said "broken": "no filter named 'gone'" (which
# destroy would say too); metrics, "skipping broken filter 'gone'". The
# command goes on once the destroy is done (strace killed, its tracee
# let go): no window a loaded machine can miss (it held 2 s, which a
# destroy there outlasted).
if command -v strace >/dev/null; then
	for cmd in "-j list" metrics; do
		check "$cmd: create gone" "$FB" create gone --capacity 100 --fp-rate 0.01
		rm -f "$T_TMP/race.rc" "$T_TMP/trace"
		# (sh reads no directory: both reads are the command's; sh keeps
		# its exit status)
		# shellcheck disable=SC2086 # the command's words
		strace -f -qq -o "$T_TMP/trace" -e trace=getdents64 \
			-e inject=getdents64:delay_exit=60000000:when=2 \
			sh -c '"$@"; echo $? >"$0"' "$T_TMP/race.rc" "$FB" $cmd >"$T_TMP/race.out" 2>"$T_TMP/race.err" &
		sp=$!
		check "... $cmd held after reading the root" t_wait_until 30 grep -qs 'DELAYED' "$T_TMP/trace"
		check "... destroyed while $cmd read the root" "$FB" destroy gone
		kill -KILL "$sp"
		wait "$sp" 2>/dev/null
		t_wait_until 30 test -s "$T_TMP/race.rc"
		check_eq "... $cmd: exit 0" "$(cat "$T_TMP/race.rc")" 0
		check_eq "... $cmd: gone is not there, not called broken" \
			"$(grep -c "gone" "$T_TMP/race.out" "$T_TMP/race.err" | cut -d: -f2 | tr '\n' ' ')" "0 0 "
		[ "$cmd" = metrics ] || check "... the others listed" grep -q '"name":"ok"' "$T_TMP/race.out"
	done
else
	skip "strace is not installed (make deps installs it)"
fi

# 8. metrics --textfile of every filter, one broken (a pin removed) and a
# directory whose name is no filter name (a byte of no UTF-8 sequence, a
# newline): the file is written whole, each skipped one's only series its
# flowbloom_filter_up 0 (the others' 1), the broken one's earlier series
# gone; then exit 1, an error line for each naming it and why (-j: an
# {"error"} each, then the answer with "skipped"). It exited 0, the file
# without a sign of them. The file is what node_exporter's textfile
# collector reads (a real scrape, when installed): a label of raw bytes
# would make it refuse the whole file.
check "create br" "$FB" create br --capacity 100 --fp-rate 0.01
mkdir -m 0755 "$T_TMP/ne"
check "metrics --textfile, every filter whole" "$FB" metrics --textfile "$T_TMP/ne/fb.prom"
check "metrics --textfile ok br (named), both whole" "$FB" metrics --textfile "$T_TMP/named.prom" ok br
rm "$FLOWBLOOM_ROOT/br/stats"
BADDIR=$FLOWBLOOM_ROOT/bad$'\xff\n'name
mkdir "$BADDIR"
"$FB" metrics --textfile "$T_TMP/ne/fb.prom" >"$T_TMP/mo" 2>"$T_TMP/me"
check_eq "metrics --textfile, a broken filter and a bad name: exit 1, an error line each, stdout empty" \
	"$? $(grep -c "^flowbloom: skipping broken filter 'br': filter 'br' is incomplete" "$T_TMP/me") $(
		LC_ALL=C grep -c "^flowbloom: skipping broken filter 'bad.*name': bad filter name" "$T_TMP/me") $(
		wc -l <"$T_TMP/me") $(wc -c <"$T_TMP/mo")" "1 1 1 2 0"
check_eq "... br's only series: up 0" "$(grep 'filter="br"' "$T_TMP/ne/fb.prom")" 'flowbloom_filter_up{filter="br"} 0'
check_eq "... the bad name's: up 0, in UTF-8 (U+FFFD), its newline escaped" \
	"$(grep 'filter="bad' "$T_TMP/ne/fb.prom")" 'flowbloom_filter_up{filter="bad'$'\xef\xbf\xbd''\nname"} 0'
check_eq "... the others: up 1, their series there" \
	"$(grep -c '^flowbloom_filter_up{filter="\(ok\|default\|big\|px\)"} 1$' "$T_TMP/ne/fb.prom") $(
		grep -c '^flowbloom_seen_packets_total{filter="\(ok\|default\|big\|px\)"} ' "$T_TMP/ne/fb.prom")" "4 4"
check_eq "... one HELP and TYPE for up" "$(grep -c '^# \(HELP\|TYPE\) flowbloom_filter_up ' "$T_TMP/ne/fb.prom")" 2
check_eq "... no temporary file left" "$(ls -A "$T_TMP/ne")" fb.prom
if command -v promtool >/dev/null; then
	check "... promtool check metrics" bash -c "promtool check metrics <'$T_TMP/ne/fb.prom'"
else
	skip "promtool check metrics: promtool not installed (make deps installs prometheus)"
fi
NE=$(command -v prometheus-node-exporter || command -v node_exporter)
if [ -n "$NE" ]; then
	# In a network namespace of its own (gone with it): a port of ours.
	unshare -n sh -c 'ip link set lo up && { "$1" --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$2" --web.listen-address=127.0.0.1:9100 >"$3.log" 2>&1 &
		p=$!; i=0; while [ $i -lt 100 ] && ! curl -sf -o "$3" http://127.0.0.1:9100/metrics; do
		sleep 0.1; i=$((i + 1)); done; kill $p; }' _ "$NE" "$T_TMP/ne" "$T_TMP/scrape"
	check_eq "... node_exporter: the file read, br down, ok up" "$(grep -c \
		-e '^node_textfile_scrape_error 0$' -e '^flowbloom_filter_up{filter="br"} 0$' \
		-e '^flowbloom_filter_up{filter="ok"} 1$' "$T_TMP/scrape" 2>&1)" 3
else
	skip "node_exporter's scrape: prometheus-node-exporter not installed"
fi
"$FB" -j metrics --textfile "$T_TMP/ne/fb.prom" >"$T_TMP/mo" 2>/dev/null
check_eq "... -j: exit 1, an {\"error\"} each, then the answer" "$? $("$PY" -c 'import json, sys
print(" ".join("error" if "error" in d else "filters=%d skipped=%d" % (d["filters"], d["skipped"])
	for d in map(json.loads, open(sys.argv[1]))))' "$T_TMP/mo" 2>&1)" \
	"1 error error filters=4 skipped=2"
# Named, a filter that is there but broken is skipped so too: the file
# written, its up 0 (an alert on up 0 sees it), exit 1. (It wrote
# nothing: the file of the run before kept br's up 1.) A NAME that is no
# filter is the run's one error, the file left as it was; one that is no
# filter name a usage error.
"$FB" metrics --textfile "$T_TMP/named.prom" ok br >"$T_TMP/mo" 2>"$T_TMP/me"
check_eq "metrics --textfile ok br, br broken: exit 1, one error line, stdout empty" \
	"$? $(grep -c "^flowbloom: skipping broken filter 'br': filter 'br' is incomplete" "$T_TMP/me") $(
		wc -l <"$T_TMP/me") $(wc -c <"$T_TMP/mo")" "1 1 1 0"
check_eq "... the file written: br's only series its up 0, ok's up 1" "$(grep -c \
	-e '^flowbloom_filter_up{filter="br"} 0$' -e '^flowbloom_filter_up{filter="ok"} 1$' \
	-e '^flowbloom_seen_packets_total{filter="ok"} ' -e 'filter="br"' "$T_TMP/named.prom")" 3
"$FB" -j metrics --textfile "$T_TMP/named.prom" br ok br >"$T_TMP/mo" 2>/dev/null
check_eq "... -j, br named twice: exit 1, one {\"error\"}, then the answer" "$? $("$PY" -c 'import json, sys
print(" ".join("error" if "error" in d else "filters=%d skipped=%d" % (d["filters"], d["skipped"])
	for d in map(json.loads, open(sys.argv[1]))))' "$T_TMP/mo" 2>&1)" "1 error filters=1 skipped=1"
"$FB" metrics br >"$T_TMP/mo" 2>"$T_TMP/me"
check_eq "... metrics br (stdout): exit 1, the error line, br's up 0 printed" \
	"$? $(wc -l <"$T_TMP/me") $(grep -v '^#' "$T_TMP/mo")" '1 1 flowbloom_filter_up{filter="br"} 0'
cp "$T_TMP/named.prom" "$T_TMP/named.before"
"$FB" -j metrics --textfile "$T_TMP/named.prom" br nope ok >"$T_TMP/mo" 2>"$T_TMP/me"
check_eq "... br nope ok: exit 1, one error (nope's), one {\"error\"}, the file as it was" \
	"$? $(cat "$T_TMP/me") $(t_json 'd["error"]' "$T_TMP/mo") $(wc -l <"$T_TMP/mo") $(cmp "$T_TMP/named.before" "$T_TMP/named.prom" && echo same)" \
	"1 flowbloom: no filter named 'nope' (see flowbloom list) no filter named 'nope' (see flowbloom list) 1 same"
"$FB" metrics --textfile "$T_TMP/named.prom" -- br a.b >/dev/null 2>"$T_TMP/me"
check_eq "... br a.b: exit 2, bad filter name, the file as it was" \
	"$? $(grep -c "bad filter name 'a.b'" "$T_TMP/me") $(cmp "$T_TMP/named.before" "$T_TMP/named.prom" && echo same)" "2 1 same"
rmdir "$BADDIR"
check "... destroy br" "$FB" destroy br
check "metrics --textfile again: exit 0" "$FB" metrics --textfile "$T_TMP/ne/fb.prom"
check_eq "... br gone from the file" "$(grep -c 'filter="br"' "$T_TMP/ne/fb.prom")" 0

check "ok: still clean" "$FB" check ok
check_eq "ok: -j clean, nothing repaired by a check --repair" \
	"$("$FB" -j check ok --repair | t_json 'd["clean"], d["repaired"], d["shared_chunks"]')" "(True, False, 0)"
check "destroy default" "$FB" destroy default
t_end
