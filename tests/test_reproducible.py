"""Same seed and versions, same bytes: two separate processes write identical bundles."""

import hashlib
import os
import subprocess
import sys


def _digest_tree(root):
    h = hashlib.sha256()
    files = sorted(p for p in root.rglob("*") if p.is_file())
    for p in files:
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest(), len(files)


def _generate(out, seed, hashseed):
    env = dict(os.environ, PYTHONHASHSEED=str(hashseed))
    subprocess.run([sys.executable, "-m", "conformance.cli", "generate", "--ops", "LayerNormalization,BatchNormalization",
                    "--seed", str(seed), "--out", str(out)], check=True, env=env, capture_output=True)


def test_two_processes_write_byte_identical_bundles(tmp_path):
    _generate(tmp_path / "a", 0, 1)
    _generate(tmp_path / "b", 0, 2)
    da, na = _digest_tree(tmp_path / "a")
    db, nb = _digest_tree(tmp_path / "b")
    assert na == nb and na > 3000
    assert da == db
