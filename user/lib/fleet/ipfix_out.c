// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The IPFIX exporting process (see ipfix_out.h): the record queue, the
 * UDP and TCP sockets (non-blocking, pumped by the caller), sessions,
 * template schedule, failure and recovery, and what was lost.
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "fleet/ipfix_out.h"
#include "report.h"

#define RETRY_S 1.0	      /* between connection attempts and UDP probes */
#define USER_TIMEOUT_MS 30000 /* TCP: unacknowledged data this long ends a connection */
#define FIFO_MAX 4096	      /* TCP messages written and not yet acknowledged, tracked */
#define ADDRS_MAX 8	      /* of the collector's name, tried in turn */
#define TRIAL_S 1.0	      /* TCP: a new connection lives this long before records go */
#define CONNECT_S 3.0	      /* TCP: a silent address's wait, when there is another */

struct qrec {
	__u8 kind; /* enum fb_ipfix_kind */
	union {
		struct fb_ipfix_newflow nf;
		struct fb_ipfix_estimate est;
		struct fb_ipfix_flow fl;
		struct fb_ipfix_mitigation mit;
	} r;
};

/* A TCP message written: the stream offset of its end, its records. */
struct written {
	__u64 end;
	unsigned records;
};

enum state { ST_IDLE, ST_CONNECTING, ST_UP };

struct fb_ipfix_out {
	struct fb_ipfix_out_opts o;
	struct fb_ipfix *enc;
	/* The collector's addresses, in getaddrinfo's order (RFC 6724): a
	 * failure moves to the next, at once; after the last, a second's
	 * wait and the first again. cur: the one in use. */
	struct sockaddr_storage addrs[ADDRS_MAX];
	socklen_t alens[ADDRS_MAX];
	unsigned naddr, cur;
	int fd;
	enum state st;
	bool down;	   /* in an outage (reported once, until it ends) */
	bool dropping;	   /* dropping records (reported once, until the queue drains) */
	unsigned events;   /* seen outside a pump, returned by the next */
	double retry_at;   /* TCP: next connection attempt; UDP: next probe */
	double connect_at; /* TCP: when the connection attempt began */
	double probed_at;  /* UDP: when the last probe went, 0: none since the failure */
	double session_at, next_tpl;
	double trial_end; /* TCP: until then the connection carries templates alone */
	bool tpl_due;
	bool after_tpl; /* the last message was templates: records next */
	bool restart;	/* UDP: a new socket and session before the next send */
	bool withdrawn; /* TCP: the templates are withdrawn (the session ends) */
	/* The queue: a ring of cap records from head. */
	struct qrec *q;
	size_t cap, head, n;
	/* The message being sent: out_len bytes, out_off of them written; its
	 * records are the first out_recs of the queue. */
	__u8 *out;
	size_t out_len, out_off;
	unsigned out_recs, out_kinds[FB_IPFIX_KINDS];
	__u64 inflight; /* UDP: records sent since the last clean check */
	__u64 written;	/* TCP: bytes written on this connection */
	struct written fifo[FIFO_MAX];
	size_t fhead, fn;
	struct fb_ipfix_out_stats s;
	char err[256];
};

static int sock_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return errno;
	return err;
}

/* TCP: what the collector sent, read and dropped (RFC 7011 has it send
 * nothing; a proxy or a wrong service might). Data left unread makes
 * close() reset the connection rather than end it. Bounded: a collector
 * that sends without end takes no more than this of a pump. -1 and errno
 * if the connection failed, 0 at its end, 1 if it is open. */
static int drain(int fd)
{
	char junk[4096];
	ssize_t n = 1;
	int i;

	for (i = 0; i < 64 && n > 0; i++)
		n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 1;
	return n > 0 ? 1 : (int)n;
}

static void close_fd(struct fb_ipfix_out *x)
{
	if (x->fd >= 0) {
		if (x->o.tcp)
			drain(x->fd);
		close(x->fd);
	}
	x->fd = -1;
}

/* A socket to the collector: non-blocking; connect started (TCP) or done
 * (UDP: a connected socket hears ICMP errors). 0, or an errno. */
static int open_socket(struct fb_ipfix_out *x)
{
	int one = 1, tmo = USER_TIMEOUT_MS, fd;

	close_fd(x);
	fd = socket(x->addrs[x->cur].ss_family,
		    (x->o.tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	x->fd = fd;
	if (x->o.tcp) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &tmo, sizeof(tmo));
	}
	if (connect(fd, (struct sockaddr *)&x->addrs[x->cur], x->alens[x->cur]) &&
	    errno != EINPROGRESS)
		return errno;
	return 0;
}

