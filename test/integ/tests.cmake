# Integration tests: ob_integ_c(name timeout) for test/integ/<name>.c,
# ob_integ_sh(name timeout) for test/integ/<name>.sh.
ob_integ_c(relay_10k 180)
ob_integ_sh(concurrent 300)
ob_integ_sh(live_inserts 180)
ob_integ_sh(poison 180)
ob_integ_sh(cli 180)
ob_integ_sh(examples 180)
ob_integ_sh(headers 120)
ob_integ_c(producer 120)
# Maintenance (issue 5): partitions, cleanup, timers, dead letters, SQL ids.
ob_integ_c(maint_partitions 120)
ob_integ_c(maint_lock 120)
ob_integ_c(maint_cleanup 120)
