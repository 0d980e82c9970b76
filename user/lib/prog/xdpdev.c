// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* XDP programs on devices: query, attach flowbloom's, detach it (xdpdev.h). */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "report.h"
#include "util.h"
#include "prog/xdpdev.h"

/* The name flowbloom's XDP program has (SEC("xdp") int flowbloom(...)). */
#define FB_PROG_NAME "flowbloom"

static const __u32 mode_flags[] = { XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE };

const char *fb_xdp_mode_name(enum fb_xdp_mode mode)
{
	return mode == FB_XDP_GENERIC ? "generic" : "native";
}

/* A refusal for lack of rights, said as such (EPERM/EACCES). */
static void report_errno(const char *what, const char *dev, int err)
{
	if (err == EPERM || err == EACCES)
		fb_report_err("cannot %s %s: %s (needs root, or CAP_NET_ADMIN and CAP_BPF)", what,
			      dev, strerror(err));
	else
		fb_report_err("cannot %s %s: %s", what, dev, strerror(err));
}

/* DEV's MTU in this namespace, or 0. */
static int mtu_of(const char *dev)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = 0;

	if (fd < 0)
		return 0;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (!ioctl(fd, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	close(fd);
	return mtu;
}

/* Attaching flowbloom's program to DEV in mode failed with -err: why, in
 * the operator's terms where the kernel's errno is cryptic. ERANGE from
 * native mode, the multi-buffer program tried too (put()): the driver
 * takes frames of one page only, and the MTU (a veth's peer's counts too)
 * allows larger ones. */
static void report_attach(const char *dev, enum fb_xdp_mode mode, int err)
{
	if (err == EOPNOTSUPP && mode == FB_XDP_NATIVE)
		fb_report_err("%s has no native XDP support: use --mode generic", dev);
	else if (err == ERANGE && mode == FB_XDP_NATIVE)
		fb_report_err(
			"cannot attach to %s in native mode: its driver takes no multi-buffer "
			"XDP program, so frames of one page only, an MTU up to about 3,500 "
			"bytes (%s's is %d; for a veth, its peer's counts too): lower the MTU, "
			"or use --mode generic",
			dev, dev, mtu_of(dev));
	else
		report_errno("attach to", dev, err);
}

static int ifindex_of(const char *dev)
{
	unsigned int i = if_nametoindex(dev);

	if (!i && fb_netns_entered)
		fb_report_err("no device '%s' in network namespace '%s'", dev, fb_netns_entered);
	else if (!i)
		fb_report_err("no device '%s' (one in a named network namespace: flowbloom -n "
			      "NETNS ...)",
			      dev);
	return (int)i;
}

static void prog_name_of(int fd, char *name, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);

	name[0] = 0;
	if (!bpf_obj_get_info_by_fd(fd, &info, &ilen))
		snprintf(name, len, "%s", info.name);
}

static __u32 prog_id_of(int fd)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &ilen) ? 0 : info.id;
}

static void prog_name(__u32 id, char *name, size_t len)
{
	int fd = bpf_prog_get_fd_by_id(id);

	name[0] = 0;
	if (fd < 0)
		return;
	prog_name_of(fd, name, len);
	close(fd);
}

int fb_xdp_query(const char *dev, struct fb_xdp_dev *out)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int ifindex = ifindex_of(dev), err;

	memset(out, 0, sizeof(*out));
	if (!ifindex)
		return -1;
	out->ifindex = ifindex;
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err) {
		report_errno("query", dev, -err);
		return -1;
	}
	if (q.drv_prog_id) {
		out->prog_id = q.drv_prog_id;
		out->mode = FB_XDP_NATIVE;
	} else if (q.skb_prog_id) {
		out->prog_id = q.skb_prog_id;
		out->mode = FB_XDP_GENERIC;
	} else if (q.prog_id) {
		out->prog_id = q.prog_id; /* hardware offload: never ours */
		out->mode = FB_XDP_NATIVE;
	}
	if (out->prog_id) {
		prog_name(out->prog_id, out->name, sizeof(out->name));
		out->flowbloom = !strcmp(out->name, FB_PROG_NAME);
	}
	return 0;
}

