/* config_folders.h — where translate finds its models' configs: the
 * config folders ($TRANSLATE_HOME/configs, configs/ beside the program,
 * ../share/translate/configs after make install), -c NAME, the default
 * model of each direction (en-zh.yaml, zh-en.yaml), --list-models, and
 * the languages a default's file name promises. */
#ifndef TRANSLATE_CONFIG_FOLDERS_H
#define TRANSLATE_CONFIG_FOLDERS_H

#include "../common/error.h"
#include "config.h"
#include "exit_status.h"

/* NAME (en-zh.yaml) in the first config folder that has it; when none
 * does, the path the error opening it will name.  Malloc'd. */
char *config_folders_default(const char *name);
/* -c ARG: a file when one is there (or ARG has a '/'), else the config
 * named ARG (or ARG.yaml) in the config folders, as translateLocally's -m
 * finds a model by name.  Malloc'd; NULL when neither exists.  A folder
 * of that name in the working directory (an output folder called zh-en)
 * is not a file: the name is looked up as if it were not there. */
char *config_folders_resolve(const char *arg);
/* --list-models on stdout: every config of the first config folder that
 * exists, one line each: name, languages, architecture, weights size, and
 * the dev scores its `scores:` section records.  EXIT_USAGE if one is
 * broken (said), or when there is no config folder. */
ExitStatus config_folders_list(void);
/* A config found by its file name, en-zh.yaml or zh-en.yaml (without -c,
 * or through --from/--to), says the languages its name does: one edited
 * to say others would send every line the wrong way, or tokenise it as
 * the wrong language, and still exit 0.  0, or -1 with the error. */
int config_folders_check_languages(const Config *c, Error *err);
/* The same for a config not yet read (--eval and --init-weights open
 * their one model themselves): read once more, for the check alone;
 * EXIT_USAGE after its message. */
ExitStatus config_folders_check_named(const char *path);

#endif
