set terminal pngcairo size 1500,900 noenhanced font 'Sans,11'
set output 'props/report-full/long_context_needle.png'
set multiplot layout 3,3 title 'SmolLM2-135M, B-FIG4 (the authors protocol), needle in a haystack (niah_single): exact-match accuracy by depth and length, compression 1/4 (cell: right/tasks)' noenhanced
set cbrange [0:1]; set palette defined (0 '#b2182b', 0.5 '#fee08b', 1 '#2166ac')
# a depth x length cell without tasks stays grey
set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb '#bdbdbd' fillstyle solid noborder
set xlabel 'context length (tokens)'; set ylabel 'needle depth (%)'
set yrange [0:100] reverse; set ytics 0,20,100
set style fill solid 1.0 border lc rgb 'white'
set xrange [-0.5:0.5]; set xtics ('1024' 0)
set title 'exact' noenhanced
plot 'props/report-full/long_context_needle_exact.dat' using 1:2:(0.5):(10):3 with boxxyerror fc palette notitle, 'props/report-full/long_context_needle_exact.dat' using 1:2:(sprintf('%d/%d', $4, $5)) with labels font ',9' notitle
set title 'balancekv_augmented' noenhanced
plot 'props/report-full/long_context_needle_balancekv_augmented.dat' using 1:2:(0.5):(10):3 with boxxyerror fc palette notitle, 'props/report-full/long_context_needle_balancekv_augmented.dat' using 1:2:(sprintf('%d/%d', $4, $5)) with labels font ',9' notitle
set title 'sink_recent' noenhanced
plot 'props/report-full/long_context_needle_sink_recent.dat' using 1:2:(0.5):(10):3 with boxxyerror fc palette notitle, 'props/report-full/long_context_needle_sink_recent.dat' using 1:2:(sprintf('%d/%d', $4, $5)) with labels font ',9' notitle
set title 'uniform_sample' noenhanced
plot 'props/report-full/long_context_needle_uniform_sample.dat' using 1:2:(0.5):(10):3 with boxxyerror fc palette notitle, 'props/report-full/long_context_needle_uniform_sample.dat' using 1:2:(sprintf('%d/%d', $4, $5)) with labels font ',9' notitle
set title 'snapkv' noenhanced
plot 'props/report-full/long_context_needle_snapkv.dat' using 1:2:(0.5):(10):3 with boxxyerror fc palette notitle, 'props/report-full/long_context_needle_snapkv.dat' using 1:2:(sprintf('%d/%d', $4, $5)) with labels font ',9' notitle
set title 'pyramidkv' noenhanced
plot 'props/report-full/long_context_needle_pyramidkv.dat' using 1:2:(0.5):(10):3 with boxxyerror fc palette notitle, 'props/report-full/long_context_needle_pyramidkv.dat' using 1:2:(sprintf('%d/%d', $4, $5)) with labels font ',9' notitle
set title 'balancekv_block' noenhanced
plot 'props/report-full/long_context_needle_balancekv_block.dat' using 1:2:(0.5):(10):3 with boxxyerror fc palette notitle, 'props/report-full/long_context_needle_balancekv_block.dat' using 1:2:(sprintf('%d/%d', $4, $5)) with labels font ',9' notitle
unset multiplot
