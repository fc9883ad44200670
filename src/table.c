/* table.c - (being written) */
#include "conn.h"
