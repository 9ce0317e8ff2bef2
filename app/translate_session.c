/* translate_session.c — the models a translate run uses (see
 * translate_session.h). */
#include "translate_session.h"

#include <stdlib.h>

#include "../tokenizer/tokenizer.h"
#include "cli.h"
#include "config_folders.h"
#include "explain.h"

int translate_session_model_index(const Session *s, const char *text, size_t len)
{
    if (s->one_model) return 0;
    int han = tokenizer_reads_as_han(text, len);
    return han >= 0 ? han : s->last_model;
}

Translator *translate_session_model_for(Session *s, const char *text, size_t len, ExitStatus *status,
                                        Error *err, FILE *notes)
{
    int which = translate_session_model_index(s, text, len);
    s->last_model = which;
    SessionModel *m = &s->model[which];
    if (m->failed) {
        *err = m->open_error;
        *status = m->failed;
        return NULL;
    }
    if (!m->opened) {
        if (!s->one_model && !s->opt->quiet)
            cli_say_to(notes, "translate", "note: using %s (%s)", m->path,
                       which ? "input reads as Chinese" : "default");
        ExitStatus st = m->have_config ? translator_open_config(&m->tr, &m->config, &m->open_error)
                                       : translator_open(&m->tr, m->path, &m->open_error);
        m->have_config = false;
        if (st != EXIT_OK) {
            m->failed = st;
            *err = m->open_error;
            *status = st;
            return NULL;
        }
        m->opened = true;
        Translator *tr = &m->tr;
        translator_override_decoding(tr, s->opt->beam, s->opt->n_best, s->opt->logits_path != NULL,
                                     s->opt->no_repeat_ngram);
        if (s->opt->int8) translator_use_int8(tr);
        if (tr->created_weights && !s->opt->quiet)
            cli_say_to(notes, "translate", "note: wrote an untrained random model (seed %llu) to %s: "
                                           "its translations are noise",
                       (unsigned long long)tr->config.random_seed, tr->config.weights_path);
        if (s->opt->attention_path || s->opt->html_path)
            m->attention = attention_json_new(&tr->config, tr->model.params.int8);
    } else if (translator_weights_changed(&m->tr, &m->open_error)) {
        /* from now on it fails every line that needs it, as a model that
         * never opened */
        m->failed = EXIT_DATA;
        *err = m->open_error;
        *status = EXIT_DATA;
        return NULL;
    }
    return &m->tr;
}

void translate_session_close(Session *s)
{
    for (int i = 0; i < 2; i++) {
        attention_json_free(s->model[i].attention);
        translator_close(&s->model[i].tr);
        config_free(&s->model[i].config);
        free(s->model[i].path);
    }
}

ExitStatus translate_session_start(Session *s)
{
    const TranslateOptions *o = s->opt;
    Error err = {{0}};
    ExitStatus status = EXIT_OK;
    if (s->one_model) {
        Translator *tr = translate_session_model_for(s, "", 0, &status, &err, stderr);
        if (tr && explain_check_show(o->show, &tr->config.arch, s->model[0].path, &err)) status = EXIT_USAGE;
        if (tr && (o->from || o->to) && config_folders_check_languages(&tr->config, &err)) status = EXIT_USAGE;
    }
    for (int i = 0; i < 2 && !s->one_model && status == EXIT_OK; i++) {
        Config *c = &s->model[i].config;
        if (config_load(s->model[i].path, c, &err)) {
            status = EXIT_USAGE;
            continue;
        }
        s->model[i].have_config = true; /* kept for translate_session_model_for: read once */
        if (explain_check_show(o->show, &c->arch, s->model[i].path, &err) || config_folders_check_languages(c, &err))
            status = EXIT_USAGE;
    }
    if (status != EXIT_OK) fprintf(stderr, "translate: %s\n", err.message);
    return status;
}
