#!/usr/bin/python3
"""PyTorch twin of translate's model: checks the C program against stock
torch.nn.Transformer.

    /usr/bin/python3 tools/reference.py check ATTENTION.json LOGITS.bin
    /usr/bin/python3 tools/reference.py step MODEL BATCH GRADS AFTER   (see step())
    /usr/bin/python3 tools/reference.py fixtures DIR   (make fixtures; see fixtures())


`check` reads the attention JSON and raw logits that
`./translate --attention A.json --logits L.bin ...` wrote, loads the same
safetensors file into a stock torch.nn.Transformer (load_state_dict with
strict=True: our tensor names are PyTorch's), and for every sentence
compares, within 1e-4 (absolute, plus 1e-4 relative for logits):
  - the logits of every decoding step (a full teacher-forced pass here),
  - every head's encoder, decoder (masked) and cross attention map,
    taken from nn.MultiheadAttention(need_weights=True,
    average_attn_weights=False),
  - the greedy output, decoded the usual nn.Transformer way (the decoder
    re-run over the whole prefix at every step, no cache).
It prints the largest differences and exits 1 on any mismatch, 2 on a
file it cannot read or use (one line, no traceback).

Only Debian's python3-torch is needed (no safetensors package: the format
is read here with json + torch.frombuffer).  translate never needs Python.
"""
import json
import math
import struct
import sys

import torch
import torch.nn as nn

TOL = 1e-4
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
          "I32": torch.int32}  # I32: train --export's token ids


def read_safetensors(path):
    """name -> tensor (float32; I32 ones stay int32), and the __metadata__ dict."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = bytearray(data[base + begin:base + end])
        dtype = DTYPES[info["dtype"]]
        t = torch.frombuffer(raw, dtype=dtype) if raw else torch.zeros(0, dtype=dtype)
        tensors[name] = (t.float() if t.is_floating_point() else t).reshape(info["shape"])
    return tensors, meta


class TiedGenerator(nn.Module):
    """The output projection when it shares tgt_embed's matrix: only the
    bias is its own parameter (so the file has no generator.weight)."""

    def __init__(self, embedding, vocab):
        super().__init__()
        self.embedding = [embedding]  # a list: not registered as a submodule
        self.bias = nn.Parameter(torch.zeros(vocab))

    def forward(self, x):
        return nn.functional.linear(x, self.embedding[0].weight, self.bias)


class Translator(nn.Module):
    """Embeddings + stock torch.nn.Transformer + generator: the model of
    model/transformer.h, with the same state_dict names.  `dropout` (for
    tools/train_torch.py) goes where the C trainer puts it: on the embedded
    inputs, each attention's and feed-forward's output and the feed-forward's
    hidden layer; not on the attention weights, which C never drops."""

    def __init__(self, meta, dropout=0.0):
        super().__init__()
        D = int(meta["d_model"])
        self.d_model = D
        self.dropout = dropout
        self.src_embed = nn.Embedding(int(meta["source_vocab_size"]), D)
        self.tgt_embed = nn.Embedding(int(meta["target_vocab_size"]), D)
        self.transformer = nn.Transformer(
            d_model=D, nhead=int(meta["heads"]),
            num_encoder_layers=int(meta["encoder_layers"]),
            num_decoder_layers=int(meta["decoder_layers"]),
            dim_feedforward=int(meta["d_ff"]), dropout=dropout,
            activation=meta["activation"], batch_first=True,
            norm_first=meta["norm"] == "pre")
        for layer in list(self.transformer.encoder.layers) + list(self.transformer.decoder.layers):
            for mha in (layer.self_attn, getattr(layer, "multihead_attn", None)):
                if mha is not None:
                    mha.dropout = 0.0
        vocab = int(meta["target_vocab_size"])
        if meta["tied_output_embedding"] == "true":
            self.generator = TiedGenerator(self.tgt_embed, vocab)
        else:
            self.generator = nn.Linear(D, vocab)

    def positions(self, length):
        """Sinusoidal encoding, computed as the Annotated Transformer does."""
        pe = torch.zeros(length, self.d_model)
        pos = torch.arange(length, dtype=torch.float32).unsqueeze(1)
        div = torch.exp(torch.arange(0, self.d_model, 2, dtype=torch.float32)
                        * -(math.log(10000.0) / self.d_model))
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)[:, : self.d_model // 2]
        return pe

    def embed(self, table, ids):
        x = table(torch.tensor([ids])) * math.sqrt(self.d_model)
        return x + self.positions(len(ids)).unsqueeze(0)

    def forward(self, src_ids, tgt_ids):
        """The stock path: logits [T, V]."""
        T = len(tgt_ids)
        mask = self.transformer.generate_square_subsequent_mask(T)
        y = self.transformer(self.embed(self.src_embed, src_ids),
                             self.embed(self.tgt_embed, tgt_ids), tgt_mask=mask)
        return self.generator(y)[0]

    def forward_padded(self, src, tgt, pad):
        """A padded batch [B, S], [B, T] (pad marks the padding), as the
        trainers see it: logits [B, T, V]."""
        x = self.src_embed(src) * math.sqrt(self.d_model) + self.positions(src.shape[1]).to(src.device)
        y = self.tgt_embed(tgt) * math.sqrt(self.d_model) + self.positions(tgt.shape[1]).to(tgt.device)
        x = nn.functional.dropout(x, self.dropout, self.training)
        y = nn.functional.dropout(y, self.dropout, self.training)
        mask = self.transformer.generate_square_subsequent_mask(tgt.shape[1]).to(tgt.device)
        out = self.transformer(x, y, tgt_mask=mask, src_key_padding_mask=src == pad,
                               tgt_key_padding_mask=tgt == pad, memory_key_padding_mask=src == pad)
        return self.generator(out)


def attend(mha, q, kv, mask=None):
    """One nn.MultiheadAttention call keeping every head's map [H, Tq, Tk]."""
    out, w = mha(q, kv, kv, attn_mask=mask, need_weights=True, average_attn_weights=False)
    return out, w[0]


