/* test_parity.c — translate against stock PyTorch.
 *
 * For several model shapes (pre/post norm, 1 to 4 heads, 1 to 3 layers,
 * ReLU/GELU, scaling on/off, tied/untied output) and sentences in both
 * languages, ./translate writes its attention maps and logits, and
 * tools/reference.py loads the same safetensors file into a stock
 * torch.nn.Transformer and compares logits, every head's maps and the
 * greedy output (where no decoding rule chose it) within 1e-4.  Skipped, saying so, where Debian's
 * python3-torch is not installed. */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>



static void check_config(const char *config)
{
    SKIP_WITHOUT_TORCH();
    char json[512], logits[512];
    snprintf(json, sizeof json, "%s/parity.json", temp_dir());
    snprintf(logits, sizeof logits, "%s/parity.logits", temp_dir());
    const char *translate[] = {"./translate", "-q", "-c", config, "--attention", json, "--logits", logits,
                               "I love China.", "我想吃酸菜鱼", "Tom's dog is big.",
                               /* numbers: the shipped models' copy_numbers decides their digits,
                                * so only the maps and logits of that output are compared */
                               "She bought 3 apples for 1990 yen on 2024-05-06.", NULL};
    RunResult t = run_program(translate, NULL, 0);
    if (t.status != 0) fail_msg("translate failed (%d): %s", t.status, t.err);
    run_result_free(&t);
    const char *reference[] = {PYTHON_WITH_TORCH, "tools/reference.py", "check", json, logits, NULL};
    RunResult r = run_program(reference, NULL, 0);
    print_in_full(&r);
    if (r.status != 0) fail_msg("reference.py check exited %d: its whole report is above", r.status);
    run_result_free(&r);
}

static void test_tiny_pre_norm_gelu_tied(void **state) { (void)state; check_config("configs/tiny.yaml"); }
static void test_post_norm_one_head_untied(void **state) { (void)state; check_config("tests/data/parity-post.yaml"); }
static void test_no_attention_scaling(void **state) { (void)state; check_config("tests/data/parity-noscale.yaml"); }
static void test_pre_norm_three_heads_zh_en(void **state) { (void)state; check_config("tests/data/parity-pre.yaml"); }
/* The shipped models themselves: float16 files, widened alike on both sides. */
static void test_shipped_en_zh_model(void **state) { (void)state; check_config("configs/en-zh.yaml"); }
static void test_shipped_zh_en_model(void **state) { (void)state; check_config("configs/zh-en.yaml"); }

/* What reference.py check cannot check is status 2 in one line, never a
 * traceback (which had been status 1, "mismatch"): a JSON that is no
 * attention document, an id out of the vocabulary; a run of no sentences
 * (an empty input) has nothing to compare: status 0. */
static void test_check_says_what_it_cannot_check(void **state)
{
    SKIP_WITHOUT_TORCH();
    (void)state;
    char json[512], logits[512];
    snprintf(json, sizeof json, "%s/empty-run.json", temp_dir());
    snprintf(logits, sizeof logits, "%s/empty-run.logits", temp_dir());
    const char *empty_run[] = {"./translate", "-q", "-c", "configs/tiny.yaml", "--attention", json, "--logits",
                               logits, NULL};
    RunResult t = run_program(empty_run, "", 0);
    if (t.status != 0) fail_msg("translate failed (%d): %s", t.status, t.err);
    run_result_free(&t);
    const char *check[] = {PYTHON_WITH_TORCH, "tools/reference.py", "check", json, logits, NULL};
    RunResult r = run_program(check, NULL, 0);
    if (r.status != 0) fail_msg("an empty run: status %d: %s", r.status, r.err);
    expect_in(r.out, "no sentences");
    run_result_free(&r);
    /* a JSON array, and a document whose source id is -5 */
    const char *array = temp_file("array.json", "[]", 2);
    const char *bad_id = temp_file("bad-id.json",
                                   "{\"model\": {\"weights_path\": \"tests/data/tiny.safetensors\"}, \"sentences\": "
                                   "[{\"line\": 1, \"source\": {\"ids\": [-5]}, \"decoder_input\": {\"ids\": [2]}, "
                                   "\"output\": {\"ids\": [3]}}]}",
                                   strlen("{\"model\": {\"weights_path\": \"tests/data/tiny.safetensors\"}, \"sentences\": "
                                          "[{\"line\": 1, \"source\": {\"ids\": [-5]}, \"decoder_input\": {\"ids\": [2]}, "
                                          "\"output\": {\"ids\": [3]}}]}"));
    const char *docs[] = {array, bad_id};
    const char *says[] = {"not a JSON object", "source id -5 is not one of the model's"};
    for (int i = 0; i < 2; i++) {
        const char *argv[] = {PYTHON_WITH_TORCH, "tools/reference.py", "check", docs[i], logits, NULL};
        r = run_program(argv, NULL, 0);
        if (r.status != 2) fail_msg("%s: status %d: %s", docs[i], r.status, r.err);
        expect_in(r.err, says[i]);
        assert_null(strstr(r.err, "Traceback"));
        run_result_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_pre_norm_gelu_tied),
        cmocka_unit_test(test_post_norm_one_head_untied),
        cmocka_unit_test(test_no_attention_scaling),
        cmocka_unit_test(test_pre_norm_three_heads_zh_en),
        cmocka_unit_test(test_shipped_en_zh_model),
        cmocka_unit_test(test_shipped_zh_en_model),
        cmocka_unit_test(test_check_says_what_it_cannot_check),
    };
    return cmocka_run_group_tests_name("parity with PyTorch", tests, NULL, NULL);
}
