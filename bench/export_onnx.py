"""Export all-MiniLM-L6-v2 (a BERT encoder) to ONNX, offline, for bench/embed_reference.py.

What it does
    Reads MODEL_DIR/config.json and MODEL_DIR/model.safetensors (f32; tensor names with or
    without a `bert.` prefix) and builds, with `onnx.helper` only, the graph that
    sentence-transformers' all-MiniLM-L6-v2 runs:

        embeddings (word + absolute position + token type, LayerNorm)
        -> N x [self-attention with the extended mask (1 - mask) * -large added to the scores,
                dense + residual + LayerNorm, dense + erf-GELU, dense + residual + LayerNorm]
        -> mean over real tokens (attention-mask weighted) -> L2 normalization

    Inputs  input_ids, attention_mask, token_type_ids: int64 [batch, seq] (both dynamic).
    Output  sentence_embedding: float32 [batch, hidden].

    It writes OUT_DIR/model.onnx (f32, default-domain opset 17 ops only: Gather, Add, Mul,
    Div, Sub, MatMul, Reshape, Transpose, Softmax, Erf, LayerNormalization, ReduceSum, ...)
    and OUT_DIR/model_q8.onnx, an 8-bit copy made with
    onnxruntime.quantization.quantize_dynamic (QInt8 weights, MatMul ops only), as
    transformers.js and Optimum ship 8-bit models. Each file's metadata has
    `cairn.precision` = f32 | q8, which embed_reference.py reads.

Why
    The project needs a reference embedding runtime (onnxruntime) to benchmark cairn's candle
    embedder against. The usual route (sentence-transformers' / Optimum's ONNX export) needs
    torch, whose wheel here would pull CUDA, and the Hub's ready-made ONNX files cannot be
    downloaded on this machine. So the export is made here, offline, from the same weights
    cairn loads, op for op as the PyTorch model computes it.

Set-up (once)
    python3 -m venv target/bench-venv
    target/bench-venv/bin/pip install onnx onnxruntime tokenizers safetensors numpy

Usage
    target/bench-venv/bin/python bench/export_onnx.py MODEL_DIR OUT_DIR
    e.g. target/bench-venv/bin/python bench/export_onnx.py models/all-MiniLM-L6-v2 target/onnx
"""

import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

OPSET = 17
# As transformers' BertModel: the extended mask puts the float32 minimum on padded keys.
MASK_VALUE = float(np.finfo(np.float32).min)


class Graph:
    """A small builder: named nodes and initializers, unique names generated on demand."""

    def __init__(self):
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, hint):
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, hint, array):
        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, hint=None, **attrs):
        out = self.name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out + "_node", **attrs))
        return out


def load_weights(model_dir):
    raw = load_file(os.path.join(model_dir, "model.safetensors"))
    weights = {}
    for key, value in raw.items():
        if key.startswith("bert."):
            key = key[len("bert."):]
        weights[key] = value
    return weights