def layer_by_layer(model, src_ids, tgt_ids):
    """The same forward pass, written out layer by layer exactly as
    TransformerEncoderLayer / TransformerDecoderLayer compute it, so that
    every head's attention map can be kept.  Returns logits and the maps."""
    tr = model.transformer
    pre = tr.encoder.layers[0].norm_first
    x = model.embed(model.src_embed, src_ids)
    enc_maps, dec_maps, cross_maps = [], [], []
    for layer in tr.encoder.layers:
        ff = lambda h: layer.linear2(layer.activation(layer.linear1(h)))
        if pre:
            a, w = attend(layer.self_attn, layer.norm1(x), layer.norm1(x))
            x = x + a
            x = x + ff(layer.norm2(x))
        else:
            a, w = attend(layer.self_attn, x, x)
            x = layer.norm1(x + a)
            x = layer.norm2(x + ff(x))
        enc_maps.append(w)
    memory = tr.encoder.norm(x)
    T = len(tgt_ids)
    mask = tr.generate_square_subsequent_mask(T)
    y = model.embed(model.tgt_embed, tgt_ids)
    for layer in tr.decoder.layers:
        ff = lambda h: layer.linear2(layer.activation(layer.linear1(h)))
        if pre:
            a, w1 = attend(layer.self_attn, layer.norm1(y), layer.norm1(y), mask)
            y = y + a
            a, w2 = attend(layer.multihead_attn, layer.norm2(y), memory)
            y = y + a
            y = y + ff(layer.norm3(y))
        else:
            a, w1 = attend(layer.self_attn, y, y, mask)
            y = layer.norm1(y + a)
            a, w2 = attend(layer.multihead_attn, y, memory)
            y = layer.norm2(y + a)
            y = layer.norm3(y + ff(y))
        dec_maps.append(w1)
        cross_maps.append(w2)
    logits = model.generator(tr.decoder.norm(y))[0]
    return logits, torch.stack(enc_maps), torch.stack(dec_maps), torch.stack(cross_maps)


