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
  scopes, aliases, template parameters);
- ``value_kinds``: the kind of a value (float, double, integer, or a type the rule names in a
  ``TypeNames``) of an expression, a call, a member, an aggregate's members;
- ``conversions``: where code converts a value to such a type: casts, initialisations,
  assignments, returns, arguments, brace lists, and templates instantiated with it.

The literal and code views (comments and literals blanked) are the rule context's
(``RuleContext.literals``, ``.code``); this layer reads through them.
"""
