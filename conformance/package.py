"""Submission packages: one zip a vendor hands to a customer, and its verifier.

A package holds, flat and sorted by name::

    SHA256SUMS        "<sha256>  <member>" per line for every other member (``sha256sum -c`` reads it)
    environment.json  backend, host, library versions and run record of the results; the packager's host
    manifest.json     the suite's bundle manifest (the declared cases), byte for byte
    package.json      format, suite identity, backend, counts per outcome and the score
    report.html       the HTML report rendered from these results and this manifest
    results.json      the results, byte for byte as the run wrote them

The zip comment carries ``sha256:<digest>``, the sha256 of ``SHA256SUMS``: one value that
pins every byte of the package, to quote beside it (``verify --digest``).  Zips are
deterministic: fixed timestamps, fixed permissions, members in name order.

:func:`verify_package` checks that every case the manifest declares is in the results
exactly once and no other case is, that every outcome is one of
:data:`conformance.runner.OUTCOMES`, that the results' suite content hash equals the
manifest's (and the manifest's equals the hash of its own case list), that the
recorded counts match the case records, that a profile's verdict (:mod:`conformance.profile`)
follows from the results and that every case the profile claims is among them, and that every
member matches its hash.  The
hashes show that nothing changed after packaging; whoever can edit a package can also
recompute them, which the digest, published apart from the zip, guards against.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .jsonsafe import dumps
from .runner import OUTCOMES

FORMAT = "onnx-conformance-package/1"
SUMS = "SHA256SUMS"
MEMBERS = ("environment.json", "manifest.json", "package.json", "report.html", "results.json")
#: Timestamp of every member (the earliest a zip can store).
EPOCH = (1980, 1, 1, 0, 0, 0)
_SUM_LINE = re.compile(r"^([0-9a-f]{64}) [ *](\S.*)$")
#: Ids listed per problem before "... and N more".
SHOW = 10


class PackageError(Exception):
    """A package cannot be built (missing results or manifest) or read at all."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_content_hash(manifest: dict) -> str:
    """The suite content hash of a manifest's case list (as :attr:`conformance.suite.Suite.content_hash`)."""
    h = hashlib.sha256()
    for cid, ch in sorted((str(e.get("id")), str(e.get("content_hash"))) for e in manifest.get("cases") or []):
        h.update(f"{cid}\0{ch}\n".encode())
    return h.hexdigest()


