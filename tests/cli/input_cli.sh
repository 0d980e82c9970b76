#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Hostile file input. Every reader (add/del/query -f, load, stdin '-') goes
# through one line reader; each way input can fail must exit 1 with one
# line naming FILE (and LINE), and leave the filter's content digest
# (`info -j`, over bits and counters) exactly as it was:
#   a directory (load --replace used to empty the filter), /dev/zero (used
#   to grow without bound), a pipe cut mid-line, a line over 8192 bytes, a
#   pipe giving more than 1 GiB, NUL bytes, a read error (EIO injected into
#   the real binary's read(2) by strace), and allocation failure (ulimit -v)
#   both inside a huge line and between lines.
# apply's NAME.conf goes through the same reader (a huge line under ulimit
# -v used to end it early, the lines after it never applied).
# Control characters quoted in an error reach the terminal escaped (\x1b).
# Also: a leading UTF-8 BOM is skipped; IPv6 rules for extension-header
# protocols are refused; `list` without privileges says so; a refused
# flow's line is named right after long runs of comments and blank lines.
# Every -f reads what load reads (netset, DROP, ranges, bare addresses,
# FLOWs): the same rules, del -f undoing load, a bad line of each format
# named FILE:LINE by every verb, host bits told alike; traffic and query
# --packet refuse what they cannot take by their own rule.
source "$(dirname "$0")/../lib/lib.sh"
t_begin input_cli
t_traps

digest() { "$FB" -j info "$1" | t_json 'd["digest"]'; }
# fails_named LABEL PATTERN CMD...: exit 1, one stderr line matching PATTERN.
fails_named() { t_refused 1 "$@"; }

check "create a plain filter" "$FB" create in1 --capacity 100000 --fp-rate 0.001
check "create a counting filter" "$FB" create in2 --capacity 100000 --fp-rate 0.001 --counting
good=$T_TMP/good.txt
python3 -c '
for i in range(2000): print("udp 198.51.100.%d:%d 203.0.113.%d:53" % (i % 250, 1024 + i, i % 200))' >"$good"
check "fill in1" "$FB" load in1 "$good"
check "fill in2" "$FB" add in2 -f "$good"
d1=$(digest in1)
d2=$(digest in2)
same() { check_eq "$1: in1 digest unchanged" "$(digest in1)" "$d1"
	check_eq "$1: in2 digest unchanged" "$(digest in2)" "$d2"; }

# A directory: open() succeeds, read() fails with EISDIR.
fails_named "load --replace of a directory" "/etc: is a directory" "$FB" load in1 /etc --replace
fails_named "add -f of a directory" "/etc: is a directory" "$FB" add in1 -f /etc
fails_named "del -f of a directory" "/etc: is a directory" "$FB" del in2 -f /etc
fails_named "query -f of a directory" "/etc: is a directory" "$FB" query in1 -f /etc
fails_named "load: directory as stdin" "<stdin>: is a directory" bash -c "'$FB' load in1 - --replace </etc"
same "directory"

# Endless input without a newline: bounded by the line length, quickly, in
# little memory (ulimit -v: a reader that grows would fail differently).
fails_named "add -f /dev/zero" "/dev/zero:1: line longer than 8192 bytes" \
	bash -c "ulimit -v 400000; exec timeout 20 '$FB' add in1 -f /dev/zero"
fails_named "load /dev/zero --replace" "/dev/zero:1: line longer" \
	bash -c "ulimit -v 400000; exec timeout 20 '$FB' load in1 /dev/zero --replace"
fails_named "load: endless line on stdin" "<stdin>:1: line longer" \
	bash -c "ulimit -v 400000; yes | tr -d '\n' | timeout 20 '$FB' load in1 - --replace"
python3 -c 'print("src 198.51.100.1"); print("src 198.51.100.2 " + " " * 8200)' >"$T_TMP/long.txt"
fails_named "a line over 8192 bytes in a file" "long.txt:2: line longer than 8192 bytes" \
	"$FB" load in1 "$T_TMP/long.txt"
python3 -c 'print("src 198.51.100.1 #" + "x" * 8150)' >"$T_TMP/long-ok.txt"
check "a line of 8170 bytes is fine" "$FB" query in1 -f "$T_TMP/long-ok.txt"

# A pipe cut mid-line: '198.51.100.12' cut to '198.51.100.1' is still a
# valid address, so a pipe's last line must end with a newline.
fails_named "cut pipe: add -f -" "<stdin>:2: last line has no newline" \
	bash -c "printf 'src 198.51.100.7\nsrc 198.51.100.1' | '$FB' add in1 -f -"
fails_named "cut pipe: load -" "<stdin>:3: last line has no newline" \
	bash -c "printf '198.51.100.7\n\n198.51.100.1' | '$FB' load in1 - --replace"
fails_named "cut pipe: del -f -" "<stdin>:1: last line has no newline" \
	bash -c "printf 'udp 198.51.100.0:1024 203.0.113.0:53' | '$FB' del in2 -f -"