def build(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    layers = config["num_hidden_layers"]
    eps = float(config.get("layer_norm_eps", 1e-12))
    act = config.get("hidden_act", "gelu")
    if act != "gelu":
        raise SystemExit(f"hidden_act {act!r}: only erf GELU ('gelu') is built here")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise SystemExit("only absolute position embeddings are built here")

    w = load_weights(model_dir)

    def param(key):
        if key not in w:
            raise SystemExit(f"model.safetensors has no tensor {key!r}")
        return w[key].astype(np.float32)

    g = Graph()

    def linear(x, prefix, hint):
        # PyTorch's Linear keeps weight as [out, in]; MatMul wants [in, out].
        weight = g.const(f"{hint}_w", np.ascontiguousarray(param(prefix + ".weight").T))
        bias = g.const(f"{hint}_b", param(prefix + ".bias"))
        return g.op("Add", [g.op("MatMul", [x, weight], hint + "_mm"), bias], hint)

    def layer_norm(x, prefix, hint):
        scale = g.const(f"{hint}_g", param(prefix + ".weight"))
        bias = g.const(f"{hint}_b", param(prefix + ".bias"))
        return g.op("LayerNormalization", [x, scale, bias], hint, axis=-1, epsilon=eps)

    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]

    # Embeddings.
    word = g.op("Gather", [g.const("word_emb", param("embeddings.word_embeddings.weight")), "input_ids"], "word", axis=0)
    seq_len = g.op(
        "Gather", [g.op("Shape", ["input_ids"], "ids_shape"), g.const("one", np.array(1, np.int64))], "seq_len", axis=0
    )
    positions = g.op(
        "Range", [g.const("zero", np.array(0, np.int64)), seq_len, g.const("one", np.array(1, np.int64))], "positions"
    )
    pos = g.op("Gather", [g.const("pos_emb", param("embeddings.position_embeddings.weight")), positions], "pos", axis=0)
    types = g.op(
        "Gather", [g.const("type_emb", param("embeddings.token_type_embeddings.weight")), "token_type_ids"], "types", axis=0
    )
    x = g.op("Add", [g.op("Add", [word, pos], "word_pos"), types], "emb_sum")
    x = layer_norm(x, "embeddings.LayerNorm", "emb_ln")

    # Masks: float mask [B, S]; extended mask [B, 1, 1, S] = (1 - mask) * MASK_VALUE.
    mask = g.op("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    mask4 = g.op("Unsqueeze", [mask, g.const("axes12", np.array([1, 2], np.int64))], "mask4")
    ext = g.op(
        "Mul",
        [g.op("Sub", [g.const("f_one", np.array(1.0, np.float32)), mask4], "inv_mask"),
         g.const("mask_value", np.array(MASK_VALUE, np.float32))],
        "ext_mask",
    )

    split_shape = g.const("split_shape", np.array([0, 0, heads, head_dim], np.int64))
    merge_shape = g.const("merge_shape", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", np.array(1.0 / math.sqrt(head_dim), np.float32))
    sqrt2 = g.const("sqrt2", np.array(math.sqrt(2.0), np.float32))
    half = g.const("half", np.array(0.5, np.float32))
    f_one = g.const("f_one", np.array(1.0, np.float32))

    for i in range(layers):
        p = f"encoder.layer.{i}"
        h = f"l{i}"
        q = linear(x, f"{p}.attention.self.query", f"{h}_q")
        k = linear(x, f"{p}.attention.self.key", f"{h}_k")
        v = linear(x, f"{p}.attention.self.value", f"{h}_v")
        # [B, S, H] -> [B, heads, S, head_dim]; K as [B, heads, head_dim, S].
        q = g.op("Transpose", [g.op("Reshape", [q, split_shape], f"{h}_q4")], f"{h}_qt", perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [k, split_shape], f"{h}_k4")], f"{h}_kt", perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [v, split_shape], f"{h}_v4")], f"{h}_vt", perm=[0, 2, 1, 3])
        scores = g.op("Mul", [g.op("MatMul", [q, k], f"{h}_qk"), scale], f"{h}_scaled")
        scores = g.op("Add", [scores, ext], f"{h}_masked")
        probs = g.op("Softmax", [scores], f"{h}_probs", axis=-1)
        ctx = g.op("MatMul", [probs, v], f"{h}_ctx")
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], f"{h}_ctxt", perm=[0, 2, 1, 3]), merge_shape], f"{h}_ctx3")
        attn = linear(ctx, f"{p}.attention.output.dense", f"{h}_ao")
        x = layer_norm(g.op("Add", [attn, x], f"{h}_ares"), f"{p}.attention.output.LayerNorm", f"{h}_aln")
        inter = linear(x, f"{p}.intermediate.dense", f"{h}_i")
        # GELU(x) = 0.5 * x * (1 + erf(x / sqrt(2))), as torch's default (exact) GELU.
        erf = g.op("Erf", [g.op("Div", [inter, sqrt2], f"{h}_gdiv")], f"{h}_gerf")
        gelu = g.op("Mul", [g.op("Mul", [inter, g.op("Add", [erf, f_one], f"{h}_g1")], f"{h}_gx"), half], f"{h}_gelu")
        out = linear(gelu, f"{p}.output.dense", f"{h}_o")
        x = layer_norm(g.op("Add", [out, x], f"{h}_ores"), f"{p}.output.LayerNorm", f"{h}_oln")

    # Mean pooling over real tokens, as sentence-transformers' Pooling(mean): sum(h * m) / max(sum(m), 1e-9).
    mask3 = g.op("Unsqueeze", [mask, g.const("axis2", np.array([2], np.int64))], "mask3")
    axis1 = g.const("axis1", np.array([1], np.int64))
    summed = g.op("ReduceSum", [g.op("Mul", [x, mask3], "masked_hidden"), axis1], "summed", keepdims=0)
    counts = g.op("ReduceSum", [mask3, axis1], "counts", keepdims=0)
    counts = g.op("Max", [counts, g.const("count_min", np.array(1e-9, np.float32))], "counts_min")
    mean = g.op("Div", [summed, counts], "mean")
    # Normalize(): F.normalize(p=2, dim=1), i.e. x / max(||x||, 1e-12).
    norm = g.op("ReduceL2", [mean], "norm", axes=[1], keepdims=1)
    norm = g.op("Max", [norm, g.const("norm_min", np.array(1e-12, np.float32))], "norm_min")
    emb = g.op("Div", [mean, norm], "embedding")
    g.nodes.append(helper.make_node("Identity", [emb], ["sentence_embedding"], name="sentence_embedding_node"))

    outputs = [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", hidden])]
    graph = helper.make_graph(g.nodes, "bert_sentence_embedding", inputs, outputs, g.inits)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="cairn bench/export_onnx.py",
        doc_string=f"BERT sentence embedding from {os.path.abspath(model_dir)}",
    )
    model.ir_version = 8  # readable by any onnxruntime >= 1.10
    onnx.checker.check_model(model)
    return model


def set_precision(model, precision):
    for prop in list(model.metadata_props):
        if prop.key == "cairn.precision":
            model.metadata_props.remove(prop)
    entry = model.metadata_props.add()
    entry.key = "cairn.precision"
    entry.value = precision


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    model_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)

    model = build(model_dir)
    set_precision(model, "f32")
    f32_path = os.path.join(out_dir, "model.onnx")
    onnx.save(model, f32_path)
    print(f"wrote {f32_path} ({os.path.getsize(f32_path) / 1e6:.1f} MB)")

    from onnxruntime.quantization import QuantType, quantize_dynamic

    q8_path = os.path.join(out_dir, "model_q8.onnx")
    quantize_dynamic(f32_path, q8_path, op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8)
    q8 = onnx.load(q8_path)
    set_precision(q8, "q8")
    onnx.save(q8, q8_path)
    ops = {}
    for node in q8.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    print(f"wrote {q8_path} ({os.path.getsize(q8_path) / 1e6:.1f} MB; "
          f"MatMulInteger {ops.get('MatMulInteger', 0)}, float MatMul left {ops.get('MatMul', 0)})")


if __name__ == "__main__":
    main()
