"""Stage 0 — preprocessing (seed 001 §0): check the mapping, pin the namespace and the JCS implementation."""

from __future__ import annotations

from typing import Any

from kenning.pipeline.runner import StageContext
from kenning.store import runs as runs_sql

JCS_IMPLEMENTATION = "kenning.sources.jcs (RFC 8785; exact big integers; lone surrogates escaped)"


class NamespaceMismatch(RuntimeError):
    pass


def check_namespace(ctx: StageContext) -> None:
    stored = runs_sql.get_meta(ctx.conn, "id_namespace")
    wanted = ctx.config.ids.id_namespace
    if stored is not None and stored != wanted:
        raise NamespaceMismatch(
            f"this vault's IDs use namespace {stored}, but the config says {wanted}; "
            "mixing them would duplicate every record. Restore ids.id_namespace or use a new vault."
        )
    if stored is None:
        runs_sql.set_meta(ctx.conn, "id_namespace", wanted)


class Preprocess:
    name = "0"
    title = "preprocess"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        check_namespace(ctx)
        runs_sql.set_meta(ctx.conn, "jcs_implementation", JCS_IMPLEMENTATION)
        runs_sql.set_meta(ctx.conn, "export_mapping_format_version", ctx.config.export_mapping.format_version)
        problems = ctx.config.export_mapping.pointer_problems()
        for p in problems:
            ctx.warn("BAD_JSON_POINTER", f"export_mapping has a pointer that is not RFC 6901: {p}")
        return {
            "content_part_rules": len(ctx.config.export_mapping.content_part_rules),
            "pointer_problems": len(problems),
        }
