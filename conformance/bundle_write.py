"""Writing bundles (:mod:`conformance.bundle` reads them; its docstring gives the layout): a suite's
cases (:func:`write_bundle`), the cases of a generation streamed to disk an operator at a time
(:func:`write_generated_bundle`, on a process pool or a Dask cluster), one zip archive of a bundle
directory (:func:`write_archive`), and the output directory's preparation."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from .bundle import FORMAT, INDEX_CACHE, BundleError, _entry_line_with_digest, _feed, _files_hash, is_archive
from .case import Case
from .suite import Suite, generation_tasks, op_key, parse_seeds, seed_identity


def _case_entry(case: Case, rel: str) -> dict:
    return {
        "id": case.id,
        "dir": rel,
        "op": case.op,
        "domain": case.domain,
        "since_version": case.since_version,
        "opset": case.opset,
        "label": case.label,
        "tags": case.tags,
        "expect_error": case.expect_error,
        "check": case.check,
        "skip": case.skip,
        "contested": case.contested,
        "content_hash": case.content_hash,
        "generator": case.generator,
        "inputs": [
            {"name": i.name, "elem_type": i.elem_type, "shape": None if i.shape is None else list(i.shape),
             "initializer": i.initializer, "present": i.present, **_kind_member(i.kind),
             **({"outer": True} if i.outer else {})}
            for i in case.inputs
        ],
        "outputs": [
            {"name": o.name, "elem_type": o.elem_type, "present": o.present,
             "tolerance": o.tolerance.to_json() if o.tolerance else None, **_kind_member(o.kind)}
            for o in case.outputs
        ],
        "n_datasets": len(case.datasets),
        "coverage": _analysis(case),
    }


def _kind_member(kind: str) -> dict:
    """The manifest's ``kind`` member of an input/output: only for a sequence or optional (a
    tensor's entry is as it always was)."""
    return {} if kind == "tensor" else {"kind": kind}


def value_proto(value, kind: str, name: str):
    """The proto a data set value of ``kind`` is stored as (onnx's backend-test layout): a
    ``TensorProto`` (``numpy_helper.from_array``), a ``SequenceProto`` (``from_list``) or an
    ``OptionalProto`` (``from_optional``; ``None`` is an empty optional, elem_type UNDEFINED).

    Raises:
        TypeError: ``value`` is not a value of ``kind`` (:func:`conformance.case.check_value`).
    """
    from .case import check_value

    if kind == "tensor":
        return numpy_helper.from_array(np.asarray(value), name)
    check_value(kind, value, name)
    if kind == "sequence":
        return numpy_helper.from_list([np.asarray(v) for v in value], name)
    if value is None:  # an empty optional: elem_type UNDEFINED, as onnx's own test data has it
        return numpy_helper.from_optional(None, name)
    inner = kind[len("optional_"):]
    if inner == "sequence":
        return numpy_helper.from_optional([np.asarray(v) for v in value], name, dtype=onnx.OptionalProto.SEQUENCE)
    return numpy_helper.from_optional(np.asarray(value), name, dtype=onnx.OptionalProto.TENSOR)


def _analysis(case: Case) -> dict:
    """What the case's model exercises (:func:`conformance.coverage.analyse_case`, without the
    id), measured when the bundle is written so that a run or ``coverage --bundle`` need not
    read the models again; the model it describes is the one the case's content hash checks."""
    from .analysis import analyse_case

    a = analyse_case(case)
    a.pop("id", None)
    return a


