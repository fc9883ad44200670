/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/packet.h - a frame parsed into what the tracker needs.
 *
 * ct_parse_frame() turns one captured frame into a struct ct_packet: the
 * link layer is peeled off (Ethernet with any stack of 802.1Q/802.1ad tags,
 * MPLS is not decapsulated, Linux SLL/SLL2, raw IP, BSD NULL/loopback,
 * NFLOG), the IPv4 or IPv6 header and extension chain is walked, and the
 * layer-4 header is validated and summarised.  Nothing is copied: the
 * packet keeps pointers into the caller's frame, so the frame must outlive
 * every use of the packet (normally: one ct_process() call).
 *
 * Parsing never touches a table, never allocates and never fails loudly: a
 * frame that cannot be tracked comes back with a kind (not IP, a non-first
 * fragment, invalid) and, when invalid, a reason that callers count.  As
 * in nf_conntrack, the outer header of a tunnel is what gets tracked; there
 * is no decapsulation.
 *
 * Checksums are not verified here: verifying costs a pass over the
 * payload, and whether to do it is a per-namespace setting
 * (nf_conntrack_checksum).  ct_packet_l4_csum_ok() does it on demand.
 *
 * Thread safety: ct_parse_* are pure functions of their inputs and may run
 * on any number of threads at once.  Cost: proportional to the header
 * bytes, a few tens of nanoseconds for a plain TCP/IPv4 frame.
 */
#ifndef CTRACK_PACKET_H
#define CTRACK_PACKET_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/tuple.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t ct_time_ns;

/* Link types, numbered as libpcap's LINKTYPE_* values. */
enum ct_linktype {
	CT_LINK_NULL = 0,        /* BSD loopback: 4-byte host-order family */
	CT_LINK_ETHERNET = 1,
	CT_LINK_RAW = 101,       /* raw IPv4 or IPv6, version from the header */
	CT_LINK_LOOP = 108,      /* OpenBSD loopback: 4-byte network-order family */
	CT_LINK_LINUX_SLL = 113,
	CT_LINK_IPV4 = 228,
	CT_LINK_IPV6 = 229,
	CT_LINK_NFLOG = 239,
	CT_LINK_LINUX_SLL2 = 276,
	CT_LINK_DLT_RAW12 = 12,  /* DLT_RAW on some BSDs/Linux libpcap */
	CT_LINK_DLT_RAW14 = 14,
};

/* What kind of frame this was. */
enum ct_pkt_kind {
	CT_PKT_TRACKABLE = 0,   /* IP with a usable L4: give it to ct_process */
	CT_PKT_NOT_IP,          /* ARP, LLDP, ...: not conntrack's business */
	CT_PKT_FRAGMENT,        /* a fragment: needs reassembly (ct_defrag) */
	CT_PKT_INVALID,         /* malformed; see reason */
	CT_PKT_UNSUPPORTED_LINK,/* link type this parser does not know */
};

/*
 * Why a packet is invalid.  The parser produces the CT_PR_* header
 * reasons; the trackers add the CT_PR_* protocol reasons (the kernel's
 * "nf_ct_tcp: ..." log messages) when they reject a packet.
 * Keep ct_parse_reason_name() in step with this list.
 */
