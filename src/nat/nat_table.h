/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_table.h - what the rest of the library asks of NAT joined to the
 * table, besides the public two-step calls (private).
 *
 * A restore (record/record_import.c) puts an entry in the table with a
 * binding it did not choose here: the binding comes from a record.  The
 * entry must then be what a confirm would have left: in the source index
 * when its source was translated (so that find_appropriate_src reuses the
 * restored mapping, as the kernel's does for an entry conntrackd commits:
 * ctnetlink's nf_nat_setup_info adds it to nf_nat_bysource), its ports in
 * the exact port map, and the table's nat_forget hook set so that its
 * removal unlinks it.  This is that half of the confirm, kept apart from
 * the confirm itself.
 */
#ifndef CT_NAT_TABLE_H
#define CT_NAT_TABLE_H

struct ct_table;
struct ct_conn;

/*
 * ct_nat_table_adopt - index @c, an entry with the NAT extension now in
 * the table under its keys (read side held, no lock), as a confirm's
 * insert does: the source index if CT_ST_SRC_NAT, the port map
 * (ct_table_config.nat_exact_ports) for each manipulation it holds.  An
 * entry already leaving (DYING) is unlinked again.  Returns 0, or
 * -ENOMEM (the table's NAT state could not be made: the entry stays in
 * the table but no later setup finds its mapping).  Cost: one stripe
 * lock, the port map's mutex with nat_exact_ports.
 */
int ct_nat_table_adopt(struct ct_table *t, struct ct_conn *c);

#endif /* CT_NAT_TABLE_H */
