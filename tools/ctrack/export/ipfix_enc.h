/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ipfix_enc.h - IPFIX (RFC 7011) messages written straight into a buffer:
 * the templates ctrack exports, and its flow records, byte by byte.
 *
 * Sixteen templates, chosen per record by four bits: biflow (RFC 5103
 * reverse counters and flags, enterprise 29305), IPv6, ICMP (type and
 * code instead of ports), NAT (RFC 8158's post-NAT elements).  A session
 * uses the four of its biflow setting, and the four NAT ones besides when
 * its table does NAT (a session without NAT announces exactly what it
 * did before NAT existed, and its records are byte for byte the same).
 * Template ids are 256 + IPFIX_T_*; the elements, in wire order:
 *
 *   flowStartMilliseconds(152) flowEndMilliseconds(153) octetDeltaCount(1)
 *   packetDeltaCount(2) [reverseOctetDeltaCount reversePacketDeltaCount]
 *   flowId(148) sourceIPv{4,6}Address(8/27) destinationIPv{4,6}Address(12/28)
 *   ingressVRFID(234) sourceTransportPort(7) destinationTransportPort(11) |
 *   icmpTypeCodeIPv{4,6}(32/139) [reverseTcpControlBits] tcpControlBits(6)
 *   protocolIdentifier(4) flowEndReason(136)
 *   [postNATSourceIPv{4,6}Address(225/281)
 *    postNATDestinationIPv{4,6}Address(226/282)
 *    [postNAPTSourceTransportPort(227) postNAPTDestinationTransportPort(228)]]
 *
 * (the reverse flags before the forward ones: nfdump 1.7.1 reads a
 * reverse element it does not know as the forward one, so the later,
 * forward value wins there - docs/export.md).  The NAT elements come
 * last, so a NAT record is a plain record with 12 (IPv4 with ports), 8
 * (IPv4 ICMP), 36 or 32 bytes after it; ICMP NAT records carry no
 * post-NAT id, as the ICMP records carry no id (docs/export.md).
 * natEvent (230) is not sent: docs/export.md says why.
 *
 * Why by hand: libfixbuf's fBufAppend walked its template per record
 * and cost 2,300 instructions of a record's 3,800 (callgrind, ctrack read
 * --ipfix, docs/export.md); writing the fields in order costs ~100.  The
 * encoder is checked against libfixbuf, which encodes the same records
 * to the same bytes in tests/export/test_ipfix_enc.c, and nfcapd and
 * python3-ipfix decode what it sends (tests/export/test_ipfix.py).
 *
 * Not thread-safe: one encoder per sink, one thread.  No allocation, no
 * failure beyond "the message is full".
 */
#ifndef CTRACK_TOOL_EXPORT_IPFIX_ENC_H
#define CTRACK_TOOL_EXPORT_IPFIX_ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	IPFIX_T_ICMP = 1,
	IPFIX_T_V6 = 2,
	IPFIX_T_BI = 4,
	IPFIX_T_NAT = 8,
	IPFIX_T_COUNT = 16,
};
#define IPFIX_TID_BASE 256
#define IPFIX_MSG_HDR 16
#define IPFIX_SET_HDR 4
#define IPFIX_PEN_REVERSE 29305u   /* RFC 5103 */
#define IPFIX_TMPL_MSG_MAX 1024    /* the largest template message */

/* One flow record, host order; which fields go out is the template's. */
struct ipfix_rec {
	uint64_t start_ms, end_ms;     /* Unix time, ms */
	uint64_t octets, packets;
	uint64_t r_octets, r_packets;  /* biflow: the reply direction */
	uint64_t flow_id;
	uint8_t src[16], dst[16];      /* network order; IPv4 in bytes 0-3 */
	uint32_t vrf;
	uint16_t sport, dport;
	uint16_t icmp;                 /* type << 8 | code */
	uint16_t tcp_flags, r_tcp_flags;
	uint8_t proto;
	uint8_t reason;                /* flowEndReason */
	uint8_t tmpl;                  /* IPFIX_T_* bits (IPFIX_T_BI is the
					* encoder's; IPFIX_T_NAT is ignored by
					* an encoder without NAT) */
	/* IPFIX_T_NAT: the record's source and destination after the NAT,
	 * network order (IPv4 in bytes 0-3), and ports, host order */
	uint8_t nat_src[16], nat_dst[16];
	uint16_t nat_sport, nat_dport;
};

struct ipfix_enc {
	uint8_t *buf;
	uint32_t cap;                  /* the message's largest size */
	uint32_t len;                  /* bytes written, header included */
	uint32_t set_off;              /* the open data set's header, 0: none */
	uint16_t set_tmpl;             /* its template's bits */
	uint32_t recs;                 /* records in the message */
	uint32_t seq;                  /* data records sent before it (RFC 7011
					* 3.1: of this stream and domain) */
	uint32_t domain;
	bool biflow;
	bool nat;                      /* the NAT templates are announced */
	uint16_t rec_len[IPFIX_T_COUNT];   /* ipfix_enc_rec_len, once */
};

/* Bytes a record of template bits @tmpl takes. */
unsigned ipfix_enc_rec_len(unsigned tmpl);

/* Start an encoder writing messages of at most @cap bytes into @buf
 * (cap >= 256); @nat: the session's records may carry IPFIX_T_NAT. */
void ipfix_enc_init(struct ipfix_enc *e, uint8_t *buf, uint32_t cap, uint32_t domain,
		    bool biflow, bool nat);

/*
 * ipfix_enc_templates - a whole message holding the session's four
 * templates (eight with NAT), into @out (@cap bytes; IPFIX_TMPL_MSG_MAX
 * always suffice), exported at
 * @export_s (Unix seconds).  The message being built in the encoder is
 * left alone.  Returns the length, 0 when @cap is too small.
 */
size_t ipfix_enc_templates(const struct ipfix_enc *e, uint8_t *out, size_t cap,
			   uint32_t export_s);
/* ... or half of them (@part 0: the plain four, 1: the NAT four; 0 for a
 * part the session does not have), for messages smaller than all eight
 * (692 bytes for biflows): 332 and 380 bytes. */
size_t ipfix_enc_templates_part(const struct ipfix_enc *e, unsigned part, uint8_t *out,
				size_t cap, uint32_t export_s);

/* ipfix_enc_add - append @r to the message being built: true, or false
 * when it does not fit (finish the message, then add it again). */
bool ipfix_enc_add(struct ipfix_enc *e, const struct ipfix_rec *r);

/*
 * ipfix_enc_finish - close the message: its header (length, @export_s,
 * sequence number, domain) written, the sequence advanced by its records.
 * Returns its length (in e->buf), 0 when it holds no record; the next
 * add starts a new message in the same buffer.
 */
size_t ipfix_enc_finish(struct ipfix_enc *e, uint32_t export_s);

#endif
