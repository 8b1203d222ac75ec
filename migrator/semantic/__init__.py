"""The semantic layer every rule reads a file through: what the source means, lexically, with no
CUDA API known by heart (names come from the API tables).

- ``calls``: calls and their arguments (``find_name``, ``lexical_call``, ``arguments``), and
  whether a name is a member access;
- ``scopes``: blocks, functions, loops and statements, the call around a name, declarations of a
  name in a function;
- ``constants``: the value of a constant expression, integer literals;
- ``directives``: preprocessor lines;
- ``spellings``: an API name in the dialect of the code (CUDA or HIP), from the tables;
- ``types``: type text (a declaration's type and pointer levels, casts, a pointer expression
  read lexically);
- ``declarations``: the declarations of a name in a function, read from its tokens where that
  is sure to agree with the tree;
- ``lookup``: what a name or pointer expression is declared as, seen from an offset (tree
  scopes, aliases, template parameters).

The literal and code views (comments and literals blanked) are the rule context's
(``RuleContext.literals``, ``.code``); this layer reads through them.
"""
