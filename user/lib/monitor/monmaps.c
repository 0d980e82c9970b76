// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Flow monitoring maps: create, pin, open (see monmaps.h); whether an
 * attachment shares them or makes them anew is monshare.c, reading them
 * monread.c, handing them to the program loader.c. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "monitor/monmaps.h"
#include "report.h"
#include "store/pintree.h"
#include "util.h"

static const char *const pin_names[] = { "config", "sketch",   "top",	 "top_keys",
					 "seen",   "newflows", "mstats", "flows" };
#define FB_MON_NPINS (int)(sizeof(pin_names) / sizeof(pin_names[0]))

void fb_monitor_opts_default(struct fb_mon_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->epsilon = FB_MON_DEF_EPSILON;
	o->delta = FB_MON_DEF_DELTA;
	o->expect = FB_MON_DEF_EXPECT;
	o->age = FB_MON_DEF_AGE;
	o->ring_bytes = FB_MON_DEF_RING;
	o->max_flows = FB_MON_DEF_FLOWS;
}

__u32 fb_monitor_acct_buckets(__u64 max_flows)
{
	if (max_flows < FB_ACCT_MIN_FLOWS)
		max_flows = FB_ACCT_MIN_FLOWS;
	if (max_flows > FB_ACCT_MAX_FLOWS)
		max_flows = FB_ACCT_MAX_FLOWS;
	return (__u32)((max_flows + FB_ACCT_WAYS - 1) / FB_ACCT_WAYS);
}

int fb_monitor_geometry(double epsilon, double delta, __u32 *shift, __u32 *depth)
{
	double w, d;
	__u32 s;

	if (!(epsilon > 0 && epsilon < 1)) {
		fb_report_err("epsilon must be in (0, 1), not %g", epsilon);
		return -1;
	}
	if (!(delta > 0 && delta < 1)) {
		fb_report_err("delta must be in (0, 1), not %g", delta);
		return -1;
	}
	/* Cormode and Muthukrishnan 2005: Pr[est > true + eps N] <= (1/e)^d
	 * with w = e / eps; so d = ln(1 / delta) rows meet delta. */
	w = ceil(M_E / epsilon);
	d = ceil(log(1 / delta));
	if (w > (1U << FB_MON_MAX_SHIFT)) {
		fb_report_err("epsilon %g needs %.0f columns; at most %u (epsilon >= %.2g)",
			      epsilon, w, 1U << FB_MON_MAX_SHIFT, M_E / (1U << FB_MON_MAX_SHIFT));
		return -1;
	}
	if (d > FB_MON_MAX_DEPTH) {
		fb_report_err("delta %g needs %.0f rows; at most %d (delta >= %.2g)", delta, d,
			      FB_MON_MAX_DEPTH, exp(-FB_MON_MAX_DEPTH));
		return -1;
	}
	/* A power of two at least as wide: a column is then a shift. */
	for (s = 2; (1U << s) < w; s++)
		;
	*shift = s;
	*depth = d < 1 ? 1 : (__u32)d;
	return 0;
}

/* False-positive rate of one generation word: the flow's k of 48 bits are
 * all set by the j other flows sharing the word, j ~ Poisson(load). */
static double seen_fpr(double load, __u32 k)
{
	double p = 0, pj = exp(-load);
	int j;

	for (j = 0; j < 200; j++) {
		if (j)
			pj *= load / j;
		p += pj * pow(1 - pow(1 - 1.0 / FB_SEEN_BITS, (double)k * j), k);
	}
	return p;
}

double fb_monitor_seen_miss_rate(double flows, __u32 slots, __u32 k)
{
	double p = seen_fpr(flows / (slots - FB_SEEN_HDR_SLOTS), k);

	/* Missed if all its bits are set in the current word, or else in
	 * the previous one (then it looks carried over). */
	return 1 - (1 - p) * (1 - p);
}

