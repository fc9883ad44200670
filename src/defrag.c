/* defrag.c - reassembly (stub until the parser lands). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/defrag.h"

struct ct_defrag {
	struct ct_defrag_stats st;
};

struct ct_defrag *ct_defrag_create(uint64_t high_thresh_bytes, uint64_t timeout_ns)
{
	(void)high_thresh_bytes; (void)timeout_ns;
	return calloc(1, sizeof(struct ct_defrag));
}

void ct_defrag_destroy(struct ct_defrag *d)
{
	free(d);
}

int ct_defrag_feed(struct ct_defrag *d, const struct ct_packet *frag,
		   ct_time_ns now, struct ct_packet *out)
{
	(void)frag; (void)now; (void)out;
	d->st.fragments++;
	return 0;
}

void ct_defrag_get_stats(const struct ct_defrag *d, struct ct_defrag_stats *s)
{
	*s = d->st;
}
