/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp.h - the TCP tracker's private layout (private to the library
 * and its tests).
 *
 * The numbers are the kernel's: states as enum tcp_conntrack
 * (include/uapi/linux/netfilter/nf_conntrack_tcp.h), per-direction flags
 * as IP_CT_TCP_FLAG_*, packet kinds as enum tcp_bit_set.  Keeping them
 * equal means a state or flag byte read from ctnetlink can be compared
 * with ours without translation.
 *
 * The private area mirrors struct ip_ct_tcp minus the state (kept in
 * ct_conn.l4state), packed into 56 bytes: the per-direction window data
 * first (four 32-bit words each), then the "last packet" memory used by
 * the retransmission and out-of-sync rules, then the small fields.
 */
#ifndef CT_PROTO_TCP_H
#define CT_PROTO_TCP_H

#include <stdint.h>

/* Connection states (enum tcp_conntrack). */
enum ct_tcp_state {
	CT_TCP_NONE = 0,
	CT_TCP_SYN_SENT,
	CT_TCP_SYN_RECV,
	CT_TCP_ESTABLISHED,
	CT_TCP_FIN_WAIT,
	CT_TCP_CLOSE_WAIT,
	CT_TCP_LAST_ACK,
	CT_TCP_TIME_WAIT,
	CT_TCP_CLOSE,
	CT_TCP_SYN_SENT2,
	CT_TCP_N_STATES,                 /* TCP_CONNTRACK_MAX */
	/* Pseudo states, only in the transition table: */
	CT_TCP_INVALID = CT_TCP_N_STATES,/* sIV: packet is INVALID */
	CT_TCP_IGNORE,                   /* sIG: let it pass, remember it */
};

/* Packet kinds (enum tcp_bit_set), from RST/SYN/FIN/ACK in that order of
 * precedence: a RST|ACK is a RST, a SYN|ACK|FIN a SYN-ACK. */
enum ct_tcp_kind {
	CT_TCP_K_SYN = 0,
	CT_TCP_K_SYNACK,
	CT_TCP_K_FIN,
	CT_TCP_K_ACK,
	CT_TCP_K_RST,
	CT_TCP_K_NONE,
	CT_TCP_K_N
};

/* Per-direction flags (IP_CT_TCP_FLAG_*), in ct_tcp_priv.flags[dir]. */
enum {
	CT_TCPF_WINDOW_SCALE = 0x01,        /* sender offered window scaling */
	CT_TCPF_SACK_PERM = 0x02,           /* sender permits SACK */
	CT_TCPF_CLOSE_INIT = 0x04,          /* sender sent the first FIN */
	CT_TCPF_BE_LIBERAL = 0x08,          /* no window checks (pickup) */
	CT_TCPF_DATA_UNACKNOWLEDGED = 0x10, /* sender has data not yet acked */
	CT_TCPF_MAXACK_SET = 0x20,          /* td_maxack is valid */
	/* Only in ct_tcp_priv.last_flags: */
	CT_TCPF_EXP_CHALLENGE_ACK = 0x40,   /* a SYN in LAST_ACK may draw an
					     * RFC 5961 challenge ACK */
	CT_TCPF_SIMULTANEOUS_OPEN = 0x80,   /* SYN_SENT2 was passed */
};

/* What one direction has shown of its window (struct ip_ct_tcp_state). */
struct ct_tcp_dir {
	uint32_t td_end;     /* highest seq + len sent */
	uint32_t td_maxend;  /* highest right edge the peer allowed
			      * (its ack + window) */
	uint32_t td_maxwin;  /* largest window offered (scaled) */
	uint32_t td_maxack;  /* highest ack sent; valid with MAXACK_SET */
};

struct ct_tcp_priv {
	struct ct_tcp_dir seen[2];  /* by enum ct_dir */
	/* The last packet that passed (or was ignored): retransmission
	 * detection and the resynchronisation after ignored SYNs. */
	uint32_t last_seq;
	uint32_t last_ack;
	uint32_t last_end;
	uint16_t last_win;          /* raw, unscaled */
	uint8_t flags[2];           /* CT_TCPF_*, by direction */
	uint8_t scale[2];           /* window scale shift (0..14) */
	uint8_t retrans;            /* identical ACK segments in a row; wraps
				     * at 256 like the kernel's u8 */
	uint8_t last_index;         /* enum ct_tcp_kind */
	uint8_t last_dir;           /* enum ct_dir */
	uint8_t last_wscale;        /* scale of the last ignored SYN */
	uint8_t last_flags;         /* options of the last ignored SYN,
				     * CT_TCPF_EXP_CHALLENGE_ACK,
				     * CT_TCPF_SIMULTANEOUS_OPEN */
};

/* Sized so that the core plus this stays at 96 bytes for IPv4 (40-byte
 * core) and 120 for IPv6 (the key's 24 other address bytes, conn.h). */
#define CT_TCP_PRIV_SIZE 56
_Static_assert(sizeof(struct ct_tcp_priv) <= CT_TCP_PRIV_SIZE,
	       "TCP private area must fit in 56 bytes");

/* The transition table's cell for (@dir, @kind, @state): a state,
 * CT_TCP_INVALID or CT_TCP_IGNORE.  Exposed for tests. */
uint8_t ct_tcp_next_state(unsigned dir, unsigned kind, unsigned state);

struct ct_conn;
struct ct_proto_ctx;
struct ct_proto_out;

/* The tracker without its fast path for in-window ACKs of established
 * connections: ct_proto_tcp.packet() must answer exactly as this does.
 * Exposed for tests. */
void ct_tcp_packet_general(struct ct_conn *c, const struct ct_proto_ctx *ctx,
			   struct ct_proto_out *out);

#endif /* CT_PROTO_TCP_H */
