/* fuzz_cli.c — the path from a command line to a translation, without
 * exec'ing: arbitrary bytes as a config file plus what the options give the
 * library, then what `translate -c CONFIG [OPTIONS] TEXT...` does at its
 * start (translator_open: config, vocabularies, weights, architecture
 * checks; explain_parse_show), then each TEXT encoded and translated with
 * the options' beam and n-best, and --explain / --show drawn.
 *
 * Input: the config's YAML, then optionally a NUL byte and option lines:
 *     --beam=N   --n-best=N   --show=KIND[:L[:H]]   --explain
 *     --no-repeat-ngram=N   --alignment=hard|soft|T
 * (N as translate reads it: 1..64, n-best <= beam); any other line is a
 * TEXT (at most four).  The config is written to config.yaml in a scratch
 * folder that also holds the tiny model's files (tiny.src.vocab,
 * tiny.tgt.vocab, tiny.safetensors, tiny.tsv), so a config naming them
 * gets a real model.
 *
 * What must hold: a rejection is one line with the documented status (2
 * config, 3 model files; 1 for a TEXT); an opened model translates every
 * TEXT it accepts into valid UTF-8 without a line break.  The option
 * parser itself (app/translate_options.c) is not reached here.
 *
 * Deliberately not done: opening files outside the scratch folder (a
 * config may name any path: /dev/stdin would block, a real file would be
 * read), and writing a random model (random_init_seed with a missing
 * weights file writes one, possibly huge, at the named path); such
 * configs are only loaded and checked. */
#include "fuzz.h"

#include <limits.h>
#include <sys/stat.h>

#include "../../app/alignment.h"
#include "../../app/explain.h"
#include "../../app/translator.h"
#include "../../tokenizer/tokenizer.h"

static char dir[256];            /* the scratch folder */
static char config_path[sizeof dir + 16];
static int config_fd;            /* config_path, open for rewriting */
static FILE *sink;               /* /dev/null, for --explain and --show */

