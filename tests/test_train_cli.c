/* test_train_cli.c — ./train end to end: a tiny model memorises 16 pairs
 * and then translates each of them exactly; a run stopped mid-epoch and
 * resumed ends with the very same weights as an uninterrupted one. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../model/safetensors.h"

/* The tiny model's config (testutil.c), without label smoothing, in a
 * static buffer: valid until the next call. */
static const char *write_config(const char *dir_name, const char *extra_train)
{
    static char path[600];
    return tiny_train_config(dir_name, 0.0f, extra_train, path, sizeof path);
}

static void run_train(const char *config, const char *flag, int want_status)
{
    const char *argv[] = {"./train", "-q", "-t", "1", config, flag, NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != want_status) fail_msg("train %s exited %d:\n%s", config, r.status, r.err);
    run_result_free(&r);
}

static void test_tiny_model_memorises_sixteen_pairs(void **state)
{
    (void)state;
    const char *config = write_config("overfit",
                                      "  batch_tokens: 1000\n  learning_rate: 0.003\n  warmup_steps: 20\n"
                                      "  epochs: 200\n  dropout: 0.0\n  seed: 3\n  eval_epochs: 200\n");
    run_train(config, NULL, 0);
    size_t len;
    char *tsv = read_file("tests/data/tiny.tsv", &len);
    char sources[4096] = "", targets[4096] = "";
    for (char *line = strtok(tsv, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t'), *tab2 = strchr(tab + 1, '\t');
        strncat(sources, line, (size_t)(tab - line));
        strcat(sources, "\n");
        strncat(targets, tab + 1, (size_t)(tab2 - tab - 1));
        strcat(targets, "\n");
    }
    const char *argv[] = {"./translate", "-q", "-c", config, NULL};
    RunResult r = run_program(argv, sources, strlen(sources));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, targets);
    run_result_free(&r);
    free(tsv);
}

/* The parameters and optimizer state of a checkpoint, byte for byte. */
static void assert_same_tensors(const char *a_path, const char *b_path)
{
    SafeFile a, b;
    Error err = {{0}};
    assert_int_equal(safetensors_open(a_path, &a, &err), 0);
    assert_int_equal(safetensors_open(b_path, &b, &err), 0);
    assert_int_equal(a.count, b.count);
    for (size_t i = 0; i < a.count; i++) {
        const SafeTensor *t = safetensors_find(&b, a.tensors[i].name);
        assert_non_null(t);
        assert_int_equal(t->nbytes, a.tensors[i].nbytes);
        char *x = malloc(t->nbytes + 1), *y = malloc(t->nbytes + 1);
        assert_int_equal(safetensors_read_raw(&a, &a.tensors[i], x, &err), 0);
        assert_int_equal(safetensors_read_raw(&b, t, y, &err), 0);
        if (memcmp(x, y, t->nbytes) != 0)
            fail_msg("tensor %s differs between %s and %s", t->name, a_path, b_path);
        free(x);
        free(y);
    }
    const char *keys[] = {"step", "epoch", "batch", "dropout_rng"};
    for (int k = 0; k < 4; k++)
        assert_string_equal(safetensors_meta(&a, keys[k]), safetensors_meta(&b, keys[k]));
    safetensors_close(&a);
    safetensors_close(&b);
}

static void test_resumed_run_equals_uninterrupted_run(void **state)
{
    (void)state;
    /* Small batches, so an epoch has several and the stop falls mid-epoch;
     * dropout on, so the generator's state must be restored too. */
    const char *common = "  batch_tokens: 60\n  learning_rate: 0.002\n  warmup_steps: 5\n  epochs: 3\n"
                         "  dropout: 0.1\n  seed: 5\n  checkpoint_steps: 4\n  average_last: 2\n";
    char whole[600], stopped[600], resumed[600], ckpt_whole[700], ckpt_resumed[700];
    snprintf(whole, sizeof whole, "%s", write_config("whole", common));
    char stop_train[512];
    snprintf(stop_train, sizeof stop_train, "%s  max_steps: 7\n", common);
    snprintf(stopped, sizeof stopped, "%s", write_config("resumed", stop_train));
    run_train(whole, NULL, 0);
    run_train(stopped, NULL, 0); /* stops at step 7, mid-epoch, with a checkpoint */
    snprintf(resumed, sizeof resumed, "%s", write_config("resumed", common));
    run_train(resumed, "--resume", 0);
    snprintf(ckpt_whole, sizeof ckpt_whole, "%s/whole/model.safetensors.ckpt", temp_dir());
    snprintf(ckpt_resumed, sizeof ckpt_resumed, "%s/resumed/model.safetensors.ckpt", temp_dir());
    assert_same_tensors(ckpt_whole, ckpt_resumed);
}

static void test_existing_checkpoint_needs_resume(void **state)
{
    (void)state;
    const char *config = write_config("again", "  batch_tokens: 1000\n  epochs: 1\n");
    run_train(config, NULL, 0);
    const char *argv[] = {"./train", "-q", config, NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 2);
    if (!strstr(r.err, "exists: continue with --resume")) fail_msg("unexpected message: %s", r.err);
    run_result_free(&r);
}

/* Ctrl-C: the step under way finishes, a checkpoint is written, the exit
 * status is 130, and --resume carries on from there. */
static void test_interrupt_saves_a_checkpoint(void **state)
{
    (void)state;
    const char *config = write_config("interrupted", "  batch_tokens: 60\n  epochs: 100000\n  dropout: 0.1\n"
                                                     "  checkpoint_steps: 100000\n  eval_epochs: 100000\n");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        execl(test_program("./train"), "./train", "-q", "-t", "1", config, (char *)NULL);
        _exit(127);
    }
    usleep(1500 * 1000); /* long enough to be well into training */
    kill(pid, SIGINT);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 130);
    char ckpt[700];
    snprintf(ckpt, sizeof ckpt, "%s/interrupted/model.safetensors.ckpt", temp_dir());
    SafeFile f;
    Error err = {{0}};
    assert_int_equal(safetensors_open(ckpt, &f, &err), 0);
    long step = strtol(safetensors_meta(&f, "step"), NULL, 10);
    safetensors_close(&f);
    assert_true(step > 0);
    /* and it continues: one more short run to a max_steps just past it */
    char more[256];
    snprintf(more, sizeof more, "  batch_tokens: 60\n  epochs: 100000\n  dropout: 0.1\n  max_steps: %ld\n"
                                "  checkpoint_steps: 100000\n  eval_epochs: 100000\n", step + 3);
    run_train(write_config("interrupted", more), "--resume", 0);
    assert_int_equal(safetensors_open(ckpt, &f, &err), 0);
    assert_int_equal(strtol(safetensors_meta(&f, "step"), NULL, 10), step + 3);
    safetensors_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_model_memorises_sixteen_pairs),
        cmocka_unit_test(test_resumed_run_equals_uninterrupted_run),
        cmocka_unit_test(test_existing_checkpoint_needs_resume),
        cmocka_unit_test(test_interrupt_saves_a_checkpoint),
    };
    return cmocka_run_group_tests_name("train command line", tests, NULL, NULL);
}
