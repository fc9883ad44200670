/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_probe - answers test_nat_ref.py's questions with the library's own
 * jhash2 and address choice (src/nat/), one line each, so that the Python
 * re-implementation (nat_ref.py) can judge them:
 *   J INITVAL N W0 .. W(N-1)      -> ct_nat_jhash2 of the words (decimal)
 *   B L3 MANIP PERSISTENT ZONE SRC DST MIN MAX
 *                                 -> ct_nat_best_addr's address, 32 hex
 *                                    digits; addresses as 32 hex digits
 *                                    (the tuple's 16 bytes), MANIP 0 = SRC
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nat/nat_priv.h"

static int hex16(const char *s, union ct_addr *a)
{
	if (strlen(s) != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		a->ip6[i] = (uint8_t)v;
	}
	return 0;
}

int main(void)
{
	char line[1024];

	while (fgets(line, sizeof(line), stdin)) {
		char *save = NULL, *tok = strtok_r(line, " \n", &save);

		if (!tok)
			continue;
		if (strcmp(tok, "J") == 0) {
			uint32_t w[64], iv, n;

			iv = (uint32_t)strtoul(strtok_r(NULL, " \n", &save), NULL, 0);
			n = (uint32_t)strtoul(strtok_r(NULL, " \n", &save), NULL, 0);
			if (n > 64)
				return 2;
			for (uint32_t i = 0; i < n; i++)
				w[i] = (uint32_t)strtoul(strtok_r(NULL, " \n", &save), NULL, 0);
			printf("%u\n", ct_nat_jhash2(w, n, iv));
		} else if (strcmp(tok, "B") == 0) {
			struct ct_tuple t;
			struct ct_nat_range r;
			const char *f[8];
			int manip;

			for (int i = 0; i < 8; i++) {
				f[i] = strtok_r(NULL, " \n", &save);
				if (!f[i])
					return 2;
			}
			memset(&t, 0, sizeof(t));
			memset(&r, 0, sizeof(r));
			t.l3 = atoi(f[0]) == 4 ? CT_L3_IPV4 : CT_L3_IPV6;
			t.l4 = 6;
			manip = atoi(f[1]);
			r.flags = CT_NAT_RANGE_MAP_IPS | (atoi(f[2]) ? CT_NAT_RANGE_PERSISTENT : 0);
			t.zone = (uint16_t)atoi(f[3]);
			if (hex16(f[4], &t.src) || hex16(f[5], &t.dst) ||
			    hex16(f[6], &r.min_addr) || hex16(f[7], &r.max_addr))
				return 2;
			ct_nat_best_addr(&t, &r, manip ? CT_NAT_MANIP_DST : CT_NAT_MANIP_SRC);
			for (int i = 0; i < 16; i++)
				printf("%02x", (manip ? t.dst : t.src).ip6[i]);
			printf("\n");
		} else {
			return 2;
		}
		fflush(stdout);
	}
	return 0;
}