def greedy(model, src_ids, steps, bos=2, eos=3):
    """The usual nn.Transformer greedy loop: no cache, the decoder re-runs
    over the whole prefix at each step."""
    out = [bos]
    for _ in range(steps):
        nxt = int(model(src_ids, out)[-1].argmax())
        out.append(nxt)
        if nxt == eos:
            break
    return out[1:]


def load_model(weights_path):
    tensors, meta = read_safetensors(weights_path)
    if meta.get("format") != "translate-model":
        raise Unusable(f"{weights_path}: not a translate model")
    model = Translator(meta)
    try:
        model.load_state_dict(tensors, strict=True)
    except RuntimeError as e:  # missing, extra or misshapen tensors: the file's fault, not a mismatch
        raise Unusable(f"{weights_path}: {str(e).splitlines()[0]}")
    if meta["scale_attention"] == "false":
        # nn.MultiheadAttention always divides scores by sqrt(d_k); a model
        # trained without that scaling is the same as one whose W_Q and b_Q
        # are sqrt(d_k) times larger.
        dk = int(meta["d_model"]) // int(meta["heads"])
        with torch.no_grad():
            for layer in list(model.transformer.encoder.layers) + list(model.transformer.decoder.layers):
                for mha in [layer.self_attn] + ([layer.multihead_attn] if hasattr(layer, "multihead_attn") else []):
                    D = int(meta["d_model"])
                    mha.in_proj_weight[:D] *= math.sqrt(dk)
                    mha.in_proj_bias[:D] *= math.sqrt(dk)
    model.eval()
    return model, meta


class Report:
    def __init__(self):
        self.failures = 0

    def compare(self, what, ours, theirs, rel=0.0):
        ours = torch.as_tensor(ours, dtype=torch.float32)
        if ours.shape != theirs.shape:
            print(f"  FAIL {what}: shape {list(ours.shape)} vs PyTorch {list(theirs.shape)}")
            self.failures += 1
            return
        diff = (ours - theirs).abs()
        limit = TOL + rel * theirs.abs()
        worst = float(diff.max()) if diff.numel() else 0.0
        ok = bool((diff <= limit).all())
        print(f"  {'ok  ' if ok else 'FAIL'} {what}: max |diff| {worst:.2e}")
        self.failures += 0 if ok else 1


def attention_document(path):
    """translate's --attention document at `path`, its fields the check
    reads present and of their kinds: a JSON array, a field missing or an id
    out of range had ended in a traceback (status 1, "mismatch")."""
    with open(path) as f:
        doc = json.load(f)

    def need(ok, what):
        if not ok:
            raise Unusable(f"{path}: {what}: not an attention document of translate (docs/attention-json.md)")
    need(isinstance(doc, dict), "not a JSON object")
    need(isinstance(doc.get("decoding", {}), dict), "'decoding' is no object")
    need(isinstance(doc.get("model"), dict) and isinstance(doc["model"].get("weights_path"), str),
         "no model.weights_path")
    need(isinstance(doc.get("sentences"), list), "no 'sentences' list")
    for s in doc["sentences"]:
        need(isinstance(s, dict) and all(isinstance(s.get(k), dict) and isinstance(s[k].get("ids"), list)
                                         for k in ("source", "decoder_input", "output")),
             "a sentence without source, decoder_input and output ids")
    return doc