fails_named "cut FIFO: load" "fifo:2: last line has no newline" bash -c \
	"mkfifo '$T_TMP/fifo' && { printf 'src 198.51.100.7\nsrc 1' >'$T_TMP/fifo' & exec '$FB' load in1 '$T_TMP/fifo'; }"
printf 'src 203.0.113.77' >"$T_TMP/nonl.txt"
check "a regular file may omit the last newline" "$FB" query in1 -f "$T_TMP/nonl.txt"
check_eq "  ... and its last line is read" "$(tail -1 "$T_TMP/out")" "0 of 1 maybe"

# More than 1 GiB from a pipe (8000-byte comment lines: quick to make).
comment="#$(printf '%07999d' 0)"
fails_named "a pipe over 1 GiB" "<stdin>:[0-9]*: more than 1024 MiB from a pipe" \
	bash -c "yes '$comment' | timeout 60 '$FB' load in1 - --replace"

# NUL bytes.
printf 'src 198.51.100.7\nsrc 198.51.100.8\0junk\n' >"$T_TMP/nul.txt"
fails_named "NUL byte" "nul.txt:2: NUL byte" "$FB" load in1 "$T_TMP/nul.txt" --replace
fails_named "NUL byte (add)" "nul.txt:2: NUL byte" "$FB" add in1 -f "$T_TMP/nul.txt"
same "endless, long, cut, NUL"

# The line a refused flow came from, after long runs of comments and blank
# lines (a flow's line is kept as the step from the previous flow's, a step
# over 254 apart), and the rule of a line that makes several.
{
	for i in $(seq 300); do echo "# comment $i"; done
	sed -n 1p "$good"
	for i in $(seq 400); do echo; done
	sed -n 2p "$good"
	echo "udp 198.51.100.1:9 203.0.113.1:53"
} >"$T_TMP/gap.txt"
fails_named "del -f after 300 comments and 400 blank lines names the line" \
	"gap.txt:703: 'udp 198.51.100.1:9 203.0.113.1:53' is not in filter 'in2'" \
	"$FB" del in2 -f "$T_TMP/gap.txt"
fails_named "... and from stdin" "<stdin>:703: 'udp 198.51.100.1:9 203.0.113.1:53'" \
	bash -c "'$FB' del in2 -f - <'$T_TMP/gap.txt'"
sed -i '$d' "$T_TMP/gap.txt"
for i in $(seq 255); do echo "#"; done >>"$T_TMP/gap.txt"
echo "udp dst 203.0.113.7 dport 53-54" >>"$T_TMP/gap.txt"
fails_named "del -f: a rule of a line that makes several, after 255 comments" \
	"gap.txt:958 (rule 1 of the 2 it makes): 'udp dst 203.0.113.7 dport 53'" \
	"$FB" del in2 -f "$T_TMP/gap.txt"
same "long gaps between lines"

# Control characters quoted from the input (an escape sequence that would
# retitle or rewrite the operator's terminal) reach stderr escaped.
printf 'src 198.51.100.7\nsrc 198.51.100.\033]0;owned\007\033[2J\n' >"$T_TMP/esc.txt"
fails_named "escape sequence in a list" "esc.txt:2: bad address.*198\.51\.100\.\\\\x1b]0" \
	"$FB" load in1 "$T_TMP/esc.txt" --replace
check_eq "... no control character on stderr" "$(tr -d '\n\t' <"$T_TMP/err" | LC_ALL=C grep -c '[[:cntrl:]]')" 0
same "escape sequence"

# A long token quoted in an error (an 8000-byte word, 2000 ESC bytes that
# show as 8000) shows its start only, with what was left out: the reason
# after it (and "nothing loaded") always ends the line, which stays short.
# Quoted whole, the 8192-byte message buffer, or a reason's own buffer,
# cut the line's end off.
short_line() { # short_line LABEL: stderr's first line under 400 bytes
	local n
	n=$(head -n 1 "$T_TMP/err" | wc -c)
	[ "$n" -lt 400 ] && pass "$1: message of $n bytes" || fail "$1: message of $n bytes"
}
"$PY" -c 'print("src 198.51.100.7"); print("A" * 8000)' >"$T_TMP/longword.txt"
"$PY" -c 'print("src 198.51.100.7"); print("\x1b" * 2000)' >"$T_TMP/escword.txt"
"$PY" -c 'print("198.51.100.7-" + "1" * 8000)' >"$T_TMP/longrange.txt"
fails_named "an 8000-byte word in a list" \
	"longword.txt:2: bad address or prefix 'A\{80\}\.\.\. (7920 more bytes)' (want ADDR or ADDR/LEN)$" \
	"$FB" load in1 "$T_TMP/longword.txt" --replace
short_line "an 8000-byte word in a list"
fails_named "2000 ESC bytes in a list" \
	"escword.txt:2: bad address or prefix '\(\\\\x1b\)\{20\}\.\.\. (1980 more bytes)' (want ADDR or ADDR/LEN)$" \
	"$FB" add in1 -f "$T_TMP/escword.txt"
