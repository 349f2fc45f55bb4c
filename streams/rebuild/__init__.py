"""Redis state and Milvus rows put back from the compacted facts topic, and checked against it."""
