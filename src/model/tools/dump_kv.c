/* dump_kv.c — build/kvb-dump-kv, an alias of `kvbound dump-kv` (src/model/kv_dump.h):
 *   kvb-dump-kv --text FILE [--tokens N] [--model PATH] --out DIR */
#include "kv_dump.h"

int main(int argc, char **argv) { return kvb_dump_kv_main(argc, argv, "kvb-dump-kv"); }
