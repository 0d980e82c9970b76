#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Prefixes written with host bits set (203.0.113.1/24) are taken masked, as
# iptables and nft take them, and said so on stderr, never on stdout.
#
# FLOW arguments (add, del, query, count, traffic): one line per such
# prefix, naming it and what it was taken as; IPv4 and IPv6, src and dst,
# alone and in clause rules (udp dst 203.0.113.9/24 dport 53). A canonical
# prefix says nothing. Files (add -f, del -f, load, load --replace, apply's
# lists): one line per file, how many and the first one's FILE:LINE. With
# -j, stdout is still one JSON document. What is stored is what the
# canonical prefix stores: `info -j` digest and bits, `query` answers.
source "$(dirname "$0")/../lib/lib.sh"
t_begin hostbits
t_traps

GEO=(--bits 65536 --hashes 4)
# Counting filters, for del and count too.
GEO=(--counting "${GEO[@]}")
"$FB" create h "${GEO[@]}" >/dev/null || fail "create h"
"$FB" create c "${GEO[@]}" >/dev/null || fail "create c"

# warns LABEL WANT CMD...: CMD succeeds, its stderr is exactly WANT (one
# line per entry of WANT, "" for none), nothing of it on stdout.
warns() {
	local label=$1 want=$2
	shift 2
	if ! "$@" >"$T_TMP/out" 2>"$T_TMP/err"; then
		fail "$label: failed: $(head -c 300 "$T_TMP/err")"
	elif [ "$(cat "$T_TMP/err")" != "$want" ]; then
		fail "$label: stderr '$(cat "$T_TMP/err")', want '$want'"
	elif grep -q "host bits" "$T_TMP/out"; then
		fail "$label: the warning on stdout"
	else
		pass "$label"
	fi
}
hb() { echo "flowbloom: warning: $1 has host bits set: taken as $2"; }