int fb_xdp_check_link(const char *dev)
{
	int type = fb_link_type(dev);
	char what[96];

	if (type < 0) {
		report_errno("ask the link type of", dev, errno);
		return -1;
	}
	if (fb_link_ethernet(type))
		return 0;
	fb_link_describe(type, what, sizeof(what));
	fb_report_err("cannot attach to %s (%s): its packets reach XDP without an Ethernet "
		      "header, so flowbloom would pass them all as non-IP, whatever the rules; "
		      "attach to the Ethernet device the traffic arrives on (for a tunnel or PPP "
		      "link, the one carrying its outer packets)",
		      dev, what);
	return -1;
}

/* DEV runs a program already: which, and what to do. `flowbloom detach`
 * removes only flowbloom's, so for another's it says so. */
static void report_taken(const char *dev)
{
	struct fb_xdp_dev d;

	if (fb_xdp_query(dev, &d) || !d.prog_id)
		fb_report_err("%s already has an XDP program: detach it first", dev);
	else if (d.flowbloom)
		fb_report_err("%s already runs flowbloom (program %u, %s): detach it first, or "
			      "attach --replace",
			      dev, d.prog_id, fb_xdp_mode_name(d.mode));
	else
		fb_report_err("%s already runs XDP program %u ('%s', %s), not flowbloom's: one "
			      "program per device (to share it, load flowbloom's object with "
			      "xdp-loader)",
			      dev, d.prog_id, d.name, fb_xdp_mode_name(d.mode));
}

/* prog_fd (-1: none) on ifindex in mode in place of program old_id, in one
 * step: XDP_FLAGS_REPLACE with the program seen, so no packet goes without
 * one and a program another tool put there since is never replaced (the
 * kernel refuses: EEXIST). 0, or the kernel's error (negative). */
static int swap_raw(int ifindex, enum fb_xdp_mode mode, __u32 old_id, int prog_fd)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o);
	int old = bpf_prog_get_fd_by_id(old_id), err;

	if (old < 0)
		return errno == ENOENT ? -EEXIST : -errno;
	o.old_prog_fd = old;
	err = bpf_xdp_attach(ifindex, prog_fd, mode_flags[mode] | XDP_FLAGS_REPLACE, &o);
	close(old);
	return err;
}

/*
 * Load flowbloom's program for f with lo (multi-buffer if frags) and put
 * it on ifindex in mode: in place of old_id, or where none runs
 * (UPDATE_IF_NOEXIST: never silently replace someone else's program).
 * 0, the kernel's error (negative), or 1 if the load failed or the filter
 * is gone (reported).
 *
 * The program is loaded outside the filter's lock (the verifier takes its
 * time) and put there under it, shared (unless the caller holds it): a
 * `destroy` (exclusive) either ran first, and the lock's check finds the
 * name gone, or runs after and finds the program attached, and refuses.
 * Without it, a destroy between the open and the attach removed the
 * filter and the program was attached all the same: both said done, the
 * device filtering by rules nobody could change any more.
 */
static int load_put(struct fb_store *f, const struct fb_load_opts *lo, bool frags, int ifindex,
		    enum fb_xdp_mode mode, __u32 old_id, __u32 *id)
{
	struct fb_load_opts o = *lo;
	struct flowbloom_bpf *skel;
	bool mine = !f->locked;
	char name[BPF_OBJ_NAME_LEN];
	int err;

