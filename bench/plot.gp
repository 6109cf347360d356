# SPDX-License-Identifier: Apache-2.0
# Plots for one benchmark run: gnuplot -e "dir='RESULTS_DIR'" bench/plot.gp
# Reads the CSV files that bench/run.sh wrote and writes PNG files beside them.
if (!exists("dir")) dir = "."
exists_file(f) = system("test -f '" . f . "' && echo 1 || echo 0") + 0

set terminal pngcairo size 960,540 font "sans,10"
set datafile separator ","
set key top left
set grid ytics
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:*]

f = dir . "/drain.csv"
if (exists_file(f)) {
  set output dir . "/drain.png"
  set title "Drain of 512-byte rows: relay beside its same-run limits"
  set xlabel "connections x batch"
  set ylabel "messages per second"
  plot f using "relay_rate":xtic(sprintf("%dx%d", column(1), column(2))) title "relay", \
       "" using "db_only_rate" title "DB-only claim cycle", \
       "" using "js_only_rate" title "JetStream-only publish"
}

f = dir . "/payload.csv"
if (exists_file(f)) {
  set output dir . "/payload.png"
  set title "Payload size at the best grid point"
  set xlabel "payload bytes"
  set ylabel "messages per second (log)"
  set logscale y
  set yrange [*:*]
  plot f using "relay_rate":xtic(stringcolumn(3)) title "relay", \
       "" using "db_only_rate" title "DB-only claim cycle", \
       "" using "js_only_rate" title "JetStream-only publish"
  unset logscale y
  set yrange [0:*]
}

f = dir . "/mixed.csv"
if (exists_file(f)) {
  set output dir . "/latency.png"
  set title "Commit -> JetStream-stored latency while producers insert"
  set xlabel "offered load (msg/s; max = producers' maximum)"
  set ylabel "milliseconds"
  plot f using "latency_p50_ms":xtic(column(1) == 0 ? "max" : stringcolumn(1)) title "p50", \
       "" using "latency_p95_ms" title "p95", \
       "" using "latency_p99_ms" title "p99"
}

f = dir . "/enqueue.csv"
if (exists_file(f)) {
  set output dir . "/enqueue.png"
  set title "Enqueue: C API beside raw multi-row INSERT"
  set xlabel "producers x events per transaction"
  set ylabel "events per second"
  plot f using "api_rate":xtic(sprintf("%dx%d", column(1), column(2))) title "outbox_enqueue API", \
       "" using "raw_rate" title "raw INSERT"
}
