#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The CLI's contract (docs/cli.md, "Conventions of every verb"), for every
# verb of the verb table, found in `flowbloom help` (a new verb is checked
# without a line here, and fails until it has a success and a failure case
# below):
#  a. `help VERB` and `VERB help` agree; every option the verb's parser
#     accepts is in its help text and (one spelling of it at least) in its
#     synopsis, with a value exactly when the parser wants one; every option
#     the synopsis names is accepted. The parser's options come from the
#     source (the `struct option` tables, getopt strings and strcmp'd
#     "--words" of user/cli/cmd_*.c and the helpers they call), each one
#     then asked of the binary (accepted: not refused as unknown);
#  b. an unknown option, an option without its value and a missing
#     argument: exit 2, one error line naming it (then the verb's
#     synopsis), with -j also one {"error": MSG} object on stdout (bgp and
#     guard: nothing, their stdout is ExaBGP's);
#  c. a success path of every verb that runs without an attachment, under
#     -j: one JSON object (one per line for the streaming ones), exit 0,
#     nothing on stderr but notes;
#  d. a failure path of every verb (a missing filter or device, an
#     unreadable file; the attachment verbs' cheap failures): exit 1, the
#     error line on stderr and the same {"error"} on stdout;
#  e. the man page (build/flowbloom.8, as `help --man` prints it) and the
#     bash completion (dist/flowbloom.bash) name every verb and its options;
# and a file with one bad line (the 2nd; the 7th after comments and blank
# lines), through every verb that reads one, is refused whole with
# FILE:LINE, the filter unchanged (its content digest); a directory, a file
# the caller may not read or an empty export as FILE: exit 1, one line
# naming it, and import, merge and intersect say nothing was made.
# One python process checks it all: it runs the probes of a, b and e
# itself and reads the runs of c and d made here.
source "$(dirname "$0")/../lib/lib.sh"
t_begin contract
t_traps
TOP=$(cd "$(dirname "$0")/../.." && pwd)
R=$T_TMP/runs
mkdir -p "$R"
PCAP=$PCAPS/IGMP_V1.pcap
PCAP2=$PCAPS/empty.pcap
[ -f "$PCAP" ] || fail "captures: $PCAPS not found (../shared/pcaps beside the checkout, or PCAPS=DIR)"
F1='udp 198.51.100.1:53 203.0.113.7:4000'
F2='tcp [2001:db8::1]:443 [2001:db8::2]:51000'

