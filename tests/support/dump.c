/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dump.c - a table's entries copied into one growing array (dump.h).
 */
#include <stdlib.h>

#include "dump.h"

static int collect(const struct ct_conn_info *ci, void *arg)
{
	struct ts_dump *d = arg;

	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 256;
		struct ct_conn_info *n = realloc(d->v, cap * sizeof(*n));

		if (!n)
			abort();
		d->v = n;
		d->cap = cap;
	}
	d->v[d->n++] = *ci;
	return 0;
}

int ts_dump(struct ct_thread *self, int zone, struct ts_dump *d)
{
	return ct_table_dump(self, zone, collect, d);
}
