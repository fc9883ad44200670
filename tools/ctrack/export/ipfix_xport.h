/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ipfix_xport.h - IPFIX messages to a collector over UDP or TCP, without
 * ever blocking the caller.
 *
 * UDP: one datagram per message, sent with MSG_DONTWAIT on a connected
 * socket; a send that fails (a full socket buffer: EAGAIN) loses that
 * message and is counted, and so is each datagram the collector's host
 * refuses (no collector yet: the ICMP port unreachable comes back as
 * ECONNREFUSED on a later send) - the caller goes on.
 * TCP: connected at open (a refusing or unreachable collector is an error
 * there, for the person starting the exporter), then non-blocking: what
 * the socket does not take waits in a bounded queue (whole messages,
 * IPFIX over TCP being a stream of them); a message that does not fit is
 * dropped whole and counted, so the stream stays framed.  A connection
 * the collector closes loses what follows, counted.
 * ipfix_xport_close() gives a TCP queue a bounded time to drain.
 *
 * One thread uses a transport at a time (the sink's).
 */
#ifndef CTRACK_TOOL_EXPORT_IPFIX_XPORT_H
#define CTRACK_TOOL_EXPORT_IPFIX_XPORT_H

#include <stddef.h>
#include <stdint.h>

enum ipfix_proto { IPFIX_UDP, IPFIX_TCP };

struct ipfix_xport_stats {
	uint64_t messages;        /* handed to the socket (whole) */
	uint64_t bytes;
	uint64_t send_errors;     /* UDP sends that failed, TCP writes that
				   * failed (the connection is then dead) */
	uint64_t dropped;         /* messages lost here: failed UDP sends,
				   * TCP queue full or connection dead */
	uint64_t refused;         /* UDP: datagrams the collector's host
				   * refused (ICMP port unreachable: nothing
				   * listened), each one message lost there */
	int last_errno;           /* of the last failure, 0 if none */
};

struct ipfix_xport;

/*
 * ipfix_xport_open - resolve @host (name or address; IPv6 in brackets
 * or not) and @port, and open the transport.  TCP connects here, waiting
 * at most @connect_timeout_ms.  Returns 0 and *@out, or a negative errno
 * with a sentence for a person in @err ("connection refused by
 * 127.0.0.1:4739 (is the collector running?)").
 */
int ipfix_xport_open(enum ipfix_proto proto, const char *host, const char *port,
		     unsigned connect_timeout_ms, size_t queue_bytes,
		     struct ipfix_xport **out, char *err, size_t errlen);

/* ipfix_xport_send - send one whole message (never blocks). Returns 0 when
 * it left or was queued, a negative errno when it was lost (counted). */
int ipfix_xport_send(struct ipfix_xport *x, const uint8_t *msg, size_t len);

/* ipfix_xport_pending - bytes queued (TCP), 0 for UDP. */
size_t ipfix_xport_pending(const struct ipfix_xport *x);

/* ipfix_xport_flush - give queued bytes up to @timeout_ms to leave.
 * Returns 0 when none is left, -ETIMEDOUT or the socket's error. */
int ipfix_xport_flush(struct ipfix_xport *x, unsigned timeout_ms);

void ipfix_xport_get_stats(const struct ipfix_xport *x, struct ipfix_xport_stats *s);
const char *ipfix_xport_peer(const struct ipfix_xport *x);  /* "ADDR:PORT" */
void ipfix_xport_close(struct ipfix_xport *x);

#endif
