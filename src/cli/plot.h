/* plot.h — `kvbound plot`: PNG and SVG plots of a results directory through gnuplot. */
#ifndef KVB_CLI_PLOT_H
#define KVB_CLI_PLOT_H

#include <stddef.h>

/* Draws every plot listed in DIR/plots.tsv from DIR/results.csv into DIR/NAME.{png,svg}
 * (keeping DIR/NAME.dat and DIR/NAME.gp so a user can restyle them). */
int kvb_plot_dir(const char *dir, int verbose, char *err, size_t cap);

#endif