enum ct_parse_reason {
	CT_PR_OK = 0,
	CT_PR_LINK_TRUNCATED,      /* frame shorter than its link header */
	CT_PR_IP_TRUNCATED,        /* frame shorter than the IP header */
	CT_PR_IP_BAD_VERSION,      /* version nibble is neither 4 nor 6 */
	CT_PR_IP_BAD_HDR_LEN,      /* IPv4 IHL < 5 or beyond total length */
	CT_PR_IP_BAD_TOTAL_LEN,    /* IPv4 total / IPv6 payload length impossible */
	CT_PR_IP_BAD_CSUM,         /* IPv4 header checksum wrong */
	CT_PR_IP6_EXT_TRUNCATED,   /* an IPv6 extension header is cut short */
	CT_PR_IP6_EXT_BAD,         /* an IPv6 extension header is malformed */
	CT_PR_FRAG_BAD,            /* impossible fragment (offset/length) */
	CT_PR_L4_TRUNCATED,        /* L4 header cut short (by lengths or capture) */
	CT_PR_TCP_BAD_DOFF,        /* TCP data offset < 5 or past the segment */
	CT_PR_TCP_BAD_FLAGS,       /* invalid TCP flag combination */
	CT_PR_UDP_BAD_LEN,         /* UDP length field disagrees with IP */
	CT_PR_UDPLITE_BAD_COV,     /* UDP-Lite checksum coverage invalid */
	CT_PR_SCTP_BAD,            /* SCTP chunk structure invalid */
	CT_PR_ICMP_BAD,            /* ICMP error without a usable inner header */
	CT_PR_L4_BAD_CSUM,         /* L4 checksum wrong (checksum checking on) */
	/* protocol-tracker reasons (set by ct_process) */
	CT_PR_TCP_INVALID_STATE,   /* "invalid packet ignored in state X" */
	CT_PR_TCP_OUT_OF_WINDOW,   /* SEQ/ACK beyond the window's upper bound */
	CT_PR_TCP_INVALID_RST,     /* RST with unacceptable sequence */
	CT_PR_TCP_NEW_NOT_SYN,     /* no SYN on a new connection, tcp_loose=0 */
	CT_PR_SCTP_INVALID,        /* SCTP chunk/vtag rejected by the tracker */
	CT_PR_ICMP_NO_MATCH,       /* ICMP error for an untracked connection */
	CT_PR_ICMP_UNTRACKED_TYPE, /* ICMP type that cannot start a connection */
	CT_PR_TABLE_FULL,          /* no room and nothing could be evicted */
	CT_PR_NS_DYING,            /* namespace is being destroyed */
	CT_PR_NS_UNKNOWN,          /* zone has no namespace */
	CT_PR_NO_MEMORY,           /* could not allocate an entry */
	CT_PR_CHAIN_TOO_LONG,      /* row at its chain limit (hash flood) */
	/* parser reasons added with the parser (kept after the tracker ones
	 * so that earlier values keep their numbers) */
	CT_PR_IP6_NO_NEXT_HDR,     /* IPv6 chain ends in "no next header"
				    * (59): conntrack counts it invalid */
	CT_PR_IP6_BAD_ADDR,        /* multicast source or scope-0 multicast
				    * destination: ip6_rcv drops it */
	CT_PR_ICMP_BAD_TYPE,       /* ICMP type > 18 ("invalid icmp type") */
	CT_PR_GRE_BAD,             /* enhanced GRE (version 1) not carrying PPP */
	CT_PR_UDPLITE_NO_CSUM,     /* UDP-Lite checksum zero ("checksum missing") */
	CT_PR_MAX
};

/* A reason's name, as `ctrack read --stats` prints it, or "unknown" for a
 * value it does not know.  Any thread, O(1). */
const char *ct_parse_reason_name(enum ct_parse_reason r);

/* TCP header flag bits, as in byte 13 of the header. */
enum {
	CT_TCP_FIN = 0x01,
	CT_TCP_SYN = 0x02,
	CT_TCP_RST = 0x04,
	CT_TCP_PSH = 0x08,
	CT_TCP_ACK = 0x10,
	CT_TCP_URG = 0x20,
	CT_TCP_ECE = 0x40,
	CT_TCP_CWR = 0x80,
};

/* TCP options found in the header (ct_tcp_info.opts). */
enum {
	CT_TCPOPT_MSS = 0x01,
	CT_TCPOPT_WSCALE = 0x02,
	CT_TCPOPT_SACK_PERM = 0x04,
	CT_TCPOPT_SACK = 0x08,
	CT_TCPOPT_TIMESTAMP = 0x10,
};

struct ct_tcp_info {
	uint32_t seq;
	uint32_t ack;
	uint32_t sack_right;  /* as tcp_sack() computes it: the highest right
			       * edge "after" the ACK in the first SACK
			       * option; the ACK number when there is none */
	uint32_t tsval, tsecr;
	uint16_t window;      /* raw, unscaled */
	uint16_t mss;
	uint8_t flags;        /* CT_TCP_* */
	uint8_t hdr_len;      /* header length in bytes, options included */
	uint8_t wscale;       /* window scale shift (capped at 14) if CT_TCPOPT_WSCALE */
	uint8_t opts;         /* CT_TCPOPT_* */
};

struct ct_icmp_info {
	uint8_t type;
	uint8_t code;
	uint16_t id;          /* queries: identifier */
	bool is_error;        /* dest unreach, time exceeded, too big, ... */
	bool inner_ok;        /* errors: the quoted header parsed into inner */
	struct ct_tuple inner;/* errors: tuple of the quoted packet, as sent */
};

struct ct_sctp_info {
	uint32_t vtag;
	uint32_t chunk_map;   /* bit n set: a chunk of type n (< 32) is present */
	uint8_t first_chunk;  /* type of the first chunk */
	uint8_t n_chunks;
	uint32_t init_tag;    /* INIT / INIT ACK: initiate tag, else 0 */
};

struct ct_gre_info {
	uint8_t version;
	uint16_t ptype;       /* encapsulated protocol */
	uint32_t key;         /* key field, if present */
	bool has_key;
};

