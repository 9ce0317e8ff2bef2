/* config.c — load a model's YAML config into a Config (see config.h).
 *
 * We read libyaml's event stream directly rather than building its document
 * tree: events keep the anchor, tag and quoting of every value, so we can
 * refuse what we do not support, and each carries the line and column we put
 * in error messages.  The schema is data: one Key table per section (name,
 * type, where in Config the value goes, whether it is required, its range),
 * walked by one generic mapping parser.  Cross-key rules (d_model % heads,
 * distinct languages) and defaults that depend on other keys run after a
 * section is complete.
 *
 * Deliberately not supported: anchors, aliases, tags, merge keys, more than
 * one document, and YAML 1.1 number spellings beyond plain decimal ones
 * (no 0x/0o, no hex floats, no leading zeros, no .inf/.nan).  Paths are joined to the YAML
 * file's folder as text; nothing is canonicalised or checked to exist here.
 * The first problem found stops the load: one error, one line. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <float.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>

#include "../common/input_file.h"
#include "../common/util.h"
#include "../tokenizer/vocab.h"

/* A config is a page of YAML: anything far larger is not one, and libyaml
 * would hold a huge scalar in memory whole. */
#define CONFIG_MAX_BYTES (1 << 20)
/* Defaults for the train: section's data, relative to the YAML file's folder
 * (configs/ → repository root → the shared data next to it). */
#define DEFAULT_TRAIN_DATA "../../shared/data/tatoeba-cmn-eng/train.tsv"
#define DEFAULT_DEV_DATA "../../shared/data/tatoeba-cmn-eng/dev.tsv"

typedef enum {
    T_INT,        /* int */
    T_U64,        /* uint64_t, written as a non-negative integer */
    T_FLOAT,      /* float, finite */
    T_BOOL,       /* bool */
    T_STRING,     /* char *, non-empty */
    T_PATH,       /* char *, joined to the YAML file's folder */
    T_LANGUAGE,   /* char[8]: "en" or "zh" */
    T_ACTIVATION, /* Activation, by arch_activation_name() */
    T_NORM,       /* bool norm_first: "pre" → true, "post" → false */
    T_QUERY_INIT, /* QueryInit: "xavier" or "t5" */
    T_VOCABULARY, /* VocabularyKind: "subword" or "word" */
    T_FORMAT,     /* SourceFormat: "tsv", "cedict", "names" or "numbers" */
    T_SECTION,    /* a nested mapping with its own keys */
    T_SOURCES,    /* train.sources: a list of mappings, each a SourceSpec */
} ValueType;

enum { OPEN_LO = 1, OPEN_HI = 2 }; /* Key.open: exclusive float bounds */

typedef struct Section Section;
typedef struct Loader Loader;

/* format: of a training source, in SourceFormat's order. */
static const char *const source_formats[] = {"tsv", "cedict", "names", "numbers"};

typedef struct {
    const char *name;
    ValueType type;
    size_t offset;          /* of the field in Config (in a SourceSpec for a source's keys) */
    bool required;
    double lo, hi;          /* numeric range, inclusive unless `open` says not */
    unsigned open;
    const Section *section; /* T_SECTION only */
} Key;

#define MAX_KEYS 32

/* What one mapping has seen so far: which keys, and where each was. */
typedef struct {
    yaml_mark_t start;            /* the mapping itself */
    bool seen[MAX_KEYS];
    yaml_mark_t mark[MAX_KEYS];   /* of each key seen */
} SectionState;

struct Section {
    const char *name;   /* "architecture"; NULL for the top level; "" for a list item
                           (named by Loader.item) */
    const Key *keys;
    size_t n_keys;
    void (*enter)(Config *cfg);                              /* defaults; may be NULL */
    int (*check)(Loader *ld, const Section *sec, const SectionState *st); /* may be NULL */
};

struct Loader {
    const char *path;     /* for messages */
    char *dir;            /* folder of the YAML file; "" for the current one */
    yaml_parser_t parser;
    yaml_event_t ev;      /* the current event, owned */
    Config *cfg;
    char *base;           /* what Key offsets point into: the Config, or the list item */
    char item[96];        /* the list item being parsed, "train.sources[2]" */
    Error *err;
    char got[64];         /* scratch for got() */
};

/* ---- errors ------------------------------------------------------------ */

/* "path:line:col: message"; libyaml's marks count from 0, editors from 1. */
__attribute__((format(printf, 3, 4)))
static int fail(Loader *ld, yaml_mark_t at, const char *fmt, ...)
{
    char msg[sizeof ld->err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return error_set(ld->err, "%s:%zu:%zu: %s", ld->path, at.line + 1, at.column + 1, msg);
}

static int syntax_error(Loader *ld)
{
    const yaml_parser_t *p = &ld->parser;
    const char *problem = p->problem ? p->problem : "cannot parse";
    if (p->error == YAML_READER_ERROR) /* bad bytes have an offset, not a mark */
        return error_set(ld->err, "%s: byte %zu: %s", ld->path, p->problem_offset, problem);
    if (p->error == YAML_MEMORY_ERROR)
        return error_set(ld->err, "%s: out of memory while parsing", ld->path);
    if (p->context)
        return fail(ld, p->problem_mark, "%s (%s at %zu:%zu)", problem, p->context,
                    p->context_mark.line + 1, p->context_mark.column + 1);
    return fail(ld, p->problem_mark, "%s", problem);
}

/* How the current value looks in "expected X, got Y". */
static const char *got(Loader *ld)
{
    const yaml_event_t *ev = &ld->ev;
    if (ev->type == YAML_MAPPING_START_EVENT) return "a mapping";
    if (ev->type == YAML_SEQUENCE_START_EVENT) return "a list";
    const char *v = (const char *)ev->data.scalar.value;
    if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !*v) return "an empty value";
    snprintf(ld->got, sizeof ld->got, "%s'%.40s'",
             ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? "" : "the quoted string ", v);
    return ld->got;
}

