"""The stage registry, in pipeline order. Later stages register here as they land."""

from __future__ import annotations

from kenning.pipeline.runner import Stage
from kenning.pipeline.stage0 import Preprocess
from kenning.pipeline.stage1 import RawImport
from kenning.pipeline.stage_index import SearchIndex

STAGES: dict[str, Stage] = {
    "0": Preprocess(),
    "1": RawImport(),
    # Later stages go above this line: the search index is built last, from everything before it.
    "index": SearchIndex(),
}


class UnknownStage(ValueError):
    pass


def parse_stage_list(spec: str | None, default: list[str]) -> list[str]:
    """'0,1' or '0-1' → ['0', '1'] in pipeline order; unknown names are an error naming the known ones."""
    if not spec:
        wanted = list(default)
    else:
        wanted = []
        for tok in (t.strip() for t in spec.split(",")):
            if not tok:
                continue
            if "-" in tok and all(x.strip() in STAGES for x in tok.split("-", 1)):
                lo, hi = (x.strip() for x in tok.split("-", 1))
                keys = list(STAGES)
                wanted.extend(keys[keys.index(lo): keys.index(hi) + 1])
            else:
                wanted.append(tok)
    unknown = [s for s in wanted if s not in STAGES]
    if unknown:
        raise UnknownStage(f"unknown stage(s) {', '.join(unknown)}; known: {', '.join(STAGES)}")
    return [s for s in STAGES if s in wanted]
