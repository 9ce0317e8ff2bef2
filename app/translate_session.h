/* translate_session.h — the models a translate run uses: one (-c, --from,
 * --to), or without one the two defaults, en-zh and zh-en, each line going
 * to the one its text reads as; their configs checked before any input is
 * read, each model opened when a line first needs it, a broken one said
 * once.  The Session is the run's state, which translate.c opens and
 * closes, and translate_input.c translates through. */
#ifndef TRANSLATE_TRANSLATE_SESSION_H
#define TRANSLATE_TRANSLATE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../common/error.h"
#include "../common/output_file.h"
#include "attention_json.h"
#include "config.h"
#include "exit_status.h"
#include "translate_options.h"
#include "translator.h"

/* One of a session's models: its config's path, then, from translate_session_start
 * (without -c), its config as read and checked, until the model is opened
 * from it (parsing one was 0.25 ms of a start-up); once opened, the
 * translator, or the error that is said again for each line that needs it. */
typedef struct {
    char *path;
    Config config;
    bool have_config;         /* `config` is read and not yet handed to the translator */
    bool opened;
    Translator tr;
    ExitStatus failed;        /* remembered so a broken model is reported once */
    Error open_error;
    AttentionJson *attention; /* --attention/--html: this model's sentences */
} SessionModel;

/* With -c (or --from/--to), one model; without, up to two, opened when
 * first needed. */
typedef struct {
    const TranslateOptions *opt;
    bool one_model;           /* -c, --from or --to chose it: model[1] has no path */
    SessionModel model[2];    /* [0] the chosen config's or en-zh's, [1] zh-en's */
    FILE *out;                /* the translations: stdout, or -o's temporary file */
    OutputFile *out_file;     /* -o FILE (not "-") */
    bool stopped;             /* translating stopped before the input's end (an output
                                 or standard input failed): no output file is replaced */
    bool reads_stdin;         /* the lines come from standard input (< FILE, -i -) */
    int logits_model;         /* the model whose rows --logits holds: 0, 1, or -1 none yet */
    int last_model;           /* the model the last line went to (0 before the first) */
} Session;
/* Everything about the models that can be checked is checked before any
 * input is read, and reported once (issue 14): a broken or missing config
 * is status 2 at start, not an error repeated on every line.  One model
 * (-c, --from/--to) is opened whole here, weights too.  Without -c both
 * configs are read and checked now, since either may be needed, and kept;
 * their weights and vocabularies are loaded, as the kept config says,
 * when a line first needs them, so English input never waits for the
 * zh-en model.  EXIT_OK, or the error's status after its message. */
ExitStatus translate_session_start(Session *s);
/* Which of the session's models translates this text: 0, or 1 (zh-en)
 * when there is no -c and it reads as Chinese.  A line that reads as
 * neither (no letters: blank, digits, punctuation; invalid UTF-8) goes to
 * the model the line before used: a Chinese file's blank last line opened
 * en-zh only to be refused, sent --attention's maps to FILE.zh-en and
 * took en-zh's broken files for its own status. */
int translate_session_model_index(const Session *s, const char *text, size_t len);
/* The model for this text, opened when first needed, or NULL with *status
 * and err set: a model that failed to open, or whose weights file changed
 * under the run, fails every line that needs it from then on.  `notes`:
 * where the notes on opening it go (stderr, or a batch's held-back
 * messages of the line that needs it). */
Translator *translate_session_model_for(Session *s, const char *text, size_t len, ExitStatus *status,
                                        Error *err, FILE *notes);
/* Frees every model, opened or not, and the config paths. */
void translate_session_close(Session *s);

#endif