/* ---- events ------------------------------------------------------------ */

/* Anchors, aliases and tags are valid YAML we choose not to support:
 * a config should read the same to a person as to the loader. */
static int reject_unsupported(Loader *ld)
{
    const yaml_event_t *ev = &ld->ev;
    const yaml_char_t *anchor = NULL, *tag = NULL;
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        return fail(ld, ev->start_mark, "aliases (*%s) are not supported", ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        anchor = ev->data.scalar.anchor, tag = ev->data.scalar.tag;
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor = ev->data.sequence_start.anchor, tag = ev->data.sequence_start.tag;
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = ev->data.mapping_start.anchor, tag = ev->data.mapping_start.tag;
        break;
    default:
        return 0;
    }
    if (anchor) return fail(ld, ev->start_mark, "anchors (&%s) are not supported", anchor);
    if (tag) return fail(ld, ev->start_mark, "tags (%s) are not supported", tag);
    return 0;
}

/* Replace the current event with the next one. */
static int next_event(Loader *ld)
{
    yaml_event_delete(&ld->ev);
    if (!yaml_parser_parse(&ld->parser, &ld->ev)) return syntax_error(ld);
    return reject_unsupported(ld);
}

/* ---- scalar values ----------------------------------------------------- */

/* a + sep + b, freshly allocated. */
static char *concat(const char *a, const char *sep, const char *b)
{
    size_t na = strlen(a), ns = strlen(sep), nb = strlen(b);
    char *p = xmalloc(na + ns + nb + 1);
    memcpy(p, a, na);
    memcpy(p + na, sep, ns);
    memcpy(p + na + ns, b, nb + 1);
    return p;
}

/* `rel` as seen from the YAML file's folder; absolute paths are kept. */
static char *join_path(const char *dir, const char *rel)
{
    if (rel[0] == '/' || strcmp(dir, ".") == 0) return xstrdup(rel); /* weights/x, not ./weights/x */
    return concat(dir, dir[strlen(dir) - 1] == '/' ? "" : "/", rel);
}

/* "in 1..8192", ">= 0", "> 0" or "in [0, 1)" for messages. */
static void range_text(const Key *k, char *buf, size_t n)
{
    /* an int's bound is said (">= 1" was, for 99999999999), a seed's is not */
    if (k->type != T_FLOAT && k->hi > INT_MAX)
        snprintf(buf, n, ">= %.0f", k->lo);
    else if (k->type != T_FLOAT)
        snprintf(buf, n, "in %.0f..%.0f", k->lo, k->hi);
    else if (isinf(k->hi))
        snprintf(buf, n, "%s %g", (k->open & OPEN_LO) ? ">" : ">=", k->lo);
    else
        snprintf(buf, n, "in %s%g, %g%s", (k->open & OPEN_LO) ? "(" : "[", k->lo, k->hi,
                 (k->open & OPEN_HI) ? ")" : "]");
}

static bool in_range(const Key *k, double v)
{
    bool lo_ok = (k->open & OPEN_LO) ? v > k->lo : v >= k->lo;
    bool hi_ok = (k->open & OPEN_HI) ? v < k->hi : v <= k->hi;
    return lo_ok && hi_ok;
}

/* A number: a decimal integer (T_INT, T_U64) or a finite float, in range.
 * Read as written or refused: no hex (strtod would take 0x1p3), no leading
 * zeros (YAML 1.1 reads 016 as octal 14), no float that rounds to 0 or to
 * a denormal (1e-50 would pass "> 0" and be stored as 0), and uint64
 * values up to 2^64 - 1 (strtoll stops at 2^63 - 1). */