def _load_json_bytes(data: bytes, what: str) -> dict:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PackageError(f"{what}: not valid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise PackageError(f"{what}: not a JSON object")
    return doc


def _zip_bytes(members: dict[str, bytes], out: Path, comment: bytes) -> None:
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for name in sorted(members):
            zi = zipfile.ZipInfo(name, date_time=EPOCH)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.create_system = 3
            zi.external_attr = 0o100644 << 16
            zf.writestr(zi, members[name], compresslevel=9)
        zf.comment = comment
    os.replace(tmp, out)


def _sums(members: dict[str, bytes]) -> bytes:
    return "".join(f"{_sha256(members[n])}  {n}\n" for n in sorted(members)).encode()


def write_package(members: dict[str, bytes], out: str | os.PathLike) -> str:
    """Write ``members`` (name -> bytes) as a package zip with its hash list; return the digest.

    This is the low-level writer (``SHA256SUMS`` and the zip comment are computed
    here); :func:`build_package` assembles the members from a run.
    """
    members = {n: b for n, b in members.items() if n != SUMS}
    sums = _sums(members)
    digest = _sha256(sums)
    _zip_bytes({**members, SUMS: sums}, Path(out), f"onnx-conformance package; digest sha256:{digest}".encode())
    return digest


def build_package(outdir: str | os.PathLike, out: str | os.PathLike, bundle: str | os.PathLike | None = None) -> str:
    """Package the run in ``outdir`` (its ``results.json``) into the zip ``out``.

    Args:
        outdir: output directory of ``onnx-conformance run``.
        out: the zip to write (replaced if it exists).
        bundle: the bundle (directory or archive) whose ``manifest.json`` declares the suite (default:
            the bundle recorded in the results' ``run.bundle``).

    Returns:
        The package digest (sha256 of ``SHA256SUMS``).

    Raises:
        PackageError: no readable results, or no bundle manifest to declare the suite.
    """
    from conformance.reports.common import score, summarize
    from conformance.reports.html import render_html

    from .bundle import FORMAT as BUNDLE_FORMAT
    from .results import ResultsError, load_results
    from .suite import host_environment

    outdir = Path(outdir)
    rpath = outdir / "results.json" if outdir.is_dir() else outdir
    try:
        doc = load_results(rpath)
    except ResultsError as exc:
        raise PackageError(str(exc)) from None
    results_bytes = rpath.read_bytes()
    bdir = bundle or (doc.get("run") or {}).get("bundle")
    if not bdir:
        raise PackageError("the results record no bundle (the run used --ops); give --bundle DIR with the suite's "
                           "manifest.json (write one with 'onnx-conformance generate')")
    from .bundle import BundleError, is_archive
    from .bundle import manifest_bytes as read_manifest

    mpath = Path(bdir) if is_archive(bdir) else Path(bdir) / "manifest.json"
    try:
        manifest_bytes = read_manifest(bdir)
    except BundleError as exc:
        raise PackageError(f"cannot read the bundle manifest: {exc}") from None
    manifest = _load_json_bytes(manifest_bytes, str(mpath))
    if manifest.get("format") != BUNDLE_FORMAT:
        raise PackageError(f"{mpath}: not a bundle manifest (format {manifest.get('format')!r})")
    summary = summarize(doc["cases"])
    pct, num, den = score(summary)
    suite = doc.get("suite") or {}
    package_info = {
        "format": FORMAT,
        "suite": {"content_hash": manifest.get("content_hash"), "n_cases": len(manifest.get("cases") or []),
                  "seed": manifest.get("seed"), "ops": manifest.get("ops"), "versions": manifest.get("versions"),
                  **({"seeds": manifest["seeds"]} if manifest.get("seeds") else {})},
        "backend": doc.get("backend"),
        "summary": summary,
        "score": {"percent": pct, "passed": num, "scored": den, "definition": "(pass + xfail) / (cases - skip)"},
        "members": sorted((*MEMBERS, SUMS)),
    }
    if doc.get("verdict"):
        package_info["verdict"] = _verdict_summary(doc["verdict"])
    environment = {
        "backend": doc.get("backend"),
        "host": doc.get("host"),
        "suite_versions": suite.get("versions"),
        "generators": suite.get("generators"),
        "run": doc.get("run"),
        "duration_s": doc.get("duration_s"),
        "packaged_by": {"onnx-conformance": __version__, **host_environment()},
    }
    html = render_html(doc, manifest, Path(bdir) if Path(bdir).is_dir() or is_archive(bdir) else None)
    members = {
        "environment.json": (dumps(environment, indent=1, sort_keys=True) + "\n").encode(),
        "manifest.json": manifest_bytes,
        "package.json": (dumps(package_info, indent=1, sort_keys=True) + "\n").encode(),
        "report.html": html.encode("utf-8"),
        "results.json": results_bytes,
    }
    return write_package(members, out)


def _verdict_summary(v: dict) -> dict:
    """What package.json says of a run's verdict (results.json holds the whole of it)."""
    p = v.get("profile") or {}
    return {"profile": p.get("name"), "profile_version": p.get("version"), "conformant": v.get("conformant"),
            "claimed": v.get("claimed"), "findings": len(v.get("findings") or []), "waived": len(v.get("waived") or [])}


#: The parts of a verdict that must follow from the results (all but the profile itself).
_VERDICT_KEYS = ("conformant", "claimed", "not_claimed", "outcomes", "findings", "waived")


def _check_verdict(results: dict, manifest: dict, info: dict | None, p: list[str]) -> None:
    """Judge the results again against the profile the verdict records, with the manifest's
    analyses of the declared cases, and add a problem for every part that does not follow."""
    from .profile import ProfileError, Profile, judge

    v = results["verdict"]
    try:
        profile = Profile.from_json(v.get("profile") if isinstance(v, dict) else None)
    except (ProfileError, KeyError, TypeError, ValueError) as exc:
        p.append(f"the verdict in results.json records no readable profile: {exc}")
        return
    analyses = {str(e.get("id")): e.get("coverage") for e in manifest.get("cases") or []
                if isinstance(e, dict) and isinstance(e.get("coverage"), dict)}
    records = [c for c in results["cases"] if isinstance(c, dict) and "id" in c]
    again = judge(records, analyses, profile)
    for k in _VERDICT_KEYS:
        if v.get(k) != again[k]:
            p.append(f"the verdict does not follow from the results: {k} is recorded as {_brief(v.get(k))}, "
                     f"the results give {_brief(again[k])}")
    seen = {str(c.get("id")) for c in records}
    tags = {str(e.get("id")): e.get("tags") or {} for e in manifest.get("cases") or [] if isinstance(e, dict)}
    claimed_missing = [i for i, a in analyses.items() if i not in seen and profile.excludes(a, tags[i]) is None]
    if claimed_missing:
        p.append(f"{len(claimed_missing)} claimed case(s) of profile {profile.name} are missing from the results: "
                 f"{_ids(claimed_missing)}")
    if info is not None and info.get("verdict") != _verdict_summary(v):
        p.append("package.json's verdict is not the one results.json records")


def _brief(x) -> str:
    text = json.dumps(x, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


@dataclass
class Verification:
    """What :func:`verify_package` found.

    Attributes:
        problems: one clear sentence per problem (empty: the package verifies).
        facts: what was checked (digest, number of cases, suite hash, counts per outcome).
    """

    problems: list[str] = field(default_factory=list)
    facts: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOW])
    return shown + (f" ... and {len(ids) - SHOW} more" if len(ids) > SHOW else "")


