/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frame.h - an Ethernet frame for a parsed packet (tests/support).
 */
#ifndef CT_TS_FRAME_H
#define CT_TS_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/packet.h"

/*
 * ts_frame - write into @f the Ethernet + IPv4 + TCP/UDP frame that
 * ct_parse_frame() parses back into @p: its tuple (IPv4, TCP or UDP),
 * TCP's sequence numbers, flags, window and, with a header over 20 bytes,
 * the MSS, SACK-permitted and window-scale options; DF set, TTL 64, IPv4
 * header checksum.  With @payload the payload's zeros follow and the L4
 * checksum is set; without, the frame ends after the L4 header (a capture
 * cut at the headers: its L4 checksum cannot be checked, and is left 0).
 * Returns the bytes written; *@wire gets the frame's length on the wire.
 * @f must hold TS_FRAME_HDR_MAX bytes, plus the payload when asked.
 */
#define TS_FRAME_HDR_MAX 66
uint32_t ts_frame(uint8_t *f, const struct ct_packet *p, bool payload, uint32_t *wire);

#endif /* CT_TS_FRAME_H */
