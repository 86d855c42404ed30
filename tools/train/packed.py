"""Several clips through the reference DiT in one forward, for training.

ComfyUI's MiniMaxH3Model._forward takes one clip: it lays the clip's text,
condition and target rows out as one packed sequence and runs the token
refiner, the blocks and the final layer on it. A clip of the demo model is
a few hundred rows, so one clip per forward leaves the GPU idle between
kernel launches (about 7 steps a second, whatever the model's size).

`velocity` runs the reference _forward once per clip with three recorders
in place of its heavy parts, then runs those parts once for all the clips:

  1. per clip, the reference _forward itself builds everything from the
     inputs (patchified rows, condition rows and their noise, the text's
     condition_proj, the time embedding, the RoPE table, the modulation
     segments, the target segments); the token refiner is recorded and
     answered with zeros, the blocks (through _forward's own
     patches_replace hook) with their input unchanged, the final layer
     with zeros;
  2. the recorded pieces are concatenated: the clips' text rows through
     the token refiner at once, the clips' sequences (their text rows
     replaced by the refined ones) through the blocks at once, each
     attention masked block-diagonally so no clip sees another's rows;
     the final layer and the unpatchify per clip, as _forward does.

Declared shims, beyond demo.py's: the attention takes the packed clips
as a padded batch with their padding masked (ComfyUI's is unmasked, one
clip per sequence), and the modulation
helpers take a per-row index into the modulation table (each row's
segment's table row: the same numbers _forward's segment lists pick, in
one gather rather than a kernel per segment). test_packed.py checks that
each clip's velocity matches the reference _forward's alone.
"""

import math

import torch
import torch.nn.functional as F

import demo


class _Packing:
    """The packed phase's clips as a padded batch; None: _forward's own
    one-clip attention. pos [B, L] indexes each clip's rows in the packed
    sequence (its padding repeats row 0), valid [B, L] marks its own rows."""
    current = None

    def __init__(self, lengths, device):
        n = max(lengths)
        starts = torch.tensor([0] + lengths[:-1], device=device).cumsum(0)
        ar = torch.arange(n, device=device)
        self.valid = ar[None, :] < torch.tensor(lengths, device=device)[:, None]
        self.pos = torch.where(self.valid, starts[:, None] + ar[None, :], torch.zeros_like(ar)[None, :])


def _attention(q, k, v, heads, mask=None, skip_reshape=False, **_):
    """q, k, v [1, heads, S, d] -> [1, S, heads*d]. Packed, each clip
    attends to its own rows alone: the rows are gathered into a batch of
    clips padded to the longest, the padding masked as keys (a dense
    block-diagonal mask over the whole sequence would cost the square of
    the batch in attention work)."""
    pk = _Packing.current
    m = None
    if pk is not None:
        q, k, v = (x[0][:, pk.pos].transpose(0, 1) for x in (q, k, v))  # [B, heads, L, d]
        m = pk.valid[:, None, None, :]
    if hasattr(F, "scaled_dot_product_attention"):
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    else:  # torch < 2.0 (the CPU checks): explicit softmax attention
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if m is not None:
            s = s.masked_fill(~m, float("-inf"))
        o = s.softmax(-1) @ v
    if pk is not None:
        o = o.transpose(0, 1)[:, pk.valid][None]  # back to [1, heads, S, d]
    b, h, s_, d = o.shape
    return o.transpose(1, 2).reshape(b, s_, h * d)


def _mod_scale_shift(h, shift, scale, segments):
    if torch.is_tensor(segments):
        return h * (1.0 + scale[segments].to(h.dtype)) + shift[segments].to(h.dtype)
    return demo._mod_scale_shift(h, shift, scale, segments)


def _mod_gate(x, gate, other, segments):
    if torch.is_tensor(segments):
        return x + other * gate[segments].to(x.dtype)
    return demo._mod_gate(x, gate, other, segments)


def install(ref):
    """The shims above on the loaded reference module (demo.dit_training_shims
    calls it last, so loading a DiT keeps them)."""
    ref.optimized_attention = _attention
    ref._mod_scale_shift = _mod_scale_shift
    ref._mod_gate = _mod_gate


def _segment_index(segments, row_offset, device):
    """_forward's (start, stop, table row) segments -> one row index per row."""
    rows = torch.tensor([row + row_offset for _, _, row in segments])
    return rows.repeat_interleave(torch.tensor([b - a for a, b, _ in segments])).to(device)


def _record(model, clip):
    """Phase 1: the reference _forward on one clip, its heavy parts recorded."""
    xv, xa, ts, states, payload = clip
    rec = {}

    def refiner(x, transformer_options={}):
        rec["text"] = x
        return torch.zeros_like(x)

    def first_block(args, extra):
        rec.update(h=args["img"], t_emb=args["t_emb"], segments=args["mod_segments"], rope=args["rope_freqs"])
        return {"img": args["img"]}

    def final(x, t_emb, video_seg, audio_seg):
        rec.update(video_seg=video_seg, audio_seg=audio_seg)
        fl = model.final_layer
        return (x.new_zeros(video_seg[1] - video_seg[0], fl.video_out.out_features),
                x.new_zeros(audio_seg[1] - audio_seg[0], fl.audio_out.out_features))

    skip = {("double_block", i): (first_block if i == 0 else (lambda args, extra: {"img": args["img"]}))
            for i in range(len(model.blocks))}
    model.token_refiner.forward, model.final_layer.forward = refiner, final
    try:
        model._forward([xv, xa], ts, states[None], transformer_options={"patches_replace": {"dit": skip}},
                       minimax_payload=payload)
    finally:
        del model.token_refiner.forward, model.final_layer.forward
    assert rec["segments"][0][0] == 0 and rec["text"].shape[0] <= rec["segments"][-1][1]
    return rec


def velocity(model, ref, clips):
    """clips: [(noisy video [1,C,T,H,W], noisy audio [1,C,2,T], timestep [1],
    Qwen states [L, D], payload)] -> per clip [-v_video, -v_audio], as
    _forward returns them."""
    recs = [_record(model, c) for c in clips]
    dev = recs[0]["h"].device
    text_len = [r["text"].shape[0] for r in recs]
    _Packing.current = _Packing(text_len, dev)
    try:
        refined = model.token_refiner(torch.cat([r["text"] for r in recs]))
        hs, idx, t_embs, off_t = [], [], [], 0
        for r, piece in zip(recs, refined.split(text_len)):
            hs.append(torch.cat([piece, r["h"][piece.shape[0]:]]))
            idx.append(_segment_index(r["segments"], 3 * off_t, dev))
            t_embs.append(r["t_emb"])
            off_t += r["t_emb"].shape[0]
        seq = [h.shape[0] for h in hs]
        _Packing.current = _Packing(seq, dev)
        h, t_emb, idx = torch.cat(hs), torch.cat(t_embs), torch.cat(idx)
        rope = torch.cat([r["rope"] for r in recs], dim=1)
        for block in model.blocks:
            h = block(h, t_emb, idx, rope)
    finally:
        _Packing.current = None
    outs = []
    for r, hh, c in zip(recs, h.split(seq), clips):
        v, a = model.final_layer(hh, r["t_emb"], r["video_seg"], r["audio_seg"])
        _, ch, t, lh, lw = c[0].shape
        vo = ref.unpatchify_video(v, t, lh // 2, lw // 2, model.latents_dim, model.patch_size)
        outs.append([-vo.to(c[0].dtype), -ref.unpack_audio(a).to(c[1].dtype)])
    return outs
