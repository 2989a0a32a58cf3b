/* `paddiser model calibrate-random`: the micro-benchmark behind the
 * random-access cost table (docs/model.md, *Random access and the cache*). */
#ifndef PD_CLI_RANDOM_CALIBRATE_H
#define PD_CLI_RANDOM_CALIBRATE_H

int cmd_model_calibrate_random(int argc, char **argv);

#endif
