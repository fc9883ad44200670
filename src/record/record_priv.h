/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_priv.h - what the record layer's files share (private to
 * src/record/): little-endian field access for the encodings, and each
 * protocol's record size.
 *
 * Encodings are little-endian with addresses in network order, written
 * and read byte by byte through these helpers, so that a state file
 * written on one machine reads on any other and no struct's padding ever
 * reaches a file.
 */
#ifndef CT_RECORD_PRIV_H
#define CT_RECORD_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctrack/record.h"

static inline void rec_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void rec_put32(uint8_t *p, uint32_t v)
{
	rec_put16(p, (uint16_t)v);
	rec_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void rec_put64(uint8_t *p, uint64_t v)
{
	rec_put32(p, (uint32_t)v);
	rec_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t rec_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t rec_get32(const uint8_t *p)
{
	return rec_get16(p) | (uint32_t)rec_get16(p + 2) << 16;
}

static inline uint64_t rec_get64(const uint8_t *p)
{
	return rec_get32(p) | (uint64_t)rec_get32(p + 4) << 32;
}

/*
 * The bytes of union ct_record_proto a protocol's record uses (the rest is
 * zero in every record this library makes or accepts), and the bytes its
 * encoding takes (record_codec.c).  0 for protocols without a private
 * area.
 */
size_t ct_record_proto_size(uint8_t l4);
size_t ct_record_proto_enc_size(uint8_t l4);

/* Ask for the memory the import of @rec will touch (record_import.c); an
 * attached thread, outside a read-side section.  Only a hint: it changes
 * nothing. */
struct ct_thread;
void ct_record_prefetch(struct ct_thread *thr, const struct ct_record *rec);

#endif /* CT_RECORD_PRIV_H */
