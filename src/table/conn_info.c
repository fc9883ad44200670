/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_info.c - an entry as seen from outside the library: the public
 * copy of one (struct ct_conn_info) and the memory one takes.
 *
 * An entry's layout (base/conn.h, table/conn_key.h) is private; the API
 * hands out copies, taken under the entry's lock, and an id that is a
 * keyed hash of its address, so that ids do not leak pointers.
 */
#include <string.h>

#include "base/hash.h"
#include "proto/proto.h"
#include "proto/tcp.h"
#include "table/conn_info.h"
#include "table/conn_key.h"

size_t ct_conn_size(const struct ct_table *t, uint8_t l4)
{
	return ct_conn_size_l3(t, CT_L3_IPV6, l4);
}

size_t ct_conn_size_l3(const struct ct_table *t, uint8_t l3, uint8_t l4)
{
	struct ct_settings s;
	unsigned ext;

	ct_table_get_settings(t, &s);
	ext = ct_settings_ext_l4(t, &s, l4);
	return ct_conn_obj_size(l3, ct_proto_find(l4)->priv_size, ext);
}

void ct_conn_fill_info(struct ct_table *t, struct ct_conn *c,
		       struct ct_conn_info *ci)
{
	const struct ct_proto *p = ct_proto_by_index(c->proto);
	struct ct_ext_acct *a = ct_conn_acct(c);
	struct ct_ext_tstamp *ts = ct_conn_tstamp(c);
	struct ct_ext_labels *lb = ct_conn_labels(c);
	struct ct_ext_tcpf *tf = ct_conn_tcpf(c);

	memset(ci, 0, sizeof(*ci));
	ct_conn_tuple(c, &ci->orig);
	ct_conn_reply_of(c, &ci->orig, &ci->reply);
	/* like the kernel's ct id: a keyed hash of the address, so ids do
	 * not leak pointers */
	ci->id = ct_hash_u64(&t->key, (uint64_t)(uintptr_t)c) >> 32;
	ci->expires = c->expires;
	ci->status = ct_conn_status(c);
	ci->mark = c->mark;
	ci->l4state = c->l4state;
	ci->state_name = p->state_name ? p->state_name(c->l4state) : NULL;
	if (a) {
		memcpy(ci->packets, a->packets, sizeof(ci->packets));
		memcpy(ci->bytes, a->bytes, sizeof(ci->bytes));
	}
	if (ts) {
		ci->first_seen = ts->first_ns;
		ci->last_seen = ts->last_ns;
	}
	if (lb)
		memcpy(ci->labels, lb->bits, sizeof(ci->labels));
	if (p == &ct_proto_tcp) {
		const struct ct_tcp_priv *tp = ct_conn_priv_const(c);

		ci->tcp.wscale[0] = tp->scale[0];
		ci->tcp.wscale[1] = tp->scale[1];
		ci->tcp.flags[0] = tp->flags[0];
		ci->tcp.flags[1] = tp->flags[1];
	}
	if (tf)
		memcpy(ci->tcp_flags, tf->flags, sizeof(ci->tcp_flags));
}

