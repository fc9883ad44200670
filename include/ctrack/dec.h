/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/dec.h - an unsigned number in decimal, written into the caller's
 * memory: the one decimal writer of the library's printer (ct_tuple_put's
 * ports, types and ids, src/base/tuple.c) and of programs that print the
 * rest of a line the same way (the tool's conntrack(8) and JSON formats:
 * counters, timeouts, marks, zones, ids, tools/ctrack/format.c).
 *
 * Inline, here, because a listing line writes ten numbers or more: the
 * same writer out of line in the library (a call per number) cost the
 * tool's printer 7.6% more instructions a line (callgrind, ctrack-bench
 * list printer).  The digits are counted first, so that the number is
 * written in place, from its end, two digits at a time from a table of
 * the 100 pairs: one division by 100 per pair instead of one by 10 per
 * digit; below 2^32 (ports, ids, marks, zones, timeouts: nearly every
 * number of a listing) the arithmetic is 32-bit, cheaper than 64-bit.
 *
 * Any thread, at any time; a pure function of its arguments; no
 * allocation; a few nanoseconds.  It cannot fail.
 */
#ifndef CTRACK_DEC_H
#define CTRACK_DEC_H

#include <stdint.h>
#include <string.h>

/* The room ct_dec_put needs: 2^64 - 1 has 20 digits. */
#define CT_DEC_TEXT_MAX 20

static const char ct_dec_digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* @v (an lvalue of type T, consumed) in decimal, written backwards from
 * @q (the end, the digits already counted) to the first digit, where @q
 * is left: one loop for the 32-bit and the 64-bit arithmetic. */
#define CT_DEC_BACKWARDS(q, v, T)                                          \
	do {                                                               \
		while ((v) >= 100) {                                       \
			unsigned r_ = (unsigned)((v) % 100);               \
			(v) = (T)((v) / 100);                              \
			(q) -= 2;                                          \
			memcpy((q), ct_dec_digits2 + 2 * r_, 2);           \
		}                                                          \
		if ((v) >= 10) {                                           \
			(q) -= 2;                                          \
			memcpy((q), ct_dec_digits2 + 2 * (v), 2);          \
		} else {                                                   \
			*--(q) = (char)('0' + (v));                        \
		}                                                          \
	} while (0)

static inline unsigned ct_dec_len32(uint32_t v)
{
	return v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : v < 100000 ? 5
	     : v < 1000000 ? 6 : v < 10000000 ? 7 : v < 100000000 ? 8
	     : v < 1000000000 ? 9 : 10;
}

/*
 * ct_dec_put - @v in decimal, as printf's "%llu" writes it (no sign, no
 * leading zeros, "0" for zero), at @p (CT_DEC_TEXT_MAX bytes of room, or
 * just the digits @v has); no terminating NUL.  Returns the end of the
 * text.  Writes nothing outside the digits.
 */
static inline char *ct_dec_put(char *p, uint64_t v)
{
	uint64_t hi;
	unsigned n = 10;
	char *e, *q;

	if (v <= 0xffffffffu) {
		uint32_t w = (uint32_t)v;

		e = p + ct_dec_len32(w);
		q = e;
		CT_DEC_BACKWARDS(q, w, uint32_t);
		return e;
	}
	/* 11 to 20 digits: counted by powers of ten above 10^10 */
	for (hi = v / 10000000000ull; hi; hi /= 10)
		n++;
	e = p + n;
	q = e;
	CT_DEC_BACKWARDS(q, v, uint64_t);
	return e;
}

#endif /* CTRACK_DEC_H */
