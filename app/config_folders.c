/* config_folders.c — finding the configs (see config_folders.h). */
#include "config_folders.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/util.h"
#include "cli.h"
#include "explain.h"

/* Where configs are looked for, in order: $TRANSLATE_HOME/configs, configs/
 * next to the program (a source checkout), ../share/translate/configs
 * beside it (after make install).  The folder of the program is found
 * through /proc/self/exe, so the working directory does not matter.
 * Fills dirs[0..n-1] and returns n. */
enum { MAX_CONFIG_DIRS = 3 };
static int config_dirs(char dirs[MAX_CONFIG_DIRS][PATH_MAX + 64])
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    const char *home = getenv("TRANSLATE_HOME");
    int count = 0;
    if (home && *home) /* set but empty (TRANSLATE_HOME= ...) is unset, not /configs */
        snprintf(dirs[count++], sizeof dirs[0], "%s/configs", home);
    snprintf(dirs[count++], sizeof dirs[0], "%s/configs", exe);
    snprintf(dirs[count++], sizeof dirs[0], "%s/../share/translate/configs", exe);
    return count;
}

/* NAME in the first config folder that has it, else NULL.  One that is
 * there but cannot be read is found (its error names it): skipped, the
 * next folder's config of that name was used unsaid. */
static char *find_config(const char *name)
{
    char dirs[MAX_CONFIG_DIRS][PATH_MAX + 64];
    int n = config_dirs(dirs);
    for (int i = 0; i < n; i++) {
        char *path = xmalloc(strlen(dirs[i]) + strlen(name) + 2);
        sprintf(path, "%s/%s", dirs[i], name);
        if (access(path, F_OK) == 0) return path;
        free(path);
    }
    return NULL;
}

/* The first config folder that is there (--list-models lists it), else
 * the one beside the program: where a missing config is said to be
 * missing (it named configs/ beside the program after make install,
 * where configs are in ../share/translate/configs). */
char *config_folders_default(const char *name)
{
    char *path = find_config(name);
    if (path) return path;
    char dirs[MAX_CONFIG_DIRS][PATH_MAX + 64];
    int n = config_dirs(dirs), k = 0;
    struct stat st;
    while (k < n && !(stat(dirs[k], &st) == 0 && S_ISDIR(st.st_mode))) k++;
    const char *dir = dirs[k < n ? k : n - 2];
    char *missing = xmalloc(strlen(dir) + strlen(name) + 2);
    sprintf(missing, "%s/%s", dir, name);
    return missing;
}

char *config_folders_resolve(const char *arg)
{
    struct stat st;
    if (strchr(arg, '/') || (stat(arg, &st) == 0 && !S_ISDIR(st.st_mode))) return xstrdup(arg);
    size_t len = strlen(arg);
    bool yaml = len > 5 && strcmp(arg + len - 5, ".yaml") == 0;
    char *name = xmalloc(len + 6);
    sprintf(name, "%s%s", arg, yaml ? "" : ".yaml");
    char *path = find_config(name);
    free(name);
    return path;
}

