/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_sync.c - libFuzzer target for the sync protocol's receiver: the
 * codec and a node in each of its modes, fed hostile datagrams.
 *
 * Input: byte 0 picks the node: bits 0-1 the mode (FTFW, NOTRACK, ALARM,
 * FTFW again), bit 2 a stream node (TCP framing), bit 3 a small resend
 * queue and caches (so that "full" is reached), bits 4-7 seed the first
 * sequence number.  The rest is records: a 2-byte big-endian length and
 * that many bytes, each one datagram (or run of stream bytes), copied
 * into a heap block of exactly its size so that AddressSanitizer sees a
 * read past it; the clock moves 50 ms per record and the node runs after
 * each (sending ACKs, NACKs, resends, ALARM refreshes and expiries into a
 * sink that parses everything the node itself sends).  A record whose
 * length has the top bit set is not sent but turned into a local event
 * (NEW/UPD/DEL of a connection drawn from its bytes), so that the resend
 * queue holds objects for hostile ACKs and NACKs to act on.
 *
 * Invariants, checked after every record (abort on failure):
 *  - every message the node sends parses, and a data message re-encodes
 *    to the same bytes;
 *  - every data message of the input that parses re-encodes and parses
 *    back to the same record;
 *  - each cache's dump shows exactly its active count, within its limit;
 *  - the resend queue never exceeds its bound.
 * scripts/run-fuzz.sh seeds it with seedgen_sync (real conntrackd
 * messages and ctrack's own, in this format).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/sync.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CHECK(c) do { if (!(c)) abort(); } while (0)

static void check_roundtrip(const uint8_t *msg, const struct ct_sync_hdr *h)
{
	struct ct_sync_conn c, d;
	struct ct_sync_hdr h2;
	uint8_t buf[CT_SYNC_CONN_MSG_MAX];
	int n;

	if (ct_sync_msg_class(h) != CT_SYNC_C_DATA || h->type > CT_SYNC_T_CT_DEL)
		return;
	if (ct_sync_msg_parse_conn(msg, h, &c, NULL) != CT_SYNC_OK)
		return;
	n = ct_sync_msg_conn(buf, sizeof(buf), h->type, h->flags, h->seq, &c,
			     CT_SYNC_ENC_TIMEOUT | CT_SYNC_ENC_WSCALE);
	FZ_CHECK(n > 0);
	FZ_CHECK(ct_sync_msg_header(buf, (size_t)n, &h2) == CT_SYNC_OK);
	FZ_CHECK(ct_sync_msg_parse_conn(buf, &h2, &d, NULL) == CT_SYNC_OK);
	/* a message may carry the timeout or window scales without the state
	 * that sends them; compare what the encoder writes */
	if (!(c.has & CT_SYNC_HAS_STATE) && c.orig.l4 == 6)
		c.has &= ~(uint32_t)CT_SYNC_HAS_WSCALE;
	c.has &= ~(uint32_t)(CT_SYNC_HAS_LABELS);
	d.has &= ~(uint32_t)(CT_SYNC_HAS_LABELS);
	if (!(c.has & CT_SYNC_HAS_WSCALE))
		c.wscale[0] = c.wscale[1] = 0;
	FZ_CHECK(memcmp(&c.orig, &d.orig, sizeof(c.orig)) == 0);
	FZ_CHECK(c.status == d.status && c.mark == d.mark && c.timeout_s == d.timeout_s);
	FZ_CHECK(memcmp(c.labels, d.labels, sizeof(c.labels)) == 0);
}

static void walk_input(const uint8_t *p, size_t len)
{
	while (len >= CT_SYNC_HDR_LEN) {
		struct ct_sync_hdr h;

		if (ct_sync_msg_header(p, len, &h) != CT_SYNC_OK)
			return;
		check_roundtrip(p, &h);
		p += h.len;
		len -= h.len;
	}
}

/* Everything the node sends must be well formed. */
static int sink(void *arg, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t off = 0;

	(void)arg;
	while (off < len) {
		struct ct_sync_hdr h;
		struct ct_sync_conn c;

		FZ_CHECK(ct_sync_msg_header(p + off, len - off, &h) == CT_SYNC_OK);
		if (ct_sync_msg_class(&h) == CT_SYNC_C_DATA)
			FZ_CHECK(ct_sync_msg_parse_conn(p + off, &h, &c, NULL) == CT_SYNC_OK);
		else
			FZ_CHECK(ct_sync_msg_class(&h) != CT_SYNC_C_BAD);
		off += h.len;
	}
	FZ_CHECK(off == len);
	return 0;
}

static int count_fn(const struct ct_sync_entry *e, void *arg)
{
	(void)e;
	(*(uint64_t *)arg)++;
	return 0;
}

static void check_node(struct ct_sync_node *n, const struct ct_sync_config *cfg, ct_time_ns now)
{
	struct ct_sync_stats s;
	uint64_t ni = 0, ne = 0;

	ct_sync_node_get_stats(n, &s);
	ct_sync_node_dump(n, CT_SYNC_INTERNAL, now, count_fn, &ni);
	ct_sync_node_dump(n, CT_SYNC_EXTERNAL, now, count_fn, &ne);
	FZ_CHECK(ni == s.internal.active && ne == s.external.active);
	FZ_CHECK(s.internal.active <= cfg->internal_max);
	FZ_CHECK(s.external.active <= cfg->external_max);
	FZ_CHECK(s.rs_queue_len <= cfg->resend_queue_max);
}

static void local_event(struct ct_sync_node *n, const uint8_t *p, size_t len, ct_time_ns now)
{
	struct ct_sync_conn c;

	memset(&c, 0, sizeof(c));
	c.orig.l3 = CT_L3_IPV4;
	c.orig.l4 = (len > 0 && (p[0] & 1)) ? 17 : 6;
	c.orig.src.ip4 = 0x0100000a;
	c.orig.dst.ip4 = 0x0200000a;
	c.orig.sport = (uint16_t)(len > 1 ? p[1] % 16 : 0);
	c.orig.dport = 80;
	c.has = CT_SYNC_HAS_STATUS | CT_SYNC_HAS_TIMEOUT | CT_SYNC_HAS_PORTS;
	c.timeout_s = 60;
	if (c.orig.l4 == 6) {
		c.has |= CT_SYNC_HAS_STATE;
		c.l4state = 3;
	}
	ct_sync_node_local(n, (uint8_t)(len > 2 ? p[2] % 3 : 0), &c, now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ct_sync_config cfg;
	struct ct_sync_node *n;
	ct_time_ns now = 1000000000ull;
	size_t off = 1;

	if (size < 1)
		return 0;
	ct_sync_config_default(&cfg);
	cfg.mode = (enum ct_sync_mode)((data[0] & 3) == 3 ? 0 : data[0] & 3);
	cfg.stream = data[0] & 4;
	if (data[0] & 8) {
		cfg.resend_queue_max = 4;
		cfg.internal_max = 8;
		cfg.external_max = 8;
	}
	cfg.initial_seq = (uint32_t)(data[0] >> 4) * 0x10000001u;
	cfg.seq_window = 1u << 16;
	cfg.hash_seed = 1;
	cfg.send = sink;
	if (ct_sync_node_create(&cfg, now, &n))
		return 0;
	while (off + 2 <= size) {
		size_t len = (size_t)(data[off] << 8 | data[off + 1]);
		bool event = len & 0x8000;
		uint8_t *copy;

		len &= 0x7fff;
		off += 2;
		if (len > size - off)
			len = size - off;
		copy = malloc(len ? len : 1);
		if (!copy)
			break;
		memcpy(copy, data + off, len);
		if (event) {
			local_event(n, copy, len, now);
		} else {
			walk_input(copy, len);
			ct_sync_node_recv(n, copy, len, now);
		}
		free(copy);
		off += len;
		now += 50000000ull;
		ct_sync_node_run(n, now, 0);
		check_node(n, &cfg, now);
	}
	ct_sync_node_destroy(n);
	return 0;
}
