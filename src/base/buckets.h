/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The buckets of a table: aggregates are hashed into OB_BUCKETS buckets (the
 * table's generated `bucket` column, see schema.c), and a set of buckets is
 * a 64-bit mask, one bit per bucket. The leases own buckets, the readers
 * read them, the cursors and the operator's jobs count per bucket: this
 * arithmetic is theirs alike.
 */
#ifndef OB_BUCKETS_H
#define OB_BUCKETS_H

#include <stdint.h>

#define OB_BUCKETS 64
#define OB_ALL_BUCKETS UINT64_MAX

/* How many buckets a set holds. */
static inline int ob_bucket_count(uint64_t set) {
    int n = 0;
    for (; set; set &= set - 1)
        n++;
    return n;
}

#endif
