"""The answer to a choice among named candidates (``query.choice``): "Among operations, investing, and financing
activities, which brought in the most cash flow for Best Buy in FY2023?".

One table of the company's filings must hold a row for every candidate with a value in the asked fiscal year's
column (the asked year's annual report first, then later ones, as statement lines are read: ``lines.StatementLines``).
A candidate's row is one whose label holds every word of the candidate (compared as Snowball stems: "operations"
is "operating"); among several, the row that also holds the shared head ("activities"), then a total or net line,
then the shortest label. Among the tables that hold every candidate, the one whose caption, header, section and
labels hold the most of the ask's other words ("cash", "flow") is read, the first in reading order on a tie. The
winner is the largest value for a superlative such as "most" / "highest" and the smallest for "least" / "lowest",
signs kept ("brought in the most (or lost the least)": an outflow is a negative value). The sentence names every
candidate's row and value, each row cited with its header and unit line. No table holding them all: None, and the
rest of the chain answers.

A choice that names the group of its candidates ("which region had the worst topline performance": ``Choice.group``)
chooses among the rows of the first table whose caption, header, unit line or sections name the group and the
measure, each a name with a value at the asked year (and the year before, for a change: the change in percent).

A group is also read from a table whose columns come one group per member (``choose_columns``, over
``column_groups``: a bank's segment results, "Consumer & Community Banking ... Corporate"), the measure's row at the
asked year's column of each group; and, in a quarter, from the quarter's 10-Q table of the members as rows whose
period line names the quarter first (``choose_quarter_rows``: its first column, and its second for growth), in the
section the ask names ("Domestic:").

A choice that names no candidates but a kind of line ("the largest liability": ``Choice.total``) chooses among the
lines the statement's "Total liabilities" row sums (``_members``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import Stemmer

from equimind.answer.column_groups import GroupRow, GroupTable, group_tables, result_sets
from equimind.answer.computed import amount
from equimind.answer.lines import StatementLines, cell_number, label_names, label_words
from equimind.answer.record import AnswerFigure, AnswerSentence, Method, Quote
from equimind.answer.units import Unit, cells
from equimind.answer.values import table_scale
from equimind.core.documents import sha256_hex
from equimind.lexicon.concepts import METRICS, MetricMatch, find_metrics
from equimind.query.choice import Choice

_STEM = Stemmer.Stemmer("english")
_QUALIFIERS = ("total", "net")


def _stems(words: Sequence[str]) -> set[str]:
    return set(_STEM.stemWords(list(words)))


def _row(table: Sequence[Unit], want: set[str], shared: set[str], year: int,
         statements: StatementLines) -> tuple[Unit, float] | None:
    """The candidate's row of ``table`` (module docstring) with its value at ``year``, or None."""
    best: tuple[tuple[int, int, int], Unit, float] | None = None
    for u in table:
        words = _label(u)
        have = _stems(words)
        if not want <= have:
            continue
        got = statements.at(u, year)
        if got is None:
            continue
        key = (-len(shared & have), 0 if words[:1] and words[0] in _QUALIFIERS else 1, len(words))
        if best is None or key < best[0]:
            best = (key, u, got[0])
    return None if best is None else (best[1], best[2])


def _context(table: Sequence[Unit], rows: Sequence[Unit]) -> set[str]:
    u = table[0]
    text = " ".join(x.text for x in (u.caption, u.header, u.scale) if x is not None)
    text += " " + " ".join(x.section.text for x in rows if x.section is not None)
    text += " " + " ".join(cells(x.span.text)[0] for x in rows)
    return _stems(label_words(text))


_ASIDE = re.compile(r"\s*\([^()]*\)")


def _shown_label(u: Unit) -> str:
    """A row's label as the sentence names it: parenthesised asides dropped ("Long-term debt (includes debt issued
    by ...)"); the quote keeps the whole row."""
    label = cells(u.span.text)[0]
    return _ASIDE.sub("", label).strip() or label


def _label(u: Unit) -> list[str]:
    return label_words(cells(u.span.text)[0])