def verify_package(path: str | os.PathLike, digest: str | None = None) -> Verification:
    """Check a package zip (see the module docstring); never raises for a bad package.

    Args:
        path: the zip.
        digest: the digest published with the package (``sha256:HEX`` or ``HEX``), if any.
    """
    v = Verification()
    p = v.problems
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        p.append(f"{path}: not a readable zip file: {exc}")
        return v
    with zf:
        names = [i.filename for i in zf.infolist()]
        dups = sorted(n for n, k in Counter(names).items() if k > 1)
        if dups:
            p.append(f"the zip holds more than one member named {_ids(dups)}")
        odd = sorted(n for n in names if "/" in n or "\\" in n or n.startswith(".") or n not in (*MEMBERS, SUMS))
        if odd:
            p.append(f"unexpected member(s) in the package: {_ids(odd)}")
        missing = [n for n in (*MEMBERS, SUMS) if n not in names]
        if missing:
            p.append(f"missing member(s): {', '.join(missing)}")
        data: dict[str, bytes] = {}
        for n in set(names):
            try:
                data[n] = zf.read(n)
            except (zipfile.BadZipFile, OSError, RuntimeError) as exc:  # CRC errors, encrypted members...
                p.append(f"member {n} cannot be read: {exc}")
        comment = zf.comment.decode("utf-8", "replace")

    # -- hashes: nothing edited after packaging ------------------------------------------------
    if SUMS in data:
        sums = data[SUMS]
        actual_digest = _sha256(sums)
        v.facts["digest"] = actual_digest
        m = re.search(r"sha256:([0-9a-f]{64})", comment)
        if not m:
            p.append("the zip comment carries no package digest (sha256:...)")
        elif m.group(1) != actual_digest:
            p.append(f"{SUMS} was changed: its sha256 is {actual_digest}, the package digest in the zip comment is "
                     f"{m.group(1)}")
        if digest:
            want = digest.lower().removeprefix("sha256:")
            if want != actual_digest:
                p.append(f"the package digest is {actual_digest}, not the expected {want}")
        listed: dict[str, str] = {}
        for k, line in enumerate(sums.decode("utf-8", "replace").splitlines(), 1):
            mm = _SUM_LINE.match(line)
            if not mm:
                p.append(f"{SUMS} line {k} is malformed: {line[:100]!r}")
                continue
            listed[mm.group(2)] = mm.group(1)
        for n in sorted(set(data) - {SUMS}):
            if n not in listed:
                p.append(f"member {n} is not listed in {SUMS}")
            elif _sha256(data[n]) != listed[n]:
                p.append(f"member {n} was edited after packaging: its sha256 is {_sha256(data[n])}, "
                         f"{SUMS} says {listed[n]}")
        for n in sorted(set(listed) - set(data)):
            p.append(f"{SUMS} lists {n}, which is not in the package")

    # -- the declared suite against the results ------------------------------------------------
    try:
        manifest = _load_json_bytes(data["manifest.json"], "manifest.json") if "manifest.json" in data else None
        results = _load_json_bytes(data["results.json"], "results.json") if "results.json" in data else None
    except PackageError as exc:
        p.append(str(exc))
        return v
    if manifest is None or results is None:
        return v
    from .results import FORMAT as RESULTS_FORMAT

    if results.get("format") != RESULTS_FORMAT or not isinstance(results.get("cases"), list):
        p.append(f"results.json is not an onnx-conformance results file (format {results.get('format')!r})")
        return v
    declared = [str(e.get("id")) for e in manifest.get("cases") or [] if isinstance(e, dict)]
    m_hash = manifest.get("content_hash")
    v.facts.update(declared_cases=len(declared), result_records=len(results["cases"]), suite_content_hash=m_hash)
    if manifest_content_hash(manifest) != m_hash:
        p.append(f"manifest.json was edited: its case list hashes to {manifest_content_hash(manifest)}, "
                 f"not to its declared content hash {m_hash}")
    r_hash = (results.get("suite") or {}).get("content_hash")
    if r_hash != m_hash:
        p.append(f"the results are of another suite: their content hash {r_hash} is not the manifest's {m_hash} "
                 "(a run with --match, or a different bundle)")
    dup_decl = sorted(i for i, k in Counter(declared).items() if k > 1)
    if dup_decl:
        p.append(f"manifest.json declares {len(dup_decl)} case id(s) more than once: {_ids(dup_decl)}")
    seen = Counter(str(c.get("id")) if isinstance(c, dict) else None for c in results["cases"])
    declared_set = set(declared)
    missing = [i for i in declared if i not in seen]
    if missing:
        p.append(f"{len(missing)} declared case(s) missing from the results: {_ids(missing)}")
    dups = sorted(i for i, k in seen.items() if k > 1)
    if dups:
        p.append(f"{len(dups)} case(s) appear more than once in the results: "
                 f"{_ids([f'{i} ({seen[i]} times)' for i in dups])}")
    extra = sorted(str(i) for i in seen if i not in declared_set)
    if extra:
        p.append(f"{len(extra)} result(s) for case(s) the suite does not declare: {_ids(extra)}")
    bad = Counter(str(c.get("outcome")) for c in results["cases"] if isinstance(c, dict)
                  and c.get("outcome") not in OUTCOMES)
    if bad:
        p.append(f"outcome(s) outside the allowed set {', '.join(OUTCOMES)}: "
                 + ", ".join(f"{o!r} ({k} case(s))" for o, k in sorted(bad.items())))
    counts = Counter(c.get("outcome") for c in results["cases"] if isinstance(c, dict))
    recorded = results.get("summary") or {}
    wrong = {o: (recorded.get(o, 0), counts.get(o, 0)) for o in set(recorded) | set(counts)
             if recorded.get(o, 0) != counts.get(o, 0)}
    if wrong:
        p.append("the summary in results.json does not match its case records: "
                 + ", ".join(f"{o} recorded {a}, counted {b}" for o, (a, b) in sorted(wrong.items(), key=str)))
    v.facts["summary"] = {o: counts.get(o, 0) for o in OUTCOMES if counts.get(o)}
    info = None
    if "package.json" in data:
        try:
            info = _load_json_bytes(data["package.json"], "package.json")
        except PackageError as exc:
            p.append(str(exc))
        else:
            if (info.get("suite") or {}).get("content_hash") != m_hash:
                p.append("package.json names another suite than manifest.json")
    if results.get("verdict") is not None:
        _check_verdict(results, manifest, info, p)
        v.facts["verdict"] = _verdict_summary(results["verdict"]) if isinstance(results["verdict"], dict) else None
    elif info is not None and info.get("verdict") is not None:
        p.append("package.json records a verdict, results.json none")
    return v
