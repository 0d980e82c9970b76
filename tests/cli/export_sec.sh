#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Attacks on the files the CLI writes (`export`, `metrics --textfile`),
# which hold the filter's secret hash key and are written by root, often in
# directories other users can write to:
# - an unprivileged user (nobody, through setpriv) plants symlinks to a
#   root-only file at the temporary names the CLI used (FILE.tmp<pid>: the
#   pid is known here before the CLI starts, as a patient attacker would
#   guess it), at the final name and at other likely names, in a sticky
#   world-writable directory it owns (so fs.protected_symlinks does not
#   stop root from following them, as in any directory the attacker owns):
#   the root-only file must be untouched, the result a regular file;
# - nobody must not be able to read an export (mode 0600 whatever the
#   umask); --mode widens it, bad --mode values are usage errors;
# - a full disk (a 64 KiB tmpfs in a private mount namespace) fails the
#   export with exit 1, leaves no temporary file and the old export intact;
# - SIGTERM, SIGINT or SIGHUP in the middle of an export leaves no
#   temporary file (it holds the key);
# - a device, FIFO, socket or directory at FILE, or root's link to one
#   (/dev/stdout), is refused, never replaced by the file; so is a path
#   through nobody's symbolic link (to a root-only directory);
# - nobody's hard link at FILE keeps its content; an export into a
#   directory everyone may write is root's 0600, unreadable by nobody;
# - `export NAME -` into a file or named FIFO others can read (nobody's
#   FIFO with nobody's reader waiting in it) is refused, nothing written.
source "$(dirname "$0")/../lib/lib.sh"
t_begin export_sec

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
ATK=$(mktemp -d /tmp/fbtest.export_sec.atk.XXXXXX)
cleanup() { rm -rf "$ATK"; }
t_traps
chown 65534:65534 "$ATK"
chmod 1777 "$ATK"

"$FB" create S --capacity 1000 --fp-rate 0.01 >/dev/null
"$FB" add S src 203.0.113.66 tcp 198.51.100.1:443 203.0.113.7:5000 >/dev/null
(umask 077 && "$FB" export S - >"$T_TMP/ref.fbx")

# export S - on a terminal (script(1) gives it one): refused, as capture -w -
# is, rather than the key written into the scrollback and session logs.
if command -v script >/dev/null; then
	script -qec "'$FB' export S - 2>'$T_TMP/tty.err'; echo \"rc=\$?\" >'$T_TMP/tty.rc'" /dev/null >"$T_TMP/tty.out"
	check_eq "export S - to a terminal: a usage error" "$(cat "$T_TMP/tty.rc"):$(head -1 "$T_TMP/tty.err")" \
		"rc=2:flowbloom: FILE '-': stdout is a terminal (pipe it, e.g. into ssh HOST flowbloom import - NAME)"
	check_eq "... nothing of the export on the terminal" "$(grep -c FLOWBL "$T_TMP/tty.out")" 0
else
	skip "export to a terminal: no script(1) (bsdutils)"
fi

# export S - into a file the shell made (`export S - >s.fbx` under the
# usual umask 022: mode 0644): the key would be in a file every user
# reads. Refused, nothing written; so is a file another user owns (a
# 0600 file of nobody's is theirs to read). A file only its owner (the
# caller) reads, a pipe and /dev/null take it.
(umask 022 && "$FB" export S - >"$T_TMP/so644.fbx" 2>"$T_TMP/so.err")
check_eq "export S - into a 0644 file: refused, nothing written" \
	"$? $(wc -l <"$T_TMP/so.err") $(stat -c %s "$T_TMP/so644.fbx")" "1 1 0"
grep -q "stdout is a file that users other than root can read (mode 644): the export holds the filter's hash key" \
	"$T_TMP/so.err" && pass "... the reason" || fail "... $(cat "$T_TMP/so.err")"
(umask 027 && "$FB" export S - >"$T_TMP/so640.fbx" 2>"$T_TMP/so.err")
check_eq "export S - into a 0640 file: refused" "$? $(stat -c %s "$T_TMP/so640.fbx")" "1 0"
install -m 0600 -o 65534 -g 65534 /dev/null "$T_TMP/so-nobody.fbx"
"$FB" export S - >>"$T_TMP/so-nobody.fbx" 2>"$T_TMP/so.err"
check_eq "export S - into nobody's 0600 file: refused, nothing written" \
	"$? $(stat -c %s "$T_TMP/so-nobody.fbx")" "1 0"
