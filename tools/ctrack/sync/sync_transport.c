/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_transport.c - UDP, multicast and TCP sockets for a sync link
 * (sync_transport.h says what each does and where it differs from
 * conntrackd's udp.c, mcast.c and tcp.c).
 *
 * Source addresses are checked here, before the protocol sees a byte:
 * the node trusts nothing it is given, but only the transport knows who
 * sent it.  A TCP stream is checked once, at accept().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ctrack/sync.h"
#include "sync_transport.h"

struct cts {
	struct cts_config cfg;
	int rx;                 /* UDP/mcast: receive; TCP: listen */
	int tx;                 /* UDP/mcast: send; TCP: client */
	int conn;               /* TCP: the accepted peer, or -1 */
	bool tx_connected;      /* TCP client */
	struct timespec last_connect;
	unsigned ifindex;
	struct cts_stats st;
};

void cts_config_default(struct cts_config *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = CTS_UDP;
	c->family = AF_INET;
	c->port = CT_SYNC_PORT;
	c->checksum = true;
	/* A bulk send (a resync) is a burst of hundreds of datagrams; with
	 * the system's default receive buffer (~200 KiB, some 90 datagrams)
	 * most of it is dropped and FTFW spends seconds NACKing it back
	 * (measured: 20k entries took 5 s instead of 0.1).  conntrackd's
	 * example configurations set 1.2 MB; ctrack defaults to 4 MiB. */
	c->rcvbuf = 4 << 20;
	c->sndbuf = 4 << 20;
}

static void set_err(char *err, size_t len, const char *what, int e)
{
	if (err && len)
		snprintf(err, len, "%s: %s", what, strerror(e));
}

static socklen_t fill_sa(const struct cts_config *c, const union cts_addr *a, unsigned ifindex,
			 struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (c->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(c->port);
		s4->sin_addr = a->v4;
		return sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(c->port);
		s6->sin6_addr = a->v6;
		if (IN6_IS_ADDR_LINKLOCAL(&a->v6) || IN6_IS_ADDR_MULTICAST(&a->v6))
			s6->sin6_scope_id = ifindex;
		return sizeof(*s6);
	}
}

static void addr_str(const struct cts_config *c, const union cts_addr *a, char *buf, size_t len)
{
	if (!inet_ntop(c->family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

static int new_socket(const struct cts *t, int type, char *err, size_t errlen)
{
	int fd = socket(t->cfg.family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0) {
		set_err(err, errlen, "socket", errno);
		return -errno;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail;
	if (t->cfg.ifname[0] &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, t->cfg.ifname,
		       (socklen_t)strlen(t->cfg.ifname)) < 0) {
		int e = errno;
		char what[64];

		snprintf(what, sizeof(what), "bind to device %s", t->cfg.ifname);
		set_err(err, errlen, what, e);
		close(fd);
		return -e;
	}
	if (t->cfg.rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &t->cfg.rcvbuf,
					sizeof(int)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &t->cfg.rcvbuf, sizeof(int)) < 0)
		goto fail;
	if (t->cfg.sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &t->cfg.sndbuf,
					sizeof(int)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &t->cfg.sndbuf, sizeof(int)) < 0)
		goto fail;
	return fd;
fail:
	{
		int e = errno;

		set_err(err, errlen, "setsockopt", e);
		close(fd);
		return -e;
	}
}

static int bind_to(const struct cts *t, int fd, const union cts_addr *a, char *err,
		   size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = fill_sa(&t->cfg, a, t->ifindex, &ss);

	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		int e = errno;
		char what[96], as[INET6_ADDRSTRLEN];

		addr_str(&t->cfg, a, as, sizeof(as));
		snprintf(what, sizeof(what), "bind %s port %u", as, t->cfg.port);
		set_err(err, errlen, what, e);
		return -e;
	}
	return 0;
}

static int open_udp(struct cts *t, char *err, size_t errlen)
{
	int no_check = t->cfg.checksum ? 0 : 1;
	int rc;

	t->rx = new_socket(t, SOCK_DGRAM, err, errlen);
	if (t->rx < 0)
		return t->rx;
	rc = bind_to(t, t->rx, &t->cfg.local, err, errlen);
	if (rc)
		return rc;
	t->tx = new_socket(t, SOCK_DGRAM, err, errlen);
	if (t->tx < 0)
		return t->tx;
	if (t->cfg.family == AF_INET &&
	    setsockopt(t->tx, SOL_SOCKET, SO_NO_CHECK, &no_check, sizeof(no_check)) < 0) {
		set_err(err, errlen, "SO_NO_CHECK", errno);
		return -errno;
	}
	return 0;
}

static int open_mcast(struct cts *t, char *err, size_t errlen)
{
	int zero = 0, rc;

	if (!t->cfg.ifname[0]) {
		snprintf(err, errlen, "multicast needs an interface");
		return -EINVAL;
	}
	t->rx = new_socket(t, SOCK_DGRAM, err, errlen);
	if (t->rx < 0)
		return t->rx;
	rc = bind_to(t, t->rx, &t->cfg.peer, err, errlen);
	if (rc)
		return rc;
	t->tx = new_socket(t, SOCK_DGRAM, err, errlen);
	if (t->tx < 0)
		return t->tx;
	if (t->cfg.family == AF_INET) {
		struct ip_mreqn mr;

		memset(&mr, 0, sizeof(mr));
		mr.imr_multiaddr = t->cfg.peer.v4;
		mr.imr_address = t->cfg.local.v4;
		mr.imr_ifindex = (int)t->ifindex;
		if (setsockopt(t->rx, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0 ||
		    setsockopt(t->rx, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof(zero)) < 0 ||
		    setsockopt(t->tx, IPPROTO_IP, IP_MULTICAST_IF, &mr, sizeof(mr)) < 0 ||
		    setsockopt(t->tx, IPPROTO_IP, IP_MULTICAST_LOOP, &zero, sizeof(zero)) < 0) {
			set_err(err, errlen, "multicast setup", errno);
			return -errno;
		}
		if (!t->cfg.checksum) {
			int one = 1;

			if (setsockopt(t->tx, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) < 0) {
				set_err(err, errlen, "SO_NO_CHECK", errno);
				return -errno;
			}
		}
	} else {
		struct ipv6_mreq mr;
		int ifi = (int)t->ifindex;

		memset(&mr, 0, sizeof(mr));
		mr.ipv6mr_multiaddr = t->cfg.peer.v6;
		mr.ipv6mr_interface = t->ifindex;
		if (setsockopt(t->rx, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mr, sizeof(mr)) < 0 ||
		    setsockopt(t->rx, IPPROTO_IPV6, IPV6_MULTICAST_ALL, &zero, sizeof(zero)) < 0 ||
		    setsockopt(t->tx, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifi, sizeof(ifi)) < 0 ||
		    setsockopt(t->tx, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &zero, sizeof(zero)) < 0) {
			set_err(err, errlen, "multicast setup", errno);
			return -errno;
		}
	}
	return 0;
}

static void tcp_client_start(struct cts *t)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	if (t->tx < 0) {
		t->tx = new_socket(t, SOCK_STREAM, NULL, 0);
		if (t->tx < 0)
			return;
	}
	sl = fill_sa(&t->cfg, &t->cfg.peer, t->ifindex, &ss);
	clock_gettime(CLOCK_MONOTONIC, &t->last_connect);
	if (connect(t->tx, (struct sockaddr *)&ss, sl) == 0 || errno == EISCONN) {
		t->tx_connected = true;
		t->st.connects++;
	}
	/* EINPROGRESS: connected when a send succeeds */
}

static int open_tcp(struct cts *t, char *err, size_t errlen)
{
	int rc;

	t->rx = new_socket(t, SOCK_STREAM, err, errlen);
	if (t->rx < 0)
		return t->rx;
	rc = bind_to(t, t->rx, &t->cfg.local, err, errlen);
	if (rc)
		return rc;
	if (listen(t->rx, 1) < 0) {
		set_err(err, errlen, "listen", errno);
		return -errno;
	}
	t->tx = -1;
	tcp_client_start(t);
	return 0;
}

int cts_open(const struct cts_config *c, struct cts **out, char *err, size_t errlen)
{
	struct cts *t;
	int rc;

	if ((c->family != AF_INET && c->family != AF_INET6) || c->kind > CTS_TCP ||
	    c->n_accept > CTS_ACCEPT_MAX) {
		snprintf(err, errlen, "bad transport configuration");
		return -EINVAL;
	}
	if (c->kind == CTS_MCAST && c->n_accept == 0) {
		snprintf(err, errlen, "multicast needs the peers' addresses (accept=)");
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->cfg = *c;
	t->rx = t->tx = t->conn = -1;
	if (c->n_accept == 0) {
		t->cfg.accept[0] = c->peer;
		t->cfg.n_accept = 1;
	}
	if (c->ifname[0]) {
		t->ifindex = if_nametoindex(c->ifname);
		if (!t->ifindex) {
			int e = errno;
			char what[64];

			snprintf(what, sizeof(what), "interface %s", c->ifname);
			set_err(err, errlen, what, e);
			free(t);
			return -e;
		}
	}
	switch (c->kind) {
	case CTS_UDP:
		rc = open_udp(t, err, errlen);
		break;
	case CTS_MCAST:
		rc = open_mcast(t, err, errlen);
		break;
	default:
		rc = open_tcp(t, err, errlen);
		break;
	}
	if (rc) {
		cts_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

void cts_close(struct cts *t)
{
	if (!t)
		return;
	if (t->rx >= 0)
		close(t->rx);
	if (t->tx >= 0)
		close(t->tx);
	if (t->conn >= 0)
		close(t->conn);
	free(t);
}

unsigned cts_fds(const struct cts *t, int *fds, unsigned max)
{
	unsigned n = 0;

	if (n < max && t->rx >= 0)
		fds[n++] = t->rx;
	if (n < max && t->conn >= 0)
		fds[n++] = t->conn;
	return n;
}

static bool accepted(const struct cts *t, const struct sockaddr_storage *ss)
{
	for (unsigned i = 0; i < t->cfg.n_accept; i++) {
		if (ss->ss_family == AF_INET && t->cfg.family == AF_INET) {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

			if (s4->sin_addr.s_addr == t->cfg.accept[i].v4.s_addr)
				return true;
		} else if (ss->ss_family == AF_INET6 && t->cfg.family == AF_INET6) {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

			if (memcmp(&s6->sin6_addr, &t->cfg.accept[i].v6, 16) == 0)
				return true;
		}
	}
	return false;
}

static double since(const struct timespec *a)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - a->tv_sec) + (double)(now.tv_nsec - a->tv_nsec) / 1e9;
}

static void tcp_client_reset(struct cts *t)
{
	if (t->tx >= 0)
		close(t->tx);
	t->tx = -1;
	if (t->tx_connected)
		t->st.disconnects++;
	t->tx_connected = false;
}

int cts_send(void *arg, const void *buf, size_t len)
{
	struct cts *t = arg;
	ssize_t n;

	if (t->cfg.kind != CTS_TCP) {
		struct sockaddr_storage ss = { 0 };
		socklen_t sl = fill_sa(&t->cfg, &t->cfg.peer, t->ifindex, &ss);

		n = sendto(t->tx, buf, len, 0, (struct sockaddr *)&ss, sl);
	} else {
		size_t off = 0;

		if (t->tx < 0 || !t->tx_connected) {
			if (t->tx < 0 || since(&t->last_connect) >= 1.0)
				tcp_client_start(t);
		}
		if (t->tx < 0) {
			t->st.send_errors++;
			return -ENOTCONN;
		}
		/* a stream must not carry half a message: if the socket takes
		 * only part, the rest is sent before anything else */
		n = 0;
		while (off < len) {
			n = send(t->tx, (const uint8_t *)buf + off, len - off, MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN && off > 0) {
					struct timespec ts = { 0, 1000000 };

					nanosleep(&ts, NULL);
					continue;
				}
				break;
			}
			if (!t->tx_connected) {
				t->tx_connected = true;
				t->st.connects++;
			}
			off += (size_t)n;
		}
		if (n < 0) {
			int e = errno;

			if (e == EPIPE || e == ECONNRESET || e == ENOTCONN || e == ECONNREFUSED)
				tcp_client_reset(t);
			t->st.send_errors++;
			return -e;
		}
		n = (ssize_t)len;
	}
	if (n < 0) {
		t->st.send_errors++;
		return -errno;
	}
	t->st.datagrams_out++;
	t->st.bytes_out += (uint64_t)n;
	return 0;
}

int cts_input(struct cts *t, int fd, cts_recv_fn fn, void *arg, unsigned max_reads)
{
	static uint8_t buf[65536];

	if (t->cfg.kind == CTS_TCP && fd == t->rx) {
		struct sockaddr_storage ss = { 0 };
		socklen_t sl = sizeof(ss);
		int c = accept4(t->rx, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (c < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (!accepted(t, &ss)) {
			t->st.rejected_peer++;
			close(c);
			return 0;
		}
		/* one peer: a newer connection replaces the old (tcp_accept) */
		if (t->conn >= 0) {
			close(t->conn);
			t->st.disconnects++;
		}
		t->conn = c;
		return 0;
	}
	for (unsigned i = 0; i < max_reads; i++) {
		struct sockaddr_storage ss = { 0 };
		socklen_t sl = sizeof(ss);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&ss, &sl);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			t->st.recv_errors++;
			if (fd == t->conn) {
				close(t->conn);
				t->conn = -1;
				t->st.disconnects++;
			}
			return -errno;
		}
		if (t->cfg.kind == CTS_TCP) {
			if (n == 0) {         /* the peer closed */
				close(t->conn);
				t->conn = -1;
				t->st.disconnects++;
				return 0;
			}
		} else if (!accepted(t, &ss)) {
			t->st.rejected_peer++;
			continue;
		}
		t->st.datagrams_in++;
		t->st.bytes_in += (uint64_t)n;
		fn(arg, buf, (size_t)n);
	}
	return 0;
}

void cts_get_stats(const struct cts *t, struct cts_stats *s)
{
	*s = t->st;
}

uint32_t cts_mtu_payload(const struct cts_config *c)
{
	/* conntrackd: MTU - 28 (UDP) or - 40 (TCP) whatever the family;
	 * an IPv6 header is 20 bytes longer, and ctrack counts it, so that
	 * a full datagram is not fragmented */
	unsigned hdr = (c->kind == CTS_TCP ? 40u : 28u) + (c->family == AF_INET6 ? 20u : 0u);
	int mtu = 1500;

	if (c->ifname[0]) {
		struct ifreq ifr;
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (fd >= 0) {
			memset(&ifr, 0, sizeof(ifr));
			snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", c->ifname);
			if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
				mtu = ifr.ifr_mtu;
			close(fd);
		}
	}
	if (mtu > 65535)
		mtu = 65535;
	return (uint32_t)mtu > hdr + CT_SYNC_CONN_MSG_MAX ? (uint32_t)mtu - hdr :
							   CT_SYNC_CONN_MSG_MAX + 1;
}
