/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_queue.c - the transmit and resend queues: intrusive doubly linked
 * lists with a sentinel, O(1) to add at the tail and to remove anywhere.
 *
 * conntrackd keeps its queues as lists too (queue.c) and relies on one
 * property that this keeps: a node is in at most one queue, so an object
 * updated while it waits is sent once, with its state when it goes out,
 * and an object waiting for its ACK moves back to the transmit queue
 * instead of being queued twice.
 */
#include <stddef.h>

#include "sync/sync_node.h"

void sq_init(struct sq_list *q)
{
	q->head.prev = q->head.next = &q->head;
	q->head.where = SQ_NONE;
	q->len = 0;
}

void sq_add_tail(struct sq_list *q, struct sq_node *n, uint8_t where)
{
	n->prev = q->head.prev;
	n->next = &q->head;
	q->head.prev->next = n;
	q->head.prev = n;
	n->where = where;
	q->len++;
}

void sq_del(struct sq_list *q, struct sq_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
	n->where = SQ_NONE;
	q->len--;
}

struct sq_list *sq_of(struct ct_sync_node *n, const struct sq_node *qn)
{
	switch (qn->where) {
	case SQ_TX:
		return &n->tx;
	case SQ_RS:
		return &n->rs;
	default:
		return NULL;
	}
}
