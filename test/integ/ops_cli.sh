# SPDX-License-Identifier: Apache-2.0
# The operator subcommands for cron and people: status, partitions --once,
# cleanup --once. Each round does what the relay's timers do; bad input
# exits 2 and a table that is not as expected exits 1, both changing
# nothing; a round skipped because another instance holds the lock exits 0.
. "$(dirname "$0")/../harness/lib.sh"
db=it_ops_cli
db_fresh $db --partitioned --lookahead 1
"$OUTBOX_TEST_RELAY" schema --table plain --no-function | MDB $db
seed $db 5 128

ops() { "$OUTBOX_TEST_RELAY" "$@" --db "${OUTBOX_TEST_DB_URL}$db"; }
line() { echo "$1" | awk -v k="$2" 'index($0, k) == 1 { print substr($0, 19) }'; }
nparts() { sql $db "SELECT COUNT(*) FROM information_schema.PARTITIONS
  WHERE TABLE_SCHEMA = '$db' AND TABLE_NAME = '${1:-outbox}'"; }

out=$(ops status)
echo "$out"
assert_eq "$(line "$out" pending)" 5 "status: pending"
assert_eq "$(line "$out" processed)" 0 "status: processed"
assert_eq "$(line "$out" dead)" 0 "status: dead"
assert_eq "$(line "$out" 'maintenance lock')" free "status: lock"
assert_eq "$(line "$out" partitions)" 3 "status: partitions"
case "$(line "$out" 'oldest pending')" in *" ms" | *" s") ;; *) fail "status: oldest pending age" ;; esac

# Bad input: exit 2, nothing changed.
expect_exit 2 "partitions without --once" ops partitions
expect_exit 2 "a bad lookahead" ops partitions --once --lookahead soon
expect_exit 2 "--id on partitions" ops partitions --once --id 019a6f1e-7c2b-7d3e-8f00-0123456789ab
expect_exit 2 "a lookahead too large" ops partitions --once --lookahead 5000
expect_exit 2 "status without --db" "$OUTBOX_TEST_RELAY" status
expect_exit 2 "cleanup with a bad limit" ops cleanup --once --limit many
# Tables not as expected: exit 1, nothing changed.
expect_exit 1 "a monthly round on a daily table" ops partitions --once --monthly
expect_exit 1 "partitions on a plain table" ops partitions --once --table plain
expect_exit 1 "status of a missing table" ops status --table nosuch
assert_eq "$(nparts)" 3 "partitions after bad input"

# Another instance holds the lock: the round is skipped, exit 0.
MDB $db -e "SELECT GET_LOCK('outbox-uvrelay:$db.outbox', 0), SLEEP(2.5)" >/dev/null &
holder=$!
for _ in $(seq 1 50); do
  [ "$(sql $db "SELECT IS_USED_LOCK('outbox-uvrelay:$db.outbox') IS NOT NULL")" = 1 ] && break
  sleep 0.1
done
case "$(line "$(ops status)" 'maintenance lock')" in "held by session "*) ;;
  *) fail "status does not show the lock holder" ;; esac
expect_exit 0 "a round while the lock is held" ops partitions --once --lookahead 3
case "$(ops partitions --once --lookahead 3 2>/dev/null)" in *"skipped"*) ;;
  *) fail "the round should say it was skipped" ;; esac
assert_eq "$(nparts)" 3 "partitions while the lock is held"
wait $holder

out=$(ops partitions --once --lookahead 3)
assert_eq "$out" "partitions: 2 created, 0 dropped, 0 kept (expired, but holding pending rows)" \
  "partitions --once"
assert_eq "$(nparts)" 5 "partitions after the round"
out=$(ops partitions --once --lookahead 3)
assert_eq "$out" "partitions: 0 created, 0 dropped, 0 kept (expired, but holding pending rows)" \
  "a second round"

# cleanup --once on the plain table: old processed rows only.
sql $db "INSERT INTO plain (id, aggregate_type, aggregate_id, event_type, payload, status,
    created_at, processed_at)
  SELECT UNHEX(CONCAT(LPAD(HEX(FLOOR(UNIX_TIMESTAMP(NOW(3) - INTERVAL 3 DAY) * 1000) + seq), 12,
    '0'), '70008', LPAD(HEX(seq), 15, '0'))), 'order', seq, 'created', '{}',
    IF(seq <= 30, 1, IF(seq <= 35, -1, 0)), NOW(6) - INTERVAL 3 DAY,
    IF(seq <= 30, NOW(6) - INTERVAL 3 DAY, NULL)
  FROM seq_1_to_40"
out=$(ops cleanup --once --table plain --older-than 1d --limit 20)
assert_eq "$out" "cleanup: 20 row(s) deleted (20 processed, 0 dead)" "cleanup --once --limit 20"
out=$(ops cleanup --once --table plain --older-than 1d --include-dead)
assert_eq "$out" "cleanup: 15 row(s) deleted (10 processed, 5 dead)" "cleanup --include-dead"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM plain')" 5 "pending rows left in plain"
out=$(ops cleanup --once --table plain --older-than 7d --include-dead)
assert_eq "$out" "cleanup: 0 row(s) deleted (0 processed, 0 dead)" "cleanup with a longer retention"
echo "ops_cli: ok"
