/* htab.c - (being written) */
#include "conn.h"
