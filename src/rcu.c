/* rcu.c - (being written) */
#include "conn.h"
