# Sourced by the tests on the Galera fixture (after lib.sh).

# GSQL N DB SQL: runs SQL as root on node N, after the node has applied
# every write-set committed in the cluster before it (wsrep_sync_wait).
GSQL() {
  local n=$1 db=$2 sock; shift 2
  eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$n"
  "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" -N -B \
    --init-command="SET SESSION wsrep_sync_wait = 1" "$db" -e "$*"
}

# galera_db_fresh DB [schema flags...]: a new database with an outbox table,
# made on node 1 (DDL reaches every node before it returns).
galera_db_fresh() {
  local db=$1; shift
  GSQL 1 "" "DROP DATABASE IF EXISTS \`$db\`; CREATE DATABASE \`$db\`"
  "$OUTBOX_TEST_RELAY" schema "$@" | "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot \
    -S "$OUTBOX_TEST_GALERA_SOCKET1" "$db"
}

# GROOT N args...: the mariadb client as root on node N, without a database
# and without waiting for the cluster (it answers on a node cut off too).
GROOT() {
  local n=$1 sock; shift
  eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$n"
  "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" -N -B "$@"
}
