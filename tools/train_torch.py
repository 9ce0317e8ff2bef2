#!/usr/bin/python3
"""Train translate's model with PyTorch DistributedDataParallel, on as many
processes, GPUs and machines as torchrun gives it; the result runs in
./translate unchanged.  docs/scale-out.md is the guide.

    ./train --export DIR CONFIG     (our C tokenizer and batching; app/export.h)
    torchrun --nproc_per_node N tools/train_torch.py DIR [--out WEIGHTS] [options]
    /usr/bin/python3 tools/train_torch.py DIR ...        (one process, no torchrun)

What it trains is what the C trainer (app/train.c) trains, from the same
start: the model of tools/reference.py (stock nn.Transformer, embeddings,
generator) loaded from DIR/init.safetensors; cross-entropy with label
smoothing over the target tokens; AdamW (decay on matrices and embeddings
only) with the linear warm-up then inverse-square-root schedule; gradient
clipping; dropout where C applies it; the length-grouped token-count
batches that data/batches.c made, read from DIR/data.safetensors.

One step takes W x K of those batches (W processes, K = --accum): each
epoch's own batches where a source's weight has a fraction (each epoch
draws anew; the export holds every epoch's), permuted from (seed, epoch)
and padded to a multiple
of W x K by repeating the first ones, as DistributedSampler does; step s
takes the s-th group of W x K, rank r every W-th of them from r, one after
the other with the gradients accumulated (no all-reduce until the last).
The loss is summed over tokens and divided by the step's total target
tokens over all ranks, so the update does not depend on how the step's
batches are spread over processes (tests/test_torch_train.c checks 1 x 2
against 2 x 1 within 1e-6).  With W x K = 1 a step is the C trainer's.

Rank 0 writes, at every `checkpoint_steps`, every epoch's end and the end:
the checkpoint (WEIGHTS.ckpt.pt: model, optimizer, step, epoch, position in
the epoch, every rank's RNG state; --resume continues exactly where it was
written), and the weights WEIGHTS (our safetensors format with the
__metadata__ model/model.c checks; float16 with --f16 or the config's
weights_f16) with WEIGHTS minus .safetensors plus .yaml beside it and the
two vocabularies, so that `./translate -c WEIGHTS.yaml` runs it.  Dev loss
is printed at each epoch's end.  Unlike train, there is no dev BLEU here:
score the result with `./translate -c WEIGHTS.yaml --eval dev.tsv`.

On CUDA (torch.cuda.is_available()): the device of LOCAL_RANK, NCCL, and
float16 autocast with a gradient scaler (--no-amp: float32).  Elsewhere:
the CPU and gloo.  Exit status as train's: 0 done, 2 usage, 3 a missing or
broken export or checkpoint, 4 a file could not be written, 130 interrupted
(SIGINT, SIGTERM: the files of the last checkpoint stay; --resume goes on).
"""
import argparse
import contextlib
import io
import json
import math
import os
import shutil
import signal
import struct
import sys
import time
import zlib

import torch
import torch.distributed as dist
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402  (the one definition of the model and the file reader)

EXIT_USAGE, EXIT_DATA, EXIT_WRITE, EXIT_INTERRUPTED = 2, 3, 4, 130
MAX_ACCUM = 1 << 16
YAML_FIRST_LINE = "# Written by tools/train_torch.py"
EXPORT_FORMAT, EXPORT_VERSION = "translate-export", "2"
CHECKPOINT_FORMAT = "translate-torch-checkpoint-1"
ARCH_KEYS = ["d_model", "heads", "encoder_layers", "decoder_layers", "d_ff", "activation", "norm",
             "max_len", "scale_attention", "tied_output_embedding"]


