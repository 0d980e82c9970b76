// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Captures as Ethernet frames (see pcapfile.h). */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "inputfile.h"
#include "report.h"
#include "rules/pcapfile.h"

#define ETH_HLEN 14
#define SLL_HLEN 16
#define SLL2_HLEN 20

struct fb_pcap {
	pcap_t *pc;
	int dlt;
	int truncated;		    /* the last record: shorter than the frame on the wire */
	unsigned int overlong;	    /* the last record's captured length, if over its length */
	unsigned int wire;	    /* the last record's length on the wire */
	unsigned long long records; /* read so far */
	char *path;		    /* for its errors, whole */
};

struct fb_pcap *fb_pcap_open(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct fb_pcap *p = calloc(1, sizeof(*p));
	FILE *fp;
	int fd;

	if (!p)
		return NULL;
	/* Not libpcap's fopen: never through another user's link or FIFO.
	 * "-" is stdin (a copy: closing it leaves descriptor 0 taken). A
	 * closed stdin is held write-only (main.c): not to be read. */
	if (!strcmp(path, "-")) {
		int fl = fcntl(STDIN_FILENO, F_GETFL);

		path = "<stdin>";
		if (fl >= 0 && (fl & O_ACCMODE) == O_WRONLY)
			errno = EBADF;
		fd = fl < 0 || (fl & O_ACCMODE) == O_WRONLY ? -1 : dup(STDIN_FILENO);
		if (fd < 0)
			snprintf(errbuf, sizeof(errbuf), "%s", strerror(errno));
	} else {
		fd = fb_input_open(path, false, errbuf, sizeof(errbuf));
	}
	if (fd < 0 || !(fp = fdopen(fd, "rb"))) {
		fb_report_err("%s: %s", path, fd < 0 ? errbuf : strerror(errno));
		if (fd >= 0)
			close(fd);
		free(p);
		return NULL;
	}
	p->pc = pcap_fopen_offline(fp, errbuf); /* it owns fp, unless it fails */
	if (!p->pc) {
		fclose(fp);
		fb_report_err("%s: %s", path, errbuf);
		free(p);
		return NULL;
	}
	p->path = strdup(path);
	if (!p->path) {
		fb_report_err("%s: %s", path, strerror(errno));
		fb_pcap_close(p);
		return NULL;
	}
	p->dlt = pcap_datalink(p->pc);
	if (p->dlt != DLT_EN10MB && p->dlt != DLT_RAW && p->dlt != DLT_IPV4 && p->dlt != DLT_IPV6 &&
	    p->dlt != DLT_LINUX_SLL && p->dlt != DLT_LINUX_SLL2) {
		const char *name = pcap_datalink_val_to_name(p->dlt);

		fb_report_err(
			"%s: link type %s not supported (Ethernet, raw IP, Linux cooked v1 and v2)",
			path, name ? name : "?");
		fb_pcap_close(p);
		return NULL;
	}
	return p;
}

int fb_pcap_next(struct fb_pcap *p, unsigned char *out, size_t cap, size_t *len, int *cut)
{
	struct pcap_pkthdr *ph;
	const unsigned char *pkt;
	size_t n, off = 0;
	unsigned int proto = 0;
	int rc = pcap_next_ex(p->pc, &ph, &pkt);

	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		/* The record it could not read: the place to look. */
		fb_report_err("%s: record %llu: %s", p->path, p->records + 1, pcap_geterr(p->pc));
		return -1;
	}
	p->records++;
	n = ph->caplen;
	*cut = 0;
	p->truncated = ph->caplen < ph->len;
	/* More bytes captured than the frame had on the wire: no capture
	 * writes that (libpcap reads it; tcpdump prints "[Invalid header]"
	 * for it). The bytes past its length were never on the wire: the
	 * device saw the frame's length, so that is what is replayed. */
	p->overlong = ph->caplen > ph->len ? ph->caplen : 0;
	p->wire = ph->len;
	if (p->overlong)
		n = ph->len;
	if (p->dlt != DLT_EN10MB) {
		/* Linux cooked headers carry the EtherType the kernel saw
		 * (VLAN tags put back by libpcap after it): SLL v1 in its
		 * last 2 of 16 bytes, SLL2 (`tcpdump -i any` since libpcap
		 * 1.10) in its first 2 of 20. A record too short for its
		 * header is given back empty, as a runt; so is an empty raw
		 * IP record. Raw IP gets the EtherType its link type says (RAW:
		 * IPv6 for version 6, else IPv4), as the sender labelled it:
		 * a record that is no valid IP is malformed, not non-IP. */
		if (p->dlt == DLT_LINUX_SLL) {
			if (n < SLL_HLEN) {
				*len = 0;
				return 1;
			}
			proto = (pkt[14] << 8) | pkt[15];
			pkt += SLL_HLEN;
			n -= SLL_HLEN;
		} else if (p->dlt == DLT_LINUX_SLL2) {
			if (n < SLL2_HLEN) {
				*len = 0;
				return 1;
			}
			proto = (pkt[0] << 8) | pkt[1];
			pkt += SLL2_HLEN;
			n -= SLL2_HLEN;
		} else if (!n) {
			*len = 0;
			return 1;
		} else {
			proto = p->dlt == DLT_IPV6 || (p->dlt == DLT_RAW && (pkt[0] >> 4) == 6)
					? 0x86dd
					: 0x0800;
		}
		/* Locally administered addresses: no real station. */
		memset(out, 0, 12);
		out[0] = 0x02;
		out[12] = proto >> 8;
		out[13] = proto & 0xff;
		off = ETH_HLEN;
	}
	if (n > cap - off) {
		n = cap - off;
		*cut = 1;
	}
	memcpy(out + off, pkt, n);
	*len = n + off;
	return 1;
}

int fb_pcap_truncated(const struct fb_pcap *p)
{
	return p->truncated;
}

int fb_pcap_overlong(const struct fb_pcap *p, unsigned int *caplen, unsigned int *len)
{
	*caplen = p->overlong;
	*len = p->wire;
	return p->overlong != 0;
}

void fb_pcap_close(struct fb_pcap *p)
{
	if (!p)
		return;
	if (p->pc)
		pcap_close(p->pc);
	free(p->path);
	free(p);
}
