/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_transport.h - the sockets of a sync link, as conntrackd 1.4.7
 * offers them: UDP unicast, UDP multicast, TCP (for NOTRACK).
 *
 * A transport carries datagrams (or a stream) between this node and one
 * peer; it knows nothing of the protocol (include/ctrack/sync.h does).
 * Its job besides moving bytes is the first line of trust: a datagram
 * whose source address is not one of the configured peers, or a TCP
 * connection from one, is refused and counted (rejected_peer) before the
 * node sees a byte.  conntrackd accepts whatever reaches its port.
 *
 * How each kind is set up, and how it differs from conntrackd:
 *  - UDP: a receiving socket bound to local:port (conntrackd's
 *    IPv4_address), a sending socket that sends to peer:port from an
 *    ephemeral port (as conntrackd's client socket; so the peer's source
 *    port is not checked, only its address).
 *  - Multicast: a receiving socket bound to group:port (conntrackd binds
 *    INADDR_ANY, which also takes unicast datagrams to that port; binding
 *    the group filters them) with IP_MULTICAST_ALL off, joined on the
 *    interface's address; a sending socket with IP_MULTICAST_IF set to
 *    that address and loopback off.  accept= must name the peers: a
 *    multicast group has no single peer.
 *  - TCP: a listening socket on local:port that keeps one connection (a
 *    newer one replaces it, as conntrackd's tcp_accept does) and a client
 *    that connects to peer:port, at most once a second while it is down,
 *    and reconnects after EPIPE/ECONNRESET.  Messages flow client ->
 *    server only; each node has both.
 * Every socket is bound to the configured interface (SO_BINDTODEVICE)
 * when one is named, so that sync traffic cannot leave by another link.
 *
 * Threads: one thread uses a transport.  Calls do not block (the sockets
 * are non-blocking); the caller polls the descriptors cts_fds() gives.
 * Errors are negative errno values, with a sentence in @err where a
 * function takes one.
 */
#ifndef CTRACK_TOOL_SYNC_TRANSPORT_H
#define CTRACK_TOOL_SYNC_TRANSPORT_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cts_kind {
	CTS_UDP = 0,
	CTS_MCAST = 1,
	CTS_TCP = 2,
};

union cts_addr {
	struct in_addr v4;
	struct in6_addr v6;
};

#define CTS_ACCEPT_MAX 8

struct cts_config {
	enum cts_kind kind;
	int family;                     /* AF_INET or AF_INET6 */
	char ifname[IF_NAMESIZE];       /* "" = any (not for multicast) */
	union cts_addr local;           /* UDP/TCP: bind; multicast: the
					 * interface's own address (IPv4) */
	union cts_addr peer;            /* UDP/TCP: where to send; multicast:
					 * the group */
	uint16_t port;                  /* default CT_SYNC_PORT */
	int rcvbuf, sndbuf;             /* bytes; 0: the system's; default
					 * 4 MiB (RcvSocketBuffer,
					 * SndSocketBuffer) */
	bool checksum;                  /* UDP checksums (conntrackd's
					 * Checksum on; default) */
	union cts_addr accept[CTS_ACCEPT_MAX]; /* who may send to us; empty
						* = the peer (UDP/TCP) */
	unsigned n_accept;
};

struct cts_stats {
	uint64_t datagrams_in, bytes_in;
	uint64_t datagrams_out, bytes_out;
	uint64_t rejected_peer;         /* from an address not accepted */
	uint64_t recv_errors, send_errors;
	uint64_t connects, disconnects; /* TCP */
};

struct cts;

/* cts_config_default - UDP, IPv4, port 3780, checksums on, 4 MiB
 * socket buffers. */
void cts_config_default(struct cts_config *c);

/*
 * cts_open - open the sockets.  Returns 0 and sets *@out, or a negative
 * errno with a sentence in @err ("bind 10.0.0.1:3780: Address already in
 * use").
 */
int cts_open(const struct cts_config *c, struct cts **out, char *err, size_t errlen);
void cts_close(struct cts *t);

/* cts_fds - the descriptors to poll for input (POLLIN); at most 3.
 * Changes after cts_input() (TCP connections come and go). */
unsigned cts_fds(const struct cts *t, int *fds, unsigned max);

/*
 * cts_send - ct_sync_send_fn for a node: send @len bytes to the peer.
 * Returns 0 or a negative errno (counted); a TCP client that is down
 * tries to connect (once a second) and drops the bytes meanwhile, as
 * conntrackd's does.
 */
int cts_send(void *t, const void *buf, size_t len);

/*
 * cts_input - handle @fd being readable: accept a TCP connection, or read
 * what arrived.  Calls @fn for each datagram (or run of stream bytes)
 * from an accepted peer; the rest is counted and dropped.  Reads until
 * the socket is empty or @max_reads datagrams were read.  Returns 0 or a
 * negative errno for a socket that failed.
 */
typedef void (*cts_recv_fn)(void *arg, const uint8_t *buf, size_t len);
int cts_input(struct cts *t, int fd, cts_recv_fn fn, void *arg, unsigned max_reads);

void cts_get_stats(const struct cts *t, struct cts_stats *s);

/* cts_mtu_payload - bytes of messages a datagram may carry: the
 * interface's MTU less the IP and UDP (or TCP) headers, as conntrackd
 * sizes its channel buffer; 1472 without an interface. */
uint32_t cts_mtu_payload(const struct cts_config *c);

#endif /* CTRACK_TOOL_SYNC_TRANSPORT_H */