# jrun KIND VERB SHAPE RC ARGS...: run `flowbloom -j ARGS` (stdin
# /dev/null) and keep what it printed for the checker. KIND: ok (a success
# path), fail (a failure path), usage (a usage error that takes more than
# an option: its line may be followed by the synopsis), line:PATTERN (a
# bad line: stderr names PATTERN). SHAPE: one (one JSON object), lines (one
# per line, at least one), steps (one per line, maybe none), exabgp (stdout
# stays empty), error (one {"error"} object). RC: the exit status wanted
# ("0|3": either).
N=0
jrun() {
	local kind=$1 verb=$2 shape=$3 want=$4 rc
	shift 4
	N=$((N + 1))
	"$FB" -j "$@" </dev/null >"$R/$N.out" 2>"$R/$N.err"
	rc=$?
	jmeta "$kind" "$verb" "$shape" "$want" "$rc" "$@"
}
jmeta() {
	local args="${*:6}"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${args//$T_TMP/T}" >"$R/$N.meta"
}
# jrun_int LINES KIND VERB SHAPE RC ARGS...: as jrun, for a verb that runs
# until Ctrl-C: SIGINT once it printed LINES lines (or after 20 s).
jrun_int() {
	local lines=$1 kind=$2 verb=$3 shape=$4 want=$5 pid rc
	shift 5
	N=$((N + 1))
	: >"$R/$N.out" # there before the wait reads it (the child opens it later)
	"$FB" -j "$@" </dev/null >"$R/$N.out" 2>"$R/$N.err" &
	pid=$!
	t_wait_until 20 eval '[ "$(wc -l <"$R/$N.out")" -ge "$lines" ]'
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	jmeta "$kind" "$verb" "$shape" "$want" "$rc" "$@"
}
# jrun_pre KIND VERB SHAPE RC PREFIX... -- ARGS...: as jrun, flowbloom run
# through PREFIX (setpriv).
jrun_pre() {
	local kind=$1 verb=$2 shape=$3 want=$4 pre=() rc
	shift 4
	while [ "$1" != -- ]; do
		pre+=("$1")
		shift
	done
	shift
	N=$((N + 1))
	"${pre[@]}" "$FB" -j "$@" </dev/null >"$R/$N.out" 2>"$R/$N.err"
	rc=$?
	jmeta "$kind" "$verb" "$shape" "$want" "$rc" "$@"
}
digest() { "$FB" -j info "$1" 2>/dev/null | t_json 'd["digest"], d["flows"]'; }

# Verbs that need an attachment (a device, monitoring): their failure path
# only.
ATTACH_ONLY="attach detach top traffic flows ipfix guard capture"
# Verbs without a failure path of exit 1 (b covers their usage errors).
NO_FAILURE="help"

# c. Success paths, in an order that builds what the next needs.
printf '%s\n' "$F1" "# a comment" "$F2" >"$T_TMP/flows.txt"
printf '%s\n' "src 203.0.113.9" "198.51.100.128/25" >"$T_TMP/list.txt"
jrun ok create one 0 create c1 --capacity 1000 --fp-rate 0.01 --counting
jrun ok list one 0 list
jrun ok info one 0 info c1
jrun ok add one 0 add c1 $F1 src 198.51.100.0/24
jrun ok add one 0 add c1 -f "$T_TMP/flows.txt"
jrun ok count one 0 count c1 $F1
jrun ok query one 0 query c1 $F1 udp 198.51.100.1:54 203.0.113.7:4000
jrun ok query one 0 query c1 -f "$T_TMP/flows.txt"
jrun ok query one 0 query c1 --packet $F1 $F2
jrun ok del one 0 del c1 $F1
jrun ok load one 0 load c1 "$T_TMP/list.txt"
jrun ok check one 0 check c1
jrun ok export one 0 export c1 "$T_TMP/c1.fbx"
jrun ok import one 0 import "$T_TMP/c1.fbx" c2
jrun ok merge one 0 merge c1 "$T_TMP/c1.fbx" --into m1
jrun ok intersect one 0 intersect c1 c2 --into i1
jrun ok fold one 0 fold m1
jrun ok card one 0 card c1 c2
jrun ok stats one 0 stats c1
jrun_int 3 ok stats lines 0 stats c1 --watch 0.1
jrun ok metrics one 0 metrics
jrun ok metrics one 0 metrics c1 --textfile "$T_TMP/m.prom"
check "metrics -j --textfile: the file holds the exposition" grep -q '^flowbloom_seen_packets_total{filter="c1"} 0$' "$T_TMP/m.prom"
jrun ok replay one 0 replay c1 "$PCAP"
jrun ok replay lines 0 replay c1 "$PCAP" "$PCAP2"
jrun ok replay lines 0 replay c1 --explain "$PCAP"
# JSON is UTF-8 (RFC 8259) whatever the bytes of the names it quotes: a
# capture named in Latin-1 (0xe9, "é"), read and missing (its summary,
# then its {"error"}): in a name field each byte of no UTF-8 sequence as
# U+FFFD; in a message, which is text for people, as \xHH (as on stderr).
LATIN=$T_TMP/caf$'\xe9'.pcap
cp "$PCAP" "$LATIN"
"$FB" -j replay c1 "$LATIN" "$LATIN.no" >"$T_TMP/latin.json" 2>/dev/null
check_eq "replay -j: a Latin-1 file name, in UTF-8 JSON" "$(python3 - "$T_TMP/latin.json" <<'PY'
import json, sys
try:
    d = [json.loads(l) for l in open(sys.argv[1], "rb")]
    print(ascii([x.get("file", x.get("error", "?")).split("/")[-1] for x in d]))
except ValueError as e:
    print(e)
PY
)" "['caf\ufffd.pcap', 'caf\\\\xe9.pcap.no: No such file or directory']"
jrun ok status one '0|3' status
jrun ok bgp exabgp 0 bgp c1 --state "$T_TMP/bgp.state"
jrun ok bgp one 0 bgp c1 --state "$T_TMP/bgp.state" --flush
printf 'capacity = 1000\nfp-rate = 0.01\nload = list.txt\n' >"$T_TMP/ap1.conf"
jrun ok apply one 0 apply "$T_TMP/ap1.conf" --check
jrun ok apply steps 0 apply "$T_TMP/ap1.conf"
jrun ok apply steps 0 apply "$T_TMP/ap1.conf" --down
jrun ok help one 0 help
jrun ok help one 0 help create
jrun ok help one 0 create help
jrun ok destroy one 0 destroy i1

# d. Failure paths.
jrun fail create error 1 create c1 --capacity 1000 --fp-rate 0.01
N=$((N + 1))
setpriv --reuid=65534 --regid=65534 --clear-groups "$FB" -j list </dev/null >"$R/$N.out" 2>"$R/$N.err"
jmeta fail list error 1 $? list "(as nobody)"
jrun fail info error 1 info nope
jrun fail destroy error 1 destroy nope
jrun fail attach error 1 attach c1 fbnodev$$
jrun fail detach error 1 detach fbnodev$$
jrun fail status error 1 -n fbnone$$ status
jrun fail add error 1 add nope $F1
jrun fail add error 1 add c1 -f "$T_TMP/nofile"
jrun fail del error 1 del c1 udp 198.51.100.9:1 203.0.113.9:2
jrun fail count error 1 count nope $F1
jrun fail check error 1 check nope
jrun fail load error 1 load c1 "$T_TMP/nofile"
jrun fail export error 1 export nope "$T_TMP/x.fbx"
jrun fail import error 1 import "$T_TMP/nofile" c9
jrun fail merge error 1 merge nope c1 --into m9
jrun fail intersect error 1 intersect nope c1 --into m9
jrun fail fold error 1 fold nope
jrun fail card error 1 card nope
jrun fail query error 1 query nope $F1
jrun fail query error 1 query c1 -f "$T_TMP/nofile"
jrun fail stats error 1 stats nope
jrun fail stats error 1 stats nope --watch
jrun fail top error 1 top c1
jrun fail traffic error 1 traffic c1 $F1
jrun fail flows error 1 flows c1
jrun fail metrics error 1 metrics nope
jrun fail ipfix error 1 ipfix c1 --collector 203.0.113.1:4739
jrun fail bgp exabgp 1 bgp nope
jrun fail guard exabgp 1 guard c1 --into c1 --pps 10 --ttl 10s --count 1
jrun fail replay error 1 replay c1 "$T_TMP/nofile"
jrun fail replay error 1 replay nope "$PCAP"
jrun fail capture error 1 capture c1 -w "$T_TMP/c.pcapng" --count 1
jrun fail apply error 1 apply "$T_TMP/nofile.conf"
# Where stdout would carry the data, -j is refused: an {"error"} would land
# in it.
jrun usage export error 2 export c1 -
jrun usage capture error 2 capture c1 -w -

