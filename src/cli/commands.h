/* Subcommands of the `paddiser` CLI. Each lives in its own cmd_*.c file and
 * returns the process exit status (0 ok, 1 run failed, 2 usage/config error). */
#ifndef PD_CLI_COMMANDS_H
#define PD_CLI_COMMANDS_H

int cmd_bench(int argc, char **argv);  /* cmd_bench.c: parametric studies (IOPS YAML) */
int cmd_report(int argc, char **argv); /* cmd_report.c: HTML report of a run dir */
int cmd_find(int argc, char **argv);   /* cmd_find.c: list/watch a run dir's executions */
int cmd_sim(int argc, char **argv);    /* cmd_sim.c: heterogeneous-memory simulator */
int cmd_model(int argc, char **argv);  /* cmd_model.c: train/evaluate the performance model */
int cmd_plan(int argc, char **argv);   /* cmd_plan.c: run the placement planners on a problem file */
int cmd_tiers(int argc, char **argv);  /* cmd_tiers.c: show discovered memory tiers */
int cmd_run(int argc, char **argv);    /* cmd_run.c: run a program under the runtime (LD_PRELOAD) */

#endif
