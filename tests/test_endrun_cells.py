"""The page's matrix cells, accuracy histograms and coverage combination cells, rendered in Python
(conformance.reports.html._mcell_html, _hist_html; coverage_view._row), give the text the template's
macros and loops gave."""

from conformance.reports.common import ORDER, outcome_cell
from conformance.reports.coverage_view import _row
from conformance.reports.html import _env, _hist_html, _mcell_html

_MACROS = (
    '{% macro bar(segs) %}<span class="bar">{% for o, k, w in segs %}<i class="s-{{ o }}" '
    'style="width:{{ \'%.2f\' | format(w) }}%"></i>{% endfor %}</span>{% endmacro %}'
    '{% macro mcell(cell, q) %}{% if cell %}<td class="cell o-{{ cell.worst }}" title="{{ cell.title }}">'
    '<a href="#cases?{{ q | urlencode }}"><span class="frac">{{ cell.pass }}/{{ cell.n }}</span>'
    '{{ bar(cell.segs) }}</a></td>{% else %}<td class="cell empty"></td>{% endif %}{% endmacro %}'
    '{% macro hist(r) %}<svg class="hist" viewBox="0 0 {{ acc_axis.width }} {{ acc_axis.height }}" '
    'width="{{ acc_axis.width }}" height="{{ acc_axis.height }}" role="img" aria-label="{{ r.n }} outputs, '
    '{{ r.exact }} exact"><line class="lim" x1="{{ acc_axis.limit_x }}" x2="{{ acc_axis.limit_x }}" y1="0" '
    'y2="{{ acc_axis.height }}"/>{% for b in r.bars %}<rect class="{{ b.kind }}" x="{{ b.x }}" y="{{ b.y }}" '
    'width="{{ b.w }}" height="{{ b.h }}"><title>{{ b.what }}: {{ b.n }}</title></rect>{% endfor %}</svg>'
    '{% endmacro %}'
)


def test_matrix_cell_as_the_macro():
    t = _env().from_string(_MACROS + "{{ mcell(cell, q) }}")
    cells = [None, {}, outcome_cell({"pass": 3, "fail": 1, "we<ird&\"": 2}, list(ORDER) + ['we<ird&"']),
             outcome_cell({"pass": 1}, list(ORDER))]
    for cell in cells:
        for q in ({"op": "a&b <c>", "dtype": "float16", "oc": "all"}, {"fam": "x/y", "f": "é", "v": 1.5}):
            assert str(_mcell_html(cell, q)) == t.render(cell=cell, q=q)


def test_histogram_as_the_macro():
    from conformance.reports.accuracy import _row as acc_row
    from conformance.reports.accuracy import axis
    import numpy as np

    ax = axis()
    t = _env().from_string(_MACROS + "{{ hist(r) }}")
    for values in ([0.0, 0.0, 1e-5, 0.3, 0.9], [], [1e-9] * 50 + [0.5] * 3):
        r = acc_row(np.array(values, dtype=np.float64))
        assert str(_hist_html(r, ax)) == t.render(r=r, acc_axis=ax)


def test_coverage_combination_cells_as_the_loop():
    t = _env().from_string('{% for c in combos %}<span class="combo o-{{ c.worst }}" title="{{ c.title }}">'
                           '{{ c.key }}: {{ c.pass }}/{{ c.n }}</span> {% endfor %}')
    e = {"covered": ["T=float", "T=<b>&", "T=int8"], "outcomes": {"T=float": {"pass": 2, "fail": 1}, "T=<b>&": {"pass": 4}},
         "value": {"cases": 7, "io_patterns": {}, "attributes": {"axis": {"-1": 3}}, "opsets": {"17": 7}},
         "error": {"cases": 0}, "deprecated": False, "total_combinations": 4, "gaps": 1, "missing": []}
    order = list(ORDER)
    combos = []
    for ck in e["covered"]:
        cell = outcome_cell(e["outcomes"].get(ck, {}), order)
        cell["key"] = ck
        combos.append(cell)
    for _ in range(2):  # made, then from the memo
        assert str(_row("17", e, order)["combos_html"]) == t.render(combos=combos)
