/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_event_mask.c - ct_table_set_event_mask (events.h): NEW and UPDATE
 * events left out of the mask are not delivered, DESTROY always is, and
 * the DESTROY a masked table delivers is the one an unmasked table does
 * (issue 26: a flow exporter needs DESTROY alone).
 *
 * Traffic: UDP over IPv4 without checksums (0 is "none" in IPv4), so
 * each packet's fate is known without a tracker: a query creates (NEW),
 * its answer is the first reply (UPDATE: SEEN_REPLY), a packet more than
 * 2 s after creation once replied assures it (UPDATE: ASSURED), and each
 * flow times out 30 s (120 s assured) after its last packet (DESTROY by
 * timeout) or goes with a flush.  Every case runs one packet at a time
 * and in bursts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "ctrack/ctrack.h"

#define SEC 1000000000ull

struct counts {
	unsigned by_type[3];
	uint64_t destroy_packets[2];   /* the DESTROYs' counters, summed */
	uint64_t destroy_bytes[2];
	unsigned timeouts;
};

static void on_event(const struct ct_event *ev, void *arg)
{
	struct counts *c = arg;

	c->by_type[ev->type]++;
	if (ev->type == CT_EV_DESTROY) {
		for (int d = 0; d < 2; d++) {
			c->destroy_packets[d] += ev->conn.packets[d];
			c->destroy_bytes[d] += ev->conn.bytes[d];
		}
		c->timeouts += ev->destroy_cause == CT_DESTROY_TIMEOUT;
	}
}

