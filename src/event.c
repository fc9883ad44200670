/* event.c - (being written) */
#include "conn.h"
