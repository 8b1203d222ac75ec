"""Charts of the report as inline SVG (no script, no network): a horizontal stacked bar per
row and a line chart for the burn-down. Pure functions of numbers and labels: the places and
sizes are worked out here, the markup is templates/report/chart.svg.j2."""

from __future__ import annotations

from html import escape

from ..templating import render

# colours of the effort classes (and of the two history lines), readable on white and in grey
CLASS_COLOURS = {"automatic": "#4c9f70", "review": "#e0b341", "manual": "#e07b39",
                 "blocker": "#c0392b"}


def _number(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:,.0f}"


def _chart(kind: str, **values) -> str:
    return render("report/chart.svg.j2", kind=kind, number=_number, escape=escape, **values)


def stacked_bars(rows: list[tuple[str, dict[str, float]]], colours: dict[str, str],
                 unit: str, title: str, width: int = 760) -> str:
    """One horizontal bar per (label, {part: value}), parts stacked in ``colours``' order, with
    the total at the bar's end and a legend."""
    label_width, bar_height, gap = 210, 18, 8
    top = 28
    longest = max((sum(parts.values()) for _, parts in rows), default=0) or 1
    scale = (width - label_width - 90) / longest
    bars = []
    for index, (label, parts) in enumerate(rows):
        x, stacked = float(label_width), []
        for name, colour in colours.items():
            value = parts.get(name, 0)
            if value > 0:
                stacked.append({"name": name, "colour": colour, "x": x, "value": value,
                                "width": max(value * scale, 1.0)})
                x += stacked[-1]["width"]
        bars.append({"label": label, "y": top + index * (bar_height + gap), "parts": stacked,
                     "end": x, "total": sum(parts.values())})
    legend, x = [], label_width
    for name, colour in colours.items():
        legend.append({"name": name, "colour": colour, "x": x})
        x += 22 + 8 * len(name)
    return _chart("bars", width=width, height=top + len(rows) * (bar_height + gap) + 30,
                  title=title, unit=unit, label_width=label_width, bar_height=bar_height,
                  bars=bars, legend=legend)


def line_chart(points: list[tuple[str, float]], title: str, unit: str,
               width: int = 760, height: int = 260) -> str:
    """A line over ``points`` (label, value) in order, with dots, the first and last labels on
    the x axis and a scale on the y axis."""
    left, right, top, bottom = 60, 20, 30, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    highest = max((value for _, value in points), default=0) or 1
    grids = [{"value": highest * step / 4, "y": top + plot_h - plot_h * step / 4}
             for step in range(5)]
    count = len(points)
    dots = [{"x": left + (plot_w * index / (count - 1) if count > 1 else plot_w / 2),
             "y": top + plot_h - plot_h * value / highest, "label": label, "value": value}
            for index, (label, value) in enumerate(points)]
    return _chart("line", width=width, height=height, title=title, unit=unit, left=left,
                  right=right, grids=grids, dots=dots)
