# SPDX-License-Identifier: Apache-2.0
# Integration tests: ob_integ_c(name timeout) for test/integ/<name>.c,
# ob_integ_sh(name timeout) for test/integ/<name>.sh. Each uses its own
# database, stream and subject prefix, so they run in parallel.

# The core relay, the producer API and the binary.
ob_integ_c(relay_10k 180)
ob_integ_sh(concurrent 300)
ob_integ_sh(live_inserts 180)
ob_integ_sh(poison 180)
ob_integ_sh(headers 120)
ob_integ_sh(trace 120)
ob_integ_sh(trace_js 240)
set_tests_properties(integ.trace_js PROPERTIES SKIP_RETURN_CODE 77)
ob_integ_sh(prompt_delivery 240)
ob_integ_c(notify 60)
ob_integ_c(nats_threads 300)
ob_integ_c(producer 120)
ob_integ_sh(cli 180)
ob_integ_sh(examples 180)
ob_integ_sh(install 300)
ob_integ_sh(systemd_unit 180)
set_tests_properties(integ.systemd_unit PROPERTIES SKIP_RETURN_CODE 77)
# The README's install, uninstall and Debian package recipes (issue 28).
ob_integ_sh(install_recipe 600)
ob_integ_sh(install_deb 600)
# The package's lifecycle runs in a throwaway root: root and mounts, or skipped.
set_tests_properties(integ.install_deb PROPERTIES SKIP_RETURN_CODE 77)
# Each install from the suite's build rewrites its outbox-installed.txt, what
# install_recipe's `uninstall` removes: they install one at a time (cpack
# leaves that file alone).
set_tests_properties(integ.install integ.examples integ.systemd_unit integ.install_recipe
  PROPERTIES RESOURCE_LOCK build_install)
ob_integ_sh(servers_ports 180)
# The tables of contents of README.md and docs/ list their sections (scripts/readme_toc.sh --write
# rewrites it); no servers needed.
add_test(NAME unit.readme_toc COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/readme_toc.sh)
set_tests_properties(unit.readme_toc PROPERTIES LABELS unit TIMEOUT 60)
# A sanitized build installs an instrumented library: consumers need the same flags.
string(REPLACE ";" " " OB_SAN_FLAGS_STR "${OUTBOX_SAN_FLAGS}")
set_tests_properties(integ.install integ.examples integ.install_recipe integ.install_deb PROPERTIES
  ENVIRONMENT "OUTBOX_TEST_CFLAGS=${OB_SAN_FLAGS_STR}")

# Failures: retries, shutdown, outages, and the chaos suite.
ob_integ_c(retry_backoff 180)
ob_integ_c(shutdown 300)
ob_integ_c(deferred_stop 120)
ob_integ_sh(signals 300)
ob_integ_sh(dup_window 120)
ob_integ_sh(broker_unavailable 180)
ob_integ_sh(chaos_kill9 300)
ob_integ_sh(chaos_restart_db 300)
ob_integ_sh(chaos_restart_nats 300)
ob_integ_sh(chaos_four_relays 300)
# These restart or freeze the shared servers: they run alone.
set_tests_properties(integ.chaos_restart_db integ.chaos_restart_nats integ.signals
  PROPERTIES RUN_SERIAL ON)
# Issue 22: cursor mode under chaos: three relays, one killed and one frozen;
# mariadbd killed and restarted (on private servers, so beside the others).
ob_integ_sh(cursor_chaos 240)
ob_integ_sh(cursor_db_kill 240)

# Maintenance: partitions, cleanup, timers, dead letters, SQL ids, operator commands.
ob_integ_c(maint_partitions 120)
ob_integ_c(maint_lock 120)
ob_integ_c(maint_cleanup 120)
ob_integ_c(maint_timers 120)
ob_integ_c(relay_delete_mode 120)
ob_integ_sh(dead_replay 180)
ob_integ_sh(uuid_v7_sql 120)
ob_integ_sh(streamcheck 300)
ob_integ_sh(uuid_v7_binlog 180)
ob_integ_sh(secrets 300)
# NATS_URL, nats contexts, MYSQL_PWD and MariaDB option files (issue 35).
ob_integ_sh(conventions 120)
ob_integ_sh(ops_cli 120)
ob_integ_sh(ops_tables 120)

# TLS to MariaDB and NATS, NATS credentials (the secure servers fixture).
ob_integ_c_secure(db_tls 120)
ob_integ_sh_on(secure secure_db 180)
ob_integ_sh_on(secure secure_drain 300)

