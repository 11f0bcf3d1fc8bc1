#!/usr/bin/env bash
# make demo: research one ticker end to end. Live sources by default; SNAPSHOT=DIR uses the recorded corpus.
# If the live sources cannot be reached (no network, no EQUIMIND_SEC_IDENTITY), it says so and uses the recorded
# corpus in $EQUIMIND_SHARED/corpus instead, so the demo still runs; the report's `degraded` list shows the mode.
set -euo pipefail
cd "$(dirname "$0")/.."
EM=.venv/bin/equimind
TICKER="${TICKER:-NVDA}"
QUESTION="${QUESTION:-Should I invest in NVIDIA?}"
SHARED="${EQUIMIND_SHARED:-../shared}"
export EQUIMIND_HOME="${EQUIMIND_HOME:-.equimind_cache/demo}"

if [[ -z "${SNAPSHOT:-}" ]]; then
  if reason=$($EM preflight 2>&1); then
    echo "== mode: LIVE (SEC EDGAR + Yahoo Finance)"
    MODE=()
  else
    echo "== live sources unavailable: ${reason}"
    echo "== mode: SNAPSHOT ${SHARED}/corpus (recorded real data; pass SNAPSHOT=DIR to choose it explicitly)"
    SNAPSHOT="${SHARED}/corpus"
  fi
else
  echo "== mode: SNAPSHOT ${SNAPSHOT} (recorded real data, no network)"
fi
if [[ -n "${SNAPSHOT:-}" ]]; then
  MODE=(--snapshot "$SNAPSHOT")
  AS_OF=(--as-of "${AS_OF:-2025-09-30}")
else
  AS_OF=()
fi

echo "== research ${TICKER}: ${QUESTION}"
$EM research "$TICKER" "$QUESTION" "${MODE[@]}" "${AS_OF[@]}"
