/* dump_kv.c — build/kvb-dump-kv, an alias of `kvbound dump-kv` (src/app/dump_kv_cli.h):
 *   kvb-dump-kv --text FILE [--tokens N] [--model PATH] --out DIR */
#include "dump_kv_cli.h"

int main(int argc, char **argv) { return kvb_cmd_dump_kv(argc, argv, "kvb-dump-kv"); }
