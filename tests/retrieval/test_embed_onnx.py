"""The ONNX Runtime embedder: sentence-transformers' pooling read from the model's config, the export built once and
atomically under the home (checksum record), the same vectors as torch (fp32) and close ones (int8), clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from equimind.app.services import build_embedder
from equimind.core.config import EmbedBackend, Settings
from equimind.core.errors import ConfigError
from equimind.core.protocols import Embedder
from equimind.embedding.embed import SentenceTransformerEmbedder, default_model_path
from equimind.embedding.embed_onnx import OnnxEmbedder, PoolingSpec, PoolMode, pool, read_pooling
from equimind.embedding.onnx_export import RECORD, OnnxPrecision, ensure_export, verified
from equimind.ingest.embed_format import EmbeddingStamp, EmbedFormat, mismatch

TEXTS = ["Quarterly revenue increased 12% on data center demand.",
         "  Export controls on shipments to China could hurt margins and supply chain commitments. " * 20,
         "The cat sat on the mat", "x", ""]


def _st_dir(root: Path, modules: list[dict[str, str]], pooling: dict[str, object]) -> Path:
    root.mkdir(parents=True)
    (root / "modules.json").write_text(json.dumps(modules))
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (root / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    return root


MODULES = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
           {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]


def test_pooling_is_read_from_the_bundled_models_own_config() -> None:
    assert read_pooling(default_model_path()) == PoolingSpec(mode=PoolMode.MEAN, normalize=True, max_seq_length=256)


def test_cls_pooling_without_normalize_is_read_and_unsupported_configs_are_config_errors(tmp_path: Path) -> None:
    cls = _st_dir(tmp_path / "cls", MODULES, {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    assert read_pooling(cls) == PoolingSpec(mode=PoolMode.CLS, normalize=False, max_seq_length=128)
    two = _st_dir(tmp_path / "two", MODULES, {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": True})
    with pytest.raises(ConfigError, match=r"exactly one of mean / cls / max.*EQUIMIND_EMBED_BACKEND=torch"):
        read_pooling(two)
    sqrt = _st_dir(tmp_path / "sqrt", MODULES, {"pooling_mode_mean_sqrt_len_tokens": True})
    with pytest.raises(ConfigError, match="pooling_mode_mean_sqrt_len_tokens"):
        read_pooling(sqrt)
    dense = [*MODULES, {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}]
    with pytest.raises(ConfigError, match="Transformer -> Pooling"):
        read_pooling(_st_dir(tmp_path / "dense", dense, {"pooling_mode_mean_tokens": True}))
    with pytest.raises(ConfigError, match="cannot read"):
        read_pooling(tmp_path / "absent")


def test_pooling_ignores_padded_tokens() -> None:
    hidden = np.array([[[1.0, 2.0], [3.0, 4.0], [100.0, -100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])
    assert np.allclose(pool(hidden, mask, PoolMode.MEAN), [[2.0, 3.0]])
    assert np.allclose(pool(hidden, mask, PoolMode.MAX), [[3.0, 4.0]])
    assert np.allclose(pool(hidden, mask, PoolMode.CLS), [[1.0, 2.0]])


def test_backend_setting_is_parsed_and_an_unknown_one_names_the_valid_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EQUIMIND_ONNX_CACHE_DIR", raising=False)  # the session's shared cache (conftest)
    assert Settings(home=tmp_path, embed_backend="onnx-int8").embed_backend is EmbedBackend.ONNX_INT8
    assert Settings(home=tmp_path).embed_backend is EmbedBackend.ONNX  # the default (ADR 0008)
    assert Settings(home=tmp_path).onnx_path == tmp_path / "models" / "onnx"
    assert Settings(home=tmp_path, onnx_cache_dir=tmp_path / "x").onnx_path == tmp_path / "x"
    with pytest.raises(ValueError, match=r"torch.*onnx.*onnx-int8"):
        Settings(home=tmp_path, embed_backend="tensorrt")


def test_onnx_backend_of_a_model_that_is_no_local_directory_is_a_config_error(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, embed_backend="onnx", embed_model="org/not-here")
    with pytest.raises(ConfigError, match=r"local model directory.*equimind models pull org/not-here"):
        build_embedder(settings)


def test_missing_onnxruntime_is_a_config_error_naming_the_fix_and_builds_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` raises ImportError
    with pytest.raises(ConfigError, match=r"pip install onnxruntime==.*EQUIMIND_EMBED_BACKEND=torch"):
        OnnxEmbedder(default_model_path(), tmp_path, model_name="all-MiniLM-L6-v2")
    assert not any(tmp_path.iterdir())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[OnnxPrecision, OnnxEmbedder]]:
    cache = tmp_path_factory.mktemp("onnx-cache")
    return cache, {p: OnnxEmbedder(default_model_path(), cache, model_name="all-MiniLM-L6-v2", precision=p,
                                   batch_size=2) for p in OnnxPrecision}


@pytest.mark.slow
def test_fp32_gives_the_torch_vectors_and_int8_close_ones(
        built: tuple[Path, dict[OnnxPrecision, OnnxEmbedder]]) -> None:
    _, emb = built
    ref = SentenceTransformerEmbedder(batch_size=64).embed(TEXTS)
    for e in emb.values():
        assert isinstance(e, Embedder) and e.dim == 384
    fp32, int8 = emb[OnnxPrecision.FP32].embed(TEXTS), emb[OnnxPrecision.INT8].embed(TEXTS)
    assert fp32.shape == (len(TEXTS), 384) and fp32.dtype == np.float32
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    assert np.min(np.sum(fp32 * ref, axis=1)) > 0.99999  # batch of 2 (length-sorted) vs torch's batch of 64
    cos8 = np.sum(int8 * ref, axis=1)
    assert 0.97 < float(cos8.mean()) < 0.99999  # quantised: close, and not the fp32 graph by mistake
    assert np.allclose(emb[OnnxPrecision.FP32].embed_query(TEXTS[0]), ref[0], atol=1e-5)
    assert emb[OnnxPrecision.FP32].embed([]).shape == (0, 384)


@pytest.mark.slow
def test_fp32_shares_the_torch_stamp_and_int8_has_its_own(built: tuple[Path, dict[OnnxPrecision, OnnxEmbedder]]
                                                           ) -> None:
    _, emb = built
    assert emb[OnnxPrecision.FP32].name == "all-MiniLM-L6-v2"  # the same vectors (test above): one kind of store
    assert emb[OnnxPrecision.INT8].name == "all-MiniLM-L6-v2+onnx-int8"
    torch_store = EmbeddingStamp(embedder="all-MiniLM-L6-v2", text_format=EmbedFormat.TITLE_SECTION_V1)
    fmt = EmbedFormat.TITLE_SECTION_V1
    assert mismatch(torch_store, EmbeddingStamp(embedder=emb[OnnxPrecision.FP32].name, text_format=fmt)) is None
    assert mismatch(torch_store, EmbeddingStamp(embedder=emb[OnnxPrecision.INT8].name, text_format=fmt))


@pytest.mark.slow
def test_export_is_built_once_with_a_checksum_record_and_a_damaged_file_is_rebuilt(
        built: tuple[Path, dict[OnnxPrecision, OnnxEmbedder]]) -> None:
    cache, emb = built
    folder = emb[OnnxPrecision.INT8].onnx_path.parent
    assert folder.parent == cache and folder.name.startswith("all-MiniLM-L6-v2-")
    record = json.loads((folder / RECORD).read_text())
    assert set(record["files"]) == {"model.onnx", "model-int8.onnx"}
    assert not list(folder.parent.glob(".partial-*"))  # no half-built folder left behind
    mtimes = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    again = ensure_export(default_model_path(), cache, "all-MiniLM-L6-v2", OnnxPrecision.INT8)
    assert again == emb[OnnxPrecision.INT8].onnx_path
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == mtimes  # nothing rebuilt
    int8 = folder / "model-int8.onnx"
    int8.write_bytes(int8.read_bytes()[:-10] + b"0123456789")  # same size, other bytes
    assert verified(folder, OnnxPrecision.INT8) is None and verified(folder, OnnxPrecision.FP32) is not None
    rebuilt = ensure_export(default_model_path(), cache, "all-MiniLM-L6-v2", OnnxPrecision.INT8)
    assert verified(folder, OnnxPrecision.INT8) == rebuilt
    assert (folder / "model.onnx").stat().st_mtime_ns == mtimes["model.onnx"]  # fp32 reused, not re-exported


@pytest.mark.slow
def test_an_export_that_fails_is_a_config_error_and_leaves_no_file(tmp_path: Path) -> None:
    model = _st_dir(tmp_path / "broken", MODULES, {"pooling_mode_mean_tokens": True})
    (model / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": "not a number"}))
    (model / "tokenizer.json").write_text((default_model_path() / "tokenizer.json").read_text())
    with pytest.raises(ConfigError, match=r"(?s)could not export .*EQUIMIND_EMBED_BACKEND=torch"):
        OnnxEmbedder(model, tmp_path / "cache", model_name="broken")
    assert not list((tmp_path / "cache").rglob("*.onnx")) and not list((tmp_path / "cache").rglob(".partial-*"))


@pytest.mark.slow
def test_the_setting_picks_the_backend_and_reuses_the_homes_export(
        built: tuple[Path, dict[OnnxPrecision, OnnxEmbedder]], tmp_path: Path) -> None:
    cache, emb = built
    record = (emb[OnnxPrecision.INT8].onnx_path.parent / RECORD).stat().st_mtime_ns
    e = build_embedder(Settings(home=tmp_path, onnx_cache_dir=cache, embed_backend="onnx-int8", embed_batch_size=8))
    assert isinstance(e, OnnxEmbedder) and e.name == "all-MiniLM-L6-v2+onnx-int8" and e.batch_size == 8
    assert e.onnx_path == emb[OnnxPrecision.INT8].onnx_path
    assert (e.onnx_path.parent / RECORD).stat().st_mtime_ns == record  # found, verified, not rebuilt
    assert isinstance(build_embedder(Settings(home=tmp_path, embed_backend="torch")), SentenceTransformerEmbedder)
    fp32 = build_embedder(Settings(home=tmp_path, onnx_cache_dir=cache))  # the default backend
    assert isinstance(fp32, OnnxEmbedder) and fp32.onnx_path == emb[OnnxPrecision.FP32].onnx_path


def test_importing_the_wiring_loads_no_runtime() -> None:
    root = Path(__file__).resolve().parents[2]
    code = ("import sys; import equimind.app.services, equimind.embedding.embed_onnx; "
            "print([m for m in sys.modules if m.split('.')[0] in ('onnxruntime', 'onnx', 'tokenizers', 'torch')])")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(root)},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
