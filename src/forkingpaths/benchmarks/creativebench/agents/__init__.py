"""CreativeBench solvers: vanilla (App. M/N prompts), reference, evolved-prompt, scripted policy."""
