/* parse_l4.c - L4 headers (stub until the parser lands). */
#include "ctrack/packet.h"

const char *ct_parse_reason_name(enum ct_parse_reason r)
{
	(void)r;
	return "unknown";
}
