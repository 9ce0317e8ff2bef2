/* test_train_kill.c — training survives being killed.  A short run of the
 * tiny model is killed with SIGKILL (no chance to clean up) at random
 * moments, over and over; after every kill the last checkpoint must open
 * as a valid safetensors file with its progress metadata, and `--resume`
 * from it must finally reach the very same weights, bit for bit, as one
 * uninterrupted run with the same seed.
 *
 * Checkpoints are written every step here, so many kills land in the
 * middle of writing one: the temporary file + fsync + rename of
 * common/output_file.c is what keeps the previous one intact.  The
 * temporary file such a kill leaves (".model.safetensors.ckpt.translate-tmp.XXXXXX") is
 * left where it is, as after a real crash: the resumed run must cope with
 * it, and its next checkpoint removes it (output_file_remove_stale), so
 * none is left at the end.
 *
 * The kill moments are drawn from a seed printed first; TRAIN_KILL_SEED=N
 * replays them (as fractions of the uninterrupted run's duration, so the
 * same moments of the run on a machine of another speed). */
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/util.h"
#include "../model/safetensors.h"

#define TRAIN_SETTINGS                                                                      \
    "  batch_tokens: 60\n  learning_rate: 0.002\n  warmup_steps: 5\n  epochs: 30\n"         \
    "  dropout: 0.1\n  seed: 11\n  checkpoint_steps: 1\n  eval_epochs: 4\n  average_last: 2\n"

static const char *write_config(const char *dir_name, char *path, size_t size)
{
    return tiny_train_config(dir_name, 0.1f, TRAIN_SETTINGS, path, size);
}

