#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The systemd units as `make install` fills them, for an install under a
# temporary PREFIX (so the paths they name are real here): every unit
# passes `systemd-analyze verify` with nothing to say; and every command a
# unit runs (ExecStart, ExecReload, ExecStop, and the `flowbloom bgp` line
# of the installed example.exabgp), read from the installed files with %i
# expanded, runs here as systemd would run it, through the CLI's own
# parsing and work:
# - flowbloom@edge: start creates, loads and attaches edge (a veth in a
#   namespace: the listed source is dropped), reload changes nothing, stop
#   detaches and keeps the filter;
# - flowbloom-ipfix@edge: exports until SIGTERM and ends within the unit's
#   TimeoutStopSec, cleanly; a bad option file exits with the status the
#   unit does not retry (RestartPreventExitStatus), a missing filter with
#   another;
# - flowbloom-metrics: writes its textfile (in a private mount namespace:
#   the path is the real node_exporter directory's); under systemd, with
#   its timer, a run that skips a broken filter fails the service and the
#   timer starts it again;
# - the example's `flowbloom bgp rtbh`: reads one announcement and adds its
#   rule (its state in a private /run);
# - instance names that are no filter names (a '.', a leading '-', an
#   option's name, an escaped '/') are refused by each unit's command as a
#   usage error (status 2, not retried), never taken as an option or a
#   path outside SYSCONFDIR/flowbloom.
# The commands run under the sandbox each unit declares (User=, Group=,
# CapabilityBoundingSet=, NoNewPrivileges=, PrivateNetwork=: run_as_unit);
# a [Service] setting this suite cannot reproduce fails it, so a hardening
# directive is never added untried. PID 1 here may be another init: the
# start timeouts are checked under a systemd user manager of the suite's
# own (sd_start), which loads the installed boot and metrics units and
# starts the boot unit on an apply that hangs (a list that is a FIFO):
# it fails for its timeout, the apply killed, and a stand-in
# network.target ordered after it is reached all the same.
#
# Own FLOWBLOOM_ROOT; namespaces and veth named with the suite's PID;
# addresses 198.51.100.0/24. The trap removes them, the install tree and
# the filters.
source "$(dirname "$0")/../lib/lib.sh"
t_begin units

SRC=$(cd "$(dirname "$0")/../.." && pwd)
P=$T_TMP/p # PREFIX: the units name $P/sbin/flowbloom, $P/etc/flowbloom
UNITS=$P/lib/systemd/system
CONF=$P/etc/flowbloom
IFB=$P/sbin/flowbloom
GOOD4=198.51.100.1
BAD4=198.51.100.3
B4=198.51.100.2
IPFIX_PID=
SD_PID=
SD_CG=

cleanup() {
	t_kill $IPFIX_PID
	sd_stop
}
t_traps

[ "$(id -u)" -eq 0 ] || t_skip_all "needs root"
[ -x "$FB" ] || {
	fail "flowbloom is not built (run make)"
	t_finish
}
command -v systemd-analyze >/dev/null ||
	t_skip_all "systemd-analyze not installed (Debian's systemd package: make deps installs it)"

# ---------------------------------------------------------------- parsing

# unit_get UNIT KEY: the values of KEY in UNIT, one a line, as written.
unit_get() {
	sed -n "s/^$2=//p" "$1"
}