short_line "2000 ESC bytes in a list"
fails_named "a range with an 8000-byte end" "longrange.txt:1: bad range '198\.51\.100\.7-1\{80\}\.\.\. (7920 more bytes)' (want ADDR-ADDR, one family)$" \
	"$FB" query in1 -f "$T_TMP/longrange.txt"
short_line "a range with an 8000-byte end"
t_refused 2 "an 8000-byte FLOW argument" "argument 1: bad dport '9\{80\}\.\.\. (7920 more bytes)' (want PORT or LOW-HIGH, 0-65535, without a leading zero)$" \
	"$FB" add in1 udp dst 203.0.113.7 dport "$("$PY" -c 'print("9" * 8000)')"
short_line "an 8000-byte FLOW argument"
t_refused 2 "a 9000-byte option value" "bad number '12x\{78\}\.\.\. (8920 more bytes)' for --capacity$" \
	"$FB" create in9 --capacity "12$("$PY" -c 'print("x" * 8998)')"
short_line "a 9000-byte option value"
mkdir -p "$T_TMP/conf"
"$PY" -c 'print("capacity = 10"); print("layout = " + "\x1b" * 2060)' >"$T_TMP/conf/in9.conf"
fails_named "apply: 2060 ESC bytes as a value" \
	"in9.conf:2: bad value '\(\\\\x1b\)\{20\}\.\.\. (2040 more bytes)' for layout (want blocked|classic)$" \
	"$FB" apply --check "$T_TMP/conf/in9.conf"
short_line "apply: 2060 ESC bytes as a value"
"$PY" -c 'print("capacity = 10"); print("\x1b" * 2060 + " = 1")' >"$T_TMP/conf/in9.conf"
fails_named "apply: 2060 ESC bytes as a key" \
	"in9.conf:2: unknown key '\(\\\\x1b\)\{20\}\.\.\. (2040 more bytes)' (want capacity, .*, allow-empty)$" \
	"$FB" apply --check "$T_TMP/conf/in9.conf"
short_line "apply: 2060 ESC bytes as a key"
check_eq "... no control character on stderr" "$(tr -d '\n\t' <"$T_TMP/err" | LC_ALL=C grep -c '[[:cntrl:]]')" 0
same "long tokens"

# EIO from read(2) in the middle of the file, injected into the real binary.
# Count the reads before the file is opened (the dynamic loader reads
# libraries; every verb reads its file before anything else) on a harmless
# `query`, then fail the third read of the file.
big=$T_TMP/big.txt
python3 -c '
for i in range(60000): print("src 198.51.%d.%d" % (i // 256 % 256, i % 256))' >"$big"
strace -f -qq -o "$T_TMP/st" -e trace=openat,read "$FB" query in1 -f "$big" >/dev/null 2>&1
# (The file may be opened one path component at a time: "big.txt" last.)
reads_before=$(awk 'index($0, "big.txt\"") { exit } /read\(/ { c++ } END { print c + 0 }' "$T_TMP/st")
eio() { # eio VERB-ARGS...: run with the 3rd read of $big failing
	strace -f -qq -o /dev/null -e trace=read -e inject=read:error=EIO:when=$((reads_before + 3)) "$@"
}
fails_named "EIO mid-file: load --replace" "big.txt:[0-9]*: read error: Input/output error" \
	eio "$FB" load in1 "$big" --replace
fails_named "EIO mid-file: load" "big.txt:[0-9]*: read error: Input/output error" \
	eio "$FB" load in1 "$big"
fails_named "EIO mid-file: add -f" "big.txt:[0-9]*: read error: Input/output error" \
	eio "$FB" add in2 -f "$big"
fails_named "EIO mid-file: del -f" "big.txt:[0-9]*: read error: Input/output error" \
	eio "$FB" del in2 -f "$big"
line=$(grep -o 'big.txt:[0-9]*' "$T_TMP/err" | cut -d: -f2)
[ "${line:-0}" -gt 1000 ] && [ "$line" -lt 60000 ] && pass "EIO named a line in the middle ($line)" ||
	fail "EIO line '$line' not in the middle"
same "EIO"

# A list written in place while it is read (a download with `curl -o` or
# `wget -O` onto the list a timer loads): the reader got the old file's
# first chunk (73728 bytes, ending inside '198.51.100.0/24'), then the
# file was truncated or rewritten. Its text as read never existed: a
# regular file may omit its last newline, so the cut line was taken as
# 198.51.100.0/2 (192.0.0.0/2, a quarter of IPv4) with only a host-bits
# warning. The second read is held back (strace) until the first is done
# and the file changed.
python3 -c '
s = ""
while len(s) < 73728 - 14 - 40:
    s += "# padding padding padding padding pad\n"
s += "#" * (73728 - 14 - len(s) - 1) + "\n"
print(s + "198.51.100.0/24\n203.0.113.9", end="")' >"$T_TMP/inplace.orig"
inplace() { # inplace HOW VERB-ARGS...: the list changed (HOW) after its first read
	local how=$1 i
	shift
	cp "$T_TMP/inplace.orig" "$T_TMP/inplace.txt"
	: >"$T_TMP/st.out"
	strace -f -qq -o "$T_TMP/st.out" -P "$T_TMP/inplace.txt" -e trace=read \
		-e inject=read:delay_enter=2000000:when=2 "$@" &
	for i in $(seq 200); do
		grep -q ' = 73728' "$T_TMP/st.out" && break
		sleep 0.05
	done
	case $how in
	truncate) : >"$T_TMP/inplace.txt" ;;
	rewrite) sed 's/^#/;/' "$T_TMP/inplace.orig" >"$T_TMP/inplace.txt" ;;
	rename) echo 203.0.113.10 >"$T_TMP/inplace.new" && mv "$T_TMP/inplace.new" "$T_TMP/inplace.txt" ;;
	esac
	wait $!
}
fails_named "a list truncated while read: load --replace" \
	"inplace.txt:1941: changed while it was read" inplace truncate "$FB" load in1 "$T_TMP/inplace.txt" --replace