class Failure(Exception):
    """One line for stderr and an exit status."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def parse_args(argv):
    p = argparse.ArgumentParser(prog="train_torch.py", description=__doc__.split("\n\n")[0])
    p.add_argument("export_dir", metavar="DIR", help="written by ./train --export DIR CONFIG")
    p.add_argument("--out", metavar="WEIGHTS", help="the trained model (default DIR/model.safetensors)")
    p.add_argument("--accum", type=int, default=1, metavar="K",
                   help="batches per process per step, gradients accumulated (default 1)")
    p.add_argument("--max-steps", type=int, metavar="N", help="stop after N steps (default: the config's)")
    p.add_argument("--epochs", type=int, metavar="N", help="instead of the config's epochs")
    p.add_argument("--learning-rate", type=float, metavar="LR",
                   help="peak learning rate instead of the config's (a larger W x K takes a larger one)")
    p.add_argument("--checkpoint-steps", type=int, metavar="N", help="instead of the config's")
    p.add_argument("--resume", action="store_true", help="continue from WEIGHTS.ckpt.pt")
    p.add_argument("--overwrite", action="store_true", help="replace a WEIGHTS that exists")
    p.add_argument("--f16", action="store_true", help="write the weights as float16")
    p.add_argument("--no-amp", action="store_true", help="on CUDA: float32, no autocast")
    p.add_argument("--threads", type=int, metavar="N", help="CPU threads per process (torch.set_num_threads)")
    p.add_argument("--log-steps", type=int, default=100, metavar="N", help="a progress line every N steps")
    p.add_argument("--dump-step", metavar="FILE",
                   help="after this run's first step, write its gradients (grad.NAME, before "
                        "clipping) and the updated weights to FILE (the tests compare them)")
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(argv)
    for name in ("accum", "max_steps", "epochs", "checkpoint_steps", "threads", "log_steps"):
        v = getattr(a, name)
        if v is not None and v < (0 if name == "max_steps" else 1):
            raise Failure(EXIT_USAGE, f"--{name.replace('_', '-')}: expected a positive count, not {v}")
    if a.learning_rate is not None and not (a.learning_rate > 0 and math.isfinite(a.learning_rate)):
        raise Failure(EXIT_USAGE, f"--learning-rate: expected a positive number, not {a.learning_rate}")
    if a.accum > MAX_ACCUM:  # each epoch's groups are padded to W x K batches
        raise Failure(EXIT_USAGE, f"--accum: at most {MAX_ACCUM}, not {a.accum}")
    return a


# ---- the export ---------------------------------------------------------------


class Part:
    """One of the export's data sets ("train", "dev"): ids and batches, as
    numpy int32 arrays (millions of pairs as Python lists would cost each
    process gigabytes)."""

    def __init__(self, t, name):
        get = lambda k: t[f"{name}.{k}"].numpy()
        self.src_ids, self.src_start = get("src_ids"), get("src_start")
        self.tgt_ids, self.tgt_start = get("tgt_ids"), get("tgt_start")
        self.pairs, self.first = get("batch_pairs"), get("batch_first")
        # epoch e's batches are epoch_first[e] .. epoch_first[e+1]-1: one
        # batching per epoch where each draws its own pairs, else one for all
        self.epoch_first = get("epoch_first")
        self.drawn = len(self.epoch_first) - 1  # epochs with a batching of their own
        self.count = len(self.first) - 1  # batches, all epochs'
        # what a checkpoint's position in an epoch refers to (as train's data hash)
        self.digest = 0
        for a in (self.src_ids, self.src_start, self.tgt_ids, self.tgt_start, self.pairs, self.first,
                  self.epoch_first):
            self.digest = zlib.crc32(a.tobytes(), self.digest)

    def epoch_batches(self, epoch):
        """The first batch of `epoch`'s batching and how many it has."""
        e = epoch % self.drawn
        return int(self.epoch_first[e]), int(self.epoch_first[e + 1] - self.epoch_first[e])

    def batch(self, b):
        return self.pairs[self.first[b]:self.first[b + 1]].tolist()

    def targets(self, b):
        """Batch b's target tokens, </s> included (what the loss averages over)."""
        pairs = self.batch(b)
        return int((self.tgt_start[[p + 1 for p in pairs]] - self.tgt_start[pairs]).sum()) + len(pairs)

    def padded(self, b, pad, bos, eos, drop=None):
        """Batch b as padded [B, S] sources, [B, T+1] decoder inputs (<s> +
        target) and labels (target + </s>); `drop(p, src)` may shorten a source."""
        srcs, tgts = [], []
        for p in self.batch(b):
            src = self.src_ids[self.src_start[p]:self.src_start[p + 1]].tolist()
            srcs.append(drop(p, src) if drop else src)
            tgts.append(self.tgt_ids[self.tgt_start[p]:self.tgt_start[p + 1]].tolist())
        S, T = max(map(len, srcs)), max(map(len, tgts)) + 1
        src = torch.tensor([s + [pad] * (S - len(s)) for s in srcs])
        dec = torch.tensor([[bos] + t + [pad] * (T - 1 - len(t)) for t in tgts])
        lab = torch.tensor([t + [eos] + [pad] * (T - 1 - len(t)) for t in tgts])
        return src, dec, lab