def check(attention_path, logits_path):
    doc = attention_document(attention_path)
    decoding = doc.get("decoding", {})  # format 1.2; earlier dumps do not say
    if decoding.get("int8"):
        raise Unusable(f"{attention_path}: made with --int8: its products read int8 weights, PyTorch reads the "
                       "file's; check a dump made without --int8")
    weights = doc["model"]["weights_path"]
    try:
        model, meta = load_model(weights)
    except (ValueError, KeyError) as e:  # (a JSON or another file there: its error named no file)
        raise Unusable(f"{weights}: cannot load it as a model: {e}") from None
    V = int(meta["target_vocab_size"])
    S_V = int(meta["source_vocab_size"])
    for s in doc["sentences"]:
        for field, ids, size in (("source", s["source"]["ids"], S_V), ("decoder_input", s["decoder_input"]["ids"], V),
                                 ("output", s["output"]["ids"], V)):
            bad = [i for i in ids if not isinstance(i, int) or not 0 <= i < size]
            if bad:
                raise Unusable(f"{attention_path}: sentence {s.get('line', '?')}: {field} id {bad[0]!r} is not "
                               "one of the model's")
    with open(logits_path, "rb") as f:
        raw = bytearray(f.read())
    want = sum(len(s["output"]["ids"]) for s in doc["sentences"]) * V
    if not raw and not want:  # a run of no sentences (an empty input): nothing to compare
        print("reference: no sentences: nothing to compare")
        return 0
    logits_all = torch.frombuffer(raw, dtype=torch.float32) if raw else torch.zeros(0)
    if logits_all.numel() != want:  # another run's logits (a shape error deep in the loop, before)
        raise Unusable(f"{logits_path}: {logits_all.numel()} floats, but {attention_path}'s sentences need "
                       f"{want} (their steps x {V}): not the logits of the same run")
    at = 0
    report = Report()
    torch.set_grad_enabled(False)
    for s in doc["sentences"]:
        src = s["source"]["ids"]
        dec_in = s["decoder_input"]["ids"]
        out = s["output"]["ids"]
        T = len(out)
        print(f"sentence {s['line']}: {len(src)} source tokens, {T} steps: {s['text']!r}")
        ours_logits = logits_all[at:at + T * V].reshape(T, V)
        at += T * V
        stock = model(src, dec_in)
        logits, enc, dec, cross = layer_by_layer(model, src, dec_in)
        report.compare("layer-by-layer pass == stock nn.Transformer", logits, stock)
        report.compare("logits", ours_logits, stock, rel=TOL)
        report.compare("encoder_attentions", s["encoder_attentions"], enc)
        report.compare("decoder_attentions", s["decoder_attentions"], dec)
        report.compare("cross_attentions", s["cross_attentions"], cross)
        # The output itself only where a plain greedy loop is what chose it:
        # the maps and logits above are compared whatever chose it.
        rules = [what for what, on in (("beam search", decoding.get("beam", 1) > 1),
                                      ("copy_numbers", s["output"].get("copied_numbers")),
                                      ("--no-repeat-ngram", decoding.get("no_repeat_ngram")))
                 if on]
        if rules:
            print(f"  --   output not compared: {' and '.join(rules)} chose it, not a plain greedy loop")
            continue
        theirs = greedy(model, src, T if not s["output"]["finished"] else T + 5)
        theirs = theirs[:T] if not s["output"]["finished"] else theirs
        same = theirs == out
        print(f"  {'ok  ' if same else 'FAIL'} greedy output {'matches' if same else 'differs'}: "
              f"{out} vs PyTorch {theirs}")
        report.failures += 0 if same else 1
    print(f"reference: {report.failures} mismatches")
    return 1 if report.failures else 0


# ---- one training step ----------------------------------------------------


