/* explain.h — `translate --explain`: one sentence walked through the model
 * step by step, in the order the classic explanations of attention use,
 * with the real shapes and a few real numbers of every step; and
 * `--show KIND[:LAYER[:HEAD]]`, one head's attention map drawn in the
 * terminal. */
#ifndef TRANSLATE_EXPLAIN_H
#define TRANSLATE_EXPLAIN_H

#include <stdbool.h>
#include <stdio.h>

#include "translator.h"

typedef enum { SHOW_NONE, SHOW_ENCODER, SHOW_DECODER, SHOW_CROSS } ShowKind;

typedef struct {
    ShowKind kind;
    int layer, head;      /* 0-based */
} ShowChoice;

/* Parse "cross", "encoder:2", "decoder:1:3" (layer and head 1-based, as
 * printed).  Returns 0, or -1 with a message in err. */
int explain_parse_show(const char *text, ShowChoice *out, Error *err);

/* Does the model of `config_path` have the layer and head of `show`?
 * 0, or -1 with "--show: layer 4 does not exist: CONFIG has 3 decoder
 * layers" in err (checked at start: a map is never silently swapped for
 * another). */
int explain_check_show(ShowChoice show, const ModelArch *arch, const char *config_path, Error *err);

/* Write text to out as --explain shows the user's text: what would act on
 * a terminal (controls, bidirectional overrides, line separators) and
 * bytes that are not UTF-8 as \xNN or \u{NNNN}, a backslash or a double
 * quote with a backslash before it.  Also for --list-models' names. */
void explain_put_visible(FILE *out, const char *text);

/* Print the walk-through of `src` (already encoded from `text`) and its
 * translation `t` (the best of tr->config.decode's search) to `out`: at
 * the end, which search produced it, each step's true top-k and the token
 * the search kept. */
void explain_print(FILE *out, const Translator *tr, const char *text, const SourceIds *src,
                   const Translation *t);

/* Draw one head's map of `t` (rows: queries, columns: keys), with colour
 * when `color`, else with shade characters, and a legend line.  Labels
 * are aligned by display width (a Chinese character takes two columns); a
 * map wider than `width` columns is drawn in windows of keys that fit. */
void explain_show(FILE *out, const Translator *tr, const Translation *t, ShowChoice show, bool color,
                  int width);

/* The terminal's width for --show: $COLUMNS when it is a positive number,
 * else the window size when stdout is a terminal (TIOCGWINSZ), else 80. */
int explain_terminal_width(void);
/* Can standard output show --show's grey 256-colour cells: a terminal
 * whose TERM is set and not "dumb", with no NO_COLOR (no-color.org)?
 * Otherwise the maps are drawn in ░▒▓█ blocks. */
bool explain_terminal_colour(void);

#endif