static int name_order(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* tests/test_cli_models.c checks the scores listed are what --eval prints. */
ExitStatus config_folders_list(void)
{
    char dirs[MAX_CONFIG_DIRS][PATH_MAX + 64];
    int n_dirs = config_dirs(dirs);
    DIR *d = NULL;
    int k = 0;
    while (k < n_dirs && !(d = opendir(dirs[k])) && errno == ENOENT) k++;
    if (!d && k < n_dirs) { /* there, but not to be read: the next folder was listed unsaid */
        cli_say("translate", "%s: cannot list the configs: %s", dirs[k], strerror(errno));
        return EXIT_USAGE;
    }
    if (!d) {
        /* every folder looked in, in order: "A, B and C" */
        char looked[MAX_CONFIG_DIRS * (sizeof dirs[0] + 8)];
        size_t used = 0;
        for (int i = 0; i < n_dirs; i++)
            used += (size_t)snprintf(looked + used, sizeof looked - used, "%s%s",
                                     i == 0 ? "" : i < n_dirs - 1 ? ", " : " and ", dirs[i]);
        cli_say("translate", "no config folder (looked in %s)", looked);
        return EXIT_USAGE;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
        if (n == cap) names = xrealloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);
        names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], name_order);
    ExitStatus status = EXIT_OK;
    printf("models in %s:\n", dirs[k]);
    for (size_t i = 0; i < n; i++) {
        char *path = xmalloc(strlen(dirs[k]) + strlen(names[i]) + 2);
        sprintf(path, "%s/%s", dirs[k], names[i]);
        Config c;
        Error err = {{0}};
        int bad = config_load(path, &c, &err);
        free(path);
        if (bad) {
            fprintf(stderr, "translate: %s\n", err.message);
            status = EXIT_USAGE;
            free(names[i]);
            continue;
        }
        const ModelArch *a = &c.arch;
        char size[96], scores[160] = "no scores recorded";
        struct stat st;
        if (stat(c.weights_path, &st) == 0 && !S_ISREG(st.st_mode)) /* a folder was "0.0 MB" */
            snprintf(size, sizeof size, "weights not a file");
        else if (stat(c.weights_path, &st) == 0)
            snprintf(size, sizeof size, "%.1f MB", (double)st.st_size / 1e6);
        else
            snprintf(size, sizeof size, "%s", c.random_init ? "untrained: random weights written on first use"
                                                            : "weights missing");
        if (c.has_scores) {
            /* The eval set as the last two parts of its path: tatoeba-cmn-eng/dev.tsv. */
            const char *set = c.scores.eval_path + strlen(c.scores.eval_path);
            for (int parts = 0; set > c.scores.eval_path && parts < 2; set--)
                if (set[-1] == '/' && ++parts == 2) break;
            char how[32] = "greedy";
            int beam = c.scores.beam ? c.scores.beam : c.decode.beam;
            if (beam > 1) snprintf(how, sizeof how, "beam %d", beam);
            snprintf(scores, sizeof scores, "BLEU %.2f, chrF2 %.2f on %s (%s)", c.scores.bleu,
                     c.scores.chrf2, set, how);
        }
        /* By what -c takes, the file's name; its name: too when that
         * differs; each as --explain shows text (a line break or an escape
         * sequence in either split the line or acted on the terminal). */
        size_t stem = strlen(names[i]) - 5;
        names[i][stem] = '\0';
        char *label = NULL;
        size_t label_len = 0;
        FILE *l = open_memstream(&label, &label_len);
        if (!l) {
            fputs("translate: out of memory\n", stderr);
            exit(UTIL_EXIT_OUT_OF_MEMORY);
        }
        explain_put_visible(l, names[i]);
        if (strcmp(c.name, names[i]) != 0) {
            fputs(" (name: ", l);
            explain_put_visible(l, c.name);
            fputc(')', l);
        }
        fclose(l);
        printf("  %-14s %s -> %s  d_model %d, %d+%d layers, %d heads, %s; %s\n", label, c.source_lang,
               c.target_lang, a->d_model, a->encoder_layers, a->decoder_layers, a->heads, size, scores);
        free(label);
        config_free(&c);
        free(names[i]);
    }
    free(names);
    return status;
}

/* Both names are two-letter codes, en and zh, as --from and --to take. */
int config_folders_check_languages(const Config *c, Error *err)
{
    const char *base = strrchr(c->path, '/') ? strrchr(c->path, '/') + 1 : c->path;
    char want[2 * sizeof c->source_lang + 8];
    snprintf(want, sizeof want, "%s-%s.yaml", c->source_lang, c->target_lang);
    if (strcmp(base, want) == 0) return 0;
    return error_set(err, "%s: source_language %s and target_language %s disagree with the file name, "
                          "which finds the default model for %.*s -> %.*s (-c takes a config of any name)",
                     c->path, c->source_lang, c->target_lang, 2, base, 2, base + 3);
}

ExitStatus config_folders_check_named(const char *path)
{
    Config c;
    Error err = {{0}};
    int bad = config_load(path, &c, &err) || config_folders_check_languages(&c, &err);
    if (bad) fprintf(stderr, "translate: %s\n", err.message);
    config_free(&c);
    return bad ? EXIT_USAGE : EXIT_OK;
}
