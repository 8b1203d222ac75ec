"""Front ends: tree-sitter-cuda for structure, a lossless token view for what the tree hides."""
