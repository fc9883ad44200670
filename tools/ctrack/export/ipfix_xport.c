/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ipfix_xport.c - the network side of the IPFIX exporter (ipfix_xport.h).
 *
 * Written here rather than using libfixbuf's own network exporter, whose
 * encoder ipfix.c does use: libfixbuf opens its socket lazily at the
 * first message (a refusing TCP collector would surface minutes into a
 * run, not when the person starts it) and writes with a blocking write()
 * in a loop (a collector that stops reading would stop tracking with it;
 * docs/export.md).  What is here is small: a connected socket, a send
 * that never waits, and for TCP a queue of whole messages with a bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "ipfix_xport.h"

struct ipfix_xport {
	int fd;
	enum ipfix_proto proto;
	int dead;               /* TCP: the connection failed; all is lost */
	uint8_t *q;             /* TCP queue: bytes [q_off, q_len) wait */
	size_t q_off, q_len, q_cap;
	struct ipfix_xport_stats st;
	char peer[INET6_ADDRSTRLEN + 8];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void name_peer(struct ipfix_xport *x, const struct addrinfo *ai)
{
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (ai->ai_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ai->ai_addr;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		port = ntohs(s->sin_port);
		snprintf(x->peer, sizeof(x->peer), "%s:%u", a, port);
	} else {
		const struct sockaddr_in6 *s = (const void *)ai->ai_addr;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		port = ntohs(s->sin6_port);
		snprintf(x->peer, sizeof(x->peer), "[%s]:%u", a, port);
	}
}

/* Connect @fd (non-blocking) within @timeout_ms.  0 or -errno. */
static int connect_within(int fd, const struct addrinfo *ai, unsigned timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	int r;

	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	do
		r = poll(&p, 1, (int)timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		return -errno;
	return soerr ? -soerr : 0;
}

int ipfix_xport_open(enum ipfix_proto proto, const char *host, const char *port,
		     unsigned connect_timeout_ms, size_t queue_bytes,
		     struct ipfix_xport **out, char *err, size_t errlen)
{
	struct addrinfo hints, *res = NULL;
	struct ipfix_xport *x;
	char h[256];
	size_t hl = strlen(host);
	int r;

	/* "[::1]" as people write IPv6 with a port */
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']')
		snprintf(h, sizeof(h), "%.*s", (int)(hl - 2), host + 1);
	else
		snprintf(h, sizeof(h), "%s", host);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = proto == IPFIX_TCP ? SOCK_STREAM : SOCK_DGRAM;
	r = getaddrinfo(h, port, &hints, &res);
	if (r != 0) {
		snprintf(err, errlen, "cannot resolve '%s' port '%s': %s", h, port,
			 gai_strerror(r));
		return -EINVAL;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		freeaddrinfo(res);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	x->proto = proto;
	x->fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	name_peer(x, res);
	if (x->fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open a socket for %s: %s", x->peer, strerror(-r));
		goto fail;
	}
	if (proto == IPFIX_TCP) {
		r = connect_within(x->fd, res, connect_timeout_ms);
		if (r < 0) {
			snprintf(err, errlen, "cannot connect to the collector at %s over TCP: %s%s",
				 x->peer, strerror(-r),
				 r == -ECONNREFUSED ? " (is a collector listening there?)" : "");
			goto fail;
		}
		x->q_cap = queue_bytes ? queue_bytes : (4u << 20);
		x->q = malloc(x->q_cap);
		if (!x->q) {
			r = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	} else if (connect(x->fd, res->ai_addr, res->ai_addrlen) < 0) {
		/* UDP: connect only fixes the peer (and lets ICMP errors
		 * come back as ECONNREFUSED on later sends) */
		r = -errno;
		snprintf(err, errlen, "cannot send to %s over UDP: %s", x->peer, strerror(-r));
		goto fail;
	}
	freeaddrinfo(res);
	*out = x;
	return 0;
fail:
	freeaddrinfo(res);
	if (x->fd >= 0)
		close(x->fd);
	free(x->q);
	free(x);
	return r;
}

/* TCP: write what the queue holds until the socket takes no more. */
static int tcp_drain(struct ipfix_xport *x)
{
	while (x->q_off < x->q_len) {
		ssize_t n = send(x->fd, x->q + x->q_off, x->q_len - x->q_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			x->st.send_errors++;
			x->st.last_errno = errno;
			x->dead = 1;
			return -errno;
		}
		x->q_off += (size_t)n;
		x->st.bytes += (uint64_t)n;
	}
	x->q_off = x->q_len = 0;
	return 0;
}

int ipfix_xport_send(struct ipfix_xport *x, const uint8_t *msg, size_t len)
{
	if (x->proto == IPFIX_UDP) {
		ssize_t n;
		int tries = 0;

		/* ECONNREFUSED is the ICMP port unreachable of an earlier
		 * datagram (one lost there, counted now), not a failure of
		 * this one: send this one again, once - so the first message
		 * after a collector comes up is not lost to the error its
		 * absence left behind */
		do {
			n = send(x->fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n < 0 && errno == ECONNREFUSED) {
				x->st.refused++;
				x->st.last_errno = errno;
			}
		} while (n < 0 && (errno == EINTR || (errno == ECONNREFUSED && tries++ == 0)));
		if (n < 0) {
			x->st.send_errors++;
			x->st.dropped++;
			x->st.last_errno = errno;
			return -errno;
		}
		x->st.messages++;
		x->st.bytes += (uint64_t)n;
		return 0;
	}
	if (!x->dead)
		tcp_drain(x);
	if (x->dead) {
		x->st.dropped++;
		return -(x->st.last_errno ? x->st.last_errno : EPIPE);
	}
	/* room for the whole message, moving the unsent rest to the front */
	if (x->q_cap - x->q_len < len && x->q_off) {
		memmove(x->q, x->q + x->q_off, x->q_len - x->q_off);
		x->q_len -= x->q_off;
		x->q_off = 0;
	}
	if (x->q_cap - x->q_len < len) {
		x->st.dropped++;
		x->st.last_errno = ENOBUFS;
		return -ENOBUFS;
	}
	memcpy(x->q + x->q_len, msg, len);
	x->q_len += len;
	x->st.messages++;
	tcp_drain(x);
	return 0;
}

size_t ipfix_xport_pending(const struct ipfix_xport *x)
{
	return x->q_len - x->q_off;
}

int ipfix_xport_flush(struct ipfix_xport *x, unsigned timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;

	while (x->proto == IPFIX_TCP && !x->dead && ipfix_xport_pending(x)) {
		struct pollfd p = { .fd = x->fd, .events = POLLOUT };
		uint64_t t = now_ms();

		if (t >= end)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)(end - t)) < 0 && errno != EINTR)
			return -errno;
		tcp_drain(x);
	}
	if (x->dead)
		return -(x->st.last_errno ? x->st.last_errno : EPIPE);
	return 0;
}

void ipfix_xport_get_stats(const struct ipfix_xport *x, struct ipfix_xport_stats *s)
{
	*s = x->st;
}

const char *ipfix_xport_peer(const struct ipfix_xport *x)
{
	return x->peer;
}

void ipfix_xport_close(struct ipfix_xport *x)
{
	if (!x)
		return;
	if (x->fd >= 0)
		close(x->fd);
	free(x->q);
	free(x);
}