def check_part(part, name, path, src_vocab, tgt_vocab):
    """Every index of `part` inside what it indexes, so that a torn or
    mixed export is a message here, not an IndexError mid-training."""
    def starts_ok(start, ids):
        return len(start) >= 1 and start[0] == 0 and start[-1] == len(ids) and bool((start[1:] >= start[:-1]).all())
    def in_range(ids, size):
        return not len(ids) or (0 <= ids.min() and ids.max() < size)
    problem = None
    if not starts_ok(part.src_start, part.src_ids) or not starts_ok(part.tgt_start, part.tgt_ids):
        problem = "the sentences' offsets do not fit their ids"
    elif len(part.src_start) != len(part.tgt_start):
        problem = "sources and targets differ in number"
    elif not starts_ok(part.first, part.pairs):
        problem = "the batches' offsets do not fit their pairs"
    elif not in_range(part.pairs, len(part.src_start) - 1):
        problem = "a batch names a pair that is not there"
    elif not in_range(part.src_ids, src_vocab):
        problem = f"a source id is outside init.safetensors's vocabulary of {src_vocab}"
    elif not in_range(part.tgt_ids, tgt_vocab):
        problem = f"a target id is outside init.safetensors's vocabulary of {tgt_vocab}"
    if problem:
        raise Failure(EXIT_DATA, f"{path}: {name}: {problem} (a torn or mixed export: export again)")


def vocab_hash(path):
    """tokenizer/vocab.c's vocab_hash: FNV-1a over the tokens (each line's
    first field) in id order, each with a NUL; a BOM and the '#' comments
    before the first token are not tokens."""
    h, first, started = 1469598103934665603, True, False
    with open(path, "rb") as f:
        for line in f:
            if first and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
            first = False
            line = line.rstrip(b"\n").rstrip(b"\r")
            if not started and line.startswith(b"#"):
                continue
            started = True
            for byte in line.split(b"\t", 1)[0] + b"\0":
                h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


EXPORT_FILES = ("data.safetensors", "init.safetensors", "source.vocab", "target.vocab")


def export_data_path(d):
    """DIR/data.safetensors, or a Failure: the first thing looked at."""
    path = os.path.join(d, "data.safetensors")
    if not os.path.isfile(path):
        raise Failure(EXIT_DATA, f"{path}: no export there (write one with ./train --export {d} CONFIG)")
    return path


def load_export(d):
    path = export_data_path(d)
    try:
        t, meta = reference.read_safetensors(path)
    except (OSError, ValueError, KeyError, RuntimeError, struct.error) as e:
        raise Failure(EXIT_DATA, f"{path}: not a readable export: {e}")
    if meta.get("format") != EXPORT_FORMAT or meta.get("format_version") != EXPORT_VERSION:
        raise Failure(EXIT_DATA, f"{path}: not a version {EXPORT_VERSION} {EXPORT_FORMAT} file"
                                 f"{' (an older export: export again)' if meta.get('format') == EXPORT_FORMAT else ''}")
    init_path = os.path.join(d, "init.safetensors")
    try:
        init, init_meta = reference.read_safetensors(init_path)
    except (OSError, ValueError, KeyError, RuntimeError, struct.error) as e:
        raise Failure(EXIT_DATA, f"{init_path}: cannot read: {e}")
    if init_meta.get("format") != "translate-model":
        raise Failure(EXIT_DATA, f"{init_path}: not a translate model")
    # Each file of an export is replaced on its own: one that failed half way
    # over an earlier export leaves files of both (app/export.h).
    if not meta.get("export_id") or meta.get("export_id") != init_meta.get("export_id"):
        raise Failure(EXIT_DATA, f"{path} and {init_path} are not of one export "
                                 "(a torn or mixed export, or one from before export ids: export again)")
    # The vocabularies are the ones the model was made with (the C loader
    # checks the same hashes), found now rather than after training.
    for side, key in (("source", "source_vocab_hash"), ("target", "target_vocab_hash")):
        vocab = os.path.join(d, f"{side}.vocab")
        try:
            got = f"{vocab_hash(vocab):016x}"
        except OSError as e:
            raise Failure(EXIT_DATA, f"{vocab}: cannot read: {e.strerror or e} (a torn export: export again)")
        if got != init_meta.get(key):
            raise Failure(EXIT_DATA, f"{vocab}: not the vocabulary {init_path} was made with "
                                     "(a mixed export: export again)")
    if "simplify" in meta and not os.path.isfile(os.path.join(d, meta["simplify"])):
        raise Failure(EXIT_DATA, f"{os.path.join(d, meta['simplify'])}: missing (a torn export: export again)")
    if init_meta["scale_attention"] != "true":
        raise Failure(EXIT_USAGE, f"{init_path}: scale_attention false cannot be trained here "
                                  "(nn.MultiheadAttention always divides by sqrt(d_k))")
    try:
        parts = [Part(t, name) for name in ("train", "dev")]
        stops = set(t["source.final_punctuation"].tolist())
        sizes = [int(init_meta[k]) for k in ("source_vocab_size", "target_vocab_size")]
    except (KeyError, ValueError, RuntimeError) as e:
        raise Failure(EXIT_DATA, f"{path}: not a whole export: {e}")
    for part, name in zip(parts, ("train", "dev")):
        check_part(part, name, path, *sizes)
    return parts[0], parts[1], meta, init, init_meta, stops