def _members(table: Sequence[Unit], noun: str, year: int, statements: StatementLines) -> list[tuple[Unit, float]]:
    """The lines the table's "Total <noun>" row sums, with their values at ``year``: the rows above it up to the
    section's heading (a label-only row holding the noun: "Liabilities", "Expenses"); other totals on the way
    ("Total cash and cash equivalents", "Total current liabilities") are passed over, their lines kept. Empty when
    the table has no such total or no such heading above it."""
    for i, u in enumerate(table):
        words = _label(u)
        if words[:1] != ["total"] or _stems(words[1:]) != {noun} or statements.at(u, year) is None:
            continue
        out: list[tuple[Unit, float]] = []
        for above in reversed(table[:i]):
            w = _label(above)
            got = statements.at(above, year)
            if got is None:
                if any(c.strip() for c in cells(above.span.text)[1:]):
                    continue  # a row with values, none in the year's column
                if noun in _stems(w):
                    return out  # the section's heading
                continue
            if w and w[0] != "total":
                out.insert(0, (above, got[0]))
        return []
    return []


def _measure_metrics(choice: Choice) -> list[MetricMatch]:
    """The metrics a group choice's measure names ("topline" is revenue); revenue when it names none or only a
    performance ("which segment grew the fastest", "the worst performance"); none for a measure in other words."""
    metrics = find_metrics(" ".join(choice.measure)) if choice.measure else []
    if not choice.measure or (not metrics and set(choice.measure) <= {"performance", "growth", "performed"}):
        metrics = find_metrics("revenue")
    return metrics


def _measure_stems(choice: Choice) -> set[str]:
    """The stems naming a group choice's measure: its metrics' phrases (``_measure_metrics``: revenue, sales), else
    its own words."""
    metrics = _measure_metrics(choice)
    if metrics:
        return {s for m in metrics for p in m.metric.phrases for s in _stems(label_words(p))} - {"total", "net"}
    return _stems(choice.measure) - {"total", "net"}


def _change_pct(now: float, before: float | None) -> float | None:
    """The change from ``before`` to ``now`` in percent of ``before``; None without a base (missing or zero)."""
    return None if not before else (now - before) / abs(before) * 100


def _names_group(table: Sequence[Unit], choice: Choice, measure: set[str]) -> bool:
    """The table's caption, header, unit line, sections or labels name the choice's group and its measure."""
    context = _context(table, table)
    return _STEM.stemWord(choice.group.split()[0]) in context and bool(measure & context)


def _member_label(u: Unit) -> bool:
    """A row that can be a member of a group: a capitalised label, no total, no statement line's name."""
    label = cells(u.span.text)[0]
    words = _label(u)
    return bool(label[:1].isupper() and words and words[0] != "total"
                and not any(label_names(m, label) for m in METRICS))


def _group_rows(table: Sequence[Unit], choice: Choice, measure: set[str], year: int,
                statements: StatementLines) -> list[tuple[Unit, float]]:
    """The members of a table by the asked group: the table's caption, header, unit line or sections name the group
    and the measure; its rows with a value at ``year`` (and the year before, for a change) whose label is a name
    (capitalised, no total, no statement line) are the members. Empty when the table is not such a table."""
    if not _names_group(table, choice, measure):
        return []
    out: list[tuple[Unit, float]] = []
    for u in table:
        if not _member_label(u):
            continue
        now = statements.at(u, year)
        if now is None:
            continue
        if choice.growth:
            before = statements.at(u, year - 1)
            change = _change_pct(now[0], before[0] if before is not None else None)
            if change is not None:
                out.append((u, change))
        else:
            out.append((u, now[0]))
    return out


def choose(choice: Choice, ask_stems: set[str], year: int, statements: StatementLines,
           company: str, ticker: str) -> tuple[AnswerSentence, str] | None:
    """The candidates' rows, the winner and the sentence stating them (module docstring), or None."""
    if choice.group or choice.total:
        measure = _measure_stems(choice) if choice.group else set()
        noun = _STEM.stemWord(choice.total[0]) if choice.total else ""
        for doc_id in statements.order(year):
            for table in statements.tables(doc_id):
                members = (_group_rows(table, choice, measure, year, statements) if choice.group
                           else _members(table, noun, year, statements))
                if len(members) >= 2:  # the first table in reading order holding two members or more
                    return _sentence(choice, members, year, statements, company, ticker)
        return None
    wants = [_stems(c) for c in choice.candidates]
    shared = _stems(choice.shared)
    own = set().union(*wants) | shared
    others = ask_stems - own
    for doc_id in statements.order(year):
        found: list[tuple[int, list[tuple[Unit, float]]]] = []
        for table in statements.tables(doc_id):
            rows = [_row(table, w, shared, year, statements) for w in wants]
            picked = [r for r in rows if r is not None]
            if len(picked) == len(wants) and len({id(u) for u, _ in picked}) == len(picked):
                found.append((len(others & _context(table, [u for u, _ in picked])), picked))
        if found:
            best = max(found, key=lambda f: f[0])[1]  # max keeps the first of a tie: reading order
            return _sentence(choice, best, year, statements, company, ticker)
    return None