def prepare_out_dir(out: str | os.PathLike, force: bool, marker: str) -> Path:
    """Check that ``out`` may be written: absent, empty, or (with ``force``) a previous output.

    Args:
        out: the directory.
        force: allow replacing a previous output (one that contains ``marker``).
        marker: file name that identifies a previous output of ours.

    Raises:
        BundleError: ``out`` is a file, or is non-empty without ``force``, or is
            non-empty and not ours (nothing is deleted then, even with ``force``).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BundleError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise BundleError(f"{out} exists and is not empty; use --force to replace it")
        if not (out / marker).exists():
            raise BundleError(
                f"{out} is not empty and has no {marker}: it does not look like an earlier output of "
                "onnx-conformance, so it is left alone even with --force; choose another directory"
            )
    return out


def prepare_out_archive(out: str | os.PathLike, force: bool) -> Path:
    """Check that the bundle archive ``out`` may be written: absent, or (with ``force``) a bundle
    archive already (anything else is left alone even with ``force``).

    Raises:
        BundleError: ``out`` exists without ``force``, or is not a bundle archive.
    """
    out = Path(out)
    if out.exists():
        if not force:
            raise BundleError(f"{out} exists; use --force to replace it")
        if not out.is_file() or not is_archive(out) or "manifest.json" not in zipfile.ZipFile(out).namelist():
            raise BundleError(f"{out} exists and is not a bundle archive: it is left alone even with --force; "
                              "choose another name")
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def write_bundle(suite: Suite, out: str | os.PathLike, *, force: bool = False, progress=None,
                 after_manifest=None) -> Path:
    """Write ``suite`` as a bundle at ``out`` (atomically: a temporary sibling, then a rename).

    Args:
        suite: the cases.
        out: target directory (created).
        force: replace an existing bundle at ``out``.
        progress: optional callable invoked once per case written.
        after_manifest: optional ``fn(directory)`` called once the manifest is written, before the
            bundle is moved to ``out``: what it writes there is part of the bundle
            (:func:`conformance.execute.keep_coverage` writes the coverage a run reads).

    Raises:
        BundleError: see :func:`prepare_out_dir`.
    """
    out = prepare_out_dir(out, force, "manifest.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    with _staged(out, after_manifest) as tmp:
        lines = []
        for case in suite.cases:
            kind = "errors" if case.expect_error is not None else ("checks" if case.check else "cases")
            rel = f"{kind}/{case.dirname}"
            lines.append(_entry_line_with_digest(_case_entry(case, rel), _write_case(case, tmp / rel)))
            if progress:
                progress(case)
        _write_manifest(tmp / "manifest.json", lines, {**suite.identity(), "source": "generated",
                                                       **_declared_of(suite.ops)})
    return out


@contextlib.contextmanager
def _staged(out: Path, after_manifest=None):
    """A new temporary sibling directory of ``out`` to write a bundle into: once the block is done,
    ``after_manifest(directory)`` (when given) and the move to ``out`` (:func:`_replace_dir`); on any
    failure, removed (``out`` untouched)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        yield tmp
        if after_manifest is not None:
            after_manifest(tmp)
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replace_dir(tmp: Path, out: Path) -> None:
    """Move the finished bundle ``tmp`` to ``out``, replacing an existing one (renames only)."""
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.replace(out, old / "b")
        os.replace(tmp, out)
        shutil.rmtree(old)
    else:
        os.replace(tmp, out)


_ENTRIES_DIR = ".entries"


def _write_op(args: tuple[int, str, int, str, str]) -> tuple[int, str, list[tuple[str, str, bool]], dict, dict, dict]:
    """Generate one operator's cases at one seed and write them under ``root`` (a worker of
    :func:`write_generated_bundle`), with their manifest entries in ``root/.entries/<index>.jsonl``
    (:func:`_scratch_line`); returns (index, op, [(id, content hash, is error case)], generator
    info, family): nothing that grows with the cases' data.  A case whose directory exists already
    (the same case under another seed, written by another task) is not written again; its entry
    is (the parent keeps one, :func:`_merge_keys`); and :func:`op_facts` of the operator."""
    from . import registry

    index, op, seed, root, depth = args
    keys = []
    (Path(root) / _ENTRIES_DIR).mkdir(exist_ok=True)
    with open(Path(root) / _ENTRIES_DIR / f"{index:06d}.jsonl", "w", encoding="utf-8") as f:
        for case in registry.generate([op], seed, depth):
            kind = "errors" if case.expect_error is not None else ("checks" if case.check else "cases")
            rel = f"{kind}/{case.dirname}"
            try:
                h = _write_case(case, Path(root) / rel)
            except FileExistsError:  # the same id under another seed: its files are these bytes
                h = _case_files(case)[1]
            f.write(_scratch_line(case.id, _entry_line_with_digest(_case_entry(case, rel), h)))
            keys.append((case.id, case.content_hash, case.expect_error is not None))
    return (index, op, keys, *op_facts(op))


def _declared_of(ops) -> dict:
    """``{"declared": ...}`` (:func:`op_facts`) for the operators ``ops`` as a generated bundle's
    manifest records it; empty when one of them is no operator of the table (a foreign suite's)."""
    declared: dict[str, dict] = {}
    try:
        for op in ops:
            declared.update(op_facts(op)[2])
    except KeyError:
        return {}
    return {"declared": dict(sorted(declared.items()))} if declared else {}