/* UDP: messages that fit the path MTU the kernel knows for the collector
 * (its route's, or one an ICMP "too big" taught it) less the IP and UDP
 * headers, so that none is fragmented (RFC 7011 section 10.3.3): a
 * tunnel's MTU (WireGuard's 1420, IPv6's 1280) is often below Ethernet's. */
static void udp_fit(struct fb_ipfix_out *x)
{
	bool v6 = x->addrs[x->cur].ss_family == AF_INET6;
	socklen_t len = sizeof(int);
	size_t max = FB_IPFIX_MSG_UDP;
	int mtu = 0, hdr = (v6 ? 40 : 20) + 8;

	if (!getsockopt(x->fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_MTU : IP_MTU, &mtu,
			&len) &&
	    mtu > hdr && (size_t)(mtu - hdr) < max)
		max = (size_t)(mtu - hdr);
	fb_ipfix_set_msg_max(x->enc, max);
}

/* A new transport session: sequence numbers from 0, templates first, and
 * templates again early in its first minute (UDP). */
static int new_session(struct fb_ipfix_out *x, double now)
{
	if (!x->o.tcp)
		udp_fit(x);
	if (fb_ipfix_session(x->enc)) {
		fb_report_err("ipfix: %s", fb_ipfix_error(x->enc));
		return -1;
	}
	x->out_len = x->out_off = 0;
	x->out_recs = 0;
	x->tpl_due = true;
	x->session_at = now;
	x->next_tpl = now + 1;
	x->written = 0;
	x->fn = 0;
	x->withdrawn = false;
	x->inflight = 0;
	x->s.sessions++;
	return 0;
}

/* After the templates went at `now`: 1, 2, 4, ... 32 s into the session,
 * then every refresh. */
static void schedule_templates(struct fb_ipfix_out *x, double now)
{
	double age = now - x->session_at, next = 1;

	while (next <= age && next < 32)
		next *= 2;
	if (next <= age || next - age > x->o.refresh)
		x->next_tpl = now + x->o.refresh;
	else
		x->next_tpl = x->session_at + next;
}

static void failed(struct fb_ipfix_out *x, const char *what, int err, double now)
{
	size_t i;

	snprintf(x->err, sizeof(x->err), "%s: %s", what, strerror(err));
	x->s.send_errors++;
	if (!x->down)
		x->events |= FB_IPFIX_EV_DOWN;
	x->down = true;
	/* The message in hand was not (wholly) sent: its records stay
	 * queued, for the next session. */
	x->out_len = x->out_off = 0;
	x->out_recs = 0;
	/* What went out and may never have arrived. */
	x->s.unconfirmed += x->inflight;
	x->inflight = 0;
	for (i = 0; i < x->fn; i++)
		x->s.unconfirmed += x->fifo[(x->fhead + i) % FIFO_MAX].records;
	x->fn = 0;
	if (x->o.tcp) {
		close_fd(x);
		x->st = ST_IDLE;
	} else {
		x->restart = true;
	}
	x->cur = (x->cur + 1) % x->naddr;
	x->retry_at = x->cur ? now : now + RETRY_S;
	x->probed_at = 0;
}

static struct qrec *qat(struct fb_ipfix_out *x, size_t i)
{
	return &x->q[(x->head + i) % x->cap];
}

static int put(struct fb_ipfix *enc, const struct qrec *q)
{
	switch (q->kind) {
	case FB_IPFIX_NEWFLOW:
		return fb_ipfix_put_newflow(enc, &q->r.nf);
	case FB_IPFIX_ESTIMATE:
		return fb_ipfix_put_estimate(enc, &q->r.est);
	case FB_IPFIX_MITIGATION:
		return fb_ipfix_put_mitigation(enc, &q->r.mit);
	default:
		return fb_ipfix_put_flow(enc, &q->r.fl);
	}
}

/* The message just built is in hand. */
static int hold(struct fb_ipfix_out *x, unsigned want)
{
	const __u8 *m;
	size_t len;
	unsigned recs;

	if (fb_ipfix_take(x->enc, &m, &len, &recs) || recs != want) {
		fb_report_err("ipfix: %s", fb_ipfix_error(x->enc));
		return -1;
	}
	memcpy(x->out, m, len);
	x->out_len = len;
	x->out_off = 0;
	x->out_recs = recs;
	return len ? 1 : 0;
}