# A file with one bad line (the second of three): refused whole, naming
# FILE:2, the filter as it was.
# A filter name that is no name (docs/cli.md: letters, digits, '_', '-',
# not first) is a usage error of every verb given one, as a NAME, a SRC
# or --into's NAME: exit 2, "bad filter name 'N'" (then the synopsis),
# whatever else is wrong later (no such filter, device or collector). @
# is a NAME ('a.b', 'a:b', '-x' after --, one too long), % a SRC (not
# 'a.b': a SRC with '.' is an export file). The checker wants a run here
# of every verb whose synopsis takes a NAME or SRC.
LONG=$(printf 'n%.0s' $(seq 200))
before=$("$FB" list)
printf 'capacity = 1000\n' >"$T_TMP/-x.conf"
printf 'capacity = 1000\n' >"$T_TMP/a:b.conf"
BADNAME_CASES=(
	"create --capacity 1000 --fp-rate 0.01 -- @" "info -- @" "destroy -- @"
	"attach -- @ fbnodev$$" "add -- @ $F1" "del -- @ $F1" "count -- @ $F1"
	"check -- @" "load -- @ $T_TMP/list.txt" "export -- @ $T_TMP/bn.fbx"
	"import -- $T_TMP/c1.fbx @" "merge --into % -- c1 c2" "merge --into m9 -- % c1"
	"intersect --into % -- c1 c2" "intersect --into m9 -- c1 %" "fold -- @" "card -- %"
	"card -- c1 %" "query -- @ $F1" "query --packet -- @ $F1" "stats -- @"
	"stats --watch -- @" "top -- @" "traffic -- @ $F1" "flows -- @" "metrics -- @"
	"metrics -- c1 @" "ipfix --collector 203.0.113.1:4739 -- @" "bgp -- @"
	"guard --into c1 --pps 10 --ttl 10s --count 1 -- @"
	"replay -- @ $PCAP" "capture -w $T_TMP/bn.pcapng --count 1 -- @" "apply -- $T_TMP/@.conf"
)
for c in "${BADNAME_CASES[@]}"; do
	for n in a.b a:b -x "$LONG"; do
		case $c in *%*) [ "$n" = a.b ] && continue ;; apply*) [ ${#n} -gt 3 ] && continue ;; esac
		read -ra a <<<"${c//[@%]/$n}"
		shape=error
		case $c in bgp* | guard*) shape=exabgp ;; esac
		jrun "badname:$n" "${a[0]}" "$shape" 2 "${a[@]}"
	done
done
check_eq "bad names: nothing made, nothing removed" "$("$FB" list)" "$before"

printf '%s\n' "$F2" "udp 198.51.100.1:99999 203.0.113.7:1" "src 198.51.100.77" >"$T_TMP/bad.txt"
printf 'capacity = 1000\nfp-rate = 0.01 0.02\nload = list.txt\n' >"$T_TMP/bad1.conf"
before=$(digest c1)
for args in "add c1 -f" "del c1 -f" "query c1 -f" "query c1 --packet -f" "traffic c1 -f" "load c1" "load c1 --replace" "load c1 --ttl 1h"; do
	jrun "line:$T_TMP/bad.txt:2:" "${args%% *}" error 1 $args "$T_TMP/bad.txt"
done
jrun "line:$T_TMP/bad1.conf:2:" apply error 1 apply "$T_TMP/bad1.conf"
printf '%s\n' "198.51.100.0/24" "not a prefix" >"$T_TMP/never.txt"
jrun "line:$T_TMP/never.txt:2:" guard exabgp 1 guard c1 --into c1 --pps 1 --ttl 10s --never "$T_TMP/never.txt"
printf 'collector = 203.0.113.1:4739\nfrobnicate = 1\n' >"$T_TMP/ix.conf"
jrun "line:$T_TMP/ix.conf:2:" ipfix error 2 ipfix c1 --config "$T_TMP/ix.conf"
# The bad line 7th, after comments and blank lines, which count.
printf '%s\n' "# a comment" "" "$F1" "src 198.51.100.2" "" "# another" "tcp 198.51.100.1:1 2001:db8::1:2" "$F2" >"$T_TMP/bad7.txt"
for args in "add c1 -f" "del c1 -f" "count c1 -f" "query c1 -f" "load c1" "load c1 --replace"; do
	jrun "line:$T_TMP/bad7.txt:7:" "${args%% *}" error 1 $args "$T_TMP/bad7.txt"
done
check_eq "bad lines: c1's content unchanged" "$(digest c1)" "$before"

# Every verb that reads a FILE, given a directory, a file it may not read
# (root without CAP_DAC_OVERRIDE: as a service whose user is not the
# file's) or an empty export: exit 1, one line naming the file; those that
# make a filter from it say nothing was made, and so does import onto a
# name in use (which stays as it was).
mkdir -p "$T_TMP/adir"
: >"$T_TMP/empty.fbx"
# And where the path is long (1.6k: longer than a message's old 1 KiB, an
# export's 512-byte label): the line names its start and its end (the
# file's name, its middle left out as docs/cli.md says) and ends with
# what is left.
LONGD=$T_TMP
for i in 1 2 3 4 5 6 7 8; do LONGD=$LONGD/$(printf 'long%.0s' {1..50}); done
mkdir -p "$LONGD/adir"
: >"$LONGD/empty.fbx"
cp "$T_TMP/c1.fbx" "$T_TMP/noread.fbx"
cp "$T_TMP/list.txt" "$T_TMP/noread.txt"
chmod 000 "$T_TMP/noread.fbx" "$T_TMP/noread.txt"
NODAC=(setpriv --bounding-set -dac_override,-dac_read_search)
before=$(digest c1)
before2=$(digest c2)
for f in "$T_TMP/adir" "$T_TMP/noread.txt" "$T_TMP/noread.fbx" "$T_TMP/empty.fbx" "$LONGD/adir" "$LONGD/empty.fbx"; do
	pre=()
	case $f in *noread*) pre=("${NODAC[@]}") ;; esac
	case $f in
	*.txt | */adir)
		for args in "add c1 -f" "del c1 -f" "count c1 -f" "query c1 -f" "load c1" "load c1 --replace" "replay c1"; do
			jrun_pre "line:$f: " "${args%% *}" error 1 "${pre[@]}" -- $args "$f"
		done
		;;
	esac
	case $f in
	*.fbx | */adir)
		jrun_pre "line:$f: && ; nothing imported" import error 1 "${pre[@]}" -- import "$f" c9
		jrun_pre "line:$f: && ; nothing merged" merge error 1 "${pre[@]}" -- merge "$f" c1 --into m9
		jrun_pre "line:$f: && ; nothing intersected" intersect error 1 "${pre[@]}" -- intersect c1 "$f" --into m9
		jrun_pre "line:$f: " card error 1 "${pre[@]}" -- card "$f"
		;;
	esac
