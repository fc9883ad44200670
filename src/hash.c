/* hash.c - (being written) */
#include "conn.h"