static int parse_number(Loader *ld, const Key *k, const char *qname, double *out)
{
    const char *s = (const char *)ld->ev.data.scalar.value;
    bool is_int = k->type != T_FLOAT;
    char range[48];
    char *end = NULL;
    const char *digits = s + (*s == '+' || *s == '-');
    errno = 0;
    if (k->type == T_U64 && *s != '-')
        *out = (double)strtoull(s, &end, 10);
    else
        *out = is_int ? (double)strtoll(s, &end, 10) : strtod(s, &end);
    bool whole = end != s && !*end && ld->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (whole && !is_int && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
        return fail(ld, ld->ev.start_mark, "%s: hexadecimal numbers are not supported, got '%.40s'", qname, s);
    if (!whole)
        return fail(ld, ld->ev.start_mark, "%s: expected %s, got %s", qname,
                    is_int ? "an integer" : "a number", got(ld));
    if (digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9')
        return fail(ld, ld->ev.start_mark, "%s: %.40s: leading zeros are refused (YAML 1.1 reads it as octal)",
                    qname, s);
    if (!is_int && !isfinite(*out)) /* "nan", "inf", "1e999" */
        return fail(ld, ld->ev.start_mark, "%s: expected a finite number, got '%.40s'", qname, s);
    if (is_int ? errno == ERANGE : fabs(*out) > FLT_MAX) /* beyond long long / uint64 / float */
        return fail(ld, ld->ev.start_mark, "%s: %.40s is too large", qname, s);
    if (!is_int && (errno == ERANGE || (*out != 0 && fabs(*out) < FLT_MIN))) /* below float's normal range */
        return fail(ld, ld->ev.start_mark, "%s: %.40s is too small (a float's smallest is %g; 0, where the range allows it)",
                    qname, s, (double)FLT_MIN);
    if (in_range(k, *out)) return 0;
    /* The range is written only for the message: formatting it (%g) for
     * every number was ~15 of the ~110 us that reading both default configs
     * takes at each start (warm, best of 6 x 1,000 loads). */
    range_text(k, range, sizeof range);
    return fail(ld, ld->ev.start_mark, "%s: %.40s is out of range (must be %s)", qname, s, range);
}

/* The index of the value in choices[0..n), else an error listing them
 * ("expected tsv, cedict, names or numbers"). */
static int parse_one_of(Loader *ld, const char *qname, const char *const *choices, int n)
{
    const char *s = (const char *)ld->ev.data.scalar.value;
    for (int i = 0; i < n; i++)
        if (strcmp(s, choices[i]) == 0) return i;
    char list[128];
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                                 choices[i]);
    return fail(ld, ld->ev.start_mark, "%s: expected %s, got %s", qname, list, got(ld));
}

/* 0 if the value is `first`, 1 if it is `second`, else an error. */
static int parse_choice(Loader *ld, const char *qname, const char *first, const char *second)
{
    return parse_one_of(ld, qname, (const char *const[]){first, second}, 2);
}

/* Booleans as YAML 1.1 spells them (true/yes/on, false/no/off, any case). */
static int parse_bool(Loader *ld, const char *qname, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    const char *s = (const char *)ld->ev.data.scalar.value;
    bool plain = ld->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    for (int i = 0; plain && i < 3; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *out = true, 0;
        if (strcasecmp(s, no[i]) == 0) return *out = false, 0;
    }
    return fail(ld, ld->ev.start_mark, "%s: expected true or false, got %s", qname,
                got(ld));
}

/* Store the current scalar event into the field `k` describes. */
static int store_scalar(Loader *ld, const Key *k, const char *qname)
{
    const char *s = (const char *)ld->ev.data.scalar.value;
    char *field = ld->base + k->offset;
    double v;
    int i;
    /* YAML's "\0" escape: the C string would end there, and
     * "en-zh.safetensors\0.old" loaded en-zh.safetensors without a word. */
    if (strlen(s) != ld->ev.data.scalar.length)
        return fail(ld, ld->ev.start_mark, "%s: the value holds a NUL character (\\0)", qname);
    switch (k->type) {
    case T_INT:
        if (parse_number(ld, k, qname, &v)) return -1;
        *(int *)field = (int)v;
        break;
    case T_U64:
        if (parse_number(ld, k, qname, &v)) return -1;
        *(uint64_t *)field = (uint64_t)strtoull(s, NULL, 10); /* exact, not via double */
        break;
    case T_FLOAT:
        if (parse_number(ld, k, qname, &v)) return -1;
        *(float *)field = (float)v;
        break;
    case T_BOOL:
        return parse_bool(ld, qname, (bool *)field);
    case T_STRING:
    case T_PATH:
        if (!*s) return fail(ld, ld->ev.start_mark, "%s: expected a non-empty string", qname);
        /* YAML's null, unquoted, is no value (it became the path configs/~);
         * quoted, "~" is a name like any other. */
        if (ld->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            (!strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL")))
            return fail(ld, ld->ev.start_mark, "%s: expected a non-empty string, not YAML's null '%s'", qname, s);
        free(*(char **)field);
        *(char **)field = k->type == T_PATH ? join_path(ld->dir, s) : xstrdup(s);
        break;
    case T_LANGUAGE:
        if ((i = parse_choice(ld, qname, "en", "zh")) < 0) return -1;
        memcpy(field, i ? "zh" : "en", 3);
        break;
    case T_ACTIVATION:
        i = parse_choice(ld, qname, arch_activation_name(ACTIVATION_RELU),
                         arch_activation_name(ACTIVATION_GELU));
        if (i < 0) return -1;
        *(Activation *)field = i ? ACTIVATION_GELU : ACTIVATION_RELU;
        break;
    case T_NORM:
        if ((i = parse_choice(ld, qname, "post", "pre")) < 0) return -1;
        *(bool *)field = i == 1; /* pre-norm */
        break;
    case T_QUERY_INIT:
        if ((i = parse_choice(ld, qname, "xavier", "t5")) < 0) return -1;
        *(QueryInit *)field = i ? QUERY_INIT_T5 : QUERY_INIT_XAVIER;
        break;
    case T_VOCABULARY:
        if ((i = parse_choice(ld, qname, "subword", "word")) < 0) return -1;
        *(VocabularyKind *)field = i ? VOCABULARY_WORD : VOCABULARY_SUBWORD;
        break;
    case T_FORMAT: {
        if ((i = parse_one_of(ld, qname, source_formats, 4)) < 0) return -1;
        *(SourceFormat *)field = (SourceFormat)i;
        break;
    }
    case T_SECTION:
    case T_SOURCES:
        ASSERT(!"store_scalar: a section is not a scalar");
    }
    return 0;
}

/* ---- mappings ---------------------------------------------------------- */

static int parse_mapping(Loader *ld, const Section *sec);

static const char *expected(ValueType t)
{
    switch (t) {
    case T_INT: case T_U64: return "an integer";
    case T_FLOAT: return "a number";
    case T_BOOL: return "true or false";
    case T_SECTION: return "a mapping";
    case T_SOURCES: return "a list of sources";
    default: return "a single value";
    }
}

static int parse_sources(Loader *ld, const Key *k, const char *qname);

/* The current event starts the value of key `k`. */
static int parse_value(Loader *ld, const Key *k, const char *qname)
{
    yaml_event_type_t want = k->type == T_SECTION ? YAML_MAPPING_START_EVENT
                             : k->type == T_SOURCES ? YAML_SEQUENCE_START_EVENT : YAML_SCALAR_EVENT;
    if (ld->ev.type != want)
        return fail(ld, ld->ev.start_mark, "%s: expected %s, got %s", qname, expected(k->type),
                    got(ld));
    if (k->type == T_SOURCES) return parse_sources(ld, k, qname);
    return k->type == T_SECTION ? parse_mapping(ld, k->section) : store_scalar(ld, k, qname);
}

static int find_key(const Section *sec, const char *name)
{
    for (size_t i = 0; i < sec->n_keys; i++)
        if (strcmp(sec->keys[i].name, name) == 0) return (int)i;
    return -1;
}

/* The current event is the MAPPING_START of `sec`; consume up to its end. */
static int parse_mapping(Loader *ld, const Section *sec)
{
    ASSERT(sec->n_keys <= MAX_KEYS);
    SectionState st = {.start = ld->ev.start_mark};
    const char *in = sec->name ? " in " : "", *where = !sec->name ? "" : *sec->name ? sec->name : ld->item;
    if (sec->enter) sec->enter(ld->cfg);
    for (;;) {
        if (next_event(ld)) return -1;
        if (ld->ev.type == YAML_MAPPING_END_EVENT) break;
        if (ld->ev.type != YAML_SCALAR_EVENT)
            return fail(ld, ld->ev.start_mark, "expected a key%s%s", in, where);
        const char *name = (const char *)ld->ev.data.scalar.value;
        int i = find_key(sec, name);
        if (i < 0) return fail(ld, ld->ev.start_mark, "unknown key '%.60s'%s%s", name, in, where);
        if (st.seen[i])
            return fail(ld, ld->ev.start_mark, "duplicate key '%s'%s%s", name, in, where);
        st.seen[i] = true;
        st.mark[i] = ld->ev.start_mark;
        char qname[sizeof ld->item + 64];
        snprintf(qname, sizeof qname, "%s%s%s", where, sec->name ? "." : "", name);
        if (next_event(ld) || parse_value(ld, &sec->keys[i], qname)) return -1;
    }
    /* A missing key has no place of its own: point at where its mapping
     * starts (libyaml marks a block mapping at its first key). */
    for (size_t i = 0; i < sec->n_keys; i++)
        if (sec->keys[i].required && !st.seen[i])
            return fail(ld, st.start, "%s%smissing required key '%s'", where,
                        sec->name ? ": " : "", sec->keys[i].name);
    return sec->check ? sec->check(ld, sec, &st) : 0;
}

/* ---- the schema -------------------------------------------------------- */

/* Table rows.  Offsets are into Config, so nested fields read naturally
 * (OFF(arch.d_model)); ranges are inclusive unless OPEN_LO/OPEN_HI say so. */
#define OFF(field) offsetof(Config, field)
#define NO_MAX INFINITY
#define REQ true
#define OPT false
#define INT(name, field, req, lo, hi) {name, T_INT, OFF(field), req, lo, hi, 0, NULL}
#define U64(name, field) {name, T_U64, OFF(field), OPT, 0, NO_MAX, 0, NULL}
#define FLOAT(name, field, lo, hi, open) {name, T_FLOAT, OFF(field), OPT, lo, hi, open, NULL}
#define FLOAT_REQ(name, field, lo, hi) {name, T_FLOAT, OFF(field), REQ, lo, hi, 0, NULL}
#define VALUE(name, type, field, req) {name, type, OFF(field), req, 0, 0, 0, NULL}
#define SUB(name, req, section) {name, T_SECTION, 0, req, 0, 0, 0, section}

static void enter_top(Config *cfg)
{
    cfg->decode = (SearchSettings){.beam = 1, .length_penalty = 1.0f, .max_output_ratio = 2.0f,
                                 .max_output_extra = 10};
}

static void enter_train(Config *cfg)
{
    cfg->has_train = true;
    cfg->train = (TrainConfig){
        .source_column = -1, .target_column = -1, /* unset: filled in by finish_train */
        .source_vocab_size = 8000, .target_vocab_size = 8000, .min_count = 1,
        .batch_tokens = 4096, .learning_rate = 1e-3f, .warmup_steps = 1000, .epochs = 20,
        .max_steps = 0, .label_smoothing = 0.1f, .dropout = 0.1f, .weight_decay = 0.0f,
        .clip_norm = 1.0f, .seed = 1, .checkpoint_steps = 500, .eval_epochs = 1, .log_steps = 50,
    };
}

/* The weights are written (translate --init-weights --force, a seeded
 * random model, train): naming the config or a vocabulary, they would
 * replace it. */
static int check_model(Loader *ld, const Section *sec, const SectionState *st)
{
    Config *c = ld->cfg;
    c->random_init = st->seen[find_key(sec, "random_init_seed")];
    const char *names[] = {"the config itself", "model.source_vocab", "model.target_vocab", "model.simplify"};
    const char *paths[] = {c->path, c->source_vocab_path, c->target_vocab_path, c->simplify_path};
    for (int i = 0; i < 4; i++)
        if (c->weights_path && paths[i] && input_file_same(c->weights_path, paths[i]))
            return fail(ld, st->mark[find_key(sec, "weights")], "model.weights and %s are the same file (%.200s)",
                        names[i], c->weights_path);
    /* and train --vocab writes the vocabularies */
    for (int i = 1; i < 3; i++)
        if (paths[i] && input_file_same(paths[i], c->path))
            return fail(ld, st->mark[find_key(sec, i == 1 ? "source_vocab" : "target_vocab")],
                        "%s and the config itself are the same file (%.200s)", names[i], c->path);
    return 0;
}

static int check_architecture(Loader *ld, const Section *sec, const SectionState *st)
{
    const ModelArch *a = &ld->cfg->arch;
    if (a->d_model % a->heads != 0)
        return fail(ld, st->mark[find_key(sec, "heads")],
                    "architecture: d_model %d is not divisible by heads %d", a->d_model, a->heads);
    return 0;
}

/* Train defaults that depend on keys which may come after train: in the file. */
static int finish_train(Loader *ld, yaml_mark_t train_mark)
{
    Config *c = ld->cfg;
    TrainConfig *t = &c->train;
    /* The Tatoeba TSV is English in column 0, Chinese in column 1.  A column
     * left out is "the other one" of 0 and 1; with neither given, the source
     * language decides. */
    if (t->source_column < 0 && t->target_column >= 0)
        t->source_column = t->target_column == 0 ? 1 : 0;
    if (t->source_column < 0) t->source_column = strcmp(c->source_lang, "en") == 0 ? 0 : 1;
    if (t->target_column < 0) t->target_column = t->source_column == 0 ? 1 : 0;
    if (t->source_column == t->target_column)
        return fail(ld, train_mark, "train: source_column and target_column are both %d",
                    t->source_column);
    if (!t->n_sources && !t->train_path) t->train_path = join_path(ld->dir, DEFAULT_TRAIN_DATA);
    if (!t->n_sources) { /* train_data: the one-source shorthand */
        t->sources = xcalloc(1, sizeof *t->sources);
        t->sources[0] = (SourceSpec){xstrdup(t->train_path), SOURCE_TSV, 1.0f, -1, -1, false};
        t->n_sources = 1;
    }
    /* A source's columns default to the train: section's, resolved above;
     * one given alone means the other of 0 and 1, as there. */
    for (size_t i = 0; i < t->n_sources; i++) {
        SourceSpec *src = &t->sources[i];
        if (src->source_column < 0 && src->target_column >= 0 && src->target_column != t->target_column)
            src->source_column = src->target_column == 0;
        if (src->target_column < 0 && src->source_column >= 0 && src->source_column != t->source_column)
            src->target_column = src->source_column == 0;
        if (src->source_column < 0) src->source_column = t->source_column;
        if (src->target_column < 0) src->target_column = t->target_column;
        if (src->format == SOURCE_TSV && src->source_column == src->target_column)
            return fail(ld, train_mark, "train.sources[%zu]: source_column and target_column are both %d", i,
                        src->source_column);
        bool tsv_before = false; /* a names or numbers source's pairs come from them */
        for (size_t k = 0; k < i; k++) tsv_before |= t->sources[k].format == SOURCE_TSV;
        if ((src->format == SOURCE_NAMES || src->format == SOURCE_NUMBERS) && !tsv_before)
            return fail(ld, train_mark, "train.sources[%zu]: format %s takes the pairs of the tsv sources "
                                        "listed before it, and there is none", i, source_formats[src->format]);
    }
    /* A subword vocabulary holds the specials and the byte tokens before
     * any piece (tokenizer/vocab.h): a size that leaves no room builds
     * nothing, and train --vocab said so only after reading the data, as
     * a write error (status 4). */
    const int reserved = VOCAB_SPECIALS + VOCAB_BYTE_TOKENS;
    if (t->vocabulary == VOCABULARY_SUBWORD && (t->source_vocab_size <= reserved || t->target_vocab_size <= reserved))
        return fail(ld, train_mark, "train: a subword vocabulary needs a size above %d (%d special and %d byte "
                                    "tokens): source_vocab_size is %d, target_vocab_size %d",
                    reserved, VOCAB_SPECIALS, VOCAB_BYTE_TOKENS, t->source_vocab_size, t->target_vocab_size);
    if (!t->dev_path) t->dev_path = join_path(ld->dir, DEFAULT_DEV_DATA);
    if (!t->checkpoint_path) t->checkpoint_path = concat(c->weights_path, "", ".ckpt");
    if (!t->log_path) t->log_path = concat(c->weights_path, "", ".log.csv");
    /* Three files train writes: one name for two would make one overwrite
     * the other (a checkpoint over the model it is training). */
    const char *names[] = {"model.weights", "train.checkpoint", "train.log"};
    const char *paths[] = {c->weights_path, t->checkpoint_path, t->log_path};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (strcmp(paths[i], paths[j]) == 0)
                return fail(ld, train_mark, "%s and %s are the same file (%.200s)", names[j], names[i],
                            paths[i]);
    return 0;
}

static int check_top(Loader *ld, const Section *sec, const SectionState *st)
{
    const Config *c = ld->cfg;
    if (strcmp(c->source_lang, c->target_lang) == 0)
        return fail(ld, st->mark[find_key(sec, "target_language")],
                    "target_language: must differ from source_language ('%s')", c->source_lang);
    if (c->simplify_path && strcmp(c->source_lang, "zh") != 0)
        return fail(ld, st->mark[find_key(sec, "model")],
                    "model.simplify reads Chinese sources as Simplified: source_language is %s", c->source_lang);
    return c->has_train ? finish_train(ld, st->mark[find_key(sec, "train")]) : 0;
}

static const Key model_keys[] = {
    VALUE("weights", T_PATH, weights_path, REQ),
    VALUE("source_vocab", T_PATH, source_vocab_path, REQ),
    VALUE("target_vocab", T_PATH, target_vocab_path, REQ),
    U64("random_init_seed", random_seed),
    /* Traditional Chinese input read as Simplified: a table train
     * --simplify-table writes (data/simplify.h) */
    VALUE("simplify", T_PATH, simplify_path, OPT),
};

static const Key architecture_keys[] = {
    INT("d_model", arch.d_model, REQ, 1, 8192),
    INT("heads", arch.heads, REQ, 1, 256),
    INT("encoder_layers", arch.encoder_layers, REQ, 1, 64),
    INT("decoder_layers", arch.decoder_layers, REQ, 1, 64),
    INT("d_ff", arch.d_ff, REQ, 1, 65536),
    VALUE("activation", T_ACTIVATION, arch.activation, REQ),
    VALUE("norm", T_NORM, arch.norm_first, REQ),
    INT("max_len", arch.max_len, REQ, 2, ARCH_MAX_LEN),
    VALUE("scale_attention", T_BOOL, arch.scale_attention, REQ),
    VALUE("tied_output_embedding", T_BOOL, arch.tied_output, REQ),
};

static const Key decoding_keys[] = {
    INT("beam", decode.beam, OPT, 1, 64),
    /* 10 at most: length^α stays a float for any max_len (4096^10 is 1.3e36;
     * α = 40 overflowed it, every score became -0 and the beam kept arrival
     * order).  Published values are 0.6 to 2. */
    FLOAT("length_penalty", decode.length_penalty, 0, 10, 0),
    FLOAT("max_output_ratio", decode.max_output_ratio, 0, NO_MAX, OPEN_LO),
    INT("max_output_extra", decode.max_output_extra, OPT, 0, INT_MAX),
    VALUE("copy_numbers", T_BOOL, decode.copy_numbers, OPT),
};

/* What `translate -c CONFIG --eval EVAL_DATA` printed, so that
 * --list-models can show it (tests/test_cli_models.c re-measures it). */
static const Key scores_keys[] = {
    VALUE("eval_data", T_PATH, scores.eval_path, REQ),
    /* required: a score left out would be listed as a measured 0.00 */
    FLOAT_REQ("bleu", scores.bleu, 0, 100),
    FLOAT_REQ("chrf2", scores.chrf2, 0, 100),
    /* the beam they were measured with (1: greedy); default: decoding's */
    INT("beam", scores.beam, OPT, 1, 64),
};

static void enter_scores(Config *cfg) { cfg->has_scores = true; }

/* One item of train.sources: offsets into a SourceSpec (Loader.base). */
#define SRC(name, type, field, req, lo, hi, open) {name, type, offsetof(SourceSpec, field), req, lo, hi, open, NULL}
static const Key source_keys[] = {
    SRC("path", T_PATH, path, OPT, 0, 0, 0), /* required but with numbers: check_source */
    SRC("format", T_FORMAT, format, OPT, 0, 0, 0),
    SRC("weight", T_FLOAT, weight, OPT, 0, 100, OPEN_LO),
    SRC("source_column", T_INT, source_column, OPT, 0, 15, 0),
    SRC("target_column", T_INT, target_column, OPT, 0, 15, 0),
    SRC("strip_notes", T_BOOL, strip_notes, OPT, 0, 0, 0),
};

/* Every format reads a file but numbers, which takes the pairs of the tsv
 * sources above it; columns and notes mean nothing but in a tsv source (a
 * dictionary has its own layout, and names reads one too). */
static int check_source(Loader *ld, const Section *sec, const SectionState *st)
{
    const SourceSpec *src = (const SourceSpec *)ld->base;
    const char *format = source_formats[src->format];
    int path = find_key(sec, "path");
    if (src->format == SOURCE_NUMBERS && st->seen[path])
        return fail(ld, st->mark[path], "%s.path: not used with format numbers (its pairs are those of the tsv "
                    "sources above it)", ld->item);
    if (src->format != SOURCE_NUMBERS && !st->seen[path])
        return fail(ld, st->start, "%s: missing required key 'path'", ld->item);
    static const char *const tsv_only[] = {"source_column", "target_column", "strip_notes"};
    for (size_t i = 0; src->format != SOURCE_TSV && i < 3; i++) {
        int k = find_key(sec, tsv_only[i]);
        if (st->seen[k])
            return fail(ld, st->mark[k], "%s.%s: not used with format %s (%s)", ld->item, tsv_only[i], format,
                        src->format == SOURCE_NUMBERS ? "its pairs are those of the tsv sources above it"
                                                      : "its columns are fixed");
    }
    return 0;
}

static const Section source_section = {"", source_keys, sizeof source_keys / sizeof source_keys[0], NULL,
                                       check_source};

/* The current event starts train.sources' list; each item is a mapping
 * parsed with source_keys into a new SourceSpec. */
static int parse_sources(Loader *ld, const Key *k, const char *qname)
{
    (void)k;
    TrainConfig *t = &ld->cfg->train;
    yaml_mark_t start = ld->ev.start_mark;
    for (;;) {
        if (next_event(ld)) return -1;
        if (ld->ev.type == YAML_SEQUENCE_END_EVENT) break;
        snprintf(ld->item, sizeof ld->item, "%.60s[%zu]", qname, t->n_sources);
        if (ld->ev.type != YAML_MAPPING_START_EVENT)
            return fail(ld, ld->ev.start_mark, "%s: expected a mapping (path, format, weight, ...), got %s",
                        ld->item, got(ld));
        if (t->n_sources == CONFIG_MAX_SOURCES)
            return fail(ld, ld->ev.start_mark, "%s: more than %d sources", qname, CONFIG_MAX_SOURCES);
        t->sources = xrealloc(t->sources, (t->n_sources + 1) * sizeof *t->sources);
        SourceSpec *src = &t->sources[t->n_sources++];
        *src = (SourceSpec){.format = SOURCE_TSV, .weight = 1.0f, .source_column = -1, .target_column = -1};
        char *config = ld->base;
        ld->base = (char *)src;
        int rc = parse_mapping(ld, &source_section);
        ld->base = config;
        if (rc) return -1;
    }
    if (!t->n_sources) return fail(ld, start, "%s: expected at least one source", qname);
    return 0;
}

static int check_train(Loader *ld, const Section *sec, const SectionState *st)
{
    int sources = find_key(sec, "sources"), one = find_key(sec, "train_data");
    if (st->seen[sources] && st->seen[one])
        return fail(ld, st->mark[sources], "train: sources and train_data are both given "
                    "(train_data is the one-source shorthand: use one of them)");
    float ratio = ld->cfg->train.max_length_ratio;
    if (ratio > 0 && ratio < 1)
        return fail(ld, st->mark[find_key(sec, "max_length_ratio")],
                    "train.max_length_ratio: %g would drop every pair (must be 0, off, or >= 1)", ratio);
    return 0;
}

static const Key train_keys[] = {
    VALUE("train_data", T_PATH, train.train_path, OPT),
    VALUE("sources", T_SOURCES, train.sources, OPT),
    FLOAT("max_length_ratio", train.max_length_ratio, 0, NO_MAX, 0),
    VALUE("simplify_with", T_PATH, train.simplify_path, OPT),
    VALUE("dev_data", T_PATH, train.dev_path, OPT),
    INT("source_column", train.source_column, OPT, 0, 15),
    INT("target_column", train.target_column, OPT, 0, 15),
    INT("source_vocab_size", train.source_vocab_size, OPT, 5, INT_MAX),
    INT("target_vocab_size", train.target_vocab_size, OPT, 5, INT_MAX),
    INT("min_count", train.min_count, OPT, 1, INT_MAX),
    VALUE("vocabulary", T_VOCABULARY, train.vocabulary, OPT),
    INT("batch_tokens", train.batch_tokens, OPT, 1, INT_MAX),
    FLOAT("learning_rate", train.learning_rate, 0, NO_MAX, OPEN_LO),
    INT("warmup_steps", train.warmup_steps, OPT, 0, INT_MAX),
    INT("epochs", train.epochs, OPT, 1, INT_MAX),
    INT("max_steps", train.max_steps, OPT, 0, INT_MAX),
    FLOAT("max_minutes", train.max_minutes, 0, NO_MAX, 0),
    FLOAT("label_smoothing", train.label_smoothing, 0, 1, OPEN_HI),
    FLOAT("dropout", train.dropout, 0, 1, OPEN_HI),
    FLOAT("drop_final_punctuation", train.drop_final_punctuation, 0, 1, 0),
    FLOAT("weight_decay", train.weight_decay, 0, NO_MAX, 0),
    FLOAT("clip_norm", train.clip_norm, 0, NO_MAX, 0),
    U64("seed", train.seed),
    INT("checkpoint_steps", train.checkpoint_steps, OPT, 1, INT_MAX),
    INT("eval_epochs", train.eval_epochs, OPT, 1, INT_MAX),
    INT("log_steps", train.log_steps, OPT, 1, INT_MAX),
    VALUE("weights_f16", T_BOOL, train.weights_f16, OPT),
    INT("average_last", train.average_last, OPT, 0, 20),
    VALUE("query_init", T_QUERY_INIT, train.query_init, OPT),
    VALUE("checkpoint", T_PATH, train.checkpoint_path, OPT),
    VALUE("log", T_PATH, train.log_path, OPT),
};

#define SECTION(name, keys, enter, check) {name, keys, sizeof keys / sizeof keys[0], enter, check}
static const Section model_section = SECTION("model", model_keys, NULL, check_model);
static const Section architecture_section =
    SECTION("architecture", architecture_keys, NULL, check_architecture);
static const Section decoding_section = SECTION("decoding", decoding_keys, NULL, NULL);
static const Section train_section = SECTION("train", train_keys, enter_train, check_train);
static const Section scores_section = SECTION("scores", scores_keys, enter_scores, NULL);

static const Key top_keys[] = {
    VALUE("name", T_STRING, name, REQ),
    VALUE("source_language", T_LANGUAGE, source_lang, REQ),
    VALUE("target_language", T_LANGUAGE, target_lang, REQ),
    SUB("model", REQ, &model_section),
    SUB("architecture", REQ, &architecture_section),
    SUB("decoding", OPT, &decoding_section),
    SUB("train", OPT, &train_section),
    SUB("scores", OPT, &scores_section),
};
static const Section top_section = SECTION(NULL, top_keys, enter_top, check_top);

/* ---- the file ---------------------------------------------------------- */

/* Exactly one document, and it is a mapping. */
static int parse_stream(Loader *ld)
{
    if (next_event(ld)) return -1;
    ASSERT(ld->ev.type == YAML_STREAM_START_EVENT);
    if (next_event(ld)) return -1;
    if (ld->ev.type == YAML_STREAM_END_EVENT)
        return fail(ld, ld->ev.start_mark, "empty file: expected a mapping of settings");
    if (next_event(ld)) return -1; /* past DOCUMENT_START */
    if (ld->ev.type != YAML_MAPPING_START_EVENT)
        return fail(ld, ld->ev.start_mark, "expected a mapping of settings, got %s",
                    got(ld));
    if (parse_mapping(ld, &top_section) || next_event(ld) || next_event(ld)) return -1;
    if (ld->ev.type == YAML_DOCUMENT_START_EVENT)
        return fail(ld, ld->ev.start_mark, "more than one document (only one is allowed)");
    return 0;
}

/* The folder a config's relative paths start from: the one its path names
 * (a symbolic link's own), or, for a config from a pipe or redirection
 * (-c <(...), -c /dev/stdin < FILE: a name of a descriptor, or no regular
 * file), the working directory: /dev/fd/../weights is no place anybody
 * meant.  Only descriptors' names count, not all of /dev: a config kept
 * in /dev/shm read its model from the working directory (and with
 * random_init_seed wrote one there). */
static bool names_a_descriptor(const char *path)
{
    return strcmp(path, "/dev/stdin") == 0 || strncmp(path, "/dev/fd/", 8) == 0 ||
           (strncmp(path, "/proc/", 6) == 0 && strstr(path, "/fd/"));
}

static char *dir_of(const char *path)
{
    struct stat st;
    if (names_a_descriptor(path) || (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) return xstrdup(".");
    return util_path_folder(path);
}

int config_load(const char *path, Config *cfg, Error *err)
{
    memset(cfg, 0, sizeof *cfg);
    /* A config may come from a pipe (-c <(...)): read with the same 1 MiB
     * limit as a file, so nothing makes us hold more (common/input_file.h). */
    size_t size;
    char *text = input_file_read_all(path, INPUT_FILE_STREAM, CONFIG_MAX_BYTES, "a config's",
                                     &size, err);
    if (!text) return -1;
    Loader ld = {.path = path, .dir = dir_of(path), .cfg = cfg, .base = (char *)cfg, .err = err};
    cfg->path = xstrdup(path);
    if (!yaml_parser_initialize(&ld.parser)) ASSERT(!"yaml_parser_initialize: out of memory");
    yaml_parser_set_input_string(&ld.parser, (const unsigned char *)text, size);
    int rc = parse_stream(&ld);
    yaml_event_delete(&ld.ev);
    yaml_parser_delete(&ld.parser);
    free(text);
    free(ld.dir);
    if (rc) config_free(cfg);
    return rc;
}

void config_free(Config *cfg)
{
    if (!cfg) return;
    for (size_t i = 0; i < cfg->train.n_sources; i++) free(cfg->train.sources[i].path);
    free(cfg->train.sources);
    char *owned[] = {cfg->path, cfg->name, cfg->weights_path, cfg->source_vocab_path,
                     cfg->target_vocab_path, cfg->simplify_path, cfg->train.train_path, cfg->train.dev_path, cfg->train.simplify_path,
                     cfg->train.checkpoint_path, cfg->train.log_path, cfg->scores.eval_path};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++) free(owned[i]);
    memset(cfg, 0, sizeof *cfg);
}