/* The next message: the templates, when due (fixbuf gives them a message
 * of their own), else as many queued records as fit. 1 ready, 0 nothing
 * to send, -1 error. */
static int encode(struct fb_ipfix_out *x, double now, bool templates_only)
{
	bool every = !x->o.tcp && x->o.refresh == 0 && x->n && !x->after_tpl;
	size_t i;
	int r;

	memset(x->out_kinds, 0, sizeof(x->out_kinds));
	if (x->tpl_due || templates_only || every) {
		if (fb_ipfix_put_templates(x->enc)) {
			fb_report_err("ipfix: %s", fb_ipfix_error(x->enc));
			return -1;
		}
		x->tpl_due = false;
		x->after_tpl = true;
		if (!x->o.tcp)
			schedule_templates(x, now);
		return hold(x, 0);
	}
	x->after_tpl = false;
	for (i = 0; i < x->n; i++) {
		r = put(x->enc, qat(x, i));
		if (r < 0) {
			fb_report_err("ipfix: %s", fb_ipfix_error(x->enc));
			return -1;
		}
		if (r)
			break; /* full: the rest go in the next message */
		x->out_kinds[qat(x, i)->kind]++;
	}
	return hold(x, i);
}

/* The message in hand is out: its records leave the queue. */
static void sent(struct fb_ipfix_out *x)
{
	int k;

	for (k = 0; k < FB_IPFIX_KINDS; k++)
		x->s.sent[k] += x->out_kinds[k];
	x->head = (x->head + x->out_recs) % x->cap;
	x->n -= x->out_recs;
	x->s.messages++;
	if (x->o.tcp) {
		if (x->fn == FIFO_MAX) { /* merge the oldest two */
			struct written *a = &x->fifo[x->fhead];

			x->fhead = (x->fhead + 1) % FIFO_MAX;
			x->fn--;
			x->fifo[x->fhead].records += a->records;
		}
		x->fifo[(x->fhead + x->fn++) % FIFO_MAX] =
			(struct written){ x->written, x->out_recs };
	} else {
		x->inflight += x->out_recs;
	}
	x->out_len = x->out_off = 0;
	x->out_recs = 0;
	if (x->dropping && x->n < x->cap / 2)
		x->dropping = false;
}

/* Send what can go now; false if the socket failed. */
static int send_all(struct fb_ipfix_out *x, double now)
{
	ssize_t n;
	int r;

	for (;;) {
		if (!x->out_len) {
			if (now < x->trial_end && !x->tpl_due)
				return 0; /* records wait for the trial's end */
			r = encode(x, now, false);
			if (r <= 0)
				return r;
		}
		n = send(x->fd, x->out + x->out_off, x->out_len - x->out_off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ||
			    errno == EINTR)
				return 0; /* full: later */
			failed(x, "send", errno, now);
			return 0;
		}
		x->out_off += n;
		x->written += n;
		if (x->out_off == x->out_len)
			sent(x);
	}
}

/* TCP: the messages the collector acknowledged are delivered. */
static void acked(struct fb_ipfix_out *x)
{
	int outq = 0;
	__u64 upto;

	if (ioctl(x->fd, SIOCOUTQ, &outq) || outq < 0)
		return;
	upto = x->written - (__u64)outq;
	while (x->fn && x->fifo[x->fhead].end <= upto) {
		x->fhead = (x->fhead + 1) % FIFO_MAX;
		x->fn--;
	}
}

