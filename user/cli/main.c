// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * flowbloom: the command line. `flowbloom [-j] [-v] VERB ARGS`, one table of
 * verbs, `help` for all and `VERB help` / `help VERB` for one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "flowbloom/geometry.h"
#include "fleet/fbx_format.h"
#include "cmd.h"
#include "prog/loader.h"
#include "manpage.h"
#include "output.h"
#include "store/pintree.h"
#include "util.h"

/* Where the installed configuration lives (the Makefile's SYSCONFDIR). */
#ifndef FB_SYSCONFDIR
#define FB_SYSCONFDIR "/etc"
#endif

static int cmd_help(int argc, char **argv);

static const struct fb_cmd cmds[] = {
	{ "create", cmd_create,
	  "create NAME (--capacity N --fp-rate P | --bits M --hashes K) [--layout "
	  "blocked|classic]\n"
	  "                 [--hash siphash13|siphash24|nh] [--action drop|allow|monitor]\n"
	  "                 [--counting [--counter-bits 4|8]] [--confirm exact]\n"
	  "                 [--compact] [--type bloom|cuckoo|dleft | --grow]",
	  "Create a filter. With --capacity and --fp-rate, m and k come from the layout's\n"
	  "formula; --bits and --hashes set them directly (1 <= k <= 16). A filter\n"
	  "takes whole chunks of 256 KiB and a Bloom filter gets all their bits: m is\n"
	  "rounded up, its false-positive rate only lower (info shows it); a blocked\n"
	  "filter sized by rate then takes k = 4 or 8 (the probe's fast cases, 4 the\n"
	  "cheaper) if that still meets the rate. --compact gives a Bloom filter only\n"
	  "the bits its size needs, in whole 4 KiB pages (k = 4 if that takes no more\n"
	  "chunks): the rate asked, not lower, but a probe reads one of a few pages,\n"
	  "a few ns a packet less for a short list (docs/performance.md). --action is\n"
	  "what an `ip link`-loaded program does (default drop). The filter named\n"
	  "'default' is the one `ip link` uses.\n"
	  "--hash: nh (NH, keyed; the default) is the fast one; allow-lists default to\n"
	  "siphash13 (a PRF), which resists adaptive probing (docs/design.md, the hash).\n"
	  "--counting keeps a counter per bit (4 bits, or 8) beside the bits, so flows\n"
	  "can be deleted; the data path still reads only the bits. --confirm exact\n"
	  "checks every Bloom hit in an exact set (hash map, LPM trie) before it counts,\n"
	  "so a false positive never drops legitimate traffic; misses cost nothing more.\n"
	  "--type cuckoo (deletable, least memory at low rates) or dleft (deletable,\n"
	  "counters for repeated adds) picks another filter type, sized from --capacity\n"
	  "and --fp-rate; --grow makes a scalable Bloom filter that adds stages as it\n"
	  "fills, its rate staying under --fp-rate (docs/cli.md, Filter types)." },
	{ "list", cmd_list, "list", "List filters, why one is unusable; exit 0 for any state." },
	{ "info", cmd_info, "info NAME",
	  "Geometry, memory, flows added, fill ratio, expected false-positive rate now\n"
	  "(read from the bits set: a rule added twice does not raise it), the\n"
	  "generations of rules with a lifetime (when each ends, flows, fill), and the\n"
	  "devices the filter is attached to." },
	{ "destroy", cmd_destroy, "destroy NAME", "Remove a filter (it must be detached)." },
	{ "attach", cmd_attach,
	  "attach NAME DEV [--mode native|generic] [--action drop|allow|monitor] [--replace]\n"
	  "                 [--malformed pass|drop] [--accounting [--max-flows N]]\n"
	  "                 [--monitor [--epsilon E] [--delta D] [--sketch-by flow|src|dst]]\n"
	  "                 [--new-flows [--age SECS] [--expect N] [--ring SIZE]]",
	  "Attach the XDP program to DEV, working on filter NAME. drop: a match is\n"
	  "dropped; allow: only matches pass (non-IP frames always pass); monitor:\n"
	  "count only. Default action: the filter's own (see create).\n"
	  "--replace takes the place of the flowbloom program running on DEV (of any\n"
	  "filter, or of NAME with other options) in one step, in its mode: no packet\n"
	  "goes unfiltered in between. Without it, a device running a program is refused.\n"
	  "A malformed packet is matched on the addresses it has; what no rule decides\n"
	  "is dropped (action drop or allow) or passed (monitor) unless --malformed says.\n"
	  "--monitor counts packets and bytes per flow in a count-min sketch and keeps\n"
	  "top-talker candidates (see top, traffic): estimates exceed the truth by at\n"
	  "most E x all packets with probability 1 - D (defaults 0.001, 0.01).\n"
	  "--sketch-by src (dst) counts each source (destination) address's packets\n"
	  "instead, all its ports and peers together: a flood spread over ever new ports\n"
	  "is then one heavy talker (guard --by src); default flow.\n"
	  "--new-flows reports each flow's first packet per aging period of SECS\n"
	  "(seconds, or 500ms, 5m, 1h; default 60) through a ring buffer of SIZE\n"
	  "bytes (default 1M; see flows); the seen-set is sized for N flows per period\n"
	  "(default 100000).\n"
	  "--accounting counts every flow's packets and IP octets exactly in a table\n"
	  "of N flows per CPU (--max-flows, default 65536; 136 bytes each), for ipfix\n"
	  "to export as flows end; a flow that finds the table full is counted in an\n"
	  "overflow sketch instead (with --monitor), and exported as an estimate.\n"
	  "An option of a part (--epsilon, --age, --max-flows...) turns that part on.\n"
	  "Monitoring starts from zero unless the filter is attached elsewhere, whose\n"
	  "monitoring maps are then shared." },
	{ "detach", cmd_detach, "detach DEV", "Remove flowbloom's XDP program from DEV." },
	{ "status", cmd_status, "status",
	  "Every flowbloom XDP attachment on the machine, in every network namespace:\n"
	  "namespace, device, mode, program id and the filter it uses. An object loaded\n"
	  "by `ip -n NS` or `ip netns exec` gets private, empty maps and passes every\n"
	  "packet: shown as PRIVATE MAPS (fails open). So does one on a device whose\n"
	  "packets have no Ethernet header (tun, WireGuard, IP tunnels, PPP: attach\n"
	  "refuses them), every packet taken for non-IP: shown as NO ETHERNET HEADER.\n"
	  "Exit status 3 if any attachment fails open, 0 otherwise (1: error)." },
	{ "add", cmd_add, "add NAME FLOW... [--ttl DURATION] | add NAME -f FILE [--ttl DURATION]",
	  "Add flows. FILE (-f or --file) is read as load reads it: a FLOW, address,\n"
	  "prefix or range (source rules), netset or DROP entry a line ('#' and ';'\n"
	  "comments); '-' reads stdin; a rule it names twice is added once (as load\n"
	  "holds it; FLOWs given as arguments are each a copy). The whole input is\n"
	  "checked before anything is added.\n"
	  "A FLOW of FIELDs fixes any combination of them (a rule shape): the program\n"
	  "probes once per shape a filter holds, at most 8 (info lists them); one more\n"
	  "is refused. A port range becomes port prefixes (at most 64 per FLOW); a\n"
	  "FLOW without an address holds for IPv4 and IPv6 (dst 0.0.0.0/0 or dst ::/0\n"
	  "keeps it to one). A field given twice starts the next FLOW.\n"
	  "--ttl (2s, 10m, 1h, 1d) gives the rules a lifetime: they match until it ends\n"
	  "and stop matching at most a quarter of it later, enforced by the data path\n"
	  "itself (no process needs to run). Bloom and counting filters." },
	{ "del", cmd_del, "del NAME [--force] (FLOW... | -f FILE) [--permanent | --with-lifetime]",
	  "Delete flows from a counting filter: their counters go down, and a bit is\n"
	  "cleared only when its counter reaches 0, so no other flow is lost. A flow\n"
	  "with a zero counter is not in the filter: the whole input is refused.\n"
	  "With rules with a lifetime, a flow goes from the part holding it: the\n"
	  "permanent rules, or each live generation of rules with a lifetime holding\n"
	  "it. One both parts hold (or one holds only as a false positive) is refused\n"
	  "unless --permanent or --with-lifetime says which part.\n"
	  "A cuckoo or dleft filter removes one stored copy per flow; a flow found in\n"
	  "none of its buckets is refused. A flow never added can share a member's\n"
	  "fingerprint and would delete it, so these deletes need a filter created\n"
	  "with --confirm exact (checked against the exact set) or --force.\n"
	  "A prefix load expanded into longer ones goes as those. FILE (-f or\n"
	  "--file) as for add, each rule once however often it names it: del -f LIST\n"
	  "takes out what load LIST or add -f LIST put in." },
	{ "count", cmd_count, "count NAME FLOW... | count NAME -f FILE",
	  "The smallest of each flow's counters: an upper bound on how many times it\n"
	  "was added ('+' when saturated); a prefix load expanded, at the longer length\n"
	  "it went to. FILE (-f or --file) as for add." },
	{ "check", cmd_check, "check NAME [--repair]",
	  "Report what an interrupted command left (staging directories, unused\n"
	  "counters or exact sets of a replace, missing ip link pins, a filter too\n"
	  "broken to open). For a counting filter also: every bit set exactly where\n"
	  "its counter is non-zero, counters adding up to k x flows, no interrupted\n"
	  "write. With --confirm exact: every rule of the exact sets a hit of the\n"
	  "filter (a killed add or del leaves some that are not), counted no more\n"
	  "often than the filter holds it, address rules in their tries, and for a\n"
	  "counting filter the rules' copies adding up to its flows (fewer: flows\n"
	  "whose packets are refused as unconfirmed). Exit 1 if anything is found.\n"
	  "--repair removes the leftovers, rolls back an interrupted write, rebuilds\n"
	  "the bits from the counters and takes the rules the filter does not hold\n"
	  "out of the exact sets (never setting a bit); exit 1 if the copies still\n"
	  "differ from the flows." },
	{ "load", cmd_load, "load NAME FILE... [--replace [--allow-empty]] [--ttl DURATION]",
	  "Load block-lists: addresses, CIDR prefixes and ranges (source rules), FireHOL\n"
	  "netsets, Spamhaus DROP ('; comment'), and FLOW lines, mixed; '-' is stdin.\n"
	  "The whole input is checked first. A miss costs a probe per prefix length:\n"
	  "beyond 4 per family and direction, lengths are expanded into longer ones\n"
	  "(the 4 that need the fewest entries). --replace swaps the filter's content\n"
	  "for the list in one step, re-sized if the filter was sized by capacity; such\n"
	  "a Bloom filter also gets fewer lengths whenever its memory holds the\n"
	  "expanded entries (a filter takes whole chunks: often far more than a short\n"
	  "list needs). Rules with a lifetime live on in it until they end. --ttl gives\n"
	  "the list's rules a lifetime, as add --ttl; with --replace it replaces the\n"
	  "rules with a lifetime instead, keeping the permanent ones. An input of no\n"
	  "rules (a failed download) replaces nothing, exit 1, unless --allow-empty." },
	{ "export", cmd_export, "export NAME FILE [--mode OCTAL] [--plain]",
	  "Write the filter (geometry, hash key, prefix lengths, bits, counters) to FILE\n"
	  "('-': stdout): versioned, little-endian, CRC-32 checked, compressed (the bits\n"
	  "Golomb-Rice coded, near the entropy bound of a Bloom filter's bits; the rest\n"
	  "zstd) unless --plain. The file holds the filter's secret hash key: it is\n"
	  "created mode 0600 (--mode, e.g. 0640, to widen), written aside and renamed\n"
	  "over FILE once complete and on disk." },
	{ "import", cmd_import, "import FILE NAME",
	  "Create filter NAME from an export ('-': stdin), compressed or plain, built\n"
	  "aside; NAME appears only after the whole file checked out (CRC included). A\n"
	  "compressed or piped file, or one others may write, is checked whole before any\n"
	  "memory is taken for the filter, then read again (a pipe's bytes kept in memory).\n"
	  "Corrupt, truncated or incompatible files leave nothing behind, and so does a\n"
	  "file that is no clean filter (counters contradicting its bits, more flows than\n"
	  "256 per bit, a capacity its bits cannot hold at its rate, exact-set entries\n"
	  "that are no rules) or a compressed one that would expand past what its header\n"
	  "says: refused with the reason. merge, intersect and card read files alike.\n"
	  "The file's action (drop, allow, monitor) becomes the filter's, and attach's\n"
	  "default: import prints it." },
	{ "merge", cmd_merge, "merge SRC SRC... --into NAME",
	  "The union of filters into NAME: bits ORed, counters summed (saturating), prefix\n"
	  "lengths and exact sets united, flows summed (an upper bound). A SRC holding a\n"
	  "'/' or a '.' is an export file (r1.fbx, ./r1; compressed or plain), else a\n"
	  "filter. All must have the same layout, k, size, hash, key, counter width,\n"
	  "--confirm setting and action: refused with the reason otherwise. NAME is\n"
	  "created, or if it exists and is compatible its content is replaced in one\n"
	  "switch, as load --replace does." },
	{ "intersect", cmd_intersect, "intersect SRC SRC... --into NAME",
	  "The intersection into NAME, as merge: bits ANDed, counters the smaller, the\n"
	  "prefix lengths and exact-set rules all hold. Every flow all the sources hold\n"
	  "is in it (and possibly more); flows is estimated from the fill." },
	{ "fold", cmd_fold, "fold NAME",
	  "Halve a filter of an even number of blocks: the same flows, in half the\n"
	  "memory, at a higher false-positive rate. Built aside and switched in;\n"
	  "every flow still matches." },
	{ "card", cmd_card, "card SRC [SRC]",
	  "Estimated distinct flows from the fill (Swamidass-Baldi); with two filters\n"
	  "also their union, intersection and Jaccard similarity." },
	{ "query", cmd_query,
	  "query NAME (FLOW... | -f FILE) [--packet [--action drop|allow|monitor]\n"
	  "                 [--malformed pass|drop] [--dev DEV]]",
	  "Print 'maybe' or 'no' for each flow, then a count: is that rule in the\n"
	  "filter? ('maybe': a false positive is possible; with --confirm exact the\n"
	  "answer is 'yes' or 'no', the exact sets deciding.) For a plain address (src\n"
	  "ADDR, dst ADDR) the answer is the data path's: does a prefix held by the\n"
	  "filter cover it? A prefix (src ADDR/LEN) or a FLOW of FIELDs asks for that\n"
	  "rule; a prefix load expanded is found, whole, at the longer length it went\n"
	  "to. FILE (-f or --file) as for add.\n"
	  "--packet asks instead what the data path does with one packet of each FLOW,\n"
	  "which must fix every field (PROTO SRC:PORT DST:PORT, or PROTO src ADDR dst\n"
	  "ADDR for a protocol without ports): its frame (a TCP SYN, a UDP datagram, an\n"
	  "ICMP echo request, ...) runs through the XDP program as replay's packets do,\n"
	  "the filter's counters untouched. Each line: the verdict, the rule kind that\n"
	  "matched (flow, src, dst, or shape and its fields; '-': none), the flow as the\n"
	  "program keyed it, and whether that rule is permanent or has a lifetime (its\n"
	  "generation, when that ends). --action and --malformed as for attach\n"
	  "(default: the filter's own action). --dev DEV: as the program attached on\n"
	  "DEV decides, with its action and malformed policy (refused if DEV runs no\n"
	  "flowbloom program, or one of another filter; not with --action or\n"
	  "--malformed); -n NETNS for a device in a namespace." },
	{ "stats", cmd_stats, "stats NAME [--watch [SECS]]",
	  "Packet and byte counters of the filter's attachments. --watch prints them\n"
	  "every SECS (seconds, or 500ms, 1m; default 1) with the rates since the\n"
	  "previous poll (packets/s, bits/s), until Ctrl-C; with -j one object per\n"
	  "line." },
	{ "top", cmd_top, "top NAME [-n N] [--by packets|bytes] [--interval SECS]",
	  "The N heaviest flows (default 10) since monitoring started, or over the next\n"
	  "SECS (seconds, or 500ms, 5m) with --interval, as estimated by the count-min\n"
	  "sketch (attach --monitor; the heaviest addresses if it counts addresses,\n"
	  "--sketch-by). Estimates are never below the truth; the bound printed is how\n"
	  "far above it they can be, and with what probability." },
	{ "traffic", cmd_traffic, "traffic NAME FLOW... | traffic NAME -f FILE",
	  "The sketch's estimate of packets and bytes for each 5-tuple FLOW since\n"
	  "monitoring started (attach --monitor), with its error bound. A sketch by\n"
	  "address (--sketch-by src or dst) estimates addresses: FLOW is `src ADDR`\n"
	  "(`dst ADDR`), or a 5-tuple, which stands for its address. FILE (-f or\n"
	  "--file) as for add." },
	{ "flows", cmd_flows, "flows NAME [--follow]",
	  "New-flow events (attach --new-flows): each flow's first packet in an aging\n"
	  "period, with time, device, verdict and size. Without --follow, the events\n"
	  "waiting in the ring buffer and a summary; with --follow (-f), as they happen\n"
	  "until Ctrl-C (-j: one object per line). Events the ring buffer had no room\n"
	  "for are counted and reported as lost." },
	{ "metrics", cmd_metrics, "metrics [NAME...] [--textfile PATH]",
	  "Counters and monitoring figures of the filters (default: all) in the\n"
	  "Prometheus text exposition format. --textfile writes PATH atomically (a\n"
	  "temporary file renamed over it), for node_exporter's textfile collector.\n"
	  "flowbloom_filter_up: 1 per filter read, 0 per one skipped (then exit 1)." },
	{ "ipfix", cmd_ipfix,
	  "ipfix NAME --collector HOST:PORT [--udp|--tcp] [--interval S] [--top N]\n"
	  "                 [--idle-timeout S] [--active-timeout S] [--observation-domain N]\n"
	  "                 [--template-refresh S] [--config FILE]",
	  "Export IPFIX (RFC 7011) to a collector until Ctrl-C or SIGTERM. With attach\n"
	  "--accounting, a record per flow with its exact packets and IP octets when it\n"
	  "ends (no packet for --idle-timeout S, default 15; TCP FIN or RST) and every\n"
	  "--active-timeout S (default 60) while it goes on, with flowEndReason, TCP\n"
	  "flags, ToS, VLAN, MACs, ICMP type/code, interfaces and the verdict as\n"
	  "forwardingStatus. With --new-flows, a notification per new flow, without\n"
	  "counts. Every --interval S (default 60), estimates of the N heaviest flows\n"
	  "(default 100, by packets and by bytes) that only the sketch counted (attach\n"
	  "--monitor: all traffic, or what the accounting table had no room for), with\n"
	  "a confidence interval. Over UDP (default) templates are sent again 1, 2, 4\n"
	  "... 32 s into a session and every --template-refresh S (default 60; 0: before\n"
	  "every message); over TCP once per connection. Sends never wait: a collector\n"
	  "that is away or refuses is reported, records wait (up to 65536) and go in a\n"
	  "new session once it is back; what is lost is counted in the summary.\n"
	  "--config FILE reads options from FILE, one a line ('collector = HOST:PORT',\n"
	  "'tcp'); flowbloom-ipfix@NAME.service runs it with " FB_SYSCONFDIR
	  "/flowbloom/NAME.ipfix.\nEach ban that `flowbloom guard NAME` makes, and its end, is a "
	  "record of its\n"
	  "own (firewallEvent). S: seconds, or 500ms, 5m, 1h." },
	{ "bgp", cmd_bgp,
	  "bgp NAME [--community ASN:VALUE] [--rtbh dst|src] [--on-session-down keep|flush]\n"
	  "                 [--min-length V4,V6] [--max-paths N] [--state FILE] [--flush] "
	  "[--ttl DURATION]",
	  "Apply BGP routes to counting filter NAME, reading ExaBGP's JSON API on stdin\n"
	  "(ExaBGP runs it as a process). A route with the BLACKHOLE community\n"
	  "(65535:666, RFC 7999, or --community) adds a dst rule for its prefix (src\n"
	  "with --rtbh src); its withdrawal deletes it. A FlowSpec route (RFC 8955)\n"
	  "with a traffic-rate 0 (discard) action becomes one rule of its shape:\n"
	  "source and destination prefixes, one protocol, ports or port ranges (up to\n"
	  "8 ORed terms, expanded within the port-prefix cap; TCP's and UDP's ports\n"
	  "if no protocol is given, and only packets with ports, as RFC 8955 says);\n"
	  "TCP flags, packet length, DSCP, fragment, ICMP type/code, a rate limit above 0\n"
	  "or any other action is reported unsupported and nothing of it applied.\n"
	  "The route's family decides the rule's: an IPv6 route (v4-mapped prefixes\n"
	  "included) makes IPv6 rules only. Prefixes shorter than V4,V6 (default 24,48)\n"
	  "in the rule's family are refused. A line that is not exactly one JSON\n"
	  "message is reported and skipped whole. A rule announced by several peers\n"
	  "or paths is added once and deleted with its last path. A new rule past\n"
	  "NAME's capacity (m ln 2 / k for --bits; the operator's rules counted) is\n"
	  "refused, its route whole, and reported, so a peer announcing without end\n"
	  "cannot raise the false-positive rate; so is a route past N paths held\n"
	  "(--max-paths, default 500000; a path per peer and add-path id of a route).\n"
	  "On a session loss its routes stay (keep, default) or are deleted (flush).\n"
	  "Logged per peer per 10 s: 10 refusals of a kind, 100 changes; others counted.\n"
	  "What was added is recorded in FILE (default /run/flowbloom/NAME.bgp; its\n"
	  "directory must be root's and writable by no one else) so a restarted\n"
	  "process takes over, its paths held to the same limits as a peer's;\n"
	  "--flush deletes all of it and exits.\n"
	  "--ttl gives each rule a lifetime (add --ttl), renewed every half lifetime\n"
	  "while its route stands: if this process dies, its rules end by themselves." },
	{ "guard", cmd_guard,
	  "guard NAME --into BAN (--pps N | --bps N)... --ttl DURATION [--by src|dst]\n"
	  "                 [--interval DURATION] [--never FILE] [--dry-run]\n"
	  "                 [--max-bans N] [--announce [--flowspec]] [--count N]",
	  "Detect and ban: every interval (default 1s) read the traffic sketch of NAME\n"
	  "(attached with --monitor) and ban each source address (destination with --by\n"
	  "dst) whose packets or bits per second are above N (summed over its flows;\n"
	  "a sketch by address, attach --sketch-by src or dst, counts the address\n"
	  "itself, then --by must say the same): added to filter BAN (NAME\n"
	  "itself will do) for DURATION (longer than the interval), a rule the data path\n"
	  "drops until it expires, with no process running. An address is banned only\n"
	  "when the sketch's lower confidence limit (estimate minus its error bound) is\n"
	  "above the threshold, so sketch error never bans an innocent address; a ban is\n"
	  "extended while the address stays above, and written again if BAN lost it (a\n"
	  "load --replace --ttl replaces the rules with a lifetime). FILE lists prefixes\n"
	  "never banned (a source is what the packet says: one spoofed in a flood is\n"
	  "banned as a real one). No new ban once BAN holds as many flows as its capacity\n"
	  "(m ln 2 / k if created with --bits), nor once N bans are in force\n"
	  "(--max-bans N; an earlier guard's count until they end): the address is\n"
	  "reported as not banned each interval, counted, not announced; extensions\n"
	  "(and taking over an earlier guard's bans) go on. --dry-run reports and\n"
	  "changes nothing. Each ban and unban is a line on stderr (JSON with -j),\n"
	  "counted in `metrics`.\n"
	  "--announce writes ExaBGP commands on stdout: a blackhole route (65535:666; a\n"
	  "FlowSpec discard with --flowspec) per ban, withdrawn when the ban ends or guard\n"
	  "stops unless another running guard's ban holds it; as many as --max-bans allows\n"
	  "(else BAN's capacity, said at the start). A killed guard's routes are\n"
	  "withdrawn, or held until their bans end, by the next guard to start. --count\n"
	  "stops after N intervals." },
	{ "replay", cmd_replay,
	  "replay NAME FILE.pcap... [--explain] [--action drop|allow|monitor]\n"
	  "                 [--malformed pass|drop] [--dev DEV]",
	  "Run every packet of the captures through the XDP program (BPF_PROG_TEST_RUN)\n"
	  "against the filter, attaching nothing, and count verdicts ('-': stdin, e.g.\n"
	  "from tcpdump -w -). --explain prints per packet the flow key the program\n"
	  "computed, the rule kind that matched (permanent, or with a lifetime: its\n"
	  "generation, when that ends) and the verdict. --action and --malformed as for\n"
	  "attach. --dev DEV: as the program attached on DEV decides, as for query\n"
	  "--packet." },
	{ "capture", cmd_capture,
	  "capture NAME -w FILE [--verdict drop|pass|any] [--sample N] [--count N]\n"
	  "                 [--snaplen B] [--format pcapng|pcap] [--buffer SIZE]\n"
	  "                 [--duration SECS] [--dev DEV] [--mode OCTAL]",
	  "Write the frames the attached program gives a verdict (default drop) to FILE\n"
	  "(-w or --write; '-': stdout, e.g. into tcpdump -r -), 1 in N of them per CPU\n"
	  "(default all), the first B bytes of each (--snaplen or -s; default and at\n"
	  "most 4096), until N are written (--count or -c), SECS (seconds, or 10m, 1h)\n"
	  "have passed, or Ctrl-C/SIGTERM. pcapng (default) records per frame the\n"
	  "XDP verdict (tshark: frame.verdict.ebpf_xdp) and a comment 'flowbloom:\n"
	  "verdict=drop rule=src' naming the rule kind that matched (frame.comment; with\n"
	  "' lifetime=yes' if that rule has one), one interface per device; pcap has the\n"
	  "frames only. The running program is not reloaded: capture is switched on in\n"
	  "it and off at exit; while none runs, the data path pays nothing measurable (a\n"
	  "load and a branch per packet). A capture whose process dies stops by itself\n"
	  "within 2 s; one whose reader (-w -) goes away ends. One capture per program\n"
	  "at a time. Every device NAME is attached to in this network namespace (-n),\n"
	  "or only DEV. Frames go through a ring buffer of SIZE bytes (default 4M); what\n"
	  "it had no room for is counted as lost.\n"
	  "FILE is written aside, mode 0600 (--mode), and renamed into place at the end." },
	{ "apply", cmd_apply, "apply FILE [--check | --down]",
	  "Make filter NAME what FILE (NAME.conf) says: create it if absent, replace its\n"
	  "content with the listed block-lists, attach it to the listed devices; what is\n"
	  "already so is left alone (a content the lists give already, compared aside, is\n"
	  "not replaced), and the last line says whether anything changed. Lines 'key =\n"
	  "value' ('#' comments): capacity, fp-rate | bits, hashes; layout, hash, action,\n"
	  "counting (no|4|8), confirm (no|exact), compact (no|yes), as create's options;\n"
	  "load = PATH (repeatable, relative to FILE; lists of no rules are refused\n"
	  "unless allow-empty = yes); attach = DEV [native|generic] (repeatable);\n"
	  "malformed = pass|drop. All is checked first (errors name\n"
	  "FILE:LINE); a step that fails undoes this run's earlier ones. --check makes\n"
	  "every check apply makes (sizes, the lists parsed), says whether apply would\n"
	  "change anything, and changes nothing; --down detaches the listed devices and\n"
	  "keeps the filter. FILE must be root's, writable by no one else, its links and\n"
	  "directory root's (the directory writable by others only if sticky). At boot,\n"
	  "flowbloom@NAME.service applies " FB_SYSCONFDIR "/flowbloom/NAME.conf." },
	{ "help", cmd_help, "help [VERB]",
	  "Show help: every verb's synopsis, or one verb's help (also VERB help, VERB\n"
	  "--help); with -j as one JSON object (the whole verb table, or the verb's\n"
	  "synopsis and help). Global options go before the verb." },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct fb_cmd *current;

static void synopsis(FILE *out, const struct fb_cmd *c)
{
	fprintf(out, "       flowbloom %s\n", c->synopsis);
}

/* Shared with the man page (help --man). */
static const char usage_line[] =
	"flowbloom [-j|--json] [-v|--verbose] [-n|--netns NETNS] VERB ARGS";
static const char flow_syntax[] =
	"FLOW := PROTO SRC:PORT DST:PORT | src ADDR[/LEN] | dst ADDR[/LEN]\n"
	"      | (PROTO | any | proto P) FIELD...\n"
	"FIELD := src ADDR[/LEN] | dst ADDR[/LEN] | sport PORT[-PORT] | dport PORT[-PORT]\n"
	"       e.g. udp 198.51.100.1:53 203.0.113.7:4000\n"
	"            tcp [2001:db8::1]:443 [2001:db8::2]:51000\n"
	"            udp dst 203.0.113.0/24 dport 53\n"
	"            tcp dst 203.0.113.7 dport 1024-2047";

static const char version_line[] = "flowbloom -V|--version";

static void usage_all(FILE *out)
{
	size_t i;

	fprintf(out, "Usage: %s\n       %s\n", usage_line, version_line);
	for (i = 0; i < NCMDS; i++)
		synopsis(out, &cmds[i]);
	fprintf(out, "%s\n", flow_syntax);
}

/* A synopsis on one line (its continuation lines' indent folded), for JSON. */
static void jw_synopsis(const char *name, const char *syn)
{
	char buf[1024];
	size_t n = 0;

	for (; *syn && n < sizeof(buf) - 1; syn++)
		if (!(*syn == ' ' || *syn == '\n') || (n && buf[n - 1] != ' '))
			buf[n++] = *syn == '\n' ? ' ' : *syn;
	buf[n] = 0;
	jw_str(name, buf);
}

static void help_json(const struct fb_cmd *c)
{
	jw_str("verb", c->name);
	jw_synopsis("synopsis", c->synopsis);
	jw_str("help", c->help);
}

static void help_one(const struct fb_cmd *c)
{
	if (fb_json) {
		jw_obj_open(NULL);
		help_json(c);
		jw_obj_close();
		jw_end();
		return;
	}
	printf("Usage: flowbloom %s\n\n%s\n", c->synopsis, c->help);
}

/* `help`: every verb's synopsis; with -j the whole verb table. */
static void help_all(void)
{
	size_t i;

	if (!fb_json) {
		usage_all(stdout);
		return;
	}
	jw_obj_open(NULL);
	jw_str("usage", usage_line);
	jw_arr_open("verbs");
	for (i = 0; i < NCMDS; i++) {
		jw_obj_open(NULL);
		help_json(&cmds[i]);
		jw_obj_close();
	}
	jw_arr_close();
	jw_str("flow", flow_syntax);
	jw_obj_close();
	jw_end();
}

int fb_usage_synopsis(void)
{
	if (current)
		fprintf(stderr, "usage: flowbloom %s\n", current->synopsis);
	return 2;
}

int fb_usage(const char *fmt, ...)
{
	va_list ap;

	/* Formatted whole, as every message: a long argument never cuts
	 * off the reason after it. */
	va_start(ap, fmt);
	fb_vreport(FB_REPORT_ERROR, fmt, ap);
	va_end(ap);
	if (current)
		fprintf(stderr, "usage: flowbloom %s\n", current->synopsis);
	return 2;
}

/* The global options, given after the verb, are not the verb's: ip and nft
 * take them only before it, but bpftool anywhere, so `flowbloom stats edge
 * -j` is a natural slip. Say where they go rather than only "unknown". */
int fb_unknown_option(const char *opt, int len)
{
	static const char *const global[] = { "-j", "--json",  "-v", "--verbose",
					      "-n", "--netns", NULL };
	int i;

	for (i = 0; current && global[i]; i++)
		if ((int)strlen(global[i]) == len && !strncmp(opt, global[i], len))
			return fb_usage("'%.*s' is a global option: it goes before the verb "
					"(flowbloom %.*s%s %s ...)",
					len, opt, len, opt, i >= 4 ? " NETNS" : "", current->name);
	return fb_usage("unknown option '%s'", fb_quote_len(opt, (size_t)len));
}

/* An unknown verb: ip and bpftool take abbreviations (`ip l`, `bpftool p
 * s`), flowbloom does not (detach and destroy share a start), but names
 * the one verb the word begins, or that begins it (stat: stats). */
static const char *verb_hint(const char *word, char *buf, size_t len)
{
	size_t i, n = strlen(word), found = 0, which = 0;

	for (i = 0; n && i < NCMDS; i++) {
		size_t m = strlen(cmds[i].name);

		if (!strncmp(cmds[i].name, word, n < m ? n : m)) {
			found++;
			which = i;
		}
	}
	if (found == 1)
		snprintf(buf, len, "did you mean %s? see flowbloom help", cmds[which].name);
	else
		snprintf(buf, len, "see flowbloom help");
	return buf;
}

static int cmd_help(int argc, char **argv)
{
	char hint[64];
	size_t i;

	/* Hidden: the man page, generated by the build (manpage.h). */
	if (argc == 2 && !strcmp(argv[1], "--man")) {
		fb_print_man(stdout, usage_line, version_line, cmds, NCMDS, flow_syntax);
		return 0;
	}
	if (fb_no_options(&argc, argv))
		return 2;
	if (argc > 2)
		return fb_usage("too many arguments");
	if (argc < 2) {
		help_all();
		return 0;
	}
	for (i = 0; i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			help_one(&cmds[i]);
			return 0;
		}
	return fb_usage("unknown verb '%s' (%s)", fb_quote(argv[1]),
			verb_hint(argv[1], hint, sizeof(hint)));
}

/* What a bug report needs: the build, the libbpf it runs with, and the
 * formats it reads (a filter pinned, or exported, in another is refused). */
static void print_version(void)
{
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("version", FB_BUILD_VERSION);
		jw_str("libbpf", libbpf_version_string());
		jw_u64("pinned_layout", FB_VERSION);
		jw_u64("export_format", FB_FBX_VERSION);
		jw_obj_close();
		jw_end();
		return;
	}
	printf("flowbloom %s\nlibbpf %s\npinned filter layout %d, export format %d\n",
	       FB_BUILD_VERSION, libbpf_version_string(), FB_VERSION, FB_FBX_VERSION);
}

