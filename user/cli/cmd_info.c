// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom list`, `info` and `destroy`. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "types/bits.h"
#include "cmd.h"
#include "types/counting.h"
#include "store/discover.h"
#include "types/ftype.h"
#include "output.h"
#include "store/gens.h"
#include "info_gens.h"
#include "store/jiffies.h"
#include "store/memuse.h"
#include "store/pintree.h"
#include "store/repair.h"
#include "rules/rules.h"
#include "rules/flow.h"
#include "rules/lifetime.h"
#include "types/sizing.h"
#include "store/store.h"
#include "util.h"

/* Does f keep a table of items (another filter type) rather than Bloom
 * bits? The type's own operations say (types/ftype.h). */
static bool is_table(const struct fb_header *h)
{
	const struct fb_ftype_ops *o = fb_ftype(h->type);

	return o && (o->flags & FB_FTYPE_TABLE);
}

/* list's second column: the Bloom layout, or the other type's name. */
static const char *kind_name(const struct fb_header *h)
{
	return is_table(h) ? fb_ftype_name(h->type) : FB_NAME(fb_layout_names, h->layout);
}

/* The type's description (types/ftype.h) as JSON members or text lines. */
static void out_u64(void *ctx, const char *key, __u64 v)
{
	(void)ctx;
	if (fb_json)
		jw_u64(key, v);
}

static void out_dbl(void *ctx, const char *key, double v)
{
	(void)ctx;
	if (fb_json)
		jw_double(key, v);
}

static void out_list(void *ctx, const char *key, bool open)
{
	(void)ctx;
	if (fb_json && open)
		jw_arr_open(key);
	else if (fb_json)
		jw_arr_close();
}

static void out_item(void *ctx, bool open)
{
	(void)ctx;
	if (fb_json && open)
		jw_obj_open(NULL);
	else if (fb_json)
		jw_obj_close();
}

static void out_line(void *ctx, const char *text)
{
	(void)ctx;
	if (!fb_json)
		printf("%s\n", text);
}

/* info's lines for another filter type (plain text, or JSON members). */
static void info_typed(const struct fb_store *f)
{
	static const struct fb_ftype_out out = { out_u64,  out_dbl,  out_list,
						 out_item, out_line, NULL };

	if (fb_json) {
		jw_str("type", fb_ftype_name(f->hdr->type));
		jw_u64("items", fb_ftype_items(f));
		jw_double("load", fb_ftype_load(f));
		jw_bool("interrupted_batch", fb_batchlog_open(f));
		if (fb_ftype(f->hdr->type)->interrupted)
			jw_bool("interrupted_relocation", fb_ftype_seq_odd(f));
	}
	fb_ftype_describe(f, &out);
	/* The probe then says "maybe" to every flow (cuckoo.h). */
	if (!fb_json && fb_ftype_seq_odd(f))
		printf("  an add or del was killed inside a relocation chain: every packet matches "
		       "until the next write to it (add, del, load) or `flowbloom check %s "
		       "--repair` ends it\n",
		       f->name);
	else if (!fb_json && fb_batchlog_open(f))
		printf("  an add or del was killed half way: the next write to it (add, del, "
		       "load) or `flowbloom check %s --repair` rolls it back\n",
		       f->name);
}

static void kinds_str(__u32 kinds, char *buf, size_t len)
{
	int k;

	buf[0] = 0;
	for (k = FB_KIND_FLOW; k < FB_KIND_MAX; k++)
		if (kinds & FB_KINDF(k))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "",
				 fb_kind_names[k]);
	if (!buf[0])
		snprintf(buf, len, "none");
}

