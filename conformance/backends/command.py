"""A runtime driven per case by an external command (``--backend command``).

For runtimes that have no Python API (a C++ test driver, a vendor's CLI, a
runtime on another machine behind ``ssh``), the backend writes each case in the
ONNX backend-test layout into a fresh temporary directory and runs a command line
built from a template::

    CASE_DIR/model.onnx
    CASE_DIR/test_data_set_0/input_0.pb ...   TensorProto per fed graph input, graph-input order
    CASE_DIR/outputs/                         empty; the command writes output_0.pb ... here

The command must write ``output_J.pb`` (a serialized ``onnx.TensorProto``) for the
J-th graph output of the model (graph-output order, as onnx's backend-test loader
expects).  The element type written is the element type scored: it is never cast.

Options (``--backend-option KEY=VALUE``):

* ``template`` (required): the command line, with placeholders

  - ``{model}``: path of ``model.onnx``;
  - ``{case_dir}``: the case directory;
  - ``{inputs_dir}``: ``CASE_DIR/test_data_set_0`` (the ``input_*.pb`` files);
  - ``{outputs_dir}``: ``CASE_DIR/outputs`` (where ``output_*.pb`` must be written);
  - ``{input_names}`` / ``{output_names}``: comma-separated graph input / output names;
  - ``{n_inputs}`` / ``{n_outputs}``: their counts;
  - ``{{`` and ``}}``: literal braces.

  Without ``shell=1`` the template is split with :func:`shlex.split` *before* the
  placeholders are substituted, so paths with spaces stay one argument, and the
  command is executed directly (no shell).
* ``shell``: ``1`` runs the template through ``/bin/sh -c`` (placeholders are
  substituted shell-quoted); default ``0``.
* ``unsupported_status``: exit status that means "unsupported" (default ``3``).
* ``keep``: ``1`` keeps each case's temporary directory (its path is in error
  messages); default ``0``.
* ``tmpdir``: where temporary case directories are created (default: the system's).
* ``cwd``: working directory of the command (default: the current directory).

Exit status conventions: ``0`` means the command ran (outputs are then read and
compared; a missing ``output_J.pb`` is a ``fail`` of that output); the
``unsupported_status`` exit code, or any exit status other than 0 together with
stdout/stderr text matching "unsupported", "not supported" or "not implemented",
is ``unsupported``; any other status is ``error`` with the tail of stderr in the
message.  The per-case deadline is the runner's (``--timeout``); the command runs in
its own process group, which is killed when the case ends, is interrupted, or the
worker process exits.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import string
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from ..bundle import proto_value
from ..bundle_write import value_proto
from .base import Backend, Unsupported, reject_unknown_options

#: Placeholders a template may use.
PLACEHOLDERS = ("model", "case_dir", "inputs_dir", "outputs_dir", "input_names", "output_names", "n_inputs",
                "n_outputs")

_KNOWN_OPTIONS = ("template", "shell", "unsupported_status", "keep", "tmpdir", "cwd")
_UNSUPPORTED_TEXT = re.compile(r"unsupported|not supported|not implemented", re.IGNORECASE)


class CommandError(RuntimeError):
    """The command exited with a status that is neither 0 nor the unsupported status."""


class MissingOutput:
    """Stands for an output the runtime did not produce.

    Returned in place of an array so that the runner scores that one output as
    ``fail`` with ``reason`` ("output is not an array: ..."), while the other
    outputs of the case are still compared.
    """

    def __init__(self, reason: str):
        self.reason = reason

    def __array__(self, *args: Any, **kwargs: Any):
        raise ValueError(f"missing output: {self.reason}")

    def __repr__(self) -> str:
        return f"MissingOutput({self.reason!r})"


def _flag(value: Any, name: str) -> bool:
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"option {name} must be 0 or 1, got {value!r}")


def _check_template(template: str) -> None:
    for _, field, spec, conv in string.Formatter().parse(template):
        if field is None:
            continue
        if field not in PLACEHOLDERS:
            raise ValueError(f"unknown placeholder {{{field}}} in template; known: "
                             + ", ".join("{" + p + "}" for p in PLACEHOLDERS) + " ({{ and }} for literal braces)")
        if spec or conv:
            raise ValueError(f"placeholder {{{field}}} takes no format spec or conversion")


def _tail(text: str, limit: int = 1500) -> str:
    text = text.strip()
    return text if len(text) <= limit else "... " + text[-limit:]


#: The guardian: a tiny process that outlives a killed worker.  The worker tells it
#: ("+PGID [DIR]" / "-PGID" lines on its stdin) which command process groups are
#: running and which temporary case directory each uses; when its stdin closes (the
#: worker exited, was killed at the runner's deadline, or crashed) it kills the
#: groups still listed and removes their directories.
_GUARDIAN = """
import os, shutil, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
live = {}
for line in sys.stdin:
    line = line.rstrip("\\n")
    if line[:1] == "+":
        pgid, _, d = line[1:].partition(" ")
        live[int(pgid)] = d
    elif line[:1] == "-":
        live.pop(int(line[1:]), None)