# unit_argv UNIT KEY INSTANCE: each KEY= command line of UNIT as systemd
# splits it, one word a line and a blank line after each command, %i
# expanded to INSTANCE and $MAINPID to 1. What this reader does not know
# (quotes, a prefix such as '-' or '+', other specifiers, variables) is
# refused with status 1: a command changed so is never left unchecked.
unit_argv() {
	local line w
	while IFS= read -r line; do
		case "$line" in
		*[\"\'\\]* | [-@+!:]*)
			echo "unit_argv: $1: $2=$line: quoting or a prefix this suite does not read" >&2
			return 1
			;;
		esac
		for w in $line; do
			w=${w//%i/"$3"}
			w=${w//\$MAINPID/1}
			case "$w" in
			*%* | *\$*)
				echo "unit_argv: $1: $2=$line: a specifier or variable this suite does not expand" >&2
				return 1
				;;
			esac
			printf '%s\n' "$w"
		done
		echo
	done < <(unit_get "$1" "$2")
}

# unit_cmd UNIT KEY INSTANCE: the one KEY= command of UNIT, into the
# array CMD (status 1, and a failure, if there is not exactly one).
unit_cmd() {
	local out
	out=$(unit_argv "$@") || {
		fail "$1 $2: not read"
		return 1
	}
	mapfile -t CMD < <(sed '/^$/d' <<<"$out")
	if [ "$(unit_get "$1" "$2" | wc -l)" -ne 1 ] || [ "${#CMD[@]}" -eq 0 ]; then
		fail "${1##*/}: want one $2= command, got: $(tr '\n' ' ' <<<"$out")"
		return 1
	fi
}

# The [Service] settings run_as_unit reproduces, and those that restrict
# nothing a command does (how it starts, restarts, stops, its environment).
SANDBOX_DONE="User Group CapabilityBoundingSet NoNewPrivileges PrivateNetwork"
SERVICE_PLAIN="Type RemainAfterExit ExecStart ExecReload ExecStop Restart RestartSec
	RestartPreventExitStatus TimeoutStartSec TimeoutStopSec Environment KillMode"

# unit_sandbox UNIT: into the array SB, the command prefix that runs a
# command with the sandbox UNIT's [Service] declares (status 126 and a
# message for a setting this suite cannot reproduce). run_as_unit UNIT
# CMD...: CMD so.
unit_sandbox() {
	local unit=$1 k v sp=() caps
	SB=()
	while IFS='=' read -r k v; do
		case " $SANDBOX_DONE $SERVICE_PLAIN " in
		*[[:space:]]"$k"[[:space:]]*) ;;
		*)
			echo "unit_sandbox: ${unit##*/}: $k= is not reproduced by tests/cli/units.sh" >&2
			return 126
			;;
		esac
	done < <(sed -n '/^\[Service\]/,/^\[/{/^[A-Za-z]*=/p}' "$unit")
	v=$(unit_get "$unit" User | tail -1)
	[ -n "$v" ] && [ "$v" != root ] && sp+=(--reuid "$v" --init-groups)
	v=$(unit_get "$unit" Group | tail -1)
	[ -n "$v" ] && [ "$v" != root ] && sp+=(--regid "$v")
	caps=$(unit_get "$unit" CapabilityBoundingSet | tr ' ' '\n' | sed -n 's/^CAP_//p' |
		tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
	[ -n "$(unit_get "$unit" CapabilityBoundingSet)" ] && sp+=(--bounding-set "-all${caps:+,$caps}")
	case $(unit_get "$unit" NoNewPrivileges | tail -1) in yes | true | on | 1) sp+=(--no-new-privs) ;; esac
	case $(unit_get "$unit" PrivateNetwork | tail -1) in yes | true | on | 1) SB+=(unshare -n) ;; esac
	((${#sp[@]})) && SB+=(setpriv "${sp[@]}")
	return 0
}
run_as_unit() {
	local unit=$1
	shift
	unit_sandbox "$unit" || return
	"${SB[@]}" "$@"
}
# unit_in_b UNIT CMD...: run_as_unit in namespace $NSB (the devices' own).
unit_in_b() {
	local unit=$1
	shift
	unit_sandbox "$unit" || return
	inB "${SB[@]}" "$@"
}

# ---------------------------------------------------------------- install

test_install() {
	# Other paths than the build's relink the binary (its help names
	# them): in a copy of the build, never the one other suites run.
	cp -a "$SRC/build" "$T_TMP/build"
	if make -s -C "$SRC" BUILD="$T_TMP/build" install PREFIX="$P" >"$T_TMP/out" 2>&1; then
		pass "make install PREFIX=$P"
	else
		fail "make install: $(tail -5 "$T_TMP/out")"
		t_finish
	fi
}

test_verify() {
	local u units=() out
	for u in flowbloom@.service flowbloom-ipfix@.service flowbloom-bgp@.service \
		flowbloom-metrics.service flowbloom-metrics.timer; do
		[ -s "$UNITS/$u" ] && units+=("$UNITS/$u") || fail "not installed: $u"
	done
	# verify says what it finds on stderr and exits 0 for most of it (an
	# unknown key, a bad value): anything it says is a failure. A
	# template is checked as instance 'i'; Documentation=man: pages are
	# looked for under the install's MANPATH (and the system's, for
	# exabgp(1)); ExecStart's binaries must exist (ExaBGP: its Debian
	# package).
	[ -x "$(unit_get "$UNITS/flowbloom-bgp@.service" ExecStart | cut -d' ' -f1)" ] ||
		skip "verify of flowbloom-bgp@.service: no ExaBGP at $(unit_get "$UNITS/flowbloom-bgp@.service" ExecStart | cut -d' ' -f1)"
	out=$(MANPATH=$P/share/man:/usr/share/man systemd-analyze verify "${units[@]}" 2>&1)
	check_eq "systemd-analyze verify: nothing to say of the ${#units[@]} units" "$out" ""
}

# docs/operations.md's drop-in that puts the boot unit before
# network-pre.target (a firewall's place) verifies with the unit: no
# ordering cycle (the unit was ordered after network-pre.target, so the
# drop-in made one and systemd dropped network-pre.target's start).
test_verify_early() {
	local d=$T_TMP/early out
	mkdir -p "$d/flowbloom@edge.service.d"
	cp "$UNITS/flowbloom@.service" "$d/"
	awk '/^```/ { if (inb) { if (hit) exit; buf = ""; inb = 0 } else inb = 1; next }
	     inb { buf = buf $0 "\n"; if ($0 ~ /^Before=network-pre.target/) hit = 1 }
	     END { printf "%s", hit ? buf : "" }' "$SRC/docs/operations.md" \
		>"$d/flowbloom@edge.service.d/early.conf"
	check "docs/operations.md gives the drop-in before network-pre.target" \
		grep -q '^Before=network-pre.target' "$d/flowbloom@edge.service.d/early.conf"
	out=$(SYSTEMD_UNIT_PATH=$d: MANPATH=$P/share/man:/usr/share/man \
		systemd-analyze verify "$d/flowbloom@edge.service" 2>&1)
	check_eq "... verifies with flowbloom@edge: nothing to say (no ordering cycle)" "$out" ""
}

# ---------------------------------------------------------------- commands

# The sandbox reproduced: a setting run_as_unit does not know stops the
# command; CapabilityBoundingSet= without CAP_BPF stops apply.
test_sandbox_self() {
	local u=$T_TMP/sb.service
	printf '[Service]\nExecStart=/bin/true\nProtectKernelTunables=yes\n' >"$u"
	t_refused 126 "run_as_unit: an unknown setting refused" "ProtectKernelTunables" run_as_unit "$u" true
	printf '[Service]\nExecStart=/bin/true\nCapabilityBoundingSet=CAP_NET_ADMIN\n' >"$u"
	run_as_unit "$u" "$IFB" create sbx --capacity 10 --fp-rate 0.01 >/dev/null 2>&1 &&
		fail "run_as_unit: CapabilityBoundingSet=CAP_NET_ADMIN let create make BPF maps" ||
		pass "run_as_unit: a bounding set without CAP_BPF stops create"
	"$IFB" destroy sbx >/dev/null 2>&1
}

seen_since() { [ $(($(t_stat "$IFB" edge seen) - $1)) -ge "$2" ]; }

test_boot_unit() {
	local u=$UNITS/flowbloom@.service s0 d0 out
	mkdir -p "$CONF/lists"
	echo "$BAD4" >"$CONF/lists/drop.txt"
	printf 'capacity = 1000\nfp-rate = 0.001\nload = lists/drop.txt\nattach = %s native\n' \
		"$VB" >"$CONF/edge.conf"
	unit_cmd "$u" ExecStart edge || return
	check_eq "boot unit: ExecStart is apply SYSCONFDIR/flowbloom/%i.conf" "${CMD[*]}" \
		"$IFB apply $CONF/edge.conf"
	check "flowbloom@edge start" unit_in_b "$u" "${CMD[@]}"
	s0=$(t_stat "$IFB" edge seen)
	d0=$(t_stat "$IFB" edge dropped)
	inA "$PY" -c "$T_UDP_SEND" "$GOOD4" "$B4" 10
	inA "$PY" -c "$T_UDP_SEND" "$BAD4" "$B4" 10
	t_wait_until 30 seen_since "$s0" 20
	check_eq "flowbloom@edge: the listed source dropped" "$(($(t_stat "$IFB" edge dropped) - d0))" 10
	unit_cmd "$u" ExecReload edge || return
	out=$(unit_in_b "$u" "${CMD[@]}" 2>&1)
	check_eq "flowbloom@edge reload: unchanged" "$(tail -1 <<<"$out")" "$CONF/edge.conf: filter edge unchanged"
	unit_cmd "$u" ExecStop edge || return
	check "flowbloom@edge stop" unit_in_b "$u" "${CMD[@]}"
	inB ip -d link show "$VB" | grep -q 'prog/xdp' &&
		fail "flowbloom@edge stop: $VB still runs XDP" || pass "flowbloom@edge stop: detached"
	check "flowbloom@edge stop: the filter stays" "$IFB" info edge
}

test_ipfix_unit() {
	local u=$UNITS/flowbloom-ipfix@.service stop rc t0
	unit_cmd "$u" ExecStart edge || return
	check_eq "ipfix unit: ExecStart (the instance an operand, after --)" "${CMD[*]}" \
		"$IFB ipfix --config $CONF/edge.ipfix -- edge"
	# The exit status the unit does not retry: a bad option file's.
	check_eq "ipfix unit: RestartPreventExitStatus" "$(unit_get "$u" RestartPreventExitStatus)" 2
	printf 'collector = 127.0.0.1:4739\nidle-timeout = soon\n' >"$CONF/edge.ipfix"
	unit_in_b "$u" "${CMD[@]}" >/dev/null 2>&1
	check_eq "ipfix unit: a bad option file, not retried" "$?" 2
	printf 'collector = 127.0.0.1:4739\n' >"$CONF/edge.ipfix"
	unit_in_b "$u" "${CMD[@]}" >/dev/null 2>&1
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 2 ] && pass "ipfix unit: no monitoring yet: failed, retried" ||
		fail "ipfix unit: no monitoring yet: exit $rc"
	check "attach edge with accounting (by hand, as documented)" \
		"$IFB" -n "$NSB" attach edge "$VB" --accounting
	unit_in_b "$u" "${CMD[@]}" >"$T_TMP/ipfix.out" 2>&1 &
	IPFIX_PID=$!
	if t_wait_until 20 grep -qs 'exporting' "$T_TMP/ipfix.out"; then
		pass "flowbloom-ipfix@edge runs"
	else
		fail "flowbloom-ipfix@edge: $(head -c 300 "$T_TMP/ipfix.out")"
	fi
	# systemctl stop: SIGTERM, SIGKILL after TimeoutStopSec; a clean end
	# is status 0 (or death by SIGTERM, which systemd counts as clean).
	stop=$(unit_get "$u" TimeoutStopSec)
	t0=$SECONDS
	t_kill "$IPFIX_PID"
	timeout $((stop + 1)) tail --pid="$IPFIX_PID" -f /dev/null
	wait "$IPFIX_PID"
	rc=$?
	IPFIX_PID=
	[ $((SECONDS - t0)) -le "$stop" ] && pass "ipfix unit: SIGTERM ends it within TimeoutStopSec=$stop" ||
		fail "ipfix unit: SIGTERM took $((SECONDS - t0)) s (TimeoutStopSec=$stop)"
	[ "$rc" -eq 0 ] || [ "$rc" -eq 143 ] && pass "ipfix unit: SIGTERM: a clean end" ||
		fail "ipfix unit: SIGTERM: exit $rc: $(tail -2 "$T_TMP/ipfix.out")"
	check "detach edge" "$IFB" -n "$NSB" detach "$VB"
}

test_metrics_unit() {
	local u=$UNITS/flowbloom-metrics.service dir out
	unit_cmd "$u" ExecStart "" || return
	dir=$(unit_get "$u" ConditionPathIsDirectory)
	check_eq "metrics unit: writes into its condition's directory" "$(dirname "${CMD[-1]}")" "$dir"
	# The real directory, in a private mount namespace: a tmpfs over
	# /var/lib there, gone with it.
	unit_sandbox "$u" || return
	out=$(unshare -m sh -c 'mount -t tmpfs tmpfs /var/lib && mkdir -p "$1" && d=$1 && shift &&
		"$@" && cat "$d/flowbloom.prom"' _ "$dir" "${SB[@]}" "${CMD[@]}" 2>&1)
	grep -q '^flowbloom_seen_packets_total{filter="edge"}' <<<"$out" &&
		pass "flowbloom-metrics: the textfile has edge's counters" ||
		fail "flowbloom-metrics: $(head -c 300 <<<"$out")"
}

# The metrics timer, as systemd runs it: the installed timer and service,
# a drop-in only for the interval (3 s: 5 starts in 10 s hit the start
# limit), the textfile's path and our root. A run that skips a broken
# filter writes the file (its flowbloom_filter_up 0) and exits 1, so the
# service shows failed; the timer starts it again all the same; once the
# filter is gone, a run ends well.
test_metrics_timer() {
	local d=$XDG_CONFIG_HOME/systemd/user s=flowbloom-metrics.service t0 prom=$T_TMP/mt/flowbloom.prom
	sd_start || {
		skip "metrics timer under systemd: $SD_WHY"
		return
	}
	mkdir -p "$T_TMP/mt" "$d/$s.d" "$d/flowbloom-metrics.timer.d"
	cp "$UNITS/$s" "$UNITS/flowbloom-metrics.timer" "$d/"
	printf '[Service]\nEnvironment=FLOWBLOOM_ROOT=%s\nExecStart=\nExecStart=%s metrics --textfile %s\n[Unit]\nConditionPathIsDirectory=\n' \
		"$FLOWBLOOM_ROOT" "$IFB" "$prom" >"$d/$s.d/t.conf"
	printf '[Timer]\nOnBootSec=\nOnUnitActiveSec=\nOnActiveSec=0\nOnUnitActiveSec=3s\nAccuracySec=100ms\n' \
		>"$d/flowbloom-metrics.timer.d/t.conf"
	"$IFB" create mt_br --capacity 100 --fp-rate 0.01 >/dev/null
	rm "$FLOWBLOOM_ROOT/mt_br/stats"
	sd daemon-reload
	check "metrics timer: starts" sd start flowbloom-metrics.timer
	state() { echo "$(sd show -p ActiveState --value $s) $(sd show -p Result --value $s)"; }
	started() { sd show -p ExecMainStartTimestampMonotonic --value $s; }
	t_wait_until 20 eval '[ "$(state)" = "failed exit-code" ]'
	check_eq "... a broken filter: the service failed (exit 1)" "$(state)" "failed exit-code"
	check_eq "... the file written, the filter's up 0, edge's 1" \
		"$(grep -c -e '^flowbloom_filter_up{filter="mt_br"} 0$' -e '^flowbloom_filter_up{filter="edge"} 1$' "$prom" 2>&1)" 2
	t0=$(started)
	t_wait_until 20 eval '[ "$(started)" != "$t0" ] && [ "$(state)" = "failed exit-code" ]'
	[ "$(started)" != "$t0" ] && pass "... the timer starts it again after the failure" ||
		fail "... the timer did not start it again: $(sd status flowbloom-metrics.timer 2>&1 | head -5 | tr '\n' ' ')"
	"$IFB" destroy mt_br >/dev/null
	t_wait_until 20 eval '[ "$(state)" = "inactive success" ]'
	check_eq "... the filter destroyed: the next run ends well" "$(state)" "inactive success"
	check_eq "... its up gone from the file" "$(grep -c 'filter="mt_br"' "$prom")" 0
	sd_stop
}

test_bgp_unit() {
	local u=$UNITS/flowbloom-bgp@.service line cmd
	unit_cmd "$u" ExecStart edge || return
	check_eq "bgp unit: ExaBGP on SYSCONFDIR/flowbloom/%i.exabgp" "${CMD[-1]}" "$CONF/edge.exabgp"
	unit_cmd "$u" ExecReload edge || return
	[ -x "${CMD[0]}" ] && pass "bgp unit: ExecReload's ${CMD[0]}" || fail "bgp unit: no ${CMD[0]}"
	# The installed example's process line, as ExaBGP runs it.
	line=$(sed -n 's/^[[:space:]]*run \(.*\);$/\1/p' "$P/share/doc/flowbloom/example.exabgp")
	read -ra cmd <<<"$line"
	check_eq "example.exabgp runs the installed flowbloom bgp" "${cmd[*]:0:2}" "$IFB bgp"
	check "create ${cmd[2]} (counting)" "$IFB" create "${cmd[2]}" --capacity 1000 --fp-rate 0.001 --counting
	# Its default state file is in /run/flowbloom: a private /run here.
	t_exa_ann 203.0.113.0/24 >"$T_TMP/ann"
	unit_sandbox "$u" || return
	check "the example's flowbloom bgp reads an announcement" unshare -m sh -c \
		'mount -t tmpfs tmpfs /run && exec "$@" <"$0"' "$T_TMP/ann" "${SB[@]}" "${cmd[@]}"
	"$IFB" query "${cmd[2]}" dst 203.0.113.0/24 >"$T_TMP/q" 2>&1
	grep -q '^maybe dst 203.0.113.0/24' "$T_TMP/q" && pass "bgp: the route's rule is in ${cmd[2]}" ||
		fail "bgp: query: $(head -c 200 "$T_TMP/q")"
}

# %i is systemd's escaped instance: no '/', but '.', '\' (escapes) and a
# leading '-' get through. Each must be refused as a filter name by the
# command, never read as an option (--help would end it quietly, status
# 0) or reach another file; refused as a usage error (status 2), which
# the ipfix unit does not retry (RestartPreventExitStatus), never as a
# failure it would retry every RestartSec forever.
test_instances() {
	local i u rc
	for i in 'a.b' '-x' '--help' '-h' 'a\x2fb'; do
		for u in flowbloom@.service flowbloom-ipfix@.service; do
			case $u in
			flowbloom@*) cp "$CONF/edge.conf" "$CONF/$i.conf" ;;
			*) cp "$CONF/edge.ipfix" "$CONF/$i.ipfix" ;;
			esac
			unit_cmd "$UNITS/$u" ExecStart "$i" || continue
			unit_in_b "$UNITS/$u" "${CMD[@]}" >/dev/null 2>"$T_TMP/err"
			rc=$?
			[ "$rc" -eq 2 ] && grep -qF "bad filter name '$i'" "$T_TMP/err" &&
				pass "${u%@*}@$i refused, exit 2 ($(head -1 "$T_TMP/err"))" ||
				fail "${u%@*}@$i: exit $rc: $(head -c 200 "$T_TMP/err")"
			# Restart=on-failure retries a status but 0 and those listed.
			[ -z "$(unit_get "$UNITS/$u" Restart)" ] || [ "$rc" -eq 0 ] && continue
			case " $(unit_get "$UNITS/$u" RestartPreventExitStatus) " in
			*" $rc "*) pass "${u%@*}@$i: exit $rc is not retried (RestartPreventExitStatus)" ;;
			*) fail "${u%@*}@$i: exit $rc is retried every RestartSec (Restart=$(unit_get "$UNITS/$u" Restart), RestartPreventExitStatus=$(unit_get "$UNITS/$u" RestartPreventExitStatus))" ;;
			esac
		done
	done
	check_eq "no filter made by a bad instance" "$("$IFB" list | cut -d' ' -f1 | sort | tr '\n' ' ')" "edge rtbh "
}

