/* test_stale_temporaries.c — the temporary files a killed writer leaves
 * (common/output_file.h): output_file_remove_stale removes exactly those
 * of its own target whose writer is gone — never a live writer's file,
 * never another target's, never a file that only looks similar — and
 * every output_file_open of a file calls it before writing, so a trainer
 * killed over and over does not fill the folder with half checkpoints
 * (tests/test_train_kill.c does that for real), nor a full disk keep them;
 * a translate -o killed for real leaves one the next run removes. */
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/output_file.h"
#include "../training/checkpoint.h"

/* Between a target's name and mkstemp's six characters in our temporaries' names. */
#define T ".translate-tmp."

static void make_file(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) fail_msg("%s: cannot create", path);
    fputs("half a file", f);
    fclose(f);
}

static int exists(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void test_only_dead_writers_files_of_the_target_go(void **state)
{
    (void)state;
    char dir[400], target[500], live[600];
    snprintf(dir, sizeof dir, "%s/stale", temp_dir());
    mkdir(dir, 0777);
    snprintf(target, sizeof target, "%s/m.ckpt", dir);
    make_file(dir, "m.ckpt");
    const char *stale[] = {".m.ckpt" T "AbC123", ".m.ckpt" T "zzzzzz"};
    const char *kept[] = {"m.ckpt",                /* the target itself */
                          ".m.ckpt" T "tmp",       /* not six characters */
                          ".m.ckpt" T "AbC1234",   /* seven */
                          ".m.ckpt" T "AbC-12",    /* not mkstemp's alphabet */
                          "m.ckpt" T "AbC123",     /* no leading dot */
                          ".n.ckpt" T "AbC123",    /* another target's */
                          ".m.ckpt" T "AbC123.x",  /* longer */
                          ".m.ckpt.backup",        /* a user's: six letters, but not our mark */
                          ".m.ckpt.AbC123",        /* the same */
                          ".m.ckpt" T "LIVE00"};   /* a live writer's: locked */
    for (size_t i = 0; i < 2; i++) make_file(dir, stale[i]);
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) make_file(dir, kept[i]);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/.m.ckpt" T "Dir000", dir); /* a folder, not a file */
    mkdir(sub, 0777);
    snprintf(live, sizeof live, "%s/.m.ckpt" T "LIVE00", dir);
    int fd = open(live, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);

    assert_int_equal(output_file_remove_stale(target), 2);
    for (size_t i = 0; i < 2; i++) assert_false(exists(dir, stale[i]));
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
        if (!exists(dir, kept[i])) fail_msg("%s was removed", kept[i]);
    assert_true(exists(dir, ".m.ckpt" T "Dir000"));
    /* once its writer is gone (the lock dropped), it goes too */
    close(fd);
    assert_int_equal(output_file_remove_stale(target), 1);
    assert_false(exists(dir, ".m.ckpt" T "LIVE00"));
    /* nothing left: nothing removed; a missing folder: nothing either */
    assert_int_equal(output_file_remove_stale(target), 0);
    assert_int_equal(output_file_remove_stale("/nonexistent-folder/m.ckpt"), 0);
}

/* A link is written through (its target's folder gets the temporaries), so
 * that is the folder cleared. */
static void test_a_link_clears_its_targets_folder(void **state)
{
    (void)state;
    char real_dir[400], link_dir[400], target[500], link[500];
    snprintf(real_dir, sizeof real_dir, "%s/stale-real", temp_dir());
    snprintf(link_dir, sizeof link_dir, "%s/stale-link", temp_dir());
    mkdir(real_dir, 0777);
    mkdir(link_dir, 0777);
    snprintf(target, sizeof target, "%s/w.safetensors", real_dir);
    snprintf(link, sizeof link, "%s/l.safetensors", link_dir);
    make_file(real_dir, "w.safetensors");
    assert_int_equal(symlink("../stale-real/w.safetensors", link), 0); /* temp_dir() may be relative */
    make_file(real_dir, ".w.safetensors" T "Q1w2e3");
    make_file(link_dir, ".l.safetensors" T "Q1w2e3"); /* not where a write through the link goes */
    assert_int_equal(output_file_remove_stale(link), 1);
    assert_false(exists(real_dir, ".w.safetensors" T "Q1w2e3"));
    assert_true(exists(link_dir, ".l.safetensors" T "Q1w2e3"));
}