# A three-node JetStream cluster (the cluster fixture). The tests stop and
# start its nodes, so they take turns.
ob_integ_sh_on(cluster cluster_leader_kill 300)
ob_integ_sh_on(cluster cluster_first_url_down 180)
set_tests_properties(integ.cluster_leader_kill integ.cluster_first_url_down
  PROPERTIES RESOURCE_LOCK cluster)
# A three-node Galera cluster (the galera fixture): the plain mode on every
# node, the lease table's modes (ordered, leader) across nodes, the mode
# refused there (cursor) and the facts its proof there will rest on, cursor
# mode's proof with a member that refuses the relay (node 3, its account
# locked there only and unlocked at the end), the one mode per table, and a
# relay given three nodes moving off a killed or frozen one (node 3, started
# or thawed again at the end). They take turns; galera_node_kill leaves node 3 down, so it runs
# last.
ob_integ_sh_on(galera galera_refuse 120)
ob_integ_sh_on(galera galera_plain 240)
ob_integ_sh_on(galera galera_isolate 240)
ob_integ_sh_on(galera galera_ordered 180)
ob_integ_sh_on(galera galera_leader 180)
ob_integ_sh_on(galera galera_node_freeze 180)
ob_integ_sh_on(galera galera_node_move 180)
ob_integ_sh_on(galera galera_cursor_facts 120)
ob_integ_sh_on(galera galera_cursor 240)
ob_integ_sh_on(galera galera_cursor_member_down 120)
ob_integ_sh_on(galera galera_cursor_pair 180)
ob_integ_sh_on(galera galera_ordered_node_loss 420)
ob_integ_sh_on(galera galera_lease_fence 180)
ob_integ_sh_on(galera galera_setup_doc 120)
ob_integ_sh_on(galera galera_busy_node 120)
# Why an ordered fetch on a node can pass a row applied below a local seq, and
# the relay holding the row it reads without its previous one (issue 39).
ob_integ_sh_on(galera galera_order_gap 120)
ob_integ_sh_on(galera galera_node_kill 240)
set_tests_properties(integ.galera_refuse integ.galera_plain integ.galera_isolate
  integ.galera_ordered integ.galera_leader integ.galera_node_freeze integ.galera_node_move
  integ.galera_cursor_facts integ.galera_cursor integ.galera_cursor_member_down
  integ.galera_cursor_pair integ.galera_ordered_node_loss integ.galera_lease_fence
  integ.galera_setup_doc integ.galera_busy_node integ.galera_order_gap integ.galera_node_kill
  PROPERTIES RESOURCE_LOCK galera)
set_tests_properties(integ.galera_node_kill PROPERTIES
  DEPENDS "integ.galera_refuse;integ.galera_plain;integ.galera_isolate;integ.galera_ordered;integ.galera_leader;integ.galera_node_freeze;integ.galera_node_move;integ.galera_cursor_facts;integ.galera_cursor;integ.galera_cursor_member_down;integ.galera_cursor_pair;integ.galera_ordered_node_loss;integ.galera_lease_fence;integ.galera_setup_doc;integ.galera_busy_node;integ.galera_order_gap")
# Observability and configuration: metrics, health, readiness, config files.
ob_integ_sh(http_metrics 180)
# The relay's host clock 2 h ahead (libfaketime): lag and skew on the database's clock.
ob_integ_sh(clock_skew 120)
set_tests_properties(integ.clock_skew PROPERTIES SKIP_RETURN_CODE 77)
ob_integ_c(http_embed 120)
ob_integ_sh(http_readyz 180)
# It stops the shared nats-server: it runs alone.
set_tests_properties(integ.http_readyz PROPERTIES RUN_SERIAL ON)
# The Prometheus rules and the Grafana dashboard of dist/, against a relay and a Prometheus.
ob_integ_sh(alerts_dashboard 180)
ob_integ_sh(config_tables 300)
ob_integ_sh(log_file 120)
ob_integ_sh(log_json 120)
# A frozen log reader costs log lines, not delivery.
ob_integ_sh(log_stall 120)

# Issue 12: faults the chaos suite did not cover. Each test that kills,
# freezes or restarts a server starts its own (test/harness/private.sh).
ob_integ_sh(fault_permanent_errors 180)
ob_integ_c(fault_fatal_embedded 120)
ob_integ_sh(fault_nats_first_down 120)
ob_integ_sh(fault_nats_frozen_start 120)
ob_integ_sh(fault_nats_auth_change 180)
ob_integ_sh(fault_nats_freeze_twice 180)
ob_integ_sh(fault_nats_frozen_lost 300)
# The same with nats.c on its own threads (OUTBOX_NATS_EVENT_LOOP=0; issue 23).
add_test(NAME integ.fault_nats_frozen_lost_threaded
  COMMAND ${OB_RUN} bash ${CMAKE_CURRENT_SOURCE_DIR}/integ/fault_nats_frozen_lost.sh)