static int pump_tcp(struct fb_ipfix_out *x, double now)
{
	struct pollfd p;
	int err, r;

	if (x->st == ST_IDLE) {
		if (now < x->retry_at)
			return 0;
		err = open_socket(x);
		if (err) {
			failed(x, "connect", err, now);
			return 0;
		}
		x->st = ST_CONNECTING;
		x->connect_at = now;
	}
	p.fd = x->fd;
	if (x->st == ST_CONNECTING) {
		p.events = POLLOUT;
		if (poll(&p, 1, 0) <= 0) {
			/* An address that does not answer (a firewall that
			 * drops, a full listen queue) would hold the next
			 * until the kernel gives up (TCP_USER_TIMEOUT, 30 s),
			 * at every reconnection. */
			if (x->naddr > 1 && now - x->connect_at >= CONNECT_S)
				failed(x, "connect", ETIMEDOUT, now);
			return 0;
		}
		err = sock_error(x->fd);
		if (err) {
			failed(x, "connect", err, now);
			return 0;
		}
		x->st = ST_UP;
		if (new_session(x, now))
			return -1;
		/* A collector (or a proxy in front of one with no backend)
		 * may accept and reset at once, after its TCP acknowledged
		 * what came first: records sent then would be lost and
		 * counted delivered, and each second would report an outage
		 * and a recovery. Until the connection has lived a while,
		 * it carries the templates alone. */
		x->trial_end = now + TRIAL_S;
	}
	/* A collector sends nothing: readable means closed or reset, or
	 * bytes to drop. */
	p.events = POLLIN | POLLRDHUP;
	if (poll(&p, 1, 0) > 0) {
		r = drain(x->fd);
		if (r <= 0 || (p.revents & (POLLERR | POLLHUP | POLLRDHUP))) {
			err = r < 0 ? errno : sock_error(x->fd);
			/* Delivered before the close: what it acknowledged. */
			acked(x);
			failed(x, "the collector closed the connection", err ? err : ECONNRESET,
			       now);
			return 0;
		}
	}
	acked(x);
	if (x->trial_end && now >= x->trial_end) {
		x->trial_end = 0;
		if (x->down)
			x->events |= FB_IPFIX_EV_UP;
		x->down = false;
	}
	return send_all(x, now);
}

