"""The ``gpu`` scale of the Focus and LaS experiments, run on a CPU at tiny sizes.

No GPU is lent to the test suite: these runs check that the configuration is complete and
that every code path it takes (Table 6's recipe at 1K/4K, Table 4's model with batch norm
post-norm) trains, evaluates and summarises; the sizes are overridden down to seconds.
"""

from __future__ import annotations

import pytest

from lds_toolkit.experiments import get_experiment, reproduce
from lds_toolkit.experiments.runner import build_config

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_gpu_scale_is_defined_only_where_declared():
    for name in ("assoc-recall", "las-ablation"):
        exp = get_experiment(name)
        assert "gpu" in exp.scales
        assert build_config(exp, scale="gpu")["scale"] == "gpu"
    with pytest.raises(ValueError, match="no 'gpu' scale"):
        build_config(get_experiment("cloze"), scale="gpu")
    with pytest.raises(ValueError, match="no 'gpu' scale"):
        build_config(get_experiment("lengen-region-a"), scale="gpu")


def test_las_gpu_scale_uses_table4_model_and_normalisation(tmp_path):
    cfg = build_config(get_experiment("las-ablation"), scale="gpu")
    assert (cfg["d_model"], cfg["n_layers"], cfg["batch_size"]) == (256, 6, 50)
    assert (cfg["norm"], cfg["prenorm"]) == ("batch", False)
    tiny = {"n_train": 24, "n_valid": 8, "n_test": 8, "min_length": 16, "max_length": 40,
            "d_model": 16, "n_layers": 1, "max_steps": 4, "batch_size": 4, "eval_every": 2,
            "warmup": 1}
    res = reproduce("las-ablation", scale="gpu", seeds=1, overrides=tiny, out=tmp_path,
                    progress=False)
    assert res.summary["config"]["scale"] == "gpu"
    assert set(res.summary["accuracy"]) == {"l-only", "las"}


def test_assoc_recall_gpu_scale_runs_tiny(tmp_path):
    cfg = build_config(get_experiment("assoc-recall"), scale="gpu")
    assert cfg["train"]["1024"]["max_steps"] == 12500 and cfg["lr"] == 1e-4
    tiny = {"lengths": [64], "models_at": {"64": ["focus", "focus-h"]},
            "train": {"64": {"max_steps": 3, "batch_size": 4, "eval_every": 2}},
            "n_train": 16, "n_valid": 8, "n_test": 8, "warmup": 1}
    res = reproduce("assoc-recall", scale="gpu", seeds=1, overrides=tiny, out=tmp_path,
                    progress=False)
    assert res.summary["config"]["scale"] == "gpu"
    assert set(res.summary["accuracy"]) >= {"focus", "focus-h"}
