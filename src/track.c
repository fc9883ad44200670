/* track.c - (being written) */
#include "conn.h"