/* IPv4 + UDP, no checksum, @n payload bytes. */
static size_t udp4(uint8_t *f, uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp,
		   unsigned n)
{
	uint32_t s = 0;

	memset(f, 0, 28 + n);
	f[0] = 0x45;
	f[2] = (uint8_t)((28 + n) >> 8);
	f[3] = (uint8_t)(28 + n);
	f[8] = 64;
	f[9] = IPPROTO_UDP;
	memcpy(f + 12, &src, 4);
	memcpy(f + 16, &dst, 4);
	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)(f[i] << 8 | f[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	f[10] = (uint8_t)(~s >> 8);
	f[11] = (uint8_t)~s;
	f[20] = (uint8_t)(sp >> 8);
	f[21] = (uint8_t)sp;
	f[22] = (uint8_t)(dp >> 8);
	f[23] = (uint8_t)dp;
	f[24] = (uint8_t)((8 + n) >> 8);
	f[25] = (uint8_t)(8 + n);
	return 28 + n;
}

#define FLOWS 50

/*
 * FLOWS flows: a query at 1 s, an answer at 1.001 s, and for even flows
 * another query at 4 s (assured); @burst: all packets of one moment in
 * one burst.  Then every flow times out (a collector step long after),
 * or with @flush the table is flushed at 5 s.  @mask changes at 3 s to
 * @mask2 (the same when not changing).
 */
static void run(struct counts *c, unsigned mask, unsigned mask2, int burst, int flush)
{
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	static uint8_t fr[3][FLOWS][64];
	struct ct_packet pk[FLOWS];
	const struct ct_packet *pp[FLOWS];
	struct ct_verdict v[FLOWS];
	uint32_t cli = htonl(0x0a000001), srv = htonl(0xc0000235);
	const ct_time_ns when[3] = { 1 * SEC, 1 * SEC + 1000000, 4 * SEC };

	memset(c, 0, sizeof(*c));
	ct_table_config_default(&cfg);
	cfg.settings.acct = 1;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	thr = ct_thread_attach(t);
	assert_non_null(thr);
	ct_table_set_event_handler(t, on_event, c);
	ct_table_set_event_mask(t, mask);
	for (int step = 0; step < 3; step++) {
		unsigned n = 0;

		if (step == 2)
			ct_table_set_event_mask(t, mask2);
		for (unsigned i = 0; i < FLOWS; i++) {
			size_t len;

			if (step == 2 && (i & 1))
				continue;
			len = step == 1 ? udp4(fr[step][i], srv, cli, 53, (uint16_t)(20000 + i), 40)
					: udp4(fr[step][i], cli, srv, (uint16_t)(20000 + i), 53, 10);
			assert_int_equal(ct_parse_ip(&pk[n], fr[step][i], (uint32_t)len,
						     (uint32_t)len, when[step]), CT_PKT_TRACKABLE);
			pk[n].ts = when[step];
			pp[n] = &pk[n];
			n++;
		}
		if (burst) {
			assert_int_equal(ct_process_burst_ts(thr, pp, n, v), 0);
		} else {
			for (unsigned i = 0; i < n; i++)
				assert_int_equal(ct_process(thr, &pk[i], when[step], &v[i]), 0);
		}
	}
	if (flush) {
		assert_int_equal(ct_table_flush(thr, -1, 5 * SEC), FLOWS);
	} else {
		struct ct_gc_result gr;

		ct_gc_step(thr, 1000 * SEC, 0, &gr);
	}
	assert_int_equal(ct_table_count(t), 0);
	ct_table_set_event_handler(t, NULL, NULL);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

#define ALL (1u << CT_EV_NEW | 1u << CT_EV_UPDATE | 1u << CT_EV_DESTROY)
#define DESTROY_ONLY (1u << CT_EV_DESTROY)

static void without_a_mask_every_event_comes(void **state)
{
	struct counts c;

	(void)state;
	for (int burst = 0; burst < 2; burst++) {
		run(&c, ALL, ALL, burst, 0);
		assert_int_equal(c.by_type[CT_EV_NEW], FLOWS);
		/* SEEN_REPLY for each, ASSURED for the even ones */
		assert_int_equal(c.by_type[CT_EV_UPDATE], FLOWS + FLOWS / 2);
		assert_int_equal(c.by_type[CT_EV_DESTROY], FLOWS);
		assert_int_equal(c.timeouts, FLOWS);
	}
}

static void destroy_only_delivers_the_same_destroys_and_nothing_else(void **state)
{
	struct counts all, only;

	(void)state;
	for (int burst = 0; burst < 2; burst++)
		for (int flush = 0; flush < 2; flush++) {
			run(&all, ALL, ALL, burst, flush);
			run(&only, DESTROY_ONLY, DESTROY_ONLY, burst, flush);
			assert_int_equal(only.by_type[CT_EV_NEW], 0);
			assert_int_equal(only.by_type[CT_EV_UPDATE], 0);
			assert_int_equal(only.by_type[CT_EV_DESTROY], FLOWS);
			assert_int_equal(only.timeouts, all.timeouts);
			assert_memory_equal(only.destroy_packets, all.destroy_packets,
					    sizeof(all.destroy_packets));
			assert_memory_equal(only.destroy_bytes, all.destroy_bytes,
					    sizeof(all.destroy_bytes));
			/* the counters are the traffic's: 1 or 2 queries of 38
			 * bytes, one 68-byte answer */
			assert_int_equal(all.destroy_packets[0], FLOWS + FLOWS / 2);
			assert_int_equal(all.destroy_bytes[1], FLOWS * 68);
		}
}

static void even_an_empty_mask_keeps_destroy(void **state)
{
	struct counts c;

	(void)state;
	run(&c, 0, 0, 1, 0);
	assert_int_equal(c.by_type[CT_EV_NEW] + c.by_type[CT_EV_UPDATE], 0);
	assert_int_equal(c.by_type[CT_EV_DESTROY], FLOWS);
}

static void a_mask_changed_while_tracking_applies_from_then_on(void **state)
{
	struct counts c;

	(void)state;
	for (int burst = 0; burst < 2; burst++) {
		/* UPDATE wanted only from the third moment on: the ASSURED
		 * ones come, the SEEN_REPLY ones before did not */
		run(&c, DESTROY_ONLY, ALL, burst, 0);
		assert_int_equal(c.by_type[CT_EV_NEW], 0);
		assert_int_equal(c.by_type[CT_EV_UPDATE], FLOWS / 2);
		assert_int_equal(c.by_type[CT_EV_DESTROY], FLOWS);
		/* and the other way */
		run(&c, ALL, 1u << CT_EV_NEW, burst, 1);
		assert_int_equal(c.by_type[CT_EV_NEW], FLOWS);
		assert_int_equal(c.by_type[CT_EV_UPDATE], FLOWS);
		assert_int_equal(c.by_type[CT_EV_DESTROY], FLOWS);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(without_a_mask_every_event_comes),
		cmocka_unit_test(destroy_only_delivers_the_same_destroys_and_nothing_else),
		cmocka_unit_test(even_an_empty_mask_keeps_destroy),
		cmocka_unit_test(a_mask_changed_while_tracking_applies_from_then_on),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
