"""Include directives as spelled: the one set of patterns that the engine, the rules, the
support headers, the report and the include resolution of ``workspace.includes`` read them with.
"""

from __future__ import annotations

import re

# from the directive's '#' to its path; DIRECTIVE and LINE_START build a pattern of one's own
DIRECTIVE = rb"#[ \t]*include[ \t]*"
LINE_START = rb"^[ \t]*"  # with re.M: a directive that starts its line
# either delimiter, from the '#' (a directive's own text): group 1 the opening delimiter, group
# 2 the path
INCLUDE = re.compile(DIRECTIVE + rb'([<"])([^>"\n]*)[>"]')
LINE_INCLUDE = re.compile(LINE_START + INCLUDE.pattern, re.M)  # the same at a line's start
# a quoted include at the start of a line (a commented-out one starts with // and is not read;
# one inside /* */ is, which at worst adds a file to read)
QUOTED = re.compile(LINE_START + DIRECTIVE + rb'"([^"\n]+)"', re.M)
