"""Everything that talks to a language model."""