def op_facts(op: str) -> tuple[dict, dict, dict]:
    """What a bundle's manifest records of the operator ``op`` besides its cases: ``({op: its
    generator (name@version)}, {op key: family}, {op key: declared})``, ``declared`` being the
    type combinations the schema admits and its generator does not build, with the reason
    (``{since_version: {combination label: reason}}``, :func:`conformance.ops.engine.skipped_combinations`;
    empty for an operator that is no entry of the table), which the coverage of the bundle reads
    instead of loading the operator table (33 MiB)."""
    from . import registry
    from .ops.engine import ENTRIES, skipped_combinations

    info = registry.get(op)
    key = op_key(info.op, info.domain)
    entry = ENTRIES.get((info.domain, info.op))
    declared: dict[str, dict[str, str]] = {}
    for (v, label), why in sorted((entry and skipped_combinations(entry) or {}).items()):
        declared.setdefault(str(v), {})[label] = why
    return {op: f"{info.name}@{info.version}"}, {key: info.family}, {key: declared}


def _scratch_line(cid: str, line: str) -> str:
    """A case's line in a task's scratch file: its id, a tab, its manifest line (JSON text has
    no raw tab), so that the manifest is assembled without parsing the entries."""
    return f"{cid}\t{line}\n"


def _merge_keys(keys: dict, index: int, op_keys, n_ops: int) -> int:
    """Record task ``index``'s cases in ``keys`` (id -> ``"<content hash> <owning task>"``: one
    string a case, as small as the content hash alone); the owner of an id several seeds give is
    the first task (in :func:`conformance.suite.generation_tasks` order) that has it, whatever order the tasks finish
    in.  Returns the number of error cases new to the suite.

    Raises:
        ValueError: an id twice within one seed, or an id whose content hash differs between seeds.
    """
    n_error = 0
    for cid, chash, is_error in op_keys:
        old = keys.get(cid)
        if old is None:
            keys[cid] = f"{chash} {index}"
            n_error += is_error
            continue
        old_hash, owner = old.split(" ")
        if int(owner) // n_ops == index // n_ops:
            raise ValueError(f"duplicate case id {cid}")
        if old_hash != chash:
            raise ValueError(f"case id {cid} has content hash {old_hash} under one seed and {chash} under another")
        if index < int(owner):
            keys[cid] = f"{chash} {index}"
    return n_error


def _owned_lines(scratch: Path, n_tasks: int, keys: dict):
    """The manifest lines of the suite, in task order, each id once (its owner's line)."""
    for index in range(n_tasks):
        owner = f" {index}"
        ef = scratch / f"{index:06d}.jsonl"
        if not ef.exists():
            continue
        with open(ef, encoding="utf-8") as f:
            for text in f:
                cid, line = text.rstrip("\n").split("\t", 1)
                if keys[cid].endswith(owner):
                    yield line


def _write_manifest(path: Path, lines, identity: dict) -> None:
    """Write the manifest ``{"cases": [...], "format", **identity}`` to ``path``: the case
    entries first, one per line (:func:`_entry_line`: 40,000 entries stay a file a reader can
    split and stream), then the identity, indented, keys sorted.

    Args:
        lines: the entries' lines, in case order (any iterable: streamed).
        identity: :meth:`conformance.suite.Suite.identity`.
    """
    rest = {"format": FORMAT, **identity}
    with open(path, "w", encoding="utf-8") as out:
        out.write('{\n "cases": [')
        first = True
        for line in lines:
            out.write(("\n  " if first else ",\n  ") + line.rstrip("\n"))
            first = False
        out.write("]" if first else "\n ]")
        for k in sorted(rest):
            if k == "declared" and isinstance(rest[k], dict) and rest[k]:  # an operator a line (_rest_lines)
                text = "{" + ",".join(f"\n  {json.dumps(op)}: {json.dumps(v, sort_keys=True, allow_nan=False)}"
                                      for op, v in sorted(rest[k].items())) + "\n }"
            else:
                text = json.dumps(rest[k], indent=1, sort_keys=True, allow_nan=False).replace("\n", "\n ")
            out.write(f',\n {json.dumps(k)}: {text}')
        out.write("\n}\n")