/* A writer's own temporary file is locked while it is open: a cleaner
 * running meanwhile leaves it, and the commit still works. */
static void test_a_writer_in_progress_is_left_alone(void **state)
{
    (void)state;
    char path[500];
    snprintf(path, sizeof path, "%s/in-progress.txt", temp_dir());
    Error err = {{0}};
    OutputFile *o = output_file_open(path, 0, &err);
    assert_non_null(o);
    fputs("whole\n", output_file_stream(o));
    assert_int_equal(output_file_remove_stale(path), 0);
    assert_int_equal(output_file_commit(o, &err), 0);
    size_t len;
    char *text = read_file(path, &len);
    assert_string_equal(text, "whole\n");
    free(text);
}

/* A name of up to NAME_MAX bytes is written, though ".NAME.translate-tmp.XXXXXX"
 * would be longer: the temporary carries the name's first 233 bytes (it was
 * "File name too long" from 234 on), and those are what the cleaner
 * recognises as the target's. */
static void test_a_name_of_255_bytes_is_written(void **state)
{
    (void)state;
    char dir[400], name[256], path[700], cut[300], other[300];
    snprintf(dir, sizeof dir, "%s/long-names", temp_dir());
    mkdir(dir, 0777);
    memset(name, 'n', 255);
    name[255] = '\0';
    snprintf(path, sizeof path, "%s/%s", dir, name);
    Error err = {{0}};
    OutputFile *o = output_file_open(path, 0, &err);
    if (!o) fail_msg("%s", err.message);
    fputs("long\n", output_file_stream(o));
    assert_int_equal(output_file_commit(o, &err), 0);
    size_t len;
    char *text = read_file(path, &len);
    assert_string_equal(text, "long\n");
    free(text);
    /* a dead writer's temporary of it goes; another target's stays */
    snprintf(cut, sizeof cut, ".%.233s" T "Zz9Zz9", name);
    assert_int_equal((int)strlen(cut), 255);
    snprintf(other, sizeof other, ".%.232sm" T "Zz9Zz9", name);
    make_file(dir, cut);
    make_file(dir, other);
    assert_int_equal(output_file_remove_stale(path), 1);
    assert_false(exists(dir, cut));
    assert_true(exists(dir, other));
}

/* The name of the one file in dir beginning with `prefix` (NULL: none yet). */
static char *file_beginning(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *found = NULL;
    for (struct dirent *e; !found && (e = readdir(d));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) found = strdup(e->d_name);
    closedir(d);
    return found;
}

/* The name a real writer gives its temporary is the one the cleaning
 * looks for: translate -o killed (SIGKILL: nothing of its own runs) while
 * it waits for input leaves .out.txt.translate-tmp.XXXXXX, and the next
 * translate -o to the same file removes it.  (The cases above make their
 * leftovers by hand; a temporary created under another name stayed for
 * good.) */
