-- EXAMPLE ONLY: what `outbox-uvrelay schema --partitioned` printed on 2026-11-23. Its
-- bounds are fixed dates; run the command to get a table whose partitions start today.
-- The outbox table: the contract producers in any language write to.
-- status: 0 pending, 1 processed, -1 dead. An INSERT may leave out id: the
-- column's default is a UUIDv7 made by the server.
-- The partitions below start on 2026-11-23, the day this was generated: make
-- the table with a fresh `outbox-uvrelay schema --partitioned`, and let
-- the partition maintainer (--partition-interval) keep periods ahead.
-- SPDX-License-Identifier: Apache-2.0
CREATE TABLE IF NOT EXISTS `outbox` (
    id              BINARY(16)    NOT NULL DEFAULT (UNHEX(CONCAT(
                                      LPAD(HEX(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000)), 12, '0'),
                                      '7', SUBSTR(HEX(RANDOM_BYTES(2)), 2, 3),
                                      HEX(128 | (ASCII(RANDOM_BYTES(1)) & 63)),
                                      HEX(RANDOM_BYTES(7))))),
    aggregate_type  VARCHAR(128)  NOT NULL,
    aggregate_id    VARCHAR(128)  NOT NULL,
    event_type      VARCHAR(128)  NOT NULL,
    payload         JSON          NOT NULL,
    headers         JSON          NULL,
    status          SMALLINT      NOT NULL DEFAULT 0,
    attempt_count   INT           NOT NULL DEFAULT 0,
    last_error      VARCHAR(1024) NULL,
    next_attempt_at TIMESTAMP(6)  NULL,
    created_at      TIMESTAMP(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    processed_at    TIMESTAMP(6)  NULL,
    PRIMARY KEY (id),
    INDEX idx_status_id (status, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
PARTITION BY RANGE COLUMNS (id) (
    PARTITION p20261123 VALUES LESS THAN (X'01a20ada2c0000000000000000000000'),
    PARTITION p20261124 VALUES LESS THAN (X'01a21000880000000000000000000000'),
    PARTITION p20261125 VALUES LESS THAN (X'01a21526e40000000000000000000000'),
    PARTITION p20261126 VALUES LESS THAN (X'01a21a4d400000000000000000000000'),
    PARTITION p20261127 VALUES LESS THAN (X'01a21f739c0000000000000000000000'),
    PARTITION p20261128 VALUES LESS THAN (X'01a22499f80000000000000000000000'),
    PARTITION p20261129 VALUES LESS THAN (X'01a229c0540000000000000000000000'),
    PARTITION p20261130 VALUES LESS THAN (X'01a22ee6b00000000000000000000000'),
    PARTITION pmax VALUES LESS THAN (MAXVALUE)
);

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
