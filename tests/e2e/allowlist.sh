#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The actions besides drop on a real link, as operations.md and cli.md
# describe them. In namespaces of the test's own, a veth pair:
# - every frame a link carries besides the listed flows (ARP, LLDP, MPLS,
#   802.3, VLAN-tagged ARP, IPv6 neighbour discovery and router
#   advertisements, ICMP errors about a listed flow, DHCP, VLAN and QinQ
#   tags and a third one, first and later IPv4 and IPv6 fragments of a
#   listed flow, a TCP RST of one, malformed frames), sent alone under
#   allow, allow --malformed pass, monitor, monitor --malformed drop and
#   drop (attach --replace between them): the live verdict (the counters
#   before and after), the counters it moved, `replay`'s verdict and
#   `query --packet`'s are what the docs say (tests/e2e/allowlist.py holds
#   the frames and that model);
# - operations.md's recipes for an allow-list (ICMP and ICMPv6 to the
#   host's addresses, DHCP replies, neighbour discovery) let those frames
#   through and nothing else;
# - neighbour discovery through the kernel, over global addresses on one
#   link: with only link-local and :: sources allowed, the neighbours'
#   solicitations (from their global addresses) are dropped and no
#   datagram arrives; with the link's prefix allowed too, all do;
# - `attach` of an allow-list that holds no rules (the filter's action,
#   or --action allow) warns that every IP packet is now dropped; of one
#   with rules, or under monitor or drop, it does not.
# Addresses: 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32.
source "$(dirname "$0")/../lib/lib.sh"
t_begin allowlist
AL="$(dirname "$0")/allowlist.py"
cleanup() { t_net_down; }
t_traps

t_net_pair --no-ipv6 || t_skip_all "$T_NET_WHY"
fbB() { "$FB" -n "$NSB" "$@"; }
# table ACTION MALFORMED [ONLY]: allowlist.py's checks, one each.
table() {
	local line
	while IFS= read -r line; do
		case "$line" in
		ok\ *) pass "${line#ok }" ;;
		*) fail "${line#bad }" ;;
		esac
	done < <(inA "$PY" "$AL" run "$FB" L "$VA" "$@" 2>&1)
}

check "create L (allow)" "$FB" create L --capacity 1000 --fp-rate 0.001 --action allow
check "add the listed flows" "$FB" add L tcp 198.51.100.1:40000 203.0.113.2:80 \
	tcp [2001:db8:1::1]:40000 [2001:db8:2::2]:80 udp 198.51.100.1:5000 203.0.113.2:53 \
	udp [2001:db8:1::1]:5000 [2001:db8:2::2]:53
check "attach L (native, its own action: allow)" fbB attach L "$VB"
table allow -
for a in "allow pass" "monitor -" "monitor drop" "drop -"; do
	if [ "${a#* }" = - ]; then
		check "attach --replace --action ${a% *}" fbB attach L "$VB" --replace --action "${a% *}"
	else
		check "attach --replace --action ${a% *} --malformed ${a#* }" \
			fbB attach L "$VB" --replace --action "${a% *}" --malformed "${a#* }"
	fi
	table $a
done

# --- operations.md's recipes for what a host needs besides its flows
check "attach --replace (allow again)" fbB attach L "$VB" --replace
check "add the recipes: ICMP to the host, DHCP replies, neighbour discovery" "$FB" add L \
	icmp dst 203.0.113.2 icmpv6 dst 2001:db8:2::2 udp sport 67 dport 68 \
	icmpv6 src fe80::/10 icmpv6 src ::/128
table allow - "ICMPv6 neighbour solicitation from fe80::1,ICMPv6 router advertisement from fe80::1,ICMP fragmentation needed about the listed flow,ICMPv6 packet too big about the listed flow,ICMP port unreachable from the listed peer,DHCP offer,an echo request (for the recipes)"
check_eq "... and unlisted TCP is still dropped" \
	"$("$FB" query L --packet tcp 198.51.100.1:40001 203.0.113.2:80 | head -1 | cut -c1-4)" drop
check "detach" fbB detach "$VB"

# --- neighbour discovery over global addresses, through the kernel
inA sysctl -qw net.ipv6.conf.all.disable_ipv6=0
inB sysctl -qw net.ipv6.conf.all.disable_ipv6=0
t_addr "$NSA" "$VA" 2001:db8:1::1/64
t_addr "$NSB" "$VB" 2001:db8:1::2/64
check "create N (allow)" "$FB" create N --capacity 1000 --fp-rate 0.001 --action allow
check "add UDP from A to B, ICMPv6 from link-local and ::" "$FB" add N \
	udp src 2001:db8:1::1 dst 2001:db8:1::2 icmpv6 src fe80::/10 icmpv6 src ::/128
