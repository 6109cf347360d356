/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What include/outbox/common.h declares that is not logging (src/log.c):
 * outbox_strerror, outbox_version and outbox_version_commit.
 */
#include "outbox/common.h"

/* OB_BUILD_COMMIT, written into the build folder by cmake/build_commit.cmake. */
#include "build_commit.h"

const char *outbox_strerror(int status) {
    switch ((outbox_status)status) {
    case OUTBOX_OK:
        return "success";
    case OUTBOX_EINVAL:
        return "invalid argument";
    case OUTBOX_ENOMEM:
        return "out of memory";
    case OUTBOX_EDB:
        return "database error";
    case OUTBOX_ENATS:
        return "NATS error";
    case OUTBOX_EJSON:
        return "invalid JSON";
    case OUTBOX_ETOOLONG:
        return "value too long";
    case OUTBOX_ESTATE:
        return "not allowed in the current state";
    case OUTBOX_ENOTFOUND:
        return "not found";
    case OUTBOX_EBUSY:
        return "busy: another instance holds the lock";
    case OUTBOX_ESCHEMA:
        return "table does not have the expected shape";
    case OUTBOX_EREFUSED:
        return "connection refused by the server (TLS, certificate or credentials)";
    }
    return "unknown status";
}

const char *outbox_version(void) {
    return OUTBOX_VERSION_STRING;
}

const char *outbox_version_commit(void) {
    return OB_BUILD_COMMIT;
}
