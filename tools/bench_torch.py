#!/usr/bin/python3
"""The PyTorch side of `make bench` (bench/run.sh): the same work as our
programs, done by stock PyTorch, so the two can be compared side by side.

    bench_torch.py train DUMP [N]          tokens/s of training steps (and the
                                           GF/s of one N³ matmul, default 1024)
    bench_torch.py translate WEIGHTS DUMP [N]   sentences/s of greedy decoding
                                           (of N evenly spaced sentences)
    bench_torch.py sentence WEIGHTS SRC_VOCAB TGT_VOCAB TEXT   one translation,
                                           as a fresh process would do it

DUMP is written by `build/bench/train_bench --dump` (bench/train_bench.c):
the initial weights of the model, the batches our trainer ran (in order),
the source ids of every line of the data file, and the settings.  So both
sides start from the same weights, see the same token ids in the same
batches, and tokenisation is not part of the comparison.

Threads: set OMP_NUM_THREADS and OPENBLAS_NUM_THREADS in the environment
*before* starting this script (Debian's torch multiplies through OpenBLAS,
which reads them when it loads); bench/run.sh does.  The model classes and
the greedy loop are tools/reference.py's (stock nn.Transformer; the decoder
re-runs over the whole prefix at each step, as the usual loop does).

Output: one line of key=value pairs (or the translation, for `sentence`).
"""
import math
import os
import re
import sys
import time
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402  (after sys.path, so reference is found)
import torch.nn as nn  # noqa: E402

from reference import Translator, greedy, load_model, read_safetensors  # noqa: E402

PAD, UNK, BOS, EOS = 0, 1, 2, 3


def threads():
    n = int(os.environ.get("OMP_NUM_THREADS", "0") or 0)
    if n > 0:
        torch.set_num_threads(n)
    return torch.get_num_threads()


def read_dump(path):
    """(model tensors, bench tensors as int lists, metadata)."""
    tensors, meta = read_safetensors(path)
    bench = {k[len("bench."):]: [int(x) for x in v.tolist()]
             for k, v in tensors.items() if k.startswith("bench.")}
    model = {k: v for k, v in tensors.items() if not k.startswith("bench.")}
    return model, bench, meta


def padded(flat, start, first, last):
    """Pairs first..last-1 of a packed list as one padded [B, width] tensor."""
    seqs = [flat[start[i]:start[i + 1]] for i in range(first, last)]
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [PAD] * (width - len(s)) for s in seqs])


def train(dump_path, ceiling_n=1024):
    """The training step of tools/reference.py's step(), with dropout on
    (embeddings, attention outputs, feed-forward hidden and output, as our
    model applies it), gradient clipping and AdamW, timed over the dump's
    batches after its warm-up steps."""
    n_threads = threads()
    tensors, b, meta = read_dump(dump_path)
    model = Translator(meta)
    model.load_state_dict(tensors, strict=True)
    p = float(meta["bench.dropout"])
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = p  # Translator builds them with 0
    model.train()
    named = dict(model.named_parameters())
    opt = torch.optim.AdamW(
        [{"params": [q for q in named.values() if q.dim() > 1],
          "weight_decay": float(meta["bench.weight_decay"])},
         {"params": [q for q in named.values() if q.dim() <= 1], "weight_decay": 0.0}],
        lr=float(meta["bench.lr"]), betas=(float(meta["bench.beta1"]), float(meta["bench.beta2"])),
        eps=float(meta["bench.eps"]))
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=float(meta["bench.label_smoothing"]))
    clip = float(meta["bench.clip_norm"])
    warmup = int(meta["bench.warmup_steps"])
    D = model.d_model
    first = b["batch_first"]
    tokens, start, loss = 0, None, float("nan")
    for step in range(len(first) - 1):
        if step == warmup:
            start = time.perf_counter()
        lo, hi = first[step], first[step + 1]
        src = padded(b["src_ids"], b["src_start"], lo, hi)
        tgt = padded(b["tgt_ids"], b["tgt_start"], lo, hi)
        labels = padded(b["labels"], b["tgt_start"], lo, hi)
        x = model.src_embed(src) * math.sqrt(D) + model.positions(src.shape[1])
        y = model.tgt_embed(tgt) * math.sqrt(D) + model.positions(tgt.shape[1])
        x = nn.functional.dropout(x, p, training=True)
        y = nn.functional.dropout(y, p, training=True)
        mask = model.transformer.generate_square_subsequent_mask(tgt.shape[1])
        out = model.transformer(x, y, tgt_mask=mask, src_key_padding_mask=src == PAD,
                                tgt_key_padding_mask=tgt == PAD, memory_key_padding_mask=src == PAD)
        logits = model.generator(out)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
        opt.zero_grad()
        loss.backward()
        if clip > 0:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        if step >= warmup:
            tokens += (b["src_start"][hi] - b["src_start"][lo]) + (b["tgt_start"][hi] - b["tgt_start"][lo])
    seconds = time.perf_counter() - start
    gflops = matmul_gflops(ceiling_n)
    print(f"threads={n_threads} steps={len(first) - 1 - warmup} tokens={tokens} seconds={seconds:.3f} "
          f"tokens_per_s={tokens / seconds:.1f} last_loss={float(loss):.4f} "
          f"matmul_n={ceiling_n} matmul_gflops={gflops:.2f} {blas_library()}")
    return 0