void fb_monitor_seen_size(__u64 expect, __u32 *slots, __u32 *k)
{
	/* 7 slots per 6 expected flows (56 filter bits a flow, 18.7 bytes
	 * for both generations): with 4 bits, 3.1e-4 of new flows look seen
	 * per generation (seen_fpr above), 6.2e-4 counting both. Slot 0 is
	 * the generation clock. */
	if (expect < 64)
		expect = 64;
	expect += (expect + 5) / 6;
	if (expect > FB_SEEN_MAX_SLOTS)
		expect = FB_SEEN_MAX_SLOTS;
	*slots = (__u32)expect + FB_SEEN_HDR_SLOTS;
	*k = FB_SEEN_K;
}

/* The monitoring directory is reached, like every pin, through the
 * filter's verified directory fd (pintree.c), never by its path again. */
static void mon_path(char *buf, size_t len, const struct fb_store *f, const char *what)
{
	if (what)
		snprintf(buf, len, "%s/%s/%s", f->dir, FB_MON_DIR, what);
	else
		snprintf(buf, len, "%s/%s", f->dir, FB_MON_DIR);
}

int fb_monitor_dir(const struct fb_store *f)
{
	char path[1024];
	int fd = fb_pin_open_dir(f->dir_fd, FB_MON_DIR);

	mon_path(path, sizeof(path), f, NULL);
	if (fd < 0) {
		if (errno == ENOENT)
			return -2;
		fb_report_err("cannot open %s: %s", path,
			      errno == ELOOP || errno == ENOTDIR ? "not a directory of flowbloom's"
								 : strerror(errno));
		return -1;
	}
	if (fb_pin_trusted(fd, path, false)) {
		close(fd);
		return -1;
	}
	return fd;
}

void fb_monitor_unpin(const struct fb_store *f)
{
	int fd = fb_pin_open_dir(f->dir_fd, FB_MON_DIR);
	size_t i;

	if (fd < 0)
		return;
	for (i = 0; i < sizeof(pin_names) / sizeof(pin_names[0]); i++)
		unlinkat(fd, pin_names[i], 0);
	close(fd);
	unlinkat(f->dir_fd, FB_MON_DIR, AT_REMOVEDIR);
}

/* Map sizes follow from the config alone, for create and open alike. */
static __u64 sketch_value_size(const struct fb_mon_config *c)
{
	return (__u64)c->depth * sizeof(struct fb_mon_cell) << c->shift;
}

static __u64 seen_value_size(const struct fb_mon_config *c)
{
	return (__u64)(c->seen_slots + FB_SEEN_PAD_SLOTS) * sizeof(struct fb_seen_slot);
}

/* An accounting plane: its overflow sketch only with the main sketch. */
static __u64 flows_value_size(const struct fb_mon_config *c)
{
	bool sk = c->flags & FB_MON_SKETCH;

	return fb_acct_plane_size(c->acct_buckets, sk ? c->shift : 0, sk ? c->depth : 0);
}

/* Monitoring map i (of pin_names) into fds[i], not pinned yet. */
static int create_map(int *fds, int i, enum bpf_map_type type, const char *name, __u64 value_size,
		      __u32 entries, __u32 flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = flags);
	__u32 key_size = type == BPF_MAP_TYPE_RINGBUF ? 0 : sizeof(__u32);

	if (value_size > FB_MON_MAX_VALUE) {
		fb_report_err("the monitoring map %s would need %llu MiB per value (at most %llu)",
			      pin_names[i], (unsigned long long)value_size >> 20,
			      (unsigned long long)FB_MON_MAX_VALUE >> 20);
		return -1;
	}
	fds[i] = bpf_map_create(type, name, key_size, (__u32)value_size, entries, &opts);
	if (fds[i] < 0) {
		fb_report_err("cannot create the monitoring map %s (%llu bytes): %s", pin_names[i],
			      (unsigned long long)(value_size ? value_size * entries : entries),
			      strerror(errno));
		return -1;
	}
	return 0;
}

/* Kernel ticks: CLOCK_MONOTONIC_COARSE advances once per tick, so its
 * resolution is the tick (1/HZ), which bpf_jiffies64() counts. */