check "attach N" fbB attach N "$VB"
# udp_in N: datagrams B's socket receives of N that A sends, 0.3 s apart,
# once the socket is bound (a fixed wait for it was too short on a loaded
# machine: a datagram sent before it is refused, not counted).
udp_in() {
	rm -f "$T_TMP/bound"
	inB "$PY" -c 'import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("2001:db8:1::2", 9))
open(sys.argv[1], "w").close()
s.settimeout(4)
n = 0
try:
    while True:
        s.recv(64)
        n += 1
except socket.timeout:
    pass
print(n)' "$T_TMP/bound" >"$T_TMP/in" &
	local rx=$!
	t_wait_until 20 test -e "$T_TMP/bound" || fail "udp_in: B's receiver not bound after 20 s"
	inA "$PY" -c 'import socket, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"flowbloom", ("2001:db8:1::2", 9))
    time.sleep(0.3)' "$1"
	wait "$rx"
	cat "$T_TMP/in"
}
check_eq "link-local and :: only: A's solicitations (from its global address) dropped, nothing arrives" \
	"$(udp_in 3)" 0
check_eq "... the solicitation A sends, as query --packet builds it, is dropped" \
	"$("$FB" query N --packet icmpv6 src 2001:db8:1::1 dst ff02::1:ff00:2 | head -1 | cut -c1-4)" drop
ip -n "$NSA" neigh flush dev "$VA"
check "add ICMPv6 from the link's prefix" "$FB" add N icmpv6 src 2001:db8:1::/64
check_eq "with the link's prefix allowed, every datagram arrives" "$(udp_in 3)" 3
check "detach" fbB detach "$VB"

# --- attach warns of an allow-list without rules
WARN="holds no rules: under allow $VB drops every IP packet"
# attached LABEL ARGS...: `attach ARGS` in B succeeds; its stderr in $T_TMP/err.
attached() {
	local label=$1
	shift
	if fbB attach "$@" >"$T_TMP/out" 2>"$T_TMP/err"; then pass "$label"; else fail "$label: $(cat "$T_TMP/err")"; fi
}
check "create E (allow, empty)" "$FB" create E --capacity 100 --fp-rate 0.01 --action allow
attached "attach E" E "$VB"
grep -qF "flowbloom: warning: filter 'E' $WARN" "$T_TMP/err" && pass "... warns: $WARN" ||
	fail "attach of an empty allow-list said: '$(cat "$T_TMP/err")'"
attached "attach E --replace --action monitor" E "$VB" --replace --action monitor
check_eq "... says nothing on stderr" "$(cat "$T_TMP/err")" ""
check "create D (drop, empty)" "$FB" create D --capacity 100 --fp-rate 0.01
attached "attach D --replace" D "$VB" --replace
check_eq "... says nothing on stderr" "$(cat "$T_TMP/err")" ""
attached "attach D --replace --action allow" D "$VB" --replace --action allow
grep -qF "flowbloom: warning: filter 'D' $WARN" "$T_TMP/err" && pass "... warns" ||
	fail "attach --action allow of an empty filter said: '$(cat "$T_TMP/err")'"
check "add a rule to E" "$FB" add E tcp 198.51.100.1:40000 203.0.113.2:80
attached "attach E --replace (allow, one rule)" E "$VB" --replace
check_eq "... says nothing on stderr" "$(cat "$T_TMP/err")" ""
check "detach" fbB detach "$VB"
# apply, the boot unit's way, of an allow-list whose list is empty (a
# download that failed): refused, nothing created nor attached (it would
# drop every packet); with allow-empty = yes, attach's warning (it said
# only that the input held no rules).
: >"$T_TMP/empty.txt"
printf 'capacity = 100\nfp-rate = 0.01\naction = allow\nload = %s\nattach = %s generic\n' \
	"$T_TMP/empty.txt" "$VB" >"$T_TMP/ae.conf"
fbB apply "$T_TMP/ae.conf" >"$T_TMP/out" 2>"$T_TMP/err"
check_eq "apply of an empty allow-list: refused" "$? $(cat "$T_TMP/err")" \
	"1 flowbloom: $T_TMP/ae.conf:4: $T_TMP/empty.txt holds no rules: nothing changed (allow-empty = yes empties the filter)"
check_eq "... nothing created, nothing attached" \
	"$("$FB" list | grep -c '^ae ') $(ip -n "$NSB" -o link show "$VB" | grep -c ' xdp')" "0 0"
printf 'allow-empty = yes\n' >>"$T_TMP/ae.conf"
if fbB apply "$T_TMP/ae.conf" >"$T_TMP/out" 2>"$T_TMP/err"; then
	grep -qF "flowbloom: warning: filter 'ae' $WARN" "$T_TMP/err" && pass "apply of an empty allow-list warns" ||
		fail "apply of an empty allow-list said: '$(cat "$T_TMP/err")'"
else
	fail "apply of an empty allow-list: $(cat "$T_TMP/err")"
fi
check "apply --down" fbB apply --down "$T_TMP/ae.conf"
check "destroy ae" "$FB" destroy ae

t_end