static void remove_dir(void)
{
    static const char *const names[] = {"config.yaml", "tiny.src.vocab", "tiny.tgt.vocab",
                                        "tiny.safetensors", "tiny.tsv"};
    char path[PATH_MAX + 32];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* Once: the scratch folder, with links to the tiny model's files. */
static void set_up(void)
{
    if (dir[0]) return;
    char cwd[PATH_MAX];
    FUZZ_CHECK(getcwd(cwd, sizeof cwd) != NULL);
    /* The tiny model's weights are not committed: opening its config
     * writes them (random_init_seed), as the first test run does. */
    Translator tiny;
    Error err = {{0}};
    if (translator_open(&tiny, "configs/tiny.yaml", &err) != EXIT_OK) {
        fprintf(stderr, "fuzz_cli: %s (run from the repository root)\n", err.message);
        abort();
    }
    translator_close(&tiny);
    snprintf(dir, sizeof dir, "%s/translate-fuzz-cli-%d",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
    remove_dir(); /* left by a crashed run whose pid was ours */
    FUZZ_CHECK(mkdir(dir, 0700) == 0);
    atexit(remove_dir);
    static const char *const files[] = {"tiny.src.vocab", "tiny.tgt.vocab", "tiny.safetensors",
                                        "tiny.tsv"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char from[PATH_MAX + 32], to[PATH_MAX + 32];
        snprintf(from, sizeof from, "%s/tests/data/%s", cwd, files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        if (access(from, R_OK) != 0) {
            fprintf(stderr, "fuzz_cli: no %s (run from the repository root)\n", from);
            abort();
        }
        FUZZ_CHECK(symlink(from, to) == 0);
    }
    snprintf(config_path, sizeof config_path, "%s/config.yaml", dir);
    config_fd = open(config_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_CHECK(config_fd >= 0);
    sink = fopen("/dev/null", "w");
    FUZZ_CHECK(sink != NULL);
}

/* Is `path` a file directly inside the scratch folder? */
static int in_dir(const char *path)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && path[n] == '/' && path[n + 1] != '\0' &&
           path[n + 1] != '.' && strchr(path + n + 1, '/') == NULL;
}

/* What the option lines ask for. */
typedef struct {
    int beam, n_best;   /* 0: not given */
    int bad;            /* a usage error: translate would exit 2 here */
    int explain;
    ShowChoice show;
    int no_repeat;      /* --no-repeat-ngram (0: off) */
    AlignmentChoice alignment;
    const char *texts[4];
    size_t text_len[4];
    int n_texts;
} Options;

/* A whole number in 1..64, as translate's parse_count reads it. */
static int count_option(const char *s, size_t len)
{
    int n = 0;
    if (len == 0 || len > 2) return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        n = 10 * n + (s[i] - '0');
    }
    return n >= 1 && n <= 64 ? n : -1;
}

static void parse_lines(const char *s, size_t len, Options *o)
{
    while (len > 0) {
        const char *nl = memchr(s, '\n', len);
        size_t n = nl ? (size_t)(nl - s) : len;
        if (n > 7 && memcmp(s, "--beam=", 7) == 0) {
            o->beam = count_option(s + 7, n - 7);
            o->bad |= o->beam < 0;
        } else if (n > 9 && memcmp(s, "--n-best=", 9) == 0) {
            o->n_best = count_option(s + 9, n - 9);
            o->bad |= o->n_best < 0;
        } else if (n > 7 && memcmp(s, "--show=", 7) == 0) {
            char value[64];
            Error err = {{0}};
            snprintf(value, sizeof value, "%.*s", (int)(n - 7), s + 7);
            if (explain_parse_show(value, &o->show, &err)) {
                FUZZ_CHECK(fuzz_one_line(err.message));
                o->bad = 1;
            }
        } else if (n > 18 && memcmp(s, "--no-repeat-ngram=", 18) == 0) {
            o->no_repeat = count_option(s + 18, n - 18);
            o->bad |= o->no_repeat < 0;
        } else if (n > 12 && memcmp(s, "--alignment=", 12) == 0) {
            char value[64];
            Error err = {{0}};
            snprintf(value, sizeof value, "%.*s", (int)(n - 12), s + 12);
            if (alignment_parse(value, &o->alignment, &err)) {
                FUZZ_CHECK(fuzz_one_line(err.message));
                o->bad = 1;
            }
        } else if (n == 9 && memcmp(s, "--explain", 9) == 0) {
            o->explain = 1;
        } else if (o->n_texts < 4) {
            o->texts[o->n_texts] = s;
            o->text_len[o->n_texts++] = n;
        }
        s += n + (nl != NULL);
        len -= n + (nl != NULL);
    }
    if (!o->n_best) o->n_best = 1;
    o->bad |= o->beam > 0 && o->n_best > o->beam; /* "--n-best N needs --beam N or more" */
}

/* Translate one TEXT as translate_one (app/translate_input.c) does, and check what comes out.
 * The text is NUL-terminated there (an argument, or line_read's buffer). */
static void translate_text(Translator *tr, const Options *o, const char *bytes, size_t len)
{
    char *text = malloc(len + 1);
    FUZZ_CHECK(text != NULL);
    memcpy(text, bytes, len);
    text[len] = '\0';
    SourceIds src;
    Error err = {{0}};
    ExitStatus st = translator_encode(tr, text, len, &src, &err);
    if (st != EXIT_OK) {
        FUZZ_CHECK(st == EXIT_INPUT && fuzz_one_line(err.message));
        free(text);
        return;
    }
    FUZZ_CHECK(src.count >= 1 && src.count <= tr->config.arch.max_len);
    enum { MAX_N = 64 };
    Translation t[MAX_N];
    char *texts[MAX_N];
    float scores[MAX_N];
    int n = translator_run(tr, &src, o->n_best, false, t, texts, scores);
    FUZZ_CHECK(n >= 1 && n <= o->n_best);
    if (o->explain) explain_print(sink, tr, text, &src, &t[0]);
    if (o->show.kind != SHOW_NONE) explain_show(sink, tr, &t[0], o->show, false, 80);
    for (int i = 0; i < n; i++) {
        TokenList tokens;
        FUZZ_CHECK(strchr(texts[i], '\n') == NULL);
        if (o->alignment.kind != ALIGNMENT_NONE) {
            char *align = alignment_format(&t[i], &tr->config.arch, o->alignment);
            FUZZ_CHECK(strchr(align, '\n') == NULL);
            free(align);
        }
        FUZZ_CHECK(tokenize(texts[i], strlen(texts[i]), &tokens, NULL) == 0); /* valid UTF-8 */
        token_list_free(&tokens);
        free(texts[i]);
        translation_free(&t[i]);
    }
    translator_source_ids_free(&src);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    set_up();
    const uint8_t *nul = memchr(data, '\0', size);
    size_t yaml_len = nul ? (size_t)(nul - data) : size;
    Options o = {0};
    if (nul) parse_lines((const char *)nul + 1, size - yaml_len - 1, &o);

    fuzz_rewrite(config_fd, data, yaml_len);

    Config cfg;
    Error err = {{0}};
    if (config_load(config_path, &cfg, &err)) {
        FUZZ_CHECK(fuzz_one_line(err.message));
        return 0;
    }
    struct stat st;
    int safe = in_dir(cfg.weights_path) && in_dir(cfg.source_vocab_path) &&
               in_dir(cfg.target_vocab_path) &&
               !(cfg.random_init && stat(cfg.weights_path, &st) != 0);
    config_free(&cfg);
    if (!safe || o.bad) return 0;

    Translator tr;
    ExitStatus status = translator_open(&tr, config_path, &err);
    if (status != EXIT_OK) {
        FUZZ_CHECK((status == EXIT_USAGE || status == EXIT_DATA) && fuzz_one_line(err.message));
        return 0;
    }
    FUZZ_CHECK(!tr.created_weights);
    translator_override_decoding(&tr, o.beam, o.n_best, false, o.no_repeat); /* as translate does, once */
    for (int i = 0; i < o.n_texts; i++) translate_text(&tr, &o, o.texts[i], o.text_len[i]);
    translator_close(&tr);
    return 0;
}