set_tests_properties(integ.fault_nats_frozen_lost_threaded PROPERTIES FIXTURES_REQUIRED servers
  LABELS integ TIMEOUT 300 ENVIRONMENT OUTBOX_NATS_EVENT_LOOP=0)
ob_integ_sh(fault_nats_frozen_idle 180)
ob_integ_sh(fault_unwritable_row 120)
ob_integ_sh(fault_db_revoked 180)
ob_integ_sh(drain_scheduled 120)
ob_integ_sh(fault_no_stream_row 120)
ob_integ_sh(fault_full_stream 120)
ob_integ_sh(fault_store_full 180)
ob_integ_sh(fault_stream_subjects 120)
# Issue 37, point 3: the stream deleted under a running relay: a pause, never a re-make.
ob_integ_sh(fault_stream_deleted 120)
ob_integ_sh(fault_subject_full 120)
ob_integ_sh(fault_row_over_max_bytes 120)
ob_integ_sh(fault_db_frozen_stop 180)
ob_integ_sh(fault_db_outage_dup_window 180)
ob_integ_sh(fault_nats_outage_dup_window 180)
# Issue 29: a connection killed, mariadbd killed: noticed within 10 s, health follows.
ob_integ_sh(db_connection_loss 180)
# A server's wait_timeout of 3 s: idle sessions kept, a frozen relay's closed ones named.
ob_integ_sh(fault_db_wait_timeout 120)
ob_integ_sh(stop_line 120)
ob_integ_sh(fault_cluster_replicas 180)
ob_integ_sh(fault_cluster_leader_kill 180)

# Ordered delivery: bucket leases, failover, retries, leader mode.
ob_integ_sh(ordered_failover 120)
ob_integ_c(ordered_retry 120)
ob_integ_sh(ordered_uuid_sql 120)
ob_integ_sh(ordered_leader 120)
ob_integ_sh(ordered_migrate 120)
# Upgrading from 0.1.0 (its schema in test/fixtures/0.1.0) and rolling back,
# as docs/upgrading.md says.
ob_integ_sh(upgrade_010 120)
ob_integ_sh(republish 120)
ob_integ_sh(ordered_rebalance 120)
# Cursor mode, operator side: status, cleanup, partitions, dead replay; moving
# a table between --ordered and --cursor.
ob_integ_sh(cursor_ops 120)
ob_integ_sh(cursor_switch 300)
# A frozen or partitioned owner: takeover within the lease timeout, fencing.
ob_integ_sh(lease_freeze_leader 240)
ob_integ_sh(lease_freeze_ordered 240)
ob_integ_sh(lease_partition 240)
ob_integ_sh(lease_mode_mix 120)
# Issue 29: 400 idle sessions on the server and a frozen owner (private servers).
ob_integ_sh(lease_many_sessions 180)
# Issue 29: a leader cut off from MariaDB with unsent rows publishes nothing past its lease.
ob_integ_sh(lease_stale_publish 240)
# The lease table's take on a real server: a live holder keeps its bucket or the leadership.
ob_integ_c(lease_table_take 60)
# Cursor mode: reads without locks, a durable cursor per bucket, seq gaps.
ob_integ_sh(cursor_basic 120)
ob_integ_sh(plain_swap 90)
ob_integ_sh(cursor_no_process 120)
ob_integ_sh(cursor_long_trx 120)
ob_integ_sh(cursor_rollbacks 120)
ob_integ_sh(cursor_multirow 120)
ob_integ_sh(cursor_stride 120)
# The retry lane's pages: a due row past pages of rows waiting is reached.
ob_integ_sh(cursor_lane_pages 120)
# Issue 29: what cursor mode assumes, it checks: a table reset under its
# cursors, a seq set by the producer, grants missing or revoked.
ob_integ_sh(cursor_truncate 120)
ob_integ_sh(cursor_replaced 120)
ob_integ_sh(cursor_explicit_seq 60)
ob_integ_sh(cursor_revoked 120)
# The README's "Grants", line by line, each with a user holding exactly them.
ob_integ_sh(grants 120)
ob_integ_c(budget_modes 300)
