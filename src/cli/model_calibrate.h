/* `paddiser model calibrate-stencil`: the offline micro-benchmark behind the
 * stencil alpha table (docs/model.md#stencil-alpha). */
#ifndef PD_CLI_MODEL_CALIBRATE_H
#define PD_CLI_MODEL_CALIBRATE_H

int cmd_model_calibrate_stencil(int argc, char **argv);

#endif
