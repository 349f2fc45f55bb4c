"""The cascade's tuning defaults, in a leaf module the settings read without the cascade."""

__all__ = ["DEFAULT_TOP_K", "DEFAULT_VECTOR_FLOOR"]

# MiniLM: every fact starts with "User", which lifts unrelated pairs to cosine
# 0.20-0.35 while real conflicts sit anywhere from 0.19 to 0.51, so the floor only
# decides whether the matcher is asked at all; top-K already bounds its work.
DEFAULT_VECTOR_FLOOR = 0.15
DEFAULT_TOP_K = 5
