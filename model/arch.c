/* arch.c — names for the ModelArch enums (see arch.h).
 *
 * The YAML loader parses `activation:` by comparing against these names and
 * the weights writer stores them in `__metadata__`, so the spelling lives in
 * exactly one place. */
#include "arch.h"

#include "../common/util.h"

const char *arch_activation_name(Activation a)
{
    switch (a) {
    case ACTIVATION_RELU: return "relu";
    case ACTIVATION_GELU: return "gelu";
    }
    ASSERT(!"unknown Activation value");
    return "";
}
