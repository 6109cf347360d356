-- SPDX-License-Identifier: Apache-2.0
-- The outbox table: the contract producers in any language write to.
-- status: 0 pending, 1 processed, -1 dead. An INSERT may leave out id: the
-- column's default is a UUIDv7 made by the server.
CREATE TABLE IF NOT EXISTS `outbox` (
    id              BINARY(16)    NOT NULL DEFAULT (UNHEX(CONCAT(
                                      LPAD(HEX(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000)), 12, '0'),
                                      '7', SUBSTR(HEX(RANDOM_BYTES(2)), 2, 3),
                                      HEX(128 | (ASCII(RANDOM_BYTES(1)) & 63)),
                                      HEX(RANDOM_BYTES(7))))),
    aggregate_type  VARCHAR(128)  NOT NULL,
    aggregate_id    VARCHAR(128)  NOT NULL,
    event_type      VARCHAR(128)  NOT NULL,
    payload         LONGBLOB      NOT NULL,
    headers         JSON          NULL,
    status          SMALLINT      NOT NULL DEFAULT 0,
    attempt_count   INT           NOT NULL DEFAULT 0,
    last_error      VARCHAR(1024) NULL,
    next_attempt_at TIMESTAMP(6)  NULL,
    created_at      TIMESTAMP(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    processed_at    TIMESTAMP(6)  NULL,
    PRIMARY KEY (id),
    INDEX idx_status_id (status, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The relays' leases on a Galera cluster (unused on a single server); one table
-- for the database.
CREATE TABLE IF NOT EXISTS outbox_lease (
    lease_key   VARCHAR(32)     NOT NULL,
    kind        CHAR(1)         NOT NULL,
    slot        BIGINT UNSIGNED NOT NULL,
    holder      BIGINT UNSIGNED NULL,
    mode        CHAR(1)         NULL,
    stale_ms    INT UNSIGNED    NULL,
    epoch       BIGINT UNSIGNED NOT NULL DEFAULT 0,
    renewed     TIMESTAMP(6)    NULL,
    PRIMARY KEY (lease_key, kind, slot)
) ENGINE = InnoDB;

-- UUIDv7 ids from plain SQL: INSERT INTO outbox (id, ...) VALUES (outbox_uuid_v7(), ...)
-- With the binary log on, creating a function needs the SUPER privilege
-- (error 1419) unless log_bin_trust_function_creators=1. Without either,
-- use `schema --no-function` and leave id out of INSERTs: the column's
-- default makes the same ids.
CREATE FUNCTION IF NOT EXISTS outbox_uuid_v7() RETURNS BINARY(16) NOT DETERMINISTIC NO SQL
RETURN UNHEX(CONCAT(
    LPAD(HEX(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000)), 12, '0'),
    '7', SUBSTR(HEX(RANDOM_BYTES(2)), 2, 3),
    HEX(128 | (ASCII(RANDOM_BYTES(1)) & 63)),
    HEX(RANDOM_BYTES(7))));
