"""Charts of the report as inline SVG (no script, no network): a horizontal stacked bar per
row and a line chart for the burn-down. Pure functions of numbers and labels; every text is
escaped here."""

from __future__ import annotations

from html import escape

# colours of the effort classes (and of the two history lines), readable on white and in grey
CLASS_COLOURS = {"automatic": "#4c9f70", "review": "#e0b341", "manual": "#e07b39",
                 "blocker": "#c0392b"}


def _number(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:,.0f}"


def stacked_bars(rows: list[tuple[str, dict[str, float]]], colours: dict[str, str],
                 unit: str, title: str, width: int = 760) -> str:
    """One horizontal bar per (label, {part: value}), parts stacked in ``colours``' order, with
    the total at the bar's end and a legend."""
    label_width, bar_height, gap = 210, 18, 8
    top = 28
    height = top + len(rows) * (bar_height + gap) + 30
    longest = max((sum(parts.values()) for _, parts in rows), default=0) or 1
    scale = (width - label_width - 90) / longest
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           f'<title>{escape(title)}</title>',
           f'<text x="0" y="16" class="chart-title">{escape(title)}</text>']
    for index, (label, parts) in enumerate(rows):
        y = top + index * (bar_height + gap)
        shown = label if len(label) <= 30 else "…" + label[-29:]
        out.append(f'<text x="{label_width - 6}" y="{y + 13}" text-anchor="end" '
                   f'class="chart-label">{escape(shown)}</text>')
        x = float(label_width)
        for name, colour in colours.items():
            value = parts.get(name, 0)
            if value <= 0:
                continue
            w = max(value * scale, 1.0)
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_height}" '
                       f'fill="{colour}"><title>{escape(label)}: {escape(name)} '
                       f'{_number(value)} {escape(unit)}</title></rect>')
            x += w
        out.append(f'<text x="{x + 5:.1f}" y="{y + 13}" class="chart-value">'
                   f'{_number(sum(parts.values()))} {escape(unit)}</text>')
    legend_y = height - 10
    x = label_width
    for name, colour in colours.items():
        out.append(f'<rect x="{x}" y="{legend_y - 10}" width="12" height="12" fill="{colour}"/>'
                   f'<text x="{x + 16}" y="{legend_y}" class="chart-label">{escape(name)}</text>')
        x += 22 + 8 * len(name)
    out.append("</svg>")
    return "".join(out)


def line_chart(points: list[tuple[str, float]], title: str, unit: str,
               width: int = 760, height: int = 260) -> str:
    """A line over ``points`` (label, value) in order, with dots, the first and last labels on
    the x axis and a scale on the y axis."""
    left, right, top, bottom = 60, 20, 30, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    highest = max((value for _, value in points), default=0) or 1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           f'<title>{escape(title)}</title>',
           f'<text x="0" y="16" class="chart-title">{escape(title)}</text>']
    for step in range(5):
        value = highest * step / 4
        y = top + plot_h - plot_h * step / 4
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" '
                   f'class="grid"/><text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" '
                   f'class="chart-label">{_number(value)}</text>')
    count = len(points)
    coords = []
    for index, (label, value) in enumerate(points):
        x = left + (plot_w * index / (count - 1) if count > 1 else plot_w / 2)
        y = top + plot_h - plot_h * value / highest
        coords.append((x, y, label, value))
    if coords:
        path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}"
                        for i, (x, y, _, _) in enumerate(coords))
        out.append(f'<path d="{path}" fill="none" stroke="#2c6fbb" stroke-width="2.5"/>')
        for x, y, label, value in coords:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="#2c6fbb">'
                       f'<title>{escape(label)}: {_number(value)} {escape(unit)}</title>'
                       f'</circle>')
        ends = [(coords[0], "start"), (coords[-1], "end")] if count > 1 else [(coords[0],
                                                                              "middle")]
        for (x, _, label, _), anchor in ends:
            out.append(f'<text x="{x:.1f}" y="{height - 14}" text-anchor="{anchor}" '
                       f'class="chart-label">{escape(label)}</text>')
    out.append(f'<text x="{width - right}" y="16" text-anchor="end" class="chart-label">'
               f'{escape(unit)} remaining, per commit</text></svg>')
    return "".join(out)
