/* SPDX-License-Identifier: Apache-2.0 */
#include "clock_skew.h"

static double mag(double x) {
    return x < 0 ? -x : x;
}

double ob_skew_value(const ob_skew *s) {
    return s->known ? (s->lo + s->hi) / 2 : 0;
}

double ob_skew_error(const ob_skew *s) {
    return s->known ? (s->hi - s->lo) / 2 : -1;
}

/* Whether the new estimate is worth a line: certainly above the threshold
 * and moved from what was said, or back near zero after a skew was said. */
static ob_skew_say judge(ob_skew *s) {
    double v = ob_skew_value(s), err = ob_skew_error(s);
    if (mag(v) - err >= OB_SKEW_SAY_S && mag(v - s->said) >= OB_SKEW_SAY_S) {
        s->said = v;
        return OB_SKEW_APART;
    }
    if (s->said != 0 && mag(v) + err < OB_SKEW_SAY_S / 2) {
        s->said = 0;
        return OB_SKEW_AGREE;
    }
    return OB_SKEW_QUIET;
}

ob_skew_say ob_skew_add(ob_skew *s, double db_s, double sent_s, double answered_s) {
    if (!(db_s > 0 && sent_s > 0 && answered_s >= sent_s))
        return OB_SKEW_QUIET;
    double lo = sent_s - db_s, hi = answered_s - db_s;
    if (s->known && lo <= s->hi && hi >= s->lo) {
        s->lo = lo > s->lo ? lo : s->lo;
        s->hi = hi < s->hi ? hi : s->hi;
    } else {
        s->known = 1; /* the first sample, or a clock was stepped */
        s->lo = lo;
        s->hi = hi;
    }
    return judge(s);
}