int cmd_list(int argc, char **argv)
{
	char **names;
	int n, i;

	if (fb_no_options(&argc, argv))
		return 2;
	if (argc != 1)
		return fb_usage("list takes no arguments");
	/* Without the rights to read the filters' directory (bpffs is
	 * root-only by default) the list would look empty: say why instead. */
	if (access(fb_pin_root(), R_OK | X_OK) && errno != ENOENT) {
		fb_err("cannot read %s: %s (list needs root or CAP_BPF)", fb_pin_root(),
		       strerror(errno));
		return 1;
	}
	n = fb_pin_list(&names);
	if (n < 0)
		return 1;
	if (fb_json) {
		jw_obj_open(NULL);
		jw_arr_open("filters");
	}
	for (i = 0; i < n; i++) {
		bool quiet = fb_report_quiet;
		struct fb_store f;
		int r;

		/* One broken filter is listed as such; the others as usual. */
		fb_report_quiet = true;
		r = fb_store_open(names[i], &f);
		fb_report_quiet = quiet;
		/* Destroyed since it was listed: gone, as if listed after
		 * (never "broken": destroy would say there is no such one). */
		if (r && f.fail == FB_OPEN_ABSENT) {
			free(names[i]);
			continue;
		}
		if (r) {
			/* Damage; or a directory or pin not trusted (its
			 * owner, mode, a link), or only a limit of this
			 * process or the kernel's refusal (ulimit -n, memory,
			 * EPERM): not called broken then. */
			bool unknown = f.fail == FB_OPEN_UNKNOWN;
			bool untrusted = f.fail == FB_OPEN_UNTRUSTED;

			if (fb_json) {
				jw_obj_open(NULL);
				jw_str("name", names[i]);
				jw_str(unknown	   ? "error"
				       : untrusted ? "untrusted"
						   : "broken",
				       fb_report_last);
				jw_obj_close();
			} else {
				/* A directory of the root's, whatever its name
				 * (bad names are listed as broken). */
				char esc[FB_ESCAPED_SIZE(NAME_MAX)];

				printf("%-20s %s: %s\n", fb_printable(names[i], esc, sizeof(esc)),
				       unknown	   ? "ERROR"
				       : untrusted ? "UNTRUSTED"
						   : "BROKEN",
				       fb_report_last);
			}
			free(names[i]);
			continue;
		}
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("name", f.name);
			jw_str("layout", kind_name(f.hdr));
			jw_u64("bits", fb_header_mbits(f.hdr));
			jw_u64("hashes", f.hdr->k);
			jw_u64("flows", f.hdr->nflows);
			jw_str("action", FB_NAME(fb_action_names, f.hdr->action));
			jw_u64("counter_bits", f.hdr->counter_bits);
			jw_bool("confirm_exact", f.hdr->confirm);
			jw_obj_close();
		} else {
			/* What a filter does and can do, as nft list sets shows a
			 * set's flags: its action, counters, exact sets. */
			char k[16] = "";

			/* k: a Bloom filter's; the tables (cuckoo, d-left) and a
			 * scalable filter's stages have none of their own. */
			if (f.hdr->k)
				snprintf(k, sizeof(k), " k=%u", f.hdr->k);
			printf("%-20s %-8s m=%llu%s flows=%llu action=%s%s%s\n", f.name,
			       kind_name(f.hdr), (unsigned long long)fb_header_mbits(f.hdr), k,
			       (unsigned long long)f.hdr->nflows,
			       FB_NAME(fb_action_names, f.hdr->action),
			       f.hdr->counter_bits ? " counting" : "",
			       f.hdr->confirm ? " confirm=exact" : "");
		}
		/* A chain a killed writer left open makes the program match
		 * every packet (cuckoo.h): said on stderr as the leftovers
		 * below are, with what ends it. */
		if (fb_ftype_seq_odd(&f))
			fb_report(FB_REPORT_NOTE,
				  "cuckoo filter '%s' was left inside a relocation chain by a "
				  "killed writer: it matches every packet until the next write to "
				  "it or `flowbloom check %s --repair` ends the chain",
				  f.name, f.name);
		else if (fb_batchlog_open(&f))
			fb_report(FB_REPORT_NOTE,
				  "%s filter '%s' holds part of a batch a killed writer left: the "
				  "next write to it or `flowbloom check %s --repair` rolls it back",
				  fb_ftype_name(f.hdr->type), f.name, f.name);
		fb_store_close(&f);
		free(names[i]);
	}
	if (fb_json) {
		jw_arr_close();
		jw_obj_close();
		jw_end();
	}
	free(names);
	/* What killed commands left: said on stderr (the list stays the
	 * filters'), with the command that removes it. */
	n = fb_repair_list_stale(&names);
	for (i = 0; i < n; i++) {
		const char *base = names[i] + strspn(names[i], "~");

		fb_report(FB_REPORT_NOTE,
			  "an interrupted %s left %s/%s: flowbloom destroy %s removes it",
			  names[i][1] == '~' ? "destroy" : "create or import", fb_pin_root(),
			  names[i], base);
		free(names[i]);
	}
	free(names);
	return 0;
}

/* The devices the filter is attached to, read whole before any is shown:
 * a program that cannot be read makes them unknown, never "nowhere". */
struct atts {
	struct {
		char dev[IF_NAMESIZE];
		const char *mode;
		__u32 prog_id;
	} * v;
	int n, cap;
	bool oom;
};

