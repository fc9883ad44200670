/* parse_link.c - link layers (stub until the parser lands). */
#include <string.h>

#include "ctrack/packet.h"

enum ct_pkt_kind ct_parse_frame(struct ct_packet *pkt, int linktype,
				const uint8_t *frame, uint32_t caplen,
				uint32_t wirelen, ct_time_ns ts)
{
	(void)linktype;
	return ct_parse_ip(pkt, frame, caplen, wirelen, ts);
}