/* What a verb printed must have reached stdout: `flowbloom -j info NAME
 * >state.json` on a full disk, or run with stdout closed, would otherwise
 * exit 0 with the file empty or cut short (gnulib's close_stdout). A verb
 * that failed has said why already; the message goes to stderr alone, as
 * stdout takes nothing. */
static int stdout_checked(int rc)
{
	if (!fflush(stdout) && !ferror(stdout))
		return rc;
	if (!rc) {
		fprintf(stderr, "flowbloom: write error on stdout: what it printed was lost\n");
		rc = 1;
	}
	return rc;
}

/* Standard descriptors the caller closed stay taken, by /dev/null opened
 * the wrong way round: otherwise the next file opened takes the number
 * (bgp read its state directory as its input; a file being written could
 * take stderr's). Reads of stdin and writes to stdout and stderr still
 * fail as on a closed descriptor (EBADF), so a lost output is still said. */
static void hold_std_fds(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", fd ? O_RDONLY : O_WRONLY) < 0)
			break; /* nothing to hold them with: as before */
}

/* A verb that failed (1) on a filter name of its command line that is no
 * name (the store's check refused it: a word, or --opt=WORD's value) had
 * a usage error, as a bad number is: status 2 (docs/cli.md), which the
 * units do not retry (RestartPreventExitStatus=2). A valid name that is
 * not there stays a failure. The verb may have dropped `--` from argv:
 * its last word is then NULL. */