def matmul_gflops(n):
    """Best GF/s of two n×n×n float32 products: what torch's BLAS does
    here (Debian's torch calls the system libblas.so.3, whichever
    implementation update-alternatives points it at)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best / 1e9


def blas_library():
    """'blas=PATH corename=NAME': the BLAS shared library this process
    loaded (resolved path, from /proc/self/maps: what torch really calls)
    and, when it is OpenBLAS, the core type it runs (openblas_get_corename:
    the detected one, or OPENBLAS_CORETYPE's when that was set)."""
    found = []
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            name = os.path.basename(path)
            if ("blas" in name or "blis" in name) and os.path.realpath(path) not in found:
                found.append(os.path.realpath(path))
    if not found:
        return "blas=? corename=?"
    # Debian's libblas.so.3 of OpenBLAS is a small wrapper around
    # libopenblas*.so: name the library doing the work.
    found.sort(key=lambda p: "openblas" not in os.path.basename(p))
    corename = "none"
    try:
        import ctypes
        get = ctypes.CDLL(found[0]).openblas_get_corename
        get.restype = ctypes.c_char_p
        corename = get().decode()
    except (OSError, AttributeError):
        pass
    return f"blas={found[0]} corename={corename}"


def decode_limit(S, ratio, extra, max_len):
    """model/decode.c's decode_limit."""
    return max(1, min(max_len, math.ceil(ratio * S) + extra))


def translate(weights_path, dump_path, limit=None):
    """Greedy decoding, one sentence at a time, of the dump's sentences."""
    n_threads = threads()
    model, meta = load_model(weights_path)
    _, b, dmeta = read_dump(dump_path)
    ids, start = b["sentence_ids"], b["sentence_start"]
    max_len = int(meta["max_len"])
    sentences = [ids[start[i]:start[i + 1]] for i in range(len(start) - 1)]
    sentences = [s for s in sentences if 1 <= len(s) <= max_len]
    if limit and limit < len(sentences):
        # Evenly spaced, not the first `limit`: data files may be sorted by length.
        sentences = [sentences[i * len(sentences) // limit] for i in range(limit)]
    ratio, extra = float(dmeta["bench.max_output_ratio"]), int(dmeta["bench.max_output_extra"])
    torch.set_grad_enabled(False)
    steps = 0
    t0 = time.perf_counter()
    for src in sentences:
        steps += len(greedy(model, src, decode_limit(len(src), ratio, extra, max_len)))
    seconds = time.perf_counter() - t0
    print(f"threads={n_threads} sentences={len(sentences)} output_tokens={steps} seconds={seconds:.3f} "
          f"sentences_per_s={len(sentences) / seconds:.2f}")
    return 0


def is_cjk(ch):
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\u3040" <= ch <= "\u30ff"


def tokenize(text):
    """A short stand-in for tokenizer/tokenizer.c: NFKC, case-fold, one
    token per Han/kana character, per run of letters and digits, and per
    punctuation character (enough for ordinary sentences)."""
    tokens = []
    for word in re.findall(r"\w+|[^\w\s]", unicodedata.normalize("NFKC", text).casefold()):
        run = ""
        for ch in word:
            if is_cjk(ch):
                if run:
                    tokens.append(run)
                    run = ""
                tokens.append(ch)
            else:
                run += ch
        if run:
            tokens.append(run)
    return tokens


def read_vocab(path):
    """Vocabulary file lines 'folded<TAB>surface<TAB>count': id = line number."""
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    return {r[0]: i for i, r in enumerate(rows)}, [r[1] if len(r) > 1 else r[0] for r in rows]


def sentence(weights_path, src_vocab_path, tgt_vocab_path, text):
    """What a user's one-off PyTorch script does: load, tokenise, decode,
    print.  Timed from outside, as a whole process."""
    threads()
    model, meta = load_model(weights_path)
    ids, _ = read_vocab(src_vocab_path)
    _, surface = read_vocab(tgt_vocab_path)
    src = [ids.get(t, UNK) for t in tokenize(text)][: int(meta["max_len"])]
    torch.set_grad_enabled(False)
    out = greedy(model, src, decode_limit(len(src), 2.0, 10, int(meta["max_len"])))
    words = [surface[i] for i in out if i != EOS]
    joiner = "" if all(is_cjk(w[0]) or not w[0].isalnum() for w in words if w) else " "
    print(joiner.join(words))
    return 0


def main(argv):
    if len(argv) in (3, 4) and argv[1] == "train":
        return train(argv[2], int(argv[3]) if len(argv) == 4 else 1024)
    if len(argv) in (4, 5) and argv[1] == "translate":
        return translate(argv[2], argv[3], int(argv[4]) if len(argv) == 5 else None)
    if len(argv) == 6 and argv[1] == "sentence":
        return sentence(*argv[2:6])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, ValueError, KeyError, RuntimeError) as e:  # a missing or wrong dump: one line, not a traceback
        print(f"bench_torch.py: {e}", file=sys.stderr)
        sys.exit(2)
