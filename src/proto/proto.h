/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.h - the one small interface every protocol tracker implements.
 *
 * As in nf_conntrack, the core (track/track.c) knows lookups, creation,
 * references, accounting, events and expiry; a tracker knows one protocol:
 * which packets it refuses outright, how a packet moves an entry's state,
 * which timeout follows, and whether an entry may be evicted early.
 * Trackers never touch the table: they get the entry (locked, or not yet
 * published when the packet creates it) and say what to do in a
 * struct ct_proto_out.
 *
 * Files: tcp.c, udp.c (UDP and UDP-Lite), icmp.c (ICMP and ICMPv6),
 * sctp.c, gre.c, generic.c; proto.c maps an IP protocol number to its
 * tracker.
 */
#ifndef CT_PROTO_H
#define CT_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "base/conn.h"
#include "ctrack/packet.h"
#include "ctrack/record.h"
#include "ctrack/settings.h"
#include "ctrack/table.h"

/* What the core hands a tracker for one packet. */
struct ct_proto_ctx {
	const struct ct_packet *pkt;
	const struct ct_settings *set;  /* the entry's namespace's settings */
	ct_time_ns now;
	enum ct_dir dir;                /* direction of this packet */
	bool is_new;                    /* this packet is creating the entry:
					 * priv is zeroed, l4state is 0, and
					 * the tracker must initialise them */
	uint32_t status;                /* entry's CT_ST_* before the packet */
};

enum ct_proto_verdict {
	CT_PV_ACCEPT = 0, /* count it, set expiry to now + timeout_ns */
	CT_PV_IGNORE,     /* accept, but neither count nor refresh (the
			   * kernel returns NF_ACCEPT before refreshing).
			   * The tracker may still have changed l4state
			   * (TCP: a reply SYN in SYN_SENT -> SYN_SENT2);
			   * deliver out->events as for ACCEPT */
	CT_PV_INVALID,    /* -NF_ACCEPT: entry unchanged (a new one is not
			   * created), packet INVALID with out->reason;
			   * not counted.  If out->timeout_ns != 0 the
			   * expiry is lowered to now + timeout_ns (TCP's
			   * nf_tcp_handle_invalid), with no event */
	CT_PV_DESTROY,    /* count it, then destroy the entry now
			   * (nf_ct_kill_acct: e.g. SYN answered by RST) */
	CT_PV_REPEAT,     /* destroy the entry and process the packet again
			   * as the first of a new one (-NF_REPEAT: a SYN
			   * reopening a TIME_WAIT/CLOSE connection) */
};

/* What a tracker answers.  The core zeroes it before the call. */
struct ct_proto_out {
	uint64_t timeout_ns;  /* ACCEPT: the entry expires at now + this;
			       * INVALID: see CT_PV_INVALID */
	uint32_t events;      /* CT_EVW_* (events.h) the change caused, e.g.
			       * CT_EVW_PROTOINFO when l4state changed */
	uint8_t verdict;      /* enum ct_proto_verdict */
	uint8_t reason;       /* enum ct_parse_reason, for INVALID */
	bool set_assured;     /* set ASSURED (the core reports it once) */
};

struct ct_proto {
	const char *name;     /* as conntrack prints it: "tcp", "unknown" */
	uint8_t l4;           /* IPPROTO_* (0 for the generic tracker) */
	uint8_t priv_size;    /* bytes of private area, multiple of 8, <= 64 */
	uint8_t n_states;     /* states state_name() knows (0: stateless) */

	/*
	 * classify - optional, packet-level checks before any lookup, with no
	 * entry: return CT_V_UNTRACKED (e.g. neighbour discovery) or
	 * CT_V_INVALID (set *reason), or -1 to go on.
	 */
	int (*classify)(const struct ct_packet *pkt,
			const struct ct_settings *set, uint8_t *reason);

	/*
	 * packet - the state machine.  Called with the entry locked, or on
	 * the unpublished entry when ctx->is_new.  Updates l4state and priv,
	 * fills @out.  Must not block, allocate or call back into the core.
	 */
	void (*packet)(struct ct_conn *c, const struct ct_proto_ctx *ctx,
		       struct ct_proto_out *out);

	/* state_name - conntrack's name for @state, NULL when stateless. */
	const char *(*state_name)(uint8_t state);

	/* can_early_drop - optional: may this ASSURED entry still be evicted
	 * when the table is full (TCP: closing states)?  Entries that are not
	 * ASSURED are always evictable. */
	bool (*can_early_drop)(const struct ct_conn *c);

	/*
	 * Whole entries out and in (src/record/, ctrack/record.h), as the
	 * kernel's to_nlattr / from_nlattr: optional, for trackers with a
	 * private area (without them a record carries none).
	 * to_record - @c's area into @rp (zeroed by the caller); @c locked;
	 *   times as ages before @now.
	 * record_check - could this tracker have made @rp, in state
	 *   @l4state?  CT_RECORD_OK or CT_RECORD_R_PROTO.  Pure.
	 * from_record - the area of the unpublished @c (zeroed) from a
	 *   checked @rp, ages taken back from @base; with @commit only what
	 *   ctnetlink sets when conntrackd creates an entry, the rest as the
	 *   kernel then leaves it (CT_RECORD_F_COMMIT); @set: the zone's
	 *   settings.
	 */
	void (*to_record)(const struct ct_conn *c, union ct_record_proto *rp,
			  ct_time_ns now);
	enum ct_record_reason (*record_check)(uint8_t l4state,
					      const union ct_record_proto *rp);
	void (*from_record)(struct ct_conn *c, const union ct_record_proto *rp,
			    ct_time_ns base, bool commit,
			    const struct ct_settings *set);
};

/* The trackers by index (ct_conn.proto), and the index of each IP
 * protocol's tracker (0: the generic one); proto.c. */
#define CT_N_PROTOS 8
extern const struct ct_proto *const ct_protos[CT_N_PROTOS];
extern const uint8_t ct_proto_l4_index[256];

/* The tracker for IP protocol @l4 (the generic one when none is specific).
 * Never NULL. */
static inline const struct ct_proto *ct_proto_find(uint8_t l4)
{
	return ct_protos[ct_proto_l4_index[l4]];
}

/* The tracker at index @idx (ct_conn.proto) and the index of a tracker. */
static inline const struct ct_proto *ct_proto_by_index(uint8_t idx)
{
	return ct_protos[idx < CT_N_PROTOS ? idx : 0];
}
uint8_t ct_proto_index(const struct ct_proto *p);

/* May @c be evicted early (table full)?  Not if it is DYING; yes if it
 * never became ASSURED; else as its tracker's can_early_drop says.  Read
 * under @c's lock (its state is). */
bool ct_proto_can_early_drop(const struct ct_conn *c);

/* Seconds -> nanoseconds, for timeouts. */
static inline uint64_t ct_secs(uint32_t s)
{
	return (uint64_t)s * 1000000000ull;
}

extern const struct ct_proto ct_proto_tcp;
extern const struct ct_proto ct_proto_udp;
extern const struct ct_proto ct_proto_udplite;
extern const struct ct_proto ct_proto_icmp;
extern const struct ct_proto ct_proto_icmpv6;
extern const struct ct_proto ct_proto_sctp;
extern const struct ct_proto ct_proto_gre;
extern const struct ct_proto ct_proto_generic;

#endif /* CT_PROTO_H */