done
jrun "line:$T_TMP/c1.fbx: filter 'c2' already exists; nothing imported" import error 1 import "$T_TMP/c1.fbx" c2
check_eq "bad files: c1's content unchanged" "$(digest c1)" "$before"
check_eq "bad files: c2 (imported onto) unchanged" "$(digest c2)" "$before2"
check_eq "bad files: nothing made" "$("$FB" list | grep -c '^[cm]9 ')" 0
check_eq "bad lines: apply created nothing" "$("$FB" list | grep -c '^bad1 ')" 0

# `--` ends the options (getopt's rule): each command run twice, on two
# filters made alike, once with `--` where the word -- stands (before the
# operands) and once without; the same exit status and output (the filter's
# name, its random digest, times and rates aside). @ stands for the filter's name.
dd_norm() {
	sed -e 's/dd[12]/dd/g' -e 's/([^)]*flows\/s)/(R)/' -e 's/"digest":"[0-9a-f]*"/"digest":D/' \
		-e 's/ends[_ ]in[": ]*[0-9.e+-]*/ends_in E/g' \
		-e 's/[0-9]*\.[0-9][0-9]*/N/g' "$1"
}
dd_same() {
	local w a=() b=() ra rb
	for w; do
		[ "$w" = -- ] || b+=("${w//@/dd2}")
		a+=("${w//@/dd1}")
	done
	"$FB" "${a[@]}" </dev/null >"$T_TMP/dd1.out" 2>&1
	ra=$?
	"$FB" "${b[@]}" </dev/null >"$T_TMP/dd2.out" 2>&1
	rb=$?
	check_eq "-- before the operands: ${a[*]//$T_TMP/T}" \
		"exit $ra: $(dd_norm "$T_TMP/dd1.out")" "exit $rb: $(dd_norm "$T_TMP/dd2.out")"
}
dd_same create --capacity 1000 --fp-rate 0.01 --counting -- @
dd_same info -- @
dd_same add @ -- $F1 src 198.51.100.0/24
dd_same add -- @ $F2
dd_same -j add @ --ttl 1h -- src 203.0.113.99
dd_same add @ -f "$T_TMP/flows.txt" --
dd_same query @ -- $F1 $F2 udp 198.51.100.1:54 203.0.113.7:4000
dd_same query @ --packet -- $F1
dd_same count -- @ $F1
dd_same del @ -- $F2
dd_same del --force -- @ $F2
dd_same load @ -- "$T_TMP/list.txt"
dd_same load --replace -- @ "$T_TMP/list.txt"
dd_same check -- @
dd_same stats -- @
dd_same export @ -- "$T_TMP/@.fbx"
dd_same import -- "$T_TMP/@.fbx" @x
dd_same card -- @ @x
dd_same merge --into @m -- @ @x
dd_same fold -- @m
dd_same replay @ -- "$PCAP"
dd_same -j info -- @
for n in @ @x @m; do dd_same destroy -- $n; done
dd_same info -- @
dd_same add @ -- $F1
# After `--`, a word that begins with '-' is an operand, and only the
# first `--` is dropped. dd_operand FILE TEXT: FILE names TEXT, and no
# option.
dd_operand() { ! grep -q "unknown option\|global option" "$1" && grep -qF -- "$2" "$1"; }
for args in "info -x" "destroy -x" "check -x" "stats -x" "fold -x" "card -x" "detach -x" "add -x $F1" "query -x $F1" "load -x $T_TMP/list.txt" "export -x $T_TMP/x.fbx"; do
	"$FB" ${args%% *} -- ${args#* } </dev/null >"$T_TMP/dd.out" 2>&1
	check "${args%% *} -- ${args#* }: -x is an operand" dd_operand "$T_TMP/dd.out" "'-x'"
done
"$FB" info -- -- </dev/null >"$T_TMP/dd.out" 2>&1
check "info -- --: the second -- is a NAME" dd_operand "$T_TMP/dd.out" "'--'"
"$FB" add c1 -- --ttl 1h </dev/null >"$T_TMP/dd.out" 2>&1
check "add c1 -- --ttl 1h: --ttl is a FLOW word, refused as one" dd_operand "$T_TMP/dd.out" "argument 1: unknown protocol '--ttl'"

# The checker: PASS/FAIL lines, counted here.
while IFS= read -r line; do
	case $line in
	PASS\ *) pass "${line#PASS }" ;;
	FAIL\ *) fail "${line#FAIL }" ;;
	*) fail "checker: $line" ;;
	esac
