/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.h - big-endian reads and writes of header fields, for the tests,
 * benchmarks and fuzz targets that build frames by hand (tests/support).
 *
 * Byte by byte, so that a field may sit at any offset of a buffer.
 */
#ifndef CT_TS_WIRE_H
#define CT_TS_WIRE_H

#include <stdint.h>

static inline void ts_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void ts_put32(uint8_t *p, uint32_t v)
{
	ts_put16(p, (uint16_t)(v >> 16));
	ts_put16(p + 2, (uint16_t)v);
}

static inline uint16_t ts_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t ts_get32(const uint8_t *p)
{
	return (uint32_t)ts_get16(p) << 16 | ts_get16(p + 2);
}

#endif /* CT_TS_WIRE_H */