def step(model_path, batch_path, grads_path, after_path):
    """Compare one training step with PyTorch autograd and torch.optim.AdamW.

    The C test (tests/test_train.c) wrote the model before the step, the
    batch (packed sequences, as float tensors, with the settings in the
    metadata), the gradients it computed and the parameters after its AdamW
    update.  Here the batch is padded the PyTorch way, with key padding
    masks and ignore_index for the padded labels."""
    model, meta = load_model(model_path)
    batch, bmeta = read_safetensors(batch_path)
    ours_grads, _ = read_safetensors(grads_path)
    ours_after, _ = read_safetensors(after_path)
    ids = {k: [int(x) for x in v.tolist()] for k, v in batch.items()}
    B = len(ids["src_start"]) - 1
    pad = 0

    def padded(flat, start):
        seqs = [flat[start[i]:start[i + 1]] for i in range(B)]
        width = max(len(s) for s in seqs)
        return torch.tensor([s + [pad] * (width - len(s)) for s in seqs])

    src = padded(ids["src_ids"], ids["src_start"])
    tgt = padded(ids["tgt_ids"], ids["tgt_start"])
    labels = padded(ids["labels"], ids["tgt_start"])
    model.train()
    logits = model.forward_padded(src, tgt, pad)
    loss_fn = nn.CrossEntropyLoss(ignore_index=pad, label_smoothing=float(bmeta["label_smoothing"]))
    loss = loss_fn(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
    loss.backward()
    print(f"loss: ours {float(bmeta['loss']):.7f}, PyTorch {float(loss):.7f}")
    failures = 0 if abs(float(bmeta["loss"]) - float(loss)) <= 1e-5 else 1
    worst = 0.0
    named = dict(model.named_parameters())
    for name, p in named.items():
        theirs = p.grad
        scale = max(float(theirs.abs().max()), 1e-8)
        rel = float((ours_grads[name] - theirs).abs().max()) / scale
        worst = max(worst, rel)
        if rel > 1e-4:
            print(f"  FAIL gradient of {name}: max |diff| / max |grad| = {rel:.2e}")
            failures += 1
    print(f"gradients: {len(named)} tensors, worst max|diff|/max|grad| {worst:.2e}")
    decay = [p for n, p in named.items() if p.dim() > 1]
    no_decay = [p for n, p in named.items() if p.dim() <= 1]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": float(bmeta["weight_decay"])},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=float(bmeta["lr"]), betas=(float(bmeta["beta1"]), float(bmeta["beta2"])),
        eps=float(bmeta["eps"]))
    # Use our gradients, so that the update alone is compared.
    for name, p in named.items():
        p.grad = ours_grads[name].clone()
    opt.step()
    worst = 0.0
    for name, p in named.items():
        diff = float((ours_after[name] - p.detach()).abs().max())
        worst = max(worst, diff)
        if diff > 1e-6:
            print(f"  FAIL AdamW update of {name}: max |diff| {diff:.2e}")
            failures += 1
    print(f"AdamW update: worst max|diff| {worst:.2e}")
    print(f"reference: {failures} mismatches")
    return 1 if failures else 0


# ---- committed fixtures: references for machines without torch -------------
#
# `fixtures DIR` (make fixtures) writes, for each model of FIXTURE_MODELS,
# three small safetensors files that tests/test_reference.c compares the C
# code against, so the forward pass, beam search and AdamW meet this
# reference even where python3-torch is absent:
#   NAME.safetensors       the model: seeded random weights written here
#                          (our names, our __metadata__, vocab hashes 0)
#   NAME.forward.safetensors  per case c: case.c.src, case.c.input,
#                          case.c.output (ids as float32), case.c.logits
#                          [T, V] and case.c.encoder / .decoder / .cross
#                          maps [L, H, Tq, Tk] of a teacher-forced pass
#   NAME.beam.safetensors  per case c: beam.c.src, the settings in
#                          __metadata__ (beam.c.beam, .n_best, .alpha,
#                          .limit), beam.c.scores [n], beam.c.hyp.k [T_k]
#                          token ids and beam.c.finished [n] (1 or 0)
#   NAME.step.safetensors  the batch (as in step()), the loss, and for two
#                          AdamW steps grad1.NAME / after1.NAME (torch's
#                          gradient at the model, then the parameters after
#                          torch.optim.AdamW applied it) and grad2 / after2
#                          (the gradient there, the second update)
# Everything is seeded, so the files come out byte for byte the same.