static int name_status(int rc, int argc, char **argv)
{
	const char *w, *eq;
	int j;

	if (rc != 1 || !fb_pin_refused)
		return rc;
	for (j = 1; j < argc && (w = argv[j]); j++) {
		eq = !strncmp(w, "--", 2) ? strchr(w, '=') : NULL;
		if (!strcmp(w, fb_pin_refused) || (eq && !strcmp(eq + 1, fb_pin_refused))) {
			return fb_usage_synopsis();
		}
	}
	return rc;
}

int main(int argc, char **argv)
{
	const char *netns = NULL;
	char hint[64];
	int i = 1;
	size_t c;

	hold_std_fds();
	/* Options follow NAME in every synopsis, which getopt takes only while
	 * POSIXLY_CORRECT is unset: the grammar does not change with it. */
	unsetenv("POSIXLY_CORRECT");
	setvbuf(stdout, NULL, _IOLBF, 0);
	fb_report_set(fb_output_report);
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json"))
			fb_json = true;
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			fb_verbose = true;
		else if (!strcmp(argv[i], "-n") || !strcmp(argv[i], "--netns")) {
			if (i + 1 >= argc) {
				fb_err("%s needs a namespace name", argv[i]);
				return 2;
			}
			netns = argv[++i];
		} else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			if (i + 1 < argc) {
				fb_err("%s takes nothing after it", argv[i]);
				return 2;
			}
			print_version();
			return stdout_checked(0);
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			help_all();
			return stdout_checked(0);
		} else {
			fb_err("unknown option '%s'", fb_quote(argv[i]));
			usage_all(stderr);
			return 2;
		}
	}
	/* Entered once every global option is read: -j after -n still has
	 * its error as JSON. */
	if (netns && fb_enter_netns(netns))
		return 1;
	fb_libbpf_logging(fb_verbose);
	if (i >= argc) {
		fb_err("missing VERB (see flowbloom help)");
		usage_all(stderr);
		return 2;
	}
	for (c = 0; c < NCMDS; c++) {
		if (strcmp(argv[i], cmds[c].name))
			continue;
		current = &cmds[c];
		/* VERB help, and VERB --help or -h as xdp-tools and most tools take it. */
		if (argc - i >= 2 &&
		    ((!strcmp(argv[i + 1], "help") && cmds[c].fn != cmd_help) ||
		     !strcmp(argv[i + 1], "--help") || !strcmp(argv[i + 1], "-h"))) {
			help_one(&cmds[c]);
			return stdout_checked(0);
		}
		return stdout_checked(
			name_status(cmds[c].fn(argc - i, argv + i), argc - i, argv + i));
	}
	fb_err("unknown verb '%s' (%s)", fb_quote(argv[i]), verb_hint(argv[i], hint, sizeof(hint)));
	return 2;
}
