/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_track.h - what the parts of the fuzz_track target share: the
 * harness's state (a pool of connections, each zone's settings, the
 * events seen), the failure that libFuzzer records as a crash, and the
 * calls between the interpreter (fuzz_track.c), the frame builder
 * (track_frame.c) and the checks (track_check.c).  Checksums, writers and
 * the table audit are tests/support's.
 */
#ifndef CT_FUZZ_TRACK_H
#define CT_FUZZ_TRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/ctrack.h"
#include "track_bytecode.h"

#define SEC 1000000000ull
#define MS 1000000ull
#define BUF 2048
#define BURST 16

/* A broken invariant: the message on stderr, then abort() (a crash to
 * libFuzzer, a failure to the replay). */
void fz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#define CHECK(cond, ...) do { if (!(cond)) fz_fail(__VA_ARGS__); } while (0)

struct slot {
	struct ct_tuple t;      /* original direction, zone included */
	uint32_t nxt[2];        /* next TCP sequence number per direction */
	uint32_t vtag[2];       /* SCTP: each side's own tag */
};

struct pspec {
	uint8_t sd, fl, ln, md;
};

struct fz {
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_defrag *defrag;
	ct_time_ns now;
	struct slot s[FZ_SLOTS];
	struct ct_settings set[FZ_ZONES];  /* what each zone was given */
	bool max_lowered[FZ_ZONES];        /* a max was set below the count */
	bool events;
	bool labels;
	bool nat;                          /* h2 bit 7 (track_bytecode.h) */
	uint64_t ev_new, ev_destroy;
	uint16_t ipid;
};

/* track_frame.c: the packet pspec @ps describes, as a frame parsed into
 * @pkt (in @buf) or filled in directly; false when the spec makes none. */
bool fz_make_packet(struct fz *f, const struct pspec *ps, uint8_t *buf, struct ct_packet *pkt);

/* track_frame.c: the IP datagram of one packet of slot @s in direction
 * @dir at @ip (an ICMP error quotes one, @depth deep); returns its
 * length. */
size_t fz_build_ip(struct fz *f, struct slot *s, int dir, const struct pspec *ps,
		   uint8_t *ip, int depth);

/* track_check.c: the verdict of one packet (a created entry is found, a
 * reason is in range, the table maximum holds). */
void fz_check_verdict(struct fz *f, const struct ct_packet *pkt,
		      const struct ct_verdict *v, bool single);

/* fuzz_track.c: @pkt (parsed from @frame, @len bytes; NULL when it was
 * filled in directly) through the two-step first packet and NAT. */
void fz_nat_packet(struct fz *f, const struct ct_packet *pkt, const uint8_t *frame,
		   uint32_t len);

/* track_check.c: the whole table (support/audit.h's invariants and the
 * harness's own), then a full collector pass after which nothing due is
 * left. */
void fz_check_all(struct fz *f);

#endif /* CT_FUZZ_TRACK_H */
