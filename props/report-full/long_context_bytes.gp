set terminal pngcairo size 1500,900 noenhanced font 'Sans,11'
set output 'props/report-full/long_context_bytes.png'
set multiplot layout 1,2 title 'SmolLM2-135M per task family: evicting methods at compression 1/4, quantized caches at their own bytes' noenhanced
set xlabel 'KB per (layer, KV head) cache after the prompt, kept tokens priced at fp16 (exact: ~250 SmolLM2)' noenhanced
set logscale x
set xrange [33.495:135.144]
set grid
set key outside below center horizontal noenhanced
set ylabel 'exact-match accuracy'
set yrange [-0.05:1.05]
plot '< grep "^niah_single	" props/report-full/long_context_bytes.dat' using 3:4 with points pt 4 ps 1.5 title 'niah_single', '< grep "^niah_single	" props/report-full/long_context_bytes.dat' using 3:6:2 with labels left offset 1,0 font ',9' notitle, '< grep "^niah_multikey	" props/report-full/long_context_bytes.dat' using 3:4 with points pt 5 ps 1.5 title 'niah_multikey', '< grep "^niah_multikey	" props/report-full/long_context_bytes.dat' using 3:6:2 with labels left offset 1,0 font ',9' notitle
set ylabel 'mean delta answer log-lik vs exact (nats)'
set yrange [-15.5357:-13.5614]
plot '< grep "^niah_single	" props/report-full/long_context_bytes.dat' using 3:5 with points pt 4 ps 1.5 title 'niah_single', '< grep "^niah_single	" props/report-full/long_context_bytes.dat' using 3:7:2 with labels left offset 1,0 font ',9' notitle, '< grep "^niah_multikey	" props/report-full/long_context_bytes.dat' using 3:5 with points pt 5 ps 1.5 title 'niah_multikey', '< grep "^niah_multikey	" props/report-full/long_context_bytes.dat' using 3:7:2 with labels left offset 1,0 font ',9' notitle
unset multiplot
