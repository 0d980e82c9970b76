#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make install DESTDIR=... PREFIX=/usr` (and the version root's make
# computes in a tree nobody owns), then everything from the installed
# tree: the binary's help, the program it carries (attached to a veth, real
# traffic, a listed source dropped), the installed object loaded by
# `ip link` against the installed binary's `default` filter, the man page
# (man finds it; groff -ww has no warning; every verb is in it), the bash
# completion (called as bash calls it, and typed into bash -i in a pty),
# the systemd units (`systemd-analyze verify`; the boot unit's advice for
# a late device), the metrics unit's command (promtool), the
# ipfix and bgp units' examples (flowbloom and ExaBGP read them), then
# `make uninstall` (nothing left but configuration) and the same for a
# PREFIX=/usr/local install, whose man page and units name /usr/local.
# The binary and the object name no path of the tree they were built in
# (two checkouts build the same bytes).
#
# Uses the `default` filter's pins in /sys/fs/bpf/xdp/globals: holds
# /tmp/fb-globals.lock (t_lock_globals). The trap removes the install tree, the
# namespaces and veth, and every pin it made. Addresses: 198.51.100.0/24.
source "$(dirname "$0")/../lib/lib.sh"
t_begin install

SRC=$(cd "$(dirname "$0")/../.." && pwd)
# tree_names FILE: the file and directory names FILE's debug info holds
# that are SRC or in it (each name whole, as readelf prints it last on
# its line: a compile directory, a line table's directories and files);
# "no debug info" if it has none to look at
tree_names() {
	readelf --debug-dump=info,line "$1" 2>/dev/null | LC_ALL=C awk -F'\t|: ' -v t="$SRC" '
		/DW_AT_comp_dir/ { dirs++ }
		$NF == t || index($NF, t "/") == 1 { print $NF }
		END { if (!dirs) print "no debug info" }' | sort -u | head -3
}
# NSA, NSB, VA, VB, MACA, MACB: t_net_pair (lib.sh).
A4=198.51.100.1
BAD4=198.51.100.3
B4=198.51.100.2
GLOBALS=/sys/fs/bpf/xdp/globals
NEW_DIRS=()
NEW_LINK=
CREATED_DEFAULT=
DEST=$T_TMP/root
IFB=$DEST/usr/sbin/flowbloom # the installed binary
IOBJ=$DEST/usr/lib/flowbloom/flowbloom.bpf.o