	o.frags = frags;
	skel = fb_load(f, &o);
	if (!skel)
		return 1;
	/* detach and status know flowbloom's program by its name, which
	 * libbpf leaves out when its probe of the kernel's support failed
	 * (a transient ENOMEM): such a program, once attached, is nobody's. */
	prog_name_of(fb_load_prog_fd(skel), name, sizeof(name));
	if (strcmp(name, FB_PROG_NAME)) {
		fb_report_err("cannot load the XDP program: the kernel did not keep its name '%s' "
			      "(libbpf's probe of program names failed); try again",
			      FB_PROG_NAME);
		fb_load_close(skel);
		return 1;
	}
	if (mine && fb_store_flock(f, LOCK_SH)) {
		fb_load_close(skel);
		return 1;
	}
	if (old_id)
		err = swap_raw(ifindex, mode, old_id, fb_load_prog_fd(skel));
	else
		err = bpf_xdp_attach(ifindex, fb_load_prog_fd(skel),
				     mode_flags[mode] | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (mine)
		fb_store_unlock(f);
	if (!err)
		*id = prog_id_of(fb_load_prog_fd(skel));
	/* The attachment holds the program; our handle can go. */
	fb_load_close(skel);
	return err;
}

/* load_put(), and again multi-buffer when native mode refuses the frame
 * size the MTU allows (ERANGE: above a page; the multi-buffer program
 * takes any). *multibuf: which one runs. */
static int put(struct fb_store *f, const struct fb_load_opts *lo, int ifindex,
	       enum fb_xdp_mode mode, __u32 old_id, bool *multibuf, __u32 *id)
{
	__u32 dummy;
	int err;

	if (!id)
		id = &dummy;
	*id = 0;
	err = load_put(f, lo, false, ifindex, mode, old_id, id);
	*multibuf = false;
	if (err == -ERANGE && mode == FB_XDP_NATIVE) {
		err = load_put(f, lo, true, ifindex, mode, old_id, id);
		*multibuf = !err;
	}
	return err;
}

int fb_xdp_attach(struct fb_store *f, const char *dev, enum fb_xdp_mode mode,
		  const struct fb_load_opts *lo, bool *multibuf, __u32 *prog_id)
{
	int ifindex = ifindex_of(dev), err;

	if (!ifindex || fb_xdp_check_link(dev))
		return -1;
	err = put(f, lo, ifindex, mode, 0, multibuf, prog_id);
	if (err == -EEXIST || err == -EBUSY)
		report_taken(dev);
	else if (err < 0)
		report_attach(dev, mode, -err);
	return err ? -1 : 0;
}

/* A swap's refusal: the program seen is gone (EEXIST), or the kernel's. */
static void report_swap(const char *dev, enum fb_xdp_mode mode, __u32 old_id, int err,
			const char *doing)
{
	if (err == -EEXIST)
		fb_report_err("the XDP program on %s changed while %s (program %u is gone); not %s",
			      dev, doing, old_id, doing);
	else if (!strcmp(doing, "detaching"))
		report_errno("detach from", dev, -err);
	else
		report_attach(dev, mode, -err);
}

int fb_xdp_replace(struct fb_store *f, const char *dev, enum fb_xdp_mode mode, __u32 old_id,
		   const struct fb_load_opts *lo, bool *multibuf, __u32 *prog_id)
{
	int ifindex = ifindex_of(dev), err;

	if (!ifindex)
		return -1;
	err = put(f, lo, ifindex, mode, old_id, multibuf, prog_id);
	if (err < 0)
		report_swap(dev, mode, old_id, err, "re-attaching");
	return err ? -1 : 0;
}

int fb_xdp_detach(const char *dev)
{
	struct fb_xdp_dev d;
	int err;

	if (fb_xdp_query(dev, &d))
		return -1;
	if (!d.prog_id) {
		fb_report_err("%s has no XDP program", dev);
		return -1;
	}
	if (!d.flowbloom) {
		fb_report_err(
			"the XDP program on %s (id %u, '%s') is not flowbloom's; not detaching",
			dev, d.prog_id, d.name);
		return -1;
	}
	/* Exactly the program seen: never one another tool put there since. */
	err = swap_raw((int)d.ifindex, d.mode, d.prog_id, -1);
	if (err)
		report_swap(dev, d.mode, d.prog_id, err, "detaching");
	return err ? -1 : 0;
}

int fb_xdp_put_back(const char *dev, enum fb_xdp_mode mode, __u32 cur_id, int prog_fd)
{
	int ifindex = ifindex_of(dev), err;

	if (!ifindex)
		return -1;
	err = swap_raw(ifindex, mode, cur_id, prog_fd);
	if (err)
		report_swap(dev, mode, cur_id, err, prog_fd < 0 ? "detaching" : "restoring");
	return err ? -1 : 0;
}