def write_generated_bundle(ops: list[str], seed, out: str | os.PathLike, *, force: bool = False,
                           jobs: int = 1, progress=None, depth: str = "full", executor=None,
                           after_manifest=None) -> dict:
    """Generate ``ops`` with ``seed`` (one seed, or several: one suite holding every seed's cases)
    and write them as a bundle at ``out``, streaming: each (operator, seed) task's cases are
    generated and written by a worker (``jobs`` processes; 1: in this process; or elsewhere by
    ``executor``, e.g. a Dask cluster, :func:`conformance.dask_executor.generate_dask`), their manifest
    entries go to a scratch file per task, and the manifest is assembled from those files one
    entry at a time.  The parent holds only (id, content hash + owning task) per case, so its
    memory does not grow with the cases' data.  The bytes are those of :func:`write_bundle` on
    :func:`conformance.suite.generate_suite` (same seeds and versions, same bundle), whatever
    ``jobs`` or the executor is.

    Several seeds: the manifest lists every operator's cases at the lowest seed, then at the next
    (:func:`conformance.suite.generation_tasks`); a case whose id several seeds give (the id ends in its content
    hash: a case no seed changes, such as most invalid models) is kept once, at its first seed,
    after checking that its content hash agrees; the manifest's identity has ``"seed": null,
    "seeds": [..]`` (:func:`conformance.suite.seed_identity`; one seed's manifest is as it always was).

    Args:
        ops: operator names (:func:`conformance.registry.resolve`).
        seed: the seed or seeds (:func:`conformance.suite.parse_seeds`: an int, ints, or text like ``"0,1,2"``/``"0-9"``).
        out: target directory (written atomically, as :func:`write_bundle`); a name ending in
            ``.zip`` is written as one archive (:func:`write_archive`) instead.
        force: replace an existing bundle.
        jobs: worker processes (each generates whole operators at one seed); unused on a cluster.
        depth: ``"full"`` or ``"smoke"`` (:data:`conformance.registry.DEPTHS`), recorded in the
            manifest (a full suite's manifest has no ``depth``).
        progress: optional ``fn(op, n_cases)`` called as each (operator, seed) task is written.
        executor: ``executor(tasks, root, depth)`` runs the (index, op, seed) tasks elsewhere, writes
            each task's case files under ``root`` and its scratch lines to
            ``root/.entries/<index>.jsonl``, and yields ``(index, op, [(id, content hash, is error
            case)], generators, families)`` per task in any order (``functools.partial(
            conformance.dask_executor.generate_dask, scheduler=ADDRESS)``); its exceptions
            propagate (a cluster refused before any task: ``ClusterError``).
        after_manifest: as :func:`write_bundle`'s (an archive's directory, before it is archived).

    Returns:
        the suite identity written to the manifest (``content_hash``, ``n_cases``...) plus
        ``n_error`` (error cases).

    Raises:
        BundleError: see :func:`prepare_out_dir`.
        KeyError: an unknown operator.
        ValueError: a bad seed (:func:`conformance.suite.parse_seeds`), two cases of one seed with the same id, or one id whose content
            differs between seeds.
    """

    from . import registry
    from .suite import library_versions

    seeds = parse_seeds(seed)
    if depth not in registry.DEPTHS:
        raise ValueError(f"unknown depth {depth!r}; known: {', '.join(registry.DEPTHS)}")
    for op in ops:
        registry.get(op)  # unknown operators fail before anything is written
    if str(out).endswith(".zip"):
        out = prepare_out_archive(out, force)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.dir-", dir=out.parent))
        try:
            ident = write_generated_bundle(ops, seeds, staging / "b", jobs=jobs, progress=progress, depth=depth,
                                           executor=executor, after_manifest=after_manifest)
            write_archive(staging / "b", out, force=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return ident
    out = prepare_out_dir(out, force, "manifest.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    tasks = generation_tasks(ops, seeds)
    pool = None
    with _staged(out, after_manifest) as tmp:
        if executor is not None:
            results = executor(tasks, tmp, depth)
        elif jobs > 1 and len(tasks) > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
            pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
            results = pool.map(_write_op, [(i, op, s, str(tmp), depth) for i, op, s in tasks])
        else:
            results = map(_write_op, [(i, op, s, str(tmp), depth) for i, op, s in tasks])
        keys: dict[str, str] = {}
        generators: dict[str, str] = {}
        families: dict[str, str] = {}
        declared: dict[str, dict] = {}
        n_error = 0
        try:
            for index, op, op_keys, gen, fam, dec in results:
                n_error += _merge_keys(keys, index, op_keys, len(ops))
                generators.update(gen)
                families.update(fam)
                declared.update(dec)
                if progress:
                    progress(op, len(op_keys))
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
            close = getattr(results, "close", None)
            if close is not None:  # a generator (the cluster's): cancel what is in flight
                close()
        h = hashlib.sha256()
        for cid in sorted(keys):
            h.update(f"{cid}\0{keys[cid].split(' ', 1)[0]}\n".encode())
        identity = {**seed_identity(seeds), "ops": list(ops), "generators": dict(sorted(generators.items())),
                    "versions": library_versions(), "content_hash": h.hexdigest(), "n_cases": len(keys),
                    "source": "generated", **({"families": dict(sorted(families.items()))} if families else {}),
                    **({"depth": depth} if depth != "full" else {}),
                    **({"declared": dict(sorted(declared.items()))} if declared else {})}
        scratch = tmp / _ENTRIES_DIR
        _write_manifest(tmp / "manifest.json", _owned_lines(scratch, len(tasks), keys), identity)
        shutil.rmtree(scratch, ignore_errors=True)
    return {**identity, "n_error": n_error}


def _case_files(case: Case) -> tuple[list[tuple[str, bytes]], object]:
    """The files of ``case``'s directory, ``[(name relative to it, bytes)]`` in the order they are
    written, and the hash they were fed to (:func:`_files_hash`)."""
    files = []
    h = _files_hash()
    _feed(h, case.model_bytes)
    files.append(("model.onnx", case.model_bytes))
    graph_inputs = case.graph_inputs
    for k, ds in enumerate(case.datasets):
        dd = f"test_data_set_{k}"
        for i, inp in enumerate(graph_inputs):
            data = value_proto(ds.inputs[inp.name], inp.kind, inp.name).SerializeToString(deterministic=True)
            _feed(h, data)
            files.append((f"{dd}/input_{i}.pb", data))
        if case.expect_error is None and case.check is None:
            for j, o in enumerate(case.present_outputs):
                data = value_proto(ds.outputs[o.name], o.kind, o.name).SerializeToString(deterministic=True)
                _feed(h, data)
                files.append((f"{dd}/output_{j}.pb", data))
    if case.check is not None:
        files.append(("check.json", _json_bytes({"check": case.check, "id": case.id})))
    elif case.expect_error is None:
        tols = [o.tolerance for o in case.present_outputs if o.tolerance]
        files.append(("data.json", _json_bytes({"atol": max((t.atol for t in tols), default=0.0),
                                                "rtol": max((t.rtol for t in tols), default=0.0)})))
    else:
        files.append(("expect_error.json", _json_bytes({"expect_error": case.expect_error, "id": case.id})))
    return files, h


def _json_bytes(obj) -> bytes:
    """A case's small JSON file (``data.json``...): indented, keys sorted, a final newline."""
    return (json.dumps(obj, indent=1, sort_keys=True, allow_nan=False) + "\n").encode("utf-8")


def _write_files(files, d: Path) -> None:
    """Write :func:`_case_files`' ``files`` under the new directory ``d``.

    Raises:
        FileExistsError: ``d`` exists.
    """
    d.mkdir(parents=True)
    made = set()
    for name, data in files:
        sub, _, _ = name.rpartition("/")
        if sub and sub not in made:
            (d / sub).mkdir()
            made.add(sub)
        (d / name).write_bytes(data)


def _write_case(case: Case, d: Path):
    """Write ``case``'s files under ``d``; return the hash they were fed to (:func:`_files_hash`).

    Raises:
        FileExistsError: ``d`` exists.
    """
    if d.exists():
        raise FileExistsError(d)
    files, h = _case_files(case)
    _write_files(files, d)
    return h


def write_archive(src: str | os.PathLike, out: str | os.PathLike, *, force: bool = False) -> Path:
    """Write the bundle directory ``src`` as one zip archive ``out``, byte-reproducibly: members in
    the directory's layout, ``manifest.json`` first and stored (see the module docstring), the
    others deflated, sorted by name, with a fixed time stamp and mode; the suite's content hash
    is unchanged (it is the cases', not the files').

    Raises:
        BundleError: ``src`` is not a bundle directory, or ``out`` exists and ``force`` is not set.
    """
    src, out = Path(src), Path(out)
    if not (src / "manifest.json").is_file():
        raise BundleError(f"{src} is not a bundle directory: {src / 'manifest.json'} not found")
    if out.exists() and not force:
        raise BundleError(f"{out} exists; pass force=True (--force) to replace it")
    files = sorted(p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file())
    files.remove("manifest.json")
    if INDEX_CACHE in files:  # a directory's kept index: an archive's manifest is parsed
        files.remove(INDEX_CACHE)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.tmp-", dir=out.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w") as zf:
            for name in ["manifest.json", *files]:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_STORED if name == "manifest.json" else zipfile.ZIP_DEFLATED
                with open(src / name, "rb") as f, zf.open(info, "w", force_zip64=True) as w:
                    shutil.copyfileobj(f, w, 1 << 20)
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return out
