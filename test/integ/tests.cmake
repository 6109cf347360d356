# Integration tests: ob_integ_c(name timeout) for test/integ/<name>.c,
# ob_integ_sh(name timeout) for test/integ/<name>.sh.
ob_integ_c(relay_10k 180)
