/* slab.c - (being written) */
#include "conn.h"