# Each form, in h; its canonical twin, silent, in c.
FORMS=(
	"src 203.0.113.1/24|src 203.0.113.0/24"
	"dst 198.51.100.77/25|dst 198.51.100.0/25"
	"src 2001:db8::1/32|src 2001:db8::/32"
	"dst 2001:db8:5:6::9/48|dst 2001:db8:5::/48"
	"udp dst 203.0.113.9/24 dport 53|udp dst 203.0.113.0/24 dport 53"
	"tcp src 2001:db8:1::7/64 dport 443|tcp src 2001:db8:1::/64 dport 443"
	"any src 198.51.100.200/30|any src 198.51.100.200/30"
)
for f in "${FORMS[@]}"; do
	bad=${f%|*}
	good=${f#*|}
	read -ra B <<<"$bad"
	read -ra G <<<"$good"
	# The prefix words of bad: "src X" or "dst X" with a slash.
	want=""
	for ((i = 0; i + 1 < ${#B[@]}; i++)); do
		case "${B[i]}" in src | dst) ;; *) continue ;; esac
		[ "${B[i + 1]}" == "${G[i + 1]}" ] && continue
		want+="${want:+$'\n'}$(hb "${B[i]} ${B[i + 1]}" "${G[i + 1]}")"
	done
	warns "add $bad" "$want" "$FB" add h "${B[@]}"
	warns "add $good: nothing said" "" "$FB" add c "${G[@]}"
done
# Two in one rule, and two FLOW arguments: a line each, in order.
warns "add: a line per prefix of a rule" \
	"$(hb "src 198.51.100.9/24" 198.51.100.0/24)"$'\n'"$(hb "dst 203.0.113.9/28" 203.0.113.0/28)" \
	"$FB" add h any src 198.51.100.9/24 dst 203.0.113.9/28
warns "add: a line per FLOW argument" \
	"$(hb "src 198.51.100.9/24" 198.51.100.0/24)"$'\n'"$(hb "dst 2001:db8::9/120" 2001:db8::/120)" \
	"$FB" add h src 198.51.100.9/24 dst 2001:db8::9/120
"$FB" add c any src 198.51.100.0/24 dst 203.0.113.0/28 >/dev/null
"$FB" add c src 198.51.100.0/24 dst 2001:db8::/120 >/dev/null

# The same content: bits set, flows, lengths, shapes (the digest is of
# the bits, which each filter's own hash key places); the same answers.
info() { "$FB" -j info "$1" | t_json "(d['bits_set'], d['flows'], d['prefix_lengths'], d['shapes'])"; }
check_eq "stored as the canonical prefix: info -j" "$(info h)" "$(info c)"
Q=(src 203.0.113.0 src 203.0.113.255 src 203.0.113.1 src 203.0.114.1 dst 198.51.100.1
	dst 198.51.100.128 src 2001:db8:ffff::1 dst 2001:db8:5:ffff::1 dst 2001:db8:6::1
	udp 198.51.100.1:9 203.0.113.200:53 udp 198.51.100.1:9 203.0.114.200:53)
q() { "$FB" -j query "$1" "${Q[@]}" | t_json "[r['result'] for r in d['results']]"; }
check_eq "stored as the canonical prefix: query" "$(q h)" "$(q c)"
check_eq "query: the host bits' own answers" "$(q h)" \
	"['maybe', 'maybe', 'maybe', 'no', 'maybe', 'no', 'maybe', 'maybe', 'no', 'no', 'no']"

# -j: the warning on stderr, stdout one JSON document.
"$FB" -j query h src 203.0.113.1/24 >"$T_TMP/j" 2>"$T_TMP/err"
check_eq "query -j: the warning on stderr" "$(cat "$T_TMP/err")" \
	"$(hb "src 203.0.113.1/24" 203.0.113.0/24)"
check_eq "query -j: stdout is JSON" "$(t_json "d['results'][0]['flow']" "$T_TMP/j")" \
	"src 203.0.113.0/24"
"$FB" -j add h dst 2001:db8::1/64 >"$T_TMP/j" 2>"$T_TMP/err"
check "add -j: stdout is JSON" t_json True "$T_TMP/j"
check_eq "add -j: the warning on stderr" "$(cat "$T_TMP/err")" \
	"$(hb "dst 2001:db8::1/64" 2001:db8::/64)"
"$FB" add c dst 2001:db8::/64 >/dev/null

# The other verbs that read FLOWs.
warns "del" "$(hb "src 203.0.113.1/24" 203.0.113.0/24)" "$FB" del h src 203.0.113.1/24
"$FB" del c src 203.0.113.0/24 >/dev/null
check_eq "del: the canonical prefix's rule gone" "$(q h)" "$(q c)"
"$FB" add h src 203.0.113.0/24 >/dev/null
warns "count" "$(hb "src 203.0.113.1/24" 203.0.113.0/24)" "$FB" count h src 203.0.113.1/24
check_eq "count: the canonical prefix's" "$("$FB" count h src 203.0.113.1/24 2>/dev/null)" \
	"$("$FB" count h src 203.0.113.0/24)"
# traffic reads its FLOWs before it asks for the monitor (h has none).
"$FB" traffic h src 203.0.113.1/24 >/dev/null 2>"$T_TMP/err"
check "traffic: the warning" grep -qxF "$(hb "src 203.0.113.1/24" 203.0.113.0/24)" "$T_TMP/err"

# Files: 3 such lines among canonical ones and comments, the first on
# line 3; one summary line per file.
printf '# list\nsrc 198.51.100.0/24\nsrc 198.51.100.130/25\n\ndst 203.0.113.7/29\n' >"$T_TMP/f.txt"
printf 'udp dst 2001:db8::53/64 dport 53\n' >>"$T_TMP/f.txt"
printf '198.51.100.0/24\n# c\n198.51.100.130/25\ndst 203.0.113.7/29\n' >"$T_TMP/l.txt"
printf '2001:db8::53/64\n203.0.113.0/24\n' >>"$T_TMP/l.txt"
sum() { echo "flowbloom: warning: $1: 3 prefixes have host bits set, taken masked; the first: $1:$2: $3"; }
FSUM=$(sum "$T_TMP/f.txt" 3 "src 198.51.100.130/25 taken as 198.51.100.128/25")
LSUM=$(sum "$T_TMP/l.txt" 3 "src 198.51.100.130/25 taken as 198.51.100.128/25")
"$FB" create fh "${GEO[@]}" >/dev/null
"$FB" create fc "${GEO[@]}" >/dev/null
warns "add -f: one summary" "$FSUM" "$FB" add fh -f "$T_TMP/f.txt"
"$FB" add fc src 198.51.100.0/24 src 198.51.100.128/25 dst 203.0.113.0/29 \
	udp dst 2001:db8::/64 dport 53 >/dev/null
check_eq "add -f: stored as the canonical prefixes" "$(info fh)" "$(info fc)"
warns "query -f: one summary" "$FSUM" "$FB" -j query fh -f "$T_TMP/f.txt"
cp "$T_TMP/out" "$T_TMP/j"
check "query -f -j: stdout is JSON" t_json True "$T_TMP/j"
warns "del -f: one summary" "$FSUM" "$FB" del fh -f "$T_TMP/f.txt"
"$FB" del fc -f "$T_TMP/f.txt" >/dev/null 2>&1
check_eq "del -f: as the canonical prefixes" "$(info fh)" "$(info fc)"
printf '# x\n\nsrc 203.0.113.9/24\n' >"$T_TMP/one.txt"
warns "a file with one: its FILE:LINE" \
	"flowbloom: warning: $T_TMP/one.txt:3: src 203.0.113.9/24 has host bits set: taken as 203.0.113.0/24" \
	"$FB" add fh -f "$T_TMP/one.txt"

"$FB" create lh "${GEO[@]}" >/dev/null
"$FB" create lc "${GEO[@]}" >/dev/null
printf '198.51.100.0/24\n198.51.100.128/25\ndst 203.0.113.0/29\n2001:db8::/64\n203.0.113.0/24\n' \
	>"$T_TMP/lc.txt"
warns "load: one summary" "$LSUM" "$FB" load lh "$T_TMP/l.txt"
"$FB" load lc "$T_TMP/lc.txt" >/dev/null
check_eq "load: stored as the canonical prefixes" "$(info lh)" "$(info lc)"
check_eq "load: the same query answers" "$(q lh)" "$(q lc)"
warns "load: a canonical list says nothing" "" "$FB" load lc "$T_TMP/lc.txt"
warns "load --replace: one summary per file" "$LSUM"$'\n'"$FSUM" \
	"$FB" load --replace lh "$T_TMP/l.txt" "$T_TMP/f.txt"
"$FB" -j load --replace lh "$T_TMP/l.txt" >"$T_TMP/j" 2>"$T_TMP/err"
check_eq "load -j: the summary on stderr" "$(cat "$T_TMP/err")" "$LSUM"
check "load -j: stdout is JSON" t_json True "$T_TMP/j"
"$FB" load --replace lc "$T_TMP/lc.txt" >/dev/null
check_eq "load --replace: as the canonical prefixes" "$(info lh)" "$(info lc)"
# A stdin list is named as errors name it.
"$FB" load lh - <"$T_TMP/l.txt" >/dev/null 2>"$T_TMP/err"
check_eq "load -: the summary names <stdin>" "$(cat "$T_TMP/err")" \
	"$(sum "<stdin>" 3 "src 198.51.100.130/25 taken as 198.51.100.128/25")"

# apply's lists (--check: nothing created).
mkdir "$T_TMP/conf"
cp "$T_TMP/l.txt" "$T_TMP/conf/l.txt"
printf 'capacity = 1000\nfp-rate = 0.001\naction = drop\nload = l.txt\n' >"$T_TMP/conf/edge.conf"
"$FB" apply --check "$T_TMP/conf/edge.conf" >"$T_TMP/out" 2>"$T_TMP/err"
check_eq "apply --check: one summary for its list" "$(cat "$T_TMP/err")" \
	"$(sum "$T_TMP/conf/l.txt" 3 "src 198.51.100.130/25 taken as 198.51.100.128/25")"
check "apply --check: no warning on stdout" bash -c "! grep -q 'host bits' '$T_TMP/out'"

# A bad line later in the file: its error alone, nothing loaded.
printf '203.0.113.9/24\nnonsense\n' >"$T_TMP/bad.txt"
t_refused 1 "a refused file: its error alone" "bad.txt:2:" "$FB" load lh "$T_TMP/bad.txt"

t_finish