# The period line nearest above a 10-Q table: its first period is the quarter ("Three Months Ended ... Six Months
# Ended ..."): the first two value columns are the quarter and the same quarter a year before (the SEC's order).
_PERIOD_LINE = re.compile(r"(?i)\b(?:(?:three|six|nine|twelve)\s+months|(?:fiscal\s+)?years?|quarters?)\s+ended\b")
_QUARTER_FIRST = re.compile(r"(?i)^\W*three\s+months\s+ended\b")
QUARTER_LOOKBACK = 400  # characters above a table's header searched for its period line


def _quarter_table(text: str, table: Sequence[Unit]) -> bool:
    """The nearest period line above (or in) the table's header names the quarter first (``_QUARTER_FIRST``)."""
    head = table[0].header or table[0].span
    above = text[max(0, head.start - QUARTER_LOOKBACK):head.end]
    lines = [ln for ln in above.split("\n") if _PERIOD_LINE.search(ln)]
    if not lines:
        return False
    last = lines[-1].strip().strip("|").strip()
    return _QUARTER_FIRST.search(last) is not None


def choose_quarter_rows(choice: Choice, ask_stems: set[str], year: int, quarter: int, doc_ids: Sequence[str],
                        statements: StatementLines, company: str, ticker: str) -> tuple[AnswerSentence, str] | None:
    """A group choice in a quarter: in the quarter's 10-Q (``doc_ids``), the first table naming the group and the
    measure (``_group_rows``' test) whose period line names the quarter first (``_quarter_table``); its members are
    its named rows read at the first value column (the quarter) and, for growth, the second (the same quarter a
    year before). A table in sections ("Domestic:", "International:") is read in the section the ask names; one it
    does not name is no answer (which section's members would be compared?)."""
    measure = _measure_stems(choice)
    for doc_id in doc_ids:
        text = statements.document_text(doc_id)
        for table in statements.tables(doc_id):
            if not _names_group(table, choice, measure) or not _quarter_table(text, table):
                continue
            rows: list[tuple[Unit, float, float | None, str]] = []
            for u in table:
                body = cells(u.span.text)
                if not _member_label(u) or len(body) < 3:
                    continue
                now, before = cell_number(body[1]), cell_number(body[2])
                if now is not None:
                    rows.append((u, now, before, u.section.text if u.section is not None else ""))
            sections = {sec for _, _, _, sec in rows}
            asked = {sec for sec in sections if sec and _stems(label_words(sec)) & ask_stems}
            if len(asked) == 1:
                rows = [r for r in rows if r[3] in asked]
            elif len(sections) > 1:
                continue
            members: list[tuple[Unit, float]] = []
            for u, now, before, _ in rows:
                if not choice.growth:
                    members.append((u, now * statements.scale_of(u)))
                elif (change := _change_pct(now, before)) is not None:
                    members.append((u, change))
            if len(members) >= 2:
                return _sentence(choice, members, year, statements, company, ticker, quarter)
    return None


GROUP_CONTEXT = 600  # characters above a column-grouped table read for the group's word ("results by segment")


def _row_measures(label: str, metrics: Sequence[MetricMatch], measure: set[str]) -> bool:
    """A row of a column-grouped table is the measure's line: a metric's line name ("Total net revenue"), else a
    label holding every measure word."""
    if metrics:
        return any(label_names(m.metric, label) for m in metrics)
    return bool(measure) and measure <= _stems(label_words(label))


def choose_columns(choice: Choice, year: int, period: str, texts: Sequence[tuple[str, str]], company: str,
                   ticker: str) -> tuple[AnswerSentence, str] | None:
    """A group choice over a table whose columns are the group's members (``column_groups``: a bank's segment
    results, one column group per segment): in the first of ``texts`` (doc id, text) holding such a table with the
    group's word in or above it, the measure's row (``_row_measures``) read at ``year``'s column of every member (a
    "Total" group is no member; for a growth choice, the change from the year before in percent); the highest or
    lowest wins. ``period`` names the columns' period in the sentence ("Q1 of fiscal 2021")."""
    metrics = _measure_metrics(choice)
    measure = set() if metrics else _measure_stems(choice)
    group = _STEM.stemWord(choice.group.split()[-1])
    for doc_id, text in texts:
        for tables in result_sets(group_tables(text)):
            around = text[max(0, tables[0].header_start - GROUP_CONTEXT):tables[0].header_end]
            if group not in _stems(label_words(around)):
                continue
            members: list[tuple[str, float, GroupTable, GroupRow]] = []
            for t in tables:
                now, before = t.column(year), t.column(year - 1)
                row = next((r for r in t.rows if _row_measures(r.label, metrics, measure)), None)
                if row is None or now is None or (choice.growth and before is None):
                    continue
                for g, name in enumerate(t.names):
                    v = row.values[g][now]
                    if name.split()[0].lower() == "total" or v is None:
                        continue
                    got = _change_pct(v, row.values[g][before] if before is not None else None) if choice.growth \
                        else v * t.scale
                    if got is not None:
                        members.append((name, got, t, row))
            if len(members) >= 2:
                return _columns_sentence(choice, members, period, doc_id, text, company, ticker)
    return None