/* Start ./train on config (with --resume when asked), stderr to /dev/null. */
static pid_t start_train(const char *config, int resume)
{
    pid_t pid = fork();
    if (pid < 0) abort();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        execl(test_program("./train"), "./train", "-q", "-t", "1", config,
              resume ? "--resume" : (char *)NULL, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Wait for pid; its exit status, or 128 + signal. */
static int finish(pid_t pid)
{
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The checkpoint, if any, must be whole: it opens, and its metadata says
 * what a resume needs.  Returns its step (0: no checkpoint yet). */
static long check_checkpoint(const char *path)
{
    if (access(path, F_OK) != 0) return 0;
    SafeFile f;
    Error err = {{0}};
    if (safetensors_open(path, &f, &err)) fail_msg("after a kill: %s", err.message);
    const char *keys[] = {"checkpoint", "step", "epoch", "batch", "dropout_rng", "best_bleu",
                          "elapsed_tokens", "snapshots"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!safetensors_meta(&f, keys[i])) fail_msg("%s: no \"%s\" in __metadata__", path, keys[i]);
    assert_string_equal(safetensors_meta(&f, "checkpoint"), "translate-checkpoint-1");
    assert_non_null(safetensors_find(&f, "optimizer.m"));
    assert_non_null(safetensors_find(&f, "optimizer.v"));
    long step = strtol(safetensors_meta(&f, "step"), NULL, 10);
    safetensors_close(&f);
    assert_true(step > 0);
    return step;
}

/* Every tensor of a and b, byte for byte, and the progress metadata. */
static void assert_same_file(const char *a_path, const char *b_path, int progress)
{
    const char *keys[] = {"step", "epoch", "batch", "dropout_rng", "best_bleu", "snapshots"};
    assert_same_tensors(a_path, b_path, keys, progress ? 6 : 0);
}

/* The CSV log without its wall-clock columns (tokens_per_s, seconds):
 * what a resumed run must log exactly as an uninterrupted one did. */
static char *log_without_times(const char *path)
{
    size_t len;
    char *log = read_file(path, &len);
    if (!log) fail_msg("%s: cannot read", path);
    char *out = calloc(len + 1, 1), *o = out;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        int field = 0;
        for (char *p = line; *p; p++) {
            if (*p == ',') field++;
            if (field != 5 && field != 10) *o++ = *p;
        }
        *o++ = '\n';
    }
    free(log);
    return out;
}

/* The temporary files of the checkpoint (".NAME.translate-tmp.XXXXXX") in dir: their
 * names, each followed by '/', into names; returns how many. */
static int list_temporaries(const char *dir, const char *name, char *names, size_t size)
{
    char prefix[300];
    snprintf(prefix, sizeof prefix, ".%s.translate-tmp.", name);
    int n = 0;
    names[0] = '\0';
    DIR *d = opendir(dir);
    if (!d) fail_msg("%s: cannot list", dir);
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strlen(e->d_name) == strlen(prefix) + 6) {
            n++;
            size_t len = strlen(names);
            snprintf(names + len, size - len, "%s/", e->d_name);
        }
    closedir(d);
    return n;
}

/* Does `after` name a file that `before` does not? */
static int has_new_name(const char *before, const char *after)
{
    for (const char *p = after; *p;) {
        const char *slash = strchr(p, '/');
        char one[320];
        snprintf(one, sizeof one, "%.*s", (int)(slash - p + 1), p);
        if (!strstr(before, one)) return 1;
        p = slash + 1;
    }
    return 0;
}

/* The seed of the kill moments: $TRAIN_KILL_SEED, or one from the clock. */
static unsigned kill_seed(void)
{
    const char *env = getenv("TRAIN_KILL_SEED");
    if (env && *env) {
        char *end;
        unsigned long v = strtoul(env, &end, 10);
        if (*end) fail_msg("TRAIN_KILL_SEED=%s: not a number", env);
        return (unsigned)v;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned)ts.tv_sec ^ (unsigned)ts.tv_nsec ^ (unsigned)getpid();
}

static void test_sigkill_at_random_moments_then_resume(void **state)
{
    (void)state;
    unsigned seed = kill_seed();
    print_message("kill moments drawn with seed %u (TRAIN_KILL_SEED=%u replays them)\n", seed, seed);
    char whole[600], killed[600], path_a[700], path_b[800], dir[700];
    write_config("kill-whole", whole, sizeof whole);
    write_config("kill-killed", killed, sizeof killed);

    double t0 = util_now();
    assert_int_equal(finish(start_train(whole, 0)), 0);
    double duration = util_now() - t0;

    srand(seed);
    print_message("uninterrupted run %.2f s\n", duration);
    snprintf(dir, sizeof dir, "%s/kill-killed", temp_dir());
    snprintf(path_b, sizeof path_b, "%s/model.safetensors.ckpt", dir);
    int kills = 0, mid_write = 0, done = 0, most_left = 0;
    long last_step = 0;
    for (int attempt = 0; attempt < 16 && kills < 8 && !done; attempt++) {
        char before[4096], after[4096];
        int left_before = list_temporaries(dir, "model.safetensors.ckpt", before, sizeof before);
        pid_t pid = start_train(killed, last_step > 0);
        /* anywhere from start-up to well into the run */
        usleep((useconds_t)(1e6 * duration * (0.02 + 0.25 * rand() / (double)RAND_MAX)));
        kill(pid, SIGKILL);
        int status = finish(pid);
        int left = list_temporaries(dir, "model.safetensors.ckpt", after, sizeof after);
        if (status == 0) {
            done = 1; /* it finished first */
        } else {
            assert_int_equal(status, 128 + SIGKILL);
            kills++;
            /* killed while writing a checkpoint: its temporary file stays */
            mid_write += has_new_name(before, after);
        }
        if (left > most_left) most_left = left;
        /* each save clears the dead runs' files: at most the one this run left,
         * plus the one before if it was killed before its first save */
        assert_true(left <= left_before + 1);
        long step = check_checkpoint(path_b);
        assert_true(step >= last_step); /* never goes back */
        last_step = step;
    }
    print_message("%d kills (%d left a checkpoint's temporary file, at most %d at once), "
                  "last checkpoint at step %ld\n", kills, mid_write, most_left, last_step);
    assert_true(kills >= 3);
    if (!done) assert_int_equal(finish(start_train(killed, last_step > 0)), 0);
    /* the finished run's checkpoints removed every one the kills left */
    char names[4096];
    if (list_temporaries(dir, "model.safetensors.ckpt", names, sizeof names))
        fail_msg("left behind after the last run: %s", names);

    snprintf(path_a, sizeof path_a, "%s/kill-whole/model.safetensors.ckpt", temp_dir());
    assert_same_file(path_a, path_b, 1);
    snprintf(path_a, sizeof path_a, "%s/kill-whole/model.safetensors", temp_dir());
    snprintf(path_b, sizeof path_b, "%s/kill-killed/model.safetensors", temp_dir());
    assert_same_file(path_a, path_b, 0); /* the best model by dev BLEU, too */

    /* and the log: each row once, as the uninterrupted run wrote it */
    snprintf(path_a, sizeof path_a, "%s/kill-whole/model.safetensors.log.csv", temp_dir());
    snprintf(path_b, sizeof path_b, "%s/kill-killed/model.safetensors.log.csv", temp_dir());
    char *log_a = log_without_times(path_a), *log_b = log_without_times(path_b);
    assert_string_equal(log_a, log_b);
    free(log_a);
    free(log_b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigkill_at_random_moments_then_resume),
    };
    return cmocka_run_group_tests_name("train killed and resumed", tests, NULL, NULL);
}
