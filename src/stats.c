/* stats.c - (being written) */
#include "conn.h"