fails_named "a list truncated while read: load" \
	"inplace.txt:1941: changed while it was read" inplace truncate "$FB" load in1 "$T_TMP/inplace.txt"
fails_named "a list rewritten (same size) while read: load --replace" \
	"inplace.txt:1942: changed while it was read" inplace rewrite "$FB" load in1 "$T_TMP/inplace.txt" --replace
same "a list changed while read"
check "create a third filter" "$FB" create in3 --capacity 1000 --fp-rate 0.001
check "a list left alone while read loads" inplace none "$FB" load in3 "$T_TMP/inplace.txt"
check_eq "... its two rules" "$(grep -o 'loaded [0-9]* rules' "$T_TMP/out")" "loaded 2 rules"
check "a list renamed over while read: the old file loads whole" \
	inplace rename "$FB" load in3 "$T_TMP/inplace.txt" --replace
check_eq "... the old file's rules, not the new one's" \
	"$("$FB" query in3 src 198.51.100.5 src 203.0.113.9 src 203.0.113.10 | tr '\n' ' ')" \
	"maybe src 198.51.100.5 maybe src 203.0.113.9 no    src 203.0.113.10 2 of 3 maybe "

# Allocation failure: inside one huge line (getline used to take ENOMEM
# for the end of the file and load what came before), and between lines.
python3 -c '
print("src 198.51.100.66")
print("src 198.51.100.67 #" + "x" * 300000000)' >"$T_TMP/hugeline.txt"
fails_named "huge line under ulimit -v" "hugeline.txt:2: line longer" \
	bash -c "ulimit -v 200000; exec '$FB' load in1 '$T_TMP/hugeline.txt' --replace"