for g, d in live.items():
    try:
        os.killpg(g, signal.SIGKILL)
    except OSError:
        pass
    if d:
        shutil.rmtree(d, ignore_errors=True)
"""


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Guardian:
    """One guardian process per worker process (re-created after a fork)."""

    def __init__(self) -> None:
        self.pid = -1
        self.proc: subprocess.Popen | None = None

    def _ensure(self) -> subprocess.Popen | None:
        if self.proc is None or self.pid != os.getpid() or self.proc.poll() is not None:
            self.pid = os.getpid()
            try:
                self.proc = subprocess.Popen([sys.executable, "-c", _GUARDIAN], stdin=subprocess.PIPE,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                             start_new_session=True)
            except OSError:
                self.proc = None
        return self.proc

    def tell(self, line: str) -> None:
        proc = self._ensure()
        if proc is None or proc.stdin is None:
            return
        try:
            proc.stdin.write(f"{line}\n".encode())
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.proc = None


_GUARD = _Guardian()


class _Prepared:
    def __init__(self, model_bytes: bytes, inputs: list[str], outputs: list[str], kinds: dict[str, str] | None = None):
        self.model_bytes = model_bytes
        self.inputs = inputs
        self.outputs = outputs
        #: graph input/output name -> value kind (:data:`conformance.case.KINDS`): a sequence or
        #: optional is written and read as a SequenceProto / OptionalProto (onnx's layout)
        self.kinds = kinds or {}


class CommandBackend(Backend):
    """Runs each case through an external command over a backend-test case directory.

    See the module docstring for the layout, the options and the exit-status
    conventions.

    Raises:
        ValueError: no ``template``, an unknown placeholder, an unknown option or a
            malformed option value.
    """

    name = "command"

    def __init__(self, template: str | None = None, shell: str | bool = "0", unsupported_status: str | int = 3,
                 keep: str | bool = "0", tmpdir: str | None = None, cwd: str | None = None, **unknown: Any):
        reject_unknown_options("command", unknown, _KNOWN_OPTIONS)
        if not template or not str(template).strip():
            raise ValueError("the command backend needs option template=..., e.g. "
                             "--backend-option 'template=my_runner {model} {inputs_dir} {outputs_dir}'; placeholders: "
                             + ", ".join("{" + p + "}" for p in PLACEHOLDERS))
        self.template = str(template)
        _check_template(self.template)
        self.shell = _flag(shell, "shell")
        if not self.shell:
            try:
                self.argv_template = shlex.split(self.template)
            except ValueError as exc:
                raise ValueError(f"template cannot be split into arguments: {exc}") from None
        try:
            self.unsupported_status = int(unsupported_status)
        except ValueError:
            raise ValueError(f"unsupported_status must be an integer, got {unsupported_status!r}") from None
        self.keep = _flag(keep, "keep")
        if tmpdir is not None and not Path(tmpdir).is_dir():
            raise ValueError(f"tmpdir {tmpdir!r} is not a directory")
        if cwd is not None and not Path(cwd).is_dir():
            raise ValueError(f"cwd {cwd!r} is not a directory")
        self.tmpdir = tmpdir
        self.cwd = cwd

    # ---------------------------------------------------------------- interface
    def prepare(self, model: onnx.ModelProto, model_bytes: bytes) -> _Prepared:
        inits = {t.name for t in model.graph.initializer}
        inputs = [i.name for i in model.graph.input if i.name not in inits]
        outputs = [o.name for o in model.graph.output]
        from ..case import value_kind

        kinds = {vi.name: value_kind(vi.type) or "tensor" for vi in list(model.graph.input) + list(model.graph.output)}
        return _Prepared(model_bytes, inputs, outputs, kinds)

    def run(self, prepared: _Prepared, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        missing = [n for n in prepared.inputs if n not in inputs]
        if missing:
            raise ValueError(f"no value for graph input(s) {missing}")
        case_dir = Path(tempfile.mkdtemp(prefix="onnx-conformance-cmd-", dir=self.tmpdir))
        try:
            return self._run_in(case_dir, prepared, inputs, output_names)
        finally:
            if not self.keep:
                shutil.rmtree(case_dir, ignore_errors=True)

    def is_unsupported(self, exc: BaseException) -> bool:
        if isinstance(exc, CommandError):
            return False
        return super().is_unsupported(exc)

    def environment(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "template": self.template,
            "shell": self.shell,
            "unsupported_status": self.unsupported_status,
            "cwd": self.cwd,
        }

    # ---------------------------------------------------------------- helpers
    def _run_in(self, case_dir: Path, prepared: _Prepared, inputs: dict[str, np.ndarray],
                output_names: list[str]) -> list[Any]:
        (case_dir / "model.onnx").write_bytes(prepared.model_bytes)
        in_dir = case_dir / "test_data_set_0"
        out_dir = case_dir / "outputs"
        in_dir.mkdir()
        out_dir.mkdir()
        for k, name in enumerate(prepared.inputs):
            t = value_proto(inputs[name], prepared.kinds.get(name, "tensor"), name)
            (in_dir / f"input_{k}.pb").write_bytes(t.SerializeToString(deterministic=True))
        values = {
            "model": str(case_dir / "model.onnx"),
            "case_dir": str(case_dir),
            "inputs_dir": str(in_dir),
            "outputs_dir": str(out_dir),
            "input_names": ",".join(prepared.inputs),
            "output_names": ",".join(prepared.outputs),
            "n_inputs": str(len(prepared.inputs)),
            "n_outputs": str(len(prepared.outputs)),
        }
        if self.shell:
            cmd: Any = self.template.format_map({k: shlex.quote(v) for k, v in values.items()})
        else:
            cmd = [arg.format_map(values) for arg in self.argv_template]
        status, out, err = self._execute(cmd, "" if self.keep else str(case_dir))
        where = f" (case dir kept: {case_dir})" if self.keep else ""
        if status == self.unsupported_status:
            raise Unsupported(f"command exited with status {status} (unsupported){where}: "
                              f"{_tail(err or out, 800)}")
        if status != 0:
            text = f"{out}\n{err}"
            if _UNSUPPORTED_TEXT.search(text):
                raise Unsupported(f"command exited with status {status}{where}: {_tail(err or out, 800)}")
            raise CommandError(f"command exited with status {status}{where}; stderr: {_tail(err) or '(empty)'}")
        results: dict[str, Any] = {}
        for j, name in enumerate(prepared.outputs):
            p = out_dir / f"output_{j}.pb"
            if not p.is_file():
                results[name] = MissingOutput(f"the command wrote no {p.name} for output {name!r}{where}")
                continue
            kind = prepared.kinds.get(name, "tensor")
            try:
                results[name] = proto_value(p.read_bytes(), kind, p.name)
            except Exception as exc:  # noqa: BLE001 - protobuf raises its own DecodeError
                results[name] = MissingOutput(f"{p.name} is not a {'TensorProto' if kind == 'tensor' else kind} "
                                              f"proto: {exc}")
        return [results[n] if n in results else MissingOutput(f"{n!r} is not a graph output") for n in output_names]

    def _execute(self, cmd: Any, cleanup_dir: str) -> tuple[int, str, str]:
        try:
            proc = subprocess.Popen(cmd, shell=self.shell, cwd=self.cwd, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise CommandError(f"cannot start command {cmd!r}: {exc}") from None
        _GUARD.tell(f"+{proc.pid} {cleanup_dir.replace(chr(10), '')}")
        chunks: dict[str, bytes] = {}
        readers = [threading.Thread(target=_drain, args=(stream, key, chunks), daemon=True)
                   for key, stream in (("out", proc.stdout), ("err", proc.stderr))]
        try:
            for t in readers:
                t.start()
            proc.wait()
        finally:
            # The command's own children may outlive it (and hold its stdout open):
            # end the whole group, then collect what was written.
            _kill_group(proc.pid)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for t in readers:
                t.join(5)
            _GUARD.tell(f"-{proc.pid}")
        out, err = chunks.get("out", b""), chunks.get("err", b"")
        return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _drain(stream, key: str, chunks: dict[str, bytes]) -> None:
    try:
        chunks[key] = stream.read()
    except (OSError, ValueError):
        chunks[key] = b""
    finally:
        stream.close()