static void note_attach(const char *ifname, const char *mode, __u32 prog_id, void *ctx)
{
	struct atts *a = ctx;

	if (a->n == a->cap) {
		void *v = realloc(a->v, (a->cap = a->cap ? 2 * a->cap : 8) * sizeof(*a->v));

		if (!v) {
			a->oom = true;
			return;
		}
		a->v = v;
	}
	snprintf(a->v[a->n].dev, sizeof(a->v[a->n].dev), "%s", ifname);
	a->v[a->n].mode = mode;
	a->v[a->n++].prog_id = prog_id;
}

/* -1 (said) if they cannot be read. */
static int read_attachments(const struct fb_store *f, struct atts *a)
{
	if (fb_discover_attachments(f, note_attach, a) < 0)
		return -1;
	if (!a->oom)
		return 0;
	fb_err("out of memory reading where '%s' is attached", f->name);
	return -1;
}

static void print_attach(const struct atts *a, int i)
{
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("dev", a->v[i].dev);
		jw_str("mode", a->v[i].mode);
		jw_u64("prog_id", a->v[i].prog_id);
		jw_obj_close();
	} else {
		char dev[FB_ESCAPED_SIZE(IF_NAMESIZE)];

		printf("%s %s %s (prog %u)", i ? "," : "",
		       fb_printable(a->v[i].dev, dev, sizeof(dev)), a->v[i].mode, a->v[i].prog_id);
	}
}

/* FNV-1a over the bits and counters: equal digests, equal contents. */
static __u64 digest(const struct fb_store *f)
{
	const __u8 *p = (const __u8 *)&f->blocks[FB_HDR_BLOCKS];
	size_t n = (size_t)f->hdr->nblocks * FB_BLOCK_BYTES, i;
	__u64 h = 0xcbf29ce484222325ULL;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	if (f->cnt_hdr) {
		p = f->cnt;
		n = fb_counting_data_bytes(fb_header_mbits(f->hdr), f->hdr->counter_bits);
		for (i = 0; i < n; i++)
			h = (h ^ p[i]) * 0x100000001b3ULL;
	}
	return h;
}

static __u64 count_saturated(const struct fb_store *f)
{
	__u64 m = fb_header_mbits(f->hdr), p, n = 0;
	unsigned max = fb_counting_max(f);

	for (p = 0; p < m; p++)
		n += fb_counting_get(f, p) == max;
	return n;
}

/* What the kernel holds for the filter, all its maps: the bits and
 * counters above, and what they do not count (generations, exact sets,
 * monitoring, the outer map). Not all read: the total is not known (-j:
 * null, at_least what was read), never a part given as the whole; -1, its
 * error in why. */
static int info_kernel(const struct fb_store *f, char *why, size_t len)
{
	struct fb_mem m;
	bool quiet = fb_report_quiet;
	int i, r;

	fb_report_quiet = true;
	fb_report_last[0] = 0;
	r = fb_store_memory(f, &m);
	fb_report_quiet = quiet;
	if (r)
		snprintf(why, len, "%s", *fb_report_last ? fb_report_last : "cannot read its maps");
	if (fb_json) {
		jw_obj_open("kernel_memory");
		if (!r) {
			jw_u64("total", m.total);
			for (i = 0; i < FB_MEM_NR; i++)
				jw_u64(fb_mem_part_names[i], m.part[i]);
			jw_u64("maps", m.maps);
		} else {
			jw_null("total");
			for (i = 0; i < FB_MEM_NR; i++)
				jw_null(fb_mem_part_names[i]);
			jw_u64("maps", m.maps);
			jw_u64("at_least", m.total);
			jw_u64("unread", m.unread);
			jw_str("error", why);
		}
		jw_obj_close();
		return r;
	}
	if (r && !m.unread) {
		printf("  kernel memory unknown\n");
		return r;
	}
	printf("  kernel memory %s%llu bytes in %u maps%s:", r ? "at least " : "",
	       (unsigned long long)m.total, m.maps, r ? " read (not all could be)" : "");
	for (i = 0; i < FB_MEM_NR; i++)
		if (m.part[i])
			printf(" %s %llu", fb_mem_part_names[i], (unsigned long long)m.part[i]);
	printf("\n");
	return r;
}