done < <(ATTACH_ONLY=$ATTACH_ONLY NO_FAILURE=$NO_FAILURE python3 - "$TOP" "$FB" "$R" 2>&1 <<'PY'
import glob, json, os, re, subprocess, sys

top, fb, runs = sys.argv[1:4]
EXABGP = {"bgp", "guard"}  # stdout is ExaBGP's: errors on stderr only


def ok(label):
    print("PASS " + label)


def bad(label, why):
    print("FAIL %s: %s" % (label, " ".join(str(why).split())[:400]))


def shown(t):
    """t (ASCII) as a message shows it (docs/cli.md): each run without a
    space (its space after it included) that would be longer than 512
    characters shows its first 160 and last 320, the bytes between counted;
    t's last word taken as followed by a space in the message."""
    out = ""
    for run in re.findall(r"[^ ]+ ?| ", t + " "):
        if len(run) > 512:
            run = run[:160] + "...(%d bytes)..." % (len(run) - 480) + run[-320:]
        out += run
    return out[:-1]
def run(*args):
    p = subprocess.run([fb, *args], stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def word_in(w, text):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(w), text) is not None


# ------------------------------------------------------------ the verbs
rc, helpall, err = run("help")
verbs = re.findall(r"^       flowbloom ([a-z]+)", helpall, re.M)
maintext = open(os.path.join(top, "user/cli/main.c")).read()
table = dict(re.findall(r'\{\s*"([a-z]+)",\s*(cmd_\w+),', maintext))
if rc == 0 and len(verbs) >= 10 and sorted(verbs) == sorted(table):
    ok("help lists the %d verbs of the verb table" % len(verbs))
else:
    bad("help lists the verb table", "exit %d; help: %s; table: %s" % (rc, verbs, sorted(table)))


# ------------------------------------------- the parsers' options (source)
def strip_comments(t):
    t = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), t, flags=re.S)
    return re.sub(r"//[^\n]*", "", t)


# main.c holds the global options (-j, -v, -n, -h) and help's --man, the
# build's hook for the man page: no verb's.
funcs, tables = {}, {}
for f in sorted(glob.glob(os.path.join(top, "user/cli/*.c"))):
    if f.endswith("/main.c"):
        continue
    lines = strip_comments(open(f).read()).split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(static\s+)?(const\s+)?struct option\s+(\w+)\[\]\s*=", lines[i])
        if m:
            j = i
            while not lines[j].startswith("};"):
                j += 1
            tables[(f, m.group(3))] = "\n".join(lines[i:j + 1])
            i = j + 1
            continue
        if lines[i] == "{" and i > 0:  # a function's body (kernel style)
            k = i - 1
            while k > 0 and (lines[k][:1] in (" ", "\t") or lines[k] == ""):
                k -= 1
            head = " ".join(lines[k:i])
            j = i
            while lines[j] != "}":
                j += 1
            m = re.search(r"(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*$", head)
            if m:
                funcs.setdefault(m.group(1), []).append((f, "\n".join(lines[i:j + 1]), head.startswith("static")))
            i = j + 1
            continue
        i += 1