rm -f "$T_TMP/hugeline.txt"
python3 -c '
import sys
# 3M lines: src 198.A.B.C for i < 3000000 (i = A B C in base 256), 65536
# lines at a time from one template
t = "".join("src 198.%%d.%d.%d\n" % (b, c) for b in range(256) for c in range(256))
for a in range(3000000 // 65536):
    sys.stdout.write(t % ((a,) * 65536))
sys.stdout.write("".join(t.splitlines(True)[:3000000 % 65536]) % ((3000000 // 65536,) * (3000000 % 65536)))' >"$T_TMP/many.txt"
fails_named "ENOMEM between lines: load" "many.txt:[0-9]*: out of memory after" \
	bash -c "ulimit -v 150000; exec '$FB' load in1 '$T_TMP/many.txt' --replace"
# A filter of more bits than the file has lines: its bound (one rule a
# bit) is not what stops the read (endless.sh checks that).
check "a filter of 8 Mbit" "$FB" create inbig --bits 8000000 --hashes 2
fails_named "ENOMEM between lines: add -f" "many.txt:[0-9]*: out of memory after" \
	bash -c "ulimit -v 150000; exec '$FB' add inbig -f '$T_TMP/many.txt'"
rm -f "$T_TMP/many.txt"
same "ENOMEM"

# apply's NAME.conf goes through the same reader. It used getline, which
# took running out of memory inside a huge line for the end of the file:
# the lines after it (an attach, a load) were never read and apply went
# ahead without them. A 100 MB comment line (a hole in a sparse file: a
# configuration must be a regular file), under ulimit -v; /dev/zero as
# NAME.conf (getline grew without bound) is no regular file: refused at
# once (add -f and load read it above).
huge_conf() { # huge_conf APPLY-ARGS...: apply on $T_TMP/huge.conf
	printf 'capacity = 100\nfp-rate = 0.01\n# ' >"$T_TMP/huge.conf"
	truncate -s +100000000 "$T_TMP/huge.conf"
	printf '\nattach = nosuchdev0\n' >>"$T_TMP/huge.conf"
	bash -c "ulimit -v 100000; exec '$FB' apply $* '$T_TMP/huge.conf'"
}
fails_named "apply --check: a huge line ends the read" "huge.conf:3: line longer than 4096 bytes" \
	huge_conf --check
fails_named "apply: a huge line ends the read" "huge.conf:3: line longer than 4096 bytes" huge_conf
check_eq "apply: a huge line: no filter created" "$("$FB" list | grep -c '^huge ')" 0
ln -s /dev/zero "$T_TMP/zero.conf"
fails_named "apply: /dev/zero as NAME.conf" "zero.conf: not a regular file" \
	bash -c "ulimit -v 100000; exec timeout 20 '$FB' apply --check '$T_TMP/zero.conf'"
python3 -c 'print("capacity = 100 #" + "x" * 4090); print("fp-rate = 0.01")' >"$T_TMP/long.conf"
fails_named "apply: a line over 4096 bytes" "long.conf:1: line longer than 4096 bytes" \
	"$FB" apply --check "$T_TMP/long.conf"
printf 'capacity = 100\nfp-rate = 0.01' >"$T_TMP/nonl.conf"
check "apply: the last line may omit its newline" "$FB" apply --check "$T_TMP/nonl.conf"
rm -f "$T_TMP/huge.conf" "$T_TMP/zero.conf"

# A leading UTF-8 BOM (Windows editors) is not part of the first entry.
printf '\xef\xbb\xbfsrc 203.0.113.5\nudp 198.51.100.9:1 203.0.113.9:2\n' >"$T_TMP/bom.txt"
check "add -f of a file with a BOM" "$FB" add in1 -f "$T_TMP/bom.txt"
printf '\xef\xbb\xbf203.0.113.6\n' >"$T_TMP/bom2.txt"
check "load of a file with a BOM" "$FB" load in1 "$T_TMP/bom2.txt"
out=$("$FB" query in1 src 203.0.113.5 src 203.0.113.6 udp 198.51.100.9:1 203.0.113.9:2 | tail -1)
check_eq "BOM files: every entry is in" "$out" "3 of 3 maybe"
printf 'src 203.0.113.5\n\xef\xbb\xbfsrc 203.0.113.6\n' >"$T_TMP/bom3.txt"
fails_named "a BOM after the first line is an error" "bom3.txt:2:" "$FB" add in1 -f "$T_TMP/bom3.txt"
# `ipset save` output is no list: said so at its first line (it was
# "unknown protocol 'create'"), nothing loaded.
printf 'create bad hash:ip family inet hashsize 1024 maxelem 65536\nadd bad 198.51.100.9\n' >"$T_TMP/ipset.txt"
fails_named "ipset save output: named as such" "ipset.txt:1: unknown protocol 'create': \`ipset save\` output?" \
	"$FB" load in1 "$T_TMP/ipset.txt"

# IPv6 rules for extension headers can never match: the data path walks
# past them. IPv4 parses no extension header: ah is a real protocol there.
d1=$(digest in1)
# On the command line that is a usage error (exit 2); in a file, exit 1.
for p in 0 43 44 51 ah 60; do
	t_refused 2 "IPv6 protocol $p refused" "extension header" \
		"$FB" add in1 "$p" 2001:db8::1 2001:db8::2
done
for v in add del count query traffic; do
	t_refused 2 "$v: a bad address word is a usage error" "argument 3: bad address or prefix '198.51.100.300'" \
		"$FB" "$v" in2 src 203.0.113.9 src 198.51.100.300
done
# A field given again starts the next FLOW; after a rule of one protocol
# written as fields, that next rule would hold for every protocol (`tcp
# src A src B` used to add `src B` for all of them, `udp dport 53 dport
# 54` every protocol's port 54): refused, saying what to write. A list of
# address rules, or the protocol written again, is still several FLOWs.
d1=$(digest in1)
for v in add del query; do
	t_refused 2 "$v: 'tcp src A src B' refused" \
		"argument 4: 'src' again starts the next FLOW, which would hold for every protocol, not tcp alone: write 'tcp src 198.51.100.7'" \
		"$FB" "$v" in1 tcp src 198.51.100.0/24 src 198.51.100.7
done
t_refused 2 "'udp dport 53 dport 54' refused" "argument 4: 'dport' again .* write 'udp dport 54'" \
	"$FB" add in1 udp dport 53 dport 54
t_refused 2 "'src A proto 6 dport 5 dport 6' refused" "argument 7: .* not proto 6 alone: write 'proto 6 dport 6'" \
	"$FB" add in1 src 198.51.100.0/24 proto 6 dport 5 dport 6
check_eq "... the filter as it was" "$(digest in1)" "$d1"
check_eq "'src A src B dst C': three address rules" \
	"$("$FB" -j query in1 src 198.51.100.1 src 198.51.100.2 dst 203.0.113.1 | t_json "d['total']")" 3
check "'udp dport 53 udp dport 123', 'any dport 53 dport 54': several FLOWs" \
	"$FB" query in1 udp dport 53 udp dport 123 any dport 53 dport 54
# ... and so is a next FLOW that gives its own protocol later in it.
check_eq "'src A proto 6 src B proto 6', 'tcp dport 22 dport 80 proto 6': 6 rules" \
	"$("$FB" -j query in1 src 198.51.100.1 proto 6 src 198.51.100.2 proto 6 \
		tcp dport 22 dport 80 proto 6 | t_json "d['total']")" 6
t_refused 2 "'tcp dport 22 dport 80 dport 81 proto 6' refused (dport 80 alone)" \
	"argument 4: 'dport' again .* write 'tcp dport 80'" \
	"$FB" query in1 tcp dport 22 dport 80 dport 81 proto 6
printf 'src 2001:db8::9\nah [2001:db8::1]:0 [2001:db8::2]:0\n' >"$T_TMP/ah6.txt"
fails_named "IPv6 ah in a list refused with FILE:LINE" "ah6.txt:2: IPv6 protocol 51" \
	"$FB" load in1 "$T_TMP/ah6.txt"
check_eq "IPv6 extension protocols: digest unchanged" "$(digest in1)" "$d1"
check "IPv4 ah accepted" "$FB" add in1 ah 198.51.100.1 203.0.113.1
check "IPv4 protocol 0 accepted" "$FB" add in1 0 198.51.100.1 203.0.113.1
check "IPv6 esp accepted" "$FB" add in1 esp 2001:db8::1 2001:db8::2

# `list` needs privileges to see bpffs; without them it used to print an
# empty list and exit 0.
if command -v setpriv >/dev/null; then
	fails_named "list as non-root: permission denied" "ermission denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$FB" list
	# Every verb that opens a filter says what it needs.
	fails_named "add as non-root: says it needs root or CAP_BPF" \
		"Permission denied (flowbloom needs root or CAP_BPF)" \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$FB" add in1 src 203.0.113.9
else
	skip "setpriv not installed"
fi

# Files another user (nobody) planted in a sticky world-writable directory,
# then named by root: a symbolic link to a root-only file, as the file or
# as a directory on the way, is not followed (root would read a file of
# nobody's choosing: quote its first line in an error, import its filter
# and key); a FIFO is not waited on (the command would hang as long as
# nobody likes). Every reader: load, add -f, guard --never, import, card,
# replay; each refused within 10 s, the filters unchanged. Root's own
# link, /dev/stdin, a process substitution and root's own FIFO still work.
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
ATK=$(mktemp -d /tmp/fbtest.input_cli.atk.XXXXXX)
cleanup() { rm -rf "$ATK"; }
chmod 1777 "$ATK"
mkdir -m 0700 "$T_TMP/own"
printf 'root:SECRET-LINE:19000\n' >"$T_TMP/own/secret"
"$FB" export in1 "$T_TMP/own/in1.fbx" >/dev/null
chmod 600 "$T_TMP/own/secret"
"${NOBODY[@]}" ln -s "$T_TMP/own/secret" "$ATK/list.txt"
"${NOBODY[@]}" ln -s "$T_TMP/own/in1.fbx" "$ATK/x.fbx"
"${NOBODY[@]}" ln -s "$T_TMP/own" "$ATK/dir"
"${NOBODY[@]}" mkfifo "$ATK/fifo"
d1=$(digest in1)
d2=$(digest in2)
planted() { # LABEL PATTERN CMD...: refused (exit 1, one line), in 10 s, no secret
	t_refused 1 "$1" "$2" timeout -s KILL 10 "${@:3}"
	! grep -q SECRET "$T_TMP/err" || fail "$1: the root-only file's line was printed"
}
LINK="a symbolic link of another user's: refusing to follow it"
FIFO="a FIFO of another user's (uid 65534): refusing to wait on it"
planted "load through nobody's link" "list.txt: $LINK" "$FB" load in1 "$ATK/list.txt" --replace
planted "add -f through nobody's link" "list.txt: $LINK" "$FB" add in2 -f "$ATK/list.txt"
planted "load through nobody's link to a directory" \
	"dir/secret: a symbolic link of another user's at 'dir': refusing to follow it" \
	"$FB" load in1 "$ATK/dir/secret"
planted "guard --never through nobody's link" "list.txt: $LINK" \
	"$FB" guard in1 --into in1 --pps 1 --ttl 1m --never "$ATK/list.txt"
planted "import through nobody's link (root's export)" "x.fbx: $LINK; nothing imported" \
	"$FB" import "$ATK/x.fbx" stolen
planted "import through nobody's link to a directory" "link of another user's at 'dir'" \
	"$FB" import "$ATK/dir/in1.fbx" stolen
planted "card through nobody's link" "x.fbx: $LINK" "$FB" card "$ATK/x.fbx"
planted "replay through nobody's link" "list.txt: $LINK" "$FB" replay in1 "$ATK/list.txt"
planted "load from nobody's FIFO" "fifo: $FIFO" "$FB" load in1 "$ATK/fifo" --replace
planted "add -f from nobody's FIFO" "fifo: $FIFO" "$FB" add in2 -f "$ATK/fifo"
planted "guard --never from nobody's FIFO" "fifo: $FIFO" \
	"$FB" guard in1 --into in1 --pps 1 --ttl 1m --never "$ATK/fifo"
planted "import from nobody's FIFO" "fifo: $FIFO; nothing imported" "$FB" import "$ATK/fifo" stolen
planted "replay from nobody's FIFO" "fifo: $FIFO" "$FB" replay in1 "$ATK/fifo"
# Root's own link to nobody's link (in nobody's directory, where the
# kernel's fs.protected_symlinks does not look): the link's target is
# walked as the path is, never handed to the kernel to follow to its end.
"${NOBODY[@]}" mkdir -m 0755 "$ATK/nob"
"${NOBODY[@]}" ln -s "$T_TMP/own/secret" "$ATK/nob/list.txt"
"${NOBODY[@]}" ln -s "$T_TMP/own/in1.fbx" "$ATK/nob/x.fbx"
ln -s "$ATK/nob/list.txt" "$T_TMP/own/feed"
ln -s "$ATK/nob/x.fbx" "$T_TMP/own/feed.fbx"
AT="a symbolic link of another user's at"
planted "load through root's link to nobody's link" "own/feed: $AT 'list.txt'" \
	"$FB" load in1 "$T_TMP/own/feed" --replace
planted "import through root's link to nobody's link" "own/feed.fbx: $AT 'x.fbx'" \
	"$FB" import "$T_TMP/own/feed.fbx" stolen
check_eq "planted files: nothing imported" "$(ls "$FLOWBLOOM_ROOT" | grep -c stolen)" 0
same "planted files"
# What root names itself still works.
ln -s "$T_TMP/own/secret" "$T_TMP/own/link"
fails_named "root's own link is followed" "link:1: " "$FB" load in1 "$T_TMP/own/link"
ln -s in1.fbx "$T_TMP/own/link2.fbx"
check "import through root's own link" "$FB" import "$T_TMP/own/link2.fbx" mine
check "load /dev/stdin" "$FB" add in2 -f /dev/stdin <<<"src 198.51.100.201"
check "load a process substitution" "$FB" add in2 -f <(echo "src 198.51.100.202")
# A pipe another user made, handed as stdin (`cat list | sudo flowbloom
# add -f /dev/stdin`: the caller's shell makes the pipe): ours to read, as
# '-' reads it, no FIFO planted on a path (it was refused as nobody's).
# shellcheck disable=SC2016 # the program's text
check "add -f /dev/stdin from a pipe nobody made" "$PY" -c 'import os, sys
os.setegid(65534); os.seteuid(65534)
r, w = os.pipe()
os.seteuid(0); os.setegid(0)
os.write(w, b"src 198.51.100.204\n"); os.close(w); os.dup2(r, 0)
os.execv(sys.argv[1], sys.argv[1:])' "$FB" add in2 -f /dev/stdin
check_eq "... and reads what it held" "$("$FB" query in2 src 198.51.100.204 | head -1 | cut -d' ' -f1)" maybe
mkfifo -m 0600 "$T_TMP/own/fifo"
(sleep 0.5 && echo "src 198.51.100.203" >"$T_TMP/own/fifo") &
check "add -f from root's own FIFO waits for its writer" timeout 10 "$FB" add in2 -f "$T_TMP/own/fifo"
wait
check_eq "... and reads what it wrote" "$("$FB" query in2 src 198.51.100.203 | head -1 | cut -d' ' -f1)" maybe
"$FB" destroy mine >/dev/null 2>&1

# Every -f FILE reads what load reads: a FireHOL netset, Spamhaus DROP,
# ranges, bare addresses (CRLF, blanks), FLOW lines mixed in. add -f of
# each makes the rules load makes (query and count -f answer the same
# for both filters), and del -f of the file takes out what load put in.
cat >"$T_TMP/fmt-netset.txt" <<'EOF'
#
# ipv4 hash:net ipset, shaped like a FireHOL netset
#
198.51.100.0/26
198.51.100.77
203.0.113.128/25
2001:db8:1::/48
EOF
cat >"$T_TMP/fmt-drop.txt" <<'EOF'
; Spamhaus DROP List 2025/01/01 - (c) 2025 The Spamhaus Project SLU
198.51.100.96/27 ; SBL000001
203.0.113.64/27 ; SBL000002
2001:db8:2::/47 ; SBL000003
EOF
printf '198.51.100.10-198.51.100.20\n2001:db8::5-2001:db8::10 ; v6\n' >"$T_TMP/fmt-ranges.txt"
printf '198.51.100.200\r\n  2001:db8::66\t\n\n203.0.113.9\n' >"$T_TMP/fmt-plain.txt"
cat >"$T_TMP/fmt-mixed.txt" <<'EOF'
udp 198.51.100.1:53 203.0.113.7:4000   # a 5-tuple
dst 203.0.113.32/29 ; a destination rule
198.51.100.160/27
198.51.100.128-198.51.100.159
udp dport 53
EOF
for f in netset drop ranges plain mixed; do
	F=$T_TMP/fmt-$f.txt
	"$FB" create "a$f" --capacity 1000 --fp-rate 0.001 --counting >/dev/null
	"$FB" create "l$f" --capacity 1000 --fp-rate 0.001 --counting >/dev/null
	"$FB" load "l$f" "$F" >/dev/null 2>&1 || fail "$f: load"
	check "$f: add -f" "$FB" add "a$f" -f "$F"
	check_eq "$f: query -f, after add -f and after load" "$("$FB" query "a$f" -f "$F")" "$("$FB" query "l$f" -f "$F")"
	check_eq "$f: ... every rule there" "$("$FB" query "a$f" -f "$F" | sed '$d' | awk '{print $1}' | sort -u)" maybe
	check_eq "$f: count -f, after add -f and after load" "$("$FB" count "a$f" -f "$F")" "$("$FB" count "l$f" -f "$F")"
	check_eq "$f: as many rules" "$("$FB" -j info "a$f" | t_json 'd["flows"]')" "$("$FB" -j info "l$f" | t_json 'd["flows"]')"
	for n in "a$f" "l$f"; do
		check "$f: del -f from $n" "$FB" del "$n" -f "$F"
		check_eq "$f: ... $n empty" "$("$FB" -j info "$n" | t_json 'd["flows"]')" 0
		check "$f: ... $n clean" "$FB" check "$n"
		"$FB" destroy "$n" >/dev/null
	done
done
# A bad line in any format is named FILE:LINE by every verb, as by load,
# and nothing changes.
d1=$(digest in1)
d2=$(digest in2)
printf '# netset\n198.51.100.0/26\n198.51.100.0/33\n' >"$T_TMP/bad-len.txt"
printf '198.51.100.96/27 ; SBL1\n198.51.100.20-198.51.100.10 ; reversed\n' >"$T_TMP/bad-range.txt"
printf '198.51.100.1\n203.0.113.20 - 203.0.113.30\n' >"$T_TMP/bad-blanks.txt"
printf '198.51.100.1\n203.0.113.20 203.0.113.30\n' >"$T_TMP/bad-two.txt"
printf 'create blocked hash:net family inet\nadd blocked 198.51.100.0/24\n' >"$T_TMP/bad-ipset.txt"
for b in "bad-len.txt:3: bad prefix length in '198.51.100.0/33'" \
	"bad-range.txt:2: bad range '198.51.100.20-198.51.100.10' (start after end)" \
	"bad-blanks.txt:2: a range is written without blanks: '203.0.113.20-203.0.113.30'" \
	"bad-two.txt:2: '203.0.113.20' is an address, not a protocol: write src 203.0.113.20 or dst 203.0.113.20 (a file, of load or -f, also takes bare addresses, one a line)" \
	"bad-ipset.txt:1: unknown protocol 'create': \`ipset save\` output?"; do
	F=$T_TMP/${b%%:*}
	fails_named "load: ${b%%:*}" "$b" "$FB" load in2 "$F"
	for v in add del query count traffic; do
		fails_named "$v -f: ${b%%:*}" "$b" "$FB" "$v" in2 -f "$F"
	done
done
same "bad lines in block-list formats"
# A prefix with host bits set is taken masked and told, as load tells it.
printf '198.51.100.7\n198.51.100.1/24 ; SBL1\n' >"$T_TMP/hostbits.txt"
"$FB" create hb --capacity 1000 --fp-rate 0.001 --counting >/dev/null
"$FB" add hb -f "$T_TMP/hostbits.txt" >/dev/null 2>"$T_TMP/err"
check_eq "add -f: host bits told with FILE:LINE" "$(cat "$T_TMP/err")" \
	"flowbloom: warning: $T_TMP/hostbits.txt:2: src 198.51.100.1/24 has host bits set: taken as 198.51.100.0/24"
check_eq "... as load tells them" "$("$FB" load hb "$T_TMP/hostbits.txt" 2>&1 >/dev/null)" "$(cat "$T_TMP/err")"
"$FB" destroy hb >/dev/null
# What the verb cannot take is refused by its own rule, naming the line:
# the sketch counts no prefix; a packet has two addresses.
fails_named "traffic -f of a netset: no prefix in a sketch" \
	"fmt-netset.txt:4: the sketch counts 5-tuples" "$FB" traffic in2 -f "$T_TMP/fmt-netset.txt"
fails_named "query --packet -f of an address list: not one packet" \
	"fmt-plain.txt:1: '198.51.100.200' is not one packet: it names one address" \
	"$FB" query in2 --packet -f "$T_TMP/fmt-plain.txt"

check "destroy in1" "$FB" destroy in1
check "destroy in2" "$FB" destroy in2
t_end