# ---------------------------------------------------------------- timeouts

# A systemd of our own to load the installed units and run them: a user
# manager (root's), contained so it touches nothing of the machine's. It
# runs in a cgroup of its own in systemd's named hierarchy (cgroup v1,
# name=systemd), which a cgroup namespace makes its root, in a mount
# namespace where that hierarchy is the only one mounted (no controller
# it could move the machine's processes in) and where /run/systemd/system
# says it was booted with systemd. Its sockets and units are under T_TMP.
# sd_start: 0 once it answers, else 1 with SD_WHY.
sd_start() {
	local sdroot=/sys/fs/cgroup/systemd
	SD_WHY=
	[ -x /lib/systemd/systemd ] || SD_WHY="no /lib/systemd/systemd"
	[ -z "$SD_WHY" ] && [ -d /run/systemd ] || SD_WHY="${SD_WHY:-no /run/systemd to mount over}"
	[ -z "$SD_WHY" ] && grep -q "^[^ ]* $sdroot cgroup .*name=systemd" /proc/mounts ||
		SD_WHY="${SD_WHY:-no cgroup v1 name=systemd hierarchy at $sdroot to contain a systemd in}"
	[ -z "$SD_WHY" ] || return 1
	export XDG_RUNTIME_DIR=$T_TMP/sd/run XDG_CONFIG_HOME=$T_TMP/sd/cfg
	mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/systemd/user"
	chmod 700 "$XDG_RUNTIME_DIR"
	SD_CG=$sdroot/fbtest_units_$$
	mkdir "$SD_CG" || {
		SD_WHY="cannot make $SD_CG"
		SD_CG=
		return 1
	}
	(echo "$BASHPID" >"$SD_CG/cgroup.procs" && exec unshare -C -m --propagation private sh -c '
		mount -t tmpfs tmpfs /sys/fs/cgroup && mkdir /sys/fs/cgroup/systemd &&
		mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd &&
		mount -t tmpfs tmpfs /run/systemd && mkdir /run/systemd/system &&
		exec /lib/systemd/systemd --user --log-target=console' >"$T_TMP/sd/log" 2>&1) &
	SD_PID=$!
	t_wait_until 20 sd running && return 0
	SD_WHY="systemd --user did not start: $(sd is-system-running 2>&1) $(tail -3 "$T_TMP/sd/log" | tr '\n' ' ')"
	return 1
}
# sd ARGS...: systemctl --user ARGS for our manager, in its mount
# namespace (where /run/systemd/system is).
sd() {
	[ "$1" != running ] || set -- is-system-running --quiet
	nsenter -t "$SD_PID" -m -- systemctl --user --no-pager "$@"
}
# sd_stop: the manager ended, and the cgroups it made removed.
sd_stop() {
	local p
	[ -n "$SD_PID" ] && kill "$SD_PID" 2>/dev/null && wait "$SD_PID" 2>/dev/null
	SD_PID=
	[ -n "$SD_CG" ] && [ -d "$SD_CG" ] || return 0
	# What it ran and left (a killed service's process): ours, by id.
	for p in $(find "$SD_CG" -name cgroup.procs -exec cat {} +); do kill -9 "$p" 2>/dev/null; done
	t_wait_until 30 sd_cg_gone
	SD_CG=
}
sd_cg_gone() {
	case "$SD_CG" in /sys/fs/cgroup/systemd/fbtest_units_*) ;; *) return 0 ;; esac
	find "$SD_CG" -depth -type d -exec rmdir {} + 2>/dev/null
	[ ! -d "$SD_CG" ]
}