__u64 fb_monitor_tick_ns(void)
{
	struct timespec r;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &r) || r.tv_sec || r.tv_nsec <= 0)
		return 4000000; /* HZ=250, a common default */
	return r.tv_nsec;
}

int fb_monitor_create(const struct fb_store *f, const struct fb_mon_opts *o)
{
	struct fb_mon_config c = { 0 };
	struct timespec ts;
	char path[1024];
	int ncpu = libbpf_num_possible_cpus(), dir = -1, err = -1, i, k;
	int fds[FB_MON_NPINS];
	bool made = false;
	__u32 zero = 0;
	__u64 tick;

	if (ncpu < 1) {
		fb_report_err("cannot count CPUs: %s", strerror(-ncpu));
		return -1;
	}
	if (!o->sketch && !o->newflows && !o->acct) {
		fb_report_err("nothing to monitor");
		return -1;
	}
	c.magic = FB_MON_MAGIC;
	if (o->sketch_by & ~FB_MON_BY_ADDR || o->sketch_by == FB_MON_BY_ADDR) {
		fb_report_err("bad sketch key %#x", o->sketch_by);
		return -1;
	}
	c.flags = (o->sketch ? FB_MON_SKETCH | (o->atomic ? FB_MON_ATOMIC : 0) | o->sketch_by : 0) |
		  (o->newflows ? FB_MON_NEWFLOWS : 0) | (o->acct ? FB_MON_ACCT : 0);
	c.version = FB_MON_VERSION; /* which earlier builds refuse (monitor.h) */
	c.acct_buckets = o->acct ? fb_monitor_acct_buckets(o->max_flows) : 0;
	c.epsilon = o->epsilon;
	c.delta = o->delta;
	if (fb_monitor_geometry(o->epsilon, o->delta, &c.shift, &c.depth))
		return -1;
	c.planes = o->atomic ? 1 : ncpu;
	c.top_planes = ncpu;
	if (!(o->age >= FB_MON_MIN_AGE && o->age <= FB_MON_MAX_AGE)) {
		fb_report_err("the aging period must be %g to %g seconds, not %g", FB_MON_MIN_AGE,
			      FB_MON_MAX_AGE, o->age);
		return -1;
	}
	c.age_ns = (__u64)(o->age * 1e9 + 0.5);
	tick = fb_monitor_tick_ns();
	c.age_jiffies = (c.age_ns + tick / 2) / tick;
	if (!c.age_jiffies)
		c.age_jiffies = 1;
	c.seen_expect = o->expect;
	fb_monitor_seen_size(o->expect, &c.seen_slots, &c.seen_k);
	c.ring_bytes = o->ring_bytes;
	if (o->newflows &&
	    (c.ring_bytes < (__u32)getpagesize() || (c.ring_bytes & (c.ring_bytes - 1)))) {
		fb_report_err("the ring buffer size must be a power of 2 of at least %d bytes",
			      getpagesize());
		return -1;
	}
	if (getrandom(c.key, sizeof(c.key), 0) != sizeof(c.key)) {
		fb_report_err("getrandom: %s", strerror(errno));
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	c.created_ns = (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;

	for (i = 0; i < FB_MON_NPINS; i++)
		fds[i] = -1;
	/* Every map first: one the kernel refuses (memory) leaves the old
	 * ones pinned, which the program attach --replace keeps on failure
	 * goes on feeding (top, flows, ipfix, guard read them). */
	if (o->sketch && (create_map(fds, 1, BPF_MAP_TYPE_ARRAY, "fb_sketch", sketch_value_size(&c),
				     c.planes, BPF_F_MMAPABLE) ||
			  create_map(fds, 2, BPF_MAP_TYPE_ARRAY, "fb_top",
				     sizeof(struct fb_top_plane), c.top_planes, BPF_F_MMAPABLE) ||
			  create_map(fds, 3, BPF_MAP_TYPE_ARRAY, "fb_top_keys",
				     sizeof(struct fb_top_keys), c.top_planes, BPF_F_MMAPABLE)))
		goto out;
	if (o->newflows &&
	    (create_map(fds, 4, BPF_MAP_TYPE_ARRAY, "fb_seen", seen_value_size(&c), 1,
			BPF_F_MMAPABLE) ||
	     create_map(fds, 5, BPF_MAP_TYPE_RINGBUF, "fb_newflows", 0, c.ring_bytes, 0) ||
	     create_map(fds, 6, BPF_MAP_TYPE_PERCPU_ARRAY, "fb_mon_stats",
			sizeof(struct fb_mon_stats), 1, 0)))
		goto out;
	if (o->acct && create_map(fds, 7, BPF_MAP_TYPE_ARRAY, "fb_flows", flows_value_size(&c),
				  ncpu, BPF_F_MMAPABLE))
		goto out;
	if (create_map(fds, 0, BPF_MAP_TYPE_ARRAY, "fb_mon_config", sizeof(c), 1, 0))
		goto out;
	if (bpf_map_update_elem(fds[0], &zero, &c, BPF_ANY)) {
		fb_report_err("cannot write the monitoring config: %s", strerror(errno));
		goto out;
	}
	/* Then the old maps go: a new geometry starts from zero. */
	fb_monitor_unpin(f);
	mon_path(path, sizeof(path), f, NULL);
	if (mkdirat(f->dir_fd, FB_MON_DIR, 0700)) {
		fb_report_err("cannot create %s: %s", path, strerror(errno));
		goto out;
	}
	made = true;
	dir = fb_monitor_dir(f);
	if (dir < 0) {
		if (dir == -2)
			fb_report_err("%s vanished", path);
		goto out;
	}
	/* The config goes last: a directory with a config is complete. */
	for (i = 1; i <= FB_MON_NPINS; i++) {
		k = i % FB_MON_NPINS;
		if (fds[k] >= 0 && fb_pin_at(fds[k], dir, pin_names[k])) {
			mon_path(path, sizeof(path), f, pin_names[k]);
			fb_report_err("cannot pin %s: %s", path, strerror(errno));
			goto out;
		}
	}
	err = 0;
out:
	for (i = 0; i < FB_MON_NPINS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (dir >= 0)
		close(dir);
	if (err && made)
		fb_monitor_unpin(f);
	return err;
}

/* Open a pinned map and check its shape; mmap it if out is given. */
static int open_map(struct fb_monitor *m, const char *what, __u32 type, __u64 value_size,
		    __u32 entries, void **out, size_t *bytes, int prot)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", m->dir, what);
	fd = fb_pin_get(m->dir_fd, what);
	if (fd < 0) {
		fb_report_err("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != type ||
	    info.value_size != value_size || info.max_entries != entries) {
		fb_report_err("%s: unexpected map (type %u, value %u, entries %u)", path, info.type,
			      info.value_size, info.max_entries);
		close(fd);
		return -1;
	}
	if (out) {
		*bytes = (size_t)value_size * entries;
		*out = mmap(NULL, *bytes, prot, MAP_SHARED, fd, 0);
		if (*out == MAP_FAILED) {
			*out = NULL;
			fb_report_err("cannot mmap %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

int fb_monitor_open(const struct fb_store *f, struct fb_monitor *m)
{
	struct fb_mon_config *c = &m->cfg;
	__u32 zero = 0;

	memset(m, 0, sizeof(*m));
	m->config_fd = m->sketch_fd = m->top_fd = m->keys_fd = m->seen_fd = m->events_fd =
		m->stats_fd = m->flows_fd = -1;
	mon_path(m->dir, sizeof(m->dir), f, NULL);
	m->dir_fd = fb_monitor_dir(f);
	if (m->dir_fd < 0) {
		int rc = m->dir_fd == -2 ? 1 : -1;

		m->dir_fd = -1;
		return rc;
	}
	m->config_fd =
		open_map(m, "config", BPF_MAP_TYPE_ARRAY, sizeof(*c), 1, NULL, NULL, PROT_READ);
	if (m->config_fd < 0)
		goto fail;
	if (bpf_map_lookup_elem(m->config_fd, &zero, c)) {
		fb_report_err("cannot read %s/config: %s", m->dir, strerror(errno));
		goto fail;
	}
	if (c->magic == FB_MON_MAGIC && c->version != FB_MON_VERSION &&
	    c->version != FB_MON_VERSION_NH1 && c->version != FB_MON_VERSION_BY_ADDR) {
		fb_report_err("the monitoring maps of '%s' are of another flowbloom's layout (%u, "
			      "this one reads %u, %u and %u): detach the filter everywhere and "
			      "attach it again",
			      f->name, c->version, FB_MON_VERSION_NH1, FB_MON_VERSION_BY_ADDR,
			      FB_MON_VERSION);
		fb_monitor_close(m);
		return -3;
	}
	if (c->magic != FB_MON_MAGIC || c->shift < 2 || c->shift > FB_MON_MAX_SHIFT || !c->depth ||
	    c->depth > FB_MON_MAX_DEPTH || !c->planes || !c->top_planes ||
	    c->seen_slots <= FB_SEEN_HDR_SLOTS || !c->seen_k || c->seen_k != FB_SEEN_K ||
	    !c->age_jiffies ||
	    /* One key at most, and only for a sketch. */
	    (c->flags & FB_MON_BY_ADDR &&
	     ((c->flags & FB_MON_BY_ADDR) == FB_MON_BY_ADDR || !(c->flags & FB_MON_SKETCH))) ||
	    /* Earlier builds made layout 3 for a sketch by address only. */
	    (c->version == FB_MON_VERSION_NH1 && c->flags & FB_MON_BY_ADDR) ||
	    (c->version == FB_MON_VERSION_BY_ADDR && !(c->flags & FB_MON_BY_ADDR)) ||
	    (c->flags & FB_MON_ACCT &&
	     (c->acct_buckets < fb_monitor_acct_buckets(0) ||
	      c->acct_buckets > fb_monitor_acct_buckets(FB_ACCT_MAX_FLOWS)))) {
		fb_report_err("%s/config: bad monitoring config (magic %#x, version %u)", m->dir,
			      c->magic, c->version);
		goto fail;
	}
	fb_mon_words(c, m->kw); /* as the maps were made: loader and readers alike */
	if (c->flags & FB_MON_SKETCH) {
		m->sketch_fd = open_map(m, "sketch", BPF_MAP_TYPE_ARRAY, sketch_value_size(c),
					c->planes, (void **)&m->cells, &m->cells_bytes, PROT_READ);
		if (m->sketch_fd < 0)
			goto fail;
		m->top_fd = open_map(m, "top", BPF_MAP_TYPE_ARRAY, sizeof(struct fb_top_plane),
				     c->top_planes, (void **)&m->top, &m->top_bytes, PROT_READ);
		if (m->top_fd < 0)
			goto fail;
		m->keys_fd = open_map(m, "top_keys", BPF_MAP_TYPE_ARRAY, sizeof(struct fb_top_keys),
				      c->top_planes, (void **)&m->keys, &m->keys_bytes, PROT_READ);
		if (m->keys_fd < 0)
			goto fail;
	}
	if (c->flags & FB_MON_NEWFLOWS) {
		m->seen_fd = open_map(m, "seen", BPF_MAP_TYPE_ARRAY, seen_value_size(c), 1,
				      (void **)&m->seen, &m->seen_bytes, PROT_READ);
		if (m->seen_fd < 0)
			goto fail;
		m->events_fd = open_map(m, "newflows", BPF_MAP_TYPE_RINGBUF, 0, c->ring_bytes, NULL,
					NULL, PROT_READ);
		if (m->events_fd < 0)
			goto fail;
		m->stats_fd = open_map(m, "mstats", BPF_MAP_TYPE_PERCPU_ARRAY,
				       sizeof(struct fb_mon_stats), 1, NULL, NULL, PROT_READ);
		if (m->stats_fd < 0)
			goto fail;
	}
	if (c->flags & FB_MON_ACCT) {
		/* Read-write: the reader ends flows in the table (flowacct.h). */
		m->plane_bytes = flows_value_size(c);
		m->flows_fd =
			open_map(m, "flows", BPF_MAP_TYPE_ARRAY, m->plane_bytes, c->top_planes,
				 &m->flows, &m->flows_bytes, PROT_READ | PROT_WRITE);
		if (m->flows_fd < 0)
			goto fail;
	}
	return 0;
fail:
	fb_monitor_close(m);
	return -1;
}

void fb_monitor_close(struct fb_monitor *m)
{
	int *fds[] = { &m->config_fd, &m->sketch_fd, &m->top_fd,   &m->keys_fd, &m->seen_fd,
		       &m->events_fd, &m->stats_fd,  &m->flows_fd, &m->dir_fd };
	size_t i;

	if (m->cells)
		munmap(m->cells, m->cells_bytes);
	if (m->top)
		munmap(m->top, m->top_bytes);
	if (m->keys)
		munmap(m->keys, m->keys_bytes);
	if (m->seen)
		munmap(m->seen, m->seen_bytes);
	if (m->flows)
		munmap(m->flows, m->flows_bytes);
	m->flows = NULL;
	m->cells = NULL;
	m->top = NULL;
	m->keys = NULL;
	m->seen = NULL;
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

bool fb_monitor_remade(const struct fb_store *f, const struct fb_monitor *m)
{
	int dir = fb_pin_open_dir(f->dir_fd, FB_MON_DIR), fd = -1;
	bool remade;

	if (dir >= 0)
		fd = fb_pin_get(dir, "config");
	/* Missing: remade (or gone); another failure cannot tell. */
	remade = fd >= 0 ? fb_map_id(fd) != fb_map_id(m->config_fd) : errno == ENOENT;
	if (fd >= 0)
		close(fd);
	if (dir >= 0)
		close(dir);
	return remade;
}

const char *fb_monitor_sketch_by(const struct fb_monitor *m)
{
	return m->cfg.flags & FB_MON_BY_SRC ? "src" : m->cfg.flags & FB_MON_BY_DST ? "dst" : "flow";
}

void fb_monitor_sketch_key(const struct fb_monitor *m, const struct fb_key *key, struct fb_key *out)
{
	if (m->cfg.flags & FB_MON_BY_ADDR)
		fb_mon_sketch_key(key, m->cfg.flags, out);
	else
		*out = *key;
}

void fb_monitor_describe(const struct fb_monitor *m, char *buf, size_t len)
{
	const struct fb_mon_config *c = &m->cfg;
	size_t n = 0;

	buf[0] = 0;
	if (c->flags & FB_MON_SKETCH)
		n += snprintf(buf + n, len - n,
			      "sketch %u x %u (eps %.2g, delta %.2g)%s, top talkers", c->depth,
			      1U << c->shift, fb_monitor_epsilon(m), fb_monitor_delta(m),
			      c->flags & FB_MON_BY_SRC	 ? " by source address"
			      : c->flags & FB_MON_BY_DST ? " by destination address"
							 : "");
	if (n < len && (c->flags & FB_MON_NEWFLOWS))
		n += snprintf(buf + n, len - n,
			      "%snew flows (age %g s, %llu flows per period, %u KiB ring buffer)",
			      n ? "; " : "", c->age_ns / 1e9, (unsigned long long)c->seen_expect,
			      c->ring_bytes >> 10);
	if (n < len && (c->flags & FB_MON_ACCT)) {
		__u64 b = flows_value_size(c);

		/* Small tables in KiB: "0.0 MiB" said nothing. */
		snprintf(buf + n, len - n, "%saccounting (%u flows per CPU, %.1f %s per CPU)",
			 n ? "; " : "", c->acct_buckets * FB_ACCT_WAYS,
			 b < 1048576 ? b / 1024.0 : b / 1048576.0, b < 1048576 ? "KiB" : "MiB");
	}
}