def parser_options(fn):
    """[spellings, has_arg ('no', 'required', 'optional' or None: unknown)]
    of what fn and the user/cli functions it calls parse."""
    seen, todo, groups = set(), list(funcs.get(fn, [])), []
    while todo:
        f, body, _ = todo.pop()
        if (f, body) in seen:
            continue
        seen.add((f, body))
        shorts = {}
        for m in re.finditer(r'getopt_long\s*\([^,]+,[^,]+,\s*"([^"]*)"', body):
            s = m.group(1)
            for k, ch in enumerate(s):
                if ch.isalnum():
                    shorts[ch] = "required" if s[k + 1:k + 2] == ":" else "no"
        texts = [body] + [t for (tf, tn), t in tables.items() if tf == f and re.search(r"\b%s\b" % tn, body)]
        for t in texts:
            for m in re.finditer(r'\{\s*"([a-z][a-z0-9-]*)"\s*,\s*(no|required|optional)_argument\s*,\s*[^,]+,\s*(?:\'(.)\'|\w+)', t):
                sp = {"--" + m.group(1)}
                if m.group(3) and m.group(3) in shorts:  # -X, the long one's alias
                    sp.add("-" + m.group(3))
                    shorts.pop(m.group(3))
                groups.append([sp, m.group(2)])
        groups += [[{"-" + ch}, a] for ch, a in shorts.items()]
        for m in re.finditer(r'strn?cmp\s*\(\s*[^,]*argv[^,]*,\s*"(--?[a-z][a-z0-9-]*)=?"', body):
            groups.append([{m.group(1)}, None])
        for m in re.finditer(r"\b(\w+)\s*\(", body):
            n = m.group(1)
            if n in funcs and not n.startswith("cmd_"):
                c = funcs[n]
                todo += [x for x in c if x[0] == f] or [x for x in c if not x[2]]
    out = []
    for sp, a in groups:
        for g in out:
            if g[0] & sp:
                g[0] |= sp
                g[1] = g[1] or a
                break
        else:
            out.append([set(sp), a])
    return out


def synopsis_options(raw):
    """spelling -> 'no', 'required' or 'optional' (its value) in a synopsis"""
    toks, opts = raw.split(), {}
    for i, t in enumerate(toks):
        core = t.lstrip("[(")
        if not core.startswith("-"):
            continue
        if "|" in core:  # --udp|--tcp: alternatives without a value
            for a in re.findall(r"--?[a-z][a-z0-9-]*", core):
                opts.setdefault(a, "no")
            continue
        name, tail = re.match(r"(--?[a-z][a-z0-9-]*)(.*)$", core).groups()
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if tail or not nxt or nxt[0] in "-(|" or nxt.startswith("[-"):
            val = "no"
        elif nxt.startswith("["):
            val = "optional"
        else:
            val = "required"
        opts.setdefault(name, val)
    return opts


def unknown_option(err, s):
    return re.search(r"unknown option '%s'" % re.escape(s), err.split("\n")[0]) is not None


def check_usage(label, v, res, raw, word, want_json=True):
    """b: exit 2, one error line naming word, then the synopsis; -j: one
    {"error"} object (none for bgp and guard)."""
    rc, out, err = res
    lines = err.rstrip("\n").split("\n")
    why = []
    if rc != 2:
        why.append("exit %d, not 2" % rc)
    if not lines[0].startswith("flowbloom: ") or sum(l.startswith("flowbloom:") for l in lines) != 1:
        why.append("not one error line")
    elif word and not word_in(word, lines[0]) and ("'%s'" % word) not in lines[0]:
        why.append("the error does not name %s" % word)
    if lines[1:] and lines[1:] != ("usage: flowbloom " + raw).split("\n"):
        why.append("after the error line, not the synopsis")
    why += check_error_json(v, out, lines[0], want_json)
    if why:
        bad(label, "; ".join(why) + ": stderr %r stdout %r" % (err[:300], out[:200]))
    else:
        ok(label)


def check_error_json(v, out, line, want_json):
    msg = line[len("flowbloom: "):]
    if not want_json or v in EXABGP:
        return [] if out == "" else ["stdout not empty"]
    try:
        d = json.loads(out)
    except ValueError:
        return ["stdout is not one JSON object"]
    if d != {"error": msg} or out.count("\n") != 1:
        return ['stdout is not {"error": the line on stderr} on one line']
    return []


# The command line before the verb: no verb, an unknown verb, an unknown
# global option, -n without its namespace. The synopsis may follow.
for args, word in (([], "VERB"), (["frobnicate"], "frobnicate"), (["--frob"], "--frob"), (["-n"], "-n")):
    for j in (["-j"], []):
        res = run(*j, *args)
        lines = res[2].rstrip("\n").split("\n")
        why = [] if res[0] == 2 else ["exit %d, not 2" % res[0]]
        if not lines[0].startswith("flowbloom: ") or not word_in(word, lines[0]):
            why.append("the first line on stderr is not an error naming %s" % word)
        elif lines[1:] and lines[1:] != helpall.rstrip("\n").split("\n"):
            why.append("after the error line, not the synopsis")
        why += check_error_json("", res[1], lines[0], bool(j))
        label = "flowbloom %s%s: a usage error" % ("-j " if j else "", " ".join(args) or "(no verb)")
        if why:
            bad(label, "; ".join(why) + ": stderr %r stdout %r" % (res[2][:200], res[1][:200]))
        else:
            ok(label)


# ------------------------------------------------ a, b: every verb's options
man = open(os.path.join(top, "build/flowbloom.8")).read()
rc, manout, _ = run("help", "--man")
if rc == 0 and manout == man:
    ok("build/flowbloom.8 is what this flowbloom's help --man prints")
else:
    bad("build/flowbloom.8", "differs from `flowbloom help --man` (stale build?)")
