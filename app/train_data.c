/* train_data.c — train's data, read and said (see train_data.h). */
#include "train_data.h"

#include <stdio.h>
#include <string.h>

#include "../common/util.h"
#include "cli.h"

int train_data_open_simplifier(const Config *cfg, Simplifier **out)
{
    Error err = {{0}};
    *out = NULL;
    if (cfg->train.simplify_path && !(*out = simplify_load(cfg->train.simplify_path, &err))) {
        fprintf(stderr, "train: %s\n", err.message);
        return EXIT_DATA;
    }
    return 0;
}

int train_data_load(const Config *cfg, const char *data_path, const Simplifier *simplifier, Sources *sources)
{
    const TrainConfig *t = &cfg->train;
    memset(sources, 0, sizeof *sources);
    Error err = {{0}};
    SourceSpec one = {(char *)data_path, SOURCE_TSV, 1.0f, t->source_column, t->target_column, false};
    SourcesSettings set = {
        .specs = data_path ? &one : t->sources, .count = data_path ? 1 : t->n_sources,
        .english_source = strcmp(cfg->source_lang, "en") == 0, .max_len = cfg->arch.max_len,
        .max_length_ratio = t->max_length_ratio,
    };
    double started = util_now();
    set.simplifier = simplifier;
    int status = sources_load(&set, sources, &err);
    if (status) fprintf(stderr, "train: %s\n", err.message);
    if (!status && simplifier)
        cli_say("train", "Traditional → Simplified: %zu characters from %s", simplify_size(simplifier),
                t->simplify_path);
    if (status) return EXIT_DATA;
    static const char *const format_note[] = {"", " (cedict)", " (names)", ""}; /* SourceFormat's order */
    for (size_t i = 0; i < sources->n_sources; i++) {
        const SourceCounts *c = &sources->counts[i];
        const char *name = set.specs[i].path ? set.specs[i].path : "numbers"; /* numbers has no file */
        cli_say("train", "%s%s: %zu read, %zu kept (weight %g: %zu an epoch), %zu duplicates, "
                         "%zu filtered (%zu empty or invalid, %zu too long, %zu length ratio); %zu simplified, "
                         "%zu with brackets handled",
                name, format_note[set.specs[i].format], c->read, c->kept, (double)c->weight, sources_epoch_count(sources, i),
                c->duplicates, c->empty + c->too_long + c->ratio, c->empty, c->too_long, c->ratio, c->simplified,
                c->notes);
    }
    fprintf(stderr, "train: %zu pairs from %zu source%s, %zu an epoch [%.1f s]\n", sources->pairs.count,
            sources->n_sources, sources->n_sources == 1 ? "" : "s", sources_epoch_size(sources), util_now() - started);
    return 0;
}

const char *train_data_name(const TrainConfig *t)
{
    return t->n_sources == 1 ? t->sources[0].path : "train.sources";
}