cleanup() {
	local d
	t_net_down
	[ -n "$CREATED_DEFAULT" ] && "$FB" destroy default >/dev/null 2>&1
	[ -n "$NEW_LINK" ] && rm -f "$NEW_LINK"
	for ((d = ${#NEW_DIRS[@]} - 1; d >= 0; d--)); do
		rmdir "${NEW_DIRS[d]}" 2>/dev/null
	done
	t_cleanup_filters
}
t_traps

stat_of() {
	t_stat "$IFB" "$1" "$2"
}

send() {
	inA "$PY" -c "$T_UDP_SEND" "$1" "$B4" "$2"
}

# seen_since N0 N: default has seen N packets since its seen counter was N0
# (nothing else crosses the veth: static neighbours, no IPv6).
seen_since() { [ $(($(stat_of default seen) - $1)) -ge "$2" ]; }

# ---------------------------------------------------------------- files

test_install() {
	local f before
	# `make install` with other paths relinks the binary (its help names
	# them): in a copy of the build, never the one other suites run.
	IBUILD=$T_TMP/build
	cp -a "$SRC/build" "$IBUILD"
	before=$(ls -d /usr/sbin/flowbloom /usr/lib/flowbloom /etc/flowbloom 2>/dev/null)
	if make -s -C "$SRC" BUILD="$IBUILD" install DESTDIR="$DEST" PREFIX=/usr >"$T_TMP/out" 2>&1; then
		pass "make install DESTDIR PREFIX=/usr"
	else
		fail "make install: $(tail -5 "$T_TMP/out")"
		t_finish
	fi
	for f in usr/sbin/flowbloom usr/lib/flowbloom/flowbloom.bpf.o usr/share/man/man8/flowbloom.8 \
		usr/share/bash-completion/completions/flowbloom usr/lib/systemd/system/flowbloom@.service \
		usr/lib/systemd/system/flowbloom-metrics.service usr/lib/systemd/system/flowbloom-metrics.timer \
		usr/lib/systemd/system/flowbloom-ipfix@.service usr/lib/systemd/system/flowbloom-bgp@.service \
		usr/share/doc/flowbloom/example.conf usr/share/doc/flowbloom/example.ipfix \
		usr/share/doc/flowbloom/example.exabgp; do
		if [ -s "$DEST/$f" ]; then pass "installed $f"; else fail "missing $f"; fi
	done
	[ -d "$DEST/etc/flowbloom" ] && pass "installed /etc/flowbloom/" || fail "missing /etc/flowbloom/"
	[ -x "$IFB" ] && pass "the binary is executable" || fail "the binary is not executable"
	# Built from any checkout, the same bytes: no file names the tree it
	# was built in (debug info and BTF name sources relative to it). The
	# names debug info holds, each whole: the tree itself (a compile
	# directory) or a path in it. (Not a search of the bytes for "$SRC/":
	# a checkout at /flowbloom or /bpf found it in /sys/fs/bpf/flowbloom/,
	# and a leaked compile directory has no slash after it.)
	for f in usr/sbin/flowbloom usr/lib/flowbloom/flowbloom.bpf.o; do
		check_eq "$f names no path of the build tree" "$(tree_names "$DEST/$f")" ""
	done
	# Nothing outside DESTDIR: a PREFIX=/usr install must not touch /usr.
	check_eq "nothing installed outside DESTDIR" \
		"$(ls -d /usr/sbin/flowbloom /usr/lib/flowbloom /etc/flowbloom 2>/dev/null)" "$before"
	# Installed again over it: the directories that exist keep the mode
	# their owner gave them (a configuration directory closed to others,
	# a setgid staff directory as Debian's /usr/local ones were).
	chmod 0700 "$DEST/etc/flowbloom"
	chmod 2775 "$DEST/usr/sbin"
	if make -s -C "$SRC" BUILD="$IBUILD" install DESTDIR="$DEST" PREFIX=/usr >"$T_TMP/out" 2>&1; then
		pass "make install again over it"
	else
		fail "make install again: $(tail -5 "$T_TMP/out")"
	fi
	check_eq "installed again: the configuration directory's mode kept" \
		"$(stat -c %a "$DEST/etc/flowbloom")" 700
	check_eq "installed again: sbin's mode kept" "$(stat -c %a "$DEST/usr/sbin")" 2775
	chmod 0755 "$DEST/etc/flowbloom" "$DEST/usr/sbin"
	chmod g-s "$DEST/usr/sbin"
}

# `sudo make install` in a tree its user owns: root's git refuses that
# repository (dubious ownership), and `flowbloom --version` became
# "unknown", the binary rebuilt to say so. The Makefile alone, in a
# repository of nobody's: the version root's make computes is the
# commit's.
test_version_owner() {
	local t=$T_TMP/owned want got
	mkdir -p "$t"
	cp "$SRC/Makefile" "$t/"
	chmod o+x "$T_TMP"
	chown -R 65534:65534 "$t"
	as_nobody() { HOME=$t setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "cd '$t' && $1"; }
	if ! as_nobody 'git init -q && git add Makefile && git -c user.name=t -c user.email=t@example.org commit -qm t'; then
		skip "version in a tree another user owns: git as nobody failed"
	else
		want=$(as_nobody 'git describe --tags --always --dirty')
		make -s -C "$t" BUILD="$t/build" "$t/build/version" >"$T_TMP/out" 2>&1
		got=$(cat "$t/build/version" 2>/dev/null)
		check_eq "make as root in nobody's tree: the version is the commit's" "$got" "$want"
	fi
	chmod o-x "$T_TMP"
}

test_binary() {
	check_eq "installed help equals the build's" "$("$IFB" help 2>&1)" "$("$FB" help 2>&1)"
	check "installed apply help" "$IFB" help apply
	# The binary carries the program inside (a libbpf skeleton): the very
	# bytes of the installed object, so both always load the same program.
	if "$PY" -c 'import sys
sys.exit(open(sys.argv[2], "rb").read() not in open(sys.argv[1], "rb").read())' "$IFB" "$IOBJ"; then
		pass "the binary embeds the installed object"
	else
		fail "the installed object is not the program the binary embeds"
	fi
}

# ---------------------------------------------------------------- kernel

setup_net() {
	local d
	t_lock_globals || {
		skip "kernel checks: $T_LOCK_WHY"
		return 1
	}
	[ -e "$GLOBALS/fb_filter" ] && {
		skip "a 'default' filter exists already (not one of this suite's)"
		return 1
	}
	# iproute2's loader makes tc/, tc/globals/ and the ip symlink too.
	for d in /sys/fs/bpf/xdp "$GLOBALS" /sys/fs/bpf/tc /sys/fs/bpf/tc/globals; do
		[ -d "$d" ] || NEW_DIRS+=("$d")
	done
	[ -L /sys/fs/bpf/ip ] || NEW_LINK=/sys/fs/bpf/ip
	t_net_pair --no-ipv6 || {
		skip "kernel checks: $T_NET_WHY"
		return 1
	}
	t_addr "$NSA" "$VA" "$A4/24" "$BAD4/24"
	t_addr "$NSB" "$VB" "$B4/24"
	t_neigh "$NSA" "$VA" "$MACB" "$B4"
	t_neigh "$NSB" "$VB" "$MACA" "$A4" "$BAD4"
}

# run LABEL: 40 packets from the allowed source, 20 from the listed one;
# flowbloom's counters must show exactly that.
traffic() {
	local label=$1 seen0 drop0
	seen0=$(stat_of default seen)
	drop0=$(stat_of default dropped)
	send "$A4" 40
	send "$BAD4" 20
	t_wait_until 30 seen_since "$seen0" 60
	check_eq "$label: every packet seen" "$(($(stat_of default seen) - seen0))" 60
	check_eq "$label: the listed source dropped" "$(($(stat_of default dropped) - drop0))" 20
}

test_kernel() {
	setup_net || return
	check "installed binary: create default" "$IFB" create default --capacity 1000 --fp-rate 0.001
	CREATED_DEFAULT=1
	check "installed binary: add" "$IFB" add default src "$BAD4"
	# The program inside the installed binary.
	check "installed binary: attach" "$IFB" -n "$NSB" attach default "$VB" --mode generic
	traffic "installed binary's program"
	check "installed binary: detach" "$IFB" -n "$NSB" detach "$VB"
	# The installed object, by iproute2 (nsenter, not ip -n: see e2e.sh),
	# finding the installed binary's `default` pins despite the run config.
	check "ip link loads the installed object" inB ip link set dev "$VB" xdpgeneric obj "$IOBJ" sec xdp
	traffic "installed object under ip link"
	check "ip link off" inB ip link set dev "$VB" xdpgeneric off
	check "installed binary: destroy default" "$IFB" destroy default
	CREATED_DEFAULT=
}

# ---------------------------------------------------------------- man

test_man() {
	local page=$DEST/usr/share/man/man8/flowbloom.8 warn verb missing="" text
	if MANPATH=$DEST/usr/share/man man -w flowbloom 2>/dev/null | grep -q "$page"; then
		pass "man finds flowbloom(8) under the install's MANPATH"
	else
		fail "man -w flowbloom does not find $page"
	fi
	warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	check_eq "groff -man -ww: no warnings" "$warn" ""
	text=$(MANWIDTH=200 man -l "$page" 2>&1 | col -b)
	[ -n "$text" ] && pass "man -l renders the page" || fail "man -l rendered nothing"
	# Every verb of the table, with its synopsis word for word.
	while read -r verb; do
		grep -qE "^   $verb\$" <<<"$text" || missing="$missing $verb"
	done < <("$IFB" help | sed -n 's/^       flowbloom \([a-z][a-z]*\).*/\1/p')
	check_eq "every verb has its section" "$missing" ""
	missing=""
	while IFS= read -r line; do
		line=$(tr -s ' ' <<<"$line" | sed 's/^ //')
		tr -s ' ' <<<"$text" | grep -qF -- "$line" || missing="$missing [$line]"
	done < <("$IFB" help | sed -n 's/^       \(flowbloom .*\)/\1/p')
	check_eq "every synopsis line is in the page" "$missing" ""
	# The page is regenerated from the binary: a stale one would differ.
	check_eq "the page is the binary's help --man" "$(cat "$page")" "$("$IFB" help --man)"
	# It names the install's configuration directory (PREFIX=/usr: /etc).
	grep -q '^\.I /etc/flowbloom/NAME\.conf$' "$page" && ! grep -q /usr/local "$page" &&
		pass "the page names /etc/flowbloom for PREFIX=/usr" ||
		fail "the page's paths: $(grep -n 'etc/flowbloom' "$page" | head -3)"
}

# ---------------------------------------------------------------- completion

# comp WORDS...: the completions bash would offer for the last word
# (COMP_SHOPT: shell options set first).
comp() {
	PATH="$DEST/usr/sbin:$PATH" bash -c '
source "$1"; shift
[ -z "$COMP_SHOPT" ] || shopt -s $COMP_SHOPT
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_flowbloom; ((${#COMPREPLY[@]})) && printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ \
		"$DEST/usr/share/bash-completion/completions/flowbloom" "$@"
}

# rl LINE: the command line after bash -i (readline, in a pty) completed
# LINE's last word with one TAB: what a user gets, where comp sees only
# COMPREPLY (readline adds a directory's '/' and quotes blanks, and leaves
# out the space after a directory only when told). Waits for the line (at
# most 10 s) and prints it.
rl() {
	cat >"$T_TMP/rlrc" <<EOF
PS1='READY> '
PATH=$DEST/usr/sbin:\$PATH
source $DEST/usr/share/bash-completion/completions/flowbloom
bind 'set bell-style none'
bind -x '"\C-t": printf "\n<<%s>>\n" "\$READLINE_LINE"'
EOF
	INPUTRC=/dev/null HISTFILE=/dev/null "$PY" -c '
import fcntl, os, pty, re, select, struct, sys, termios, time
rc, line = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--noprofile", "--rcfile", rc, "-i"])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 400, 0, 0))
buf = b""
def wait_for(pat):
    global buf
    end = time.time() + 10
    while time.time() < end:
        m = re.search(pat, buf, re.S)
        if m:
            return m
        if select.select([fd], [], [], 0.2)[0]:
            try:
                buf += os.read(fd, 65536)
            except OSError:
                break
    return None
ok = wait_for(rb"READY> ")
if ok:
    os.write(fd, line.encode() + b"\t\x14")
    ok = wait_for(rb"<<(.*?)>>\r?\n")
print(ok.group(1).decode() if ok else "(no line: %r)" % buf[-300:])
os.write(fd, b"\x15exit\n")
end = time.time() + 5
while os.waitpid(pid, os.WNOHANG) == (0, 0):
    if time.time() > end:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        break
    time.sleep(0.05)
' "$T_TMP/rlrc" "$1"
}

test_completion() {
	local all
	check "completion sources cleanly" bash -c "source '$DEST/usr/share/bash-completion/completions/flowbloom' && complete -p flowbloom"
	all=$("$IFB" help | sed -n 's/^       flowbloom \([a-z][a-z]*\).*/\1/p' | sort | tr '\n' ' ')
	check_eq "verbs" "$(comp flowbloom '')" "$all"
	check_eq "a verb's prefix" "$(comp flowbloom at)" "attach "
	check_eq "help VERB" "$(comp flowbloom help ap)" "apply "
	# The synopsis's words are no glob patterns: "[VERB]" beside a file
	# named V, or under nullglob or failglob, is VERB still.
	mkdir -p "$T_TMP/globdir"
	touch "$T_TMP/globdir/V" "$T_TMP/globdir/C"
	check_eq "help VERB beside a file named V" "$(cd "$T_TMP/globdir" && comp flowbloom help ap)" "apply "
	check_eq "help VERB under nullglob" "$(COMP_SHOPT=nullglob comp flowbloom help ap)" "apply "
	check_eq "help VERB under failglob" "$(COMP_SHOPT=failglob comp flowbloom help ap 2>&1)" "apply "
	check_eq "card's second SRC beside a file named C" \
		"$(cd "$T_TMP/globdir" && comp flowbloom card x C)" "C "
	check_eq "global options" "$(comp flowbloom --j)" "--json "
	check_eq "attach's options" "$(comp flowbloom attach x lo --m)" "--malformed --max-flows --mode --monitor "
	check_eq "--mode values" "$(comp flowbloom attach x lo --mode '')" "generic native "
	check_eq "--hash values" "$(comp flowbloom create x --hash s)" "siphash13 siphash24 "
	check_eq "--by values" "$(comp flowbloom top x -n 5 --by '')" "bytes packets "
	check_eq "apply's options" "$(comp flowbloom apply f.conf --)" "--check --down "
	touch "$T_TMP/edge.conf"
	check_eq "a file after an option without value" "$(comp flowbloom apply --check "$T_TMP/ed")" "$T_TMP/edge.conf "
	"$IFB" create cmpl_one --capacity 10 --fp-rate 0.01 >/dev/null
	"$IFB" create cmpl_two --capacity 10 --fp-rate 0.01 >/dev/null
	check_eq "filter names" "$(comp flowbloom info cmpl_)" "cmpl_one cmpl_two "
	check_eq "filter names after -j" "$(comp flowbloom -j stats cmpl_t)" "cmpl_two "
	check_eq "NAME... repeats" "$(comp flowbloom metrics cmpl_one cmpl_t)" "cmpl_two "
	"$IFB" destroy cmpl_one >/dev/null
	"$IFB" destroy cmpl_two >/dev/null
	check_eq "devices" "$(comp flowbloom attach x l)" "lo "
	check_eq "--dev DEV of query --packet" "$(comp flowbloom query x --packet --dev l)" "lo "
	check_eq "--dev DEV of replay" "$(comp flowbloom replay x f.pcap --dev l)" "lo "
	if [ -n "${NSB:-}" ] && [ -e "/run/netns/$NSB" ]; then
		check_eq "devices of -n NETNS" "$(comp flowbloom -n "$NSB" attach x "${VB:0:7}")" "$VB "
	else
		skip "devices of -n NETNS: no namespace (the kernel checks were skipped)"
	fi
	touch "$T_TMP/list-a.txt"
	check_eq "files" "$(comp flowbloom load x "$T_TMP/list-")" "$T_TMP/list-a.txt "
	check_eq "--textfile PATH" "$(comp flowbloom metrics --textfile "$T_TMP/list-")" "$T_TMP/list-a.txt "
	check_eq "nothing after the last argument" "$(comp flowbloom detach lo '')" ""
	# "[--udp|--tcp]" in the synopsis: two options, not one word.
	check_eq "options that exclude each other" "$(comp flowbloom ipfix x --u)" "--udp "
	check_eq "... the other one" "$(comp flowbloom ipfix x --tc)" "--tcp "
	check_eq "ipfix --config FILE" "$(comp flowbloom ipfix x --config "$T_TMP/list-")" "$T_TMP/list-a.txt "
	# As bash -i completes: into a directory (no space after its '/'), a
	# name with a blank (one word), the values NAME and DEV of options.
	mkdir -p "$T_TMP/cdir/lists" "$T_TMP/cdir/two words"
	touch "$T_TMP/cdir/lists/drop.txt" "$T_TMP/cdir/two words/x.txt"
	check_eq "readline: a directory, then into it" "$(rl "flowbloom load x $T_TMP/cdir/lis")" \
		"flowbloom load x $T_TMP/cdir/lists/"
	check_eq "readline: a name with a blank" "$(rl "flowbloom apply --check $T_TMP/cdir/tw")" \
		"flowbloom apply --check $T_TMP/cdir/two\\ words/"
	check_eq "readline: an export file beside filter names (SRC)" \
		"$(rl "flowbloom card $T_TMP/cdir/two\\ words/")" "flowbloom card $T_TMP/cdir/two\\ words/x.txt "
	check_eq "readline: a device after --dev" "$(rl "flowbloom capture x -w f --dev l")" \
		"flowbloom capture x -w f --dev lo "
	"$IFB" create cmpl_into --capacity 10 --fp-rate 0.01 >/dev/null
	check_eq "readline: a filter after --into" "$(rl "flowbloom merge a b --into cmpl_i")" \
		"flowbloom merge a b --into cmpl_into "
	check_eq "readline: a filter after guard's --into" "$(rl "flowbloom guard x --into cmpl_i")" \
		"flowbloom guard x --into cmpl_into "
	"$IFB" destroy cmpl_into >/dev/null
}

# ---------------------------------------------------------------- systemd

test_units() {
	local u=$DEST/usr/lib/systemd/system cmd out
	check_eq "boot unit ExecStart" "$(sed -n 's/^ExecStart=//p' "$u/flowbloom@.service")" \
		"/usr/sbin/flowbloom apply /etc/flowbloom/%i.conf"
	check_eq "boot unit ExecStop detaches" "$(sed -n 's/^ExecStop=//p' "$u/flowbloom@.service")" \
		"/usr/sbin/flowbloom apply --down /etc/flowbloom/%i.conf"
	check_eq "ipfix unit ExecStart" "$(sed -n 's/^ExecStart=//p' "$u/flowbloom-ipfix@.service")" \
		"/usr/sbin/flowbloom ipfix --config /etc/flowbloom/%i.ipfix -- %i"
	check_eq "bgp unit ExecStart" "$(sed -n 's/^ExecStart=//p' "$u/flowbloom-bgp@.service")" \
		"/usr/sbin/exabgp /etc/flowbloom/%i.exabgp"
	# The boot unit's advice for a late device, followed for br-lan and
	# eth0.100: the unit it names is that device's ('-' in a unit name
	# stands for '/': br-lan's is br\x2dlan's, which systemd-escape says).
	local advice how dev unit
	advice=$(sed -n 's/^# \{0,1\}//p' "$u/flowbloom@.service" | tr '\n' ' ' | tr -s ' ')
	how=$(sed -n 's/.*BindsTo=.*`\(systemd-escape [^`]*DEV\)`.*/\1/p' <<<"$advice")
	for dev in br-lan eth0.100; do
		unit=$(sh -c "${how/DEV/$dev}" 2>&1)
		check_eq "boot unit's drop-in advice for $dev: its device unit" \
			"$(systemd-escape -u -p "${unit%.device}" 2>&1)" "/sys/subsystem/net/devices/$dev"
	done
	grep -qF "(br-lan: $(systemd-escape -p --suffix=device /sys/subsystem/net/devices/br-lan))" <<<"$advice" &&
		pass "boot unit's drop-in advice: br-lan's unit, escaped" ||
		fail "boot unit's drop-in advice names no br-lan unit, or not escaped: $advice"
	if ! command -v systemd-analyze >/dev/null; then
		skip "systemd-analyze verify: systemd-analyze not installed"
	else
		# verify checks that ExecStart's binary exists: in a private mount
		# namespace, /usr/sbin is a tmpfs holding the installed binary (and
		# ExaBGP, for the bgp unit). Documentation=man: pages are checked
		# with the install's MANPATH (and the system's, for exabgp(1)).
		cp "$u/flowbloom@.service" "$T_TMP/flowbloom@edge.service"
		cp "$u/flowbloom-ipfix@.service" "$T_TMP/flowbloom-ipfix@edge.service"
		local units=("$T_TMP/flowbloom@edge.service" "$T_TMP/flowbloom-ipfix@edge.service"
			"$u/flowbloom-metrics.service" "$u/flowbloom-metrics.timer")
		rm -f "$T_TMP/exabgp"
		if [ -x /usr/sbin/exabgp ]; then
			cp /usr/sbin/exabgp "$T_TMP/exabgp"
			cp "$u/flowbloom-bgp@.service" "$T_TMP/flowbloom-bgp@edge.service"
			units+=("$T_TMP/flowbloom-bgp@edge.service")
		else
			skip "systemd-analyze verify of the bgp unit: exabgp not installed"
		fi
		if out=$(MANPATH=$DEST/usr/share/man:/usr/share/man unshare -m sh -c '
mount -t tmpfs tmpfs /usr/sbin && cp "$1" /usr/sbin/ && shift &&
{ [ ! -e "$1" ] || cp "$1" /usr/sbin/exabgp; } && shift &&
systemd-analyze verify "$@"' _ "$IFB" "$T_TMP/exabgp" "${units[@]}" 2>&1) && [ -z "$out" ]; then
			pass "systemd-analyze verify: the units (${#units[@]})"
		else
			fail "systemd-analyze verify: $out"
		fi
	fi
	# The examples the units read: ExaBGP's parses (and finds the
	# flowbloom it runs), flowbloom's reads to the end (then: no filter).
	if [ -x /usr/sbin/exabgp ]; then
		if out=$(unshare -m sh -c 'mount -t tmpfs tmpfs /usr/sbin && cp "$1" /usr/sbin/ &&
cp "$2" /usr/sbin/exabgp && exabgp_daemon_user=root /usr/sbin/exabgp --test "$3"' _ "$IFB" \
			"$T_TMP/exabgp" "$DEST/usr/share/doc/flowbloom/example.exabgp" 2>&1); then
			pass "ExaBGP accepts example.exabgp"
		else
			fail "ExaBGP refuses example.exabgp: $(tail -3 <<<"$out")"
		fi
	fi
	"$IFB" ipfix nosuch --config "$DEST/usr/share/doc/flowbloom/example.ipfix" >/dev/null 2>&1
	check_eq "flowbloom reads example.ipfix (then finds no filter: status 1)" "$?" 1
	# The metrics unit's command, with the textfile somewhere of ours.
	cmd=$(sed -n 's/^ExecStart=//p' "$u/flowbloom-metrics.service")
	check_eq "metrics unit command" "$cmd" \
		"/usr/sbin/flowbloom metrics --textfile /var/lib/prometheus/node-exporter/flowbloom.prom"
	"$IFB" create metrics_t --capacity 10 --fp-rate 0.01 >/dev/null
	cmd=${cmd/\/usr\/sbin\/flowbloom/$IFB}
	cmd=${cmd/\/var\/lib\/prometheus\/node-exporter/$T_TMP}
	check "metrics unit command runs" $cmd
	grep -q '^flowbloom_seen_packets_total{filter="metrics_t"}' "$T_TMP/flowbloom.prom" &&
		pass "textfile has the filter's counters" || fail "textfile: $(head -3 "$T_TMP/flowbloom.prom")"
	if command -v promtool >/dev/null; then
		check "promtool check metrics on the textfile" bash -c "promtool check metrics <'$T_TMP/flowbloom.prom'"
	else
		skip "promtool check metrics: promtool not installed (make deps installs prometheus)"
	fi
	"$IFB" destroy metrics_t >/dev/null
}

# ---------------------------------------------------------------- uninstall

test_uninstall() {
	local d2=$T_TMP/root2 left page
	mkdir -p "$DEST/etc/flowbloom"
	echo "capacity = 10" >"$DEST/etc/flowbloom/edge.conf"
	if make -s -C "$SRC" BUILD="$IBUILD" uninstall DESTDIR="$DEST" PREFIX=/usr >"$T_TMP/out" 2>&1; then
		pass "make uninstall DESTDIR PREFIX=/usr"
	else
		fail "make uninstall: $(tail -3 "$T_TMP/out")"
	fi
	left=$(cd "$DEST" && find . -type f | sort | tr '\n' ' ')
	check_eq "make uninstall: only the configuration is left" "$left" "./etc/flowbloom/edge.conf "
	check_eq "make uninstall: the install's directories go" \
		"$(cd "$DEST" && find . -type d -name flowbloom | sort | tr '\n' ' ')" "./etc/flowbloom "
	# A PREFIX=/usr/local install reads /usr/local/etc/flowbloom and says so.
	if make -s -C "$SRC" BUILD="$IBUILD" install DESTDIR="$d2" PREFIX=/usr/local >"$T_TMP/out" 2>&1; then
		pass "make install DESTDIR PREFIX=/usr/local"
	else
		fail "make install PREFIX=/usr/local: $(tail -5 "$T_TMP/out")"
		return
	fi
	page=$d2/usr/local/share/man/man8/flowbloom.8
	grep -q '^\.I /usr/local/etc/flowbloom/NAME\.conf$' "$page" && ! grep -q ' /etc/flowbloom' "$page" &&
		pass "PREFIX=/usr/local: the man page names /usr/local/etc/flowbloom" ||
		fail "PREFIX=/usr/local: the man page: $(grep -n 'etc/flowbloom' "$page" | head -3)"
	"$d2/usr/local/sbin/flowbloom" help apply | grep -q "/usr/local/etc/flowbloom/NAME.conf" &&
		pass "PREFIX=/usr/local: help apply names /usr/local/etc/flowbloom" ||
		fail "PREFIX=/usr/local: help apply: $("$d2/usr/local/sbin/flowbloom" help apply | tail -2)"
	check_eq "PREFIX=/usr/local: the ipfix unit" \
		"$(sed -n 's/^ExecStart=//p' "$d2/usr/local/lib/systemd/system/flowbloom-ipfix@.service")" \
		"/usr/local/sbin/flowbloom ipfix --config /usr/local/etc/flowbloom/%i.ipfix -- %i"
	make -s -C "$SRC" BUILD="$IBUILD" uninstall DESTDIR="$d2" PREFIX=/usr/local >"$T_TMP/out" 2>&1
	check_eq "PREFIX=/usr/local: make uninstall leaves no file" "$(find "$d2" -type f | wc -l)" 0
}

[ "$(id -u)" -eq 0 ] || {
	skip "install: needs root"
	t_finish
}
[ -x "$FB" ] || {
	fail "flowbloom is not built (run make)"
	t_finish
}
test_install
test_version_owner
test_binary
test_kernel
test_man
test_completion
test_units
test_uninstall
t_finish