mantext = man.replace("\\-", "-")
named = {}  # verb -> options its synopsis names (for e)
allspell = {}  # verb -> every spelling, accepted or named
for v in verbs:
    h1, h2 = run("help", v), run(v, "help")
    if h1[0] == 0 and h2[0] == 0 and h1[1] == h2[1] and h1[1].startswith("Usage: flowbloom %s" % v) and not h1[2] + h2[2]:
        ok("%s: help %s and %s help print the same help" % (v, v, v))
    else:
        bad("%s: help" % v, "help VERB exit %d, VERB help exit %d, same text: %s" % (h1[0], h2[0], h1[1] == h2[1]))
    h3 = run(v, "--help")
    if h3[0] == 0 and h3[1] == h1[1] and not h3[2]:
        ok("%s: %s --help prints its help" % (v, v))
    else:
        bad("%s: %s --help" % (v, v), "exit %d, the help of help %s: %s, stderr %r" % (h3[0], v, h3[1] == h1[1], h3[2][:200]))
    # `--` ends the options: `VERB --` is `VERB`, and after it a word
    # that begins with '-' is an operand, never an unknown option.
    d0, d1, d2 = run(v), run(v, "--"), run(v, "--", "-x")
    if v == "status":
        # The machine's attachments, which suites beside this one change
        # between the two runs (a replay's program, attached nowhere, is
        # a note): the same answer, not the same text.
        same = d0[0] in (0, 3) and d1[0] in (0, 3) and "usage" not in d0[2] + d1[2]
    else:
        same = d0 == d1
    if same and "unknown option" not in d2[2] and d2[0] != 0:
        ok("%s: -- ends the options (%s -- is %s; %s -- -x takes -x as an operand)" % (v, v, v, v))
    else:
        bad("%s: --" % v, "%s: exit %d %r; %s --: exit %d %r; %s -- -x: exit %d %r" % (v, d0[0], d0[2][:100], v, d1[0], d1[2][:100], v, d2[0], d2[2][:200]))
    text = h1[1]
    raw = text.split("\n\n")[0][len("Usage: flowbloom "):]
    syn = synopsis_options(raw)
    named[v] = syn
    groups = parser_options(table.get(v, ""))
    accepted = {}
    for s in sorted({s for g in groups for s in g[0]} | set(syn)):
        res = run("-j", v, s)
        accepted[s] = not unknown_option(res[2], s)
    allspell[v] = set(accepted)
    why = []
    for sp, has_arg in groups:
        acc = sorted(s for s in sp if accepted[s])
        if not acc:
            continue
        why += ["%s is accepted but not in its help" % s for s in acc if not word_in(s, text)]
        insyn = [s for s in acc if s in syn]
        if not insyn:
            why.append("%s is accepted but not in the synopsis" % "/".join(acc))
        elif has_arg and has_arg != syn[insyn[0]]:
            why.append("%s: the parser's value is %s, the synopsis's %s" % (insyn[0], has_arg, syn[insyn[0]]))
    why += ["the synopsis names %s, which the parser refuses as unknown" % s for s in syn if not accepted[s]]
    if why:
        bad("%s: options, parser and help" % v, "; ".join(why))
    else:
        ok("%s: the parser's options (%s) and the synopsis's agree" % (v, " ".join(sorted(accepted)) or "none"))

    # b. An unknown option, before and after the first argument; plain
    # and -j.
    check_usage("%s: unknown option (-j)" % v, v, run("-j", v, "--no-such-option"), raw, "--no-such-option")
    check_usage("%s: unknown option after an argument (-j)" % v, v, run("-j", v, "x", "--no-such-option"), raw, "--no-such-option")
    check_usage("%s: unknown option, plain" % v, v, run(v, "--no-such-option"), raw, "--no-such-option", want_json=False)
    # A global option after the verb (bpftool takes -j anywhere): the
    # usage error says it goes before the verb.
    for g in ("-j", "--json"):
        res = run(v, "x", g)
        check_usage("%s: %s after the verb" % (v, g), v, res, raw, g, want_json=False)
        if "global option: it goes before the verb (flowbloom %s %s ...)" % (g, v) not in res[2].split("\n")[0]:
            bad("%s: %s after the verb" % (v, g), "the error does not say where it goes: %r" % res[2].split("\n")[0])
    # An option without its value, last on the line.
    for s in sorted(accepted):
        needs = syn.get(s) == "required" or any(s in g[0] and g[1] == "required" for g in groups)
        if accepted[s] and needs:
            res = run("-j", v, "x", s)
            check_usage("%s: %s without its value (-j)" % (v, s), v, res, raw, s)
            if "unknown" in res[2].split("\n")[0]:
                bad("%s: %s without its value" % (v, s), "called unknown: %r" % res[2].split("\n")[0])
    # A missing argument: no arguments at all, where the synopsis starts
    # with one.
    if re.match(r"[a-z]+ [A-Z]", raw):
        res = run("-j", v)
        check_usage("%s: missing argument (-j)" % v, v, res, raw, None)
        if "missing" not in res[2].split("\n")[0]:
            bad("%s: missing argument" % v, "the error does not say what is missing: %r" % res[2].split("\n")[0])

    # e. The man page: the verb's section names every option.
    m = re.search(r"^\.SS %s\n(.*?)(?=^\.S[SH] )" % re.escape(v), mantext, re.M | re.S)
    if not m:
        bad("%s: man page" % v, "no section .SS %s in build/flowbloom.8" % v)
    else:
        miss = sorted(s for s in allspell[v] | set(syn) if accepted.get(s, True) and not word_in(s, m.group(1)))
        if miss or not re.search(r"^flowbloom %s\b" % v, mantext.split(".SH DESCRIPTION")[0], re.M):
            bad("%s: man page" % v, "its section lacks %s (or SYNOPSIS lacks the verb)" % miss)
        else:
            ok("%s: the man page's section names the verb's options" % v)