static void test_a_killed_translate_leaves_what_the_next_one_removes(void **state)
{
    (void)state;
    char dir[400], out[500];
    snprintf(dir, sizeof dir, "%s/killed", temp_dir());
    mkdir(dir, 0777);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    int in[2];
    assert_int_equal(pipe(in), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        close(in[0]);
        close(in[1]);
        execl(test_program("./translate"), "translate", "-q", "-t", "1", "-c", "configs/tiny.yaml", "-o", out,
              (char *)NULL);
        _exit(127);
    }
    close(in[0]); /* our end stays open: it waits for a line, its output open */
    char *left = NULL;
    for (int waited = 0; !left && waited < 2000; waited++) { /* up to 20 s */
        left = file_beginning(dir, ".out.txt.");
        if (!left) usleep(10000);
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    close(in[1]);
    if (!left) fail_msg("translate -o %s made no temporary file in 20 s", out);
    if (strncmp(left, ".out.txt" T, strlen(".out.txt" T)) != 0 || strlen(left) != strlen(".out.txt" T) + 6)
        fail_msg("the temporary is %s, not .out.txt" T "XXXXXX", left);
    assert_true(exists(dir, left));

    RunResult r = run_program((const char *[]){"./translate", "-q", "-t", "1", "-c", "configs/tiny.yaml", "-o",
                                               out, NULL}, "hello\n", 6);
    assert_int_equal(r.status, 0);
    run_result_free(&r);
    assert_true(exists(dir, "out.txt"));
    char *still = file_beginning(dir, ".out.txt.");
    if (still) fail_msg("%s is still there", still);
    free(left);
}

static const ModelArch arch = {
    .d_model = 8, .heads = 2, .encoder_layers = 1, .decoder_layers = 1, .d_ff = 16,
    .activation = ACTIVATION_RELU, .norm_first = true, .max_len = 16, .scale_attention = true,
    .tied_output = true, .src_vocab = 12, .tgt_vocab = 10,
};

static void test_checkpoint_save_removes_what_kills_left(void **state)
{
    (void)state;
    char dir[400], path[500];
    snprintf(dir, sizeof dir, "%s/stale-ckpt", temp_dir());
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/model.safetensors.ckpt", dir);
    make_file(dir, ".model.safetensors.ckpt" T "k1ll3d");
    make_file(dir, ".model.safetensors.ckpt" T "k1ll3e");
    make_file(dir, ".model.safetensors" T "x0x0x0"); /* the model's own: not the checkpoint's to clear */

    Model m;
    model_init_training(&m, &arch, 3, QUERY_INIT_XAVIER);
    Trainer tr;
    trainer_init(&tr, &m, 16, 16, 0.1f, 0.1f, 3);
    TrainProgress p;
    memset(&p, 0, sizeof p);
    snapshots_init(&p.snapshots, 0, tr.model.params.count);
    memcpy(p.run_id, "0123456789abcdef", CHECKPOINT_RUN_ID_LENGTH + 1);
    Error err = {{0}};
    VocabHashes hashes = {1, 2};
    if (checkpoint_save(path, &tr, hashes, &p, &err)) fail_msg("%s", err.message);
    assert_false(exists(dir, ".model.safetensors.ckpt" T "k1ll3d"));
    assert_false(exists(dir, ".model.safetensors.ckpt" T "k1ll3e"));
    assert_true(exists(dir, ".model.safetensors" T "x0x0x0"));
    assert_true(exists(dir, "model.safetensors.ckpt"));
    /* a target that is no file is an error before anything, and clears nothing */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/folder.ckpt", dir); /* a folder: cannot be written */
    mkdir(bad, 0777);
    make_file(dir, ".folder.ckpt" T "k1ll3f");
    assert_int_equal(checkpoint_save(bad, &tr, hashes, &p, &err), -1);
    assert_non_null(strstr(err.message, "cannot write"));
    assert_true(exists(dir, ".folder.ckpt" T "k1ll3f"));
    /* A save that runs out of space (here: RLIMIT_FSIZE, as a full disk)
     * has cleared the dead writers' files first: they held the space it
     * needs, and keeping them made every later save fail too. */
    make_file(dir, ".model.safetensors.ckpt" T "k1ll3g");
    size_t before;
    char *old = read_file(path, &before);
    struct rlimit saved, small = {4096, 4096};
    getrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, SIG_IGN);
    small.rlim_max = saved.rlim_max;
    setrlimit(RLIMIT_FSIZE, &small);
    int failed = checkpoint_save(path, &tr, hashes, &p, &err);
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, SIG_DFL);
    assert_int_equal(failed, -1);
    assert_false(exists(dir, ".model.safetensors.ckpt" T "k1ll3g"));
    size_t after;
    char *now = read_file(path, &after); /* the last good checkpoint, untouched */
    assert_int_equal(after, before);
    assert_memory_equal(now, old, before);
    free(old);
    free(now);
    snapshots_free(&p.snapshots);
    trainer_free(&tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_dead_writers_files_of_the_target_go),
        cmocka_unit_test(test_a_link_clears_its_targets_folder),
        cmocka_unit_test(test_a_writer_in_progress_is_left_alone),
        cmocka_unit_test(test_a_name_of_255_bytes_is_written),
        cmocka_unit_test(test_a_killed_translate_leaves_what_the_next_one_removes),
        cmocka_unit_test(test_checkpoint_save_removes_what_kills_left),
    };
    return cmocka_run_group_tests_name("stale temporary files", tests, NULL, NULL);
}