int cmd_info(int argc, char **argv)
{
	struct fb_store f;
	struct fb_header *h;
	double m, fpr, fill;
	char kinds[64];
	const struct fb_prefixes *px;
	unsigned probes;
	__u64 set, saturated = 0;
	bool table;
	char dig[20], shape[96];
	__u32 masks[FB_MAX_MASKS];
	struct atts atts = { NULL, 0, 0, false };
	int natt, users, i, j, nmasks, kmem, gens, rc = 0;
	char kwhy[sizeof(fb_report_last)], gwhy[sizeof(fb_report_last)];
	struct fb_gens_fig gf;

	if (fb_no_options(&argc, argv))
		return 2;
	if (argc != 2)
		return fb_usage(argc < 2 ? "missing NAME" : "too many arguments");
	if (fb_store_open(argv[1], &f))
		return 1;
	gwhy[0] = 0;
	fb_info_gens_read(&f, &gf, gwhy, sizeof(gwhy)); /* first: it may map f again */
	if (!f.hdr) {
		/* Not mapped again after a replace (memory): not read. */
		fb_report_err("%s", *gwhy ? gwhy : "cannot read the filter");
		fb_store_close(&f);
		return 1;
	}
	h = f.hdr;
	m = (double)fb_header_mbits(h);
	table = is_table(h);
	set = table ? 0 : fb_bits_popcount(&f);
	fill = set / m;
	fpr = fb_ftype_fpr_now(&f);
	px = fb_store_prefixes(&f);
	probes = fb_probes_per_packet(h->kinds, px);
	kinds_str(h->kinds, kinds, sizeof(kinds));
	users = fb_discover_users(&f, NULL); /* -1: said, never shown as none */
	rc = users < 0;
	/* Not read: said, never shown as nowhere; said before the output
	 * (inside it, its -j object cut info's in two). */
	natt = read_attachments(&f, &atts);
	rc |= natt < 0;
	if (f.cnt_hdr)
		saturated = count_saturated(&f);
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("name", f.name);
		jw_str("layout", kind_name(h));
		jw_str("hash", FB_NAME(fb_hash_names, h->hash));
		if (table)
			info_typed(&f);
		jw_u64("bits", fb_header_mbits(h));
		jw_u64("hashes", h->k);
		jw_u64("blocks", h->nblocks);
		jw_bool("compact", h->flags & FB_HDRF_COMPACT);
		jw_u64("bytes", f.map_bytes);
		jw_u64("capacity", h->capacity);
		jw_double("fp_rate_target", h->fp_ppb / 1e9);
		jw_u64("flows", h->nflows);
		jw_u64("bits_set", set);
		jw_double("fill_ratio", fill);
		jw_double("fp_rate_expected", fpr);
		jw_u64("probes_per_packet", probes);
		jw_double("fp_rate_per_packet", fb_packet_rate(fpr, probes));
		jw_arr_open("prefix_lengths");
		for (i = 0; i < FB_PFX_NR; i++) {
			for (j = 0; j < px->list[i].n; j++) {
				jw_obj_open(NULL);
				jw_str("list", fb_rules_prefix_list_name(i));
				jw_u64("length",
				       px->list[i].len[j] -
					       (i == FB_PFX_SRC4 || i == FB_PFX_DST4 ? 96 : 0));
				jw_obj_close();
			}
		}
		jw_arr_close();
		jw_arr_open("shapes");
		nmasks = fb_rules_masks(px, masks);
		for (i = 0; i < nmasks; i++) {
			fb_mask_name(masks[i], shape, sizeof(shape));
			jw_str(NULL, shape);
		}
		jw_arr_close();
		jw_u64("shapes_max", FB_MAX_MASKS);
		jw_str("kinds", kinds);
		jw_bool("confirm_exact", h->confirm);
		snprintf(dig, sizeof(dig), "%016llx", (unsigned long long)digest(&f));
		jw_str("digest", dig);
		jw_u64("counter_bits", h->counter_bits);
		if (f.cnt_hdr) {
			jw_u64("counter_bytes", f.cnt_bytes);
			jw_u64("saturated_counters", saturated);
		}
		jw_str("action", FB_NAME(fb_action_names, h->action));
		gens = fb_info_gens(&f, &gf);
		kmem = info_kernel(&f, kwhy, sizeof(kwhy));
		if (natt < 0) {
			jw_null("attached");
		} else {
			jw_arr_open("attached");
			for (i = 0; i < atts.n; i++)
				print_attach(&atts, i);
			jw_arr_close();
		}
		if (users < 0)
			jw_null("programs");
		else
			jw_u64("programs", users);
		/* Loaded where the pins are hidden, a program fails open. */
		fb_warn_fail_open(true);
		jw_obj_close();
		jw_end();
	} else {
		printf("filter %s\n", f.name);
		if (table) {
			printf("  type %s, hash %s, %u blocks of 64 bytes, memory %zu bytes\n",
			       fb_ftype_name(h->type), FB_NAME(fb_hash_names, h->hash), h->nblocks,
			       f.map_bytes);
			info_typed(&f);
		} else {
			printf("  layout %s, hash %s, k=%u\n", FB_NAME(fb_layout_names, h->layout),
			       FB_NAME(fb_hash_names, h->hash), h->k);
			printf("  m=%llu bits (%u blocks of 512), memory %zu bytes%s\n",
			       (unsigned long long)fb_header_mbits(h), h->nblocks, f.map_bytes,
			       h->flags & FB_HDRF_COMPACT ? ", compact (bits in whole pages)" : "");
		}
		if (h->capacity)
			printf("  sized for %llu flows at fp-rate %g\n",
			       (unsigned long long)h->capacity, h->fp_ppb / 1e9);
		if (table)
			printf("  flows added %llu\n", (unsigned long long)h->nflows);
		else
			printf("  flows added %llu, bits set %llu, fill ratio %.6f\n",
			       (unsigned long long)h->nflows, (unsigned long long)set, fill);
		printf("  expected false-positive rate now %.6g per probe, %.6g per packet (%u "
		       "probe%s)\n",
		       fpr, fb_packet_rate(fpr, probes), probes, probes == 1 ? "" : "s");
		for (i = 0; i < FB_PFX_NR; i++) {
			if (!px->list[i].n)
				continue;
			int sorted[FB_MAX_LENGTHS], n = 0, t;

			/* Shortest first, as a reader expects; the table's own
			 * order (the probe order) is no concern of theirs. */
			for (j = 0; j < px->list[i].n && n < FB_MAX_LENGTHS; j++) {
				for (t = n++; t > 0 && sorted[t - 1] > px->list[i].len[j]; t--)
					sorted[t] = sorted[t - 1];
				sorted[t] = px->list[i].len[j];
			}
			printf("  %s prefix lengths:", fb_rules_prefix_list_name(i));
			for (t = 0; t < n; t++)
				printf(" /%d",
				       sorted[t] - (i == FB_PFX_SRC4 || i == FB_PFX_DST4 ? 96 : 0));
			printf("\n");
		}
		nmasks = fb_rules_masks(px, masks);
		if (nmasks) {
			printf("  rule shapes (%d of at most %d, one probe each for packets of "
			       "their family):\n",
			       nmasks, FB_MAX_MASKS);
			for (i = 0; i < nmasks; i++) {
				fb_mask_name(masks[i], shape, sizeof(shape));
				printf("    %s\n", shape);
			}
		}
		if (f.cnt_hdr)
			printf("  counting: %u-bit counters, %zu bytes, %llu saturated\n",
			       h->counter_bits, f.cnt_bytes, (unsigned long long)saturated);
		printf("  rule kinds %s, default action %s%s\n", kinds,
		       FB_NAME(fb_action_names, h->action),
		       h->confirm ? ", hits confirmed in exact sets" : "");
		gens = fb_info_gens(&f, &gf);
		kmem = info_kernel(&f, kwhy, sizeof(kwhy));
		printf("  content digest %016llx\n", (unsigned long long)digest(&f));
		if (natt >= 0) {
			printf("  attached:");
			for (i = 0; i < atts.n; i++)
				print_attach(&atts, i);
			printf("%s\n", atts.n ? "" : " nowhere in this network namespace");
		}
		if (users >= 0)
			printf("  in use by %d XDP program%s (all namespaces)\n", users,
			       users == 1 ? "" : "s");
		fb_warn_fail_open(true);
	}
	/* Their errors after the rest (-j: objects of their own after info's). */
	if (gens)
		fb_err("%s", gwhy);
	if (kmem)
		fb_err("%s", kwhy);
	free(atts.v);
	fb_store_close(&f);
	return rc || gens || kmem;
}

void fb_print_destroyed(const char *name)
{
	if (!fb_json)
		printf("destroyed %s\n", name);
	else {
		jw_obj_open(NULL);
		jw_str("destroyed", name);
		jw_obj_close();
		jw_end();
	}
}

int cmd_destroy(int argc, char **argv)
{
	if (fb_no_options(&argc, argv))
		return 2;
	if (argc != 2)
		return fb_usage(argc < 2 ? "missing NAME" : "too many arguments");
	if (fb_store_destroy(argv[1]))
		return 1;
	fb_print_destroyed(argv[1]);
	return 0;
}