struct ct_packet {
	struct ct_tuple tuple;      /* this packet's tuple, as it travels */
	ct_time_ns ts;              /* capture timestamp, informational */
	const uint8_t *l3;          /* IP header, inside the caller's frame */
	const uint8_t *l4;          /* L4 header, inside the caller's frame */
	uint32_t l3_len;            /* IP datagram length per its header: the
				     * byte count nf_conntrack_acct adds */
	uint32_t l4_len;            /* L4 header + payload per the IP lengths */
	uint32_t l4_caplen;         /* L4 bytes actually present in the frame */
	uint32_t payload_len;       /* L4 payload length (after the L4 header) */
	uint8_t kind;               /* enum ct_pkt_kind */
	uint8_t reason;             /* enum ct_parse_reason when INVALID */
	uint8_t ttl;                /* IPv4 TTL / IPv6 hop limit */
	uint8_t n_vlan;             /* 802.1Q/802.1ad tags seen */
	uint16_t vlan_outer;        /* outermost VLAN id, if n_vlan > 0 */
	uint16_t vlan_inner;        /* innermost VLAN id, if n_vlan > 0 */
	uint32_t ifindex;           /* interface the frame came in on (caller) */
	uint16_t l3_hdr_len;        /* IPv4 header incl. options / IPv6 incl.
				     * extension headers up to the L4 header;
				     * for a fragment, up to its data (after
				     * the IPv6 fragment header), where l4
				     * then points */
	/* fragments (kind == CT_PKT_FRAGMENT, or an atomic IPv6 fragment) */
	uint32_t frag_id;
	uint16_t frag_offset;       /* in bytes */
	bool frag_more;
	bool is_fragment;           /* part of a fragmented datagram */
	uint16_t frag_max_size;     /* a datagram ct_defrag reassembled: the
				     * IP length of its largest fragment, the
				     * kernel's IPCB/IP6CB frag_max_size (a
				     * router fragments it to that size again
				     * on output); 0 otherwise */
	bool truncated;             /* capture cut the frame short (caplen <
				     * wire length), headers still complete */
	bool ip_csum_bad;           /* IPv4 header checksum wrong.  The kernel
				     * drops such packets in ip_rcv(), before
				     * conntrack; ct_process() calls them
				     * INVALID (ip_bad_csum) unless checksum
				     * checking is off, so that captures
				     * taken with offload stay usable */
	union {
		struct ct_tcp_info tcp;
		struct ct_icmp_info icmp;
		struct ct_sctp_info sctp;
		struct ct_gre_info gre;
	} u;
};

/*
 * ct_packet_moved - the frame @pkt was parsed from, at @from, has been
 * copied to @to (a caller that keeps packets beyond the life of its
 * reader's buffer, as a burst does): point @pkt into the copy.  The
 * packet's only pointers are l3 and l4.  Cost: two compares.
 */
static inline void ct_packet_moved(struct ct_packet *pkt, const uint8_t *from,
				   const uint8_t *to)
{
	if (pkt->l3)
		pkt->l3 = to + (pkt->l3 - from);
	if (pkt->l4)
		pkt->l4 = to + (pkt->l4 - from);
}

/*
 * ct_parse_frame - parse one captured frame of link type @linktype.
 * @caplen bytes are present at @frame; @wirelen is the frame's length on
 * the wire (>= caplen).  Fills @pkt completely and returns its kind
 * (also stored in pkt->kind).  @pkt->ifindex and @pkt->ts are set from
 * the arguments.  Any thread: no table, no allocation, no lock; cost:
 * the headers' bytes, read once and checked against @caplen.  Cannot
 * fail: a frame it cannot use is CT_PKT_INVALID (pkt->reason) or
 * CT_PKT_UNTRACKED.
 */
enum ct_pkt_kind ct_parse_frame(struct ct_packet *pkt, int linktype,
				const uint8_t *frame, uint32_t caplen,
				uint32_t wirelen, ct_time_ns ts);

/*
 * ct_parse_ip - parse starting at an IPv4 or IPv6 header (version from
 * the first nibble).  Same contract as ct_parse_frame().
 */
enum ct_pkt_kind ct_parse_ip(struct ct_packet *pkt, const uint8_t *ip,
			     uint32_t caplen, uint32_t wirelen, ct_time_ns ts);

/*
 * ct_packet_l4_csum_ok - verify the L4 checksum (TCP, UDP, UDP-Lite,
 * ICMP, ICMPv6, SCTP CRC32c; GRE and others: always true).  Returns true
 * when it is right, or when it cannot be checked because the capture cut
 * the payload (pkt->truncated), or when conntrack would not check it: a
 * UDP checksum of zero (none; udp_error skips it in both families), ICMP
 * over IPv6, a fragment.  The rules are nf_conntrack's, not the RFCs':
 * see checksum.c.  Cost: one pass over the L4 bytes.
 */
bool ct_packet_l4_csum_ok(const struct ct_packet *pkt);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_PACKET_H */
