/* parse_ip.c - IPv4/IPv6 (stub until the parser lands). */
#include <string.h>

#include "ctrack/packet.h"

enum ct_pkt_kind ct_parse_ip(struct ct_packet *pkt, const uint8_t *ip,
			     uint32_t caplen, uint32_t wirelen, ct_time_ns ts)
{
	(void)ip; (void)caplen; (void)wirelen;
	memset(pkt, 0, sizeof(*pkt));
	pkt->ts = ts;
	pkt->kind = CT_PKT_NOT_IP;
	return CT_PKT_NOT_IP;
}
