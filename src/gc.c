/* gc.c - (being written) */
#include "conn.h"
