/* ns.c - (being written) */
#include "conn.h"
