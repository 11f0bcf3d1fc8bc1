"""Rich rendering for the CLI (the only place that prints for humans)."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

if TYPE_CHECKING:  # annotations only: importing this module stays as light as Rich
    from equimind.core.search import SearchResult
    from equimind.ingest.pipeline import IngestReport

console = Console()
err_console = Console(stderr=True)


class IngestProgress:
    """Three Rich progress bars (documents, chunks, embeddings) on stderr; silent when disabled (--json)."""

    def __init__(self, *, enabled: bool, total: int | None, mode: str) -> None:
        self._enabled = enabled
        self._total = total
        self._mode = mode
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> IngestProgress:
        if self._enabled:
            err_console.print(f"[bold]Ingesting from[/bold] {self._mode}")
            self._progress = Progress(TextColumn("{task.description:<11}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), console=err_console, transient=False)
            self._progress.start()
            self._tasks = {
                "documents": self._progress.add_task("documents", total=self._total),
                "chunks": self._progress.add_task("chunks", total=None),
                "embeddings": self._progress.add_task("embeddings", total=None),
            }
        return self

    def update(self, stage: str, advance: int, total: int | None) -> None:
        if self._progress is None:
            return
        task = self._tasks[stage]
        self._progress.advance(task, advance)
        if stage == "chunks":
            # chunks discovered so far are the total the embeddings bar works toward
            done = self._progress.tasks[task].completed
            self._progress.update(self._tasks["embeddings"], total=done)
            self._progress.update(task, total=done)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()


def ingest_report(report: IngestReport, mode: str) -> None:
    table = Table(title=f"Ingest ({mode})", show_header=True)
    table.add_column("")
    table.add_column("added", justify="right")
    table.add_column("skipped (already stored)", justify="right")
    table.add_column("failed", justify="right")
    table.add_row("documents", str(report.documents_added + report.documents_completed),
                  str(report.documents_skipped), str(len(report.documents_failed)))
    table.add_row("chunks", str(report.chunks_added), str(report.chunks_skipped), "")
    console.print(table)
    if report.documents_completed:
        console.print(f"completed {report.documents_completed} document(s) left pending by an interrupted run")
    for f in report.documents_failed:
        console.print(f"[red]failed[/red] {f.source}: {f.error}")
    timings = ", ".join(f"{k} {v:.1f}s" for k, v in report.timings_s.items())
    console.print(f"embedder: {report.embedder}; {timings}")


def search_result(result: SearchResult) -> None:
    if result.auto_filter:
        console.print(f"[cyan]auto filter:[/cyan] {result.auto_filter} (--no-auto-filter searches everything)")
    for d in result.degraded:
        console.print(f"[yellow]degraded:[/yellow] {d}")
    if not result.hits:
        console.print("no passages matched (check the filters, or ingest first)")
        return
    for hit in result.hits:
        doc = hit.document
        page = f" p.{hit.page_start}" + (f"-{hit.page_end}" if hit.page_end != hit.page_start else "") \
            if hit.page_start is not None else ""
        head = (f"[bold]{hit.rank}.[/bold] {doc.ticker or doc.company or '?'} {doc.form} filed {doc.filed_at} "
                f"· {hit.section or '-'}{page} · chars {hit.start}-{hit.end} · doc {doc.doc_id[:12]}")
        s = hit.scores
        scores = (f"dense #{s.dense_rank if s.dense_rank is not None else '-'} "
                  f"bm25 #{s.bm25_rank if s.bm25_rank is not None else '-'} "
                  f"rrf {s.rrf_score:.4f} " if s.rrf_score is not None else "")
        scores += (f"rerank {s.rerank_score:.3f}" if s.rerank_score is not None else f"rerank: {s.rerank_status}")
        console.print(head)
        console.print(f"   [dim]{scores}[/dim]")
        console.print("   " + " ".join(hit.text.split())[:400])
    timings = ", ".join(f"{k} {v:.0f}ms" for k, v in result.timings_ms.items())
    console.print(f"[dim]mode {result.mode}; {timings}[/dim]")