grep -q "stdout is a file that users other than root can read (owned by uid 65534)" "$T_TMP/so.err" &&
	pass "... the reason" || fail "... $(cat "$T_TMP/so.err")"
(umask 077 && "$FB" export S - >"$T_TMP/so600.fbx")
cmp -s "$T_TMP/so600.fbx" "$T_TMP/ref.fbx" && pass "export S - into root's 0600 file" ||
	fail "export S - into root's 0600 file: $(stat -c '%a %s' "$T_TMP/so600.fbx")"
check_eq "export S - into a pipe" "$("$FB" export S - | cmp - "$T_TMP/ref.fbx" && echo same)" same
"$FB" export S - >/dev/null 2>"$T_TMP/so.err"
check_eq "export S - into /dev/null" "$? $(cat "$T_TMP/so.err")" "0 "

# export S - into a named FIFO (`export S - >/path/fifo`) that users other
# than root can open for reading: nobody's own (its reader waiting in it,
# as a patient attacker's would), or root's made under umask 000 (mode
# 666). Either reader would be handed the key: refused, nothing written
# (the reader sees end of file at once). Root's 0600 FIFO takes it, as an
# unnamed pipe does. fifo_export FIFO [WHO...]: WHO (setpriv...) reads FIFO
# into $ATK/fifo.out while export S - writes into it; "rc size".
fifo_export() {
	local fifo=$1 r rc
	shift
	rm -f "$ATK/fifo.out"
	"$@" timeout 20 sh -c "cat '$fifo' >'$ATK/fifo.out'" &
	r=$!
	timeout 20 bash -c '"$1" export S - >"$2" 2>"$3"' _ "$FB" "$fifo" "$T_TMP/so.err"
	rc=$?
	wait "$r"
	echo "$rc $(stat -c %s "$ATK/fifo.out" 2>&1)"
}
NOBODY_FIFO=$ATK/nobody.fifo
"${NOBODY[@]}" mkfifo -m 0600 "$NOBODY_FIFO" && [ "$(stat -c %U "$NOBODY_FIFO")" = nobody ] ||
	fail "nobody could not make a FIFO: the attack did not happen"
check_eq "export S - into nobody's 0600 FIFO, nobody reading: refused, nothing read" \
	"$(fifo_export "$NOBODY_FIFO" "${NOBODY[@]}")" "1 0"
grep -q "stdout is a FIFO that users other than root can read (owned by uid 65534)" \
	"$T_TMP/so.err" && pass "... the reason" || fail "... $(cat "$T_TMP/so.err")"
(umask 000 && mkfifo "$ATK/root666.fifo")
check_eq "export S - into root's 0666 FIFO, nobody reading: refused, nothing read" \
	"$(fifo_export "$ATK/root666.fifo" "${NOBODY[@]}")" "1 0"
grep -q "stdout is a FIFO that users other than root can read (mode 666)" "$T_TMP/so.err" &&
	pass "... the reason" || fail "... $(cat "$T_TMP/so.err")"
mkfifo -m 0600 "$ATK/root600.fifo"
check_eq "export S - into root's 0600 FIFO: written" \
	"$(fifo_export "$ATK/root600.fifo")" "0 $(stat -c %s "$T_TMP/ref.fbx")"
