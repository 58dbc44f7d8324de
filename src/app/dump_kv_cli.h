/* dump_kv_cli.h — `kvbound dump-kv` and its alias build/kvb-dump-kv (src/app/tools/dump_kv.c):
 * the command line around kvb_dump_kv (src/model/kv_dump.h; src/model/README.md, The real model). */
#ifndef KVB_CLI_DUMP_KV_CLI_H
#define KVB_CLI_DUMP_KV_CLI_H

/* prog --text FILE [--tokens N] [--model PATH] --out DIR (and --help); prog names the command
 * in messages. Returns the exit status: 0 done, 1 failed (message on stderr), 2 usage error. */
int kvb_cmd_dump_kv(int argc, char **argv, const char *prog);

#endif