# e. The bash completion: the verbs, and each verb's options after '-'.
script = r'''
source "$1/dist/flowbloom.bash"
fb=$2
shift 2
COMP_WORDS=("$fb" ""); COMP_CWORD=1; _flowbloom; echo "VERBS ${COMPREPLY[*]}"
for v in "$@"; do COMP_WORDS=("$fb" "$v" "-"); COMP_CWORD=2; COMPREPLY=(); _flowbloom; echo "$v ${COMPREPLY[*]}"; done
'''
p = subprocess.run(["bash", "-c", script, "bash", top, fb, *verbs], capture_output=True, text=True, timeout=60)
comp = {l.split(" ")[0]: set(l.split()[1:]) for l in p.stdout.splitlines() if l}
miss = sorted(set(verbs) - comp.get("VERBS", set()))
if p.returncode or miss:
    bad("completion: verbs", "exit %d, missing %s %s" % (p.returncode, miss, p.stderr[:200]))
else:
    ok("completion offers every verb")
for v in verbs:
    miss = sorted(set(named[v]) - comp.get(v, set()))
    if miss:
        bad("completion: %s" % v, "does not offer %s" % miss)
    else:
        ok("completion offers %s's options" % v)

# ------------------------------------------------ c, d: the runs of the script
have = {"ok": set(), "fail": set(), "badname": set()}
for meta in sorted(glob.glob(os.path.join(runs, "*.meta")), key=lambda p: int(os.path.basename(p).split(".")[0])):
    base = meta[:-5]
    kind, v, shape, want, rc, args = open(meta).read().rstrip("\n").split("\t")
    out = open(base + ".out", "rb").read().decode("utf-8", "replace")
    err = open(base + ".err").read()
    label = "%s: -j %s" % ({"ok": "success", "usage": "usage error"}.get(kind, "bad name" if kind.startswith("badname:") else "failure"), args)
    if kind.startswith("badname:"):
        have["badname"].add(v)
    elif kind != "usage":
        have["ok" if kind == "ok" else "fail"].add(v)
    why = []
    if rc not in want.split("|"):
        why.append("exit %s, not %s" % (rc, want))
    lines = out.split("\n")
    if lines[-1] == "":
        lines.pop()
    else:
        why.append("stdout does not end in a newline")
    docs = []
    for l in lines if shape != "exabgp" else []:
        try:
            docs.append(json.loads(l))
        except ValueError:
            why.append("a line of stdout is not JSON: %r" % l[:120])
            break
    if any(not isinstance(d, dict) for d in docs):
        why.append("a JSON value is not an object")
    if shape in ("one", "error") and len(lines) != 1:
        why.append("%d lines on stdout, not one object" % len(lines))
    if shape == "lines" and not lines:
        why.append("nothing on stdout")
    if shape in ("one", "lines", "steps") and any(isinstance(d, dict) and "error" in d for d in docs):
        why.append("an error object")
    if shape == "exabgp" and out:
        why.append("stdout not empty: %r" % out[:120])
    errl = err.rstrip("\n").split("\n") if err else []
    if kind == "ok":
        extra = [l for l in errl if not l.startswith("flowbloom: note: ") and not (v in EXABGP and l.startswith("flowbloom: %s: " % v))]
        if extra:
            why.append("stderr: %r" % extra[0][:200])
    else:
        if kind.startswith("badname:") and not (errl and shown("bad filter name '%s'" % kind[8:]) in errl[0]):
            why.append("the error is not: bad filter name '%s'" % kind[8:])
        if kind.split(":")[0] in ("usage", "badname") and errl[1:2] and errl[1].startswith("usage: flowbloom %s " % v):
            errl = errl[:1]  # the synopsis follows a usage error's line
        if len(errl) != 1 or not errl[0].startswith("flowbloom: "):
            why.append("stderr is not one error line: %r" % err[:300])
        elif shape == "error":
            why += check_error_json(v, out, errl[0], True)
        # line:A && B: the error holds A and B
        for want_text in kind[5:].split(" && ") if kind.startswith("line:") else []:
            if shown(want_text) not in err:
                why.append("the error does not say %r" % want_text.replace(os.path.dirname(os.path.dirname(base)), "T"))
    if why:
        bad(label, "; ".join(why) + " (stdout %r)" % out[:200])
    else:
        ok(label)
for v in verbs:
    if v not in have["ok"] and v not in os.environ["ATTACH_ONLY"].split():
        bad("%s: success path" % v, "contract.sh runs none (add one, or list the verb in ATTACH_ONLY)")
    if re.search(r"^       flowbloom %s .*\b(NAME|SRC)\b" % v, helpall, re.M) and v not in have["badname"]:
        bad("%s: a bad NAME" % v, "contract.sh runs none (add it to BADNAME_CASES)")
    if v not in have["fail"] and v not in os.environ["NO_FAILURE"].split():
        bad("%s: failure path" % v, "contract.sh runs none")
PY
)

t_finish