FIXTURE_MODELS = {
    # name: architecture (metadata strings), seed, LayerNorm weight range
    "pre": dict(meta=dict(d_model=8, heads=2, encoder_layers=2, decoder_layers=2, d_ff=16,
                          activation="gelu", norm="pre", max_len=12, scale_attention="true",
                          tied_output_embedding="true", source_vocab_size=13,
                          target_vocab_size=11), seed=17, ln=(0.5, 1.5)),
    # Post-norm with small LayerNorm weights: every norm's input has a small
    # variance, so an eps that is off shows (1e-3 instead of 1e-5 moves the
    # logits by far more than the tolerance).
    "post": dict(meta=dict(d_model=8, heads=2, encoder_layers=1, decoder_layers=2, d_ff=12,
                           activation="relu", norm="post", max_len=12, scale_attention="true",
                           tied_output_embedding="false", source_vocab_size=13,
                           target_vocab_size=11), seed=23, ln=(0.1, 0.3)),
}
FIXTURE_META_ORDER = ["format", "format_version", "d_model", "heads", "encoder_layers",
                      "decoder_layers", "d_ff", "activation", "norm", "max_len", "scale_attention",
                      "tied_output_embedding", "source_vocab_size", "target_vocab_size",
                      "source_vocab_hash", "target_vocab_hash"]
BOS, EOS = 2, 3


