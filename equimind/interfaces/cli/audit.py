"""``equimind audit verify``: check the audit log's hash chain, HMACs and tip."""

from __future__ import annotations

import typer

from equimind.interfaces.cli import render
from equimind.interfaces.cli.app import HomeOpt, JsonOpt, audit_app, build_settings, emit_json, run_guarded


@audit_app.command("verify")
def audit_verify(home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """Verify the audit log's hash chain, HMACs and tip; exit 1 on any problem."""

    def body() -> None:
        from equimind.security.verify import verify_audit_log

        settings = build_settings(home)
        key = settings.audit_key
        report = verify_audit_log(settings.audit_path, key)
        if as_json:
            emit_json(report, settings)
        else:
            render.console.print(f"{'OK' if report.ok else 'TAMPERED'}: {report.records} records, last seq "
                          f"{report.last_seq}")
            for p in report.problems:
                render.console.print(f"  [red]{p.kind.value}[/red] seq {p.seq} line {p.line}: {p.detail}")
        if not report.ok:
            raise typer.Exit(1)

    run_guarded(body)
