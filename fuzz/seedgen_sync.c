/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seedgen_sync.c - seeds for fuzz_sync: seedgen_sync OUT_DIR [ignored...]
 *
 * Writes inputs in fuzz_sync's format (fuzz_sync.c): each mode and
 * framing, with datagrams of messages conntrackd 1.4.7 really sent
 * (tests/sync/conntrackd_wire.h), ctrack's own messages for every kind of
 * connection, and the control messages of a lossy FTFW exchange (gaps,
 * ACK, NACK, HELLO, RESYNC) around local events, so that the fuzzer
 * starts from inputs that reach deep into the node.  run-fuzz.sh passes
 * the capture files as further arguments, as to every seed generator;
 * they are not needed here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/sync.h"
#include "../tests/sync/conntrackd_wire.h"

struct seed {
	uint8_t buf[65536];
	size_t len;
};

static void rec(struct seed *s, const void *p, size_t n, bool event)
{
	if (s->len + 2 + n > sizeof(s->buf))
		return;
	s->buf[s->len++] = (uint8_t)((n >> 8) | (event ? 0x80 : 0));
	s->buf[s->len++] = (uint8_t)n;
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void ctl(struct seed *s, uint8_t flags, uint32_t seq, uint32_t from, uint32_t to)
{
	uint8_t b[16];
	int n = ct_sync_msg_ctl(b, sizeof(b), flags, seq, from, to);

	if (n > 0)
		rec(s, b, (size_t)n, false);
}

static void data(struct seed *s, const uint8_t *fixture, size_t n, uint32_t seq, uint8_t flags)
{
	uint8_t b[1024];

	memcpy(b, fixture, n);
	b[1] = flags;
	b[4] = (uint8_t)(seq >> 24);
	b[5] = (uint8_t)(seq >> 16);
	b[6] = (uint8_t)(seq >> 8);
	b[7] = (uint8_t)seq;
	rec(s, b, n, false);
}

static int write_seed(const char *dir, unsigned i, const struct seed *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sync-%03u", dir, i);
	f = fopen(path, "wb");
	if (!f)
		return -errno;
	fwrite(s->buf, 1, s->len, f);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { const uint8_t *p; size_t n; } fx[] = {
		{ cw_tcp4, sizeof(cw_tcp4) }, { cw_udp4z, sizeof(cw_udp4z) },
		{ cw_icmp4, sizeof(cw_icmp4) }, { cw_tcp6, sizeof(cw_tcp6) },
		{ cw_snat4, sizeof(cw_snat4) }, { cw_dnat4, sizeof(cw_dnat4) },
	};
	unsigned k = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: seedgen_sync OUT_DIR\n");
		return 2;
	}
	for (unsigned mode = 0; mode < 16; mode++) {
		static struct seed s;
		uint8_t ev[3] = { 0, 0, 0 };
		uint32_t seq = 1000 + mode;

		memset(&s, 0, sizeof(s));
		s.buf[s.len++] = (uint8_t)mode;
		ctl(&s, CT_SYNC_F_ALIVE | CT_SYNC_F_HELLO, seq++, 0, 0);
		for (unsigned i = 0; i < 6; i++) {
			ev[1] = (uint8_t)i;
			ev[2] = (uint8_t)(i % 3);
			rec(&s, ev, sizeof(ev), true);
			data(&s, fx[i].p, fx[i].n, seq, (mode & 1) ? CT_SYNC_F_HELLO : 0);
			seq += (i == 3) ? 3 : 1;                 /* a gap */
		}
		ctl(&s, CT_SYNC_F_ACK, seq++, 1000 - 50, 1000);
		ctl(&s, CT_SYNC_F_NACK, seq++, 0x10000001u * (mode >> 4), 0x10000001u * (mode >> 4) + 3);
		ctl(&s, CT_SYNC_F_RESYNC, seq++, 0, 0);
		/* two messages in one datagram, then a replay */
		{
			uint8_t b[512];

			memcpy(b, cw_tcp4, sizeof(cw_tcp4));
			memcpy(b + sizeof(cw_tcp4), cw_udp4z, sizeof(cw_udp4z));
			b[7] = (uint8_t)seq;
			b[sizeof(cw_tcp4) + 7] = (uint8_t)(seq + 1);
			rec(&s, b, sizeof(cw_tcp4) + sizeof(cw_udp4z), false);
			rec(&s, b, sizeof(cw_tcp4), false);
		}
		ctl(&s, CT_SYNC_F_ALIVE, seq + 5000000, 0, 0);
		if (write_seed(argv[1], k++, &s)) {
			perror(argv[1]);
			return 1;
		}
	}
	return 0;
}
