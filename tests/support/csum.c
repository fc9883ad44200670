/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * csum.c - checksums for hand-built frames (csum.h): an implementation of
 * its own, so that it can judge the library's.
 */
#include <string.h>

#include "csum.h"
#include "wire.h"

uint32_t ts_sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

uint16_t ts_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

uint16_t ts_csum(const uint8_t *p, size_t n)
{
	return ts_fold(ts_sum16(p, n, 0));
}

void ts_ip4_csum(uint8_t *ip)
{
	ts_put16(ip + 10, 0);
	ts_put16(ip + 10, ts_csum(ip, (size_t)(ip[0] & 15) * 4));
}

/* The pseudo-header's sum for @len bytes of protocol @proto. */
static uint32_t pseudo(const uint8_t *ip, bool v6, uint8_t proto, uint32_t len)
{
	if (!v6)
		return ts_sum16(ip + 12, 8, 0) + (len & 0xffff) + proto;
	return ts_sum16(ip + 8, 32, 0) + (len >> 16) + (len & 0xffff) + proto;
}

void ts_l4_csum(uint8_t *ip, bool v6, uint8_t proto, uint8_t *l4, uint32_t len)
{
	uint16_t c;

	switch (proto) {
	case 6:
		if (len < 20)
			return;
		ts_put16(l4 + 16, 0);
		ts_put16(l4 + 16, ts_fold(ts_sum16(l4, len, pseudo(ip, v6, 6, len))));
		break;
	case 17:
		if (len < 8)
			return;
		ts_put16(l4 + 6, 0);
		c = ts_fold(ts_sum16(l4, len, pseudo(ip, v6, 17, len)));
		ts_put16(l4 + 6, c ? c : 0xffff);
		break;
	case 136: {
		/* the kernel sums UDP-Lite over IPv4 with protocol 17 and the
		 * length's low byte in one word (src/parse/checksum.c says why);
		 * over IPv6 as UDP */
		uint32_t ps;

		if (len < 8)
			return;
		ts_put16(l4 + 6, 0);
		ps = v6 ? pseudo(ip, true, 17, len) : ts_sum16(ip + 12, 8, 0) + 17 + (len & 0xff);
		c = ts_fold(ts_sum16(l4, len, ps));
		ts_put16(l4 + 6, c ? c : 0xffff);
		break;
	}
	case 1:
	case 58:
		if (len < 8)
			return;
		ts_put16(l4 + 2, 0);
		ts_put16(l4 + 2, ts_fold(ts_sum16(l4, len, v6 ? pseudo(ip, true, proto, len) : 0)));
		break;
	case 132: {
		uint32_t crc;

		if (len < 12)
			return;
		memset(l4 + 8, 0, 4);
		crc = ts_crc32c(l4, len);
		l4[8] = (uint8_t)crc;
		l4[9] = (uint8_t)(crc >> 8);
		l4[10] = (uint8_t)(crc >> 16);
		l4[11] = (uint8_t)(crc >> 24);
		break;
	}
	default:
		break;
	}
}

uint32_t ts_crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}