# The boot unit as systemd loads it has a start timeout (a oneshot has
# none by default: a hung apply held boot forever), the one
# docs/operations.md gives; so does the metrics service. Then a real
# apply that hangs (its list a FIFO nobody writes), under the installed
# unit with only the timeout shortened by a drop-in, started with a
# stand-in network.target ordered after it as on a boot: the unit fails
# for the timeout, its apply is killed, nothing is created, and
# network.target is reached all the same (the network comes up without
# the filter).
test_timeouts() {
	local u want
	sd_start || {
		skip "start timeouts under systemd: $SD_WHY"
		return
	}
	want=$(sed -n 's/.*`TimeoutStartSec=\([0-9a-z]*\)`.*/\1/p' "$SRC/docs/operations.md" | head -1)
	check_eq "docs/operations.md gives the boot unit's TimeoutStartSec" "$want" 5min
	cp "$UNITS/flowbloom@.service" "$UNITS/flowbloom-metrics.service" "$XDG_CONFIG_HOME/systemd/user/"
	printf '[Unit]\nDescription=network.target stand-in\n' >"$XDG_CONFIG_HOME/systemd/user/network.target"
	sd daemon-reload
	check_eq "systemd: flowbloom@edge's start timeout" \
		"$(sd show -p TimeoutStartUSec --value flowbloom@edge.service)" 5min
	check_eq "systemd: flowbloom-metrics' start timeout" \
		"$(sd show -p TimeoutStartUSec --value flowbloom-metrics.service)" 1min
	# A real hang: apply waits for its list (a FIFO).
	mkfifo "$CONF/lists/fifo.txt"
	printf 'capacity = 1000\nfp-rate = 0.001\nload = lists/fifo.txt\n' >"$CONF/hang.conf"
	mkdir -p "$XDG_CONFIG_HOME/systemd/user/flowbloom@hang.service.d"
	printf '[Service]\nTimeoutStartSec=3s\nTimeoutStopSec=3s\n' \
		>"$XDG_CONFIG_HOME/systemd/user/flowbloom@hang.service.d/short.conf"
	sd daemon-reload
	u=flowbloom@hang.service
	check_eq "... hang: ExecStart is the installed apply" \
		"$(sd show -p ExecStart --value $u | grep -o 'argv\[\]=[^;]*;' | head -1)" \
		"argv[]=$IFB apply $CONF/hang.conf ;"
	sd start $u network.target >/dev/null 2>&1 &&
		fail "... hang: start ended well" || pass "... hang: start failed"
	check_eq "... hang: the unit failed for the timeout" \
		"$(sd show -p ActiveState --value $u) $(sd show -p Result --value $u)" "failed timeout"
	check_eq "... hang: network.target reached all the same" \
		"$(sd show -p ActiveState --value network.target)" active
	pgrep -f "$IFB apply $CONF/hang.conf" >/dev/null &&
		fail "... hang: its apply still runs" || pass "... hang: its apply ended"
	check_eq "... hang: no filter hang made" "$("$IFB" list | grep -c '^hang ')" 0
	sd_stop
	rm -f "$CONF/lists/fifo.txt" "$CONF/hang.conf"
}

[ -x "$FB" ] || t_skip_all "flowbloom is not built"
test_install
test_verify
test_verify_early
test_sandbox_self
t_udp_pair "$B4" "$GOOD4" "$BAD4" || t_skip_all "$T_NET_WHY"
test_boot_unit
test_timeouts
test_ipfix_unit
test_metrics_unit
test_metrics_timer
test_bgp_unit
test_instances
t_finish