def write_safetensors(path, tensors, meta):
    """tensors: list of (name, float tensor), written as F32 in that order."""
    header, blobs, at = {}, [], 0
    for name, t in tensors:
        raw = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    header["__metadata__"] = {k: str(v) for k, v in meta.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def fixture_model(spec):
    """A Translator with seeded weights that exercise every tensor: Xavier
    matrices, N(0, 1/D) embeddings, small random biases, LayerNorm weights
    drawn from spec["ln"], and a generator bias favouring </s> (and not
    <s>) so that beam hypotheses end at different lengths."""
    meta = dict(format="translate-model", format_version="1", **spec["meta"],
                source_vocab_hash="0" * 16, target_vocab_hash="0" * 16)
    meta = {k: str(meta[k]) for k in FIXTURE_META_ORDER}
    torch.manual_seed(spec["seed"])
    model = Translator(meta)
    D = int(meta["d_model"])
    g = torch.Generator().manual_seed(spec["seed"])
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "embed" in name:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(D))
            elif "norm" in name and name.endswith("weight"):
                lo, hi = spec["ln"]
                p.copy_(lo + (hi - lo) * torch.rand(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.2 * torch.rand(p.shape, generator=g) - 0.1)
            else:
                a = math.sqrt(6.0 / (p.shape[0] + p.shape[1]))
                p.copy_((2 * torch.rand(p.shape, generator=g) - 1) * a)
        model.generator.bias[EOS] += 1.0
        model.generator.bias[BOS] -= 1.0
    model.eval()
    return model, meta


def ids_tensor(ids):
    return torch.tensor([float(i) for i in ids])


def fixture_forward(model, cases):
    out = []
    with torch.no_grad():
        for c, (src, output) in enumerate(cases):
            dec_in = [BOS] + output[:-1]
            logits, enc, dec, cross = layer_by_layer(model, src, dec_in)
            stock = model(src, dec_in)
            assert float((logits - stock).abs().max()) < 1e-5, "layer-by-layer differs from stock"
            out += [(f"case.{c}.src", ids_tensor(src)), (f"case.{c}.input", ids_tensor(dec_in)),
                    (f"case.{c}.output", ids_tensor(output)), (f"case.{c}.logits", stock),
                    (f"case.{c}.encoder", enc), (f"case.{c}.decoder", dec), (f"case.{c}.cross", cross)]
    return out


def beam_search(model, src, beam, n_best, alpha, limit):
    """Plain beam search over the stock model, written for clarity, not
    speed: every step re-runs the decoder over each hypothesis's whole
    prefix.  The same rules as model/beam.c:
      - each step, every live hypothesis is extended by every token; all
        extensions are ranked by raw score Σ log p (ties: earlier
        hypothesis, then lower token id) and the `beam` best are kept;
      - a kept extension ending in </s> leaves the beam, finished, with
        score = raw / T^alpha, T its token count including the </s>;
        the others are the next step's hypotheses, in rank order;
      - after `limit` steps the live ones leave too, unfinished (T = limit),
        but only to fill the result to n_best: they rank after every
        finished one;
      - the result is every hypothesis that left, finished first, then by
        score, the earlier to leave first on a tie; the n_best first are
        returned.
    Returns [(score, tokens, finished)] and the smallest gap between two
    ranked raw scores that decided anything (to keep the fixture away from
    near-ties that float32 rounding could flip)."""
    live = [([], 0.0)]
    ended = []  # (score, arrival, tokens, finished)
    gap = float("inf")
    for t in range(limit):
        cands = []
        for b, (toks, raw) in enumerate(live):
            lp = torch.log_softmax(model(src, [BOS] + toks)[-1].double(), dim=-1)
            for tok in range(lp.shape[0]):
                cands.append((raw + float(lp[tok]), b, tok))
        cands.sort(key=lambda c: (-c[0], c[1], c[2]))
        for i in range(min(beam, len(cands) - 1)):
            gap = min(gap, cands[i][0] - cands[i + 1][0])
        nxt = []
        for raw, b, tok in cands[:beam]:
            toks = live[b][0] + [tok]
            if tok == EOS:
                ended.append((raw / len(toks) ** alpha, len(ended), toks, True))
            else:
                nxt.append((toks, raw))
        live = nxt
        if not live:
            break
    for toks, raw in live[:max(0, n_best - len(ended))]:
        ended.append((raw / limit ** alpha, len(ended), toks, False))
    ended.sort(key=lambda e: (not e[3], -e[0], e[1]))
    for i in range(min(n_best, len(ended) - 1)):
        if ended[i][3] == ended[i + 1][3]:
            gap = min(gap, ended[i][0] - ended[i + 1][0])
    return [(e[0], e[2], e[3]) for e in ended[:n_best]], gap


def fixture_beam(model, cases):
    out, meta = [], {}
    with torch.no_grad():
        for c, (src, beam, n_best, alpha, limit) in enumerate(cases):
            best, gap = beam_search(model, src, beam, n_best, alpha, limit)
            if gap < 1e-4:
                sys.exit(f"beam case {c}: a near-tie ({gap:.1e}) would make the fixture fragile")
            print(f"  beam case {c}: beam {beam}, alpha {alpha}: "
                  + "; ".join(f"{s:.4f} {toks}{'' if fin else ' (unfinished)'}" for s, toks, fin in best))
            meta.update({f"beam.{c}.beam": beam, f"beam.{c}.n_best": n_best,
                         f"beam.{c}.alpha": alpha, f"beam.{c}.limit": limit})
            out += [(f"beam.{c}.src", ids_tensor(src)),
                    (f"beam.{c}.scores", torch.tensor([s for s, _, _ in best], dtype=torch.float64)),
                    (f"beam.{c}.finished", torch.tensor([1.0 if f else 0.0 for _, _, f in best]))]
            out += [(f"beam.{c}.hyp.{k}", ids_tensor(toks)) for k, (_, toks, _) in enumerate(best)]
    meta["beam.cases"] = len(cases)
    return out, meta


STEP_SRC = [[4, 9, 12, 7, 5], [6, 8, 10]]
STEP_TGT = [[5, 10, 7], [6, 7, 8, 9, 4]]
STEP_SETTINGS = dict(label_smoothing=0.1, lr=1e-2, beta1=0.9, beta2=0.98, eps=1e-9, weight_decay=0.01)


def fixture_step(model):
    """Two training steps on one packed batch of two pairs (the layout of
    tests/test_train.c), padded the PyTorch way for the loss."""
    s = STEP_SETTINGS
    src_ids = sum(STEP_SRC, [])
    tgt_in = sum([[BOS] + t for t in STEP_TGT], [])
    labels = sum([t + [EOS] for t in STEP_TGT], [])
    src_start = [0, len(STEP_SRC[0]), len(src_ids)]
    tgt_start = [0, len(STEP_TGT[0]) + 1, len(tgt_in)]
    pad = 0

    def padded(seqs):
        width = max(len(x) for x in seqs)
        return torch.tensor([x + [pad] * (width - len(x)) for x in seqs])

    src = padded(STEP_SRC)
    tgt = padded([[BOS] + t for t in STEP_TGT])
    lab = padded([t + [EOS] for t in STEP_TGT])
    named = dict(model.named_parameters())
    decay = [p for n, p in named.items() if p.dim() > 1]
    no_decay = [p for n, p in named.items() if p.dim() <= 1]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": s["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"])
    model.train()
    out, losses = [], []
    for k in (1, 2):
        opt.zero_grad()
        logits = model.forward_padded(src, tgt, pad)
        loss = nn.CrossEntropyLoss(ignore_index=pad, label_smoothing=s["label_smoothing"])(
            logits.reshape(-1, logits.shape[-1]), lab.reshape(-1))
        loss.backward()
        losses.append(float(loss))
        out += [(f"grad{k}.{n}", p.grad.clone()) for n, p in named.items()]
        opt.step()
        out += [(f"after{k}.{n}", p.detach().clone()) for n, p in named.items()]
    model.eval()
    batch = [("src_ids", ids_tensor(src_ids)), ("src_start", ids_tensor(src_start)),
             ("tgt_ids", ids_tensor(tgt_in)), ("tgt_start", ids_tensor(tgt_start)),
             ("labels", ids_tensor(labels))]
    meta = {k: repr(v) for k, v in s.items()}
    meta.update(loss1=repr(losses[0]), loss2=repr(losses[1]))
    print(f"  step: loss {losses[0]:.6f}, then {losses[1]:.6f}")
    return batch + out, meta


FORWARD_CASES = [([4, 5, 6, 7, 8], [5, 9, 6, 3]), ([12, 1, 9], [10, 4, 4, 8, 7, 3]),
                 ([7], [9, 10])]
BEAM_CASES = [([4, 5, 6, 7, 8], 4, 4, 0.6, 10), ([12, 1, 9], 3, 3, 1.0, 10),
              ([9, 8, 4, 11], 5, 2, 0.0, 8), ([6, 7], 1, 1, 0.6, 10), ([10, 5, 5, 12], 4, 4, 2.0, 6),
              ([7, 3, 9], 4, 4, 1.0, 2)]  # the last: fewer than 4 end by the limit, unfinished ones fill


def fixtures(outdir):
    import os
    torch.set_num_threads(1)
    os.makedirs(outdir, exist_ok=True)
    for name, spec in FIXTURE_MODELS.items():
        print(f"{name}:")
        model, meta = fixture_model(spec)
        write_safetensors(f"{outdir}/{name}.safetensors", list(model.state_dict().items()), meta)
        write_safetensors(f"{outdir}/{name}.forward.safetensors", fixture_forward(model, FORWARD_CASES),
                          {"cases": len(FORWARD_CASES)})
        tensors, bmeta = fixture_beam(model, BEAM_CASES)
        write_safetensors(f"{outdir}/{name}.beam.safetensors", tensors, bmeta)
        tensors, smeta = fixture_step(model)
        write_safetensors(f"{outdir}/{name}.step.safetensors", tensors, smeta)
    return 0


class Unusable(Exception):
    """An input that cannot be checked: status 2, one line."""


def main(argv):
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    if len(argv) == 6 and argv[1] == "step":
        return step(*argv[2:6])
    if len(argv) == 3 and argv[1] == "fixtures":
        return fixtures(argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (Unusable, OSError, ValueError, KeyError) as e:  # (json's errors are ValueErrors)
        print(f"reference.py: {e}", file=sys.stderr)
        sys.exit(2)