def _columns_sentence(choice: Choice, members: list[tuple[str, float, GroupTable, GroupRow]], period: str,
                      doc_id: str, text: str, company: str, ticker: str) -> tuple[AnswerSentence, str]:
    pick = max if choice.direction == "max" else min
    winner = pick(members, key=lambda m: m[1])
    end = "highest" if choice.direction == "max" else "lowest"

    def shown(v: float) -> str:
        return f"{v:+.1f}% from a year before" if choice.growth else amount(v)

    row = winner[3].label
    each = "; ".join(f"{name} {shown(v)}" for name, v, _, _ in members)
    sentence = (f"{winner[0]} ({shown(winner[1])}) is the {end} of the {len(members)} {choice.group} by {row} "
                f"for {company} in {period}: {each}.")
    sha = sha256_hex(text)
    quotes: list[Quote] = []
    for t, r in dict.fromkeys((t, r) for _, _, t, r in members):
        quotes.append(Quote(doc_id=doc_id, start=r.start, end=r.end, text=text[r.start:r.end], doc_sha256=sha,
                            role="row"))
        quotes.append(Quote(doc_id=doc_id, start=t.header_start, end=t.header_end,
                            text=text[t.header_start:t.header_end], doc_sha256=sha, role="header"))
    figures = [AnswerFigure(name=f"{name}: {r.label}", value=v, unit="%" if choice.growth else "USD",
                            provenance={"source": "column-grouped table", "doc_id": doc_id, "row": r.label,
                                        "group": name, "period": period, "chosen": name == winner[0]})
               for name, v, _, r in members]
    note = f"choice among {len(members)} column groups of one result set ({choice.group}): the {end} wins"
    return AnswerSentence(text=sentence, method=Method.EXTRACTIVE, subject=ticker, quotes=quotes,
                          figures=figures), note


def _sentence(choice: Choice, rows: list[tuple[Unit, float]], year: int, statements: StatementLines,
              company: str, ticker: str, quarter: int | None = None) -> tuple[AnswerSentence, str]:
    pick = max if choice.direction == "max" else min
    winner, value = pick(rows, key=lambda r: r[1])
    label = _shown_label(winner)
    end = "highest" if choice.direction == "max" else "lowest"
    money = any("$" in u.span.text or table_scale(" ".join(x.text for x in (u.scale, u.caption, u.header) if x))
                != 1.0 for u, _ in rows) and not choice.growth

    def shown(v: float) -> str:
        if choice.growth:
            return f"{v:+.1f}% from fiscal {year - 1}" if quarter is None else f"{v:+.1f}% from a year before"
        return amount(v) if money else f"{v:,.0f}"

    each = "; ".join(f"{_shown_label(u)} {shown(v)}" for u, v in rows)
    period = f"fiscal {year}" if quarter is None else f"Q{quarter} of fiscal {year}"
    text = (f"{label} ({shown(value)}) is the {end} of the {len(rows)} for {company} in {period}: "
            f"{each}.")
    quotes: list[Quote] = list(dict.fromkeys(q for u, _ in rows for q in statements.quotes_of(u)))
    figures = [AnswerFigure(name=cells(u.span.text)[0], value=v, unit="%" if choice.growth else "USD" if money else "",
                            provenance={"source": "statement row", "doc_id": u.doc_id, "row": cells(u.span.text)[0],
                                        "fiscal_year": year, "fiscal_quarter": quarter, "chosen": u == winner})
               for u, v in rows]
    note = f"choice among {len(rows)} rows of one table ({', '.join(choice.names())}): the {end} wins"
    return AnswerSentence(text=text, method=Method.EXTRACTIVE, subject=ticker, quotes=quotes, figures=figures), note
