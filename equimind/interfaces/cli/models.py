"""``equimind models list | pull NAME | verify [NAME]``: thin adapters over ``retrieval/hub*.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from equimind.embedding.hub import MANIFEST_NAME, human_bytes, partial_downloads
from equimind.embedding.hub_pull import hub_endpoint, pull
from equimind.embedding.hub_verify import known_models, verify
from equimind.interfaces.cli.app import HomeOpt, JsonOpt, app, build_settings, emit_json, run_guarded

if TYPE_CHECKING:
    from equimind.embedding.hub_pull import PullResult
    from equimind.embedding.hub_verify import Check, ModelEntry

models_app = typer.Typer(no_args_is_help=True, help="Models: list where each loads from, pull one from the Hugging "
                         "Face Hub into EQUIMIND_HOME/models, verify checksums and that each loads and scores.")
app.add_typer(models_app, name="models")


@models_app.command("pull")
def pull_cmd(
    name: Annotated[str, typer.Argument(help="Hub repo id, e.g. cross-encoder/ms-marco-MiniLM-L6-v2.")],
    revision: Annotated[str | None, typer.Option("--revision", help="Branch, tag or commit (default: main).")] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Download a model from the Hugging Face Hub (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE and proxy variables are
    honoured) into EQUIMIND_HOME/models/<org>--<name>/ with a sha256 manifest. The only command that downloads."""

    def body() -> None:
        settings = build_settings(home)
        if not as_json:
            typer.echo(f"pulling {name}{'@' + revision if revision else ''} from {hub_endpoint()} into "
                       f"{settings.models_path}", err=True)
        result = pull(settings.models_path, name, revision)
        if as_json:
            emit_json(_pull_json(result), settings)
        else:
            _print_pull(result)

    run_guarded(body)


@models_app.command("list")
def list_cmd(home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """The configured embedder and reranker and every pulled model: where each loads from, size, checksum status.
    Makes no request; sizes are compared with the manifest (``verify`` re-hashes)."""

    def body() -> None:
        settings = build_settings(home)
        entries = known_models(settings, full=False)
        if as_json:
            emit_json([_entry_json(e) for e in entries], settings)
            return
        for e in entries:
            _print_entry(e)
        for p in partial_downloads(settings.models_path):
            typer.echo(f"(ignored) {p.name}: an interrupted pull; it is never loaded and the next pull removes it")

    run_guarded(body)


@models_app.command("verify")
def verify_cmd(
    name: Annotated[str | None, typer.Argument(help="One model (default: every known model).")] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-check every pulled file's sha256, load each model offline and score one pair. Exit code 1 when a file
    changed, a model is missing or does not load."""

    def body() -> list[Check]:
        settings = build_settings(home)
        checks = verify(settings, name)
        if as_json:
            emit_json([{**_entry_json(c.entry), "checksums": c.checksums, "load": c.load, "ok": c.ok,
                        "score": c.score} for c in checks], settings)
        else:
            for c in checks:
                _print_check(c)
        return checks

    checks = run_guarded(body)
    if not all(c.ok for c in checks):
        if not as_json:
            typer.secho(f"error: {sum(not c.ok for c in checks)} of {len(checks)} models failed verification",
                        fg=typer.colors.RED, err=True)
        raise typer.Exit(1)


def _pull_json(r: PullResult) -> dict[str, object]:
    m = r.manifest
    return {"repo_id": m.repo_id, "revision": m.revision, "commit": m.commit, "endpoint": m.endpoint,
            "folder": str(r.folder), "total_bytes": m.total_bytes, "replaced": r.replaced,
            "removed_partials": [str(p) for p in r.removed_partials],
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in m.files]}


def _print_pull(r: PullResult) -> None:
    m = r.manifest
    for p in r.removed_partials:
        typer.echo(f"removed the leftover of an interrupted pull: {p.name}")
    for f in m.files:
        typer.echo(f"  {f.path:<28} {human_bytes(f.size):>9}  sha256 {f.sha256[:16]}")
    typer.echo(f"pulled {m.repo_id} @ {m.commit} ({len(m.files)} files, {human_bytes(m.total_bytes)})"
               f"{' — replaced the earlier pull' if r.replaced else ''}")
    typer.echo(f"  into {r.folder}  (checksums: {MANIFEST_NAME})")


def _entry_json(e: ModelEntry) -> dict[str, object]:
    res = e.resolution
    return {"name": e.name, "role": e.role.value, "configured": e.configured, "source": res.source.value,
            "path": str(res.path) if res.path else None, "size": e.size, "checksum": e.checksum_status,
            "commit": res.manifest.commit if res.manifest else None, "problem": res.problem}


def _print_entry(e: ModelEntry) -> None:
    res = e.resolution
    size = human_bytes(e.size) if e.size is not None else "-"
    tag = "configured " + e.role.value if e.configured else e.role.value
    typer.echo(f"{e.name}  [{tag}]")
    typer.echo(f"  source: {res.source.value}  path: {res.path or '-'}  size: {size}")
    typer.echo(f"  checksum: {e.checksum_status}")
    if res.problem and res.source.value != "equimind-home":
        typer.echo(f"  note: {res.problem}")
    if res.source.value == "missing":
        typer.echo(f"  fix: run `equimind models pull {e.name}`")


def _print_check(c: Check) -> None:
    mark = "ok  " if c.ok else "FAIL"
    typer.echo(f"{mark} {c.entry.name}  [{c.entry.role.value}, {c.entry.resolution.source.value}]")
    typer.echo(f"     checksums: {c.checksums}")
    typer.echo(f"     {c.load}")
