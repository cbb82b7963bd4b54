"""CreativeBench: creativity of code generation (combinatorial and exploratory)."""