# ---- our weights file -----------------------------------------------------------


def write_safetensors(path, tensors, meta, f16=False):
    """Our format (model/safetensors.h): tensors as float32 (or float16),
    8-byte aligned data, written to a temporary file renamed over `path`."""
    header, blobs, offset = {"__metadata__": meta}, [], 0
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        t = t.half() if f16 and t.is_floating_point() else (t.float() if t.is_floating_point() else t)
        raw = t.numpy().tobytes()
        dtype = {torch.float32: "F32", torch.float16: "F16", torch.int32: "I32"}[t.dtype]
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = reference.json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    atomic_write(path, lambda f: [f.write(struct.pack("<Q", len(text))), f.write(text)]
                 + [f.write(b) for b in blobs])


def atomic_write(path, fill):
    """fill(f) into a temporary file beside `path`, renamed over it: an
    error (a full disk) or an interruption removes it, and `path` stays."""
    tmp = os.path.join(os.path.dirname(path) or ".", f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise Failure(EXIT_WRITE, f"{path}: cannot write: {e.strerror or e}")
        raise


def yaml_path(weights):
    stem = weights[:-len(".safetensors")] if weights.endswith(".safetensors") else weights
    return stem, stem + ".yaml"


def write_model(args, model, init_meta, meta, steps, world):
    """WEIGHTS, its two vocabularies and the YAML that ./translate -c reads."""
    out = args.out
    f16 = args.f16 or meta["weights_f16"] == "true"
    info = dict(init_meta, trained_by="tools/train_torch.py", train_steps=str(steps))
    write_safetensors(out, model.state_dict(), info, f16)
    stem, yaml = yaml_path(out)
    # the vocabularies, and the config's Traditional -> Simplified table
    # when the export has one (a zh source is read through it, as the
    # training data was: without it 這個問題很難。 came out as nonsense)
    copies = {f"{side}_vocab": (f"{side}.vocab", f"{stem}.{name}.vocab")
              for side, name in (("source", "src"), ("target", "tgt"))}
    if "simplify" in meta:
        copies["simplify"] = (meta["simplify"], f"{stem}.simplify.tsv")
    for key, (name, to) in copies.items():
        source = os.path.join(args.export_dir, name)
        try:
            with open(source, "rb") as src:
                atomic_write(to, lambda f: shutil.copyfileobj(src, f))
        except OSError as e:  # (reading it: load_export checked it is there before training)
            raise Failure(EXIT_DATA, f"{source}: cannot read: {e.strerror or e}")
    # every value quoted (JSON's strings are YAML's): a name with ": " or
    # " #" in it, written plain, made a YAML translate refused
    def q(value):
        # raw characters (json's \ud83d\ude00 surrogate escapes are no YAML);
        # the three that YAML reads as line breaks escaped
        text = json.dumps(value, ensure_ascii=False)
        return text.replace("\u0085", "\\x85").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    # the comment's paths: one holding a line break ended the comment, and
    # the rest of it was read as a key translate refused
    def in_comment(path):
        return q(path) if any(c in path for c in "\n\r\x85\u2028\u2029") else path
    lines = [f"{YAML_FIRST_LINE} from {in_comment(args.export_dir)} ({steps} steps, {world} process"
             f"{'es' if world > 1 else ''}): ./translate -c {in_comment(yaml)}",
             f"name: {q(meta['name'])}", f"source_language: {q(meta['source_language'])}",
             f"target_language: {q(meta['target_language'])}", "", "model:",
             f"  weights: {q(os.path.basename(out))}"]
    lines += [f"  {key}: {q(os.path.basename(to))}" for key, (_, to) in copies.items()]
    lines += ["", "architecture:"]
    lines += [f"  {k}: {init_meta[k]}" for k in ARCH_KEYS]
    # copy_numbers: absent from exports written before it existed
    lines += ["", "decoding:"] + [f"  {k}: {meta[k]}" for k in ("beam", "length_penalty", "max_output_ratio",
                                                               "max_output_extra", "copy_numbers") if k in meta]
    text = ("\n".join(lines) + "\n").encode()
    atomic_write(yaml, lambda f: f.write(text))


# ---- distributed plumbing -------------------------------------------------------


def setup():
    """(rank, world, local_rank, device); a process group when torchrun started us."""
    cuda = torch.cuda.is_available()
    if "RANK" not in os.environ:
        return 0, 1, 0, torch.device("cuda" if cuda else "cpu")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local)
    dist.init_process_group("nccl" if cuda else "gloo")
    return dist.get_rank(), dist.get_world_size(), local, torch.device(f"cuda:{local}" if cuda else "cpu")


