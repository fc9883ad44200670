/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ipfix.h - flow records (RFC 7011) from connection-tracking events.
 *
 * An IPFIX sink turns each DESTROY into one flow record - a biflow with
 * RFC 5103's reverse counters, or (uniflow) one record per direction that
 * saw packets - and, with an active timeout, reports long-lived
 * connections periodically; at the end of a replay it can report what is
 * still open.  Records carry, from the IANA registry: addresses, ports
 * (TCP, UDP, UDP-Lite, SCTP, DCCP) or icmpTypeCode, protocol, packet and
 * octet delta counts of each direction (counts since the flow's previous
 * record, so a collector's sum over a flow's records is the connection's
 * counters), flowStart/EndMilliseconds (first and last packet),
 * flowEndReason, tcpControlBits of each direction, ingressVRFID (the
 * conntrack zone) and flowId (the conntrack id); when the table does
 * NAT, a connection whose binding changed a tuple also carries the
 * post-NAT addresses and ports (RFC 8158: postNATSourceIPv4Address ...).
 * docs/export.md maps each field and reason.
 *
 * Which flowEndReason:
 *   idle timeout (1)      the entry timed out (not a closed TCP one)
 *   active timeout (2)    a periodic record of a connection still open
 *   end of flow (3)       RST, a refused connection, a TIME_WAIT/CLOSE
 *                         TCP entry timing out, a TIME_WAIT reopened
 *   forced end (4)        flush, zone teardown, the end of a replay
 *   lack of resources (5) early drop
 *
 * Cost: a record is ~100 instructions of encoding (ipfix_enc.c) plus, per
 * message of ~15-20 records, one send; an active timeout costs a walk
 * over the table (in slices, ex_table_walk) per quarter of it.  One
 * thread feeds the sink; ipfix_sink_get_stats() and ipfix_sink_peer() may
 * be called from any thread meanwhile.
 */
#ifndef CTRACK_TOOL_EXPORT_IPFIX_H
#define CTRACK_TOOL_EXPORT_IPFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipfix_xport.h"
#include "sink.h"

struct ipfix_config {
	enum ipfix_proto proto;
	const char *host;
	const char *port;
	bool uniflow;                  /* two records instead of a biflow */
	bool no_final;                 /* finish: leave open connections out */
	bool nat;                      /* the table does NAT: NATed connections'
					* records carry RFC 8158's post-NAT
					* addresses and ports, in templates of
					* their own (ex_table_config sets it) */
	uint32_t active_timeout_s;     /* 0: no periodic records */
	uint32_t template_refresh_s;   /* UDP: templates again after this
					* many seconds of wall clock (0: 60) */
	uint32_t template_refresh_msgs;/* UDP: ... or this many messages
					* (0: 100) */
	uint32_t domain;               /* observation domain id */
	uint32_t mtu;                  /* UDP: message size bound (0: 1400) */
	int64_t time_offset_ns;        /* tracker time + this = Unix time
					* (0 for a capture's timestamps) */
	unsigned connect_timeout_ms;   /* TCP (0: 3000) */
	size_t queue_bytes;            /* TCP: messages waiting (0: 4 MiB) */
};

struct ipfix_stats {
	uint64_t records;              /* encoded, of every kind */
	uint64_t records_active;       /* of which periodic */
	uint64_t records_final;        /* of which open at the end */
	uint64_t records_lost;         /* in messages that could not be sent */
	uint64_t template_sends;
	struct ipfix_xport_stats xport;
	uint64_t encode_errors;
};

/*
 * ipfix_sink_create - open the transport (a TCP collector must accept the
 * connection now) and send the templates.  Returns the sink, or NULL with
 * a sentence for a person in @err.
 */
struct ex_sink *ipfix_sink_create(const struct ipfix_config *cfg, char *err,
				  size_t errlen);
/* Any thread: the counters now (relaxed loads of each). */
void ipfix_sink_get_stats(struct ex_sink *s, struct ipfix_stats *st);
/* Any thread: "ADDR:PORT" of the collector. */
const char *ipfix_sink_peer(struct ex_sink *s);

/* ipfix_sink_flush - send the records waiting in a message now (a record
 * otherwise waits until its message is full, or a second of wall clock
 * has passed at the next event).  The daemon calls it when idle. */
void ipfix_sink_flush(struct ex_sink *s);

/* How long (ms) the oldest record has waited in the message being built;
 * 0 when it holds none.  The feeding thread's. */
uint64_t ipfix_sink_pending_ms(struct ex_sink *s);

/* The feeding thread: tracker time + @offset_ns = Unix time from now on
 * (a daemon resamples CLOCK_REALTIME - CLOCK_MONOTONIC). */
void ipfix_sink_set_time_offset(struct ex_sink *s, int64_t offset_ns);

#endif
