"""Fact vectors in Milvus: collections, the index, its tiers, erasure and the shadow write."""
