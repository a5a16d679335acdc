set terminal pngcairo size 900,560
set output '/tmp/fresh15/bench/results/vs-perftest-2026-11-24-1001/lat.png'
set logscale x 2
set logscale y 10
set grid
set key left top
set xlabel 'message size, bytes'
set ylabel 'latency, us (median)'
set title 'rdmakit bench and perftest: latency against message size'
plot '/tmp/fresh15/bench/results/vs-perftest-2026-11-24-1001/lat-read.dat' using 1:2 with linespoints title 'rdmakit read', \
     '/tmp/fresh15/bench/results/vs-perftest-2026-11-24-1001/lat-read.dat' using 1:3 with linespoints dashtype 2 title 'perftest read', \
     '/tmp/fresh15/bench/results/vs-perftest-2026-11-24-1001/lat-send.dat' using 1:2 with linespoints title 'rdmakit send', \
     '/tmp/fresh15/bench/results/vs-perftest-2026-11-24-1001/lat-send.dat' using 1:3 with linespoints dashtype 2 title 'perftest send', \
     '/tmp/fresh15/bench/results/vs-perftest-2026-11-24-1001/lat-write.dat' using 1:2 with linespoints title 'rdmakit write', \
     '/tmp/fresh15/bench/results/vs-perftest-2026-11-24-1001/lat-write.dat' using 1:3 with linespoints dashtype 2 title 'perftest write'