def all_sum(values, device, world):
    t = torch.tensor(values, dtype=torch.float64, device=device)
    if world > 1:
        dist.all_reduce(t)
    return t.tolist()


def rng_state(device):
    return {"cpu": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state(device) if device.type == "cuda" else None}


def set_rng_state(state, device):
    torch.set_rng_state(state["cpu"])
    if device.type == "cuda" and state["cuda"] is not None:
        torch.cuda.set_rng_state(state["cuda"], device)


# ---- the schedule (training/optim.c) -------------------------------------------


def lr_schedule(step, peak, warmup):
    """Linear warm-up to `peak`, then peak * sqrt(warmup / step); step from 1."""
    step = max(step, 1)
    if warmup <= 0:
        return peak
    return peak * step / warmup if step <= warmup else peak * math.sqrt(warmup / step)


def epoch_groups(n_batches, seed, epoch, group):
    """The epoch's steps: lists of `group` batch indices, from a permutation
    drawn from (seed, epoch), padded by wrapping round as DistributedSampler does."""
    g = torch.Generator()
    g.manual_seed((seed * 1000003 + epoch) % (1 << 63))
    order = torch.randperm(n_batches, generator=g).tolist()
    steps = -(-n_batches // group)
    order = (order * -(-steps * group // n_batches))[:steps * group]
    return [order[s * group:(s + 1) * group] for s in range(steps)]


class Padded(nn.Module):
    """What DDP wraps: forward is the padded-batch pass."""

    def __init__(self, model, pad):
        super().__init__()
        self.model, self.pad = model, pad

    def forward(self, src, dec):
        return self.model.forward_padded(src, dec, self.pad)


# ---- training ---------------------------------------------------------------------


class Run:
    def __init__(self, args, rank, world, device):
        self.args, self.rank, self.world, self.device = args, rank, world, device
        self.train, self.dev, self.meta, init, self.init_meta, self.stops = load_export(args.export_dir)
        m = self.meta
        self.pad, self.bos, self.eos = int(m["pad_id"]), int(m["bos_id"]), int(m["eos_id"])
        self.seed = int(m["seed"])
        self.peak = args.learning_rate or float(m["learning_rate"])
        self.warmup = int(m["warmup_steps"])
        self.epochs = args.epochs or int(m["epochs"])
        if m.get("draws_per_epoch") == "true" and self.epochs > self.train.drawn:
            n = self.train.drawn
            raise Failure(EXIT_USAGE, f"--epochs {self.epochs}: the export holds the draws of its weighted sources "
                                      f"for {n} epoch{'s' if n > 1 else ''}: export again with train.epochs at "
                                      "least that")
        self.max_steps = args.max_steps if args.max_steps is not None else int(m["max_steps"])
        self.checkpoint_steps = args.checkpoint_steps or int(m["checkpoint_steps"])
        self.clip = float(m["clip_norm"])
        self.drop_p = float(m["drop_final_punctuation"])
        self.group = world * args.accum
        self.model = reference.Translator(self.init_meta, dropout=float(m["dropout"]))
        try:
            self.model.load_state_dict(init, strict=True)
        except RuntimeError as e:
            raise Failure(EXIT_DATA, f"{args.export_dir}/init.safetensors: {str(e).splitlines()[0]}")
        self.model.to(device)
        wrapped = Padded(self.model, self.pad)
        self.net = nn.parallel.DistributedDataParallel(wrapped, device_ids=[device.index] if device.type == "cuda"
                                                       else None) if world > 1 or dist.is_initialized() else wrapped
        named = dict(self.model.named_parameters())
        decay = [p for p in named.values() if p.dim() > 1]
        rest = [p for p in named.values() if p.dim() <= 1]
        self.opt = torch.optim.AdamW([{"params": decay, "weight_decay": float(m["weight_decay"])},
                                      {"params": rest, "weight_decay": 0.0}],
                                     lr=self.peak, betas=(float(m["beta1"]), float(m["beta2"])),
                                     eps=float(m["eps"]))
        self.amp = device.type == "cuda" and not args.no_amp
        self.scaler = torch.cuda.amp.GradScaler() if self.amp else None
        self.loss_fn = nn.CrossEntropyLoss(ignore_index=self.pad, reduction="sum",
                                           label_smoothing=float(m["label_smoothing"]))
        self.step, self.epoch, self.position = 0, 0, 0  # position: steps done in this epoch
        self.checkpoint = args.out + ".ckpt.pt"

    def say(self, text):
        if self.rank == 0 and not self.args.quiet:
            print(f"train_torch: {text}", file=sys.stderr, flush=True)

    def drop_final(self, epoch):
        """train.drop_final_punctuation: a source loses its final . ? ! 。
        with that chance, drawn from (seed, epoch, pair); never a one-token one."""
        if self.drop_p <= 0:
            return None

        def drop(p, src):
            if len(src) < 2 or src[-1] not in self.stops:
                return src
            g = torch.Generator()
            g.manual_seed(((self.seed * 1000003 + epoch) * 2654435761 + p) % (1 << 63))
            return src[:-1] if float(torch.rand(1, generator=g)) < self.drop_p else src
        return drop

    def forward_loss(self, part, b, drop=None):
        src, dec, lab = (x.to(self.device) for x in part.padded(b, self.pad, self.bos, self.eos, drop))
        with torch.autocast("cuda", dtype=torch.float16) if self.amp else contextlib.nullcontext():
            logits = self.net(src, dec) if self.net.training else self.model.forward_padded(src, dec, self.pad)
        loss = self.loss_fn(logits.float().reshape(-1, logits.shape[-1]), lab.reshape(-1))
        return loss, int((lab != self.pad).sum())

    def train_step(self, mine, epoch):
        """One update from this rank's batches `mine`; the global mean loss and the gradient norm."""
        drop = self.drop_final(epoch)
        tokens = sum(self.train.targets(b) for b in mine)
        total, = all_sum([tokens], self.device, self.world)
        self.opt.zero_grad(set_to_none=True)
        loss_sum = 0.0
        for i, b in enumerate(mine):
            last = i == len(mine) - 1
            sync = contextlib.nullcontext() if last or not hasattr(self.net, "no_sync") else self.net.no_sync()
            with sync:
                loss, _ = self.forward_loss(self.train, b, drop)
                scaled = loss * (self.world / total)  # DDP averages over ranks: the sum over all tokens / total
                (self.scaler.scale(scaled) if self.scaler else scaled).backward()
            loss_sum += float(loss)
        if self.scaler:
            self.scaler.unscale_(self.opt)
        grads = [p.grad for p in self.model.parameters() if p.grad is not None]
        norm = torch.norm(torch.stack([g.detach().double().norm() for g in grads])).item()
        if self.args.dump_step and self.step == self.start_step:
            self.dumped = {f"grad.{n}": p.grad.detach().clone() for n, p in self.model.named_parameters()}
        if self.clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        lr = lr_schedule(self.step + 1, self.peak, self.warmup)
        for g in self.opt.param_groups:
            g["lr"] = lr
        if self.scaler:
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()
        self.step += 1
        loss_total, = all_sum([loss_sum], self.device, self.world)
        return loss_total / total, norm, lr, total

    @torch.no_grad()
    def dev_loss(self):
        self.net.eval()
        s, n = 0.0, 0
        for b in range(self.rank, self.dev.count, self.world):
            loss, tokens = self.forward_loss(self.dev, b)
            s, n = s + float(loss), n + tokens
        self.net.train()
        s, n = all_sum([s, n], self.device, self.world)
        return s / max(n, 1)

    def save(self, final=False):
        """The checkpoint and the weights, by rank 0; every rank's RNG state gathered first."""
        states = [None] * self.world
        if self.world > 1:
            dist.all_gather_object(states, rng_state(self.device))
        else:
            states = [rng_state(self.device)]
        if self.rank == 0:
            ck = {"format": CHECKPOINT_FORMAT, "model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
                  "scaler": self.scaler.state_dict() if self.scaler else None, "step": self.step,
                  "epoch": self.epoch, "position": self.position, "group": self.group, "world": self.world,
                  "batches": self.train.count, "data": self.train.digest, "seed": self.seed,
                  "architecture": self.architecture(), "rng": states}
            # Serialised in memory first: torch.save's writer, stopped by a
            # failed write (a full disk), aborts the process from C++.
            buf = io.BytesIO()
            torch.save(ck, buf)
            atomic_write(self.checkpoint, lambda f: f.write(buf.getbuffer()))
            write_model(self.args, self.model, self.init_meta, self.meta, self.step, self.world)
        if self.world > 1:
            dist.barrier()

    def architecture(self):
        """The export's architecture as the checkpoint records it."""
        return {k: self.init_meta[k] for k in ARCH_KEYS}

    def resume(self):
        path = self.checkpoint
        if not os.path.isfile(path):
            raise Failure(EXIT_DATA, f"{path}: no checkpoint to resume from")
        try:
            ck = torch.load(path, map_location="cpu")  # RNG states must stay CPU tensors
        except Exception as e:  # a torn or foreign file: one line, not a traceback
            raise Failure(EXIT_DATA, f"{path}: not a readable checkpoint: {e}")
        if not isinstance(ck, dict) or ck.get("format") != CHECKPOINT_FORMAT:
            raise Failure(EXIT_DATA, f"{path}: not a train_torch.py checkpoint")
        for key, now in (("batches", self.train.count), ("data", self.train.digest), ("seed", self.seed),
                         ("group", self.group)):
            if ck.get(key) != now:
                raise Failure(EXIT_USAGE, f"{path}: written with {key} {ck[key]}, this run has {now}: "
                                          "its position in the epoch would name other batches")
        # A DIR exported again from another config: weights of other shapes
        # gave a traceback, and a pre-norm relu model went on as post-norm
        # gelu without a word (the shapes are the same).
        arch = ck.get("architecture")
        if arch is not None and arch != self.architecture():
            differ = ", ".join(f"{k} {arch.get(k)} -> {v}" for k, v in self.architecture().items() if arch.get(k) != v)
            raise Failure(EXIT_USAGE, f"{path}: written for another architecture than this export's ({differ}): "
                                      "resume with the export it was written for, or start afresh")
        try:
            self.model.load_state_dict(ck["model"])
        except RuntimeError as e:  # a checkpoint from before it recorded the architecture
            first = str(e).strip().splitlines()[-1].strip()
            raise Failure(EXIT_USAGE, f"{path}: its weights do not fit this export's model ({first}): "
                                      "resume with the export it was written for, or start afresh")
        self.opt.load_state_dict(ck["optimizer"])
        if self.scaler and ck["scaler"]:
            self.scaler.load_state_dict(ck["scaler"])
        self.step, self.epoch, self.position = ck["step"], ck["epoch"], ck["position"]
        if ck["world"] == self.world:
            set_rng_state(ck["rng"][self.rank], self.device)
        else:
            self.say(f"{path}: written by {ck['world']} processes, now {self.world}: the dropout draws differ")
        self.say(f"resuming from {path}: epoch {self.epoch + 1}, step {self.step}")

    def run(self):
        args = self.args
        if args.resume:
            self.resume()
        else:
            torch.manual_seed(self.seed + 7919 * self.rank)  # each rank its own dropout draws
        self.start_step = self.step
        first, count = self.train.epoch_batches(self.epoch)
        per_epoch = f"{count} batches an epoch" if self.train.drawn == 1 else \
            f"{count} batches in epoch {self.epoch + 1} (each epoch its own draw)"
        self.say(f"{per_epoch}, {self.group} a step ({self.world} process"
                 f"{'es' if self.world > 1 else ''} x {args.accum}), {self.device}"
                 f"{', float16 autocast' if self.amp else ''}")
        self.net.train()
        start, tokens_done = time.time(), 0
        while self.epoch < self.epochs:
            first, count = self.train.epoch_batches(self.epoch)
            groups = [[first + b for b in g] for g in epoch_groups(count, self.seed, self.epoch, self.group)]
            while self.position < len(groups):
                if self.max_steps and self.step >= self.max_steps:
                    self.say(f"max_steps reached: dev loss {self.dev_loss():.4f}")
                    self.save(final=True)
                    return 0
                mine = groups[self.position][self.rank::self.world]
                loss, norm, lr, tokens = self.train_step(mine, self.epoch)
                self.position += 1
                tokens_done += tokens
                if not math.isfinite(loss):
                    raise Failure(EXIT_DATA, f"the loss became {loss} at step {self.step}: stopping "
                                             "(lower the learning rate?)")
                if args.dump_step and self.step == self.start_step + 1 and self.rank == 0:
                    dump = dict(self.dumped)
                    dump.update(self.model.state_dict())
                    write_safetensors(args.dump_step, dump, {"loss": repr(loss), "grad_norm": repr(norm)})
                if self.step % args.log_steps == 0:
                    rate = tokens_done / max(time.time() - start, 1e-9)
                    self.say(f"epoch {self.epoch + 1}/{self.epochs}  step {self.step}  loss {loss:.4f}  "
                             f"{rate:.0f} tok/s  lr {lr:.2e}  grad norm {norm:.3f}")
                if self.step % self.checkpoint_steps == 0:
                    self.save()
            self.say(f"epoch {self.epoch + 1}: dev loss {self.dev_loss():.4f}  [{time.time() - start:.0f} s]")
            self.epoch, self.position = self.epoch + 1, 0
            self.save()
        self.save(final=True)
        self.say(f"done: {self.step} steps, {time.time() - start:.0f} s; model in {args.out}")
        return 0


def check_outputs(args):
    """What this run writes, before it trains: WEIGHTS, and beside it its
    YAML, its two vocabularies and its checkpoint.  A file there is
    replaced only with --resume (this run's own) or --overwrite, and a
    YAML this script did not write (a config of the user's) never."""
    if args.out.endswith("/") or os.path.isdir(args.out):
        raise Failure(EXIT_USAGE, f"{args.out} names a folder: --out needs a file name")
    stem, yaml = yaml_path(args.out)
    outputs = (args.out, yaml, f"{stem}.src.vocab", f"{stem}.tgt.vocab", f"{stem}.simplify.tsv",
               args.out + ".ckpt.pt")
    if args.dump_step:  # a test hook's file: never an input, never a file that is there
        for name in EXPORT_FILES + ("simplify.tsv",):
            read = os.path.join(args.export_dir, name)
            if os.path.exists(args.dump_step) and os.path.exists(read) and os.path.samefile(args.dump_step, read):
                raise Failure(EXIT_USAGE, f"--dump-step {args.dump_step} would replace {read}, an input of this run")
        if os.path.lexists(args.dump_step):
            raise Failure(EXIT_USAGE, f"--dump-step {args.dump_step} exists: name a new file")
    for path in outputs:  # never the export this run reads, --overwrite or not
        for name in EXPORT_FILES + ("simplify.tsv",):
            read = os.path.join(args.export_dir, name)
            if os.path.exists(path) and os.path.exists(read) and os.path.samefile(path, read):
                raise Failure(EXIT_USAGE, f"{path} would replace {read}, an input of this run: "
                                          "name another --out")
    for path in outputs:
        if os.path.lexists(path) and not (args.resume or args.overwrite):
            what = "" if path == args.out else f" (written beside {args.out})"
            raise Failure(EXIT_USAGE, f"{path} exists{what}: train into a new file with --out WEIGHTS, "
                                      "continue with --resume, or replace it with --overwrite")
    with contextlib.suppress(OSError):
        with open(yaml, encoding="utf-8", errors="replace") as f:
            if not f.readline().startswith(YAML_FIRST_LINE):
                raise Failure(EXIT_USAGE, f"{yaml} exists and is not a config train_torch.py wrote "
                                          "(it would be replaced): name another --out")
    # WEIGHTS itself: --overwrite replaces a model (a safetensors file, a
    # broken one too) or an empty file, as ./train's does, never notes, data
    # or a config named --out by mistake (they became models)
    if os.path.isfile(args.out) and os.path.getsize(args.out) and not looks_like_safetensors(args.out):
        raise Failure(EXIT_USAGE, f"{args.out} exists and is not a model (not a safetensors file): "
                                  "--overwrite replaces only models; name another --out")


def looks_like_safetensors(path):
    """Does the file begin as a safetensors file does: an 8-byte
    little-endian header length within the format's limit, then "{"?
    (model/safetensors.c's safetensors_looks_like.)"""
    try:
        with open(path, "rb") as f:
            head = f.read(9)
    except OSError:
        return False
    return len(head) == 9 and 2 <= int.from_bytes(head[:8], "little") <= 100_000_000 and head[8:] == b"{"


def interrupted(signum, frame):
    raise KeyboardInterrupt  # SIGTERM as Ctrl-C: the same clean end


def main(argv):
    signal.signal(signal.SIGTERM, interrupted)
    # SIGINT too: Python turns it into KeyboardInterrupt only when it was
    # not ignored at start, and a shell starts a background job (`... &`)
    # with it ignored, so `kill -INT` was lost and the run went on to its end.
    signal.signal(signal.SIGINT, interrupted)
    try:
        args = parse_args(argv)
        export_data_path(args.export_dir)  # before a folder is made for WEIGHTS in it
        args.out = args.out or os.path.join(args.export_dir, "model.safetensors")
        check_outputs(args)
        # WEIGHTS' folder made and checked now, not at the first checkpoint
        # (other ranks would be left waiting at its barrier)
        out_dir = os.path.dirname(os.path.abspath(args.out))
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as e:
            raise Failure(EXIT_WRITE, f"{out_dir}: cannot create the folder: {e.strerror or e}")
        if not os.access(out_dir, os.W_OK | os.X_OK):
            raise Failure(EXIT_WRITE, f"{args.out}: cannot write: its folder {out_dir} is not writable")
        if args.threads:
            torch.set_num_threads(args.threads)
        rank, world, _, device = setup()
        try:
            return Run(args, rank, world, device).run()
        finally:
            if dist.is_initialized():
                dist.destroy_process_group()
    except Failure as f:
        print(f"train_torch: {f}", file=sys.stderr)
        return f.status
    except KeyboardInterrupt:
        print("train_torch: interrupted: the files of the last checkpoint stay (continue with --resume)",
              file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