cmp -s "$ATK/fifo.out" "$T_TMP/ref.fbx" && pass "... the export" || fail "... not the export"
rm -f "$ATK"/*.fifo "$ATK/fifo.out"

VICTIM=$T_TMP/victim # root's, in a root-only directory
printf 'precious\n' >"$VICTIM"
cp "$VICTIM" "$T_TMP/victim.ref"
chmod 600 "$VICTIM"

# plant NAME...: nobody makes each NAME in $ATK a symlink to the victim.
# A plant that fails is a failed test: the attack must really happen.
plant() {
	if ! "${NOBODY[@]}" bash -c 'v=$1; shift; for n; do ln -s "$v" "$ATK/$n" || exit 1; done' \
		_ "$VICTIM" "$@" 2>"$T_TMP/plant.err"; then
		fail "nobody could not plant $*: $(cat "$T_TMP/plant.err")"
	fi
}
export ATK

# run_planted NAMES_FMT CMD...: start CMD held at a barrier, plant symlinks
# at the names NAMES_FMT gives for its pid (printf, %d = pid), release it.
run_planted() {
	local fmt=$1 pid
	shift
	mkfifo "$T_TMP/go"
	(
		read -r _ <"$T_TMP/go"
		exec "$@"
	) >"$T_TMP/out" 2>"$T_TMP/err" &
	pid=$!
	# shellcheck disable=SC2059
	plant $(printf "$fmt" "$pid" "$pid")
	echo go >"$T_TMP/go"
	wait "$pid"
	local rc=$?
	rm -f "$T_TMP/go"
	return $rc
}

victim_intact() { cmp -s "$VICTIM" "$T_TMP/victim.ref"; }
mode_of() { stat -c %a "$1"; }

# --- export through planted temporary names
if run_planted 'e.fbx.tmp%d e.fbx.tmp.%d' "$FB" export S "$ATK/e.fbx"; then
	pass "export with symlinks planted at its temporary names"
else
	fail "export with symlinks planted at its temporary names: $(cat "$T_TMP/err")"
fi
victim_intact && pass "planted temp names: root's file untouched" ||
	fail "planted temp names: root's file overwritten ($(head -c 8 "$VICTIM" | od -An -c | tr -s ' '))"
[ -f "$ATK/e.fbx" ] && [ ! -L "$ATK/e.fbx" ] && pass "planted temp names: export is a regular file" ||
	fail "planted temp names: export is not a regular file ($(ls -l "$ATK/e.fbx" 2>&1))"
cmp -s "$ATK/e.fbx" "$T_TMP/ref.fbx" && pass "planted temp names: export content right" ||
	fail "planted temp names: export content differs"
check_eq "planted temp names: export owned by root, mode 600" \
	"$(stat -c '%u %a' "$ATK/e.fbx" 2>&1)" "0 600"
if "${NOBODY[@]}" cat "$ATK/e.fbx" >/dev/null 2>&1; then
	fail "nobody can read the export (and its hash key)"
else
	pass "nobody cannot read the export"
fi
printf 'precious\n' >"$VICTIM"

# --- a symlink at the final name (and at other names): rename() replaces
# the link itself, the file it points to is never written.
rm -f "$ATK"/*
plant f.fbx f.fbx.tmp f.fbx.new f.fbx~ .f.fbx .f.fbx.tmp f.fbx.lock
check "export over a symlink planted at FILE" "$FB" export S "$ATK/f.fbx"
victim_intact && pass "symlink at FILE: root's file untouched" ||
	fail "symlink at FILE: root's file overwritten"
[ -f "$ATK/f.fbx" ] && [ ! -L "$ATK/f.fbx" ] && pass "symlink at FILE: replaced by a regular file" ||
	fail "symlink at FILE: $(ls -l "$ATK/f.fbx" 2>&1)"
check_eq "symlink at FILE: mode 600" "$(mode_of "$ATK/f.fbx")" 600
# Only the export and nobody's links remain: no temporary file left.
check_eq "symlink at FILE: nothing else left in the directory" \
	"$(cd "$ATK" && find . -mindepth 1 ! -type l | sort | tr '\n' ' ')" "./f.fbx "
printf 'precious\n' >"$VICTIM"

# --- metrics --textfile: the same writer (its old names were FILE.tmp.<pid>)
rm -f "$ATK"/*
if run_planted 'm.prom.tmp.%d m.prom.tmp%d' "$FB" metrics S --textfile "$ATK/m.prom"; then
	pass "metrics --textfile with symlinks planted at its temporary names"
else
	fail "metrics --textfile with symlinks planted at its temporary names: $(cat "$T_TMP/err")"
fi
victim_intact && pass "metrics: root's file untouched" || fail "metrics: root's file overwritten"
[ -f "$ATK/m.prom" ] && [ ! -L "$ATK/m.prom" ] && grep -q '^flowbloom_' "$ATK/m.prom" &&
	pass "metrics: textfile written" || fail "metrics: textfile missing ($(ls -l "$ATK" 2>&1 | tr '\n' ' '))"
# node_exporter often runs as another user: the figures are no secret.
check_eq "metrics: textfile mode 644" "$(mode_of "$ATK/m.prom" 2>&1)" 644
printf 'precious\n' >"$VICTIM"

# --- a device, a FIFO, a socket or a directory at FILE, or root's own
# link to one (as /dev/stdout is): the rename would replace it with a
# regular file holding what is written (`export S /dev/null` took
# /dev/null away from every program; a FIFO's reader waited forever).
# Refused with the reason, the node left as it was, nothing else in the
# directory. nobody's link is still replaced, never followed (above).
NODES=$T_TMP/nodes
mkdir "$NODES"
mknod "$NODES/null" c 1 3
mkfifo "$NODES/fifo"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$NODES/sock"
mkdir "$NODES/dir"
ln -s null "$NODES/null-link"
ln -s /proc/self/fd/1 "$NODES/stdout"
ls -l "$NODES" >"$T_TMP/nodes.before"
for n in null:character fifo:FIFO sock:socket dir:directory null-link:character stdout:; do
	what=${n#*:} n=${n%%:*}
	for verb in export metrics; do
		if [ $verb = export ]; then
			timeout 10 "$FB" export S "$NODES/$n" >/dev/null 2>"$T_TMP/err" </dev/null
		else
			timeout 10 "$FB" metrics S --textfile "$NODES/$n" >/dev/null 2>"$T_TMP/err"
		fi
		rc=$?
		check_eq "$verb to $n: refused" "$rc $(wc -l <"$T_TMP/err")" "1 1"
		grep -q "$NODES/$n: .*${what}.*not a regular file: refusing to replace it" "$T_TMP/err" &&
			pass "$verb to $n: the reason" || fail "$verb to $n: $(cat "$T_TMP/err")"
	done
done
# Root's link into /proc with standard output a regular file (a cron
# job's `export S /dev/stdout >log`): it resolves to that file, and was
# replaced (/dev/stdout gone for every program until a reboot).
for verb in export metrics; do
	if [ $verb = export ]; then
		timeout 10 "$FB" export S "$NODES/stdout" >"$T_TMP/so.txt" 2>"$T_TMP/err" </dev/null
	else
		timeout 10 "$FB" metrics S --textfile "$NODES/stdout" >"$T_TMP/so.txt" 2>"$T_TMP/err"
	fi
	rc=$?
	check_eq "$verb to a link to /proc/self/fd/1, stdout a file: refused" "$rc $(wc -l <"$T_TMP/err")" "1 1"
	grep -q "$NODES/stdout: a symbolic link into /proc (a process's file descriptor), not a regular file: refusing to replace it" \
		"$T_TMP/err" && pass "$verb to it: the reason" || fail "$verb to it: $(cat "$T_TMP/err")"
done
ls -l "$NODES" >"$T_TMP/nodes.after"
cmp -s "$T_TMP/nodes.before" "$T_TMP/nodes.after" && pass "device, FIFO, socket, directory, links: all left as they were" ||
	fail "nodes changed: $(diff "$T_TMP/nodes.before" "$T_TMP/nodes.after" | tr '\n' ' ')"
# A dangling link of root's and root's link to a regular file are replaced
# as before (the link, never what it names).
ln -s nowhere "$NODES/dangling"
printf 'kept\n' >"$NODES/plain"
ln -s plain "$NODES/plain-link"
check "export over root's dangling link" "$FB" export S "$NODES/dangling"
check "export over root's link to a regular file" "$FB" export S "$NODES/plain-link"
[ -f "$NODES/dangling" ] && [ ! -L "$NODES/dangling" ] && [ ! -L "$NODES/plain-link" ] &&
	[ "$(cat "$NODES/plain")" = kept ] && [ ! -e "$NODES/nowhere" ] &&
	pass "links replaced, the file linked to untouched" || fail "links: $(ls -l "$NODES" | tr '\n' ' ')"

# --- a symbolic link of nobody's on the way to FILE (fs.protected_symlinks
# is off here, and a directory of theirs is never protected): /tmp/out ->
# a root-only directory would put root's file where nobody chose. Refused
# with the reason, nothing written there; root's own link is followed.
VDIR=$T_TMP/victimdir
mkdir -m 0700 "$VDIR"
"${NOBODY[@]}" ln -s "$VDIR" "$ATK/out" || fail "nobody could not plant $ATK/out"
for verb in export metrics; do
	if [ $verb = export ]; then
		"$FB" export S "$ATK/out/f.fbx" >/dev/null 2>"$T_TMP/err"
	else
		"$FB" metrics S --textfile "$ATK/out/m.prom" >/dev/null 2>"$T_TMP/err"
	fi
	check_eq "$verb through nobody's link to a directory: refused" "$? $(wc -l <"$T_TMP/err")" "1 1"
	grep -q "directory $ATK/out: a symbolic link of another user's at 'out': refusing to follow it" \
		"$T_TMP/err" && pass "$verb through nobody's link: the reason" ||
		fail "$verb through nobody's link: $(cat "$T_TMP/err")"
done
check_eq "nobody's link: nothing written where it points" "$(ls -A "$VDIR")" ""
ln -s "$VDIR" "$T_TMP/rootlink"
check "export through root's own link to a directory" "$FB" export S "$T_TMP/rootlink/f.fbx"
[ -f "$VDIR/f.fbx" ] && pass "root's link followed" || fail "root's link: $(ls -A "$VDIR")"
"$FB" export S "$NODES/null/f.fbx" >/dev/null 2>"$T_TMP/err"
check_eq "a device as FILE's directory: refused" "$? $(wc -l <"$T_TMP/err")" "1 1"
rm -f "$ATK/out"

# --- a hard link of nobody's at FILE (to a file of theirs; fs.protected_
# hardlinks keeps them from linking root's): the rename replaces the name,
# the file linked to keeps its content. And a directory everyone may write
# (no sticky bit), where nobody could swap names: the export is still
# root's 0600 from its creation on, never readable by nobody.
rm -f "$ATK"/*
"${NOBODY[@]}" bash -c 'printf "mine\n" >"$1/own" && ln "$1/own" "$1/h.fbx"' _ "$ATK" ||
	fail "nobody could not make a hard link"
check "export over nobody's hard link" "$FB" export S "$ATK/h.fbx"
check_eq "hard link: nobody's file untouched, FILE a root 0600 file" \
	"$(cat "$ATK/own") $(stat -c '%U %a %h' "$ATK/h.fbx")" "mine root 600 1"
OPEN=$ATK/open # reachable by nobody ($T_TMP is root's alone)
mkdir -m 0777 "$OPEN"
check "export into a directory everyone may write" "$FB" export S "$OPEN/o.fbx"
check_eq "... root's, mode 600" "$(stat -c '%U %a' "$OPEN/o.fbx")" "root 600"
"${NOBODY[@]}" cat "$OPEN/o.fbx" >/dev/null 2>&1 && fail "... nobody reads it" ||
	pass "... nobody cannot read it"
"${NOBODY[@]}" ls "$OPEN" >/dev/null 2>&1 || fail "... nobody cannot even reach the directory"
rm -rf "${ATK:?}"/*

# --- modes: the default ignores the umask, --mode sets exactly what it says
rm -f "$ATK"/*
(umask 000 && "$FB" export S "$T_TMP/u0.fbx" >/dev/null)
check_eq "umask 000: export mode 600" "$(mode_of "$T_TMP/u0.fbx")" 600
(umask 077 && "$FB" export S "$ATK/w.fbx" --mode 0644 >/dev/null)
check_eq "umask 077, --mode 0644: mode 644" "$(mode_of "$ATK/w.fbx")" 644
"${NOBODY[@]}" cat "$ATK/w.fbx" >"$T_TMP/w.read" 2>/dev/null && cmp -s "$T_TMP/w.read" "$T_TMP/ref.fbx" &&
	pass "--mode 0644: nobody reads it" || fail "--mode 0644: nobody cannot read it"
(umask 000 && "$FB" export S "$ATK/w.fbx" --mode 640 >/dev/null)
check_eq "--mode 640 over an existing 644 export" "$(mode_of "$ATK/w.fbx")" 640
check "an export still imports" "$FB" import "$ATK/w.fbx" S2
for m in 999 8 0x1ff rw "" -1 1777 4755 07777 00000644 ' 644' 644x; do
	"$FB" export S "$ATK/bad.fbx" --mode "$m" >/dev/null 2>"$T_TMP/err"
	rc=$?
	check_eq "--mode '$m': usage error" "$rc $(wc -l <"$T_TMP/err")" "2 2"
done
[ -e "$ATK/bad.fbx" ] && fail "a bad --mode created the file" || pass "bad --mode: no file created"
"$FB" export S - --mode 0600 >/dev/null 2>&1
check_eq "--mode with stdout: usage error" "$?" 2

# --- a full disk: a 64 KiB tmpfs in a private mount namespace (nothing to
# unmount afterwards, even if the test dies).
# 256 KiB of bits, a third set: it compresses to about 230 KiB, no less.
"$FB" create BIG --bits 2097152 --hashes 4 >/dev/null
python3 -c 'for i in range(200000): print("udp 198.51.100.%d:%d 203.0.113.%d:%d" % (i % 256, 1024 + i // 256, i % 200, 1 + i % 4000))' >"$T_TMP/big.txt"
"$FB" add BIG -f "$T_TMP/big.txt" >/dev/null
unshare -m --propagation private env LC_ALL=C bash -c '
	mkdir -p "$1/full" && mount -t tmpfs -o size=64k,mode=0755 fbtest "$1/full" || exit 9
	"$2" export S "$1/full/x.fbx" >/dev/null || exit 8
	cp "$1/full/x.fbx" "$1/x.before"
	"$2" export BIG "$1/full/x.fbx" >/dev/null 2>"$1/full.err"
	echo $? >"$1/full.rc"
	ls -A "$1/full" >"$1/full.ls"
	cp "$1/full/x.fbx" "$1/x.after"
	# metrics --textfile on a full disk: the same writer.
	"$2" metrics S --textfile "$1/full/m.prom" >/dev/null || exit 7
	cp "$1/full/m.prom" "$1/m.before"
	dd if=/dev/zero of="$1/full/fill" bs=4k 2>/dev/null
	"$2" metrics S --textfile "$1/full/m.prom" >/dev/null 2>"$1/mfull.err"
	echo $? >"$1/mfull.rc"
	ls -A "$1/full" >"$1/mfull.ls"
	cp "$1/full/m.prom" "$1/m.after"
' _ "$T_TMP" "$FB"
case $? in
9) skip "ENOSPC: cannot mount a tmpfs here" ;;
8) fail "ENOSPC: the first export failed" ;;
7) fail "ENOSPC: the first metrics --textfile failed" ;;
*)
	check_eq "ENOSPC: exit 1" "$(cat "$T_TMP/full.rc")" 1
	check_eq "ENOSPC: one line on stderr" "$(wc -l <"$T_TMP/full.err")" 1
	grep -q 'x.fbx: write failed: No space left on device' "$T_TMP/full.err" &&
		pass "ENOSPC: the error names the file and the cause" ||
		fail "ENOSPC: error was '$(cat "$T_TMP/full.err")'"
	check_eq "ENOSPC: no temporary file left" "$(tr '\n' ' ' <"$T_TMP/full.ls")" "x.fbx "
	cmp -s "$T_TMP/x.before" "$T_TMP/x.after" && pass "ENOSPC: the old export intact" ||
		fail "ENOSPC: the old export changed"
	check_eq "ENOSPC: metrics --textfile exits 1" "$(cat "$T_TMP/mfull.rc" 2>&1)" 1
	grep -q 'm.prom: write failed: No space left on device' "$T_TMP/mfull.err" &&
		pass "ENOSPC: metrics names the file and the cause" ||
		fail "ENOSPC: metrics error was '$(cat "$T_TMP/mfull.err")'"
	check_eq "ENOSPC: metrics leaves no temporary file" "$(tr '\n' ' ' <"$T_TMP/mfull.ls")" "fill m.prom x.fbx "
	cmp -s "$T_TMP/m.before" "$T_TMP/m.after" && pass "ENOSPC: the old textfile intact" ||
		fail "ENOSPC: the old textfile changed"
	;;
esac

# --- a file system that does not keep the mode asked for (FAT with
# `quiet`, a FUSE mount, NFS squashing root to nobody): the 0600 export
# would be everybody's, the key with it (`export S -` into such a file was
# refused already: its mode shows 644). bindfs --chmod-ignore shows every
# file 0644 and ignores chmod, as such a file system does; in a private
# mount namespace. The export is refused, before anything is written,
# naming the file and the mode; nothing is left behind, nobody reads
# nothing. metrics --textfile, 0644 on purpose, is still written there.
if command -v bindfs >/dev/null && [ -e /dev/fuse ]; then
	FS=$ATK/fs # root's 0755, in nobody's reach
	mkdir -m 0755 "$FS" "$FS/src" "$FS/mnt" "$FS/src2" "$FS/mnt2"
	unshare -m --propagation private env LC_ALL=C bash -c '
		bindfs -p 0644,a+X --chmod-ignore "$1/src" "$1/mnt" 2>/dev/null || exit 9
		trap "umount \"$1/mnt\"" EXIT
		"$2" export S "$1/mnt/x.fbx" >/dev/null 2>"$3/modes.err"
		echo $? >"$3/modes.rc"
		ls -A "$1/src" >"$3/modes.ls"
		$4 sh -c "cat \"$1/mnt/x.fbx\" 2>/dev/null | wc -c" >"$3/modes.read"
		"$2" metrics S --textfile "$1/mnt/m.prom" >/dev/null 2>"$3/modes.merr"
		echo $? >"$3/modes.mrc"
		# Every file 0755 (FAT with quiet and the usual fmask 022):
		# execute bits give no one a read.
		bindfs -p 0755 --chmod-ignore "$1/src2" "$1/mnt2" 2>/dev/null || exit 9
		trap "umount \"$1/mnt\" \"$1/mnt2\"" EXIT
		"$2" metrics S --textfile "$1/mnt2/m.prom" >/dev/null 2>"$3/modes.xerr"
		echo $? >"$3/modes.xrc"
	' _ "$FS" "$FB" "$T_TMP" "${NOBODY[*]}"
	if [ $? = 9 ]; then
		skip "a file system that ignores modes: bindfs cannot mount here"
	else
		check_eq "export onto a file system that shows it 0644: refused, one line" \
			"$(cat "$T_TMP/modes.rc") $(wc -l <"$T_TMP/modes.err")" "1 1"
		grep -q "mnt/x.fbx: its file system makes it mode 644 where 600 was asked" \
			"$T_TMP/modes.err" && pass "... the reason" || fail "... $(cat "$T_TMP/modes.err")"
		check_eq "... nothing left in the directory, nobody read nothing" \
			"$(tr '\n' ' ' <"$T_TMP/modes.ls")$(cat "$T_TMP/modes.read")" "0"
		check_eq "... metrics --textfile (0644 asked) written there" \
			"$(cat "$T_TMP/modes.mrc") $(cat "$T_TMP/modes.merr")" "0 "
		check_eq "... on one that shows every file 0755, written (execute bits read nothing)" \
			"$(cat "$T_TMP/modes.xrc") $(cat "$T_TMP/modes.xerr")" "0 "
	fi
	rm -rf "$FS"
else
	skip "a file system that ignores modes: no bindfs or /dev/fuse (make deps)"
fi

# --- a signal that ends the export mid-write (Ctrl-C, systemd's SIGTERM,
# SIGHUP) takes the hidden temporary file, the filter's key in it, along:
# writes slowed by strace (0.1 s each), the signal sent once the temporary
# file is there. The process still dies of the signal.
if command -v strace >/dev/null; then
	mkdir "$T_TMP/sig"
	for sig in TERM INT HUP; do
		rm -f "$T_TMP"/sig/* "$T_TMP"/sig/.??*
		# A background job ignores SIGINT: the default back, as at a terminal.
		python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' strace -f -qq -o /dev/null -e trace=write \
			-e inject=write:delay_exit=100000 "$FB" export BIG "$T_TMP/sig/x.fbx" >/dev/null 2>&1 &
		tracer=$!
		for _ in $(seq 100); do
			ls -A "$T_TMP/sig" | grep -q '^\.x\.fbx\.' && break
			sleep 0.1
		done
		seen=$(ls -A "$T_TMP/sig" | tr '\n' ' ')
		# The export itself (strace's child), not strace.
		for p in $(pgrep -f -- "export BIG $T_TMP/sig/x.fbx"); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = flowbloom ] && kill -"$sig" "$p"
		done
		wait "$tracer"
		rc=$?
		case "$seen" in
		".x.fbx."*" ") pass "SIG$sig mid-export: the temporary file was there ($seen)" ;;
		*) fail "SIG$sig mid-export: the directory held '$seen', not the temporary file alone" ;;
		esac
		check_eq "SIG$sig mid-export: died of it" "$rc" "$((128 + $(kill -l "$sig")))"
		check_eq "SIG$sig mid-export: nothing left in the directory" "$(ls -A "$T_TMP/sig")" ""
	done
else
	skip "no strace: signals during an export"
fi

"$FB" destroy S >/dev/null
"$FB" destroy S2 >/dev/null
"$FB" destroy BIG >/dev/null
t_end