static int pump_udp(struct fb_ipfix_out *x, double now)
{
	int err = sock_error(x->fd), r;

	if (err)
		failed(x, "send", err, now);
	if (x->restart) {
		/* After a failure the next session starts at once, on a new
		 * socket (a new source port: a new transport session): its
		 * templates are the probes, its records wait until one is not
		 * refused. */
		err = open_socket(x);
		if (err) {
			snprintf(x->err, sizeof(x->err), "socket: %s", strerror(err));
			x->cur = (x->cur + 1) % x->naddr;
			return 0;
		}
		if (new_session(x, now))
			return -1;
		x->restart = false;
	} else if (x->down && x->probed_at && now - x->probed_at >= 0.05) {
		/* A probe went and no ICMP error came back. */
		x->events |= FB_IPFIX_EV_UP;
		x->down = false;
	} else {
		/* Nothing came back for what went before. */
		x->inflight = 0;
	}
	if (x->down) {
		if (now < x->retry_at)
			return 0;
		x->retry_at = now + RETRY_S;
		r = encode(x, now, true);
		if (r < 0)
			return -1;
		if (send(x->fd, x->out, x->out_len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			x->probed_at = 0;
		else
			x->probed_at = now;
		x->out_len = 0;
		x->out_recs = 0;
		return 0;
	}
	/* Refresh 0: templates go before every message of records
	 * (encode()), alone only at a session's start. */
	if (now >= x->next_tpl && x->o.refresh > 0)
		x->tpl_due = true;
	return send_all(x, now);
}

int fb_ipfix_out_pump(struct fb_ipfix_out *x, double now)
{
	unsigned ev;
	int r = x->o.tcp ? pump_tcp(x, now) : pump_udp(x, now);

	if (r < 0)
		return -1;
	ev = x->events;
	x->events = 0;
	return (int)ev;
}

static int enqueue(struct fb_ipfix_out *x, __u8 kind, const void *r, size_t len)
{
	struct qrec *q;

	if (x->n == x->cap) {
		x->s.dropped++;
		if (!x->dropping)
			x->events |= FB_IPFIX_EV_DROPPING;
		x->dropping = true;
		return 1;
	}
	q = qat(x, x->n++);
	memset(q, 0, sizeof(*q));
	q->kind = kind;
	memcpy(&q->r, r, len);
	return 0;
}

int fb_ipfix_out_newflow(struct fb_ipfix_out *x, const struct fb_ipfix_newflow *r)
{
	return enqueue(x, FB_IPFIX_NEWFLOW, r, sizeof(*r));
}

int fb_ipfix_out_estimate(struct fb_ipfix_out *x, const struct fb_ipfix_estimate *r)
{
	return enqueue(x, FB_IPFIX_ESTIMATE, r, sizeof(*r));
}

int fb_ipfix_out_flow(struct fb_ipfix_out *x, const struct fb_ipfix_flow *r)
{
	return enqueue(x, FB_IPFIX_FLOW, r, sizeof(*r));
}

int fb_ipfix_out_mitigation(struct fb_ipfix_out *x, const struct fb_ipfix_mitigation *r)
{
	return enqueue(x, FB_IPFIX_MITIGATION, r, sizeof(*r));
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void fb_ipfix_out_finish(struct fb_ipfix_out *x, double until)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	double now = mono();
	size_t i;

	/* No more waiting: a connection of the last second takes what is
	 * queued, the best the stop can do. */
	x->trial_end = 0;
	for (;;) {
		if (fb_ipfix_out_pump(x, now) < 0)
			break;
		if (x->o.tcp && x->st == ST_UP && !x->n && !x->out_len && !x->withdrawn) {
			/* Everything sent: the templates end with the session,
			 * withdrawn (RFC 7011 section 8.1; never over UDP). The
			 * message goes, and is awaited, as a message of records. */
			x->withdrawn = true;
			if (fb_ipfix_put_withdrawals(x->enc)) {
				fb_report_err("ipfix: %s", fb_ipfix_error(x->enc));
				break;
			}
			if (hold(x, 0) < 0)
				break;
			continue;
		}
		if (!x->n && !x->out_len && (!x->o.tcp || !x->fn || x->st != ST_UP))
			break;
		if (now >= until)
			break;
		nanosleep(&tick, NULL);
		now = mono();
	}
	if (!x->o.tcp && x->inflight && now < until) {
		/* A refusal of the last messages comes back within a round
		 * trip: look once more. */
		nanosleep(&tick, NULL);
		if (sock_error(x->fd))
			x->s.unconfirmed += x->inflight;
		x->inflight = 0;
	}
	x->s.dropped += x->n;
	x->head = x->n = 0;
	for (i = 0; i < x->fn; i++)
		x->s.unconfirmed += x->fifo[(x->fhead + i) % FIFO_MAX].records;
	x->fn = 0;
}

struct fb_ipfix_out *fb_ipfix_out_open(const struct fb_ipfix_out_opts *o)
{
	struct addrinfo hints = { 0 }, *ai = NULL, *a;
	struct fb_ipfix_out *x;
	int rc;

	hints.ai_socktype = o->tcp ? SOCK_STREAM : SOCK_DGRAM;
	rc = getaddrinfo(o->host, o->port, &hints, &ai);
	if (rc || !ai) {
		fb_report_err("ipfix: collector '%s': %s", o->host,
			      rc ? gai_strerror(rc) : "no address");
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x || !o->queue || !(x->q = calloc(o->queue, sizeof(*x->q))) ||
	    !(x->out = malloc(o->tcp ? FB_IPFIX_MSG_TCP : FB_IPFIX_MSG_UDP))) {
		fb_report_err("ipfix: out of memory");
		freeaddrinfo(ai);
		if (x)
			free(x->q);
		free(x);
		return NULL;
	}
	for (a = ai; a && x->naddr < ADDRS_MAX; a = a->ai_next) {
		if (a->ai_addrlen > sizeof(x->addrs[0]))
			continue;
		memcpy(&x->addrs[x->naddr], a->ai_addr, a->ai_addrlen);
		x->alens[x->naddr++] = a->ai_addrlen;
	}
	freeaddrinfo(ai);
	x->o = *o;
	x->o.host = x->o.port = NULL;
	x->cap = o->queue;
	x->fd = -1;
	if (!x->naddr) {
		fb_report_err("ipfix: collector '%s': no address", o->host);
		fb_ipfix_out_close(x);
		return NULL;
	}
	x->enc = fb_ipfix_new(o->domain, o->tcp ? FB_IPFIX_MSG_TCP : FB_IPFIX_MSG_UDP,
			      o->l2_estimates);
	if (!x->enc) {
		fb_ipfix_out_close(x);
		return NULL;
	}
	x->s.sessions = 0;
	if (!o->tcp) {
		double now = mono();

		/* The first address a socket connects to (a route exists). */
		do
			rc = open_socket(x);
		while (rc && ++x->cur < x->naddr);
		if (rc) {
			x->cur = 0;
			fb_report_err("ipfix: UDP socket: %s", strerror(rc));
			fb_ipfix_out_close(x);
			return NULL;
		}
		if (new_session(x, now)) {
			fb_ipfix_out_close(x);
			return NULL;
		}
	}
	return x;
}

void fb_ipfix_out_stats(const struct fb_ipfix_out *x, struct fb_ipfix_out_stats *s)
{
	*s = x->s;
}

const char *fb_ipfix_out_error(const struct fb_ipfix_out *x)
{
	return x->err;
}

void fb_ipfix_out_close(struct fb_ipfix_out *x)
{
	if (!x)
		return;
	close_fd(x);
	fb_ipfix_free(x->enc);
	free(x->q);
	free(x->out);
	free(x);
}
