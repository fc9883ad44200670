/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * track_bytecode.h - the little language fuzz_track reads, shared with the
 * seed generator (seedgen_track.c) that writes it from real captures.
 *
 * A fuzz input is not a packet but a program: a 4-byte header that
 * configures the table, then operations, each an opcode byte followed by
 * its argument bytes.  Reading past the end of the input yields zeros, so
 * every byte string is a valid program and a mutation of one byte changes
 * one decision.  Packets are described by what a tracker cares about
 * (which of a small pool of connections, which direction, which flags,
 * how long, how far off in sequence) and the harness builds real frames
 * from that, keeping each connection's sequence numbers consistent, so
 * that mutations reach deep states (ESTABLISHED, TIME_WAIT, SCTP
 * shutdown) instead of dying in the parser.  Arbitrary frames still get
 * in through OP_RAW.
 *
 * Header:
 *   h0  bit0 checksum on       bit1 tcp_loose off     bit2 tcp_be_liberal
 *       bit3 no event handler  bit4 acct off          bit5 timestamps on
 *       bit6 labels            bit7 online resize off
 *   h1  table maximum: 0 unlimited, else 1 + h1 % 48
 *   h2  bits 0-1: initial rows 64 << n; bits 2-5: max_chain (0: default);
 *       bit 6: QSBR RCU flavour (else memb); bit 7: NAT - the table does
 *       NAT and single packets (OP_PKT, OP_FRAG, OP_RAW) take the two-step
 *       path: ct_classify, a rule chosen from the packet's tuple (none,
 *       source NAT to one address, to a range of addresses and ports with
 *       `random`, destination NAT with a port change, masquerade, or the
 *       first packet dropped), ct_pending_confirm, and the frame
 *       translated with ct_nat_translate and checked
 *   h3  resize_load_pct: 0 default, else 1 + h3 % 100
 *
 * Operations (opcode = byte % OP_COUNT):
 *   OP_PKT      sd fl ln md        one packet (see below)
 *   OP_TIME     b                  advance time (ms, s, min, days)
 *   OP_SEQ      s d x x x x        set slot s's next sequence number in dir d
 *   OP_TUPLE    s f v w            change one field of slot s's tuple
 *   OP_BURST    n {sd fl ln md}*   1 + n % 16 packets in one ct_process_burst
 *   OP_GC       b                  collector: full pass, or a 1 ns slice
 *   OP_FLUSH    b                  flush one zone or all
 *   OP_NS_NEW   b m                create namespace 1 + b % 3 (max m % 8)
 *   OP_NS_DEL   b                  destroy a batch of namespaces 1..3
 *   OP_MARK     s d m              set mark (and labels) through slot s
 *   OP_LOOKUP   s d                look slot s up, check what comes back
 *   OP_CHECK                       check every invariant now
 *   OP_RAW      lt n bytes...      an arbitrary frame of n bytes
 *   OP_SET      f v                change zone (f >> 4)'s settings; f & 15 == 14:
 *                                  collector policy, 15: re-attach the thread
 *   OP_FRAG     s d ln md          a datagram of slot s in two fragments
 *   OP_FLOOD    s n k              4 * (1 + n % 128) new tuples like slot s
 *
 * Packet spec (4 bytes): sd = slot (bits 0-3), direction (bit 4), path
 * (bits 5-7: 0,1 Ethernet; 2 raw IP; 3 802.1Q; 4,5 struct filled by the
 * caller; 6 one byte corrupted; 7 capture cut short); fl = flags (TCP
 * flags by table or raw, ICMP type, SCTP chunk); ln = payload bytes;
 * md = modifiers (bits 0-1 sequence: next, retransmission, far ahead,
 * bad ack; bit 2 zero window; bit 3 options; bits 4-7 window scale or
 * ICMP code).
 */
#ifndef FUZZ_TRACK_BYTECODE_H
#define FUZZ_TRACK_BYTECODE_H

enum fz_op {
	OP_PKT = 0,
	OP_TIME,
	OP_SEQ,
	OP_TUPLE,
	OP_BURST,
	OP_GC,
	OP_FLUSH,
	OP_NS_NEW,
	OP_NS_DEL,
	OP_MARK,
	OP_LOOKUP,
	OP_CHECK,
	OP_RAW,
	OP_SET,
	OP_FRAG,
	OP_FLOOD,
	OP_COUNT
};

#define FZ_SLOTS 16
#define FZ_ZONES 4          /* zone 0 and namespaces 1..3 */
#define FZ_HDR 4

/* OP_TUPLE fields (f % 8) */
enum fz_field {
	FZ_F_PROTO = 0,     /* v: index into fz_protos (v < 8) or raw IP proto */
	FZ_F_SPORT,         /* v << 8 | w */
	FZ_F_DPORT,
	FZ_F_ZONE,          /* v % FZ_ZONES */
	FZ_F_SRC,           /* last address byte = v, (IPv6: and byte 14 = w) */
	FZ_F_DST,
	FZ_F_FAMILY,        /* toggle IPv4 / IPv6 */
	FZ_F_COPY,          /* copy slot v % 16, reversed when w & 1 */
};

/* TCP flag combinations OP_PKT picks from when fl < 224 (fl % 14). */
#define FZ_TCP_COMBOS 14

/* Protocols OP_TUPLE's FZ_F_PROTO picks from when v < 8. */
#define FZ_PROTOS { 6, 17, 1, 132, 47, 136, 58, 50 }

/* OP_TIME: b < 100: b ms; < 200: b - 100 s; < 250: b - 200 min;
 * < 255: (b - 249) days; 255: to 20 min before the end of the 64-bit
 * clock.  Time saturates there and never goes back. */

#endif /* FUZZ_TRACK_BYTECODE_H */
